// Measures `cbqs fuzz` against every mutant of scripts/mutants.ts: runs until the first
// divergence (at most --max-runs), then prints one markdown row per mutant — runs to detection,
// the chain's size before and after shrinking, candidate chains the shrinker executed, seconds —
// for the table in docs/fuzzing.md. Each mutant's t8n is its own `node <copy>/dist/src/cli.js t8n`
// (a child process per block, as a node team's wrapper would be); --in-process loads the
// mutant's modules instead (same chains and results, much faster).
//
//   npm run build && node dist/scripts/fuzz-mutants.js [--seed 1] [--blocks 8] [--max-runs 200] [--in-process] [--mutant <name>]
import { loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { fuzz, SHRINK_BUDGET } from "../src/fuzz/fuzz.js";
import { CommandTarget, type T8nTarget } from "../src/fuzz/target.js";
import { buildMutant, moduleTarget, MUTANTS, removeMutant } from "./mutants.js";

interface Options {
  seed: number;
  blocks: number;
  maxRuns: number;
  inProcess: boolean;
  only: string | null;
}

function parseArgs(argv: string[]): Options {
  const opts: Options = { seed: 1, blocks: 8, maxRuns: 200, inProcess: false, only: null };
  for (let i = 0; i < argv.length; i++) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (flag === "--in-process") opts.inProcess = true;
    else if (flag === "--mutant" && value !== undefined && MUTANTS.some((m) => m.name === value)) (opts.only = value), i++;
    else if (["--seed", "--blocks", "--max-runs"].includes(flag!) && value !== undefined && /^[0-9]+$/.test(value)) {
      if (flag === "--seed") opts.seed = Number(value);
      if (flag === "--blocks") opts.blocks = Number(value);
      if (flag === "--max-runs") opts.maxRuns = Number(value);
      i++;
    } else {
      process.stderr.write(`usage: fuzz-mutants [--seed S] [--blocks B] [--max-runs N] [--in-process] [--mutant ${MUTANTS.map((m) => m.name).join("|")}]\n`);
      process.exit(2);
    }
  }
  return opts;
}

async function main(): Promise<void> {
  const opts = parseArgs(process.argv.slice(2));
  const root = fileURLToPath(new URL("../..", import.meta.url));
  const load = loadavg()[0]!.toFixed(1);
  const rows: string[] = [];
  let missed = 0;
  process.stdout.write(
    `seed ${opts.seed}, ${opts.blocks} blocks per chain, at most ${opts.maxRuns} runs, shrink budget ${SHRINK_BUDGET}, ` +
      `${opts.inProcess ? "in-process mutant t8n" : "mutant t8n as a child process per block"}; load average ${load} at start\n\n`,
  );
  process.stdout.write("| mutant | bug | runs to detection | chain found (blocks, txs) | shrunk (blocks, txs) | shrink candidates | s | first difference (shrunk) |\n");
  process.stdout.write("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |\n");
  for (const mutant of MUTANTS.filter((m) => opts.only === null || m.name === opts.only)) {
    const dir = buildMutant(root, mutant);
    let target: T8nTarget | null = null;
    try {
      target = opts.inProcess ? moduleTarget(dir) : new CommandTarget(`node ${dir}/dist/src/cli.js t8n`, 120_000);
      const started = performance.now();
      const r = await fuzz(target, { seed: opts.seed, firstRun: 0, runs: opts.maxRuns, blocks: opts.blocks, compare: { stateRoot: true }, shrinkBudget: SHRINK_BUDGET });
      const secs = ((performance.now() - started) / 1000).toFixed(0);
      const f = r.finding;
      const row =
        f === null
          ? `| ${mutant.name} | ${mutant.bug} | not found in ${opts.maxRuns} | | | | ${secs} | |`
          : `| ${mutant.name} | ${mutant.bug} | ${f.run + 1} | ${f.original.blocks}, ${f.original.txs} | ${f.shrunk.blocks}, ${f.shrunk.txs} | ${f.candidates} | ${secs} | ${f.divergence.text.replace(/\|/g, "\\|")} |`;
      if (f === null) missed++;
      rows.push(row);
      process.stdout.write(row + "\n");
    } finally {
      target?.close();
      removeMutant(dir);
    }
  }
  process.stdout.write(`\nload average ${loadavg()[0]!.toFixed(1)} at the end; ${missed === 0 ? "every mutant found" : `${missed} mutant(s) NOT found`}\n`);
  process.exitCode = missed === 0 ? 0 : 1;
}

main().catch((err: unknown) => {
  process.stderr.write(`fuzz-mutants: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
  process.exit(2);
});
