// `cbqs replay <fixture|dir…>` (docs/fixtures.md §3): fixtures re-executed from genesis, every
// root, receipt and digest checked — a corpus in memory (on --jobs worker threads, or one at a time
// with --trace or --pipeline), or one fixture into a persistent store (--db, resuming after what
// it holds). Exit 0 every fixture matches, 1 a mismatch (never hidden by another fixture's
// unusable input), 2 unusable input. What a replay reports is built in src/cli/replay-report.ts.
// The replay pipeline and the store are imported by the action (`await import`), not here.
import { basename, dirname, relative } from "node:path";
import { Option } from "commander";
import { count, rate } from "../format.js";
import { fixtureFiles, readFixture } from "../harness/documents.js";
import { Progress, progressMode, Stopwatch, type ProgressMode } from "../harness/progress.js";
import type { FixtureReport, Shard } from "../harness/replay.js";
import type { Selection } from "../harness/selection.js";
import { blockTraceLines, TracingStore } from "../harness/trace.js";
import { InputError } from "../json/read.js";
import type { DbReplayOutcome } from "../store-tools/replay-db.js";
import { shellWord } from "../report/text.js";
import { DEFAULT_RETAIN_BLOCKS } from "../../state/chain-db/memory.js";
import { keeping, stoppable, Stopped, stopRequested, watchSignals, type StopSignalName } from "../steps.js";
import { checkReportFiles, decimalOption, errorLine, EXIT_OK, EXIT_REJECT, exitCodes, intOption, jobsCount, jobsOption, option, outputOption, reportOptions, UsageError, withReports } from "./common.js";
import type { CommandSpec, OptionRule } from "./define.js";
import { mismatchLines, REPLAY_REPORT, replayDocument, replaySuite, replaySummary } from "./replay-report.js";
import { indexFailureLines, printList, selectFromOptions, selectionOptions, type SelectionOpts } from "./selection-options.js";
import { SNAPSHOT_INTERVAL_HELP, snapshotInterval } from "./store-options.js";
import { withTrace, type TraceFile } from "./trace-output.js";

interface ReplayOpts extends SelectionOpts {
  toHeight?: string;
  jobs?: string;
  quiet?: boolean;
  json?: boolean;
  trace?: string;
  db?: string;
  snapshotInterval?: string;
  retainBlocks?: string;
  pipeline?: boolean;
  junit?: string;
  report?: string;
}

/** What a store holds is one chain: the options that select or spread fixtures do not go with --db. */
const ONE_CHAIN: readonly string[] = ["--shard", "-k", "--instruction", "--error", "--list", "--jobs"];

const rules: readonly OptionRule[] = [
  { conflicts: ["--pipeline", "--trace"], message: "--pipeline cannot be combined with --trace or --db" },
  { conflicts: ["--pipeline", "--db"], message: "--pipeline cannot be combined with --trace or --db" },
  { conflicts: ["--trace", "--db"], message: "--trace and --db are exclusive" },
  ...ONE_CHAIN.map((flag) => ({ conflicts: [flag, "--db"], message: `${flag} and --db are exclusive: a store holds one chain` })),
  { needs: ["--snapshot-interval", "--db"], message: "--snapshot-interval needs --db" },
  { needs: ["--retain-blocks", "--db"], message: "--retain-blocks needs --db" },
];

