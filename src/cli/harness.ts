// The replay harness commands (docs/reference/formats/fixture.md), in workflow order: `cbqs fill`, `cbqs replay`,
// `cbqs t8n`, `cbqs trace`, `cbqs diff`. Exit 0 = everything matches, 1 = a mismatch/difference,
// 2 = unusable input (one line naming the file and JSON path; never a stack trace).
// What only fill, replay, trace or diff use — the replay pipeline, the LMDB store — is imported by
// their actions (`await import`), not here: a per-call `cbqs t8n` loads no more than it runs
// (docs/engineering/performance.md "Start-up").
import { DEFAULT_T8N_LINE_BYTES, echo, MAX_BUFFERED_DOCUMENT_BYTES } from "../bounds.js";
import { existsSync, mkdirSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import type { Command } from "commander";
import { GenesisError } from "../engine/errors.js";
import type { PostStateMode } from "../harness/fill.js";
import { fixtureFileName, fixtureJsonText, noBlockAt } from "../harness/fixture.js";
import type { FixtureSummary } from "../harness/corpus-index.js";
import type { FillOutput } from "../jobs/handlers.js";
import { Phases, Progress, progressMode, Stopwatch, type ProgressMode } from "../harness/progress.js";
import { count, rate } from "../format.js";
import type { DiffOutcome } from "../harness/diff.js";
import { fixtureFiles, inFile, inFileSteps, readDocumentSteps, readDumpSteps, readFixture, readFixtureSteps, readJson, readScenario } from "../harness/documents.js";
import type { FixtureReport, Mismatch, Shard } from "../harness/replay.js";
import { parseEnv, parseTxs, transitionSteps } from "../harness/t8n.js";
import { blockTraceLines, TracingStore } from "../harness/trace.js";
import { registryRecords } from "../harness/records.js";
import { InputError } from "../json/read.js";
import { describeIoError } from "../io-error.js";
import { jsonDocumentSteps, Output, Streamed, writing, writingStoppable } from "../json/write.js";
import { checkOutputPath } from "../output-file.js";
import { dumpEntryViews, dumpHeader } from "../../state/kv/dump.js";
import { checkReportFiles, errorLine, EXIT_OK, EXIT_REJECT, exitCodes, intOption, jobsCount, jobsHelp, oneLine, reportOptions, UsageError, outputOption, outputDirOption, withReports } from "./common.js";
import type { Suite, TestCase } from "../report/model.js";
import { shellWord } from "../report/text.js";
import { DEFAULT_RETAIN_BLOCKS } from "../../state/chain-db/memory.js";
import { SNAPSHOT_INTERVAL_HELP, snapshotInterval } from "./store-options.js";
import { addSelectionOptions, indexFailureLines, printList, selectFromOptions, type SelectionOpts } from "./selection-options.js";
import { keeping, stoppable, Stopped, stopRequested, watchSignals } from "../steps.js";

export function register(program: Command): void {
  registerFill(program);
  registerIndex(program);
  registerReplay(program);
  registerT8n(program);
  registerT8nAdapter(program);
  registerTrace(program);
  registerDiff(program);
}

/** `-o <dir>` of fill: a directory (created if missing), never an existing file. */
function outputDirectory(dir: string): void {
  // -o was checked before any scenario was filled (outputDirOption); it is created only now.
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new UsageError(`cannot create the directory ${dir}: ${describeIoError(err)}`);
  }
}

/** A decimal u64 option (`--to-height`, `--block`, `--index`). */
export function decimalOption(flag: string, text: string): bigint {
  if (!/^[0-9]+$/.test(text) || text.length > 20 || BigInt(text) >> 64n !== 0n) throw new UsageError(`${flag} must be a decimal integer up to 2^64 - 1 (got ${echo(text)})`);
  return BigInt(text);
}

