// Measures `cbqs fuzz` against every mutant of scripts/mutants.ts (docs/fuzzing.md §8): fuzzes
// each mutant until the first divergence (at most --max-runs chains) and prints, per mutant, the
// runs to detection, the chain's size before and after shrinking, the candidate chains the
// shrinker executed and the seconds it took. Each mutant's t8n is its own
// `node <copy>/dist/src/cli.js t8n`, a child process per block as a node team's wrapper would be;
// --in-process loads the mutant's modules instead (the same chains, comparisons and results,
// much faster). --seeds N repeats the measurement for seeds 1 … N and prints one summary row per
// mutant instead.
//
//   npm run build && node dist/scripts/fuzz-mutants.js [--seed 1 | --seeds N] [--blocks 8] [--max-runs 200] [--in-process] [--mutant <name>]
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { fuzz, SHRINK_BUDGET, type Finding } from "../src/fuzz/fuzz.js";
import { CommandTarget, type T8nTarget } from "../src/fuzz/target.js";
import { count } from "../src/harness/progress.js";
import { buildMutant, moduleTarget, MUTANTS, removeMutant, type Mutant } from "./mutants.js";
import { exitOnHelp, usageExit } from "./script-args.js";

interface Options {
  seed: number;
  seeds: number | null;
  blocks: number;
  maxRuns: number;
  inProcess: boolean;
  only: string | null;
}

function parseArgs(argv: string[]): Options {
  const usage = `usage: fuzz-mutants [--seed S | --seeds N] [--blocks B] [--max-runs N] [--in-process] [--mutant ${MUTANTS.map((m) => m.name).join("|")}]`;
  exitOnHelp(argv, usage);
  const opts: Options = { seed: 1, seeds: null, blocks: 8, maxRuns: 200, inProcess: false, only: null };
  for (let i = 0; i < argv.length; i++) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === "--in-process") opts.inProcess = true;
    else if (flag === "--mutant" && value !== undefined && MUTANTS.some((m) => m.name === value)) (opts.only = value), i++;
    else if (["--seed", "--seeds", "--blocks", "--max-runs"].includes(flag!) && value !== undefined && /^[0-9]+$/.test(value)) {
      if (flag === "--seed") opts.seed = Number(value);
      if (flag === "--seeds") opts.seeds = Number(value);
      if (flag === "--blocks") opts.blocks = Number(value);
      if (flag === "--max-runs") opts.maxRuns = Number(value);
      i++;
    } else {
      usageExit("fuzz-mutants", `${flag} ${value ?? ""}: not an option of fuzz-mutants, or a bad value`.replace(" :", ":"), usage);
    }
  }
  return opts;
}

/** Fuzzes one mutant with one seed; null when not found within maxRuns. */
async function measure(root: string, mutant: Mutant, seed: number, opts: Options): Promise<{ finding: Finding | null; seconds: number }> {
  const dir = buildMutant(root, mutant);
  let target: T8nTarget | null = null;
  try {
    target = opts.inProcess ? await moduleTarget(dir) : new CommandTarget(`node ${dir}/dist/src/cli.js t8n`, 120_000);
    const started = performance.now();
    const r = await fuzz(target, { seed, firstRun: 0, runs: opts.maxRuns, blocks: opts.blocks, compare: { stateRoot: true }, shrinkBudget: SHRINK_BUDGET });
    return { finding: r.finding, seconds: (performance.now() - started) / 1000 };
  } finally {
    target?.close();
    removeMutant(dir);
  }
}

const out = (line: string) => process.stdout.write(line + "\n");

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const root = fileURLToPath(new URL("../..", import.meta.url));
  const mutants = MUTANTS.filter((m) => opts.only === null || m.name === opts.only);
  const seeds = opts.seeds === null ? [opts.seed] : Array.from({ length: opts.seeds }, (_, i) => i + 1);
  let missed = 0;
  out(
    `seed${seeds.length > 1 ? `s 1 … ${seeds.length}` : ` ${opts.seed}`}, ${opts.blocks} blocks per chain, at most ${opts.maxRuns} runs, shrink budget ${SHRINK_BUDGET}, ` +
      `${opts.inProcess ? "in-process mutant t8n" : "mutant t8n as a child process per block"}; load average ${loadavg()[0]!.toFixed(1)} at start\n`,
  );
  if (seeds.length === 1) {
    out("| mutant | bug | runs to detection | chain found (blocks, txs) | shrunk (blocks, txs) | shrink candidates | s | first difference (shrunk chain) |");
    out("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |");
  } else {
    out(`| mutant | runs to detection, seeds 1 … ${seeds.length} | median | max | largest shrunk (blocks, txs) |`);
    out("| --- | --- | ---: | ---: | ---: |");
  }
  for (const mutant of mutants) {
    const results = [];
    for (const seed of seeds) results.push(await measure(root, mutant, seed, opts));
    missed += results.filter((r) => r.finding === null).length;
    if (seeds.length === 1) {
      const { finding: f, seconds } = results[0]!;
      const secs = seconds.toFixed(0);
      out(
        f === null
          ? `| ${mutant.name} | ${mutant.bug} | not found in ${opts.maxRuns} | | | | ${secs} | |`
          : `| ${mutant.name} | ${mutant.bug} | ${f.run + 1} | ${f.original.blocks}, ${f.original.txs} | ${f.shrunk.blocks}, ${f.shrunk.txs} | ${f.candidates} | ${secs} | ${f.divergence.text.replace(/\|/g, "\\|")} |`,
      );
    } else {
      const runs = results.map((r) => (r.finding === null ? Infinity : r.finding.run + 1));
      const sorted = [...runs].sort((a, b) => a - b);
      const shrunk = results.flatMap((r) => (r.finding === null ? [] : [r.finding.shrunk]));
      const largest = shrunk.sort((a, b) => b.blocks - a.blocks || b.txs - a.txs)[0];
      const show = (n: number) => (n === Infinity ? `> ${opts.maxRuns}` : String(n));
      out(`| ${mutant.name} | ${runs.map(show).join(", ")} | ${show(sorted[Math.floor((sorted.length - 1) / 2)]!)} | ${show(sorted.at(-1)!)} | ${largest === undefined ? "" : `${largest.blocks}, ${largest.txs}`} |`);
    }
  }
  out(`\nload average ${loadavg()[0]!.toFixed(1)} at the end; ${missed === 0 ? "every mutant found" : `${count(missed, "mutant run")} NOT found`}`);
  process.exitCode = missed === 0 ? 0 : 1;
}

main().catch((err: unknown) => {
  process.stderr.write(`fuzz-mutants: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(2);
});
