// `cbqs consume`: a fixture's blocks through the implementation under test (a cbqs-t8n-server/v1
// server or a per-call t8n command, src/target/target.ts), from the fixture's genesis on, each
// answer compared with the fixture's expected results. Our own replay runs in lockstep: it
// checks the fixture itself (a fixture this emulator does not replay is unusable, not evidence
// against the target), gives the state to start a session from or to hand a per-call t8n, and
// names the differing keys when the state differs. The request for block k goes out before we
// execute block k, so the target and our replay work at the same time.
import type { Fixture, FixtureBlock } from "../harness/fixture.js";
import { readFixtureSteps } from "../harness/documents.js";
import { InputError } from "../json/read.js";
import { finish } from "../steps.js";
import { performance } from "node:perf_hooks";
import { Replay, ReplayInputError, type Mismatch } from "../harness/replay.js";
import { blockResultJson, transition, type T8nEnv, type T8nRun } from "../harness/t8n.js";
import { txKind } from "../harness/trace.js";
import { firstDifference, resultDiffers, type ComparedBlock, type CompareOptions } from "../fuzz/compare.js";
import { TargetError, type ChainTarget, type TargetAnswer, type TargetOutput } from "../target/target.js";
import type { Entries, T8nInputs } from "../target/target.js";

/** The fixture cannot be used to judge the target: our own replay of it does not match (or it cannot be executed). */
export class FixtureNotReplayable extends Error {
  override name = "FixtureNotReplayable";
}

/** The target failed on a block (no answer, an error answer, output that is not a t8n result). */
export class TargetFailed extends Error {
  override name = "TargetFailed";
  constructor(
    message: string,
    readonly height: bigint | null,
    readonly stderr: string,
  ) {
    super(message);
  }
}

export interface ConsumeOptions {
  compare: CompareOptions;
  /** Polled between blocks (SIGINT/SIGTERM): the fixture is left unfinished. */
  stopped?: () => boolean;
  onBlock?: (done: number, total: number, height: bigint, txs: number) => void;
}

export interface ConsumeOutcome {
  blocks: number;
  txs: number;
  /** The first difference, in words (`block 5 tx 0 CreateStream: t8n result: …`), or null. */
  difference: { height: bigint; text: string } | null;
  /** Stopped by a signal before the last block. */
  stopped: boolean;
}

/** Runs every block of `fixture` through `target` and compares each answer with the fixture's block. */
export async function consumeFixture(fixture: Fixture, target: ChainTarget, options: ConsumeOptions): Promise<ConsumeOutcome> {
  const started = startReplay(fixture);
  const { replay } = started;
  await attempt(null, () => target.startChain([...replay.store.entries()], 0n));
  // What the target's state_root commits to is known once it has started (a server's hello says it).
  const perBlockRoot = target.stateRoot === "per_block";
  let txs = 0;
  for (let i = 0; i < fixture.blocks.length; i++) {
    if (options.stopped?.() === true) return { blocks: i, txs, difference: null, stopped: true };
    const b = fixture.blocks[i]!;
    // A per-call t8n gets the state before the block; so does our per-call run a per_block root is compared with.
    const alloc: Entries = target.memoizable || perBlockRoot ? [...replay.store.entries()] : [];
    const inputs: T8nInputs = { alloc, txs: b.transactions, env: envOf(fixture, b, replay.parentHash) };
    const asked = target.apply(inputs);
    asked.catch(() => undefined); // awaited below, after our own execution of the block
    let block: ComparedBlock;
    try {
      block = executeOurs(replay, i, inputs);
    } catch (err) {
      // The target's answer is read before giving up, or the next fixture would get it.
      await asked.catch(() => undefined);
      throw err;
    }
    const answer = await attempt(b.height, () => asked);
    txs += b.transactions.length;
    options.onBlock?.(i + 1, fixture.blocks.length, b.height, txs);
    const theirs = await attempt(b.height, () => fullOutput(target, options.compare, block, inputs, answer, b.post_state !== undefined));
    const text = theirs === null ? null : firstDifference(block, theirs, options.compare, target.stateRoot);
    if (text !== null) return { blocks: i + 1, txs, difference: { height: b.height, text }, stopped: false };
  }
  return { blocks: fixture.blocks.length, txs, difference: null, stopped: false };
}

function startReplay(fixture: Fixture): { replay: Replay } {
  try {
    const { replay, mismatch } = Replay.start(fixture);
    if (mismatch !== null) throw notReplayable(mismatch);
    return { replay };
  } catch (err) {
    if (err instanceof ReplayInputError) throw new FixtureNotReplayable(err.message);
    throw err;
  }
}