function registerFill(program: Command): void {
  program
    .command("fill")
    .description("run cbqs-scenario/v1 documents and write one cbqs-fixture/v1 per scenario (bytes + expected results)")
    .argument("<scenario...>", "scenario files (.json or .json.gz)")
    .addOption(outputDirOption("-o, --output <dir>", "directory for the fixtures (file name from the scenario name)", "the directory the fixtures are written into").makeOptionMandatory())
    .option("--post-state <mode>", "which blocks carry a post_state dump: every (each block), final (the last block only) or none", "every")
    .option("--gzip", "write <name>.json.gz")
    .option("--jobs <n>", jobsHelp("scenarios filled in parallel on worker threads, written in the order given"))
    .option("--quiet", "no progress on stderr")
    .addHelpText(
      "after",
      exitCodes(
        "every scenario filled",
        "a scenario fails its own expectations (reported and skipped; the others are written)",
        undefined,
        "the fixtures already written are kept (each complete), the one being written is dropped",
      ),
    )
    .action(async (files: string[], opts: { output: string; postState: string; gzip?: boolean; quiet?: boolean; jobs?: string }) => {
      watchSignals();
      const [{ FillError, fillSteps }, { fixtureSummary, indexDirectory }] = await Promise.all([import("../harness/fill.js"), import("../harness/corpus-index.js")]);
      if (!["none", "final", "every"].includes(opts.postState)) throw new UsageError(`--post-state must be none, final or every (got ${echo(opts.postState)})`);
      const outputs = new Map<string, string>();
      const texts: Array<{ path: string; text: string }> = [];
      const filled = new Map<string, FixtureSummary>();
      let failed = 0;
      const jobs = Math.min(jobsCount(opts.jobs), files.length);
      if (jobs > 1) {
        failed = await fillOnWorkers(files, { jobs, postState: opts.postState as PostStateMode, gzip: opts.gzip === true, output: opts.output, quiet: opts.quiet === true }, texts, filled);
      } else for (const file of files) {
        const scenario = readScenario(file);
        const name = inFile(file, () => fixtureFileName(scenario.name)) + (opts.gzip ? ".gz" : "");
        if (outputs.has(name)) throw new UsageError(`${file}: scenario name "${echo(scenario.name)}" is also used by ${outputs.get(name)}`);
        outputs.set(name, file);
        // Its fixture's name is known now: checked before the scenario is filled (the directory may not exist yet).
        if (existsSync(opts.output)) checkOutputPath(join(opts.output, name));
        const progress = new Phases(progressMode(opts.quiet));
        let fixtureText: string;
        try {
          const fixture = await keeping(
            () => `no fixture written (stopped while filling ${file})`,
            () => stoppable(inFileSteps(file, fillSteps(scenario, opts.postState as PostStateMode, (phase, s) => progress.update(`fill ${file} (${phase})`, s)))),
          );
          fixtureText = inFile(file, () => fixtureJsonText(fixture));
          filled.set(name, fixtureSummary(fixture));
        } catch (err) {
          if (err instanceof GenesisError) throw new InputError(file, scenario.genesisPath, `invalid genesis: ${err.message}`);
          if (!(err instanceof FillError)) throw err;
          // A scenario that fails is reported and skipped; the others are still filled.
          process.stderr.write(`cbqs: ${oneLine(`${file}: ${err.message}`)}\n`);
          failed++;
          continue;
        } finally {
          progress.end();
        }
        texts.push({ path: join(opts.output, name), text: fixtureText });
      }
      outputDirectory(opts.output);
      let written = 0;
      await keeping(
        () => `${written} of ${count(texts.length, "fixture")} written, each complete`,
        () =>
          stoppable(
            (function* () {
              for (const { path, text } of texts) {
                writing(new Output(path), (out) => out.write(text)); // a .gz name is written gzipped
                process.stdout.write(`${path}\n`);
                written++;
                yield;
              }
            })(),
          ),
      );
      // The corpus index covers every fixture of the directory, the ones filled earlier too.
      if (written > 0) process.stdout.write(`${indexDirectory(opts.output, filled)}\n`);
      process.exitCode = failed > 0 ? EXIT_REJECT : EXIT_OK;
    });
}

/** A mismatch in words, after the file: `block 5: receipts[2].cycles ($.blocks[1]…): expected 471 got 472`. */
function mismatchText(m: Mismatch): string {
  return `${m.height === 0n ? "genesis" : `block ${m.height}`}: ${m.field} (${m.path}): expected ${m.expected} got ${m.actual}`;
}

/**
 * `fill --jobs N`: every scenario read and its fixture name checked first (a malformed one stops
 * the command before any work), then filled on N worker threads; results in the order given.
 * Returns how many failed their own expectations.
 */
async function fillOnWorkers(
  files: readonly string[],
  o: { jobs: number; postState: PostStateMode; gzip: boolean; output: string; quiet: boolean },
  texts: Array<{ path: string; text: string }>,
  filled: Map<string, FixtureSummary>,
): Promise<number> {
  const { runJobs } = await import("../jobs/pool.js");
  const names = new Map<string, string>();
  const byFile = new Map<string, string>();
  for (const file of files) {
    const scenario = readScenario(file);
    const name = inFile(file, () => fixtureFileName(scenario.name)) + (o.gzip ? ".gz" : "");
    if (names.has(name)) throw new UsageError(`${file}: scenario name "${echo(scenario.name)}" is also used by ${names.get(name)}`);
    names.set(name, file);
    byFile.set(file, name);
    if (existsSync(o.output)) checkOutputPath(join(o.output, name));
  }
  const signal = watchSignals();
  const { PoolProgress } = await import("../jobs/progress.js");
  const progress = new PoolProgress("fill", progressMode(o.quiet), files.length, "scenarios", files.map((f) => basename(f)));
  const outputs: FillOutput[] = [];
  await runJobs({ kind: "fill", postState: o.postState }, files.map((file) => ({ file, id: file })), {
    jobs: o.jobs,
    signal,
    onResult: (_, output) => {
      outputs.push(output as FillOutput);
    },
    onFinished: () => progress.finished(0),
  });
  progress.end();
  const received = stopRequested();
  if (received !== null) {
    const stopped = new Stopped(received);
    stopped.kept = `no fixture written (stopped while filling, ${outputs.length} of ${count(files.length, "scenario")} filled)`;
    throw stopped;
  }
  let failed = 0;
  for (const out of outputs) {
    if ("unusable" in out) throw new InputError(out.file, out.unusable.path, out.unusable.reason);
    if ("failed" in out) {
      // A scenario that fails is reported and skipped; the others are still filled.
      process.stderr.write(`cbqs: ${oneLine(`${out.file}: ${out.failed}`)}\n`);
      failed++;
      continue;
    }
    const name = byFile.get(out.file)!;
    texts.push({ path: join(o.output, name), text: out.text });
    filled.set(name, out.summary);
  }
  return failed;
}

