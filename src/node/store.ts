// Which ChainDb a node or follower runs on: the one place to swap in the persistent (LMDB)
// implementation of state/chain-db.ts. Until it exists, every store is in memory (temporary:
// `--db` is accepted and reported, and nothing is written to it).
import type { ChainDb } from "../../state/chain-db.js";
import { DEFAULT_RETAIN_BLOCKS, MemoryChainDb } from "../../state/chain-db-memory.js";

export { DEFAULT_RETAIN_BLOCKS };

/** True while `--db` cannot persist anything (the CLI says so on stderr). */
export const DB_IS_MEMORY_ONLY = true;

export function openChainDb(_dir: string | undefined, retainBlocks: number = DEFAULT_RETAIN_BLOCKS): ChainDb {
  return new MemoryChainDb(retainBlocks);
}
