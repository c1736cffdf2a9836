// What `cbqs fuzz` generates, counted (docs/fuzzing.md "What is generated"): builds N chains of
// a seed with our own t8n only (no command) and tallies each transaction's outcome by kind, the
// events, the junk envelopes left out and the gap kinds.
//
//   npm run build && node dist/scripts/fuzz-census.js [--seed 1] [--runs 200] [--blocks 8]
import { ChainBuilder } from "../src/fuzz/build.js";
import { generateChain } from "../src/fuzz/plan.js";
import { exitOnHelp, usageExit } from "./script-args.js";

function parseArgs(argv: string[]): { seed: number; runs: number; blocks: number } {
  exitOnHelp(argv, "usage: fuzz-census [--seed S] [--runs N] [--blocks B]");
  const opts = { seed: 1, runs: 200, blocks: 8 };
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined || !/^[0-9]+$/.test(value) || !["--seed", "--runs", "--blocks"].includes(flag!)) {
      usageExit("fuzz-census", `${flag} ${value ?? ""}: expected --seed, --runs or --blocks with a decimal integer`.replace(" :", ":"), "usage: fuzz-census [--seed S] [--runs N] [--blocks B]");
    }
    opts[flag!.slice(2) as keyof typeof opts] = Number(value);
  }
  return opts;
}

const count = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);

function main(): void {
  const opts = parseArgs(process.argv.slice(2));
  const outcomes = new Map<string, Map<string, number>>();
  const events = new Map<string, number>();
  const junk = new Map<string, number>();
  const gaps = new Map<string, number>();
  let blocks = 0;
  let txs = 0;
  for (let run = 0; run < opts.runs; run++) {
    const plan = generateChain(opts.seed, run, opts.blocks);
    for (const b of plan.blocks) count(gaps, b.gap.k === "step" ? (b.gap.blocks <= 12 ? "step 1–12" : "step 13–2000") : `boundary ${b.gap.of} ${b.gap.offset >= 0 ? "+" : ""}${b.gap.offset}`);
    const builder = new ChainBuilder(plan);
    while (!builder.done) {
      const block = builder.build();
      blocks++;
      txs += block.inputs.txs.length;
      const result = block.result as {
        receipts: Array<{ index: string; error: { name: string } | null; events: Array<{ topic: string }> }>;
        rejected: Array<{ index: string }>;
      };
      for (const r of result.receipts) {
        const kind = block.kinds[Number(r.index)]!;
        if (!outcomes.has(kind)) outcomes.set(kind, new Map());
        count(outcomes.get(kind)!, r.error === null ? "ok" : r.error.name);
        for (const e of r.events) count(events, e.topic);
      }
      for (const r of result.rejected) count(junk, block.kinds[Number(r.index)]!.replace(/^junk: /, ""));
    }
  }
  const lines = [`seed ${opts.seed}, ${opts.runs} chains of ${opts.blocks} blocks: ${blocks} blocks, ${txs} transactions`, "", "| transaction | ok | rejected (by error) |", "| --- | ---: | --- |"];
  for (const [kind, m] of [...outcomes].sort(([a], [b]) => a.localeCompare(b))) {
    const rejected = [...m].filter(([k]) => k !== "ok").sort(([, a], [, b]) => b - a);
    lines.push(`| ${kind} | ${m.get("ok") ?? 0} | ${rejected.map(([k, v]) => `${k} ${v}`).join(", ")} |`);
  }
  const list = (title: string, m: Map<string, number>) => `${title}: ${[...m].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => `${k} ${v}`).join(", ")}`;
  lines.push("", list("events", events), "", list("left out by t8n (junk)", junk), "", list("gaps", gaps));
  process.stdout.write(lines.join("\n") + "\n");
}

main();
