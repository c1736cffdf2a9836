// The devnet's writes (docs/guides/run-a-devnet.md "Devnet"): transactions, block production in its three
// modes, batches of blocks, snapshots and reverts. They are applied one at a time in arrival
// order — a transaction sent while a 100,000-block batch runs is queued behind it, a revert never
// sees half a batch — while reads go on being answered: a batch or a revert is long work that
// turns the event loop between blocks (src/steps.ts), and every answer is still built from one
// block without yielding (src/node/server.ts). What a write did is returned as values (blocks,
// bytes, bigints); the node's HTTP layer words them (src/node/devnet-answers.ts).
//
// What waits is bounded: transactions by the pool's room (they are counted with it), mining by
// the blocks asked for (per client address and in all, docs/guides/run-a-devnet.md "Mining and time"). A long
// write — a batch, a revert — belongs to its request: when its client goes away it is taken out
// of the queue, or, running, stops between two blocks, so a client that hangs up leaves no work
// behind.
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Steps } from "../steps.js";
import type { BlockRecord } from "../../state/chain-db/chain-db.js";
import type { CbqsNode, MinedBatch, MinedBlock } from "./chain-node.js";
import { InvalidBlockCount, MineQueueFull, ShuttingDown, TooManyMineRequests } from "./errors.js";

/** A transaction queued (POST /tx): its hash and nonce, the head after it, the pool's size, and under auto mining its block. */
export interface Submitted {
  txHash: Uint8Array;
  nonce: bigint;
  head: BlockRecord;
  pending: number;
  mining: MiningMode;
  mined?: MinedBlock;
}

/** What POST /mine produced: one block, or a batch (`blocks` given). */
export type Mined = { block: MinedBlock } | { batch: MinedBatch };

/** A revert done: the snapshot's id, the head it rewound to and the one before, the pool's size. */
export interface Reverted {
  id: bigint;
  block: BlockRecord;
  from: BlockRecord;
  pending: number;
}

/** auto: a block per transaction; interval: a block every --block-time seconds; manual: only POST /mine. */
export type MiningMode = "auto" | "interval" | "manual";
export const MINING_MODES: readonly MiningMode[] = ["auto", "interval", "manual"];

/** POST /mine?blocks=N: at most this many in one call (docs/guides/run-a-devnet.md; about 10 s of work). */
export const MAX_MINE_BLOCKS = 100_000;
/** Blocks of the mining requests waiting or running, in all: four full batches (--mine-queue). */
export const DEFAULT_MINE_QUEUE = 4 * MAX_MINE_BLOCKS;
/** Mining requests waiting or running, per client address: many small ones are counted by number too. */
export const MAX_CLIENT_MINE_REQUESTS = 16;
/** Milliseconds of work between two turns of the event loop (as src/steps.ts). */
const YIELD_MS = 25;

type Logger = (entry: Record<string, unknown>) => void;

export interface MineRequest {
  height?: bigint;
  timestamp?: bigint;
  /** Given: the batch answer (MinedBatch), even for 1. Absent: one block, answered as before. */
  blocks?: number;
}

/** Who asked for a write: the client address its mining is counted under, and a signal aborted when it has gone. */
export interface Requester {
  client: string;
  gone?: AbortSignal;
}

export interface MiningLimits {
  /** Blocks of the mining requests waiting or running, in all (503 mine_queue_full beyond). */
  queueBlocks: number;
  /** The same, per client address (429 too_many_mine_requests beyond), at most queueBlocks; also the largest batch this node takes. */
  clientBlocks: number;
}

/** A client's share of a bound when none is given: a quarter (at least 1), as the per-client rate limit's (src/node/rate-limit.ts). */
/** One client's share of a node-wide bound: a quarter, so three clients at theirs still leave a quarter to everyone else. */
export const CLIENT_SHARE = 4;

export const clientShare = (total: number): number => Math.max(1, Math.floor(total / CLIENT_SHARE));

export const DEFAULT_MINING_LIMITS: MiningLimits = { queueBlocks: DEFAULT_MINE_QUEUE, clientBlocks: clientShare(DEFAULT_MINE_QUEUE) };

