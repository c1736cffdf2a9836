// The ChainDb contract (state/chain-db/chain-db.ts, docs/reference/storage-contract.md) as a test suite any
// implementation runs: `describeChainDb(name, open)` with a factory that opens an EMPTY store
// keeping `retainBlocks` blocks of pinned state. Blocks here are built straight on the state
// interface (no engine): the contract is about storage, not execution.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { concatBytes, toHex, u64BE } from "../../../src/bytes.js";
import { keccak256 } from "../../../src/crypto/hash.js";
import { ChainDbError, type BlockQuery, type BlockRecord, type ChainDb, type ReceiptRecord } from "../../../state/chain-db/chain-db.js";
import { DryRunStore } from "../../../state/chain-db/dry-run.js";
import { accountKey } from "../../../state/kv/keys.js";
import { verifyStateProof } from "../../../state/qmdb/proof.js";

export type OpenChainDb = (retainBlocks: number) => ChainDb;

type Write = readonly [key: Uint8Array, value: Uint8Array | undefined];

export const key = (n: number): Uint8Array => accountKey(concatBytes(new Uint8Array(16), Uint8Array.of(0, 0, n >> 8, n & 0xff)));
export const value = (n: number): Uint8Array => Uint8Array.of(1, n & 0xff, (n >> 8) & 0xff);

function receipt(tx: Uint8Array): ReceiptRecord {
  return { tx_hash: keccak256(tx), status: "ok", error: null, events: [], cycles: 1n, cells: 2n };
}

/** Header fields that only have to be distinct and chained: this suite is not about execution. */
function record(height: bigint, stateRoot: Uint8Array, parent: Uint8Array, txs: Uint8Array[]): BlockRecord {
  const h = (tag: string) => keccak256(concatBytes(new TextEncoder().encode(tag), u64BE(height), stateRoot));
  return {
    height,
    timestamp: height > 2n ** 63n ? height : 1_000n + height, // (a u64 either way)
    block_hash: h("block"),
    parent_hash: parent,
    state_root: stateRoot,
    tx_root: h("tx"),
    receipt_root: h("receipt"),
    logs_root: h("logs"),
    effective_rent_height: height,
    transactions: txs,
    receipts: txs.map(receipt),
  };
}

function stage(db: ChainDb, height: bigint, writes: readonly Write[]): Uint8Array {
  const batch = db.state.beginBlock(height);
  for (const [k, v] of writes) {
    if (v === undefined) batch.delete(k);
    else batch.put(k, v);
  }
  return db.state.commitBlock(batch).stateRoot;
}

export function genesis(db: ChainDb, writes: readonly Write[] = [[key(0), value(0)]]): BlockRecord {
  const root = stage(db, 0n, writes);
  const block = record(0n, root, new Uint8Array(32), []);
  db.commitGenesis({ source: new TextEncoder().encode("{}"), chain_instance_id: keccak256(Uint8Array.of(7)), block });
  return block;
}

export function block(db: ChainDb, height: bigint, writes: readonly Write[], txs: Uint8Array[] = []): BlockRecord {
  const root = stage(db, height, writes);
  const b = record(height, root, db.head()!.block_hash, txs);
  db.commitBlock(b);
  return b;
}

const tx = (n: number): Uint8Array => Uint8Array.of(0xa0, n);

