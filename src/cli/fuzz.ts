// `cbqs fuzz`: differential fuzzing of another implementation's t8n (a per-call command or a
// cbqs-t8n-server/v1 server) against ours (docs/reference/fuzzer.md), on --jobs lanes. Exit 0 after N runs
// without divergence, 1 on a divergence (shrunk, written to --out, first difference printed), 2
// for an unusable command or options (one line). SIGINT/SIGTERM end every running command or
// server and stop: a divergence found so far is still written, temporary directories are
// removed, and otherwise the exit is 130/143.
import { echo } from "../bounds.js";
import { randomInt } from "node:crypto";
import { checkReportFiles, errorLine, EXIT_BAD_INPUT, EXIT_OK, EXIT_REJECT, exitCodes, jobsOption, oneLine, option, outputDirOption, reportOptions, UsageError, withReports } from "./common.js";
import type { CommandSpec } from "./define.js";
import type { Suite, TestCase } from "../report/model.js";
import { shellWord } from "../report/text.js";
import { Phases, progressMode, Stopwatch } from "../harness/progress.js";
import { count, rate } from "../format.js";
import { availableParallelism } from "node:os";
import { Stopped, stopRequested, watchSignals } from "../steps.js";
import type { CampaignResult } from "../fuzz/campaign.js";
import type { FindingReport } from "../fuzz/lanes.js";

interface FuzzOpts {
  t8n?: string;
  t8nServer?: string;
  runs?: string;
  run?: string;
  duration?: string;
  jobs?: string;
  seed?: string;
  blocks: string;
  out: string;
  quiet?: boolean;
  stateRoot: boolean;
  timeout: string;
  junit?: string;
  report?: string;
}

export const commands: Readonly<Record<string, CommandSpec>> = {
  fuzz: {
    description: "differential fuzzing: random chains through our t8n and a t8n command or server, shrinking the first divergence to a minimal chain",
    options: () => [
      option("--t8n <command>", 'a per-call t8n command under test, run by /bin/sh once per block with the t8n flags appended (e.g. "node dist/src/cli.js t8n")'),
      option("--t8n-server <command>", 'a cbqs-t8n-server/v1 server under test, run by /bin/sh once per lane and kept for the campaign (e.g. "node dist/src/cli.js t8n --server")'),
      option("--runs <n>", "chains to generate; 100 when neither --runs nor --duration is given"),
      option("--duration <time>", "generate chains until this much time has passed: seconds, or a number with s, m or h (90s, 10m, 2h)"),
      option("--run <i>", "run only chain number i of the seed (reproduce a report)"),
      jobsOption("lanes run in parallel, each with its own command or server"),
      option("--seed <s>", "seed, 0 … 4294967295; without it a random seed is drawn and printed"),
      option("--blocks <b>", "blocks per chain", "8"),
      outputDirOption("--out <dir>", "report directory, written on a divergence (created if missing; checked before the campaign starts)", "the directory the report is written into", "cbqs-fuzz-report"),
      option("--quiet", "no header and no progress line on stderr"),
      option("--no-state-root", "do not compare state_root (for a t8n that does not commit the alloc as one batch, docs/fixtures.md §4)"),
      option("--timeout <seconds>", "time allowed for one t8n invocation or one server request, and for a server to exit once its input ends", "60"),
      ...reportOptions("one testcase for the campaign, failed by a divergence"),
    ],
    rules: [
      { oneOf: ["--t8n", "--t8n-server"], message: "give the implementation under test as --t8n <command> (per call) or --t8n-server <command> (a server), one of them" },
      { conflicts: ["--run", "--runs", "--duration"], message: (given) => `give one of --run (one chain), --runs (many) or --duration (for a time), not ${given.join(" and ")}` },
    ],
    exits: exitCodes(
      "every chain agreed (no divergence in --runs chains or within --duration)",
      "a divergence: shrunk to a minimal chain, written to --out, its first difference printed",
      "unusable command or output (not found, failed without output, timed out, not a t8n result, a server that is not cbqs-t8n-server/v1 or dies twice on one run), bad options, a --junit/--report file that cannot be written; 130/143 when stopped by SIGINT/SIGTERM with nothing found",
    ),
    action: async (opts: FuzzOpts) => {
      const started = new Date();
      checkReportFiles(opts);
      const s = campaignSettings(opts, started);
      process.exitCode = await renderCampaign(s, await runCampaign(s));
    },
  },
};

