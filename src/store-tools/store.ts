// Which ChainDb a node, a follower or `cbqs replay --db` runs on: in memory without a directory,
// the persistent LMDB ChainDb (state/lmdb/) with one. The one place both are opened.
import type { ChainDb } from "../../state/chain-db/chain-db.js";
import { DEFAULT_RETAIN_BLOCKS, MemoryChainDb } from "../../state/chain-db/memory.js";
import { LmdbChainDb } from "../../state/lmdb/chain-db.js";
import { StoreError } from "../../state/lmdb/env.js";
import { SNAPSHOT_INTERVAL_BLOCKS, snapshotEvery } from "./snapshot.js";

export { DEFAULT_RETAIN_BLOCKS, StoreError };

/**
 * Fault injection for crash tests (scripts/crash-replay.ts, test/harness/crash.test.ts): with
 * CBQS_CRASH_IN_COMMIT=n the process kills itself with SIGKILL inside its n-th block commit,
 * after the block's state is written into the open transaction and before its record is.
 */
function crashHook(): (() => void) | undefined {
  const n = Number(process.env["CBQS_CRASH_IN_COMMIT"]);
  if (!Number.isSafeInteger(n) || n < 1) return undefined;
  let commits = 0;
  return () => {
    if (++commits === n) process.kill(process.pid, "SIGKILL");
  };
}

export interface StoreOptions {
  retainBlocks?: number;
  /** Open an existing store for reading only (the read commands): nothing in its directory changes. */
  readOnly?: boolean;
  /** A persistent store writes a snapshot every this many blocks (default SNAPSHOT_INTERVAL_BLOCKS; 0 = never). */
  snapshotInterval?: bigint;
}

/** The store in `dir` (created if needed), or an in-memory one; StoreError when it cannot be opened. */
export function openChainDb(dir: string | undefined, options: StoreOptions = {}): ChainDb {
  const retainBlocks = options.retainBlocks ?? DEFAULT_RETAIN_BLOCKS;
  if (dir === undefined) return new MemoryChainDb(retainBlocks);
  const duringCommit = crashHook();
  const interval = options.snapshotInterval ?? SNAPSHOT_INTERVAL_BLOCKS;
  return LmdbChainDb.open(dir, {
    retainBlocks,
    ...(options.readOnly === true ? { readOnly: true } : {}),
    ...(duringCommit === undefined ? {} : { duringCommit }),
    ...(interval > 0n ? { afterCommit: snapshotEvery(dir, interval) } : {}),
  });
}
