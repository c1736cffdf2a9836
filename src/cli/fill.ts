// `cbqs fill` (docs/fixtures.md §2): scenarios run and written as cbqs-fixture/v1 fixtures, with
// the corpus index of their directory; and `cbqs fixture index` (§11), the index of any directory
// of fixtures. A scenario that fails its own expectations is reported and skipped (exit 1); the
// others are written. The fill pipeline and the worker pool are imported by the action.
import { existsSync, mkdirSync } from "node:fs";
import { basename, join } from "node:path";
import { echo } from "../bounds.js";
import { GenesisError } from "../engine/errors.js";
import { count } from "../format.js";
import { inFile, inFileSteps, readScenario } from "../harness/documents.js";
import type { PostStateMode } from "../harness/fill.js";
import { fixtureFileName, fixtureJsonText } from "../harness/fixture.js";
import type { FixtureSummary } from "../harness/corpus-index.js";
import { Phases, progressMode } from "../harness/progress.js";
import { describeIoError } from "../io-error.js";
import type { FillOutput } from "../jobs/handlers.js";
import { InputError } from "../json/read.js";
import { Output, writing } from "../json/write.js";
import { checkOutputPath } from "../output-file.js";
import { keeping, stoppable, Stopped, stopRequested, watchSignals } from "../steps.js";
import { EXIT_OK, EXIT_REJECT, exitCodes, jobsCount, jobsOption, oneLine, option, outputDirOption, UsageError } from "./common.js";
import type { CommandSpec } from "./define.js";

interface FillOpts {
  output: string;
  postState: string;
  gzip?: boolean;
  quiet?: boolean;
  jobs?: string;
}

/** What was filled: the fixture texts to write, in the order given, their summaries for the index, and how many scenarios failed. */
interface Filled {
  texts: Array<{ path: string; text: string }>;
  summaries: Map<string, FixtureSummary>;
  failed: number;
}

export const commands: Readonly<Record<string, CommandSpec>> = {
  fill: {
    description: "run cbqs-scenario/v1 documents and write one cbqs-fixture/v1 per scenario (bytes + expected results)",
    arguments: [["<scenario...>", "scenario files (.json or .json.gz)"]],
    options: () => [
      outputDirOption("-o, --output <dir>", "directory for the fixtures (file name from the scenario name)", "the directory the fixtures are written into").makeOptionMandatory(),
      option("--post-state <mode>", "which blocks carry a post_state dump: every (each block), final (the last block only) or none", "every"),
      option("--gzip", "write <name>.json.gz"),
      jobsOption("scenarios filled in parallel on worker threads, written in the order given"),
      option("--quiet", "no progress on stderr"),
    ],
    exits: exitCodes(
      "every scenario filled",
      "a scenario fails its own expectations (reported and skipped; the others are written)",
      undefined,
      "the fixtures already written are kept (each complete), the one being written is dropped",
    ),
    action: async (files: string[], opts: FillOpts) => {
      watchSignals();
      if (!["none", "final", "every"].includes(opts.postState)) throw new UsageError(`--post-state must be none, final or every (got ${echo(opts.postState)})`);
      const settings = { postState: opts.postState as PostStateMode, gzip: opts.gzip === true, output: opts.output, quiet: opts.quiet === true };
      const jobs = Math.min(jobsCount(opts.jobs), files.length);
      const filled = jobs > 1 ? await fillOnWorkers(files, { ...settings, jobs }) : await fillInTurn(files, settings);
      await writeFixtures(filled, opts.output);
      process.exitCode = filled.failed > 0 ? EXIT_REJECT : EXIT_OK;
    },
  },

  index: {
    description: "write <dir>/index.json (cbqs-fixture-index/v1) for the fixtures of a directory: test ids, SHA-256, sizes, instructions and errors (fill writes it too)",
    arguments: [["<dir>", "a directory of fixtures (.json or .json.gz)"]],
    exits: exitCodes("index written", "(not used)", "a fixture is unusable (malformed), or the directory has none"),
    action: async (dir: string) => {
      const { indexDirectory } = await import("../harness/corpus-index.js");
      process.stdout.write(`${indexDirectory(dir)}\n`);
    },
  },
};