export function describeChainDb(name: string, open: OpenChainDb): void {
  describe(`ChainDb contract: ${name}`, () => {
    it("an empty store has no genesis and no head; a block before genesis is refused", () => {
      const db = open(4);
      expect(db.genesis()).toBeUndefined();
      expect(db.head()).toBeUndefined();
      expect(db.blockByHeight(0n)).toBeUndefined();
      expect(db.stateAt(0n)).toBeUndefined();
      const root = stage(db, 1n, [[key(1), value(1)]]);
      expect(() => db.commitBlock(record(1n, root, new Uint8Array(32), []))).toThrow(ChainDbError);
      db.close();
    });

    it("genesis is block 0: head, by height, by hash, and its state", () => {
      const db = open(4);
      const g = genesis(db);
      expect(db.genesis()!.block.block_hash).toEqual(g.block_hash);
      expect(db.head()!.height).toBe(0n);
      expect(db.blockByHeight(0n)!.block_hash).toEqual(g.block_hash);
      expect(db.blockByHash(g.block_hash)!.height).toBe(0n);
      expect(db.stateAt(0n)!.read(key(0))).toEqual(value(0));
      expect(db.state.root()).toEqual(g.state_root);
      expect(() => genesis(db)).toThrow(); // by the state store or the ChainDb
      db.close();
    });

    it("blocks with skipped heights: lookups, range scans in both orders, tx locations (latest inclusion wins)", () => {
      const db = open(8);
      genesis(db);
      const b1 = block(db, 1n, [[key(1), value(1)]], [tx(1), tx(2)]);
      const b3 = block(db, 3n, [[key(2), value(2)]], []);
      const b7 = block(db, 7n, [[key(1), value(9)]], [tx(3), tx(1)]);
      expect(db.head()!.block_hash).toEqual(b7.block_hash);
      expect(db.blockByHeight(2n)).toBeUndefined();
      expect(db.blockByHeight(3n)!.block_hash).toEqual(b3.block_hash);
      expect(db.blockByHash(b1.block_hash)!.transactions).toEqual([tx(1), tx(2)]);
      expect(db.blockByHash(new Uint8Array(32))).toBeUndefined();
      const heights = (blocks: BlockRecord[]) => blocks.map((b) => b.height);
      expect(heights(db.blocks({ from: 0n, to: 100n, order: "asc", limit: 10 }))).toEqual([0n, 1n, 3n, 7n]);
      expect(heights(db.blocks({ from: 1n, to: 7n, order: "asc", limit: 2 }))).toEqual([1n, 3n]);
      expect(heights(db.blocks({ from: 2n, to: 6n, order: "asc", limit: 10 }))).toEqual([3n]);
      expect(heights(db.blocks({ from: 0n, to: 100n, order: "desc", limit: 3 }))).toEqual([7n, 3n, 1n]);
      expect(heights(db.blocks({ from: 2n, to: 7n, order: "desc", limit: 10 }))).toEqual([7n, 3n]);
      expect(heights(db.blocks({ from: 8n, to: 100n, order: "asc", limit: 10 }))).toEqual([]);
      expect(heights(db.blocks({ from: 5n, to: 4n, order: "asc", limit: 10 }))).toEqual([]);
      expect(db.txLocation(keccak256(tx(2)))).toEqual({ height: 1n, index: 1 });
      expect(db.txLocation(keccak256(tx(1)))).toEqual({ height: 7n, index: 1 });
      expect(db.txLocation(keccak256(tx(99)))).toBeUndefined();
      // The whole u64 range, and heights outside it.
      expect(heights(db.blocks({ from: 0n, to: 2n ** 64n - 1n, order: "asc", limit: 10 }))).toEqual([0n, 1n, 3n, 7n]);
      expect(heights(db.blocks({ from: 2n, to: 2n ** 64n - 1n, order: "desc", limit: 10 }))).toEqual([7n, 3n]);
      expect(db.blockByHeight(-1n)).toBeUndefined();
      expect(db.blockByHeight(2n ** 64n)).toBeUndefined();
      // A height without a block has no state of its own: its readers go through the block below it.
      expect(db.stateAt(2n)).toBeUndefined();
      expect(db.stateAt(5n)).toBeUndefined();
      expect(db.stateAt(3n)!.read(key(2))).toEqual(value(2));
      expect(db.stateAt(8n)).toBeUndefined();
      // The last u64 height holds a block like any other.
      const last = block(db, 2n ** 64n - 1n, [[key(3), value(3)]]);
      expect(db.blockByHeight(2n ** 64n - 1n)!.block_hash).toEqual(last.block_hash);
      expect(heights(db.blocks({ from: 7n, to: 2n ** 64n - 1n, order: "desc", limit: 10 }))).toEqual([2n ** 64n - 1n, 7n]);
      expect(db.stateAt(7n)!.read(key(3))).toBeUndefined();
      db.close();
    });

    it("a descending range includes the block at its lower bound `from` (both bounds inclusive)", () => {
      const db = open(8);
      genesis(db);
      block(db, 1n, [[key(1), value(1)]]);
      block(db, 3n, [[key(2), value(2)]]);
      block(db, 7n, [[key(1), value(9)]]);
      const heights = (q: Omit<BlockQuery, "order">) => db.blocks({ ...q, order: "desc" }).map((b) => b.height);
      expect(heights({ from: 3n, to: 7n, limit: 10 })).toEqual([7n, 3n]);
      expect(heights({ from: 1n, to: 3n, limit: 10 })).toEqual([3n, 1n]);
      expect(heights({ from: 7n, to: 7n, limit: 10 })).toEqual([7n]);
      expect(heights({ from: 1n, to: 1n, limit: 1 })).toEqual([1n]);
      // An empty range is [] in either order, also past 2^64 − 1 (the feed asks for the block after its last page so).
      for (const order of ["asc", "desc"] as const) {
        expect(db.blocks({ from: 1n, to: 0n, order, limit: 1 })).toEqual([]);
        expect(db.blocks({ from: 2n ** 64n, to: 2n ** 64n - 1n, order, limit: 1 })).toEqual([]);
        expect(db.blocks({ from: 0n, to: 7n, order, limit: 0 })).toEqual([]);
      }
      db.close();
    });

    it("a commit that does not match the staged state changes nothing", () => {
      const db = open(4);
      const g = genesis(db);
      const root = stage(db, 2n, [[key(1), value(1)]]);
      // Wrong root, wrong height, wrong parent: refused; the head and its state are unchanged.
      const wrong: BlockRecord[] = [
        record(2n, keccak256(root), g.block_hash, []),
        record(3n, root, g.block_hash, []),
        record(2n, root, keccak256(g.block_hash), []),
      ];
      for (const b of wrong) expect(() => db.commitBlock(b)).toThrow(ChainDbError);
      expect(db.head()!.height).toBe(0n);
      expect(db.stateAt(0n)!.read(key(1))).toBeUndefined();
      // The staged block still commits with its own record.
      db.commitBlock(record(2n, root, g.block_hash, []));
      expect(db.stateAt(2n)!.read(key(1))).toEqual(value(1));
      db.close();
    });

    it("each refusal of commitGenesis/commitBlock is reached alone and names its rule", () => {
      const db = open(4);
      const before = stage(db, 1n, []);
      expect(() => db.commitBlock(record(1n, before, new Uint8Array(32), []))).toThrow("commit genesis first");
      db.close();
      // A genesis block above height 0, or with transactions.
      for (const [height, txs] of [[1n, []], [0n, [tx(1)]]] as const) {
        const g = open(4);
        const root = stage(g, 0n, [[key(0), value(0)]]);
        const b = { ...record(height, root, new Uint8Array(32), [...txs]) };
        expect(() => g.commitGenesis({ source: new TextEncoder().encode("{}"), chain_instance_id: keccak256(Uint8Array.of(7)), block: b })).toThrow(
          "the genesis block has height 0 and no transactions",
        );
        g.close();
      }
      const d = open(4);
      const g = genesis(d);
      expect(() => d.state.commitBlock(new DryRunStore({ read: () => undefined }).beginBlock(1n))).toThrow("batch was not begun by this ChainDb's state");
      expect(() => d.commitGenesis({ source: new TextEncoder().encode("{}"), chain_instance_id: keccak256(Uint8Array.of(7)), block: g })).toThrow("genesis is already committed");
      const root = stage(d, 2n, [[key(1), value(1)]]);
      expect(() => d.commitBlock(record(0n, root, g.block_hash, []))).toThrow("block 0 is not above the head 0");
      expect(() => d.commitBlock(record(2n, root, keccak256(g.block_hash), []))).toThrow("block 2: parent_hash is not the head's block_hash");
      const short = { ...record(2n, root, g.block_hash, [tx(1)]), receipts: [] };
      expect(() => d.commitBlock(short)).toThrow("block 2: 0 receipts for 1 transactions");
      expect(() => d.commitBlock(record(3n, root, g.block_hash, []))).toThrow("block 3: no staged state at that height");
      expect(() => d.commitBlock(record(2n, keccak256(root), g.block_hash, []))).toThrow(`block 2: state_root ${toHex(keccak256(root))} is not the staged root ${toHex(root)}`);
      expect(() => d.commitBlock({ ...record(2n, root, g.block_hash, []), block_hash: g.block_hash })).toThrow("block 2: block_hash is already in the ledger");
      // While a block is staged, proofs (which read the commitment) are refused by name.
      expect(() => d.proveKey(key(1))).toThrow("block 2 is staged and not committed: reopen the ChainDb");
      expect(() => d.proveKeys([key(1)])).toThrow("block 2 is staged and not committed");
      expect(() => d.exclusionProofOps()).toThrow("block 2 is staged and not committed");
      d.commitBlock(record(2n, root, g.block_hash, []));
      expect(d.exclusionProofOps()).toBeGreaterThan(0);
      d.close();
      expect(() => d.proveKey(key(1))).toThrow("the ChainDb is closed");
    });

    it("while a block is staged, readers still see the head; no second block can begin", () => {
      const db = open(4);
      genesis(db);
      block(db, 1n, [[key(1), value(1)]]);
      stage(db, 2n, [[key(1), value(2)], [key(5), value(5)]]);
      expect(db.head()!.height).toBe(1n);
      expect(db.stateAt(1n)!.read(key(1))).toEqual(value(1));
      expect(db.stateAt(1n)!.read(key(5))).toBeUndefined();
      // A key the staged block does not touch is read from the store, as a copy.
      const unchanged = db.stateAt(1n)!.read(key(0))!;
      expect(unchanged).toEqual(value(0));
      unchanged.fill(0xee);
      expect(db.stateAt(1n)!.read(key(0))).toEqual(value(0));
      const before = db.stateAt(1n)!.read(key(1))!;
      before.fill(0xee);
      expect(db.stateAt(1n)!.read(key(1))).toEqual(value(1));
      expect(() => db.state.beginBlock(3n)).toThrow(ChainDbError);
      db.close();
    });

    it("the store keeps its own copy of each written key: a caller reusing its key array cannot corrupt the pinned state", () => {
      const db = open(4);
      genesis(db, [[key(1), value(1)], [key(2), value(2)]]);
      const batch = db.state.beginBlock(1n);
      const reused = key(1);
      batch.put(reused, value(9));
      reused.set(key(2)); // the engine is free to reuse the array once put returns
      batch.delete(reused);
      const root = db.state.commitBlock(batch).stateRoot;
      db.commitBlock(record(1n, root, db.head()!.block_hash, []));
      expect(db.stateAt(1n)!.read(key(1))).toEqual(value(9));
      expect(db.stateAt(1n)!.read(key(2))).toBeUndefined();
      // Height 0 is read back through the reverse diffs: each must name the key it was written under.
      expect(db.stateAt(0n)!.read(key(1))).toEqual(value(1));
      expect(db.stateAt(0n)!.read(key(2))).toEqual(value(2));
      // What a pinned read returns is the caller's: changing it changes nothing stored.
      db.stateAt(0n)!.read(key(1))!.fill(0xee);
      expect(db.stateAt(0n)!.read(key(1))).toEqual(value(1));
      db.close();
    });

    it("pinned state: every retained height reads exactly its state; older heights are refused", () => {
      const retain = 3;
      const write = fc.tuple(fc.integer({ min: 0, max: 7 }), fc.option(fc.integer({ min: 0, max: 255 }), { nil: undefined }));
      fc.assert(
        fc.property(fc.array(fc.array(write, { maxLength: 6 }), { minLength: 1, maxLength: 8 }), (blocks) => {
          const db = open(retain);
          genesis(db, [[key(0), value(0)]]);
          const model = new Map<number, number>([[0, 0]]);
          const snapshots: Array<[bigint, Map<number, number>]> = [[0n, new Map(model)]];
          blocks.forEach((writes, i) => {
            const height = BigInt(2 * i + 1);
            // Deleting a key that is not there is still a write the engine may make.
            block(db, height, writes.map(([k, v]): Write => [key(k), v === undefined ? undefined : value(v)]));
            for (const [k, v] of writes) {
              if (v === undefined) model.delete(k);
              else model.set(k, v);
            }
            snapshots.push([height, new Map(model)]);
          });
          snapshots.forEach(([height, state], i) => {
            const view = db.stateAt(height);
            const retained = snapshots.length - 1 - i <= retain;
            expect(view !== undefined, `height ${height}`).toBe(retained);
            if (view === undefined) return;
            for (let k = 0; k < 8; k++) {
              const v = state.get(k);
              expect(view.read(key(k)), `height ${height} key ${k}`).toEqual(v === undefined ? undefined : value(v));
            }
          });
          expect(db.stateAt(2n)).toBeUndefined(); // no block at an even height
          db.close();
        }),
        { numRuns: 40 },
      );
    });

    it("proofs at the head verify against the head's state_root; absence is an exclusion proof", () => {
      const db = open(4);
      genesis(db);
      block(db, 1n, [[key(1), value(1)], [key(2), value(2)]]);
      const head = block(db, 2n, [[key(2), value(3)]]);
      const one = db.proveKey(key(2));
      expect(one.value).toBe(toHex(value(3)));
      expect(verifyStateProof(one, head.state_root)).toEqual({ valid: true });
      const absent = db.proveKey(key(42));
      expect(absent.value).toBeNull();
      expect(verifyStateProof(absent, head.state_root)).toEqual({ valid: true });
      expect((absent as { ops: unknown[] }).ops).toHaveLength(db.exclusionProofOps());
      const multi = db.proveKeys([key(0), key(1), key(2)]);
      expect(multi.entries.map((e) => e.key)).toEqual([key(0), key(1), key(2)].map(toHex));
      expect(verifyStateProof(multi, head.state_root)).toEqual({ valid: true });
      expect(verifyStateProof(multi, db.blockByHeight(1n)!.state_root).valid).toBe(false);
      db.close();
    });

    it("a closed store refuses every call", () => {
      const db = open(4);
      genesis(db);
      db.close();
      expect(() => db.head()).toThrow(ChainDbError);
      expect(() => db.stateAt(0n)).toThrow(ChainDbError);
      expect(() => db.state.beginBlock(1n)).toThrow(ChainDbError);
    });
  });
}