/** A campaign's settings from fuzz's options, each value checked (exit 2 naming the option). */
function campaignSettings(opts: FuzzOpts, started: Date): Settings {
  const int = (flag: string, v: string, min: number, max: number): number => {
    if (!/^[0-9]+$/.test(v) || Number(v) < min || Number(v) > max) throw new UsageError(`${flag} must be an integer from ${min} to ${max} (got ${echo(v)})`);
    return Number(v);
  };
  const mode = opts.t8n !== undefined ? "t8n" : "t8n-server";
  const command = (opts.t8n ?? opts.t8nServer)!;
  if (command.trim() === "") throw new UsageError(`--${mode} must name a command`);
  const seed = opts.seed === undefined ? randomInt(0, 2 ** 32) : int("--seed", opts.seed, 0, 2 ** 32 - 1);
  const firstRun = opts.run === undefined ? 0 : int("--run", opts.run, 0, 2 ** 31 - 1);
  const duration = opts.duration === undefined ? null : durationSeconds(opts.duration);
  const runs = opts.run !== undefined ? 1 : duration !== null ? 2 ** 31 - 1 - firstRun : opts.runs === undefined ? 100 : int("--runs", opts.runs, 1, 1_000_000_000);
  const jobs = opts.jobs === undefined ? availableParallelism() : int("--jobs", opts.jobs, 1, 256);
  const blocks = int("--blocks", opts.blocks, 1, 1_000);
  const timeout = int("--timeout", opts.timeout, 1, 86_400);
  return { mode, command, seed, firstRun, runs, duration, jobs: Math.min(jobs, runs), blocks, out: opts.out, quiet: opts.quiet === true, stateRoot: opts.stateRoot, timeout, single: opts.run !== undefined, started, reports: opts };
}

/** `--duration`: seconds, or a number with s, m or h; from 1 s to 7 days. */
function durationSeconds(v: string): number {
  const m = /^([0-9]+)(s|m|h)?$/.exec(v);
  const seconds = m === null ? NaN : Number(m[1]) * { s: 1, m: 60, h: 3600 }[(m[2] ?? "s") as "s" | "m" | "h"];
  if (!(seconds >= 1 && seconds <= 7 * 86_400)) throw new UsageError(`--duration must be seconds or a number with s, m or h, from 1s to 168h (got ${echo(v)})`);
  return seconds;
}

interface Settings {
  mode: "t8n" | "t8n-server";
  command: string;
  seed: number;
  firstRun: number;
  runs: number;
  /** Seconds, for a --duration campaign. */
  duration: number | null;
  jobs: number;
  blocks: number;
  out: string;
  quiet: boolean;
  stateRoot: boolean;
  timeout: number;
  /** `--run i`: one chain. */
  single: boolean;
  started: Date;
  reports: { junit?: string; report?: string };
}

/**
 * The campaign's report: one suite, ONE case for the campaign (docs/reference/fuzzer.md "Reports") —
 * failed by the divergence, an error when the implementation under test failed, else passed.
 */
function campaignSuite(s: Settings, outcome: Omit<TestCase, "id">, summary: string): Suite {
  const flag = `--${s.mode} ${shellWord(s.command)}`;
  return {
    name: `cbqs fuzz ${flag}`,
    classname: "cbqs.fuzz",
    cases: [{ id: `fuzz/seed-${s.seed}${s.single ? `/run-${s.firstRun}` : ""}`, ...outcome }],
    seconds: outcome.seconds,
    timestamp: s.started,
    summary,
  };
}

const FUZZ_REPORT = { title: "cbqs fuzz", caseLabel: "campaign" };

