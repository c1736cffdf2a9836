// `cbqs replay <fixture> --db <dir>`: replay that survives. Every verified block is committed to
// a ChainDb (one atomic commit per block); run again on the same store, it first compares every
// stored block with the fixture's, field by field (src/chain-node/stored-chain.ts: a difference is a
// mismatch and nothing is touched), then resumes after the last committed block. A block that
// does not verify is never committed.
// Between blocks it yields to the event loop, so a SIGINT/SIGTERM stops it after the block in
// progress is committed.
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Fixture } from "../harness/fixture.js";
import { Replay, type Mismatch, type ReplayProgress } from "../harness/replay.js";
import type { ChainDb, PrunedUndo } from "../../state/chain-db/chain-db.js";
import { executedRecord, genesisRecord } from "../chain-node/chain-node.js";
import { compareStoredChain, type StoredComparison } from "../chain-node/stored-chain.js";

export { StoredChainError } from "../chain-node/stored-chain.js";

export interface DbReplayOptions {
  toHeight?: bigint;
  /** Checked between blocks: the block in progress is committed first. */
  signal?: AbortSignal;
  onBlock?: (p: ReplayProgress) => void;
}

export interface DbReplayOutcome {
  /** The store's head before this run (null: the store was empty). */
  resumedAfter: bigint | null;
  /** Blocks and transactions executed by this run. */
  blocks: number;
  txs: number;
  mismatch: Mismatch | null;
  stopped: boolean;
  /** The store's head after this run (null: still empty, genesis did not verify). */
  head: bigint | null;
  /** A resumed run: what the comparison of the stored chain with the fixture covered. */
  compared: StoredComparison | null;
  /** Undo rows of blocks below the retention window removed on opening (a store kept with a larger --retain-blocks). */
  pruned: PrunedUndo | null;
}

/** Replays `fixture` into `db`, from genesis or after the store's head. */
export async function replayIntoDb(fixture: Fixture, db: ChainDb, options: DbReplayOptions = {}): Promise<DbReplayOutcome> {
  const toHeight = options.toHeight;
  const stored = db.head();
  let replay: Replay;
  let next: number;
  let compared: StoredComparison | null = null;
  let pruned: PrunedUndo | null = null;
  if (stored === undefined) {
    const started = Replay.start(fixture, db.state);
    if (started.mismatch !== null) return { resumedAfter: null, blocks: 0, txs: 0, mismatch: started.mismatch, stopped: false, head: null, compared, pruned };
    const g = fixture.genesis;
    db.commitGenesis(genesisRecord(g.source, g.chain_instance_id, g.config.timestamp, started.replay.chain.genesisStateRoot));
    replay = started.replay;
    next = 0;
  } else {
    compared = compareStoredChain(fixture, db, toHeight);
    if (compared.mismatch !== null) return { resumedAfter: stored.height, blocks: 0, txs: 0, mismatch: compared.mismatch, stopped: false, head: stored.height, compared, pruned };
    // Only once the stored chain is known to be the fixture's is anything written.
    pruned = db.pruneUndo();
    next = compared.next;
    replay = Replay.resume(fixture, db.state, stored.block_hash);
  }
  const blocks = fixture.blocks.slice(next).filter((b) => toHeight === undefined || b.height <= toHeight);
  const lastHeight = blocks.length === 0 ? db.head()!.height : blocks[blocks.length - 1]!.height;
  let txs = 0;
  let done = 0;
  for (; done < blocks.length; done++) {
    if (options.signal?.aborted) break;
    const b = blocks[done]!;
    const parent = db.head()!.block_hash;
    const { executed, mismatch } = replay.block(next + done);
    if (mismatch !== null) return { resumedAfter: stored?.height ?? null, blocks: done + 1, txs: txs + b.transactions.length, mismatch, stopped: false, head: db.head()!.height, compared, pruned };
    db.commitBlock(executedRecord(b.height, b.timestamp, parent, b.transactions, executed));
    txs += b.transactions.length;
    options.onBlock?.({ blocksDone: done + 1, blocksTotal: blocks.length, txsDone: txs, height: b.height, lastHeight });
    await nextTurn();
  }
  return { resumedAfter: stored?.height ?? null, blocks: done, txs, mismatch: null, stopped: done < blocks.length, head: db.head()!.height, compared, pruned };
}

