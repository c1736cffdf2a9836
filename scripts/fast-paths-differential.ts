// The spec path against every fast path (docs/engineering/performance.md "Fast paths"; D-0169
// "Fast paths: the spec path and the seams"): the same workloads executed twice, spec-only
// (@noble/hashes, pure-JS Ed25519, no bounds memo, the plain replay) and with every fast path
// (hash-wasm, OpenSSL Ed25519, the bounds memo; replays both plain, traced, and pipelined: worker
// commitment and speculative signatures), and every consensus output compared byte for byte:
// each block's state root, block hash, tx/receipt/logs roots and receipts, each transaction's
// gas (cycles, cells, reads, writes, hash preimage lengths, signatures), the traces, the fuzz
// chains built and the gas-vector artifact. test/harness/fast-paths.test.ts runs it on bounded
// workloads; this script runs it on the whole long chain and a longer fuzz campaign, and prints
// what each path cost.
//
//   npm run fast-paths    (= node dist/scripts/fast-paths-differential.js --full)
//   node dist/scripts/fast-paths-differential.js [--corpus fixtures/corpus] [--full | --long-chain file | --long-chain-blocks N]
//        [--fuzz-runs 20] [--fuzz-blocks 12] [--fuzz-seed 1] [--no-gas]
// --full takes the whole long chain of `npm start` (10,000 blocks, 50,000 transactions), cached
// in .cache/long-chain.json.gz and generated when missing or stale (minutes); without it and
// without --long-chain, the first --long-chain-blocks (default 2000) blocks of the long chain
// are filled first (not timed). Exit 0 when every output agrees, 1 naming the first difference.
import { pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";
import { toHex } from "../src/bytes.js";
import { receiptJson } from "../src/chain/receipts.js";
import { selectHashing } from "../src/crypto/hash.js";
import { ALL_FAST_PATHS, SPEC_ONLY, type FastPathChoice } from "../src/engine/fast-paths.js";
import { ChainBuilder } from "../src/fuzz/build.js";
import { generateChain } from "../src/fuzz/plan.js";
import { generateArtifact, sha256Hex } from "../src/gas/artifact.js";
import { GAS_VECTORS_SHA256 } from "../src/gas/pinned.js";
import { fixtureFiles, readFixture } from "../src/harness/documents.js";
import { fillScenario } from "../src/harness/fill.js";
import { fixtureJsonText, type Fixture } from "../src/harness/fixture.js";
import { newStore, replayFixture, type ExecutedBlock } from "../src/harness/replay.js";
import { blockTraceLines, TracingStore } from "../src/harness/trace.js";
import { parseScenario } from "../src/scenario/parse.js";
import { generateLongChainScenario } from "./gen-long-chain.js";
import { ensureLongChain } from "./long-chain-cache.js";
import { checkScriptArgs, scriptArgs } from "./script-args.js";
import { errorLine, UsageError } from "../src/cli/common.js";
import { progressMode } from "../src/harness/progress.js";

/** What a run must produce alike on both paths: one line per block (or built fuzz block), and the trace lines. */
export interface RunOutput {
  lines: string[];
  traces: string[];
  /** Wall seconds of the run. */
  seconds: number;
}

/** Runs `work` with `choice`'s hashing selected (process-wide), then the fast hashing again. */
export function withHashing<T>(choice: FastPathChoice, work: () => T): T {
  selectHashing(choice.hashWasm ? "fast" : "reference");
  try {
    return work();
  } finally {
    selectHashing("fast");
  }
}

/** A block's consensus outputs, as one line. */
function blockLine(executed: ExecutedBlock, height: bigint): string {
  return JSON.stringify({
    height: height.toString(),
    state_root: toHex(executed.stateRoot),
    block_hash: toHex(executed.blockHash),
    tx_root: toHex(executed.results.tx_root),
    receipt_root: toHex(executed.results.receipt_root),
    logs_root: toHex(executed.results.logs_root),
    effective_rent_height: executed.effectiveRentHeight.toString(),
    receipts: executed.results.receipts.map((r) => receiptJson(r)),
    gas: executed.outcomes.map((o) => ({
      status: o.status,
      cycles: o.cycles.toString(),
      cells: o.cells.toString(),
      reads: o.reads,
      writes: o.writes,
      hash_preimage_lengths: o.hashPreimageLengths,
      signatures: o.signatures,
    })),
  });
}

/**
 * `fixture` replayed on `choice`'s paths: plain and traced, or (choice.pipelinedReplay) pipelined,
 * which takes no store and so gives no trace. A mismatch with the fixture is a line too.
 */
export function replayOutput(fixture: Fixture, choice: FastPathChoice): RunOutput {
  return withHashing(choice, () => {
    const lines: string[] = [];
    const traces: string[] = [];
    const tracing = choice.pipelinedReplay ? null : new TracingStore(newStore());
    const started = performance.now();
    const outcome = replayFixture(fixture, {
      engine: choice,
      ...(tracing === null ? { pipeline: true } : { store: tracing }),
      onBlock: (p, executed) => {
        lines.push(blockLine(executed, p.height));
        if (tracing !== null) traces.push(...blockTraceLines(p.height, tracing.recorder, executed.envelopes, executed.results.receipts, executed.outcomes));
      },
    });
    const seconds = (performance.now() - started) / 1000;
    lines.push(JSON.stringify({ blocks: outcome.blocks, txs: outcome.txs, mismatch: outcome.mismatch === null ? null : `${outcome.mismatch.path}: ${outcome.mismatch.actual}` }));
    return { lines, traces, seconds };
  });
}

/**
 * Fuzz runs `first`…`first + runs - 1` under `seed`, each chain built on `choice`'s paths: its
 * blocks' t8n results and its fixture are the lines (compareReplay then replays the fixtures).
 */
export function fuzzOutput(seed: number, first: number, runs: number, blocks: number, choice: FastPathChoice): RunOutput & { fixtures: Fixture[] } {
  return withHashing(choice, () => {
    const out: RunOutput & { fixtures: Fixture[] } = { lines: [], traces: [], seconds: 0, fixtures: [] };
    const started = performance.now();
    for (let run = first; run < first + runs; run++) {
      const builder = new ChainBuilder(generateChain(seed, run, blocks), choice);
      while (!builder.done) out.lines.push(JSON.stringify(builder.build().result));
      out.lines.push(fixtureJsonText(builder.fixture));
      out.fixtures.push(builder.fixture);
    }
    out.seconds = (performance.now() - started) / 1000;
    return out;
  });
}

/** The gas-vector artifact generated on `choice`'s paths: its SHA-256 (pinned: GAS_VECTORS_SHA256). */
export function gasOutput(choice: FastPathChoice): RunOutput {
  return withHashing(choice, () => {
    const started = performance.now();
    const sha = sha256Hex(generateArtifact(undefined, choice));
    return { lines: [sha], traces: [], seconds: (performance.now() - started) / 1000 };
  });
}

/** The first difference of two outputs in words, or null when they are byte-identical. */
export function firstDifference(spec: RunOutput, fast: RunOutput): string | null {
  for (const [what, a, b] of [["line", spec.lines, fast.lines], ["trace line", spec.traces, fast.traces]] as const) {
    const n = Math.max(a.length, b.length);
    for (let i = 0; i < n; i++) if (a[i] !== b[i]) return `${what} ${i}: spec ${a[i]?.slice(0, 300) ?? "(none)"} | fast ${b[i]?.slice(0, 300) ?? "(none)"}`;
  }
  return null;
}

/** Spec-only, then every fast path: plain and traced (the traces compared), then pipelined (no trace to compare). */
export function compareReplay(fixture: Fixture): { difference: string | null; spec: number; fast: number; pipelined: number } {
  const spec = replayOutput(fixture, SPEC_ONLY);
  const fast = replayOutput(fixture, { ...ALL_FAST_PATHS, pipelinedReplay: false });
  const pipelined = replayOutput(fixture, ALL_FAST_PATHS);
  const difference = firstDifference(spec, fast) ?? firstDifference({ ...spec, traces: [] }, pipelined);
  return { difference, spec: spec.seconds, fast: fast.seconds, pipelined: pipelined.seconds };
}

/** Wall and CPU seconds of a plain, untraced replay of `fixture` on `choice`'s paths (what a user's `cbqs replay` costs). */
export function timedReplay(fixture: Fixture, choice: FastPathChoice): { wall: number; cpu: number; matched: boolean } {
  return withHashing(choice, () => {
    const cpu = process.cpuUsage();
    const started = performance.now();
    const outcome = replayFixture(fixture, { engine: choice, pipeline: choice.pipelinedReplay });
    const used = process.cpuUsage(cpu);
    return { wall: (performance.now() - started) / 1000, cpu: (used.user + used.system) / 1e6, matched: outcome.mismatch === null };
  });
}

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

export const longChainFixture = (blocks: number): Fixture => fillScenario(parseScenario(generateLongChainScenario({ blocks, minTxs: 0 })), "final");

const FULL_LONG_CHAIN = ".cache/long-chain.json.gz";

const USAGE = `usage: fast-paths-differential [--corpus dir] [--full | --long-chain file | --long-chain-blocks N] [--fuzz-runs N] [--fuzz-blocks N] [--fuzz-seed S] [--no-gas]\n`;

function main(): number {
  const valued = ["corpus", "long-chain", "long-chain-blocks", "fuzz-runs", "fuzz-blocks", "fuzz-seed"];
  const switches = ["full", "no-gas"];
  // As every developer script: an unknown option is named with the usage (exit 2) before anything runs.
  checkScriptArgs(process.argv.slice(2), USAGE, valued.map((n) => `--${n}`), switches.map((n) => `--${n}`));
  const args = scriptArgs(process.argv.slice(2), USAGE, valued, switches);
  if (args === null) return 0;
  const say = (line: string) => process.stdout.write(`${line}\n`);
  const rate = (spec: number, fast: number) => `spec-only ${spec.toFixed(2)} s, fast ${fast.toFixed(2)} s (spec-only ${(spec / fast).toFixed(2)}x)`;
  let failed = false;
  const report = (what: string, difference: string | null, costs: string) => {
    failed ||= difference !== null;
    say(`${difference === null ? "same" : "DIFFERENT"}: ${what}: ${difference ?? costs}`);
  };
  const corpus = fixtureFiles(args.value("corpus") ?? "fixtures/corpus").map(readFixture);
  let spec = 0;
  let fast = 0;
  let pipelined = 0;
  let firstCorpusDifference: string | null = null;
  for (const fixture of corpus) {
    const r = compareReplay(fixture);
    firstCorpusDifference ??= r.difference === null ? null : `${fixture.name}: ${r.difference}`;
    spec += r.spec;
    fast += r.fast;
    pipelined += r.pipelined;
  }
  report(`corpus (${corpus.length} fixtures)`, firstCorpusDifference, `${rate(spec, fast)}; pipelined ${pipelined.toFixed(2)} s`);
  if (args.flag("full") && args.value("long-chain") !== undefined) throw new UsageError("--full and --long-chain are exclusive");
  if (args.flag("full")) ensureLongChain(FULL_LONG_CHAIN, { blocks: 10_000, minTxs: 50_000, progress: progressMode(false) });
  const file = args.flag("full") ? FULL_LONG_CHAIN : args.value("long-chain");
  const blocks = args.integer("long-chain-blocks", 2000, 1);
  process.stderr.write(file === undefined ? `filling the first ${blocks} blocks of the long chain (not timed)…\n` : `reading ${file}…\n`);
  const longChain = file === undefined ? longChainFixture(blocks) : readFixture(file);
  const txs = longChain.blocks.reduce((n, b) => n + b.transactions.length, 0);
  const r = compareReplay(longChain);
  report(`long chain (${longChain.blocks.length} blocks, ${txs} txs), traced`, r.difference, `${rate(r.spec, r.fast)}; pipelined ${r.pipelined.toFixed(2)} s`);
  // What `cbqs replay` costs on each path: plain replays without a trace, alternated so the load falls on both alike.
  const plain = { spec: { wall: 0, cpu: 0 }, fast: { wall: 0, cpu: 0 } };
  for (let round = 0; round < 2; round++) {
    for (const [side, choice] of [["spec", SPEC_ONLY], ["fast", { ...ALL_FAST_PATHS, pipelinedReplay: false }]] as const) {
      const t = timedReplay(longChain, choice);
      if (!t.matched) failed = true;
      plain[side].wall += t.wall / 2;
      plain[side].cpu += t.cpu / 2;
    }
  }
  const perCpu = (cpu: number) => Math.round(txs / cpu).toLocaleString("en-US");
  say(
    `cost: long chain, plain replay (mean of 2 each, alternated): spec-only ${plain.spec.cpu.toFixed(2)} s CPU (${perCpu(plain.spec.cpu)} tx per CPU-second), ` +
      `fast ${plain.fast.cpu.toFixed(2)} s CPU (${perCpu(plain.fast.cpu)} tx per CPU-second): spec-only costs ${(plain.spec.cpu / plain.fast.cpu).toFixed(2)}x the CPU; wall ${plain.spec.wall.toFixed(2)} s vs ${plain.fast.wall.toFixed(2)} s`,
  );
  const seed = args.integer("fuzz-seed", 1, 0);
  const runs = args.integer("fuzz-runs", 20, 1);
  const fuzzBlocks = args.integer("fuzz-blocks", 12, 1);
  const fuzzSpec = fuzzOutput(seed, 0, runs, fuzzBlocks, SPEC_ONLY);
  const fuzzFast = fuzzOutput(seed, 0, runs, fuzzBlocks, ALL_FAST_PATHS);
  const replays = fuzzSpec.fixtures.map(compareReplay);
  const replayed = replays.findIndex((c) => c.difference !== null);
  report(
    `fuzz campaign (seed ${seed}, ${runs} runs of ${fuzzBlocks} blocks: built, then replayed)`,
    firstDifference(fuzzSpec, fuzzFast) ?? (replayed < 0 ? null : `run ${replayed} replayed: ${replays[replayed]!.difference}`),
    `built: ${rate(fuzzSpec.seconds, fuzzFast.seconds)}; replayed: ${rate(sum(replays.map((c) => c.spec)), sum(replays.map((c) => c.fast)))}`,
  );
  if (!args.flag("no-gas")) {
    const gasSpec = gasOutput(SPEC_ONLY);
    const gasFast = gasOutput(ALL_FAST_PATHS);
    const pinned = gasSpec.lines[0] === GAS_VECTORS_SHA256 ? null : `spec-only SHA-256 ${gasSpec.lines[0]} is not the pinned ${GAS_VECTORS_SHA256}`;
    report("gas-vector artifact", pinned ?? firstDifference(gasSpec, gasFast), rate(gasSpec.seconds, gasFast.seconds));
  }
  return failed ? 1 : 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  try {
    process.exitCode = main();
  } catch (err) {
    // Unusable input (an unknown option, an unreadable fixture): one line, exit 2.
    process.stderr.write(errorLine(err));
    process.exitCode = 2;
  }
}
