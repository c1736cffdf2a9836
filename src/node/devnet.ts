// The devnet's writes (docs/node.md "Devnet"): transactions, block production in its three
// modes, batches of blocks, snapshots and reverts. They are applied one at a time in arrival
// order — a transaction sent while a 100,000-block batch runs is queued behind it, a revert never
// sees half a batch — while reads go on being answered: a batch or a revert is long work that
// turns the event loop between blocks (src/steps.ts), and every answer is still built from one
// block without yielding (src/node/server.ts).
import { setImmediate as nextTurn } from "node:timers/promises";
import { toHex } from "../bytes.js";
import { receiptJson } from "../chain/receipts.js";
import type { Steps } from "../steps.js";
import { CbqsNode, type MinedBatch, type MinedBlock } from "./chain-node.js";
import { RequestError } from "./errors.js";
import { readPointJson } from "./json.js";

/** auto: a block per transaction; interval: a block every --block-time seconds; manual: only POST /mine. */
export type MiningMode = "auto" | "interval" | "manual";
export const MINING_MODES: readonly MiningMode[] = ["auto", "interval", "manual"];

/** POST /mine?blocks=N: at most this many in one call (docs/node.md; about 10 s of work). */
export const MAX_MINE_BLOCKS = 100_000;
/** Milliseconds of work between two turns of the event loop (as src/steps.ts). */
const YIELD_MS = 25;

type Logger = (entry: Record<string, unknown>) => void;

export interface MineRequest {
  height?: bigint;
  timestamp?: bigint;
  /** Given: the batch answer (MinedBatch), even for 1. Absent: one block, answered as before. */
  blocks?: number;
}

export class Devnet {
  /** The last write queued: each write starts when the one before it has ended, however it ended. */
  private tail: Promise<unknown> = Promise.resolve();
  private queued = 0;
  private stopping = false;

  constructor(
    readonly node: CbqsNode,
    readonly mode: MiningMode,
    private readonly log: Logger,
  ) {}

  /** No write running or waiting: an interval tick may produce its block now. */
  get idle(): boolean {
    return this.queued === 0;
  }

  /** Ends long writes after the block in progress (shutdown); later writes are refused. */
  stop(): void {
    this.stopping = true;
  }

  private exclusive<T>(write: () => T | Promise<T>): Promise<T> {
    this.queued++;
    const run = this.tail.then(() => {
      if (this.stopping) throw new RequestError(503, "shutting_down", "the node is stopping");
      return write();
    });
    this.tail = run.then(
      () => this.queued--,
      () => this.queued--,
    );
    return run;
  }

  /**
   * Runs long work unit by unit, turning the event loop every YIELD_MS so reads are answered
   * meanwhile. `abandonOnStop`: a shutdown ends it between two units, undone (its generator's
   * finally blocks run; a revert never swaps its half-built chain in); otherwise the work checks
   * for the shutdown itself (a batch answers with the blocks it produced).
   */
  private async sliced<T>(steps: Steps<T>, abandonOnStop = false): Promise<T> {
    let last = performance.now();
    for (;;) {
      if (abandonOnStop && this.stopping) {
        steps.return(undefined as T);
        throw new RequestError(503, "shutting_down", "the node is stopping; the chain is as it was before this request");
      }
      const r = steps.next();
      if (r.done === true) return r.value;
      if (performance.now() - last >= YIELD_MS) {
        await nextTurn();
        last = performance.now();
      }
    }
  }

  /** POST /tx: queued; under auto mining its block is produced at once and the answer carries it. */
  submit(raw: Uint8Array): Promise<Record<string, unknown>> {
    return this.exclusive(() => {
      const sent = this.node.submit(raw);
      if (this.mode !== "auto") return { ...readPointJson(this.node.head()), ...sent, pending: this.node.pending, mining: this.mode };
      const mined = this.node.mine();
      return { ...readPointJson(mined.block), ...sent, pending: this.node.pending, mining: this.mode, mined: CbqsNode.minedJson(mined) };
    });
  }

  /** POST /mine: one block (the answer as ever), or a batch of `blocks`. */
  mine(request: MineRequest): Promise<Record<string, unknown>> {
    return this.exclusive(async () => {
      if (request.blocks === undefined) return CbqsNode.minedJson(this.node.mine(request.height, request.timestamp));
      const batch = await this.sliced(this.node.mineSteps(request.blocks, request.height, request.timestamp, () => this.stopping));
      this.log({ level: "info", msg: "blocks", from: batch.first.height.toString(), to: batch.last.height.toString(), blocks: batch.blocks, txs: batch.txs });
      return batchJson(batch);
    });
  }

  snapshot(): Promise<Record<string, unknown>> {
    return this.exclusive(() => {
      const s = this.node.snapshot();
      this.log({ level: "info", msg: "snapshot", id: s.id.toString(), height: s.block.height.toString() });
      return { ...readPointJson(s.block), id: s.id.toString(), pending: s.pending };
    });
  }

  revert(id: bigint): Promise<Record<string, unknown>> {
    return this.exclusive(async () => {
      const r = await this.sliced(this.node.revertSteps(id), true);
      this.log({ level: "info", msg: "reverted", id: id.toString(), height: r.block.height.toString(), from: r.from.height.toString() });
      return { ...readPointJson(r.block), id: id.toString(), reverted_from: { height: r.from.height.toString(), block_hash: toHex(r.from.block_hash) }, pending: r.pending };
    });
  }
}

/** A batch as POST /mine?blocks=N answers it: the last block's read point, the range, and every receipt and drop of the batch. */
function batchJson(b: MinedBatch): Record<string, unknown> {
  const each = (m: MinedBlock) => m.block.receipts.map((r, i) => ({ height: m.block.height.toString(), ...receiptJson(r, m.messages[i]) }));
  return {
    ...readPointJson(b.last),
    timestamp: b.last.timestamp.toString(),
    effective_rent_height: b.last.effective_rent_height.toString(),
    first: { height: b.first.height.toString(), block_hash: toHex(b.first.block_hash), timestamp: b.first.timestamp.toString() },
    blocks: b.blocks,
    txs: b.txs,
    receipts: b.busy.flatMap(each),
    dropped: b.busy.flatMap((m) => m.dropped.map((d) => ({ height: m.block.height.toString(), ...d }))),
  };
}
