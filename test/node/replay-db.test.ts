// replayIntoDb (src/store-tools/replay-db.ts) in process, on a memory store: what `cbqs replay --db` is
// built on. The CLI tests (test/harness/replay-db.test.ts) cover its output; these pin the outcome
// record itself — a block that does not verify is never committed and is counted, the progress
// each block reports, a genesis that does not verify, a stop between blocks.
import { describe, expect, it } from "vitest";
import { toHex } from "../../src/bytes.js";
import type { Fixture } from "../../src/harness/fixture.js";
import { readFixture } from "../../src/harness/documents.js";
import type { ReplayProgress } from "../../src/harness/replay.js";
import { replayIntoDb } from "../../src/store-tools/replay-db.js";
import { compareStoredChain, comparedText, StoredChainError } from "../../src/chain-node/stored-chain.js";
import type { ChainDb } from "../../state/chain-db/chain-db.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";

const FIXTURE = readFixture("fixtures/corpus/create-quote.json"); // blocks at heights 1, 5, 6
const TXS = FIXTURE.blocks.map((b) => b.transactions.length);

/** The fixture with one 32-byte root replaced: a copy, the shared one is never edited. */
function tampered(edit: (f: Fixture) => void): Fixture {
  const copy = structuredClone(FIXTURE);
  edit(copy);
  return copy;
}

describe("replayIntoDb (src/store-tools/replay-db.ts)", () => {
  it("from genesis: every block committed, progress reported once per block with the run's last height", async () => {
    const db = new MemoryChainDb(100);
    const progress: ReplayProgress[] = [];
    const outcome = await replayIntoDb(FIXTURE, db, { onBlock: (p) => progress.push(p) });
    expect(outcome).toMatchObject({ resumedAfter: null, blocks: 3, txs: TXS[0]! + TXS[1]! + TXS[2]!, mismatch: null, stopped: false, head: 6n, compared: null, pruned: null });
    expect(progress).toEqual([
      { blocksDone: 1, blocksTotal: 3, txsDone: TXS[0], height: 1n, lastHeight: 6n },
      { blocksDone: 2, blocksTotal: 3, txsDone: TXS[0]! + TXS[1]!, height: 5n, lastHeight: 6n },
      { blocksDone: 3, blocksTotal: 3, txsDone: TXS[0]! + TXS[1]! + TXS[2]!, height: 6n, lastHeight: 6n },
    ]);
    expect(toHex(db.state.root())).toBe(toHex(FIXTURE.blocks[2]!.state_root));
  });

  it("resumed: the stored chain is compared, then only the blocks above its head run", async () => {
    const db = new MemoryChainDb(100);
    await replayIntoDb(FIXTURE, db, { toHeight: 1n });
    const progress: ReplayProgress[] = [];
    const outcome = await replayIntoDb(FIXTURE, db, { onBlock: (p) => progress.push(p) });
    expect(outcome).toMatchObject({ resumedAfter: 1n, blocks: 2, txs: TXS[1]! + TXS[2]!, mismatch: null, stopped: false, head: 6n });
    expect(outcome.compared?.mismatch).toBeNull();
    expect(progress.map((p) => [p.blocksDone, p.height, p.lastHeight])).toEqual([
      [1, 5n, 6n],
      [2, 6n, 6n],
    ]);
  });

  it("a block that does not verify is counted, named and never committed; the head stays at the block before it", async () => {
    const bad = tampered((f) => {
      f.blocks[1]!.state_root = new Uint8Array(32).fill(7);
    });
    const db = new MemoryChainDb(100);
    const outcome = await replayIntoDb(bad, db);
    expect(outcome).toMatchObject({ resumedAfter: null, blocks: 2, txs: TXS[0]! + TXS[1]!, stopped: false, head: 1n });
    expect(outcome.mismatch).toMatchObject({ height: 5n, field: "state_root" });
    expect(db.head()!.height).toBe(1n);
  });

  it("a genesis that does not verify: nothing is committed, the store stays empty", async () => {
    const bad = tampered((f) => {
      f.genesis.state_root = new Uint8Array(32).fill(9);
    });
    const db = new MemoryChainDb(100);
    const outcome = await replayIntoDb(bad, db);
    expect(outcome).toMatchObject({ resumedAfter: null, blocks: 0, txs: 0, stopped: false, head: null });
    expect(outcome.mismatch).toMatchObject({ height: 0n });
    expect(db.head()).toBeUndefined();
  });

  it("a signal already aborted stops it before the first block: genesis only, stopped", async () => {
    const db = new MemoryChainDb(100);
    const outcome = await replayIntoDb(FIXTURE, db, { signal: AbortSignal.abort() });
    expect(outcome).toMatchObject({ blocks: 0, txs: 0, mismatch: null, stopped: true, head: 0n });
  });
});