/** The campaign run on its lanes: what it found (or not) and in how long. A failing implementation under test is exit 2 (and a report says so). */
async function runCampaign(s: Settings): Promise<{ result: CampaignResult<FindingReport>; seconds: number }> {
  // Loaded here, not at startup: every other command (a t8n child included) starts faster.
  const { SHRINK_BUDGET } = await import("../fuzz/fuzz.js");
  const { campaign } = await import("../fuzz/campaign.js");
  const { LaneFailure, makeLanes } = await import("../fuzz/lanes.js");
  const spec = { meta: { mode: s.mode, command: s.command, blocks: s.blocks, stateRoot: s.stateRoot }, timeout: s.timeout, seed: s.seed, shrinkBudget: SHRINK_BUDGET, out: s.out };
  const progress = new Phases(progressMode(s.quiet));
  const hooks = {
    onShrink: (run: number, candidates: number, size: { blocks: number; txs: number }) =>
      progress.update(`fuzz (shrinking run ${run})`, { done: candidates, unit: "candidate chains", detail: `smallest so far ${sizeText(size)}` }),
  };
  const lanes = makeLanes(s.jobs, spec, hooks);
  // The shared signal session (src/steps.ts): every lane's target is ended at once.
  const signal = watchSignals();
  signal.addEventListener("abort", () => lanes.forEach((l) => l.stop()));
  const clock = new Stopwatch();
  if (!s.quiet) {
    const runs = s.duration !== null ? `runs from ${s.firstRun} for ${s.duration} s` : `runs ${s.firstRun}…${s.firstRun + s.runs - 1}`;
    process.stderr.write(`fuzz: seed ${s.seed}, ${runs}, ${count(s.blocks, "block")} per chain, ${count(s.jobs, "job")}, ${s.mode}: ${oneLine(s.command)}\n`);
  }
  let result: CampaignResult<FindingReport>;
  try {
    result = await campaign(lanes, {
      firstRun: s.firstRun,
      endRun: s.firstRun + s.runs,
      timeUp: () => s.duration !== null && clock.seconds() >= s.duration,
      stopped: () => signal.aborted,
      onRun: (o, t) => {
        // A server that died and was replaced is told at once, on its own line.
        for (const line of o.restarts) process.stderr.write(`fuzz: ${oneLine(line)}\n`);
        progress.update("fuzz", { done: t.runs, ...(s.duration === null ? { total: s.runs } : {}), unit: "runs", txs: t.txs });
      },
    });
  } catch (err) {
    progress.end();
    if (err instanceof LaneFailure) {
      // The implementation under test failed: exit 2 as before, and a report says so (an error case).
      const error: Omit<TestCase, "id"> = { status: "error", type: "target-failure", seconds: clock.seconds(), message: oneLine(err.message) };
      await withReports(s.reports, EXIT_BAD_INPUT, () => [campaignSuite(s, error, `fuzz: seed ${s.seed}: ${oneLine(err.message)}`)], FUZZ_REPORT);
      throw new UsageError(err.message);
    }
    throw err;
  } finally {
    await Promise.all(lanes.map((l) => l.close()));
  }
  progress.end();
  return { result, seconds: clock.seconds() };
}

/** A campaign's summary, its divergence if any, and its report; returns the exit code. */
async function renderCampaign(s: Settings, { result, seconds }: { result: CampaignResult<FindingReport>; seconds: number }): Promise<number> {
  const rates = `${rate(result.runs, seconds)} runs/s, ${rate(result.blocks, seconds)} blocks/s, ${rate(result.txs, seconds)} tx/s`;
  // "states reached": the census cells the counted runs hit (docs/reference/fuzzer.md §4), like the counts independent of --jobs.
  const totals = `${count(result.runs, "run")} (seed ${s.seed}), ${count(result.blocks, "block")}, ${count(result.txs, "tx", "txs")} in ${seconds.toFixed(1)} s (${rates}): ${count(result.census.reached, "state")} reached`;
  const f = result.finding;
  if (f !== null) {
    // Text from the command's output is shown terminal-safe (oneLine), details indented under the first line.
    const summary = `fuzz: ${totals}, divergence in run ${f.run}`;
    process.stdout.write([oneLine(f.headline), ...[...f.details, `reproduce: ${f.reproduce}`].map((l) => `  ${oneLine(l)}`), summary].join("\n") + "\n");
    // The divergence is the result (exit 1) even when its files could not be written.
    if (f.writeError !== null) process.stderr.write(errorLine(f.writeError));
    const failed: Omit<TestCase, "id"> = { status: "failed", type: "divergence", seconds, blocks: result.blocks, txs: result.txs, message: oneLine(f.headline), details: f.details.map(oneLine), reproduce: f.reproduce };
    return withReports(s.reports, EXIT_REJECT, () => [campaignSuite(s, failed, summary)], FUZZ_REPORT);
  }
  const received = stopRequested();
  if (received !== null) {
    // The summary on stdout as for a finished run, then the line every stopped command ends with.
    const stopped = new Stopped(received);
    stopped.kept = `after ${count(result.runs, "run")}: no divergence so far, nothing written`;
    process.stdout.write(`fuzz: ${totals}, no divergence so far\n`);
    process.stderr.write(errorLine(stopped));
    return stopped.exitCode;
  }
  const summary = `fuzz: ${totals}, no divergence`;
  process.stdout.write(`${summary}\n`);
  const passed: Omit<TestCase, "id"> = { status: "passed", seconds, blocks: result.blocks, txs: result.txs };
  return withReports(s.reports, EXIT_OK, () => [campaignSuite(s, passed, summary)], FUZZ_REPORT);
}

const sizeText = (chain: { blocks: number; txs: number }): string => `${count(chain.blocks, "block")}, ${count(chain.txs, "tx", "txs")}`;
