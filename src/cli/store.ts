// `--db <dir>` for the commands that keep a chain (node, follow, replay, snapshot, state dump,
// prove-state): the LMDB store in <dir>, or an in-memory one without it. A store that cannot be
// opened (in use by another process, not a cbqs store, damaged) is unusable input: exit 2.
import { echo } from "../bounds.js";
import { hasEnv } from "../../state/lmdb/env.js";
import { openChainDb, StoreError, type StoreOptions } from "../node/store.js";
import { SNAPSHOT_INTERVAL_BLOCKS } from "../node/snapshot.js";
import { UsageError } from "./common.js";

export function openStore(dir: string | undefined, options: StoreOptions = {}): ReturnType<typeof openChainDb> {
  try {
    return openChainDb(dir, options);
  } catch (err) {
    if (err instanceof StoreError) throw new UsageError(`--db ${dir}: ${err.message}`);
    throw err;
  }
}

/** A store that must already hold a chain (read commands never create one). */
export function openExistingStore(dir: string): ReturnType<typeof openChainDb> {
  if (!hasEnv(dir)) throw new UsageError(`--db ${dir}: no store there`);
  const db = openStore(dir, { snapshotInterval: 0n });
  if (db.head() === undefined) {
    db.close();
    throw new UsageError(`--db ${dir}: the store holds no chain yet`);
  }
  return db;
}

export const SNAPSHOT_INTERVAL_HELP = `with --db, write a snapshot (CIP-4 §8.1) to <dir>/snapshots/ every n blocks; 0 = never; when omitted, ${SNAPSHOT_INTERVAL_BLOCKS.toLocaleString("en-US")} (CIP-4 §11 SNAPSHOT_INTERVAL_BLOCKS)`;

/** `--snapshot-interval <n>`: a decimal block count. */
export function snapshotInterval(text: string | undefined): bigint {
  if (text === undefined) return SNAPSHOT_INTERVAL_BLOCKS;
  if (!/^[0-9]{1,19}$/.test(text)) throw new UsageError(`--snapshot-interval must be a block count (got ${echo(text)})`);
  return BigInt(text);
}