export const commands: Readonly<Record<string, CommandSpec>> = {
  replay: {
    description: "re-execute cbqs-fixture/v1 fixtures from genesis and check every root, receipt and digest",
    arguments: [["<fixture...>", "fixture files (.json or .json.gz) or directories of them"]],
    options: () => [
      option("--to-height <n>", "stop after the last block at or below this height"),
      ...selectionOptions("replay"),
      jobsOption("fixtures replayed in parallel on worker threads, reported in order (1 with --trace or --pipeline)"),
      option("--quiet", "no progress on stderr"),
      option("--json", "print a cbqs-replay/v1 JSON report instead of text"),
      outputOption("--trace <file>", "write a cbqs-trace/v1 JSON line per transaction (single fixture only)"),
      option("--db <dir>", "commit every verified block to this store (LMDB); run again, compare every stored block with the fixture's, then resume after its last block (one fixture file)"),
      option("--snapshot-interval <n>", SNAPSHOT_INTERVAL_HELP),
      option("--retain-blocks <n>", `with --db, blocks below the head whose undo rows the store keeps (as cbqs node --retain-blocks; older ones are pruned); default ${DEFAULT_RETAIN_BLOCKS}`),
      new Option(
        "--pipeline",
        "compute each block's state root, tx/receipt/logs roots and signature checks on worker threads while the next block executes " +
          "(same report; for long chains: each fixture starts its workers, so small fixtures replay slower; not with --trace or --db)",
      ),
      ...reportOptions("a testcase per fixture, a testsuite per target"),
    ],
    rules,
    exits: exitCodes(
      "every fixture matches",
      "a fixture does not match (1 wins: a mismatch is never hidden by another fixture's unusable input; every fixture is reported)",
      "a fixture is unusable (malformed, unreadable, unexecutable) and none mismatched; bad options; a --junit/--report file that cannot be written",
      "in memory, nothing is written (a --trace file is dropped); with --db, every block committed before the one in progress is kept, that one is finished and committed",
    ),
    action: async (targets: string[], opts: ReplayOpts) => {
      const started = new Date();
      checkReportFiles(opts);
      const toHeight = opts.toHeight === undefined ? undefined : decimalOption("--to-height", opts.toHeight);
      if (opts.db !== undefined) {
        const settings = { toHeight, interval: snapshotInterval(opts.snapshotInterval), retainBlocks: retainBlocks(opts.retainBlocks) };
        const replayed = await replayIntoStore(targets, opts.db, { ...settings, progress: opts.json ? "off" : progressMode(opts.quiet) });
        process.exitCode = await renderStoreReplay(replayed, opts, { started, toHeight, retainBlocks: settings.retainBlocks });
        return;
      }
      const selection = await selectFromOptions(targets, opts);
      if (opts.list === true) return printList(selection);
      const files = selection.files.map((f) => f.file);
      if (opts.trace !== undefined && files.length !== 1) throw new UsageError("--trace needs a single fixture file");
      // --trace and --pipeline replay one fixture at a time (a trace is one stream; the pipeline has its own threads).
      if (opts.jobs !== undefined && jobsCount(opts.jobs) > 1 && (opts.trace !== undefined || opts.pipeline === true)) throw new UsageError("--jobs above 1 cannot be combined with --trace or --pipeline");
      const jobs = opts.trace !== undefined || opts.pipeline === true ? 1 : Math.min(jobsCount(opts.jobs), files.length);
      const replayed = await replayCorpus(files, { jobs, toHeight, progress: opts.json ? "off" : progressMode(opts.quiet), trace: opts.trace, pipeline: opts.pipeline === true });
      process.exitCode = await renderCorpus(replayed, selection, opts, { started, toHeight });
    },
  },
};

function retainBlocks(text: string | undefined): number {
  return text === undefined ? DEFAULT_RETAIN_BLOCKS : intOption("--retain-blocks", text, 1_000_000);
}

/** Every fixture replayed: its report and its time, in the order given. */
interface Replayed {
  runs: Array<{ report: FixtureReport; seconds: number }>;
  seconds: number;
}

/** The fixtures replayed in memory: on `jobs` worker threads, or one at a time with a trace or the pipeline. */
async function replayCorpus(
  files: readonly string[],
  o: { jobs: number; toHeight: bigint | undefined; progress: ProgressMode; trace: string | undefined; pipeline: boolean },
): Promise<Replayed> {
  const signal = watchSignals();
  const clock = new Stopwatch();
  const runs: Replayed["runs"] = [];
  const kept = () => `${runs.length} of ${count(files.length, "fixture")} replayed before it; nothing written${o.trace === undefined ? "" : ` (the trace ${o.trace} is not)`}`;
  if (o.jobs > 1) await replayOnWorkers(files, { ...o, signal, kept }, (report, seconds) => runs.push({ report, seconds }));
  else await keeping(kept, () => withTrace(o.trace, (trace) => replayInTurn(files, { ...o, trace }, (report, seconds) => runs.push({ report, seconds }))));
  return { runs, seconds: clock.seconds() };
}

