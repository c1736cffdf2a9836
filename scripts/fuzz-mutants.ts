// Measures `cbqs fuzz` against every mutant of scripts/mutants.ts (docs/reference/fuzzer.md §8): fuzzes
// each mutant until the first divergence, shrinks it, and prints per mutant the runs to
// detection, the chain's size before and after shrinking, the candidate chains the shrinker
// executed and the wall seconds of both. Each mutant is run as an external node would be: its
// own `node <copy>/dist/src/cli.js t8n --server`, a cbqs-t8n-server/v1 process started for the
// mutant and seed (one session per chain). --per-call runs the copy's `cbqs t8n` as a child
// process per block instead; --in-process loads the mutant's modules (the same chains,
// comparisons and results, much faster). --seeds N repeats the measurement for seeds 1 … N and
// prints one summary row per mutant. A mutant not found and shrunk within --max-seconds (or
// --max-runs chains) for a seed is missed: the script then exits 1.
//
//   npm run build && node dist/scripts/fuzz-mutants.js [--seed 1 | --seeds N] [--blocks 8] [--max-runs 1000] [--max-seconds 120] [--in-process | --per-call] [--mutant <name>]
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { UsageError } from "../src/cli/common.js";
import { fuzz, SHRINK_BUDGET, type Finding } from "../src/fuzz/fuzz.js";
import type { ChainTarget, T8nTarget } from "../src/target/target.js";
import { T8N_SERVER_PROTOCOL } from "../src/harness/t8n-server.js";
import { count } from "../src/format.js";
import { buildMutant, moduleTarget, mutantCommand, mutantServer, MUTANTS, removeMutant, type Mutant } from "./mutants.js";
import { scriptArgs, usageExit } from "./script-args.js";

const USAGE = `usage: fuzz-mutants [--seed S | --seeds N] [--blocks B] [--max-runs R] [--max-seconds T] [--in-process | --per-call] [--mutant NAME]
  --seed S          the one seed of the per-mutant table (default 1)
  --seeds N         seeds 1 … N, one summary row per mutant
  --blocks B        blocks per chain (default 8)
  --max-runs R      chains per mutant and seed before it counts as missed (default 1000)
  --max-seconds T   wall seconds per mutant and seed, shrinking included, before it counts as missed (default 120)
  --in-process      load the mutant's t8n into this process (fast; the same chains and results)
  --per-call        the mutant's \`cbqs t8n\` as a child process per block
  --mutant NAME     only this mutant: ${MUTANTS.map((m) => m.name).join(", ")}
Exit codes: 0 every mutant found and shrunk for every seed, 1 some were missed, 2 usage error.
`;

type Mode = "server" | "per-call" | "in-process";

interface Options {
  seeds: number[];
  blocks: number;
  maxRuns: number;
  maxSeconds: number;
  mode: Mode;
  mutants: readonly Mutant[];
}

function options(): Options {
  try {
    const args = scriptArgs(process.argv.slice(2), USAGE, ["seed", "seeds", "blocks", "max-runs", "max-seconds", "mutant"], ["in-process", "per-call"]);
    if (args === null) process.exit(0);
    if (args.value("seed") !== undefined && args.value("seeds") !== undefined) throw new UsageError("give --seed or --seeds, not both");
    if (args.flag("in-process") && args.flag("per-call")) throw new UsageError("give --in-process or --per-call, not both");
    const only = args.value("mutant");
    const mutants = MUTANTS.filter((m) => only === undefined || m.name === only);
    if (mutants.length === 0) throw new UsageError(`no mutant ${only}`);
    const seeds = args.value("seeds") === undefined ? [args.integer("seed", 1, 0)] : Array.from({ length: args.integer("seeds", 1, 1) }, (_, i) => i + 1);
    return {
      seeds,
      blocks: args.integer("blocks", 8, 1),
      maxRuns: args.integer("max-runs", 1000, 1),
      maxSeconds: args.integer("max-seconds", 120, 1),
      mode: args.flag("in-process") ? "in-process" : args.flag("per-call") ? "per-call" : "server",
      mutants,
    };
  } catch (err) {
    return usageExit("fuzz-mutants", (err as Error).message, USAGE);
  }
}

async function targetOf(dir: string, mode: Mode): Promise<T8nTarget | ChainTarget> {
  if (mode === "in-process") return moduleTarget(dir);
  return mode === "server" ? mutantServer(dir) : mutantCommand(dir);
}

interface Measured {
  /** Found and shrunk within the bounds; null: missed. */
  finding: Finding | null;
  /** Wall seconds from the target's start through the end of shrinking (or the cap). */
  seconds: number;
}