describe("the stored chain against the fixture, each difference named (src/chain-node/stored-chain.ts)", () => {
  /** A store holding the fixture's chain (blocks 1, 5 and 6). */
  async function full(): Promise<MemoryChainDb> {
    const db = new MemoryChainDb(100);
    await replayIntoDb(FIXTURE, db);
    return db;
  }

  it("a fixture block at a height the store has no block at", async () => {
    const db = await full();
    const bad = tampered((f) => {
      f.blocks[1]!.height = 4n;
    });
    const outcome = await replayIntoDb(bad, db);
    expect(outcome.mismatch).toMatchObject({ height: 4n, path: "$.blocks[1]", field: "block", expected: "a block at height 4", actual: "no stored block at that height" });
    expect(db.head()!.height).toBe(6n);
  });

  it("a stored block the fixture skips, inside it and above its last block", async () => {
    const db = await full();
    const skipping = tampered((f) => {
      f.blocks.splice(1, 1);
    });
    expect((await replayIntoDb(skipping, db)).mismatch).toMatchObject({ height: 5n, path: "$.blocks", field: "block", expected: "no block at height 5 (the fixture skips it)" });
    const shorter = tampered((f) => {
      f.blocks.splice(2, 1);
    });
    const outcome = await replayIntoDb(shorter, db, { toHeight: 6n });
    // A fixture shorter than the store is no mismatch: the stored blocks above it are named as not compared.
    expect(outcome).toMatchObject({ mismatch: null, blocks: 0, compared: { compared: 2, first: 1n, last: 5n, beyond: { from: 6n, head: 6n } } });
    // The stored block 5, at or below --to-height and past the fixture's blocks there, is one the fixture skips.
    expect((await replayIntoDb(skipping, db, { toHeight: 5n })).mismatch).toMatchObject({ height: 5n, path: "$.blocks", field: "block", expected: "no block at height 5 (the fixture skips it)" });
  });

  it("each field of a fixture block and of its genesis alone, named by path and field, with the note that nothing ran", async () => {
    const db = await full();
    const flip = (b: Uint8Array): Uint8Array => Uint8Array.from(b, (x, i) => (i === 0 ? x ^ 1 : x));
    const cases: Array<[(f: Fixture) => void, string, string]> = [
      [(f) => void (f.genesis.chain_instance_id = flip(f.genesis.chain_instance_id)), "$.genesis.chain_instance_id", "chain_instance_id"],
      [(f) => void (f.genesis.state_root = flip(f.genesis.state_root)), "$.genesis.state_root", "genesis state_root"],
      [(f) => void (f.blocks[1]!.timestamp += 1n), "$.blocks[1].timestamp", "timestamp"],
      [(f) => void f.blocks[1]!.receipts.pop(), "$.blocks[1].receipts", "receipts.length"],
      [(f) => void (f.blocks[1]!.state_root = flip(f.blocks[1]!.state_root)), "$.blocks[1].state_root", "state_root"],
      [(f) => void (f.blocks[1]!.tx_root = flip(f.blocks[1]!.tx_root)), "$.blocks[1].tx_root", "tx_root"],
      [(f) => void (f.blocks[1]!.receipt_root = flip(f.blocks[1]!.receipt_root)), "$.blocks[1].receipt_root", "receipt_root"],
      [(f) => void (f.blocks[1]!.logs_root = flip(f.blocks[1]!.logs_root)), "$.blocks[1].logs_root", "logs_root"],
      [(f) => void (f.blocks[1]!.effective_rent_height += 1n), "$.blocks[1].effective_rent_height", "effective_rent_height"],
    ];
    for (const [edit, path, field] of cases) {
      const { mismatch } = compareStoredChain(tampered(edit), db);
      expect(mismatch, path).toMatchObject({ path, field, details: ["(the value the store holds for this block: nothing was executed, the store is unchanged)"] });
    }
    expect(new StoredChainError("x").name).toBe("StoredChainError");
  });

  it("a fixture block claiming other gas vectors", async () => {
    const db = await full();
    const bad = tampered((f) => {
      f.blocks[0]!.gas_vectors_sha256 = "0x" + "00".repeat(32);
    });
    expect((await replayIntoDb(bad, db)).mismatch).toMatchObject({ height: 1n, path: "$.blocks[0].gas_vectors_sha256", field: "gas_vectors_sha256", expected: "0x" + "00".repeat(32) });
  });
});

