// `cbqs consume <fixtures…> (--t8n-server "<command>" | --t8n "<command>")`: the corpus through
// the implementation under test, block by block from each fixture's genesis, every answer
// compared with the fixture's expected results (docs/reference/formats/fixture.md "consume"). Exit codes as
// replay's: 0 every fixture passes, 1 a fixture differs (never hidden by another's unusable
// input), 2 unusable fixtures or a target that cannot be used, and none differs.
import { echo } from "../bounds.js";
import { progressMode, Stopwatch } from "../harness/progress.js";
import { count, rate } from "../format.js";
import { checkReportFiles, errorLine, exitCodes, jobsCount, jobsOption, oneLine, option, reportOptions, UsageError, withReports } from "./common.js";
import type { CommandSpec } from "./define.js";
import type { ConsumeReport } from "../consume/consume.js";
import type { Suite, TestCase } from "../report/model.js";
import { shellWord } from "../report/text.js";
import { Stopped, stopRequested, watchSignals } from "../steps.js";
import type { Selection } from "../harness/selection.js";
import { indexFailureLines, printList, selectFromOptions, selectionOptions, type SelectionOpts } from "./selection-options.js";

interface ConsumeOpts extends SelectionOpts {
  t8n?: string;
  t8nServer?: string;
  quiet?: boolean;
  stateRoot: boolean;
  timeout: string;
  jobs?: string;
  junit?: string;
  report?: string;
}

export const commands: Readonly<Record<string, CommandSpec>> = {
  consume: {
    description: "run cbqs-fixture/v1 fixtures through an implementation under test (a t8n server or command), block by block, and compare every result with the fixture's",
    arguments: [["<fixture...>", "fixture files (.json or .json.gz) or directories of them"]],
    options: () => [
      option("--t8n-server <command>", 'a cbqs-t8n-server/v1 server under test, run by /bin/sh once and kept for the whole corpus (e.g. "node dist/src/cli.js t8n --server")'),
      option("--t8n <command>", 'a per-call t8n command under test, run by /bin/sh once per block with the t8n flags appended (e.g. "node dist/src/cli.js t8n")'),
      option("--quiet", "no progress on stderr"),
      option("--no-state-root", "do not compare state_root and block_hash (for a t8n that does not commit its state as a chain, docs/fixtures.md §4)"),
      option("--timeout <seconds>", "time allowed for one t8n invocation or one server request, and for a server to exit once its input ends", "60"),
      jobsOption("fixtures run in parallel, each worker with its own server or command"),
      ...selectionOptions("consume"),
      ...reportOptions("a testcase per fixture id"),
    ],
    rules: [{ oneOf: ["--t8n", "--t8n-server"], message: "give the implementation under test as --t8n-server <command> (a server) or --t8n <command> (per call), one of them" }],
    exits: exitCodes(
      "every fixture passes",
      "a fixture's result differs from the implementation's (1 wins: never hidden by another fixture's unusable input; every fixture is reported)",
      "a fixture is unusable (malformed, or this emulator does not replay it) or the implementation cannot be used on it (not found, no answer, not a t8n result), and none differs; bad options; 130/143 when stopped by SIGINT/SIGTERM",
    ),
    action: async (targets: string[], opts: ConsumeOpts) => {
      const started = new Date();
      checkReportFiles(opts);
      const mode = opts.t8n !== undefined ? "t8n" : "t8n-server";
      const command = (opts.t8n ?? opts.t8nServer)!;
      if (command.trim() === "") throw new UsageError(`--${mode} must name a command`);
      if (!/^[0-9]{1,5}$/.test(opts.timeout) || Number(opts.timeout) < 1 || Number(opts.timeout) > 86_400) throw new UsageError(`--timeout must be an integer from 1 to 86400 (got ${echo(opts.timeout)})`);
      const selection = await selectFromOptions(targets, opts);
      if (opts.list === true) return printList(selection);
      const settings: Settings = { mode, command, timeout: Number(opts.timeout), quiet: opts.quiet === true, stateRoot: opts.stateRoot, jobs: jobsCount(opts.jobs), started, ...(opts.junit === undefined ? {} : { junit: opts.junit }), ...(opts.report === undefined ? {} : { report: opts.report }) };
      process.exitCode = await renderConsume(selection, settings, await consumeCorpus(selection, settings));
    },
  },
};