/** Fuzzes one mutant with one seed, the wall clock capped at maxSeconds (polled between blocks). */
async function measure(root: string, mutant: Mutant, seed: number, opts: Options): Promise<Measured> {
  const dir = buildMutant(root, mutant);
  let target: T8nTarget | ChainTarget | null = null;
  try {
    const started = performance.now();
    const deadline = started + opts.maxSeconds * 1000;
    target = await targetOf(dir, opts.mode);
    const r = await fuzz(target, {
      seed,
      firstRun: 0,
      runs: opts.maxRuns,
      blocks: opts.blocks,
      compare: { stateRoot: true },
      shrinkBudget: SHRINK_BUDGET,
      stopped: () => performance.now() > deadline,
    });
    // Cut off while shrinking counts as missed too: the bound is found AND shrunk.
    return { finding: r.interrupted ? null : r.finding, seconds: (performance.now() - started) / 1000 };
  } finally {
    await target?.close();
    removeMutant(dir);
  }
}

const out = (line: string) => process.stdout.write(line + "\n");
const cell = (text: string) => text.replace(/\|/g, "\\|");

function targetWords(mode: Mode): string {
  if (mode === "in-process") return "mutant t8n loaded in-process";
  if (mode === "per-call") return "mutant `cbqs t8n` as a child process per block";
  return `mutant \`cbqs t8n --server\` through ${T8N_SERVER_PROTOCOL} (a process per mutant and seed, a session per chain)`;
}

function singleSeedRow(mutant: Mutant, m: Measured): string {
  const f = m.finding;
  const secs = m.seconds.toFixed(1);
  if (f === null) return `| ${mutant.name} | ${mutant.bug} | missed | | | | ${secs} | |`;
  return `| ${mutant.name} | ${mutant.bug} | ${f.run + 1} | ${f.original.blocks}, ${f.original.txs} | ${f.shrunk.blocks}, ${f.shrunk.txs} | ${f.candidates} | ${secs} | ${cell(f.divergence.text)} |`;
}

function seedsRow(mutant: Mutant, results: Measured[]): string {
  const runs = results.map((r) => (r.finding === null ? Infinity : r.finding.run + 1));
  const sorted = [...runs].sort((a, b) => a - b);
  const largest = results.flatMap((r) => (r.finding === null ? [] : [r.finding.shrunk])).sort((a, b) => b.blocks - a.blocks || b.txs - a.txs)[0];
  const show = (n: number) => (n === Infinity ? "missed" : String(n));
  const maxSeconds = Math.max(...results.map((r) => r.seconds));
  return `| ${mutant.name} | ${runs.map(show).join(", ")} | ${show(sorted[Math.floor((sorted.length - 1) / 2)]!)} | ${show(sorted.at(-1)!)} | ${maxSeconds.toFixed(1)} | ${largest === undefined ? "" : `${largest.blocks}, ${largest.txs}`} |`;
}

async function main(): Promise<void> {
  const opts = options();
  const root = fileURLToPath(new URL("../..", import.meta.url));
  const seeds = opts.seeds;
  const single = seeds.length === 1;
  out(
    `seed${single ? ` ${seeds[0]}` : `s 1 … ${seeds.length}`}, ${opts.blocks} blocks per chain, at most ${opts.maxRuns} runs and ${opts.maxSeconds} s per mutant and seed ` +
      `(shrinking included), shrink budget ${SHRINK_BUDGET}, ${targetWords(opts.mode)}; load average ${loadavg()[0]!.toFixed(1)} at start\n`,
  );
  if (single) {
    out("| mutant | bug | runs to detection | chain found (blocks, txs) | shrunk (blocks, txs) | shrink candidates | s | first difference (shrunk chain) |");
    out("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |");
  } else {
    out(`| mutant | runs to detection, seeds 1 … ${seeds.length} | median | max | max s | largest shrunk (blocks, txs) |`);
    out("| --- | --- | ---: | ---: | ---: | ---: |");
  }
  let missed = 0;
  for (const mutant of opts.mutants) {
    const results: Measured[] = [];
    for (const seed of seeds) results.push(await measure(root, mutant, seed, opts));
    missed += results.filter((r) => r.finding === null).length;
    out(single ? singleSeedRow(mutant, results[0]!) : seedsRow(mutant, results));
  }
  out(`\nload average ${loadavg()[0]!.toFixed(1)} at the end; ${missed === 0 ? "every mutant found and shrunk" : `${count(missed, "(mutant, seed) pair")} MISSED`}`);
  process.exitCode = missed === 0 ? 0 : 1;
}

main().catch((err: unknown) => {
  process.stderr.write(`fuzz-mutants: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(2);
});
