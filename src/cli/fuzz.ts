// `cbqs fuzz`: differential fuzzing of another implementation's t8n against ours
// (docs/fuzzing.md). Exit 0 after N runs without divergence, 1 on a divergence (shrunk, written
// to --out, first difference printed), 2 for an unusable command or options (one line).
// SIGINT/SIGTERM kill the running command and stop: a divergence found so far is still written,
// the temporary directory is removed, and otherwise the exit is 130/143.
import { echo } from "../bounds.js";
import { randomInt } from "node:crypto";
import type { Command } from "commander";
import { errorLine, EXIT_OK, EXIT_REJECT, exitCodes, oneLine, UsageError, outputDirOption } from "./common.js";
import { count, Phases, progressMode, Stopwatch } from "../harness/progress.js";
import { Stopped, stopRequested, watchSignals } from "../steps.js";
import { OutputError } from "../output-file.js";
import { describeIoError } from "../json/read.js";

interface FuzzOpts {
  t8n: string;
  runs?: string;
  run?: string;
  seed?: string;
  blocks: string;
  out: string;
  quiet?: boolean;
  stateRoot: boolean;
  timeout: string;
}

export function register(program: Command): void {
  program
    .command("fuzz")
    .description("differential fuzzing: random chains through our t8n and a t8n command, shrinking the first divergence to a minimal chain")
    .requiredOption("--t8n <command>", 'the t8n command under test, run by /bin/sh with the t8n flags appended (e.g. "node dist/src/cli.js t8n")')
    .option("--runs <n>", "chains to generate; 100 when not given")
    .option("--run <i>", "run only chain number i of the seed (reproduce a report)")
    .option("--seed <s>", "seed, 0 … 4294967295; without it a random seed is drawn and printed")
    .option("--blocks <b>", "blocks per chain", "8")
    .addOption(outputDirOption("--out <dir>", "report directory, written on a divergence (created if missing; checked before the campaign starts)", "the directory the report is written into", "cbqs-fuzz-report"))
    .option("--quiet", "no header and no progress line on stderr")
    .option("--no-state-root", "do not compare state_root (for a t8n that does not commit the alloc as one batch, docs/fixtures.md §4)")
    .option("--timeout <seconds>", "time allowed for one t8n invocation", "60")
    .addHelpText(
      "after",
      exitCodes(
        "every chain agreed (no divergence in --runs chains)",
        "a divergence: shrunk to a minimal chain, written to --out, its first difference printed",
        "unusable command or output (not found, failed without output, timed out, not a t8n result), bad options; 130/143 when stopped by SIGINT/SIGTERM with nothing found",
      ),
    )
    .action(async (opts: FuzzOpts) => {
      const int = (flag: string, v: string, min: number, max: number): number => {
        if (!/^[0-9]+$/.test(v) || Number(v) < min || Number(v) > max) throw new UsageError(`${flag} must be an integer from ${min} to ${max} (got ${echo(v)})`);
        return Number(v);
      };
      if (opts.t8n.trim() === "") throw new UsageError("--t8n must name a command");
      if (opts.run !== undefined && opts.runs !== undefined) throw new UsageError("give --run (one chain) or --runs (many), not both");
      const seed = opts.seed === undefined ? randomInt(0, 2 ** 32) : int("--seed", opts.seed, 0, 2 ** 32 - 1);
      const firstRun = opts.run === undefined ? 0 : int("--run", opts.run, 0, 2 ** 31 - 1);
      const runs = opts.run !== undefined ? 1 : opts.runs === undefined ? 100 : int("--runs", opts.runs, 1, 1_000_000_000);
      const blocks = int("--blocks", opts.blocks, 1, 1_000);
      const timeout = int("--timeout", opts.timeout, 1, 86_400);
      await fuzzCommand({ command: opts.t8n, seed, firstRun, runs, blocks, out: opts.out, quiet: opts.quiet === true, stateRoot: opts.stateRoot, timeout });
    });
}

interface Settings {
  command: string;
  seed: number;
  firstRun: number;
  runs: number;
  blocks: number;
  out: string;
  quiet: boolean;
  stateRoot: boolean;
  timeout: number;
}