/** A write given up because its client went away (nobody is left to answer). */
export class WriteCancelled extends Error {
  override name = "WriteCancelled";
  constructor() {
    super("the client went away");
  }
}

const shuttingDown = () => new ShuttingDown("the node is stopping");

export class Devnet {
  /** Writes waiting for their turn, oldest first; each entry starts its write. */
  private readonly waiting: Array<() => void> = [];
  private running = false;
  private stopping = false;
  /** Transactions accepted and waiting for their turn: the pool's room counts them. */
  private readonly queuedTxs = { txs: 0, bytes: 0 };
  /** Blocks of the mining requests waiting or running: in all, and by client address (with their number). */
  private miningBlocks = 0;
  private readonly miningBy = new Map<string, { blocks: number; requests: number }>();

  constructor(
    readonly node: CbqsNode,
    readonly mode: MiningMode,
    private readonly log: Logger,
    readonly limits: MiningLimits = DEFAULT_MINING_LIMITS,
  ) {}

  /** No write running or waiting (a write waits only while another runs: each one ending starts the next): an interval tick may produce its block now. */
  get idle(): boolean {
    return !this.running;
  }

  /** Blocks of the mining requests waiting or running. */
  get queuedBlocks(): number {
    return this.miningBlocks;
  }

  /** Ends long writes after the block in progress (shutdown); later writes are refused. */
  stop(): void {
    this.stopping = true;
  }

