// `cbqs consume <fixtures…> (--t8n-server "<command>" | --t8n "<command>")`: the corpus through
// the implementation under test, block by block from each fixture's genesis, every answer
// compared with the fixture's expected results (docs/fixtures.md "consume"). Exit codes as
// replay's: 0 every fixture passes, 1 a fixture differs (never hidden by another's unusable
// input), 2 unusable fixtures or a target that cannot be used, and none differs.
import type { Command } from "commander";
import { echo } from "../bounds.js";
import { count, Progress, progressMode, rate, Stopwatch } from "../harness/progress.js";
import { errorLine, exitCodes, oneLine, UsageError } from "./common.js";
import { Stopped, stopRequested, watchSignals } from "../steps.js";
import type { Selection } from "../harness/selection.js";
import { addSelectionOptions, indexFailureLines, printList, selectFromOptions, type SelectionOpts } from "./selection-options.js";

interface ConsumeOpts extends SelectionOpts {
  t8n?: string;
  t8nServer?: string;
  quiet?: boolean;
  stateRoot: boolean;
  timeout: string;
}

/** One fixture's outcome, in the corpus's order. */
export interface ConsumeReport {
  id: string;
  file: string;
  status: "ok" | "mismatch" | "unusable";
  blocks: number;
  txs: number;
  /** The first difference (mismatch) or what made the fixture or the target unusable. */
  message?: string;
  height?: bigint;
}

export function register(program: Command): void {
  const consume = program
    .command("consume")
    .description("run cbqs-fixture/v1 fixtures through an implementation under test (a t8n server or command), block by block, and compare every result with the fixture's")
    .argument("<fixture...>", "fixture files (.json or .json.gz) or directories of them")
    .option("--t8n-server <command>", 'a cbqs-t8n-server/v1 server under test, run by /bin/sh once and kept for the whole corpus (e.g. "node dist/src/cli.js t8n --server")')
    .option("--t8n <command>", 'a per-call t8n command under test, run by /bin/sh once per block with the t8n flags appended (e.g. "node dist/src/cli.js t8n")')
    .option("--quiet", "no progress on stderr")
    .option("--no-state-root", "do not compare state_root and block_hash (for a t8n that does not commit its state as a chain, docs/fixtures.md §4)")
    .option("--timeout <seconds>", "time allowed for one t8n invocation or one server request", "60");
  addSelectionOptions(consume, "consume")
    .addHelpText(
      "after",
      exitCodes(
        "every fixture passes",
        "a fixture's result differs from the implementation's (1 wins: never hidden by another fixture's unusable input; every fixture is reported)",
        "a fixture is unusable (malformed, or this emulator does not replay it) or the implementation cannot be used on it (not found, no answer, not a t8n result), and none differs; bad options; 130/143 when stopped by SIGINT/SIGTERM",
      ),
    )
    .action(async (targets: string[], opts: ConsumeOpts) => {
      if ((opts.t8n === undefined) === (opts.t8nServer === undefined)) throw new UsageError("give the implementation under test as --t8n-server <command> (a server) or --t8n <command> (per call), one of them");
      const mode = opts.t8n !== undefined ? "t8n" : "t8n-server";
      const command = (opts.t8n ?? opts.t8nServer)!;
      if (command.trim() === "") throw new UsageError(`--${mode} must name a command`);
      if (!/^[0-9]{1,5}$/.test(opts.timeout) || Number(opts.timeout) < 1 || Number(opts.timeout) > 86_400) throw new UsageError(`--timeout must be an integer from 1 to 86400 (got ${echo(opts.timeout)})`);
      const selection = await selectFromOptions(targets, opts);
      if (opts.list === true) {
        printList(selection.files);
        process.stdout.write(indexFailureLines(selection.indexFailures));
        process.exitCode = selection.indexFailures.length > 0 ? 1 : 0;
        return;
      }
      await consumeCommand(selection, { mode, command, timeout: Number(opts.timeout), quiet: opts.quiet === true, stateRoot: opts.stateRoot });
    });
}

interface Settings {
  mode: "t8n" | "t8n-server";
  command: string;
  timeout: number;
  quiet: boolean;
  stateRoot: boolean;
}

