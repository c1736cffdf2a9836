// `cbqs fuzz`: differential fuzzing of a t8n against ours (docs/reference/fuzzer.md). Run i of seed S
// generates a chain (src/fuzz/plan.ts), feeds it block by block to our t8n in-process and to the
// implementation under test, and compares (src/fuzz/compare.ts). A per-call t8n gets each block
// with OUR post-state of the block before as its pre-state; a server keeps its own in a session,
// which equals ours for as long as nothing diverged. Either way each difference is the target's
// error on that one block. The first divergence is shrunk (src/fuzz/shrink.ts) and the run
// stops there. Campaigns run on several lanes at once (src/fuzz/campaign.ts); this module is
// one lane's work.
import { createHash } from "node:crypto";
import type { Fixture } from "../harness/fixture.js";
import { ChainBuilder, type BuiltBlock } from "./build.js";
import { Census, type CensusJson } from "./census.js";
import { firstDifference, oursResult, resultDiffers, type CompareOptions } from "./compare.js";
import { chainSize, generateChain, type FuzzChain } from "./plan.js";
import { ServerDied } from "../target/server-target.js";
import { shrink } from "./shrink.js";
import { inputTexts, perCall, TargetError, type ChainTarget, type T8nTarget, type TargetAnswer, type TargetOutput } from "../target/target.js";

/** One block of a chain in words, for the report: each input transaction and what our t8n made of it. */
export interface BlockSummary {
  height: bigint;
  txs: Array<{ kind: string; outcome: string }>;
}

export interface Divergence {
  /** Position of the diverging block in the plan. */
  index: number;
  /** The first difference in words, e.g. "block 12 tx 2 SettleStreamRent: t8n result: receipts[2].cycles expected … got …". */
  text: string;
  block: BuiltBlock;
  /** Our result as compared (its state_root of the target's kind, compare.ts oursResult). */
  ours: Record<string, unknown>;
  theirs: TargetOutput;
  /** From genesis through the diverging block (the transactions our t8n included). */
  fixture: Fixture;
  summary: BlockSummary[];
}

export interface Finding {
  seed: number;
  run: number;
  original: { blocks: number; txs: number };
  shrunk: { blocks: number; txs: number };
  candidates: number;
  plan: FuzzChain;
  divergence: Divergence;
}

/** The target failed (unusable input): with the block's inputs for the report, when a block was under way. */
export class TargetFailure extends Error {
  override name = "TargetFailure";
  /** Set by the run loop. */
  run = -1;
  constructor(
    message: string,
    readonly block: BuiltBlock | null,
    readonly stderr: string,
    /** A server that exited or missed a deadline (a new one may do better), not one that answered wrongly. */
    readonly died = false,
  ) {
    super(message);
  }
}

export interface FuzzOptions {
  seed: number;
  /** Run indices firstRun … firstRun + runs − 1. */
  firstRun: number;
  runs: number;
  blocks: number;
  compare: CompareOptions;
  /** Candidate chains the shrinker may execute. */
  shrinkBudget: number;
  onProgress?: (p: FuzzProgress) => void;
  /** Polled between blocks: SIGINT/SIGTERM. */
  stopped?: () => boolean;
}

export interface FuzzProgress {
  phase: "fuzz" | "shrink";
  run: number;
  runsDone: number;
  blocks: number;
  txs: number;
  /** While shrinking: candidates executed and the best chain's size. */
  candidates?: number;
  size?: { blocks: number; txs: number };
}

export interface FuzzResult {
  runsDone: number;
  blocks: number;
  txs: number;
  finding: Finding | null;
  interrupted: boolean;
}

export const SHRINK_BUDGET = 400;

/** Executes plans against a target; a per-call target's answers are reused for identical block inputs. */
class Evaluator {
  /** The command's outputs by input, within one run: shrink candidates share prefixes with the chain and with each other. */
  private memo = new Map<string, TargetAnswer>();

  constructor(
    private readonly target: ChainTarget,
    private readonly compare: CompareOptions,
    private readonly stopped: () => boolean,
  ) {}

  /** A new run: forget the last one's outputs. */
  forget(): void {
    this.memo.clear();
  }