/** The fixtures one after the other on this thread, each block traced when `trace` is given. */
async function replayInTurn(
  files: readonly string[],
  o: { toHeight: bigint | undefined; progress: ProgressMode; trace: TraceFile | null; pipeline: boolean },
  onReport: (report: FixtureReport, seconds: number) => void,
): Promise<void> {
  const { newStore, replayFileSteps, ReplayPipeline } = await import("../harness/replay.js");
  // One worker for the whole run, started before the first fixture is read (docs/engineering/performance.md).
  const pipeline = o.pipeline ? new ReplayPipeline() : undefined;
  try {
    for (const file of files) {
      const tracing = o.trace === null ? null : new TracingStore(newStore());
      const watch = new Stopwatch();
      const report = await stoppable(
        replayFileSteps(file, {
          progress: o.progress,
          ...(o.toHeight === undefined ? {} : { toHeight: o.toHeight }),
          ...(tracing === null ? {} : { store: tracing }),
          ...(pipeline === undefined ? {} : { pipeline }),
          onBlock: (p, executed) => {
            if (tracing !== null) o.trace!.write(blockTraceLines(p.height, tracing.recorder, executed.envelopes, executed.results.receipts, executed.outcomes));
          },
        }),
      );
      onReport(report, watch.seconds());
    }
  } finally {
    pipeline?.close();
  }
}

/** `replay --jobs N`: whole fixtures on N worker threads (src/jobs/pool.ts), reported in order. */
async function replayOnWorkers(
  files: readonly string[],
  o: { jobs: number; toHeight: bigint | undefined; signal: AbortSignal; progress: ProgressMode; kept: () => string },
  onReport: (report: FixtureReport, seconds: number) => void,
): Promise<void> {
  const [{ runJobs }, { PoolProgress }] = await Promise.all([import("../jobs/pool.js"), import("../jobs/progress.js")]);
  const progress = new PoolProgress("replay", o.progress, files.length, "fixtures", files.map((f) => basename(f)));
  await runJobs({ kind: "replay", toHeight: o.toHeight ?? null }, files.map((file) => ({ file, id: file })), {
    jobs: o.jobs,
    signal: o.signal,
    onResult: (_, output) => {
      const { kind: _kind, seconds, ...report } = output as { kind: "replay"; seconds: number } & FixtureReport;
      onReport(report, seconds);
    },
    onFinished: (_, output) => progress.finished((output as { txs: number }).txs),
    onProgress: (running) => progress.running(running),
  });
  progress.end();
  const received = stopRequested();
  if (received !== null) {
    const stopped = new Stopped(received);
    stopped.kept = o.kept();
    throw stopped;
  }
}

/** A corpus replay's output (text or --json) and reports; returns the exit code. */
async function renderCorpus(replayed: Replayed, selection: Selection, opts: ReplayOpts, o: { started: Date; toHeight: bigint | undefined }): Promise<number> {
  const { parseShard, replayExitCode } = await import("../harness/replay.js");
  const reports = replayed.runs.map((r) => r.report);
  const shard = opts.shard === undefined ? undefined : parseShard(opts.shard);
  const failures = selection.indexFailures;
  const summary = replaySummary(reports, replayed.seconds, shard, failures.length);
  if (opts.json) {
    process.stdout.write(JSON.stringify(replayDocument(reports, { indexFailures: failures }), null, 2) + "\n");
    process.stderr.write(summary + "\n");
  } else {
    for (const r of reports) {
      if (r.status === "unusable") process.stderr.write(errorLine(r.error!));
      if (r.mismatch !== undefined) process.stdout.write(mismatchLines(r.file, r.mismatch).join("\n") + "\n");
    }
    process.stdout.write(indexFailureLines(failures) + summary + "\n");
  }
  // A corpus that differs from its index fails like a mismatch: the run did not test what the index promises.
  const verdict = failures.length > 0 ? EXIT_REJECT : replayExitCode(reports);
  const found = new Map(selection.files.map((f) => [f.file, f.target]));
  return withReports(opts, verdict, () => corpusSuites(replayed.runs, found, { ...o, shard }), REPLAY_REPORT);
}

/**
 * A fixture's id in a report: its path relative to the corpus root it was found under (the
 * directory given, or a file's own directory), so it is the same whichever way it was named.
 */
function fixtureId(file: string, target: string): string {
  return relative(file === target ? dirname(target) : target, file);
}

/** The command that replays one fixture again, as this run did. */
function replayCommand(file: string, toHeight: bigint | undefined): string {
  return `cbqs replay ${shellWord(file)}${toHeight === undefined ? "" : ` --to-height ${toHeight}`}`;
}

