// `--snapshot-interval` of `replay --db` and `node`: its help and its parsing, apart from
// src/cli/store.ts (which loads lmdb) so that declaring the option, as every call of those
// commands and their --help does, loads no store (docs/engineering/performance.md "Start-up").
import { echo } from "../bounds.js";
import { SNAPSHOT_INTERVAL_BLOCKS } from "../store-tools/snapshot-interval.js";
import { UsageError } from "./common.js";
import { thousands } from "../format.js";

export const SNAPSHOT_INTERVAL_HELP = `with --db, write a snapshot (CIP-4 §8.1) to <dir>/snapshots/ every n blocks; 0 = never; when omitted, ${thousands(SNAPSHOT_INTERVAL_BLOCKS)} (CIP-4 §11 SNAPSHOT_INTERVAL_BLOCKS)`;

/** `--snapshot-interval <n>`: a decimal block count. */
export function snapshotInterval(text: string | undefined): bigint {
  if (text === undefined) return SNAPSHOT_INTERVAL_BLOCKS;
  if (!/^[0-9]{1,19}$/.test(text)) throw new UsageError(`--snapshot-interval must be a block count (got ${echo(text)})`);
  return BigInt(text);
}