  /** The first divergence of `plan`, or null (also when interrupted: check `stopped`); `count` sees each block executed. */
  async evaluate(plan: FuzzChain, count: (block: BuiltBlock) => void = () => undefined): Promise<Divergence | null> {
    const builder = new ChainBuilder(plan);
    const summary: BlockSummary[] = [];
    if (!this.target.memoizable) {
      const { alloc, height } = builder.genesisState();
      if ((await this.attempt(null, () => this.target.startChain(alloc, height))) === STOPPED) return null;
    }
    /** A block built, with the fixture and summary as they were right after it. */
    const step = () => {
      const block = builder.build();
      summary.push(summarize(block));
      return { block, fixture: { ...builder.fixture, blocks: [...builder.fixture.blocks] }, summary: [...summary] };
    };
    let current = builder.done || this.stopped() ? null : step();
    while (current !== null) {
      const { block } = current;
      const asked = this.answer(block);
      asked.catch(() => undefined); // awaited below, after the next block is built
      // The next block is built while the target works on this one (it is sent only once this one agrees).
      const ahead = builder.done || this.stopped() ? null : step();
      const answer = await this.attempt(block, () => asked);
      if (answer === STOPPED) return null;
      count(block);
      const theirs = await this.attempt(block, () => this.fullOutput(block, answer));
      if (theirs === STOPPED) return null;
      const text = theirs === null ? null : firstDifference(block, theirs, this.compare, this.target.stateRoot);
      if (text !== null) return { index: block.index, text, block, ours: oursResult(block, this.target.stateRoot), theirs: theirs!, fixture: current.fixture, summary: current.summary };
      current = this.stopped() ? null : ahead;
    }
    return null;
  }

  /**
   * Their full output when it is needed: always when it came with the answer (a per-call t8n);
   * from a server only when the cheap check (result and roots) differs or no state root is
   * compared. null: nothing to compare beyond the result, which agrees.
   */
  private async fullOutput(block: BuiltBlock, answer: TargetAnswer): Promise<TargetOutput | null> {
    if (answer.output !== undefined) return answer.output;
    if (this.compare.stateRoot && !resultDiffers(block, answer.result, this.compare, this.target.stateRoot)) return null;
    return this.target.postState(block.inputs, answer);
  }

  private async answer(block: BuiltBlock): Promise<TargetAnswer> {
    if (!this.target.memoizable) return this.target.apply(block.inputs);
    const key = memoKey(block);
    const known = this.memo.get(key);
    if (known !== undefined) return known;
    const out = await this.target.apply(block.inputs);
    this.memo.set(key, out);
    return out;
  }

  /** The target's work; its failure is a TargetFailure naming the block (STOPPED when a signal came meanwhile). */
  private async attempt<T>(block: BuiltBlock | null, work: () => Promise<T>): Promise<T | typeof STOPPED> {
    try {
      return await work();
    } catch (err) {
      if (this.stopped()) return STOPPED;
      if (err instanceof TargetError) throw new TargetFailure(err.message, block, err.stderr, err instanceof ServerDied);
      throw err;
    }
  }
}

const STOPPED = Symbol("stopped");

function memoKey(block: BuiltBlock): string {
  const t = inputTexts(block.inputs);
  return createHash("sha256").update(t.alloc).update(t.txs).update(t.env).digest("hex");
}

function summarize(block: BuiltBlock): BlockSummary {
  const result = block.result as { receipts: Array<{ index: string; status: string; error: { name: string } | null }>; rejected: Array<{ index: string }> };
  const outcome = new Map<number, string>();
  for (const r of result.receipts) outcome.set(Number(r.index), r.error === null ? r.status : `rejected ${r.error.name}`);
  for (const r of result.rejected) outcome.set(Number(r.index), "left out");
  return { height: block.height, txs: block.kinds.map((kind, i) => ({ kind, outcome: outcome.get(i) ?? "?" })) };
}

/** What one run did: the blocks and transactions it executed, whether it diverged, servers that died on the way. */
export interface RunOutcome {
  run: number;
  blocks: number;
  txs: number;
  divergent: boolean;
  /** Stopped (SIGINT/SIGTERM) before the run ended: not counted. */
  stopped: boolean;
  /** One line per server that died during the run (then a new one ran it again). */
  restarts: string[];
  /** What the run's executed blocks reached (one run). */
  census: CensusJson;
}

export interface LaneSettings {
  seed: number;
  blocks: number;
  compare: CompareOptions;
  shrinkBudget: number;
  stopped: () => boolean;
}

