// `cbqs fuzz`: differential fuzzing of a t8n command against ours (docs/fuzzing.md). Run i of
// seed S generates a chain (src/fuzz/plan.ts), feeds it block by block to our t8n in-process and
// to the command, and compares (src/fuzz/compare.ts). Every block starts from OUR post-state of
// the block before, so each difference is the command's error on that one block and is not
// buried under the consequences of an earlier one. The first divergence is shrunk
// (src/fuzz/shrink.ts) and the run stops there.
import { createHash } from "node:crypto";
import type { Fixture } from "../harness/fixture.js";
import { ChainBuilder, type BuiltBlock } from "./build.js";
import { firstDifference, type CompareOptions } from "./compare.js";
import { chainSize, generateChain, type FuzzChain } from "./plan.js";
import { shrink } from "./shrink.js";
import { inputTexts, TargetError, type T8nTarget, type TargetOutput } from "./target.js";

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

/** The command failed on a block: unusable input, with the block's inputs for the report. */
export class TargetFailure extends Error {
  override name = "TargetFailure";
  /** Set by the run loop. */
  run = -1;
  constructor(
    message: string,
    readonly block: BuiltBlock,
    readonly stderr: string,
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

/** Executes plans against a target; within a run, identical block inputs reuse the command's output. */
class Evaluator {
  blocks = 0;
  txs = 0;
  /** Shrink candidates are not counted as fuzzed blocks. */
  counting = true;
  /** The command's outputs in this run by input: shrink candidates share prefixes with the chain and with each other. */
  private memo = new Map<string, TargetOutput>();

  constructor(
    private readonly target: T8nTarget,
    private readonly compare: CompareOptions,
    private readonly stopped: () => boolean,
  ) {}

  /** A new run: forget the last one's outputs. */
  forget(): void {
    this.memo.clear();
  }

  /** The first divergence of `plan`, or null (also when interrupted: check `stopped`). */
  async evaluate(plan: FuzzChain): Promise<Divergence | null> {
    const builder = new ChainBuilder(plan);
    const summary: BlockSummary[] = [];
    while (!builder.done && !this.stopped()) {
      const block = builder.build();
      summary.push(summarize(block));
      const theirs = await this.theirs(block);
      if (theirs === null) return null;
      if (this.counting) {
        this.blocks++;
        this.txs += block.inputs.txs.length;
      }
      const text = firstDifference(block, theirs, this.compare);
      if (text !== null) {
        return { index: block.index, text, block, theirs, fixture: { ...builder.fixture, blocks: [...builder.fixture.blocks] }, summary };
      }
    }
    return null;
  }

  private async theirs(block: BuiltBlock): Promise<TargetOutput | null> {
    const key = memoKey(block);
    const known = this.memo.get(key);
    if (known !== undefined) return known;
    try {
      const out = await this.target.run(block.inputs);
      this.memo.set(key, out);
      return out;
    } catch (err) {
      if (this.stopped()) return null;
      if (err instanceof TargetError) throw new TargetFailure(err.message, block, err.stderr);
      throw err;
    }
  }
}

function memoKey(block: BuiltBlock): string {
  const t = inputTexts(block.inputs);
  return createHash("sha256").update(t.alloc).update(t.txs).update(t.env).digest("hex");
}

function summarize(block: BuiltBlock): BlockSummary {
  const result = block.ours.result as { receipts: Array<{ index: string; status: string; error: { name: string } | null }>; rejected: Array<{ index: string }> };
  const outcome = new Map<number, string>();
  for (const r of result.receipts) outcome.set(Number(r.index), r.error === null ? r.status : `rejected ${r.error.name}`);
  for (const r of result.rejected) outcome.set(Number(r.index), "left out");
  return { height: block.height, txs: block.kinds.map((kind, i) => ({ kind, outcome: outcome.get(i) ?? "?" })) };
}

export async function fuzz(target: T8nTarget, options: FuzzOptions): Promise<FuzzResult> {
  const stopped = options.stopped ?? (() => false);
  const evaluator = new Evaluator(target, options.compare, stopped);
  let runsDone = 0;
  const progress = (p: Omit<FuzzProgress, "runsDone" | "blocks" | "txs">) =>
    options.onProgress?.({ ...p, runsDone, blocks: evaluator.blocks, txs: evaluator.txs });
  for (let run = options.firstRun; run < options.firstRun + options.runs && !stopped(); run++) {
    const plan = generateChain(options.seed, run, options.blocks);
    evaluator.forget();
    let divergence: Divergence | null;
    try {
      divergence = await evaluator.evaluate(plan);
    } catch (err) {
      if (err instanceof TargetFailure) err.run = run;
      else if (err instanceof Error) err.message = `seed ${options.seed} run ${run}: ${err.message}`; // our own failure: say where
      throw err;
    }
    if (divergence === null) {
      if (stopped()) break;
      runsDone++;
      progress({ phase: "fuzz", run });
      continue;
    }
    runsDone++;
    evaluator.counting = false;
    // A candidate the command fails on does not count as reproducing the divergence.
    const test = (p: FuzzChain) =>
      evaluator.evaluate(p).catch((err: unknown) => {
        if (err instanceof TargetFailure) return null;
        throw err;
      });
    const shrunk = await shrink({ plan, divergence }, test, {
      budget: options.shrinkBudget,
      stopped,
      onCandidate: (best, candidates) => progress({ phase: "shrink", run, candidates, size: chainSize(best) }),
    });
    const finding: Finding = {
      seed: options.seed,
      run,
      original: chainSize(plan),
      shrunk: chainSize(shrunk.plan),
      candidates: shrunk.candidates,
      plan: shrunk.plan,
      divergence: shrunk.divergence,
    };
    return { runsDone, blocks: evaluator.blocks, txs: evaluator.txs, finding, interrupted: stopped() };
  }
  return { runsDone, blocks: evaluator.blocks, txs: evaluator.txs, finding: null, interrupted: stopped() };
}
