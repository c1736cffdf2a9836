// Start-up benchmark (docs/engineering/performance.md "Start-up"): the wall time of one `cbqs` call that
// does little work — `cbqs --version`, and a per-call `cbqs t8n` of a small block (block 5 of
// fixtures/corpus/create-quote.json, the CLI tour's t8n example) — against a bare `node -e 0`.
// With --base <dir> (another checkout, built: <dir>/dist/src/cli.js) the same two calls of that
// build run too, for a before/after in one run. The variants take turns, run by run, so a busy
// machine slows them all alike; each reports its median. Then the modules each call of this
// build loads (scripts/record-loads.ts), and the packages among them.
//
//   npm run build && node dist/scripts/bench-startup.js [--runs 21] [--base /tmp/lazy-base] [--json]
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { checkScriptArgs } from "./script-args.js";

const USAGE = "usage: node dist/scripts/bench-startup.js [--runs n] [--base <checkout dir>] [--json]";
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

interface Variant {
  name: string;
  args: string[];
  seconds: number[];
}

/** The CLI tour's t8n example inputs: block 5 of create-quote.json on block 4's post-state. */
function t8nInputs(dir: string): string[] {
  const f = JSON.parse(readFileSync(join(ROOT, "fixtures/corpus/create-quote.json"), "utf8")) as {
    genesis: { chain_instance_id: string };
    blocks: Array<{ height: string; timestamp: string; transactions: unknown; post_state: unknown }>;
  };
  const block = f.blocks[1]!;
  const write = (name: string, value: unknown) => writeFileSync(join(dir, `${name}.json`), JSON.stringify(value));
  write("pre", f.blocks[0]!.post_state);
  write("txs", block.transactions);
  write("env", { height: block.height, timestamp: block.timestamp, chain_id: "7", chain_instance_id: f.genesis.chain_instance_id, governance: "0x00000000000000000000000000000000000000aa" });
  return ["t8n", "--input.alloc", join(dir, "pre.json"), "--input.txs", join(dir, "txs.json"), "--input.env", join(dir, "env.json"), "--output.result", join(dir, "r.json"), "--output.alloc", join(dir, "post.json"), "--quiet"];
}

function run(args: string[], env: NodeJS.ProcessEnv = process.env): number {
  const start = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"], env });
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  if (r.status !== 0) throw new Error(`node ${args.join(" ")}: exit ${r.status}: ${r.stderr.toString()}`);
  return seconds;
}

/** The modules `node <args>` loads, as paths relative to this checkout (node: builtins left out). */
function loaded(args: string[], dir: string): string[] {
  const file = join(dir, "loaded.txt");
  rmSync(file, { force: true });
  run(["--import", join(ROOT, "dist/scripts/record-loads.js"), ...args], { ...process.env, CBQS_RECORD_LOADS: file });
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((u) => u.startsWith("file:"))
    .map((u) => fileURLToPath(u).slice(ROOT.length + 1));
}

/** The npm packages among `files` (node_modules/<name> or node_modules/@scope/name). */
function packages(files: string[]): string[] {
  const names = files.map((f) => /^node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(f)?.[1]).filter((n): n is string => n !== undefined);
  return [...new Set(names)].sort();
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function main(): void {
  const argv = process.argv.slice(2);
  checkScriptArgs(argv, USAGE, ["--runs", "--base"], ["--json"]);
  const at = (name: string) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : undefined);
  const runs = Number(at("--runs") ?? 21);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs must be a positive integer (got ${at("--runs")})`);
  const base = at("--base");
  const dir = mkdtempSync(join(tmpdir(), "bench-startup-"));
  try {
    const t8n = t8nInputs(dir);
    const cli = join(ROOT, "dist/src/cli.js");
    const variants: Variant[] = [
      { name: "node -e 0", args: ["-e", "0"], seconds: [] },
      { name: "cbqs --version", args: [cli, "--version"], seconds: [] },
      { name: "cbqs t8n (block 5)", args: [cli, ...t8n], seconds: [] },
    ];
    if (base !== undefined) {
      const baseCli = join(resolve(base), "dist/src/cli.js");
      variants.push({ name: "base cbqs --version", args: [baseCli, "--version"], seconds: [] }, { name: "base cbqs t8n (block 5)", args: [baseCli, ...t8n], seconds: [] });
    }
    for (let i = 0; i < runs; i++) for (const v of variants) v.seconds.push(run(v.args));
    const medians = Object.fromEntries(variants.map((v) => [v.name, median(v.seconds)]));
    const bare = medians["node -e 0"]!;
    const loads = { version: loaded([cli, "--version"], dir), t8n: loaded([cli, ...t8n], dir) };
    if (argv.includes("--json")) {
      process.stdout.write(JSON.stringify({ runs, medians, modules: { version: loads.version.length, t8n: loads.t8n.length }, packages: { version: packages(loads.version), t8n: packages(loads.t8n) } }) + "\n");
      return;
    }
    process.stdout.write(`median wall time of ${runs} runs each (variants interleaved)\n`);
    for (const v of variants) process.stdout.write(`  ${v.name.padEnd(24)} ${medians[v.name]!.toFixed(3)} s  (${(medians[v.name]! / bare).toFixed(1)}x node -e 0)\n`);
    if (base !== undefined) {
      process.stdout.write(`  --version: base/this ${(medians["base cbqs --version"]! / medians["cbqs --version"]!).toFixed(2)}x\n`);
      process.stdout.write(`  t8n:       base/this ${(medians["base cbqs t8n (block 5)"]! / medians["cbqs t8n (block 5)"]!).toFixed(2)}x\n`);
    }
    for (const [name, files] of Object.entries(loads)) process.stdout.write(`modules loaded by ${name}: ${files.length}; packages: ${packages(files).join(", ") || "(none)"}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main();
