// `--jobs` on a corpus of many fixtures, in one run (docs/performance.md "Corpora on every
// core"): writes --fixtures fixtures filled from fuzz chains (seed 1, runs 0 … N−1, --blocks
// blocks each) into a temporary directory, then times `cbqs replay <dir> --jobs 1` and
// `--jobs J` (and, with --consume, `cbqs consume` through our own t8n server the same two ways)
// with the compiled CLI, as a user runs it, and prints the ratios.
//
//   node dist/scripts/bench-jobs.js [--fixtures 1000] [--blocks 8] [--jobs N] [--consume]
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
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

function timed(label: string, args: string[]): number {
  const started = performance.now();
  const r = spawnSync(process.execPath, [CLI, ...args, "--quiet"], { encoding: "utf8" });
  const seconds = (performance.now() - started) / 1000;
  if (r.status !== 0 || !new RegExp(`^\\w+: ${o.fixtures.toLocaleString("en-US")} fixtures: ${o.fixtures} ok`, "m").test(r.stdout)) {
    throw new Error(`${label}: exit ${r.status}\n${r.stdout}${r.stderr}`);
  }
  return seconds;
}

try {
  const started = performance.now();
  let blocks = 0;
  let txs = 0;
  for (let run = 0; run < o.fixtures; run++) {
    const builder = new ChainBuilder(generateChain(1, run, o.blocks));
    while (!builder.done) builder.build();
    const fixture = { ...builder.fixture, name: `fuzz-seed-1-run-${run}` };
    blocks += fixture.blocks.length;
    txs += fixture.blocks.reduce((n, b) => n + b.transactions.length, 0);
    writeFileSync(join(dir, `run-${String(run).padStart(5, "0")}.json`), fixtureJsonText(fixture));
  }
  process.stdout.write(`corpus: ${o.fixtures} fixtures, ${blocks} blocks, ${txs} txs, written in ${((performance.now() - started) / 1000).toFixed(1)} s; load average ${loadavg()[0]!.toFixed(1)}\n\n`);
  process.stdout.write(`| command | --jobs 1 (s) | --jobs ${o.jobs} (s) | ratio |\n| --- | ---: | ---: | ---: |\n`);
  const row = (label: string, args: string[]) => {
    const one = timed(`${label} --jobs 1`, [...args, "--jobs", "1"]);
    const many = timed(`${label} --jobs ${o.jobs}`, [...args, "--jobs", String(o.jobs)]);
    process.stdout.write(`| \`${label}\` | ${one.toFixed(1)} | ${many.toFixed(1)} | ${(one / many).toFixed(2)}× |\n`);
  };
  row("cbqs replay <corpus>", ["replay", dir]);
  if (o.consume) row("cbqs consume <corpus> --t8n-server 'cbqs t8n --server'", ["consume", dir, "--t8n-server", `node ${CLI} t8n --server`]);
  process.stdout.write(`\nload average ${loadavg()[0]!.toFixed(1)} at the end\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
