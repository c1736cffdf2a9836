// The LMDB ChainDb against the storage contract, plus what only a persistent store has: a
// reopened store is the committed chain, and a staged block that was never committed is gone.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open } from "lmdb";
import { afterAll, describe, expect, it } from "vitest";
import { concatBytes } from "../../../src/bytes.js";
import { accountKey } from "../../../state/kv/keys.js";
import { LmdbChainDb, STORE_FORMAT, StoreFullError } from "../../../state/lmdb/chain-db.js";
import { Env } from "../../../state/lmdb/env.js";
import { DamagedStoreError } from "../../../state/lmdb/errors.js";
import { encodeBlock } from "../../../state/lmdb/records.js";
import { verifyStateProof } from "../../../state/qmdb/proof.js";
import { block, describeChainDb, genesis } from "./conformance.js";

const root = mkdtempSync(join(tmpdir(), "cbqs-chaindb-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => join(root, `db${n++}`);

describeChainDb("LmdbChainDb", (retainBlocks) => LmdbChainDb.open(fresh(), { retainBlocks }));

const key = (i: number) => accountKey(concatBytes(new Uint8Array(19), Uint8Array.of(i)));
const value = (i: number) => Uint8Array.of(1, i);

describe("LmdbChainDb across reopening", () => {
  it("a reopened store holds the committed chain, its indexes, retained state and proofs", () => {
    const dir = fresh();
    let db = LmdbChainDb.open(dir, { retainBlocks: 2 });
    genesis(db);
    const b1 = block(db, 1n, [[key(1), value(1)]], [Uint8Array.of(0xa0, 1)]);
    block(db, 4n, [[key(1), value(2)], [key(2), value(2)]]);
    const b5 = block(db, 5n, [[key(2), undefined]]);
    db.close();
    db = LmdbChainDb.open(dir, { retainBlocks: 2 });
    expect(db.head()!.block_hash).toEqual(b5.block_hash);
    expect(db.blockByHash(b1.block_hash)!.transactions).toEqual([Uint8Array.of(0xa0, 1)]);
    expect(db.txLocation(b1.receipts[0]!.tx_hash)).toEqual({ height: 1n, index: 0 });
    expect(db.stateAt(1n)!.read(key(1))).toEqual(value(1));
    expect(db.stateAt(4n)!.read(key(2))).toEqual(value(2));
    expect(db.stateAt(5n)!.read(key(2))).toBeUndefined();
    expect(db.stateAt(0n)).toBeUndefined(); // three blocks above it, two retained
    expect(verifyStateProof(db.proveKey(key(1)), b5.state_root)).toEqual({ valid: true });
    const b6 = block(db, 6n, [[key(3), value(3)]]);
    expect(db.state.root()).toEqual(b6.state_root);
    db.close();
  });

  it("a staged block never committed is not in the reopened store; the chain continues", () => {
    const dir = fresh();
    let db = LmdbChainDb.open(dir, { retainBlocks: 4 });
    genesis(db);
    const b1 = block(db, 1n, [[key(1), value(1)]]);
    const batch = db.state.beginBlock(2n);
    batch.put(key(9), value(9));
    db.state.commitBlock(batch); // staged only
    db.close();
    db = LmdbChainDb.open(dir, { retainBlocks: 4 });
    expect(db.head()!.height).toBe(1n);
    expect(db.state.read(key(9))).toBeUndefined();
    expect(db.state.root()).toEqual(b1.state_root);
    block(db, 2n, [[key(2), value(2)]]);
    db.close();
  });

  it("a store written with retainBlocks 100 and reopened with 10 prunes the undo rows below head−10 in one commit; pinned reads inside the window still work", () => {
    const dir = fresh();
    let db = LmdbChainDb.open(dir, { retainBlocks: 100 });
    genesis(db);
    // Block h writes key(h % 7) = value(h): every retained height has its own state.
    for (let h = 1; h <= 120; h++) block(db, BigInt(h), [[key(h % 7), value(h)]]);
    const undoHeights = (d: LmdbChainDb) => [...d.env.table("undokeys").getKeys()].map((k) => Buffer.from(k).readBigUInt64BE(0));
    const undoRows = (d: LmdbChainDb) => [...d.env.table("undo").getKeys()].map((k) => Buffer.from(k).readBigUInt64BE(k.length - 8));
    expect(undoHeights(db)).toEqual(Array.from({ length: 100 }, (_, i) => BigInt(21 + i)));
    db.close();

    db = LmdbChainDb.open(dir, { retainBlocks: 10 });
    // Before any pruning the old undo rows are still there; the block count alone refuses heights below the new window.
    expect(undoHeights(db)).toHaveLength(100);
    expect(db.stateAt(109n)).toBeUndefined();
    expect(db.stateAt(110n)!.read(key(110 % 7))).toEqual(value(110));
    expect(db.pruneUndo()).toEqual({ from: 21n, to: 110n, blocks: 90 });
    expect(undoHeights(db)).toEqual(Array.from({ length: 10 }, (_, i) => BigInt(111 + i)));
    expect(undoRows(db).every((h) => h > 110n)).toBe(true);
    expect(db.pruneUndo()).toBeNull(); // nothing left to prune
    // Inside the window: the state after block 110 (key(110 % 7) = value(110)), and at the head.
    expect(db.stateAt(110n)!.read(key(110 % 7))).toEqual(value(110));
    expect(db.stateAt(115n)!.read(key(115 % 7))).toEqual(value(115));
    expect(db.stateAt(115n)!.read(key(116 % 7))).toEqual(value(116 - 7));
    expect(db.stateAt(109n)).toBeUndefined();
    db.close();

    // Reopened with a larger window again: the rows stay one contiguous run up to the head, and the new blocks keep theirs.
    db = LmdbChainDb.open(dir, { retainBlocks: 100 });
    expect(db.pruneUndo()).toBeNull();
    block(db, 121n, [[key(121 % 7), value(121)]]);
    expect(undoHeights(db)).toEqual(Array.from({ length: 11 }, (_, i) => BigInt(111 + i)));
    expect(db.stateAt(110n)!.read(key(110 % 7))).toEqual(value(110));
    expect(db.stateAt(105n)).toBeUndefined(); // its undo rows are gone: not served from a hole
    db.close();
  });

  it("pruneUndo whose write the disk refuses (an injected ENOSPC) is a StoreFullError like a block's commit, and the undo rows are all still there (CIP-4 §6.4)", () => {
    const dir = fresh();
    let db = LmdbChainDb.open(dir, { retainBlocks: 20 });
    genesis(db);
    for (let h = 1; h <= 30; h++) block(db, BigInt(h), [[key(h % 5), value(h)]]);
    db.close();
    const undoHeights = (d: LmdbChainDb) => [...d.env.table("undokeys").getKeys()].map((k) => Buffer.from(k).readBigUInt64BE(0));
    db = LmdbChainDb.open(dir, { retainBlocks: 3 });
    const before = undoHeights(db);
    expect(before.length).toBe(20);
    const transaction = db.env.transaction.bind(db.env);
    // The rows are removed, then the commit fails as a full disk makes it fail: LMDB aborts the transaction.
    db.env.transaction = <T>(write: () => T): T =>
      transaction(() => {
        write();
        throw Object.assign(new Error("ENOSPC: No space left on device"), { code: "ENOSPC" });
      });
    let thrown: unknown;
    try {
      db.pruneUndo();
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(StoreFullError);
    expect((thrown as Error).message).toMatch(/^(the disk is full \([\d,]+ bytes free\): )?the removal of the undo rows below the --retain-blocks window could not be written \(ENOSPC: No space left on device[^)]*\); the store is left at block 30$/);
    db.close();
    db = LmdbChainDb.open(dir, { retainBlocks: 20 });
    expect(undoHeights(db)).toEqual(before);
    db.close();
  });

  it("a block's commit that fails names the block; only a disk's or map's refusal (by code or by words) is a StoreFullError; the store then refuses writes until reopened", () => {
    const failing = (err: Error): { thrown: unknown; again: unknown; reopened: bigint | undefined } => {
      const dir = fresh();
      let db = LmdbChainDb.open(dir, { retainBlocks: 2 });
      genesis(db);
      block(db, 1n, [[key(1), value(1)]]);
      const transaction = db.env.transaction.bind(db.env);
      db.env.transaction = <T>(write: () => T): T =>
        transaction(() => {
          write();
          throw err;
        });
      let thrown: unknown;
      try {
        block(db, 2n, [[key(2), value(2)]]);
      } catch (e) {
        thrown = e;
      }
      db.env.transaction = transaction;
      let again: unknown;
      try {
        block(db, 2n, [[key(2), value(2)]]);
      } catch (e) {
        again = e;
      }
      db.close();
      db = LmdbChainDb.open(dir, { retainBlocks: 2 });
      const reopened = db.head()?.height;
      block(db, 2n, [[key(2), value(2)]]);
      db.close();
      return { thrown, again, reopened };
    };
    // The errno code alone says it (the message has none of the words) …
    let r = failing(Object.assign(new Error("write failed"), { code: "ENOSPC" }));
    expect(r.thrown).toBeInstanceOf(StoreFullError);
    expect((r.thrown as Error).message).toMatch(/^(the disk is full \([\d,]+ bytes free\): )?block 2 could not be written \(write failed[^)]*\); the store is left at block 1$/);
    expect((r.again as Error).message).toBe("a commit failed (write failed): reopen the ChainDb");
    expect(r.reopened).toBe(1n);
    // … or the message alone (no code) …
    r = failing(new Error("MDB_MAP_FULL: Environment mapsize limit reached"));
    expect(r.thrown).toBeInstanceOf(StoreFullError);
    expect((r.thrown as Error).message).toContain("block 2 could not be written (MDB_MAP_FULL: Environment mapsize limit reached");
    // … and any other failure is passed on as it is.
    const other = new TypeError("something else");
    r = failing(other);
    expect(r.thrown).toBe(other);
    expect((r.again as Error).message).toBe("a commit failed (something else): reopen the ChainDb");
    expect(r.reopened).toBe(1n);
  });

  it("a commit on a store kept with a larger retainBlocks drops every undo row below the window, not only the block leaving it", () => {
    const dir = fresh();
    let db = LmdbChainDb.open(dir, { retainBlocks: 20 });
    genesis(db);
    for (let h = 1; h <= 30; h++) block(db, BigInt(h), [[key(h % 5), value(h)]]);
    db.close();
    db = LmdbChainDb.open(dir, { retainBlocks: 3 });
    block(db, 31n, [[key(1), value(31)]]); // no pruneUndo: the commit itself keeps the window whole
    expect([...db.env.table("undokeys").getKeys()].map((k) => Buffer.from(k).readBigUInt64BE(0))).toEqual([29n, 30n, 31n]);
    db.close();
    // A later reopening with a larger window reads no state from a hole.
    db = LmdbChainDb.open(dir, { retainBlocks: 20 });
    expect(db.stateAt(28n)!.read(key(28 % 5))).toEqual(value(28));
    expect(db.stateAt(20n)).toBeUndefined();
    db.close();
  });

  it("pinned-state retention needs the reverse diffs, not only a block count: a height whose diffs were dropped is refused after reopening with a larger retainBlocks", () => {
    const dir = fresh();
    let db = LmdbChainDb.open(dir, { retainBlocks: 1 });
    genesis(db);
    for (let h = 1; h <= 4; h++) block(db, BigInt(h), [[key(1), value(h)]]);
    db.close();
    // Four blocks lie above height 0 and three above height 1: within 8, but only block 4's diff is kept.
    db = LmdbChainDb.open(dir, { retainBlocks: 8 });
    expect(db.stateAt(3n)!.read(key(1))).toEqual(value(3));
    for (const h of [0n, 1n, 2n]) expect(db.stateAt(h), `height ${h}`).toBeUndefined(); // never the head's value for an older height
    db.close();
  });

  it("one process at a time: a second open of the same directory is refused", () => {
    const dir = fresh();
    const db = LmdbChainDb.open(dir);
    expect(() => LmdbChainDb.open(dir)).toThrow(/already open/);
    db.close();
    LmdbChainDb.open(dir).close();
  });
});

describe("LmdbChainDb's own refusals, by message", () => {
  const refusal = (f: () => unknown): [string, string] => {
    try {
      f();
    } catch (err) {
      return [(err as Error).name, (err as Error).message];
    }
    throw new Error("accepted");
  };

  it("retainBlocks must be a whole number ≥ 0", () => {
    for (const bad of [-1, 1.5, Number.NaN]) {
      expect(refusal(() => LmdbChainDb.open(fresh(), { retainBlocks: bad }))).toEqual(["ChainDbError", `retainBlocks must be a non-negative integer (got ${bad})`]);
    }
    LmdbChainDb.open(fresh(), { retainBlocks: 0 }).close();
  });

  it("the format record: another format is named, a directory of blocks without one is not a cbqs store, a new store gets one", () => {
    const other = fresh();
    const env = Env.open(other);
    env.transaction(() => env.table("meta").putSync(Buffer.from("format"), Buffer.from("cbqs-lmdb/v0")));
    env.close();
    expect(refusal(() => LmdbChainDb.open(other))).toEqual(["StoreError", `a store of format "cbqs-lmdb/v0", not ${STORE_FORMAT}`]);
    const unmarked = fresh();
    const bare = Env.open(unmarked);
    bare.transaction(() => bare.table("blocks").putSync(Buffer.alloc(8), Buffer.from("x")));
    bare.close();
    expect(refusal(() => LmdbChainDb.open(unmarked))).toEqual(["StoreError", "not a cbqs store (no format record)"]);
    const empty = fresh();
    Env.open(empty).close();
    // An LMDB environment without the store's tables (a crash before the first commit, or another program's), opened read-only.
    expect(refusal(() => LmdbChainDb.open(empty, { readOnly: true }))).toEqual(["StoreError", "not a cbqs store (it has no meta table)"]);
    const marked = fresh();
    LmdbChainDb.open(marked).close();
    const reader = Env.open(marked, { readOnly: true });
    expect(reader.table("meta").get(Buffer.from("format"))?.toString()).toBe(STORE_FORMAT);
    reader.close();
  });

  it("the on-disk layout is the one docs/spec/state.md publishes: the format record's text and every table's name", async () => {
    // Another build, a snapshot tool or an operator reads these names: a rename must be deliberate.
    expect(STORE_FORMAT).toBe("cbqs-lmdb/v1");
    const doc = readFileSync("docs/spec/state.md", "utf8");
    expect(doc).toContain("| `meta` | `format` → `cbqs-lmdb/v1`;");
    const published = [...doc.matchAll(/^\| `([a-z]+)` \| /gm)].map((m) => m[1]!).filter((t) => t !== "index"); // "index": another key-index placement
    const dir = fresh();
    const db = LmdbChainDb.open(dir, { retainBlocks: 4 });
    genesis(db);
    block(db, 1n, [[key(1), value(1)]], [Uint8Array.of(0xa0, 1)]);
    db.close();
    // Binary keys: the default key encoding would hide a table with an empty name. LMDB stores each name NUL-terminated.
    const raw = open({ path: dir, readOnly: true, keyEncoding: "binary" });
    try {
      expect([...raw.getKeys()].map((k) => Buffer.from(k as Buffer).toString().replace(/\0$/, "")).sort()).toEqual(published.sort());
    } finally {
      await raw.close();
    }
  });

  it("a head block whose state_root is not the stored state's is damage, found on opening", () => {
    const dir = fresh();
    const db = LmdbChainDb.open(dir);
    genesis(db);
    const b1 = block(db, 1n, [[key(1), value(1)]]);
    db.close();
    const env = Env.open(dir);
    const blocks = env.table("blocks");
    const k = Buffer.alloc(8);
    k.writeBigUInt64BE(1n);
    const stored = new Uint8Array(blocks.get(k)!);
    env.transaction(() => blocks.putSync(k, Buffer.from(concatBytes(stored.subarray(0, 8), encodeBlock({ ...b1, state_root: new Uint8Array(32).fill(3) })))));
    env.close();
    expect(() => LmdbChainDb.open(dir)).toThrow(DamagedStoreError);
    expect(refusal(() => LmdbChainDb.open(dir))).toEqual(["StoreError", "the store is damaged: its state root is not block 1's state_root"]);
  });

  it("a commit that failed leaves the store refusing everything until it is reopened, naming the failure; adopting a snapshot into a store that holds a chain is refused", () => {
    const dir = fresh();
    let fail = false;
    const db = LmdbChainDb.open(dir, {
      duringCommit: () => {
        if (fail) throw new Error("injected");
      },
    });
    genesis(db);
    fail = true;
    expect(refusal(() => block(db, 1n, [[key(1), value(1)]]))).toEqual(["Error", "injected"]);
    expect(refusal(() => db.head())).toEqual(["ChainDbError", "a commit failed (injected): reopen the ChainDb"]);
    db.close();
    const reopened = LmdbChainDb.open(dir);
    expect(reopened.head()!.height).toBe(0n);
    expect(refusal(() => reopened.adoptSnapshot(reopened.genesis()!, reopened.head()!))).toEqual(["ChainDbError", "the store already holds a chain"]);
    reopened.close();
  });
});

describe("the message of a write the disk refused (StoreFullError)", () => {
  const cause = new Error("MDB_MAP_FULL: Environment mapsize limit reached");
  it("below 1 MiB free it says the disk is full; otherwise it gives the free bytes; an empty store is left empty", () => {
    expect(new StoreFullError("block 5", 4n, 1000, cause).message).toBe(
      "the disk is full (1,000 bytes free): block 5 could not be written (MDB_MAP_FULL: Environment mapsize limit reached); the store is left at block 4",
    );
    expect(new StoreFullError("block 5", 4n, 1 << 20, cause).message).toBe(
      "block 5 could not be written (MDB_MAP_FULL: Environment mapsize limit reached; 1,048,576 bytes free on its disk); the store is left at block 4",
    );
    expect(new StoreFullError("block 0", undefined, undefined, cause).message).toBe("block 0 could not be written (MDB_MAP_FULL: Environment mapsize limit reached); the store is left empty");
  });
});