interface Settings {
  mode: "t8n" | "t8n-server";
  command: string;
  timeout: number;
  quiet: boolean;
  stateRoot: boolean;
  jobs: number;
  started: Date;
  junit?: string;
  report?: string;
}

/** The selected fixtures through the implementation under test on `s.jobs` workers: every report, in the order given. */
async function consumeCorpus(selection: Selection, s: Settings): Promise<{ reports: ConsumeReport[]; seconds: number }> {
  const [{ runJobs }, { PoolProgress }] = await Promise.all([import("../jobs/pool.js"), import("../jobs/progress.js")]);
  const chosen = selection.files;
  const signal = watchSignals();
  const progress = new PoolProgress("consume", progressMode(s.quiet), chosen.length, "fixtures", chosen.map((f) => f.id));
  const clock = new Stopwatch();
  const reports: ConsumeReport[] = [];
  await runJobs(
    { kind: "consume", mode: s.mode, command: s.command, timeout: s.timeout, stateRoot: s.stateRoot },
    chosen.map((f) => ({ file: f.file, id: f.id })),
    {
      jobs: s.jobs,
      signal,
      onResult: (_, output) => {
        reports.push(output as ConsumeReport);
      },
      onFinished: (_, output) => progress.finished((output as ConsumeReport).txs),
      onProgress: (running) => progress.running(running),
    },
  );
  progress.end();
  return { reports, seconds: clock.seconds() };
}

/** A consume run's lines, summary and reports; returns the exit code. */
async function renderConsume(selection: Selection, s: Settings, consumed: { reports: ConsumeReport[]; seconds: number }): Promise<number> {
  const { reports, seconds } = consumed;
  const reproduce = (r: ConsumeReport) => `cbqs consume ${shellWord(r.file)} --${s.mode} ${shellWord(s.command)}${s.stateRoot ? "" : " --no-state-root"}`;
  for (const r of reports) {
    if (r.status === "unusable") process.stderr.write(errorLine(`${r.id}: ${r.message}`));
    if (r.status === "mismatch") process.stdout.write(`MISMATCH ${oneLine(`${r.id}: ${r.message}`)}\n  reproduce: ${oneLine(reproduce(r))}\n`);
  }
  const summary = consumeSummary(reports, seconds, selection.indexFailures.length);
  process.stdout.write(indexFailureLines(selection.indexFailures) + summary + "\n");
  const received = stopRequested();
  if (received !== null) {
    const stopped = new Stopped(received);
    stopped.kept = `${reports.length} of ${count(selection.files.length, "fixture")} consumed before it; nothing written`;
    process.stderr.write(errorLine(stopped));
    return stopped.exitCode;
  }
  const verdict = reports.some((r) => r.status === "mismatch") || selection.indexFailures.length > 0 ? 1 : reports.some((r) => r.status === "unusable") ? 2 : 0;
  const suite = (): Suite[] => [
    {
      name: `cbqs consume --${s.mode} ${s.command}`,
      classname: "cbqs.consume",
      cases: reports.map((r) => consumeCase(r, reproduce(r))),
      seconds,
      timestamp: s.started,
      summary,
    },
  ];
  return withReports(s, verdict, suite, { title: "cbqs consume", caseLabel: "fixture" });
}

/** A fixture's outcome as a report's test case: a difference fails it, an unusable fixture or target is an error. */
function consumeCase(r: ConsumeReport, reproduce: string): TestCase {
  const base = { id: r.id, seconds: r.seconds, blocks: r.blocks, txs: r.txs };
  if (r.status === "mismatch") return { ...base, status: "failed", type: "mismatch", message: oneLine(r.message ?? ""), reproduce };
  if (r.status === "unusable") return { ...base, status: "error", type: "unusable", message: oneLine(r.message ?? ""), reproduce };
  return { ...base, status: "passed" };
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
