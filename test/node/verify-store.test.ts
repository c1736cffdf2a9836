// `cbqs store verify` (src/store-tools/verify-store.ts) in process: each check reached alone by one
// change written into a copy of a good store through LMDB, and named in its answer. The CLI
// tests (test/cli/store.test.ts) run the command as a child process; these reach the checks
// themselves, one at a time, where a planted bug in any one of them shows.
import { cpSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { concatBytes, toHex, u64BE } from "../../src/bytes.js";
import { headerHash } from "../../src/chain/block.js";
import { readFixture } from "../../src/harness/documents.js";
import { CbqsNode } from "../../src/chain-node/chain-node.js";
import { exportSnapshot, importSnapshot } from "../../src/store-tools/snapshot.js";
import { StoreInconsistency, verifyStore } from "../../src/store-tools/verify-store.js";
import type { BlockRecord } from "../../state/chain-db/chain-db.js";
import { LmdbChainDb } from "../../state/lmdb/chain-db.js";
import { Env, type Table } from "../../state/lmdb/env.js";
import { decodeBlock, decodeGenesis, encodeBlock, encodeGenesis, encodeTxLocation } from "../../state/lmdb/records.js";

const root = mkdtempSync(join(tmpdir(), "cbqs-verify-store-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const good = join(root, "good");
let copies = 0;

/** The fixture's chain: blocks 1, 5 and 6, each with transactions; undo rows for all three. */
beforeAll(() => {
  const db = LmdbChainDb.open(good, { retainBlocks: 8 });
  CbqsNode.open(db, { kind: "fixture", fixture: readFixture("fixtures/corpus/create-quote.json") });
  db.close();
});

const height = (h: bigint): Buffer => Buffer.from(u64BE(h));

/** A copy of the good store changed through LMDB by `change`, then verified: the inconsistency's message. */
function inconsistency(change: (t: (name: string) => Table) => void): string {
  const dir = join(root, `copy${copies++}`);
  cpSync(good, dir, { recursive: true });
  const env = Env.open(dir);
  env.transaction(() => change((name) => env.table(name)));
  env.close();
  const db = LmdbChainDb.open(dir);
  try {
    verifyStore(db);
  } catch (err) {
    expect(err).toBeInstanceOf(StoreInconsistency);
    return (err as Error).message;
  } finally {
    db.close();
  }
  throw new Error("the store verified");
}

/** Block `h`'s stored value: its QMDB log size and its record. */
function stored(t: (name: string) => Table, h: bigint): { logSize: bigint; block: BlockRecord } {
  const value = t("blocks").get(height(h))!;
  return { logSize: value.readBigUInt64BE(0), block: decodeBlock(new Uint8Array(value).subarray(8)) };
}
const put = (t: (name: string) => Table, h: bigint, logSize: bigint, block: BlockRecord) =>
  t("blocks").putSync(height(h), Buffer.from(concatBytes(u64BE(logSize), encodeBlock(block))));

/** `b` with a new parent, its block_hash recomputed: only the parent link is wrong. */
function reparented(cid: Uint8Array, b: BlockRecord, parent: Uint8Array): BlockRecord {
  const block_hash = headerHash(cid, b.height, b.timestamp, parent, b.state_root, b);
  return { ...b, parent_hash: parent, block_hash };
}

describe("store verify, each check reached alone (src/store-tools/verify-store.ts)", () => {
  it("the good store verifies, and the answer counts what was checked", () => {
    const db = LmdbChainDb.open(good);
    try {
      expect(verifyStore(db)).toMatch(
        /^format, genesis record, 4 block records \(transaction hashes, roots, block hashes, parents\), 4 block-hash and 18 transaction index entries \(18 transactions\), \d+ undo rows of 3 blocks \(index and rows both ways, each decoded\), state root rebuilt from \d+ operations = block 6's state_root 0x[0-9a-f]{64}$/,
      );
    } finally {
      db.close();
    }
  });

  it("a store imported from a snapshot (genesis, then block 6 whose parent is not held) verifies; the scratch directory of the rebuild is removed", () => {
    const file = join(root, "h6.cbqs");
    const source = LmdbChainDb.open(good);
    const ops = source.commitment.db.any.size - source.commitment.db.any.inactivityFloor; // a snapshot carries the operations from the floor on
    exportSnapshot(source, file);
    source.close();
    const imported = join(root, "imported");
    importSnapshot(file, imported);
    const before = readdirSync(tmpdir()).filter((d) => d.startsWith("cbqs-verify-")).length;
    const db = LmdbChainDb.open(imported);
    try {
      expect(verifyStore(db)).toMatch(new RegExp(`^format, genesis record, 2 block records .*, 0 undo rows of 0 blocks .*, state root rebuilt from ${ops} operations = block 6's state_root 0x[0-9a-f]{64}$`));
    } finally {
      db.close();
    }
    expect(readdirSync(tmpdir()).filter((d) => d.startsWith("cbqs-verify-")).length).toBe(before);
  });

  it("a store without a chain", () => {
    const db = LmdbChainDb.open(join(root, "empty"));
    try {
      expect(() => verifyStore(db)).toThrow(new StoreInconsistency("the store holds no chain"));
    } finally {
      db.close();
    }
  });

  it("the genesis record against its own source", () => {
    const message = inconsistency((t) => {
      const meta = t("meta");
      const g = decodeGenesis(new Uint8Array(meta.get(Buffer.from("genesis"))!));
      meta.putSync(Buffer.from("genesis"), Buffer.from(encodeGenesis({ ...g, chain_instance_id: new Uint8Array(32).fill(1) })));
    });
    expect(message).toBe("the genesis record: chain_instance_id is not keccak256 of the genesis source");
  });

  it("block records: the height in the key, block 0, the block itself, its parent, its log size", () => {
    expect(inconsistency((t) => t("blocks").putSync(height(3n), t("blocks").get(height(5n))!))).toBe("block 3: its record says height 5");
    expect(
      inconsistency((t) => {
        const { logSize, block } = stored(t, 0n);
        put(t, 0n, logSize, { ...block, state_root: new Uint8Array(32).fill(2) });
      }),
    ).toBe("block 0 is not the genesis record's block");
    expect(
      inconsistency((t) => {
        const { logSize, block } = stored(t, 5n);
        put(t, 5n, logSize, { ...block, timestamp: block.timestamp + 1n });
      }),
    ).toBe("block 5: block_hash does not match its header");
    expect(
      inconsistency((t) => {
        const cid = decodeGenesis(new Uint8Array(t("meta").get(Buffer.from("genesis"))!)).chain_instance_id;
        const { logSize, block } = stored(t, 6n);
        put(t, 6n, logSize, reparented(cid, block, new Uint8Array(32).fill(3)));
      }),
    ).toBe(`block 6: parent_hash is not block 5's block_hash`);
    let sizes: [bigint, bigint] = [0n, 0n];
    const message = inconsistency((t) => {
      const five = stored(t, 5n);
      sizes = [stored(t, 6n).logSize, five.logSize + 1_000_000n];
      put(t, 5n, sizes[1], five.block);
    });
    expect(message).toBe(`block 6: its QMDB log size ${sizes[0]} is not above block 5's ${sizes[1]}`);
    // Equal is damage too: every block appends at least its commit operation.
    const equal = inconsistency((t) => {
      const five = stored(t, 5n);
      sizes = [stored(t, 6n).logSize, 0n];
      put(t, 5n, sizes[0], five.block);
    });
    expect(equal).toBe(`block 6: its QMDB log size ${sizes[0]} is not above block 5's ${sizes[0]}`);
  });

  it("an index entry that does not decode is named by its hash, both ways; an inconsistency is a StoreInconsistency by name", () => {
    let tx = "";
    expect(
      inconsistency((t) => {
        const r = stored(t, 6n).block.receipts[0]!;
        tx = toHex(r.tx_hash);
        t("txs").putSync(Buffer.from(r.tx_hash), Buffer.of(1, 2, 3));
      }),
    ).toMatch(new RegExp(`^the transaction index entry of ${tx}: `));
    const stray = new Uint8Array(32).fill(0x45);
    expect(inconsistency((t) => t("txs").putSync(Buffer.from(stray), Buffer.of(1, 2, 3)))).toMatch(new RegExp(`^the transaction index entry of ${toHex(stray)}: `));
    expect(new StoreInconsistency("x").name).toBe("StoreInconsistency");
  });

  it("an operation missing from the stored log is named as the stored state's damage; the rebuild's store is closed", () => {
    const fds = readdirSync("/proc/self/fd").length;
    expect(
      inconsistency((t) => {
        const ops = t("ops");
        const [, second] = [...ops.getKeys({ limit: 2 })];
        ops.removeSync(second!);
      }),
    ).toMatch(/^the stored state: operation \d+ is missing$/);
    const db = LmdbChainDb.open(good, { readOnly: true });
    try {
      verifyStore(db);
    } finally {
      db.close();
    }
    expect(readdirSync("/proc/self/fd").length).toBe(fds);
  });

  it("the block-hash and transaction indexes, both ways", () => {
    let hash = "";
    expect(
      inconsistency((t) => {
        const b = stored(t, 5n).block;
        hash = toHex(b.block_hash);
        t("hashes").removeSync(Buffer.from(b.block_hash));
      }),
    ).toBe(`block 5: the hash index does not lead to it (${hash})`);
    let tx = "";
    expect(
      inconsistency((t) => {
        const r = stored(t, 5n).block.receipts[1]!;
        tx = toHex(r.tx_hash);
        t("txs").removeSync(Buffer.from(r.tx_hash));
      }),
    ).toBe(`block 5: transaction 1 (${tx}) is not in the transaction index`);
    expect(
      inconsistency((t) => {
        const r = stored(t, 6n).block.receipts[0]!;
        tx = toHex(r.tx_hash);
        t("txs").putSync(Buffer.from(r.tx_hash), Buffer.from(encodeTxLocation({ height: 1n, index: 0 })));
      }),
    ).toBe(`block 6: the transaction index puts transaction 0 (${tx}) in an earlier block`);
    const stray = new Uint8Array(32).fill(0x44);
    expect(inconsistency((t) => t("hashes").putSync(Buffer.from(stray), height(5n)))).toBe(`the hash index entry ${toHex(stray)} leads to no block of that hash`);
    expect(inconsistency((t) => t("txs").putSync(Buffer.from(stray), Buffer.from(encodeTxLocation({ height: 5n, index: 99 }))))).toBe(
      `the transaction index entry of ${toHex(stray)} leads to no such transaction (block 5, index 99)`,
    );
  });

  it("the undo rows of pinned reads: index entries, rows, decoding, no hole", () => {
    expect(inconsistency((t) => t("undokeys").putSync(Buffer.of(1, 2, 3), Buffer.alloc(0)))).toBe("the undo index entry 0x010203 is not a block height");
    expect(inconsistency((t) => t("undokeys").putSync(height(3n), Buffer.alloc(0)))).toBe("the undo index of block 3: no such block is stored");
    expect(inconsistency((t) => t("undokeys").putSync(height(5n), Buffer.alloc(55)))).toBe("the undo index of block 5: 55 bytes, not a list of 54-byte state keys");
    expect(inconsistency((t) => t("undo").putSync(Buffer.alloc(10), Buffer.of(0)))).toBe("the undo row 0x00000000000000000000 has no state key and block height");
    let listed = "";
    expect(
      inconsistency((t) => {
        const [k] = [...t("undo").getKeys({})].map((k) => Buffer.from(k)).filter((k) => k.readBigUInt64BE(54) === 6n);
        listed = toHex(k!.subarray(0, 54));
        t("undo").removeSync(k!);
      }),
    ).toBe(`the undo index of block 6: the undo row of key ${listed} is missing`);
    const key = new Uint8Array(54).fill(0x01);
    expect(inconsistency((t) => t("undo").putSync(Buffer.from(concatBytes(key, u64BE(5n))), Buffer.of(0)))).toBe(`the undo row of key ${toHex(key)} at block 5: not in block 5's undo index`);
    let first = "";
    expect(
      inconsistency((t) => {
        const [k] = [...t("undo").getKeys({})];
        const row = Buffer.from(k!);
        first = `${toHex(row.subarray(0, 54))} at block ${row.readBigUInt64BE(54)}`;
        t("undo").putSync(row, Buffer.of(9));
      }),
    ).toMatch(new RegExp(`^the undo row of key ${first}: `));
    expect(
      inconsistency((t) => {
        for (const k of [...t("undo").getKeys({})].map((k) => Buffer.from(k)).filter((k) => k.readBigUInt64BE(54) === 5n)) t("undo").removeSync(k);
        t("undokeys").removeSync(height(5n));
      }),
    ).toBe("the undo index of block 1: block 5 above it has none (a hole pinned reads would read through)");
  });

  it("the state: the head's log size, the operations the root is rebuilt from", () => {
    let sizes: [bigint, bigint] = [0n, 0n];
    const message = inconsistency((t) => {
      const six = stored(t, 6n);
      sizes = [six.logSize - 1n, six.logSize];
      put(t, 6n, sizes[0], six.block);
    });
    expect(message).toBe(`the head's QMDB log size ${sizes[0]} is not the stored log's ${sizes[1]}`);
    expect(
      inconsistency((t) => {
        const ops = t("ops");
        for (const { key, value } of ops.getRange({})) {
          const v = Buffer.from(value);
          if (v[0] !== 0xd2 || v.length <= 1 + 54) continue; // an Update: context, 54-byte key, value
          v[v.length - 1]! ^= 1;
          ops.putSync(Buffer.from(key), v);
          return;
        }
      }),
    ).toMatch(/^the state root rebuilt from the stored operations, 0x[0-9a-f]{64}, is not block 6's state_root 0x[0-9a-f]{64}$/);
  });
});