export function mismatchLines(file: string, m: Mismatch): string[] {
  // Values echo fixture content: terminal-safe like every error line.
  return [oneLine(`MISMATCH ${file}: ${mismatchText(m)}`), ...m.details.map((d) => `  ${oneLine(d)}`)];
}

/**
 * A fixture's outcome as a report's test case (docs/reference/formats/fixture.md "Reports"): a mismatch is a
 * failure whose message is the first difference and whose details are the differing keys, an
 * unusable fixture an error; `reproduce` is the command line that shows it again.
 */
export function fixtureCase(r: FixtureReport, id: string, seconds: number, reproduce: string): TestCase {
  const base = { id, seconds, blocks: r.blocks, txs: r.txs };
  if (r.mismatch !== undefined) return { ...base, status: "failed", type: "mismatch", message: oneLine(mismatchText(r.mismatch)), details: r.mismatch.details.map(oneLine), reproduce };
  if (r.status === "unusable") return { ...base, status: "error", type: "unusable", message: oneLine(r.error ?? "unusable"), reproduce };
  return { ...base, status: "passed" };
}

/** The one summary line of a replay (also the basis of `npm start`'s verdict). */
export function replaySummary(reports: readonly FixtureReport[], seconds: number, shard?: Shard, indexFailures = 0): string {
  const n = (s: FixtureReport["status"]) => reports.filter((r) => r.status === s).length;
  const blocks = reports.reduce((x, r) => x + r.blocks, 0);
  const txs = reports.reduce((x, r) => x + r.txs, 0);
  return (
    `replay${shard === undefined ? "" : ` (shard ${shard.index}/${shard.count})`}: ${count(reports.length, "fixture")}: ` +
    `${n("ok")} ok, ${count(n("mismatch"), "mismatch", "mismatches")}, ${n("unusable")} unusable${indexFailures === 0 ? "" : `, ${count(indexFailures, "index failure")}`}; ` +
    `${count(blocks, "block")}, ${count(txs, "tx", "txs")} in ${seconds.toFixed(2)} s (${rate(blocks, seconds)} blocks/s, ${rate(txs, seconds)} tx/s)`
  );
}