/** The t8n env of fixture block `b`: the genesis parameters, and the parent hash so the answer carries a block hash. */
function envOf(fixture: Fixture, b: FixtureBlock, parent: Uint8Array): T8nEnv {
  const c = fixture.genesis.config;
  return {
    height: b.height,
    timestamp: b.timestamp,
    chain_id: c.chain_id,
    chain_instance_id: fixture.genesis.chain_instance_id,
    governance: c.governance,
    cycle_price: c.cycle_price,
    cell_price: c.cell_price,
    parent_hash: parent,
  };
}

/** Our replay of block `index`, checked against the fixture, as the block the target's answer is compared with. */
function executeOurs(replay: Replay, index: number, inputs: T8nInputs): ComparedBlock {
  let half;
  try {
    half = replay.execute(index);
  } catch (err) {
    if (err instanceof ReplayInputError) throw new FixtureNotReplayable(err.message);
    throw err;
  }
  const { mismatch } = replay.check(half);
  if (mismatch !== null) throw notReplayable(mismatch);
  // Every fixture transaction is included (a fixture holds blocks as mined), so nothing is left out.
  const indices = half.envelopes.map((_, i) => i);
  const result = blockResultJson(inputs.env, half.outcome, half.results, indices, []);
  const store = replay.store;
  let ours: T8nRun | null = null;
  return {
    height: inputs.env.height,
    result,
    kinds: half.envelopes.map((e) => txKind(e)),
    // Read when the answer is compared, before the next block changes the store.
    get postState(): Entries {
      return [...store.entries()];
    },
    get ours(): T8nRun {
      return (ours ??= transition(inputs.alloc, inputs.txs, inputs.env));
    },
  };
}

function notReplayable(m: Mismatch): FixtureNotReplayable {
  const where = m.height === 0n ? "genesis" : `block ${m.height}`;
  return new FixtureNotReplayable(`this emulator does not replay the fixture (${where}: ${m.field}: expected ${m.expected} got ${m.actual}; see cbqs replay)`);
}

/**
 * Their full output when it is needed: always when it came with the answer (a per-call t8n); from
 * a server when the cheap check (result and roots) differs, when no state root is compared, or
 * when the fixture has a post-state at this block to compare.
 */
async function fullOutput(target: ChainTarget, compare: CompareOptions, block: ComparedBlock, inputs: T8nInputs, answer: TargetAnswer, fixtureHasState: boolean): Promise<TargetOutput | null> {
  if (answer.output !== undefined) return answer.output;
  if (compare.stateRoot && !fixtureHasState && !resultDiffers(block, answer.result, compare, target.stateRoot)) return null;
  return target.postState(inputs, answer);
}

async function attempt<T>(height: bigint | null, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof TargetError) throw new TargetFailed(err.message, height, err.stderr);
    throw err;
  }
}

/** One fixture's outcome, in the corpus's order (`cbqs consume`'s report row). */
export interface ConsumeReport {
  id: string;
  file: string;
  status: "ok" | "mismatch" | "unusable";
  blocks: number;
  txs: number;
  /** The first difference (mismatch) or what made the fixture or the target unusable. */
  message?: string;
  height?: bigint;
  /** The target failed (its process is not trusted for the next fixture). */
  targetFailed?: boolean;
  /** Wall time of the fixture, for reports. */
  seconds: number;
}

export interface ConsumeFileOptions extends ConsumeOptions {
  /** How the target is named in a failure: `t8n-server <command>`. */
  targetName: string;
}

/** Reads fixture `file` and consumes it; every failure is part of the report, a stop leaves it null. */
export async function consumeFile(file: string, id: string, target: ChainTarget, options: ConsumeFileOptions): Promise<ConsumeReport | null> {
  const report: ConsumeReport = { id, file, status: "ok", blocks: 0, txs: 0, seconds: 0 };
  const started = performance.now();
  try {
    const fixture = finish(readFixtureSteps(file));
    const outcome = await consumeFixture(fixture, target, options);
    if (outcome.stopped) return null;
    report.blocks = outcome.blocks;
    report.txs = outcome.txs;
    if (outcome.difference !== null) Object.assign(report, { status: "mismatch", message: outcome.difference.text, height: outcome.difference.height });
  } catch (err) {
    if (options.stopped?.() === true) return null;
    if (err instanceof TargetFailed) {
      const where = err.height === null ? "starting the chain" : `block ${err.height}`;
      Object.assign(report, { status: "unusable", message: `${options.targetName}: ${where}: ${err.message}`, targetFailed: true }, err.height === null ? {} : { height: err.height });
    } else if (err instanceof FixtureNotReplayable || err instanceof InputError) {
      Object.assign(report, { status: "unusable", message: err.message });
    } else throw err;
  }
  report.seconds = (performance.now() - started) / 1000;
  return report;
}
