// `cbqs replay <fixture> --db <dir>`: replay that survives. Every verified block is committed to
// a ChainDb (one atomic commit per block); run again on the same store, it first checks that the
// stored chain is this fixture's (same genesis, the same block at every stored height), then
// resumes after the last committed block. A block that does not verify is never committed.
// Between blocks it yields to the event loop, so a SIGINT/SIGTERM stops it after the block in
// progress is committed.
import { setImmediate as nextTurn } from "node:timers/promises";
import { bytesEqual, toHex } from "../bytes.js";
import type { Fixture } from "../harness/fixture.js";
import { Replay, type Mismatch, type ReplayProgress } from "../harness/replay.js";
import type { ChainDb } from "../../state/chain-db.js";
import { executedRecord, genesisRecord } from "./chain-node.js";

/** The store holds a chain that is not the fixture's: exit 2, nothing touched. */
export class StoredChainError extends Error {
  override name = "StoredChainError";
}

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
}

const PAGE = 1_000;

/** Replays `fixture` into `db`, from genesis or after the store's head. */
export async function replayIntoDb(fixture: Fixture, db: ChainDb, options: DbReplayOptions = {}): Promise<DbReplayOutcome> {
  const toHeight = options.toHeight;
  const stored = db.head();
  let replay: Replay;
  let next: number;
  if (stored === undefined) {
    const started = Replay.start(fixture, db.state);
    if (started.mismatch !== null) return { resumedAfter: null, blocks: 0, txs: 0, mismatch: started.mismatch, stopped: false, head: null };
    const g = fixture.genesis;
    db.commitGenesis(genesisRecord(g.source, g.chain_instance_id, g.config.timestamp, started.replay.chain.genesisStateRoot));
    replay = started.replay;
    next = 0;
  } else {
    next = checkStoredChain(fixture, db);
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
    if (mismatch !== null) return { resumedAfter: stored?.height ?? null, blocks: done + 1, txs: txs + b.transactions.length, mismatch, stopped: false, head: db.head()!.height };
    db.commitBlock(executedRecord(b.height, b.timestamp, parent, b.transactions, executed));
    txs += b.transactions.length;
    options.onBlock?.({ blocksDone: done + 1, blocksTotal: blocks.length, txsDone: txs, height: b.height, lastHeight });
    await nextTurn();
  }
  return { resumedAfter: stored?.height ?? null, blocks: done, txs, mismatch: null, stopped: done < blocks.length, head: db.head()!.height };
}

/**
 * Throws StoredChainError unless every block the store holds is the fixture's block at that
 * height (same genesis source, same block hash: a block hash commits to its parent, its state
 * root and its roots). Returns the index of the first fixture block above the store's head.
 */
function checkStoredChain(fixture: Fixture, db: ChainDb): number {
  const genesis = db.genesis()!;
  if (!bytesEqual(genesis.source, fixture.genesis.source)) {
    throw new StoredChainError(`the store holds another chain (chain_instance_id ${toHex(genesis.chain_instance_id)}, the fixture's is ${toHex(fixture.genesis.chain_instance_id)})`);
  }
  if (!bytesEqual(genesis.block.state_root, fixture.genesis.state_root)) {
    throw new StoredChainError(`the store's genesis state_root ${toHex(genesis.block.state_root)} is not the fixture's ($.genesis.state_root)`);
  }
  const index = new Map(fixture.blocks.map((b, i) => [b.height, i]));
  const head = db.head()!.height;
  for (let from = 1n; from <= head; ) {
    const page = db.blocks({ from, to: head, order: "asc", limit: PAGE });
    for (const b of page) {
      const i = index.get(b.height);
      if (i === undefined) throw new StoredChainError(`the store holds block ${b.height}, which the fixture does not have`);
      if (!bytesEqual(fixture.blocks[i]!.block_hash, b.block_hash)) {
        throw new StoredChainError(`the store's chain differs from the fixture at block ${b.height} ($.blocks[${i}].block_hash)`);
      }
    }
    if (page.length < PAGE) break;
    from = page[page.length - 1]!.height + 1n;
  }
  const after = fixture.blocks.findIndex((b) => b.height > head);
  return after === -1 ? fixture.blocks.length : after;
}