/** A corpus replay's report: a suite per target argument, a case per fixture (docs/fixtures.md "Reports"). */
function corpusSuites(runs: Replayed["runs"], found: ReadonlyMap<string, string>, o: { started: Date; shard: Shard | undefined; toHeight: bigint | undefined }) {
  const byTarget = new Map<string, Replayed["runs"]>();
  for (const run of runs) {
    const target = found.get(run.report.file)!;
    byTarget.set(target, [...(byTarget.get(target) ?? []), run]);
  }
  return [...byTarget].map(([target, mine]) => {
    const seconds = mine.reduce((x, r) => x + r.seconds, 0);
    const cases = mine.map((r) => ({ ...r, id: fixtureId(r.report.file, target), reproduce: replayCommand(r.report.file, o.toHeight) }));
    const shard = o.shard === undefined ? "" : ` (shard ${o.shard.index}/${o.shard.count})`;
    return replaySuite(`cbqs replay ${target}${shard}`, cases, o.started, replaySummary(mine.map((r) => r.report), seconds, o.shard));
  });
}

/** `replay`'s targets: files and directories, expanded, in order, each file once. */
function targetFiles(targets: readonly string[]): string[] {
  return [...new Set(targets.flatMap((target) => fixtureFiles(target)))];
}

/** One fixture replayed into a store: what replayIntoDb did, in how long, and the signal that stopped it. */
interface StoreReplay {
  file: string;
  dir: string;
  name: string | null;
  outcome: DbReplayOutcome;
  seconds: number;
  signal: StopSignalName;
}

/**
 * `replay <fixture> --db <dir>`: the fixture replayed into a persistent store, resuming after
 * the store's head (src/store-tools/replay-db.ts): a mismatching block is not committed; unusable input
 * or a store holding another chain is exit 2 with nothing touched; SIGINT/SIGTERM stop after the
 * block in progress is committed.
 */
async function replayIntoStore(targets: readonly string[], dir: string, o: { toHeight: bigint | undefined; interval: bigint; retainBlocks: number; progress: ProgressMode }): Promise<StoreReplay> {
  const files = targetFiles(targets);
  if (files.length !== 1 || files[0] !== targets[0]) throw new UsageError("--db needs one fixture file (a store holds one chain)");
  const file = files[0]!;
  const [{ ReplayInputError }, { replayIntoDb, StoredChainError }, { openStore, storeUsageError }] = await Promise.all([
    import("../harness/replay.js"),
    import("../store-tools/replay-db.js"),
    import("./store.js"),
  ]);
  const fixture = readFixture(file);
  const db = openStore(dir, { snapshotInterval: o.interval, retainBlocks: o.retainBlocks });
  const signal = watchSignals();
  const clock = new Stopwatch();
  const line = new Progress(`replay ${file}`, o.progress);
  try {
    const outcome = await replayIntoDb(fixture, db, {
      ...(o.toHeight === undefined ? {} : { toHeight: o.toHeight }),
      signal,
      onBlock: (p) => line.update({ done: p.blocksDone, total: p.blocksTotal, unit: "blocks", height: { at: p.height, last: p.lastHeight }, txs: p.txsDone }),
    });
    return { file, dir, name: fixture.name, outcome, seconds: clock.seconds(), signal: stopRequested() ?? "SIGINT" };
  } catch (err) {
    if (err instanceof StoredChainError) throw new UsageError(`--db ${dir}: ${err.message}`);
    if (err instanceof ReplayInputError) throw new InputError(file, err.path, err.message);
    throw storeUsageError(dir, err) ?? err;
  } finally {
    line.end();
    db.close();
  }
}