async function consumeCommand(selection: Selection, s: Settings): Promise<void> {
  const [{ readFixtureSteps }, { consumeFixture, FixtureNotReplayable, TargetFailed }, { makeTarget }, { InputError }, { finish }] = await Promise.all([
    import("../harness/documents.js"),
    import("../consume/consume.js"),
    import("../fuzz/lanes.js"),
    import("../json/read.js"),
    import("../steps.js"),
  ]);
  const chosen = selection.files;
  const target = makeTarget(s.mode, s.command, s.timeout);
  const signal = watchSignals();
  signal.addEventListener("abort", () => target.close());
  const mode = progressMode(s.quiet);
  const clock = new Stopwatch();
  const reports: ConsumeReport[] = [];
  try {
    for (const f of chosen) {
      if (signal.aborted) break;
      const report: ConsumeReport = { id: f.id, file: f.file, status: "ok", blocks: 0, txs: 0 };
      const progress = new Progress(`consume ${f.id}`, mode);
      try {
        const fixture = finish(readFixtureSteps(f.file));
        const outcome = await consumeFixture(fixture, target, {
          compare: { stateRoot: s.stateRoot },
          stopped: () => signal.aborted,
          onBlock: (done, total, height, txs) => progress.update({ done, total, unit: "blocks", height: { at: height, last: fixture.blocks.at(-1)?.height ?? 0n }, txs }),
        });
        report.blocks = outcome.blocks;
        report.txs = outcome.txs;
        if (outcome.stopped) break;
        if (outcome.difference !== null) Object.assign(report, { status: "mismatch", message: outcome.difference.text, height: outcome.difference.height });
      } catch (err) {
        if (signal.aborted) break;
        if (err instanceof TargetFailed) {
          // The next fixture gets a fresh process: whatever state this one was left in is not trusted.
          target.close();
          const where = err.height === null ? "starting the chain" : `block ${err.height}`;
          Object.assign(report, { status: "unusable", message: `${s.mode} ${oneLine(s.command)}: ${where}: ${err.message}` }, err.height === null ? {} : { height: err.height });
        } else if (err instanceof FixtureNotReplayable || err instanceof InputError) {
          Object.assign(report, { status: "unusable", message: err.message });
        } else throw err;
      } finally {
        progress.end();
      }
      reports.push(report);
    }
  } finally {
    target.close();
  }
  for (const r of reports) {
    if (r.status === "unusable") process.stderr.write(`cbqs: error: ${oneLine(`${r.id}: ${r.message}`)}\n`);
    if (r.status === "mismatch") {
      process.stdout.write(`MISMATCH ${oneLine(`${r.id}: ${r.message}`)}\n  reproduce: cbqs consume ${shellWord(r.file)} --${s.mode} '${s.command.replace(/'/g, `'\\''`)}'${s.stateRoot ? "" : " --no-state-root"}\n`);
    }
  }
  process.stdout.write(indexFailureLines(selection.indexFailures) + consumeSummary(reports, clock.seconds(), selection.indexFailures.length) + "\n");
  const received = stopRequested();
  if (received !== null) {
    const stopped = new Stopped(received);
    stopped.kept = `${reports.length} of ${count(chosen.length, "fixture")} consumed before it; nothing written`;
    process.stderr.write(errorLine(stopped));
    process.exitCode = stopped.exitCode;
    return;
  }
  process.exitCode = reports.some((r) => r.status === "mismatch") || selection.indexFailures.length > 0 ? 1 : reports.some((r) => r.status === "unusable") ? 2 : 0;
}

/** The one summary line of a consume run. */
export function consumeSummary(reports: readonly ConsumeReport[], seconds: number, indexFailures = 0): string {
  const n = (s: ConsumeReport["status"]) => reports.filter((r) => r.status === s).length;
  const blocks = reports.reduce((x, r) => x + r.blocks, 0);
  const txs = reports.reduce((x, r) => x + r.txs, 0);
  return (
    `consume: ${count(reports.length, "fixture")}: ${n("ok")} ok, ${count(n("mismatch"), "mismatch", "mismatches")}, ${n("unusable")} unusable${indexFailures === 0 ? "" : `, ${count(indexFailures, "index failure")}`}; ` +
    `${count(blocks, "block")}, ${count(txs, "tx", "txs")} in ${seconds.toFixed(2)} s (${rate(blocks, seconds)} blocks/s, ${rate(txs, seconds)} tx/s)`
  );
}

/** A word as a POSIX shell reads it back: bare when safe, else single-quoted. */
function shellWord(word: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