  /**
   * Runs `write` once every write before it has ended, however it ended. `gone` aborted while it
   * waits takes it out of the queue (WriteCancelled); once it runs, the write checks it itself.
   */
  private exclusive<T>(write: () => T | Promise<T>, gone?: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (gone?.aborted === true) return reject(new WriteCancelled());
      const start = (): void => {
        gone?.removeEventListener("abort", cancel);
        this.running = true;
        void (async () => {
          if (this.stopping) throw shuttingDown();
          return write();
        })()
          .then(resolve, reject)
          .finally(() => {
            this.running = false;
            this.waiting.shift()?.();
          });
      };
      // Called only while it waits: its start removes this listener, and a signal aborts once.
      const cancel = (): void => {
        this.waiting.splice(this.waiting.indexOf(start), 1);
        reject(new WriteCancelled());
      };
      gone?.addEventListener("abort", cancel);
      this.waiting.push(start);
      if (!this.running) this.waiting.shift()!();
    });
  }

  /**
   * Runs long work unit by unit, turning the event loop every YIELD_MS so reads are answered
   * meanwhile. `abandon` (checked between two units) returning an error ends it there, undone
   * (its generator's finally blocks run; a revert never swaps its half-built chain in), with that
   * error; work that keeps what it did checks for its end itself (a batch's blocks stay).
   */
  private async sliced<T>(steps: Steps<T>, abandon: () => Error | undefined = () => undefined): Promise<T> {
    let last = performance.now();
    for (;;) {
      const err = abandon();
      if (err !== undefined) {
        steps.return(undefined as T);
        throw err;
      }
      const r = steps.next();
      if (r.done === true) return r.value;
      if (performance.now() - last >= YIELD_MS) {
        await nextTurn();
        last = performance.now();
      }
    }
  }

  /** POST /tx: queued; under auto mining its block is produced at once and returned with it. */
  submit(raw: Uint8Array): Promise<Submitted> {
    try {
      // Refused now if it would not fit with the transactions already waiting for their turn.
      this.node.checkRoom(raw.length, this.queuedTxs);
    } catch (err) {
      return Promise.reject(err);
    }
    this.queuedTxs.txs++;
    this.queuedTxs.bytes += raw.length;
    let queued = true;
    // Uncounted once, when its turn comes (it then goes into the pool) or when it is refused before.
    const uncount = () => {
      if (!queued) return;
      queued = false;
      this.queuedTxs.txs--;
      this.queuedTxs.bytes -= raw.length;
    };
    const run = this.exclusive(() => {
      uncount();
      const sent = this.node.submit(raw);
      if (this.mode !== "auto") return { ...sent, head: this.node.head(), pending: this.node.pending, mining: this.mode };
      const mined = this.node.mine();
      return { ...sent, head: mined.block, pending: this.node.pending, mining: this.mode, mined };
    });
    run.then(uncount, uncount);
    return run;
  }

  /**
   * POST /mine: one block (the answer as ever), or a batch of `blocks`. From a `requester`, it is
   * counted against the mining bounds while it waits or runs, and ends when its client goes: taken
   * out of the queue, or, running, after the block in progress (the blocks produced stay).
   */
  mine(request: MineRequest, requester?: Requester): Promise<Mined> {
    let release: () => void = () => {};
    try {
      if (requester !== undefined) release = this.admit(requester.client, request.blocks ?? 1);
    } catch (err) {
      return Promise.reject(err);
    }
    const gone = requester?.gone;
    const run = this.exclusive(async () => {
      if (request.blocks === undefined) return { block: this.node.mine(request.height, request.timestamp) };
      const batch = await this.sliced(this.node.mineSteps(request.blocks, request.height, request.timestamp, () => this.stopping || gone?.aborted === true));
      const cancelled = gone?.aborted === true && batch.blocks < request.blocks;
      this.log({ level: "info", msg: "blocks", from: batch.first.height.toString(), to: batch.last.height.toString(), blocks: batch.blocks, txs: batch.txs, ...(cancelled ? { cancelled: "the client went away" } : {}) });
      if (cancelled) throw new WriteCancelled();
      return { batch };
    }, gone);
    run.then(release, release);
    return run;
  }

  /** Counts a mining request of `blocks` (a revert: 0) from `client`, or refuses it; returns its release. */
  private admit(client: string, blocks: number): () => void {
    const { queueBlocks, clientBlocks } = this.limits;
    const largest = Math.min(MAX_MINE_BLOCKS, clientBlocks, queueBlocks);
    if (blocks > largest) throw new InvalidBlockCount(`blocks must be from 1 to ${largest} (this node's --client-mine-queue)`);
    if (this.miningBlocks + blocks > queueBlocks) {
      throw new MineQueueFull(`the node has ${this.miningBlocks} blocks waiting or being produced and takes at most ${queueBlocks} (--mine-queue)`);
    }
    const own = this.miningBy.get(client) ?? { blocks: 0, requests: 0 };
    if (own.requests >= MAX_CLIENT_MINE_REQUESTS || own.blocks + blocks > clientBlocks) {
      throw new TooManyMineRequests(
        `one client may have at most ${MAX_CLIENT_MINE_REQUESTS} mining requests and ${clientBlocks} blocks waiting or being produced (--client-mine-queue); it has ${own.requests} for ${own.blocks} blocks`,
      );
    }
    own.blocks += blocks;
    own.requests++;
    this.miningBy.set(client, own);
    this.miningBlocks += blocks;
    return () => {
      own.blocks -= blocks;
      own.requests--;
      if (own.requests === 0) this.miningBy.delete(client);
      this.miningBlocks -= blocks;
    };
  }

  snapshot(): Promise<{ id: bigint; block: BlockRecord; pending: number }> {
    return this.exclusive(() => {
      const s = this.node.snapshot();
      this.log({ level: "info", msg: "snapshot", id: s.id.toString(), height: s.block.height.toString() });
      return s;
    });
  }

  /**
   * POST /devnet/revert; ends, the chain as it was, when the node stops or its client goes. From a
   * `requester`, it counts as one of the client's MAX_CLIENT_MINE_REQUESTS while it waits or runs
   * (it replays the chain, long work as a batch is): a client cannot queue reverts without bound.
   */
  revert(id: bigint, requester?: Requester): Promise<Reverted> {
    let release: () => void = () => {};
    try {
      if (requester !== undefined) release = this.admit(requester.client, 0);
    } catch (err) {
      return Promise.reject(err);
    }
    const gone = requester?.gone;
    const run = this.exclusive(async () => {
      const abandon = () =>
        this.stopping
          ? new ShuttingDown("the node is stopping; the chain is as it was before this request")
          : gone?.aborted === true
            ? new WriteCancelled()
            : undefined;
      const r = await this.sliced(this.node.revertSteps(id), abandon);
      this.log({ level: "info", msg: "reverted", id: id.toString(), height: r.block.height.toString(), from: r.from.height.toString() });
      return { id, ...r };
    }, gone);
    run.then(release, release);
    return run;
  }
}