/** The one summary line of a replay into a store: how it ended, what ran, and the store's head. */
async function storeSummary(r: StoreReplay, toHeight: bigint | undefined): Promise<string> {
  const { heightSpan } = await import("../chain-node/stored-chain.js");
  const { outcome, seconds } = r;
  const end = outcome.stopped ? `stopped by ${r.signal}` : outcome.mismatch !== null ? "mismatch" : "ok";
  const compared = outcome.compared;
  const rates = `${count(outcome.blocks, "block")}, ${count(outcome.txs, "tx", "txs")} in ${seconds.toFixed(2)} s (${rate(outcome.blocks, seconds)} blocks/s, ${rate(outcome.txs, seconds)} tx/s)`;
  let what: string;
  if (outcome.resumedAfter === null) what = `from genesis, ${rates}`;
  else if (compared !== null && compared.mismatch !== null) what = `the stored chain differs from the fixture at ${compared.mismatch.height === 0n ? "genesis" : `block ${compared.mismatch.height}`}: nothing executed, the store is unchanged`;
  else if (toHeight !== undefined && toHeight < outcome.resumedAfter) {
    const span = compared === null || compared.compared === 0 ? `genesis only (the store holds no block at or below height ${toHeight})` : `${heightSpan(compared.first!, compared.last!)} (${count(compared.compared, "stored block")})`;
    what = `the store is at height ${outcome.resumedAfter}, above --to-height ${toHeight}: ${span} compared with the store, identical; nothing executed`;
  } else what = `resumed after height ${outcome.resumedAfter}, ${rates}`;
  return `replay: ${r.file} into ${r.dir}: ${end}; ${what}; store head ${outcome.head ?? "none"}`;
}

/** The `store` member of the cbqs-replay/v1 document of a replay into a store. */
function storeJson(r: StoreReplay): Record<string, unknown> {
  const { outcome } = r;
  const compared = outcome.compared;
  return {
    dir: r.dir,
    resumed_after: outcome.resumedAfter?.toString() ?? null,
    head: outcome.head?.toString() ?? null,
    stopped: outcome.stopped,
    // What of the stored chain was compared with the fixture before anything ran (null: the store was empty).
    compared:
      compared === null
        ? null
        : {
            blocks: String(compared.compared),
            first: compared.first?.toString() ?? null,
            last: compared.last?.toString() ?? null,
            snapshot_base: compared.snapshotBase?.toString() ?? null,
            beyond: compared.beyond === null ? null : { from: compared.beyond.from.toString(), head: compared.beyond.head.toString() },
          },
    pruned_undo: outcome.pruned === null ? null : { from: outcome.pruned.from.toString(), to: outcome.pruned.to.toString(), blocks: String(outcome.pruned.blocks) },
  };
}

/** A replay into a store's output (text or --json) and reports; returns the exit code. */
async function renderStoreReplay(r: StoreReplay, opts: ReplayOpts, o: { started: Date; toHeight: bigint | undefined; retainBlocks: number }): Promise<number> {
  const { outcome, file, dir } = r;
  const summary = await storeSummary(r, o.toHeight);
  if (outcome.pruned !== null) {
    const p = outcome.pruned;
    process.stderr.write(`cbqs: pruned undo rows of blocks ${p.from}–${p.to} (${count(p.blocks, "block")} below the window of --retain-blocks ${o.retainBlocks})\n`);
  }
  const report: FixtureReport = { file, name: r.name, status: outcome.mismatch === null ? "ok" : "mismatch", blocks: outcome.blocks, txs: outcome.txs, ...(outcome.mismatch === null ? {} : { mismatch: outcome.mismatch }) };
  if (opts.json) {
    process.stdout.write(JSON.stringify(replayDocument([report], { store: storeJson(r) }), null, 2) + "\n");
    process.stderr.write(summary + "\n");
  } else {
    const { comparedText } = await import("../chain-node/stored-chain.js");
    if (outcome.mismatch !== null) process.stdout.write(mismatchLines(file, outcome.mismatch).join("\n") + "\n");
    else if (outcome.compared !== null) process.stdout.write(`stored chain: ${comparedText(outcome.compared)}\n`);
    process.stdout.write(summary + "\n");
  }
  if (outcome.stopped) {
    const stopped = new Stopped(r.signal);
    stopped.kept = `the store ${dir} holds every block through height ${outcome.head ?? "none"}, each committed whole; run again to resume`;
    process.stderr.write(errorLine(stopped));
    return stopped.exitCode;
  }
  // One fixture, one case; what the store already held and was compared is in the summary line.
  const reproduce = `${replayCommand(file, o.toHeight)} --db ${shellWord(dir)}`;
  const suite = () => [replaySuite(`cbqs replay ${file} --db ${dir}`, [{ report, seconds: r.seconds, id: fixtureId(file, file), reproduce }], o.started, summary)];
  return withReports(opts, outcome.mismatch !== null ? EXIT_REJECT : EXIT_OK, suite, REPLAY_REPORT);
}
