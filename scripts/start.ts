// `npm start`: the main job, with exactly one verdict line on stdout. It generates and fills the
// deterministic long chain, replays every fixture of the corpus and the long chain from genesis
// (every root, receipt and the gas-vector digest of every block), and re-verifies the gas-vector
// artifact (every vector re-executed, the file's SHA-256 against the pinned one). Progress and
// every detail go to stderr; stdout gets one line:
//   OK: 24 fixtures (10,120 blocks, 53,162 txs) replayed and matched; gas-vector SHA-256 a1dc… verified (13 vectors re-executed)
//   FAILED: … (what failed)
// Exit 0 OK, 1 a mismatch or a gas-vector difference, 2 unusable input.
//
//   npm run build && node dist/scripts/start.js [--corpus fixtures/corpus] [--long-chain .cache/long-chain.json.gz]
//        [--long-chain-blocks 10000] [--long-chain-min-txs 50000] [--quiet]
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { errorLine, oneLine } from "../src/cli/common.js";
import { mismatchLines, replaySummary } from "../src/cli/harness.js";
import { fixtureFiles } from "../src/harness/documents.js";
import { count, progressMode, Stopwatch } from "../src/harness/progress.js";
import { replayExitCode, replayFile } from "../src/harness/replay.js";
import { ARTIFACT_PATH, verifyArtifact } from "../src/gas/artifact.js";
import { fillLongChain } from "./gen-long-chain.js";

interface Options {
  corpus: string;
  longChain: string;
  blocks: number;
  minTxs: number;
  quiet: boolean;
}

function parseArgs(argv: string[]): Options {
  const arg = (name: string, dflt: string): string => {
    const i = argv.indexOf(name);
    return i >= 0 && argv[i + 1] !== undefined ? argv[i + 1]! : dflt;
  };
  return {
    corpus: arg("--corpus", "fixtures/corpus"),
    longChain: arg("--long-chain", ".cache/long-chain.json.gz"),
    blocks: Number(arg("--long-chain-blocks", "10000")),
    minTxs: Number(arg("--long-chain-min-txs", "50000")),
    quiet: argv.includes("--quiet"),
  };
}

/** Runs everything and returns the verdict line and the exit code. */
export function start(o: Options): { line: string; exitCode: number } {
  const mode = progressMode(o.quiet);
  fillLongChain(o.longChain, { blocks: o.blocks, minTxs: o.minTxs, progress: mode });
  const clock = new Stopwatch();
  const files = [...fixtureFiles(o.corpus), o.longChain];
  const reports = files.map((file) => replayFile(file, { progress: mode }));
  for (const r of reports) {
    if (r.status === "unusable") process.stderr.write(`cbqs: error: ${oneLine(r.error!)}\n`);
    if (r.mismatch !== undefined) process.stderr.write(mismatchLines(r.file, r.mismatch).join("\n") + "\n");
  }
  process.stderr.write(replaySummary(reports, clock.seconds()) + "\n");
  const gas = verifyArtifact(readFileSync(ARTIFACT_PATH, "utf8"));
  const blocks = reports.reduce((n, r) => n + r.blocks, 0);
  const txs = reports.reduce((n, r) => n + r.txs, 0);
  const replayCode = replayExitCode(reports);
  const failures: string[] = [];
  if (replayCode !== 0) {
    const bad = reports.filter((r) => r.status !== "ok");
    failures.push(`${count(bad.length, "fixture")} of ${reports.length} did not replay (${bad.map((r) => `${r.file}: ${r.status}`).join(", ")})`);
  }
  if (!gas.ok) failures.push(`gas-vector artifact: ${gas.reason}`);
  if (failures.length > 0) return { line: `FAILED: ${failures.join("; ")}`, exitCode: replayCode !== 0 ? replayCode : 1 };
  return {
    line:
      `OK: ${count(reports.length, "fixture")} (${count(blocks, "block")}, ${count(txs, "tx", "txs")}) replayed and matched; ` +
      `gas-vector SHA-256 ${gas.ok ? gas.sha256 : ""} verified (${count(gas.ok ? gas.vectors : 0, "vector")} re-executed)`,
    exitCode: 0,
  };
}

function main(argv: string[]): void {
  let verdict: { line: string; exitCode: number };
  try {
    verdict = start(parseArgs(argv));
  } catch (err) {
    process.stderr.write(errorLine(err));
    verdict = { line: `FAILED: ${oneLine(err instanceof Error ? err.message : String(err))}`, exitCode: 2 };
  }
  process.stdout.write(`${verdict.line}\n`);
  process.exitCode = verdict.exitCode;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv.slice(2));
