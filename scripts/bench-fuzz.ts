// `cbqs fuzz` throughput against our own t8n, in one run (docs/engineering/performance.md "Fuzzing"):
//   1. --t8n "cbqs t8n": a process per block (the per-call convention), the baseline;
//   2. --t8n-server "cbqs t8n --server" on one lane;
//   3. the same on --jobs lanes (default: the number of cores).
// Each is the compiled CLI as a user runs it, with the same seed; the figures are the campaign
// summary's blocks/s and tx/s, and the ratios against the per-call baseline.
//
//   node dist/scripts/bench-fuzz.js [--seed 1] [--runs 400] [--per-call-runs 4] [--blocks 8] [--jobs N]
import { spawnSync } from "node:child_process";
import { availableParallelism, loadavg } from "node:os";
import { join } from "node:path";
import { scriptArgs, usageExit } from "./script-args.js";

const USAGE = `usage: bench-fuzz [--seed S] [--runs N] [--per-call-runs M] [--blocks B] [--jobs J]
  --runs N            chains of the server campaigns (default 400)
  --per-call-runs M   chains of the per-call campaign (default 4: a process per block is slow)
  --blocks B          blocks per chain (default 8)
  --jobs J            lanes of the parallel campaign (default: the number of cores)
`;

function options(): { seed: number; runs: number; perCallRuns: number; blocks: number; jobs: number } {
  try {
    const args = scriptArgs(process.argv.slice(2), USAGE, ["seed", "runs", "per-call-runs", "blocks", "jobs"], []);
    if (args === null) process.exit(0);
    return {
      seed: args.integer("seed", 1, 0),
      runs: args.integer("runs", 400, 1),
      perCallRuns: args.integer("per-call-runs", 4, 1),
      blocks: args.integer("blocks", 8, 1),
      jobs: args.integer("jobs", availableParallelism(), 1),
    };
  } catch (err) {
    return usageExit("bench-fuzz", (err as Error).message, USAGE);
  }
}
const { seed, runs, perCallRuns, blocks, jobs } = options();
const CLI = join(import.meta.dirname, "..", "src", "cli.js");

interface Measured {
  label: string;
  blocks: number;
  txs: number;
  seconds: number;
}

function campaign(label: string, target: string[], n: number, lanes: number): Measured {
  const r = spawnSync(process.execPath, [CLI, "fuzz", ...target, "--seed", String(seed), "--runs", String(n), "--blocks", String(blocks), "--jobs", String(lanes), "--quiet"], { encoding: "utf8" });
  const m = /^fuzz: [\d,]+ runs? \(seed \d+\), ([\d,]+) blocks?, ([\d,]+) txs? in ([\d.]+) s \(.*\): [\d,]+ states? reached, no divergence$/m.exec(r.stdout);
  if (r.status !== 0 || m === null) throw new Error(`${label}: exit ${r.status}\n${r.stdout}${r.stderr}`);
  const num = (s: string) => Number(s.replace(/,/g, ""));
  return { label, blocks: num(m[1]!), txs: num(m[2]!), seconds: Number(m[3]) };
}

const out = (line: string) => process.stdout.write(line + "\n");
out(`seed ${seed}, ${blocks} blocks per chain; load average ${loadavg()[0]!.toFixed(1)} at start`);
const results = [
  campaign("per call (`--t8n \"cbqs t8n\"`), 1 lane", ["--t8n", `node ${CLI} t8n`], perCallRuns, 1),
  campaign("server (`--t8n-server \"cbqs t8n --server\"`), 1 lane", ["--t8n-server", `node ${CLI} t8n --server`], runs, 1),
  campaign(`server, ${jobs} lanes`, ["--t8n-server", `node ${CLI} t8n --server`], runs, jobs),
];
const base = results[0]!.blocks / results[0]!.seconds;
out("\n| campaign | blocks | txs | s | blocks/s | tx/s | × per call |");
out("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
for (const r of results) {
  const bps = r.blocks / r.seconds;
  out(`| ${r.label} | ${r.blocks} | ${r.txs} | ${r.seconds.toFixed(1)} | ${bps.toFixed(1)} | ${(r.txs / r.seconds).toFixed(1)} | ${(bps / base).toFixed(1)} |`);
}
out(`\nload average ${loadavg()[0]!.toFixed(1)} at the end`);