interface FillSettings {
  postState: PostStateMode;
  gzip: boolean;
  output: string;
  quiet: boolean;
}

/** A scenario that fails is reported and skipped; the others are still filled. */
function reportFailed(file: string, message: string): void {
  process.stderr.write(`cbqs: ${oneLine(`${file}: ${message}`)}\n`);
}

/**
 * A scenario's fixture name, checked before the scenario is filled: two scenarios of one name are
 * refused, and so is a name that cannot be written (when the directory exists already).
 */
function claimName(file: string, scenarioName: string, o: FillSettings, names: Map<string, string>): string {
  const name = inFile(file, () => fixtureFileName(scenarioName)) + (o.gzip ? ".gz" : "");
  if (names.has(name)) throw new UsageError(`${file}: scenario name "${echo(scenarioName)}" is also used by ${names.get(name)}`);
  names.set(name, file);
  if (existsSync(o.output)) checkOutputPath(join(o.output, name));
  return name;
}

/** The scenarios filled one after the other on this thread, each read and named just before it is filled. */
async function fillInTurn(files: readonly string[], o: FillSettings): Promise<Filled> {
  const [{ FillError, fillSteps }, { fixtureSummary }] = await Promise.all([import("../harness/fill.js"), import("../harness/corpus-index.js")]);
  const filled: Filled = { texts: [], summaries: new Map(), failed: 0 };
  const names = new Map<string, string>();
  for (const file of files) {
    const scenario = readScenario(file);
    const name = claimName(file, scenario.name, o, names);
    const progress = new Phases(progressMode(o.quiet));
    try {
      const fixture = await keeping(
        () => `no fixture written (stopped while filling ${file})`,
        () => stoppable(inFileSteps(file, fillSteps(scenario, o.postState, (phase, s) => progress.update(`fill ${file} (${phase})`, s)))),
      );
      filled.texts.push({ path: join(o.output, name), text: inFile(file, () => fixtureJsonText(fixture)) });
      filled.summaries.set(name, fixtureSummary(fixture));
    } catch (err) {
      if (err instanceof GenesisError) throw new InputError(file, scenario.genesisPath, `invalid genesis: ${err.message}`);
      if (!(err instanceof FillError)) throw err;
      reportFailed(file, err.message);
      filled.failed++;
    } finally {
      progress.end();
    }
  }
  return filled;
}

/**
 * `fill --jobs N`: every scenario read and its fixture name checked first (a malformed one stops
 * the command before any work), then filled on N worker threads; results in the order given.
 */
async function fillOnWorkers(files: readonly string[], o: FillSettings & { jobs: number }): Promise<Filled> {
  const { runJobs } = await import("../jobs/pool.js");
  const names = new Map<string, string>();
  const byFile = new Map(files.map((file) => [file, claimName(file, readScenario(file).name, o, names)]));
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
  const filled: Filled = { texts: [], summaries: new Map(), failed: 0 };
  for (const out of outputs) {
    if ("unusable" in out) throw new InputError(out.file, out.unusable.path, out.unusable.reason);
    if ("failed" in out) {
      reportFailed(out.file, out.failed);
      filled.failed++;
      continue;
    }
    const name = byFile.get(out.file)!;
    filled.texts.push({ path: join(o.output, name), text: out.text });
    filled.summaries.set(name, out.summary);
  }
  return filled;
}

/** The fixtures written into `dir` (created now: it was checked before any scenario was filled), then its corpus index. */
async function writeFixtures(filled: Filled, dir: string): Promise<void> {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new UsageError(`cannot create the directory ${dir}: ${describeIoError(err)}`);
  }
  let written = 0;
  await keeping(
    () => `${written} of ${count(filled.texts.length, "fixture")} written, each complete`,
    () =>
      stoppable(
        (function* () {
          for (const { path, text } of filled.texts) {
            writing(new Output(path), (out) => out.write(text)); // a .gz name is written gzipped
            process.stdout.write(`${path}\n`);
            written++;
            yield;
          }
        })(),
      ),
  );
  // The corpus index covers every fixture of the directory, the ones filled earlier too.
  const { indexDirectory } = await import("../harness/corpus-index.js");
  if (written > 0) process.stdout.write(`${indexDirectory(dir, filled.summaries)}\n`);
}