/** `replay`'s targets: files and directories, expanded, in order, each file once, with the target it was found under. */
function targetFiles(targets: readonly string[]): Map<string, string> {
  const found = new Map<string, string>();
  for (const target of targets) for (const file of fixtureFiles(target)) if (!found.has(file)) found.set(file, target);
  return found;
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

/** A replay's report: a suite per target argument, a case per fixture (docs/reference/formats/fixture.md "Reports"). */
function replaySuites(runs: ReadonlyArray<{ report: FixtureReport; seconds: number }>, found: ReadonlyMap<string, string>, o: { started: Date; shard: Shard | undefined; toHeight: bigint | undefined }): Suite[] {
  const byTarget = new Map<string, Array<{ report: FixtureReport; seconds: number }>>();
  for (const run of runs) {
    const target = found.get(run.report.file)!;
    byTarget.set(target, [...(byTarget.get(target) ?? []), run]);
  }
  return [...byTarget].map(([target, mine]) => {
    const seconds = mine.reduce((x, r) => x + r.seconds, 0);
    return {
      name: `cbqs replay ${target}${o.shard === undefined ? "" : ` (shard ${o.shard.index}/${o.shard.count})`}`,
      classname: "cbqs.replay",
      cases: mine.map((r) => fixtureCase(r.report, fixtureId(r.report.file, target), r.seconds, replayCommand(r.report.file, o.toHeight))),
      seconds,
      timestamp: o.started,
      summary: replaySummary(mine.map((r) => r.report), seconds, o.shard),
    };
  });
}

const REPLAY_REPORT = { title: "cbqs replay", caseLabel: "fixture" };

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

function registerIndex(program: Command): void {
  program
    .command("index")
    .description("write <dir>/index.json (cbqs-fixture-index/v1) for the fixtures of a directory: test ids, SHA-256, sizes, instructions and errors (fill writes it too)")
    .argument("<dir>", "a directory of fixtures (.json or .json.gz)")
    .addHelpText("after", exitCodes("index written", "(not used)", "a fixture is unusable (malformed), or the directory has none"))
    .action(async (dir: string) => {
      const { indexDirectory } = await import("../harness/corpus-index.js");
      process.stdout.write(`${indexDirectory(dir)}\n`);
    });
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

function registerReplay(program: Command): void {
  const replay = program
    .command("replay")
    .description("re-execute cbqs-fixture/v1 fixtures from genesis and check every root, receipt and digest")
    .argument("<fixture...>", "fixture files (.json or .json.gz) or directories of them")
    .option("--to-height <n>", "stop after the last block at or below this height");
  addSelectionOptions(replay, "replay")
    .option("--jobs <n>", jobsHelp("fixtures replayed in parallel on worker threads, reported in order (1 with --trace or --pipeline)"))
    .option("--quiet", "no progress on stderr")
    .option("--json", "print a cbqs-replay/v1 JSON report instead of text")
    .addOption(outputOption("--trace <file>", "write a cbqs-trace/v1 JSON line per transaction (single fixture only)"))
    .option("--db <dir>", "commit every verified block to this store (LMDB); run again, compare every stored block with the fixture's, then resume after its last block (one fixture file)")
    .option("--snapshot-interval <n>", SNAPSHOT_INTERVAL_HELP)
    .option("--retain-blocks <n>", `with --db, blocks below the head whose undo rows the store keeps (as cbqs node --retain-blocks; older ones are pruned); default ${DEFAULT_RETAIN_BLOCKS}`)
    .option(
      "--pipeline",
      "compute each block's state root, tx/receipt/logs roots and signature checks on worker threads while the next block executes " +
        "(same report; for long chains: each fixture starts its workers, so small fixtures replay slower; not with --trace or --db)",
    );
  reportOptions(replay, "a testcase per fixture, a testsuite per target")
    .addHelpText(
      "after",
      exitCodes(
        "every fixture matches",
        "a fixture does not match (1 wins: a mismatch is never hidden by another fixture's unusable input; every fixture is reported)",
        "a fixture is unusable (malformed, unreadable, unexecutable) and none mismatched; bad options; a --junit/--report file that cannot be written",
        "in memory, nothing is written (a --trace file is dropped); with --db, every block committed before the one in progress is kept, that one is finished and committed",
      ),
    )
    .action(async (targets: string[], opts: ReplayOpts) => {
      const started = new Date();
      checkReportFiles(opts);
      const toHeight = opts.toHeight === undefined ? undefined : decimalOption("--to-height", opts.toHeight);
      const { newStore, replayExitCode, replayFileSteps, ReplayPipeline } = await import("../harness/replay.js");
      if (opts.pipeline === true && (opts.trace !== undefined || opts.db !== undefined)) throw new UsageError("--pipeline cannot be combined with --trace or --db");
      if (opts.db !== undefined) {
        if (opts.trace !== undefined) throw new UsageError("--trace and --db are exclusive");
        for (const [given, flag] of [[opts.shard, "--shard"], [opts.k, "-k"], [opts.instruction, "--instruction"], [opts.error, "--error"], [opts.list, "--list"], [opts.jobs, "--jobs"]] as const) {
          if (given !== undefined) throw new UsageError(`${flag} and --db are exclusive: a store holds one chain`);
        }
        const interval = snapshotInterval(opts.snapshotInterval);
        const retainBlocks = opts.retainBlocks === undefined ? DEFAULT_RETAIN_BLOCKS : intOption("--retain-blocks", opts.retainBlocks, 1_000_000);
        return replayIntoStore(targets, opts.db, { toHeight, interval, retainBlocks, progress: opts.json ? "off" : progressMode(opts.quiet), json: opts.json === true, reports: opts, started });
      }
      if (opts.snapshotInterval !== undefined) throw new UsageError("--snapshot-interval needs --db");
      if (opts.retainBlocks !== undefined) throw new UsageError("--retain-blocks needs --db");
      const selection = await selectFromOptions(targets, opts);
      if (opts.list === true) {
        printList(selection.files);
        process.stdout.write(indexFailureLines(selection.indexFailures));
        process.exitCode = selection.indexFailures.length > 0 ? EXIT_REJECT : EXIT_OK;
        return;
      }
      const signal = watchSignals();
      const files = selection.files.map((f) => f.file);
      const found = new Map(selection.files.map((f) => [f.file, f.target]));
      if (opts.trace !== undefined && files.length !== 1) throw new UsageError("--trace needs a single fixture file");
      // --trace and --pipeline replay one fixture at a time (a trace is one stream; the pipeline has its own threads).
      if (opts.jobs !== undefined && jobsCount(opts.jobs) > 1 && (opts.trace !== undefined || opts.pipeline === true)) throw new UsageError("--jobs above 1 cannot be combined with --trace or --pipeline");
      const jobs = opts.trace !== undefined || opts.pipeline === true ? 1 : Math.min(jobsCount(opts.jobs), files.length);
      const clock = new Stopwatch();
      const mode = opts.json ? "off" : progressMode(opts.quiet);
      const reports: FixtureReport[] = [];
      const seconds: number[] = [];
      const kept = () => `${reports.length} of ${count(files.length, "fixture")} replayed before it; nothing written${opts.trace === undefined ? "" : ` (the trace ${opts.trace} is not)`}`;
      if (jobs > 1) await replayOnWorkers(files, { jobs, toHeight, signal, progress: mode, kept }, (r, s) => (reports.push(r), seconds.push(s)));
      else await keeping(kept, () =>
        withTrace(opts.trace, async (trace) => {
          // One worker for the whole run, started before the first fixture is read (docs/engineering/performance.md).
          const pipeline = opts.pipeline === true ? new ReplayPipeline() : undefined;
          try {
            for (const file of files) {
              const tracing = trace === null ? null : new TracingStore(newStore());
              const watch = new Stopwatch();
              const report = await stoppable(
                replayFileSteps(file, {
                  progress: mode,
                  ...(toHeight === undefined ? {} : { toHeight }),
                  ...(tracing === null ? {} : { store: tracing }),
                  ...(pipeline === undefined ? {} : { pipeline }),
                  onBlock: (p, executed) => {
                    if (tracing !== null) trace!.write(blockTraceLines(p.height, tracing.recorder, executed.envelopes, executed.results.receipts, executed.outcomes));
                  },
                }),
              );
              reports.push(report);
              seconds.push(watch.seconds());
            }
          } finally {
            pipeline?.close();
          }
        }),
      );
      const shard = opts.shard === undefined ? undefined : (await import("../harness/replay.js")).parseShard(opts.shard);
      const summary = replaySummary(reports, clock.seconds(), shard, selection.indexFailures.length);
      if (opts.json) {
        // scenario-format §1: integers are decimal strings on output, per fixture as in the totals.
        const fixtures = reports.map((r) => ({
          ...r,
          blocks: String(r.blocks),
          txs: String(r.txs),
          ...(r.mismatch === undefined ? {} : { mismatch: { ...r.mismatch, height: r.mismatch.height.toString() } }),
        }));
        const blocks = String(reports.reduce((x, r) => x + r.blocks, 0));
        const txs = String(reports.reduce((x, r) => x + r.txs, 0));
        const indexFailures = selection.indexFailures.length === 0 ? {} : { index_failures: selection.indexFailures };
        process.stdout.write(JSON.stringify({ format: "cbqs-replay/v1", fixtures, blocks, txs, ...indexFailures }, null, 2) + "\n");
        process.stderr.write(summary + "\n");
      } else {
        for (const r of reports) {
          if (r.status === "unusable") process.stderr.write(errorLine(r.error!));
          if (r.mismatch !== undefined) process.stdout.write(mismatchLines(r.file, r.mismatch).join("\n") + "\n");
        }
        process.stdout.write(indexFailureLines(selection.indexFailures) + summary + "\n");
      }
      const runs = reports.map((report, i) => ({ report, seconds: seconds[i]! }));
      // A corpus that differs from its index fails like a mismatch: the run did not test what the index promises.
      const verdict = selection.indexFailures.length > 0 ? EXIT_REJECT : replayExitCode(reports);
      process.exitCode = await withReports(opts, verdict, () => replaySuites(runs, found, { started, shard, toHeight }), REPLAY_REPORT);
    });
}


/**
 * `replay <fixture> --db <dir>`: the fixture replayed into a persistent store, resuming after
 * the store's head (src/node/replay-db.ts). Exit 0 all verified, 1 a mismatch (that block is not
 * committed), 2 unusable input or a store holding another chain (nothing touched), 130/143 when
 * stopped by SIGINT/SIGTERM (after the block in progress is committed).
 */
async function replayIntoStore(
  targets: readonly string[],
  dir: string,
  o: { toHeight: bigint | undefined; interval: bigint; retainBlocks: number; progress: ProgressMode; json: boolean; reports: { junit?: string; report?: string }; started: Date },
): Promise<void> {
  const files = [...targetFiles(targets).keys()];
  if (files.length !== 1 || files[0] !== targets[0]) throw new UsageError("--db needs one fixture file (a store holds one chain)");
  const file = files[0]!;
  const [{ ReplayInputError }, { replayIntoDb, StoredChainError }, { comparedText, heightSpan }, { openStore, storeUsageError }] = await Promise.all([
    import("../harness/replay.js"),
    import("../node/replay-db.js"),
    import("../node/stored-chain.js"),
    import("./store.js"),
  ]);
  const fixture = readFixture(file);
  const db = openStore(dir, { snapshotInterval: o.interval, retainBlocks: o.retainBlocks });
  const signal = watchSignals();
  const clock = new Stopwatch();
  const line = new Progress(`replay ${file}`, o.progress);
  let outcome: Awaited<ReturnType<typeof replayIntoDb>>;
  try {
    outcome = await replayIntoDb(fixture, db, { ...(o.toHeight === undefined ? {} : { toHeight: o.toHeight }), signal, onBlock: (p) => line.update({ done: p.blocksDone, total: p.blocksTotal, unit: "blocks", height: { at: p.height, last: p.lastHeight }, txs: p.txsDone }) });
  } catch (err) {
    if (err instanceof StoredChainError) throw new UsageError(`--db ${dir}: ${err.message}`);
    if (err instanceof ReplayInputError) throw new InputError(file, err.path, err.message);
    throw storeUsageError(dir, err) ?? err;
  } finally {
    line.end();
    db.close();
  }
  const seconds = clock.seconds();
  const signalName = stopRequested() ?? "SIGINT";
  const end = outcome.stopped ? `stopped by ${signalName}` : outcome.mismatch !== null ? "mismatch" : "ok";
  const compared = outcome.compared;
  const rates = `${count(outcome.blocks, "block")}, ${count(outcome.txs, "tx", "txs")} in ${seconds.toFixed(2)} s (${rate(outcome.blocks, seconds)} blocks/s, ${rate(outcome.txs, seconds)} tx/s)`;
  let what: string;
  if (outcome.resumedAfter === null) what = `from genesis, ${rates}`;
  else if (compared !== null && compared.mismatch !== null) what = `the stored chain differs from the fixture at ${compared.mismatch.height === 0n ? "genesis" : `block ${compared.mismatch.height}`}: nothing executed, the store is unchanged`;
  else if (o.toHeight !== undefined && o.toHeight < outcome.resumedAfter) {
    const span = compared === null || compared.compared === 0 ? `genesis only (the store holds no block at or below height ${o.toHeight})` : `${heightSpan(compared.first!, compared.last!)} (${count(compared.compared, "stored block")})`;
    what = `the store is at height ${outcome.resumedAfter}, above --to-height ${o.toHeight}: ${span} compared with the store, identical; nothing executed`;
  } else what = `resumed after height ${outcome.resumedAfter}, ${rates}`;
  const summary = `replay: ${file} into ${dir}: ${end}; ${what}; store head ${outcome.head ?? "none"}`;
  if (outcome.pruned !== null) {
    const p = outcome.pruned;
    process.stderr.write(`cbqs: pruned undo rows of blocks ${p.from}–${p.to} (${count(p.blocks, "block")} below the window of --retain-blocks ${o.retainBlocks})\n`);
  }
  if (o.json) {
    const m = outcome.mismatch;
    process.stdout.write(
      JSON.stringify(
        {
          format: "cbqs-replay/v1",
          fixtures: [{ file, name: fixture.name, status: m === null ? "ok" : "mismatch", blocks: String(outcome.blocks), txs: String(outcome.txs), ...(m === null ? {} : { mismatch: { ...m, height: m.height.toString() } }) }],
          blocks: String(outcome.blocks),
          txs: String(outcome.txs),
          store: {
            dir,
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
          },
        },
        null,
        2,
      ) + "\n",
    );
    process.stderr.write(summary + "\n");
  } else {
    if (outcome.mismatch !== null) process.stdout.write(mismatchLines(file, outcome.mismatch).join("\n") + "\n");
    else if (compared !== null) process.stdout.write(`stored chain: ${comparedText(compared)}\n`);
    process.stdout.write(summary + "\n");
  }
  if (outcome.stopped) {
    const stopped = new Stopped(signalName);
    stopped.kept = `the store ${dir} holds every block through height ${outcome.head ?? "none"}, each committed whole; run again to resume`;
    process.stderr.write(errorLine(stopped));
    process.exitCode = stopped.exitCode;
    return;
  }
  // One fixture, one case; what the store already held and was compared is in the summary line.
  const report: FixtureReport = { file, name: fixture.name, status: outcome.mismatch === null ? "ok" : "mismatch", blocks: outcome.blocks, txs: outcome.txs, ...(outcome.mismatch === null ? {} : { mismatch: outcome.mismatch }) };
  const suite = (): Suite[] => [
    {
      name: `cbqs replay ${file} --db ${dir}`,
      classname: "cbqs.replay",
      cases: [fixtureCase(report, fixtureId(file, file), seconds, `${replayCommand(file, o.toHeight)} --db ${shellWord(dir)}`)],
      seconds,
      timestamp: o.started,
      summary,
    },
  ];
  process.exitCode = await withReports(o.reports, outcome.mismatch !== null ? EXIT_REJECT : EXIT_OK, suite, REPLAY_REPORT);
}

/** JSON-lines output, written as it is produced (a long chain's trace does not fit in memory). */
class TraceFile {
  private readonly out: Output;
  constructor(path: string) {
    this.out = new Output(path);
  }
  write(lines: string[]): void {
    if (lines.length > 0) this.out.write(lines.join("\n") + "\n");
  }
  close(): void {
    this.out.close();
  }
  abort(): void {
    this.out.abort();
  }
}

/** Runs `produce` with a trace output (or none): closed after, dropped if `produce` throws or is stopped. */
async function withTrace<T>(path: string | undefined, produce: (trace: TraceFile | null) => Promise<T>): Promise<T> {
  const trace = path === undefined ? null : new TraceFile(path);
  let result: T;
  try {
    result = await produce(trace);
  } catch (err) {
    trace?.abort();
    throw err;
  }
  trace?.close();
  return result;
}

export function writeJson(path: string, value: unknown): void {
  writing(new Output(path), (out) => out.write(JSON.stringify(value, null, 2) + "\n"));
}

function registerT8n(program: Command): void {
  program
    .command("t8n")
    .description("one block's state transition from an explicit pre-state (geth evm t8n convention; docs/fixtures.md)")
    .requiredOption("--input.alloc <file>", "pre-state: a cbqs-state-dump/v1 file")
    .requiredOption("--input.txs <file>", "JSON array of 0x-hex transaction envelopes")
    .requiredOption("--input.env <file>", "block env: height, timestamp, chain_id, chain_instance_id, governance, …")
    .addOption(outputOption("--output.result <file>", "result JSON; - is stdout", "-"))
    .addOption(outputOption("--output.alloc <file>", "post-state dump (cbqs-state-dump/v1); not written when omitted"))
    .addOption(outputOption("--trace <file>", "write a cbqs-trace/v1 JSON line per transaction"))
    .option("--quiet", "no progress on stderr")
    .option("--server", "serve the cbqs-t8n-server/v1 protocol on stdin/stdout instead (docs/fixtures.md §4.1); no --input/--output/--trace")
    .option("--max-line-bytes <n>", "with --server: the longest request line accepted", String(DEFAULT_T8N_LINE_BYTES))
    // With --server the inputs come in requests: the three files are no longer required.
    .on("option:server", function (this: Command) {
      for (const o of this.options) if (o.long?.startsWith("--input.") === true) o.mandatory = false;
    })
    .addHelpText(
      "after",
      exitCodes(
        "the block was executed and the result written (left-out transactions are listed in it, not an error); with --server: stdin ended, every request answered",
        "(not used)",
        undefined,
        "nothing is written (no result, post-state or trace file); with --server: after answering the request in progress",
      ),
    )
    .action(async (opts: Record<string, string | boolean | undefined>, command: Command) => {
      if (opts["server"] === true) {
        const given = ["input.alloc", "input.txs", "input.env", "output.alloc", "trace"].find((k) => opts[k] !== undefined);
        if (given !== undefined) throw new UsageError(`--${given} is not used with --server (a request carries the inputs, an answer the outputs)`);
        const { LocalBackend, serveStdio } = await import("../harness/t8n-server.js");
        return serveStdio(new LocalBackend(`cbqs-emulator ${program.version() ?? "unknown"}`), maxLineBytes(opts["maxLineBytes"] as string));
      }
      if (command.getOptionValueSource("maxLineBytes") === "cli") throw new UsageError("--max-line-bytes is only used with --server");
      watchSignals();
      const allocFile = opts["input.alloc"] as string;
      const mode = progressMode(opts["quiet"] as boolean | undefined);
      const reading = new Progress(`t8n ${allocFile} (reading)`, mode);
      const alloc = await stoppable(readDumpSteps(allocFile, (n) => reading.update({ done: n, unit: "entries" })));
      reading.end();
      const committing = new Progress(`t8n ${allocFile} (committing the pre-state)`, mode);
      const preState = (n: number) => committing.update({ done: n, total: alloc.length, unit: "entries" });
      const txsFile = opts["input.txs"] as string;
      const envFile = opts["input.env"] as string;
      const txs = inFile(txsFile, () => parseTxs(readJson(txsFile)));
      const env = inFile(envFile, () => parseEnv(readJson(envFile)));
      // The result, post-state and trace appear together: stopped or failed, none of them does.
      const result = new Output(opts["output.result"] as string);
      await withTrace(opts["trace"] as string | undefined, async (trace) => {
        let tracing: TracingStore | null = null;
        const r = await stoppable(transitionSteps(alloc, txs, env, (s) => (trace === null ? s : (tracing = new TracingStore(s))), preState));
        committing.end();
        trace?.write(blockTraceLines(env.height, tracing!.recorder, r.included.envelopes, r.included.results.receipts, r.included.outcomes, r.included.indices));
        try {
          result.write(JSON.stringify(r.result, null, 2) + "\n");
          if (opts["output.alloc"] !== undefined) {
            // Written entry by entry: a large post-state is never one string.
            const header = dumpHeader({ height: env.height, stateRoot: r.store.root() });
            await writingStoppable(new Output(opts["output.alloc"] as string), (out) =>
              jsonDocumentSteps(out, { ...header, entries: new Streamed(dumpEntryViews(r.store.entries(), registryRecords)) }),
            );
          }
        } catch (err) {
          result.abort();
          throw err;
        }
        result.close();
      }).catch((err: unknown) => {
        result.abort();
        throw err;
      });
      process.exitCode = EXIT_OK;
    });
}

/** `--max-line-bytes`: from 1 KiB (a request with an empty state fits) to the buffered-document bound. */
function maxLineBytes(text: string): number {
  const n = intOption("--max-line-bytes", text, MAX_BUFFERED_DOCUMENT_BYTES);
  if (n < 1024) throw new UsageError(`--max-line-bytes must be at least 1024 (got ${n})`);
  return n;
}

function registerT8nAdapter(program: Command): void {
  program
    .command("t8n-adapter")
    .description("serve the cbqs-t8n-server/v1 protocol on stdin/stdout in front of a per-call t8n command (docs/fixtures.md §4.1)")
    .argument("<command>", "per-call t8n command, run by /bin/sh with the five t8n flags appended (as cbqs fuzz runs it)")
    .option("--timeout <seconds>", "time allowed for one invocation (then the request gets a t8n_failed error)", "600")
    .option("--max-line-bytes <n>", "the longest request line accepted", String(DEFAULT_T8N_LINE_BYTES))
    .addHelpText(
      "after",
      exitCodes(
        "stdin ended and every request was answered (a failed request is an error answer, not an exit code)",
        "(not used)",
        "unusable options (one error line)",
        "after answering the request in progress",
      ),
    )
    .action(async (command: string, opts: { timeout: string; maxLineBytes: string }) => {
      if (command.trim() === "") throw new UsageError("the t8n command is empty: name the per-call t8n command to run, e.g. 'node dist/src/cli.js t8n --quiet'");
      const timeout = intOption("--timeout", opts.timeout, 86_400);
      if (timeout === 0) throw new UsageError("--timeout must be at least 1 second");
      const bound = maxLineBytes(opts.maxLineBytes);
      const [{ CommandBackend }, { serveStdio }] = await Promise.all([import("../target/t8n-adapter.js"), import("../harness/t8n-server.js")]);
      const backend = new CommandBackend(command, timeout * 1000);
      try {
        await serveStdio(backend, bound);
      } finally {
        backend.close();
      }
    });
}

function registerTrace(program: Command): void {
  program
    .command("trace")
    .description("replay a fixture up to block N and print the cbqs-trace/v1 lines of that block")
    .argument("<fixture>", "fixture file (.json or .json.gz)")
    .requiredOption("--block <n>", "height of the block to trace")
    .addOption(outputOption("-o, --output <file>", "trace file; - is stdout", "-"))
    .addHelpText(
      "after",
      exitCodes(
        "the block replays to the fixture's values and its trace is written",
        "the fixture does not replay to its own values before or at the block (the mismatch on stderr)",
        undefined,
        "no trace file is written",
      ),
    )
    .action(async (file: string, opts: { block: string; output: string }) => {
      watchSignals();
      const height = decimalOption("--block", opts.block);
      const { newStore, replayFixtureSteps, ReplayInputError } = await import("../harness/replay.js");
      const fixture = await stoppable(readFixtureSteps(file));
      if (!fixture.blocks.some((b) => b.height === height)) throw new UsageError(`${file}: ${noBlockAt(fixture, height)}`);
      const tracing = new TracingStore(newStore());
      tracing.recorder.active = fixture.blocks[0]!.height === height;
      const outcome = await withTrace(opts.output, async (trace) => {
        try {
          return await stoppable(replayFixtureSteps(fixture, {
            toHeight: height,
            store: tracing,
            onBlock: (p, executed) => {
              if (p.height === height) trace!.write(blockTraceLines(height, tracing.recorder, executed.envelopes, executed.results.receipts, executed.outcomes));
              // Record only the traced block: the next block to begin is the one after p.
              const next = fixture.blocks[p.blocksDone];
              tracing.recorder.active = next !== undefined && next.height === height;
            },
          }));
        } catch (err) {
          if (err instanceof ReplayInputError) throw new InputError(file, err.path, err.message);
          throw err;
        }
      });
      if (outcome.mismatch !== null) {
        process.stderr.write(mismatchLines(file, outcome.mismatch).join("\n") + "\n");
        process.exitCode = EXIT_REJECT;
      } else process.exitCode = EXIT_OK;
    });
}

function registerDiff(program: Command): void {
  program
    .command("diff")
    .description(
      "first divergence between two run documents, fixtures, t8n results, state dumps or traces, or a t8n result and the fixture block of its height",
    )
    .argument("<ours>", "the reference (expected)")
    .argument("<theirs>", "the implementation under test (got)")
    .addHelpText(
      "after",
      exitCodes(
        "the two are the same (prints same)",
        "they differ (the first difference, narrowed to the field)",
        "unreadable or malformed input (both are validated completely first), documents that cannot be compared",
        "while reading, nothing printed",
      ),
    )
    .action(async (ours: string, theirs: string) => {
      watchSignals();
      // Both documents are read and validated completely (the loaders replay and t8n use) first.
      const a = await stoppable(readDocumentSteps(ours, ["run", "fixture", "t8n", "dump", "trace"]));
      const b = await stoppable(readDocumentSteps(theirs, ["run", "fixture", "t8n", "dump", "trace"]));
      const { compareDocuments, DiffInputError } = await import("../harness/diff.js");
      let outcome: DiffOutcome;
      try {
        outcome = compareDocuments(a, b);
      } catch (err) {
        if (err instanceof DiffInputError) throw new UsageError(`${ours} and ${theirs}: ${err.message}`);
        throw err;
      }
      // Values echo input: terminal-safe like every error line (detail lines keep their indent).
      const safe = (l: string) => (l.startsWith("  ") ? `  ${oneLine(l)}` : oneLine(l));
      const lines = [...(outcome.lines ?? ["same"]), ...(outcome.note === null ? [] : [`  ${outcome.note}`])];
      process.stdout.write(lines.map(safe).join("\n") + "\n");
      process.exitCode = outcome.lines === null ? EXIT_OK : EXIT_REJECT;
    });
}
