// `--jobs` on a corpus of many fixtures, in one run (docs/engineering/performance.md "Corpora on every
// core"): writes --fixtures fixtures filled from fuzz chains (seed 1, runs 0 … N−1, --blocks
// blocks each) into a temporary directory, then times `cbqs replay <dir> --jobs 1` and
// `--jobs J` (and, with --consume, `cbqs consume` through our own t8n server the same two ways)
// with the compiled CLI, as a user runs it, and prints the ratios. The last row is the machine's
// own ceiling for the same work: two independent `--jobs 1` processes, each on half the corpus,
// at once (no pool at all), so the pool's ratio can be read against what the cores allow.
//
//   node dist/scripts/bench-jobs.js [--fixtures 1000] [--blocks 8] [--jobs N] [--consume]
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { ChainBuilder } from "../src/fuzz/build.js";
import { generateChain } from "../src/fuzz/plan.js";
import { fixtureJsonText } from "../src/harness/fixture.js";
import { scriptArgs, usageExit } from "./script-args.js";

const USAGE = `usage: bench-jobs [--fixtures N] [--blocks B] [--jobs J] [--consume]
  --fixtures N   fixtures in the corpus, each a fuzz chain of seed 1 (default 1000)
  --blocks B     blocks per fixture (default 8)
  --jobs J       workers of the parallel runs (default: the number of cores)
  --consume      also time cbqs consume through our own t8n server
`;

function options(): { fixtures: number; blocks: number; jobs: number; consume: boolean } {
  try {
    const args = scriptArgs(process.argv.slice(2), USAGE, ["fixtures", "blocks", "jobs"], ["consume"]);
    if (args === null) process.exit(0);
    return { fixtures: args.integer("fixtures", 1000, 1), blocks: args.integer("blocks", 8, 1), jobs: args.integer("jobs", availableParallelism(), 1), consume: args.flag("consume") };
  } catch (err) {
    return usageExit("bench-jobs", (err as Error).message, USAGE);
  }
}

const o = options();
const CLI = join(import.meta.dirname, "..", "src", "cli.js");
const dir = mkdtempSync(join(tmpdir(), "cbqs-bench-jobs-"));

// Two halves of the corpus, so the ceiling row can give each process one of them.
const halves = [join(dir, "a"), join(dir, "b")];
const inHalf = (run: number) => halves[run < Math.ceil(o.fixtures / 2) ? 0 : 1]!;

function checked(label: string, fixtures: number, status: number | null, stdout: string, stderr: string): void {
  if (status !== 0 || !new RegExp(`^\\w+: ${fixtures.toLocaleString("en-US")} fixtures: ${fixtures} ok`, "m").test(stdout)) {
    throw new Error(`${label}: exit ${status}\n${stdout}${stderr}`);
  }
}

function timed(label: string, args: string[]): number {
  const started = performance.now();
  const r = spawnSync(process.execPath, [CLI, ...args, "--quiet"], { encoding: "utf8" });
  const seconds = (performance.now() - started) / 1000;
  checked(label, o.fixtures, r.status, r.stdout, r.stderr);
  return seconds;
}

/** Both halves at once, one `cbqs replay --jobs 1` process each: the seconds until both are done. */
async function halvesAtOnce(): Promise<number> {
  const started = performance.now();
  await Promise.all(
    halves.map(
      (half, k) =>
        new Promise<void>((resolve, reject) => {
          const child = spawn(process.execPath, [CLI, "replay", half, "--jobs", "1", "--quiet"]);
          let stdout = "";
          let stderr = "";
          child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
          child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
          child.on("error", reject);
          child.on("close", (status) => {
            try {
              checked(`half ${half}`, k === 0 ? Math.ceil(o.fixtures / 2) : Math.floor(o.fixtures / 2), status, stdout, stderr);
              resolve();
            } catch (err) {
              reject(err as Error);
            }
          });
        }),
    ),
  );
  return (performance.now() - started) / 1000;
}

try {
  const started = performance.now();
  halves.forEach((h) => mkdirSync(h));
  let blocks = 0;
  let txs = 0;
  for (let run = 0; run < o.fixtures; run++) {
    const builder = new ChainBuilder(generateChain(1, run, o.blocks));
    while (!builder.done) builder.build();
    const fixture = { ...builder.fixture, name: `fuzz-seed-1-run-${run}` };
    blocks += fixture.blocks.length;
    txs += fixture.blocks.reduce((n, b) => n + b.transactions.length, 0);
    writeFileSync(join(inHalf(run), `run-${String(run).padStart(5, "0")}.json`), fixtureJsonText(fixture));
  }
  process.stdout.write(`corpus: ${o.fixtures} fixtures, ${blocks} blocks, ${txs} txs, written in ${((performance.now() - started) / 1000).toFixed(1)} s; load average ${loadavg()[0]!.toFixed(1)}\n\n`);
  process.stdout.write(`| command | --jobs 1 (s) | --jobs ${o.jobs} (s) | ratio |\n| --- | ---: | ---: | ---: |\n`);
  const row = (label: string, args: string[]) => {
    const one = timed(`${label} --jobs 1`, [...args, "--jobs", "1"]);
    const many = timed(`${label} --jobs ${o.jobs}`, [...args, "--jobs", String(o.jobs)]);
    process.stdout.write(`| \`${label}\` | ${one.toFixed(1)} | ${many.toFixed(1)} | ${(one / many).toFixed(2)}× |\n`);
    return one;
  };
  const replayOne = row("cbqs replay <corpus>", ["replay", ...halves]);
  if (o.consume) row("cbqs consume <corpus> --t8n-server 'cbqs t8n --server'", ["consume", ...halves, "--t8n-server", `node ${CLI} t8n --server`]);
  const ceiling = await halvesAtOnce();
  process.stdout.write(`| ceiling: two \`cbqs replay <half> --jobs 1\` processes at once, no pool | ${replayOne.toFixed(1)} | ${ceiling.toFixed(1)} | ${(replayOne / ceiling).toFixed(2)}× |\n`);
  process.stdout.write(`\nload average ${loadavg()[0]!.toFixed(1)} at the end\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
