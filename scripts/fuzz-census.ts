// What `cbqs fuzz` generates, counted (docs/reference/fuzzer.md §4 "What is generated"): builds N chains
// of a seed with our own engine only (no t8n command) and prints the census of src/fuzz/census.ts
// as markdown — each transaction kind's outcomes, the §6.1 states, the u64/u128 edges and
// parameter writes, as the share of runs that reached each at least once — then the required
// cells (src/fuzz/reach.ts) below that share and the errors no fuzz transaction can provoke.
// Exit 1 when a required cell is below 0.5 % of runs.
//
//   npm run build && node dist/scripts/fuzz-census.js [--seed 1] [--runs 1000] [--blocks 8]
import { UsageError } from "../src/cli/common.js";
import { ChainBuilder } from "../src/fuzz/build.js";
import { Census, type CellCount } from "../src/fuzz/census.js";
import type { CellGroup } from "../src/fuzz/cells.js";
import { generateChain } from "../src/fuzz/plan.js";
import { EXCLUDED_ERRORS, MIN_SHARE, missedCells, requiredCells, UNREACHABLE_PAIRS } from "../src/fuzz/reach.js";
import { thousands } from "../src/format.js";
import { scriptArgs } from "./script-args.js";

const USAGE = "usage: fuzz-census [--seed S] [--runs N] [--blocks B]\n";

function parseArgs(argv: string[]): { seed: number; runs: number; blocks: number } | null {
  try {
    const args = scriptArgs(argv, USAGE, ["seed", "runs", "blocks"], []);
    if (args === null) return null;
    return { seed: args.integer("seed", 1, 0), runs: args.integer("runs", 1_000, 1), blocks: args.integer("blocks", 8, 1) };
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`fuzz-census: ${err.message}\n${USAGE}`);
    process.exit(2);
  }
}

const share = (runs: number, total: number): string => {
  const p = (100 * runs) / total;
  return `${p < 1 && p > 0 ? p.toFixed(2) : p.toFixed(1)} %`;
};

function main(): void {
  const opts = parseArgs(process.argv.slice(2));
  if (opts === null) return;
  const census = new Census();
  let blocks = 0;
  let txs = 0;
  for (let run = 0; run < opts.runs; run++) {
    const builder = new ChainBuilder(generateChain(opts.seed, run, opts.blocks));
    while (!builder.done) {
      const block = builder.build();
      blocks++;
      txs += block.inputs.txs.length;
      census.add(block);
    }
    census.endRun();
  }
  const n = census.runs;
  const cells = census.cells();
  const required = new Set(requiredCells().map((c) => `${c.group}\n${c.name}`));
  const isRequired = (c: { group: CellGroup; name: string }) => required.has(`${c.group}\n${c.name}`);
  const of = (group: CellGroup) => cells.filter((c) => c.group === group);
  const out: string[] = [
    `seed ${opts.seed}, ${thousands(n)} chains of ${opts.blocks} blocks: ${thousands(blocks)} blocks, ${thousands(txs)} transactions; ${thousands(cells.length)} cells reached`,
    "",
    "Each cell: the share of runs that reached it at least once (and, in the tables, how many times in all).",
    "",
    "**Transactions, by outcome**",
    "",
    "| transaction | ok | rejected (by error) |",
    "| --- | ---: | --- |",
  ];
  const byKind = new Map<string, CellCount[]>();
  for (const c of of("outcome")) {
    const kind = c.name.slice(0, c.name.lastIndexOf(": "));
    byKind.set(kind, [...(byKind.get(kind) ?? []), c]);
  }
  for (const [kind, list] of [...byKind].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const outcome = (c: CellCount) => c.name.slice(kind.length + 2);
    const ok = list.find((c) => outcome(c) === "ok");
    const rejected = list.filter((c) => outcome(c) !== "ok").sort((a, b) => b.runs - a.runs);
    out.push(`| ${kind} | ${ok === undefined ? "–" : share(ok.runs, n)} | ${rejected.map((c) => `${outcome(c)} ${share(c.runs, n)}`).join(", ")} |`);
  }
  const table = (title: string, group: CellGroup, head: string) => {
    out.push("", `**${title}**`, "", `| ${head} | runs | times |`, "| --- | ---: | ---: |");
    for (const c of of(group)) out.push(`| ${c.name}${isRequired(c) ? "" : " (not required)"} | ${share(c.runs, n)} | ${thousands(c.hits)} |`);
  };
  table("§6.1 states and paths", "state", "state");
  table("u64/u128 edges", "edge", "value");
  table("Accepted parameter writes (SetParam, SetParams)", "param", "live scalar");
  out.push("", `**Left out by t8n** (junk, not includable): ${of("left out").map((c) => `${c.name.replace(/^junk: /, "")} ${share(c.runs, n)}`).join(", ")}`);

  const missed = missedCells(cells, n);
  const rare = cells.filter((c) => !isRequired(c) && c.runs < MIN_SHARE * n);
  out.push("", `**Below ${MIN_SHARE * 100} % of runs**: ${missed.length === 0 ? "no required cell" : `${missed.length} required`}`);
  for (const c of missed) out.push(`- ${c.group}: ${c.name} — ${share(c.runs, n)} (${c.runs} runs)`);
  if (rare.length > 0) out.push(`- not required: ${rare.map((c) => `${c.name} ${share(c.runs, n)}`).join("; ")}`);
  out.push("", "**Not required: errors no fuzz transaction can provoke**", "");
  for (const [name, reason] of Object.entries(EXCLUDED_ERRORS)) out.push(`- \`${name}\`: ${reason}`);
  for (const p of UNREACHABLE_PAIRS) out.push(`- \`${p.error}\` from ${p.kinds}: ${p.reason}`);
  process.stdout.write(out.join("\n") + "\n");
  if (missed.length > 0) process.exitCode = 1;
}

main();
