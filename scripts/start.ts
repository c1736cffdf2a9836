// `npm start`: the main job, with exactly one verdict line on stdout. It generates and fills the
// deterministic long chain (or reuses the one cached from an earlier run by the same generator
// version and code, scripts/long-chain-cache.ts), replays every fixture of the corpus and the long chain from genesis
// (every root, receipt and the gas-vector digest of every block), and re-verifies the gas-vector
// artifact (every vector re-executed, the file's SHA-256 against the pinned one). Progress and
// every detail go to stderr; stdout gets one line naming what was verified:
//   OK: 20 fixtures (10,079 blocks, 53,085 txs) replayed and matched; gas-vector SHA-256 a1dc… verified (13 vectors re-executed)
//   FAILED: (what failed); (what was verified nonetheless)
// Exit 0 OK, 1 a mismatch or a gas-vector difference, 2 unusable input; as in replay, a mismatch
// wins over unusable input, so it is never hidden.
//
//   npm run build && node dist/scripts/start.js [--corpus fixtures/corpus] [--long-chain .cache/long-chain.json.gz]
//        [--long-chain-blocks 10000] [--long-chain-min-txs 50000] [--jobs N] [--quiet]
import { pathToFileURL } from "node:url";
import { errorLine, oneLine } from "../src/cli/common.js";
import { verifyArtifactFile } from "../src/cli/gas.js";
import { mismatchLines, replaySummary } from "../src/cli/replay-report.js";
import { fixtureFiles } from "../src/harness/documents.js";
import { progressMode, Stopwatch } from "../src/harness/progress.js";
import { count } from "../src/format.js";
import { replayExitCode, type FixtureReport } from "../src/harness/replay.js";
import { runJobs } from "../src/jobs/pool.js";
import { PoolProgress } from "../src/jobs/progress.js";
import { Stopped, stopRequested, watchSignals } from "../src/steps.js";
import { availableParallelism } from "node:os";
import { basename } from "node:path";
import { ARTIFACT_PATH } from "../src/gas/artifact.js";
import { InputError } from "../src/json/read.js";
import { GAS_VECTORS_SHA256 } from "../src/gas/pinned.js";
import { ensureLongChain } from "./long-chain-cache.js";
import { scriptArgs } from "./script-args.js";

interface Options {
  jobs: number;
  corpus: string;
  longChain: string;
  blocks: number;
  minTxs: number;
  quiet: boolean;
}

const USAGE = `Usage: npm start [-- options]   (node dist/scripts/start.js [options])

Fills the long chain, replays the corpus and the long chain, re-verifies the gas vectors; one OK:/FAILED: line on stdout.

Options:
  --corpus <dir>              fixtures to replay (default fixtures/corpus)
  --long-chain <file>         where the long chain is filled (default .cache/long-chain.json.gz); reused,
                              with its <name>.meta.json, when the same generator version and code filled it
  --long-chain-blocks <n>     its blocks (default 10000)
  --long-chain-min-txs <n>    its minimum transactions (default 50000)
  --jobs <n>                  fixtures replayed in parallel on worker threads (default: the number of cores)
  --quiet                     no progress on stderr
  -h, --help                  this text

Exit codes:
  0  everything replayed and matched, the gas vectors verified
  1  a fixture mismatched or the gas vectors differ (1 wins: never hidden by unusable input)
  2  unusable input (a fixture or the gas-vector artifact), bad options
`;

function parseOptions(argv: string[]): Options | null {
  const args = scriptArgs(argv, USAGE, ["corpus", "long-chain", "long-chain-blocks", "long-chain-min-txs", "jobs"], ["quiet"]);
  if (args === null) return null;
  return {
    jobs: args.integer("jobs", availableParallelism(), 1),
    corpus: args.value("corpus") ?? "fixtures/corpus",
    longChain: args.value("long-chain") ?? ".cache/long-chain.json.gz",
    blocks: args.integer("long-chain-blocks", 10_000, 1),
    minTxs: args.integer("long-chain-min-txs", 50_000, 0),
    quiet: args.flag("quiet"),
  };
}

/**
 * Runs everything and returns the verdict line and the exit code. The fixtures replay on every
 * core (src/jobs/pool.ts, as `replay --jobs`), the long chain taken first so the corpus fills the
 * other cores around it; reports stay in the corpus's order, the long chain last.
 */
