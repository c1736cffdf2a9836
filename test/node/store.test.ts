// Where a node, follower or `cbqs replay --db` opens its ChainDb (src/node/store.ts): memory without
// a directory, LMDB with one, the options passed through, and the crash hook the crash tests use.
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { MemoryChainDb } from "../../state/chain-db/memory.js";
import { accountKey } from "../../state/kv/keys.js";
import { LmdbChainDb } from "../../state/lmdb/chain-db.js";
import { exportSnapshot } from "../../state/lmdb/snapshot.js";
import { SNAPSHOT_INTERVAL_HELP, snapshotInterval } from "../../src/cli/store-options.js";
import { SNAPSHOT_INTERVAL_BLOCKS } from "../../src/node/snapshot-interval.js";
import { DEFAULT_RETAIN_BLOCKS, openChainDb } from "../../src/node/store.js";
import { block, genesis } from "../state/chain-db/conformance.js";

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "cbqs-store-"));
  dirs.push(dir);
  return dir;
};

afterEach(() => {
  vi.restoreAllMocks();
  delete process.env["CBQS_CRASH_IN_COMMIT"];
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("openChainDb", () => {
  it("without a directory: a memory store keeping the retention asked for (default DEFAULT_RETAIN_BLOCKS)", () => {
    const plain = openChainDb(undefined);
    expect(plain).toBeInstanceOf(MemoryChainDb);
    expect((plain as MemoryChainDb).retainBlocks).toBe(DEFAULT_RETAIN_BLOCKS);
    expect((openChainDb(undefined, { retainBlocks: 3 }) as MemoryChainDb).retainBlocks).toBe(3);
  });

  it("with a directory: LMDB with the retention asked for; read-only opens refuse to write", () => {
    const dir = tempDir();
    const db = openChainDb(dir, { retainBlocks: 5, snapshotInterval: 0n });
    expect(db).toBeInstanceOf(LmdbChainDb);
    expect((db as LmdbChainDb).retainBlocks).toBe(5);
    genesis(db);
    db.close();
    const reader = openChainDb(dir, { readOnly: true });
    expect(reader.head()!.height).toBe(0n);
    expect(() => reader.state.beginBlock(1n)).toThrow("the store is open read-only: no block can be written");
    expect(() => reader.proveKey(accountKey(new Uint8Array(20)))).not.toThrow(); // reads, proofs and snapshot exports still work
    expect(exportSnapshot(reader as LmdbChainDb, join(dir, "export.snapshot")).height).toBe(0n);
    reader.close();
  });

  it("a snapshot is written when a block crosses a multiple of the interval, none with interval 0", () => {
    const every = tempDir();
    const db = openChainDb(every, { snapshotInterval: 2n });
    genesis(db);
    block(db, 1n, []);
    expect(existsSync(join(every, "snapshots"))).toBe(false);
    block(db, 2n, []);
    db.close();
    expect(readdirSync(join(every, "snapshots"))).toHaveLength(1);
    const never = tempDir();
    const quiet = openChainDb(never, { snapshotInterval: 0n });
    genesis(quiet);
    for (let h = 1n; h <= 4n; h++) block(quiet, h, []);
    quiet.close();
    expect(existsSync(join(never, "snapshots"))).toBe(false);
  });

  it("CIP-4 §11 SNAPSHOT_INTERVAL_BLOCKS = 100,000 is the default interval: a store opened without one writes its first snapshot at the block crossing 100,000, the next at the block crossing 200,000 (a skipped multiple too)", () => {
    expect(SNAPSHOT_INTERVAL_BLOCKS).toBe(100_000n);
    expect(snapshotInterval(undefined)).toBe(100_000n); // --snapshot-interval omitted
    expect(SNAPSHOT_INTERVAL_HELP).toContain("when omitted, 100,000 (CIP-4 §11 SNAPSHOT_INTERVAL_BLOCKS)");
    const dir = tempDir();
    const snapshots = () => (existsSync(join(dir, "snapshots")) ? readdirSync(join(dir, "snapshots")).sort() : []);
    const db = openChainDb(dir);
    genesis(db);
    block(db, 1n, []);
    block(db, 99_999n, []);
    expect(snapshots()).toEqual([]);
    block(db, 100_000n, []);
    expect(snapshots()).toEqual(["snapshot-100000.cbqs"]);
    block(db, 100_001n, []);
    block(db, 199_999n, []);
    expect(snapshots()).toEqual(["snapshot-100000.cbqs"]);
    block(db, 200_001n, []); // 200,000 itself has no block
    db.close();
    expect(snapshots()).toEqual(["snapshot-100000.cbqs", "snapshot-200001.cbqs"]);
  });

  it("CBQS_CRASH_IN_COMMIT=n kills the process (SIGKILL) inside its n-th commit and no other; a value that is not a whole number ≥ 1 is ignored", () => {
    const kill = vi.spyOn(process, "kill").mockImplementation(() => true);
    for (const ignored of ["0", "-1", "1.5", "two", ""]) {
      process.env["CBQS_CRASH_IN_COMMIT"] = ignored;
      const db = openChainDb(tempDir(), { snapshotInterval: 0n });
      genesis(db);
      block(db, 1n, []);
      db.close();
    }
    expect(kill).not.toHaveBeenCalled();
    process.env["CBQS_CRASH_IN_COMMIT"] = "2";
    const db = openChainDb(tempDir(), { snapshotInterval: 0n });
    genesis(db);
    expect(kill).not.toHaveBeenCalled();
    block(db, 1n, []);
    expect(kill.mock.calls).toEqual([[process.pid, "SIGKILL"]]);
    block(db, 2n, []);
    expect(kill).toHaveBeenCalledTimes(1);
    db.close();
    process.env["CBQS_CRASH_IN_COMMIT"] = "1";
    const first = openChainDb(tempDir(), { snapshotInterval: 0n });
    genesis(first); // the genesis commit is the first
    expect(kill).toHaveBeenCalledTimes(2);
    first.close();
    const memory = openChainDb(undefined);
    genesis(memory);
    expect(kill).toHaveBeenCalledTimes(2); // a memory store has no commit to crash in
  });
});