async function fuzzCommand(s: Settings): Promise<void> {
  // Loaded here, not at startup: every other command (a t8n child included) starts faster.
  const { fuzz, SHRINK_BUDGET, TargetFailure } = await import("../fuzz/fuzz.js");
  const { CommandTarget } = await import("../fuzz/target.js");
  const { chainLines, reproduceLine, writeInputs, writeReport } = await import("../fuzz/report.js");
  const meta = { command: s.command, blocks: s.blocks, stateRoot: s.stateRoot };
  const target = new CommandTarget(s.command, s.timeout * 1000);
  // The shared signal session (src/steps.ts); the running command is killed at once, not after it ends.
  const signal = watchSignals();
  signal.addEventListener("abort", () => target.close());
  const progress = new Phases(progressMode(s.quiet));
  const clock = new Stopwatch();
  if (!s.quiet) process.stderr.write(`fuzz: seed ${s.seed}, runs ${s.firstRun}…${s.firstRun + s.runs - 1}, ${count(s.blocks, "block")} per chain, t8n: ${oneLine(s.command)}\n`);
  let result: Awaited<ReturnType<typeof fuzz>>;
  try {
    result = await fuzz(target, {
      seed: s.seed,
      firstRun: s.firstRun,
      runs: s.runs,
      blocks: s.blocks,
      compare: { stateRoot: s.stateRoot },
      shrinkBudget: SHRINK_BUDGET,
      onProgress: (p) =>
        p.phase === "shrink"
          ? progress.update(`fuzz (shrinking run ${p.run})`, { done: p.candidates!, unit: "candidate chains", detail: `smallest so far ${sizeText(p.size!)}` })
          : progress.update("fuzz", { done: p.runsDone, total: s.runs, unit: "runs", txs: p.txs }),
      stopped: () => signal.aborted,
    });
  } catch (err) {
    progress.end();
    if (err instanceof TargetFailure) {
      const where = `block ${err.block.height} of run ${err.run}`;
      let kept = "";
      try {
        kept = ` (kept for a look: ${writeInputs(s.out, err.block, err.stderr).join(", ")}: the block's inputs and the command's stderr)`;
      } catch {
        // the report directory is not writable: the error line alone
      }
      throw new UsageError(`--t8n command failed on ${where} (seed ${s.seed}): ${err.message}${kept}`);
    }
    throw err;
  } finally {
    target.close();
  }
  progress.end();
  const seconds = clock.seconds().toFixed(1);
  const totals = `${count(result.runsDone, "run")} (seed ${s.seed}), ${count(result.blocks, "block")}, ${count(result.txs, "tx", "txs")} in ${seconds} s`;
  const f = result.finding;
  if (f !== null) {
    let wrote: string;
    let failed: string | null = null;
    try {
      wrote = `wrote ${count(writeReport(s.out, f, meta).length, "file")} to ${s.out}: fixture.json (cbqs replay ${s.out}/fixture.json), report.json, the block's t8n inputs and both outputs`;
    } catch (err) {
      // --out was checked before the campaign; what can still fail here (a full disk) is reported.
      const code = (err as NodeJS.ErrnoException).code;
      if (err instanceof OutputError) failed = `cannot write the report to ${s.out}: ${err.message}`;
      else if (code !== undefined) failed = `cannot write the report to ${s.out}: ${describeIoError(err)}`;
      else throw err;
      wrote = "no report written";
    }
    // Text from the command's output is shown terminal-safe (oneLine), details indented under the first line.
    const details = [
      `shrunk from ${sizeText(f.original)} to ${sizeText(f.shrunk)} (${count(f.candidates, "candidate chain")}${result.interrupted ? ", interrupted" : ""})`,
      ...chainLines(f.divergence.summary),
      wrote,
      `reproduce: ${reproduceLine(meta, f.seed, f.run)}`,
    ];
    const out = [oneLine(`DIVERGENCE seed ${f.seed} run ${f.run}: ${f.divergence.text}`), ...details.map((l) => `  ${oneLine(l)}`), `fuzz: ${totals}: divergence in run ${f.run}`];
    process.stdout.write(out.join("\n") + "\n");
    // The divergence is the result (exit 1) even when its files could not be written.
    if (failed !== null) process.stderr.write(`cbqs: error: ${oneLine(failed)}\n`);
    process.exitCode = EXIT_REJECT;
    return;
  }
  const received = stopRequested();
  if (received !== null) {
    // The summary on stdout as for a finished run, then the line every stopped command ends with.
    const stopped = new Stopped(received);
    stopped.kept = `after ${count(result.runsDone, "run")}: no divergence so far, nothing written`;
    process.stdout.write(`fuzz: ${totals}: no divergence so far\n`);
    process.stderr.write(errorLine(stopped));
    process.exitCode = stopped.exitCode;
    return;
  }
  process.stdout.write(`fuzz: ${totals}: no divergence\n`);
  process.exitCode = EXIT_OK;
}

const sizeText = (chain: { blocks: number; txs: number }): string => `${count(chain.blocks, "block")}, ${count(chain.txs, "tx", "txs")}`;