export async function start(o: Options): Promise<Verdict> {
  const mode = progressMode(o.quiet);
  ensureLongChain(o.longChain, { blocks: o.blocks, minTxs: o.minTxs, progress: mode });
  const clock = new Stopwatch();
  const files = [o.longChain, ...fixtureFiles(o.corpus)];
  const progress = new PoolProgress("replay", mode, files.length, "fixtures", files.map((f) => basename(f)));
  const byIndex: FixtureReport[] = [];
  await runJobs({ kind: "replay", toHeight: null }, files.map((file) => ({ file, id: file })), {
    jobs: o.jobs,
    signal: watchSignals(),
    onResult: (index, output) => {
      const { kind: _kind, seconds: _seconds, ...report } = output as { kind: "replay"; seconds: number } & FixtureReport;
      byIndex[index] = report;
    },
    onFinished: (_, output) => progress.finished((output as { txs: number }).txs),
    onProgress: (running) => progress.running(running),
  });
  progress.end();
  const received = stopRequested();
  if (received !== null) throw new Stopped(received);
  const reports = [...byIndex.slice(1), byIndex[0]!];
  for (const r of reports) {
    if (r.status === "unusable") process.stderr.write(`cbqs: error: ${oneLine(r.error!)}\n`);
    if (r.mismatch !== undefined) process.stderr.write(mismatchLines(r.file, r.mismatch).join("\n") + "\n");
  }
  process.stderr.write(replaySummary(reports, clock.seconds()) + "\n");
  return verdict(reports, checkGasVectors(ARTIFACT_PATH));
}

/** The gas-vector artifact re-verified: its digest and vectors, a difference (1) or unusable (2). */
export type GasCheck = { status: "ok"; sha256: string; vectors: number } | { status: "mismatch" | "unusable"; reason: string };

function checkGasVectors(file: string): GasCheck {
  try {
    const r = verifyArtifactFile(file);
    return r.ok ? { status: "ok", sha256: r.sha256, vectors: r.vectors } : { status: "mismatch", reason: r.reason };
  } catch (err) {
    if (err instanceof InputError) return { status: "unusable", reason: err.message };
    throw err;
  }
}

export interface Verdict {
  line: string;
  exitCode: number;
}

/**
 * The one verdict line: what failed, then what was verified (the fixtures that matched, their
 * blocks and transactions, the gas-vector SHA-256). The exit code is replay's rule over the
 * fixtures and the gas vectors together: 1 for any mismatch, else 2 for anything unusable.
 */
export function verdict(reports: readonly FixtureReport[], gas: GasCheck): Verdict {
  const matched = reports.filter((r) => r.status === "ok");
  const blocks = matched.reduce((n, r) => n + r.blocks, 0);
  const txs = matched.reduce((n, r) => n + r.txs, 0);
  const bad = reports.filter((r) => r.status !== "ok");
  const failures = [
    ...(bad.length === 0 ? [] : [`${count(bad.length, "fixture")} of ${reports.length} did not replay (${bad.map((r) => `${r.file}: ${r.status}`).join(", ")})`]),
    ...(gas.status === "ok" ? [] : [`gas-vector SHA-256 ${GAS_VECTORS_SHA256} not verified (${gas.status}: ${gas.reason})`]),
  ];
  const verified = [
    `${count(matched.length, "fixture")} (${count(blocks, "block")}, ${count(txs, "tx", "txs")}) replayed and matched`,
    ...(gas.status === "ok" ? [`gas-vector SHA-256 ${gas.sha256} verified (${count(gas.vectors, "vector")} re-executed)`] : []),
  ];
  const exitCode = replayExitCode([...reports, gas]);
  return { line: `${exitCode === 0 ? "OK" : "FAILED"}: ${[...failures, ...verified].join("; ")}`, exitCode };
}

async function main(argv: string[]): Promise<void> {
  let result: Verdict;
  try {
    const options = parseOptions(argv);
    if (options === null) return;
    result = await start(options);
  } catch (err) {
    process.stderr.write(errorLine(err));
    if (err instanceof Stopped) {
      process.exitCode = err.exitCode;
      return;
    }
    result = { line: `FAILED: ${oneLine(err instanceof Error ? err.message : String(err))}`, exitCode: 2 };
  }
  process.stdout.write(`${result.line}\n`);
  process.exitCode = result.exitCode;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) void main(process.argv.slice(2));