/** One lane of a campaign: runs chains on its own target, and shrinks the divergence it found. */
export class FuzzLane {
  private readonly evaluator: Evaluator;
  /** The divergence of the run that diverged on this lane, until it is shrunk or dropped. */
  private found: { run: number; plan: FuzzChain; divergence: Divergence } | null = null;

  constructor(
    readonly target: ChainTarget,
    private readonly s: LaneSettings,
  ) {
    this.evaluator = new Evaluator(target, s.compare, s.stopped);
  }

  /** Runs chain `run`. A server that dies is reported and replaced, and the run starts over, once. */
  async run(run: number): Promise<RunOutcome> {
    const plan = generateChain(this.s.seed, run, this.s.blocks);
    const restarts: string[] = [];
    for (;;) {
      this.evaluator.forget();
      let blocks = 0;
      let txs = 0;
      const census = new Census();
      try {
        const divergence = await this.evaluator.evaluate(plan, (block) => {
          blocks++;
          txs += block.inputs.txs.length;
          census.add(block);
        });
        if (divergence !== null) this.found = { run, plan, divergence };
        census.endRun();
        return { run, blocks, txs, divergent: divergence !== null, stopped: divergence === null && this.s.stopped(), restarts, census: census.toJSON() };
      } catch (err) {
        if (err instanceof TargetFailure) {
          err.run = run;
          const where = err.block === null ? "opening its session" : `block ${err.block.height}`;
          if (err.died && restarts.length === 0 && !this.s.stopped()) {
            const last = "lastRequest" in this.target ? ` (last request: ${String(this.target.lastRequest)})` : "";
            restarts.push(`the t8n server died during run ${run} at ${where}${last}: ${err.message}; a new one runs the run again`);
            continue;
          }
        } else if (err instanceof Error) err.message = `seed ${this.s.seed} run ${run}: ${err.message}`; // our own failure: say where
        throw err;
      }
    }
  }

  /** Drops the divergence this lane holds (a lower run diverged too). */
  drop(): void {
    this.found = null;
  }

  /** Shrinks the divergence of `run` (found by run()); a candidate the target fails on does not count. */
  async shrink(run: number, onProgress?: (candidates: number, size: { blocks: number; txs: number }) => void): Promise<Finding> {
    const found = this.found;
    if (found === null || found.run !== run) throw new Error(`no divergence of run ${run} on this lane`);
    this.found = null;
    const test = (p: FuzzChain) =>
      this.evaluator.evaluate(p).catch((err: unknown) => {
        if (err instanceof TargetFailure) return null;
        throw err;
      });
    const shrunk = await shrink({ plan: found.plan, divergence: found.divergence }, test, {
      budget: this.s.shrinkBudget,
      stopped: this.s.stopped,
      onCandidate: (best, candidates) => onProgress?.(candidates, chainSize(best)),
    });
    return {
      seed: this.s.seed,
      run,
      original: chainSize(found.plan),
      shrunk: chainSize(shrunk.plan),
      candidates: shrunk.candidates,
      plan: shrunk.plan,
      divergence: shrunk.divergence,
    };
  }
}

/** One campaign on one lane in this process (scripts and tests; the CLI runs campaign.ts's lanes). */
export async function fuzz(target: T8nTarget | ChainTarget, options: FuzzOptions): Promise<FuzzResult> {
  const stopped = options.stopped ?? (() => false);
  const lane = new FuzzLane("run" in target ? perCall(target) : target, { ...options, stopped });
  let runsDone = 0;
  let blocks = 0;
  let txs = 0;
  for (let run = options.firstRun; run < options.firstRun + options.runs && !stopped(); run++) {
    const o = await lane.run(run);
    if (o.stopped) break;
    runsDone++;
    blocks += o.blocks;
    txs += o.txs;
    if (!o.divergent) {
      options.onProgress?.({ phase: "fuzz", run, runsDone, blocks, txs });
      continue;
    }
    const finding = await lane.shrink(run, (candidates, size) => options.onProgress?.({ phase: "shrink", run, runsDone, blocks, txs, candidates, size }));
    return { runsDone, blocks, txs, finding, interrupted: stopped() };
  }
  return { runsDone, blocks, txs, finding: null, interrupted: stopped() };
}
