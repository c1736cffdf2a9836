// t8n throughput, per block, three ways (docs/engineering/performance.md "t8n: per call and as a server"):
//   1. a session of `cbqs t8n --server` (cbqs-t8n-server/v1): the pre-state shipped once, then
//      each block's txs and env, answers with roots and receipts;
//   2. `apply` over the same server: each block with its whole pre-state in the request and the
//      post-state in the answer (what a client without sessions pays);
//   3. `cbqs t8n` per call, as `cbqs fuzz` runs it today: a process per block, three files in,
//      two out, the previous block's --output.alloc as the next --input.alloc.
// The chain is the long-chain generator's (scripts/gen-long-chain.ts), filled first (not timed).
// Every answer is checked against the fixture's roots (1: every field, state_root included;
// 2 and 3: all but state_root/block_hash), so a fast wrong answer does not count.
//
//   node dist/scripts/bench-t8n-server.js [--blocks 500] [--per-call-blocks 30] [--fixture f.json.gz]
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";
import { toHex } from "../src/bytes.js";
import { genesisHash } from "../src/chain/block.js";
import { readFixture } from "../src/harness/documents.js";
import { fillScenario } from "../src/harness/fill.js";
import type { Fixture } from "../src/harness/fixture.js";
import { Replay } from "../src/harness/replay.js";
import { parseScenario } from "../src/scenario/parse.js";
import { generateLongChainScenario } from "./gen-long-chain.js";
import { checkScriptArgs } from "./script-args.js";

const USAGE = `usage: bench-t8n-server [--blocks N] [--per-call-blocks M] [--fixture f.json.gz]
  --blocks N            blocks of the session run (default 500, at most 10000)
  --per-call-blocks M   blocks of the apply and per-call runs (default 30: a process per block is slow)
  --fixture f           a fixture to use instead of generating the long chain's first N blocks`;

checkScriptArgs(process.argv.slice(2), USAGE, ["--blocks", "--per-call-blocks", "--fixture"]);
const arg = (name: string) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? undefined : process.argv[i + 1];
};
const int = (name: string, fallback: number, max: number) => {
  const text = arg(name);
  if (text === undefined) return fallback;
  if (!/^[0-9]{1,6}$/.test(text) || Number(text) < 1 || Number(text) > max) {
    process.stderr.write(`bench-t8n-server: ${name} must be an integer from 1 to ${max}\n${USAGE}\n`);
    process.exit(2);
  }
  return Number(text);
};
const blocks = int("--blocks", 500, 10_000);
const perCallBlocks = Math.min(int("--per-call-blocks", 30, 10_000), blocks);
const CLI = join(import.meta.dirname, "..", "src", "cli.js");

type Obj = Record<string, unknown>;

function chain(): Fixture {
  const file = arg("--fixture");
  if (file !== undefined) return readFixture(file);
  process.stderr.write(`bench-t8n-server: filling the long chain's first ${blocks} blocks (not timed)\n`);
  return fillScenario(parseScenario(generateLongChainScenario({ blocks, minTxs: 5 * blocks })), "none");
}

const f = chain();
const n = Math.min(blocks, f.blocks.length);
const g = f.genesis;
const genesisAlloc = {
  format: "cbqs-state-dump/v1",
  height: "0",
  entries: [...Replay.start(f).replay.store.entries()].map(([k, v]) => ({ key: toHex(k), value: toHex(v) })),
};
const env = (i: number): Obj => {
  const b = f.blocks[i]!;
  return {
    height: b.height.toString(),
    timestamp: b.timestamp.toString(),
    chain_id: g.config.chain_id.toString(),
    chain_instance_id: toHex(g.chain_instance_id),
    governance: toHex(g.config.governance),
    cycle_price: g.config.cycle_price.toString(),
    cell_price: g.config.cell_price.toString(),
    parent_hash: toHex(i === 0 ? genesisHash(g.chain_instance_id, g.config.timestamp, g.state_root) : f.blocks[i - 1]!.block_hash),
  };
};
const txs = (i: number) => f.blocks[i]!.transactions.map(toHex);
const txCount = (m: number) => f.blocks.slice(0, m).reduce((s, b) => s + b.transactions.length, 0);