describe("the stored chain below a snapshot, its bounds and its words (src/chain-node/stored-chain.ts)", () => {
  const flip = (b: Uint8Array): Uint8Array => Uint8Array.from(b, (x, i) => (i === 0 ? x ^ 1 : x));

  /** A store holding the fixture's chain (blocks 1, 5 and 6). */
  async function full(): Promise<MemoryChainDb> {
    const db = new MemoryChainDb(100);
    await replayIntoDb(FIXTURE, db);
    return db;
  }

  /**
   * The store as a snapshot import of block `base` leaves it: no block below `base` (what
   * compareStoredChain reads of a store is its genesis, head and block ranges). The real import
   * is tested through the CLI (test/harness/replay-db.test.ts), out of a mutant's reach.
   */
  function fromSnapshot(db: MemoryChainDb, base: bigint): ChainDb {
    return new Proxy(db, {
      get(target, name, receiver) {
        if (name === "blocks") return (q: Parameters<ChainDb["blocks"]>[0]) => target.blocks({ ...q, from: q.from < base ? base : q.from });
        const v: unknown = Reflect.get(target, name, receiver);
        return typeof v === "function" ? v.bind(target) : v;
      },
    });
  }

  it("a fixture block below the snapshot is checked against its own roots, each named by path and field", async () => {
    const db = fromSnapshot(await full(), 5n);
    expect(compareStoredChain(FIXTURE, db)).toMatchObject({ mismatch: null, compared: 2, snapshotBase: 5n, belowSnapshot: 1 });
    const note = "(computed from the fixture's own block: the store starts at a snapshot of block 5 and holds no block below it; the snapshot's block commits to this one through the parent hashes)";
    for (const field of ["tx_root", "receipt_root", "logs_root"] as const) {
      const { mismatch } = compareStoredChain(tampered((f) => void (f.blocks[0]![field] = flip(f.blocks[0]![field]))), db);
      expect(mismatch, field).toMatchObject({ height: 1n, path: `$.blocks[0].${field}`, field, details: [note, "(nothing was executed, the store is unchanged)"] });
    }
  });

  it("two fixture blocks below the snapshot: counted and named in the words", async () => {
    const c = compareStoredChain(FIXTURE, fromSnapshot(await full(), 6n));
    expect(c).toMatchObject({ mismatch: null, compared: 1, first: 6n, last: 6n, snapshotBase: 6n, belowSnapshot: 2 });
    expect(comparedText(c)).toBe(
      "genesis and 1 stored block (block 6) compared with the fixture's: identical; the store starts at a snapshot of block 6, holding no block below it; the fixture's 2 blocks below it checked against the hash chain that ends at it (roots and block hashes, not executed)",
    );
  });

  it("an upper bound below the fixture's first block compares no block, also on a snapshot store", async () => {
    const c = compareStoredChain(FIXTURE, fromSnapshot(await full(), 5n), 0n);
    expect(c).toMatchObject({ mismatch: null, compared: 0, belowSnapshot: 0, snapshotBase: 5n });
  });

  it("an upper bound between two stored blocks: the blocks above it are not read", async () => {
    expect(compareStoredChain(FIXTURE, await full(), 3n)).toMatchObject({ mismatch: null, compared: 1, first: 1n, last: 1n });
  });

  it("the first block's parent is the fixture genesis' block hash, named as such", async () => {
    const { mismatch } = compareStoredChain(tampered((f) => void (f.genesis.config.timestamp += 1n)), await full());
    expect(mismatch).toMatchObject({ height: 1n, path: "$.genesis (its block hash)", field: "parent_hash" });
  });

  it("a stored block above the fixture's last one compared is named with its hash", async () => {
    const db = await full();
    const skipping = tampered((f) => void f.blocks.splice(1, 1));
    expect(compareStoredChain(skipping, db, 5n).mismatch).toMatchObject({ height: 5n, actual: `a stored block (block_hash ${toHex(db.blocks({ from: 5n, to: 5n, order: "asc", limit: 1 })[0]!.block_hash)})` });
  });
});