/** The fixture's values of block i, `full` with state_root and block_hash. */
function check(i: number, r: Obj, full: boolean): void {
  const b = f.blocks[i]!;
  const want: Obj = { tx_root: toHex(b.tx_root), receipt_root: toHex(b.receipt_root), logs_root: toHex(b.logs_root), ...(full ? { state_root: toHex(b.state_root), block_hash: toHex(b.block_hash) } : {}) };
  for (const [k, v] of Object.entries(want)) {
    if (r[k] !== v) throw new Error(`block ${b.height}: ${k} ${String(r[k])}, the fixture has ${String(v)}`);
  }
}

/** A `cbqs t8n --server` process and a request → answer call. */
function startServer() {
  const child = spawn(process.execPath, [CLI, "t8n", "--server"], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const next = async () => JSON.parse((await lines.next()).value as string) as Obj;
  return {
    next,
    call: async (req: Obj) => {
      child.stdin.write(JSON.stringify(req) + "\n");
      const a = await next();
      if (a["error"] !== undefined) throw new Error(`server: ${JSON.stringify(a["error"])}`);
      return a;
    },
    stop: () => new Promise<void>((resolve) => (child.on("close", () => resolve()), child.stdin.end())),
  };
}

const rate = (label: string, m: number, ms: number) => {
  const line = `${label}: ${m} blocks (${txCount(m)} txs) in ${(ms / 1000).toFixed(2)} s = ${((m * 1000) / ms).toFixed(1)} blocks/s`;
  process.stdout.write(line + "\n");
  return (m * 1000) / ms;
};

async function main(): Promise<void> {
  const s = startServer();
  await s.next();
  // 1. session
  let t = performance.now();
  await s.call({ id: 0, method: "session.open", alloc: genesisAlloc });
  let firstBlocks = 0;
  for (let i = 0; i < n; i++) {
    check(i, (await s.call({ id: i + 1, method: "session.apply", session: "s1", txs: txs(i), env: env(i) }))["result"] as Obj, true);
    if (i + 1 === perCallBlocks) firstBlocks = performance.now() - t;
  }
  rate("t8n --server, session", n, performance.now() - t);
  // The same first blocks as the two slower runs, for the ratios.
  const session = rate("t8n --server, session (its first blocks)", perCallBlocks, firstBlocks);
  // 2. apply, the pre-state in every request (the previous answer's post-state)
  let alloc: unknown = genesisAlloc;
  t = performance.now();
  for (let i = 0; i < perCallBlocks; i++) {
    const a = await s.call({ id: `a${i}`, method: "apply", alloc, txs: txs(i), env: env(i), want_post_state: true });
    check(i, a["result"] as Obj, i === 0);
    alloc = a["post_state"];
  }
  const apply = rate("t8n --server, apply with the pre-state", perCallBlocks, performance.now() - t);
  await s.stop();
  // 3. per call
  const dir = mkdtempSync(join(tmpdir(), "cbqs-bench-t8n-"));
  try {
    const file = (name: string) => join(dir, name);
    writeFileSync(file("alloc.json"), JSON.stringify(genesisAlloc));
    t = performance.now();
    for (let i = 0; i < perCallBlocks; i++) {
      writeFileSync(file("txs.json"), JSON.stringify(txs(i)));
      writeFileSync(file("env.json"), JSON.stringify(env(i)));
      const flags = ["--input.alloc", file("alloc.json"), "--input.txs", file("txs.json"), "--input.env", file("env.json"), "--output.result", file("result.json"), "--output.alloc", file("post.json")];
      const r = spawnSync(process.execPath, [CLI, "t8n", "--quiet", ...flags], { encoding: "utf8" });
      if (r.status !== 0) throw new Error(`cbqs t8n: exit ${r.status}: ${r.stderr}`);
      check(i, JSON.parse(readFileSync(file("result.json"), "utf8")) as Obj, i === 0);
      writeFileSync(file("alloc.json"), readFileSync(file("post.json")));
    }
    const perCall = rate("cbqs t8n per call", perCallBlocks, performance.now() - t);
    process.stdout.write(`over the first ${perCallBlocks} blocks: session ${(session / perCall).toFixed(0)}x and apply ${(apply / perCall).toFixed(1)}x the per-call rate\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench-t8n-server: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
