// Devnet block production (docs/engineering/performance.md "Devnet mining"): empty blocks, as a test suite
// fast-forwarding a devnet produces them.
//   1. in process, one CbqsNode.mine() per block on the in-memory store: this build, and with
//      --baseline <dist> another build's, in alternating rounds in the same process (the machine's
//      load hits both alike); median µs per block;
//   2. over HTTP: one `POST /mine?blocks=N` to a real `cbqs node` process of this build on
//      loopback (N = --blocks, default 100,000, the goal being ≤ 10 s on 2 cores): seconds, µs
//      per block, blocks per second, and the answer checked (N blocks, the head at N); then a
//      snapshot at that head, 10 more blocks and POST /devnet/revert to it, which replays the N
//      blocks from genesis: seconds and µs per replayed block.
//
//   npm run build && node dist/scripts/bench-mine.js [--blocks 100000] [--per-round 5000] [--rounds 5] [--baseline <dist dir>] [--json]
import { loadavg } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { request } from "node:http";
import { intArg, startNode } from "./node-process.js";
import { checkScriptArgs } from "./script-args.js";

const USAGE = "usage: bench-mine [--blocks N] [--per-round N] [--rounds N] [--baseline <dist dir>] [--json]";
checkScriptArgs(process.argv.slice(2), USAGE, ["--blocks", "--per-round", "--rounds", "--baseline"], ["--json"]);
const BLOCKS = intArg("blocks", 100_000);
const PER_ROUND = intArg("per-round", 5_000);
const ROUNDS = intArg("rounds", 5);
const baselineAt = process.argv.indexOf("--baseline");
const BASELINE = baselineAt < 0 ? undefined : resolve(process.argv[baselineAt + 1]!);
const JSON_OUT = process.argv.includes("--json");

/** What a build offers for the in-process run: a node on the default genesis, in memory. */
interface Build {
  label: string;
  fresh(): { mine(): unknown };
}

async function loadBuild(label: string, dist: string): Promise<Build> {
  const at = (path: string) => import(pathToFileURL(join(dist, path)).href);
  const [{ CbqsNode }, { MemoryChainDb }, { DEFAULT_GENESIS_SOURCE }] = await Promise.all([at("src/chain-node/chain-node.js"), at("state/chain-db/memory.js"), at("src/harness/genesis.js")]);
  return { label, fresh: () => CbqsNode.open(new MemoryChainDb(), { kind: "genesis", source: DEFAULT_GENESIS_SOURCE }) };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function inProcess(builds: Build[]): Array<{ label: string; us_per_block: number; rounds: number[] }> {
  const times = builds.map(() => [] as number[]);
  for (let round = 0; round < ROUNDS; round++) {
    builds.forEach((b, i) => {
      const node = b.fresh();
      for (let k = 0; k < 200; k++) node.mine(); // past the first blocks' one-time costs
      const t = performance.now();
      for (let k = 0; k < PER_ROUND; k++) node.mine();
      times[i]!.push(((performance.now() - t) * 1000) / PER_ROUND);
    });
  }
  return builds.map((b, i) => ({ label: b.label, us_per_block: median(times[i]!), rounds: times[i]! }));
}

function post(base: URL, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((done, fail) => {
    const req = request({ host: base.hostname, port: base.port, method: "POST", path, headers: { "x-cbqs-client": "bench" }, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => done({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown> }));
    });
    req.on("error", fail);
    req.end();
  });
}

interface HttpRun {
  blocks: number;
  seconds: number;
  us_per_block: number;
  blocks_per_second: number;
  revert_seconds: number;
  revert_us_per_block: number;
}

async function overHttp(): Promise<HttpRun> {
  const { child, url } = await startNode(["--quiet"], "inherit");
  try {
    const t = performance.now();
    const r = await post(url, `/mine?blocks=${BLOCKS}`);
    const seconds = (performance.now() - t) / 1000;
    if (r.status !== 200 || r.body["blocks"] !== BLOCKS || r.body["height"] !== String(BLOCKS)) throw new Error(`unexpected answer ${r.status}: ${JSON.stringify(r.body).slice(0, 300)}`);
    const id = (await post(url, "/devnet/snapshot")).body["id"] as string;
    await post(url, "/mine?blocks=10");
    const t2 = performance.now();
    const back = await post(url, `/devnet/revert?id=${id}`);
    const revertSeconds = (performance.now() - t2) / 1000;
    if (back.status !== 200 || back.body["height"] !== String(BLOCKS)) throw new Error(`unexpected revert answer ${back.status}: ${JSON.stringify(back.body).slice(0, 300)}`);
    return {
      blocks: BLOCKS,
      seconds,
      us_per_block: (seconds * 1e6) / BLOCKS,
      blocks_per_second: BLOCKS / seconds,
      revert_seconds: revertSeconds,
      revert_us_per_block: (revertSeconds * 1e6) / BLOCKS,
    };
  } finally {
    child.kill("SIGTERM");
  }
}

const builds = [await loadBuild("this build", join(import.meta.dirname, ".."))];
if (BASELINE !== undefined) builds.push(await loadBuild(`baseline ${BASELINE}`, BASELINE));
const load = loadavg()[0]!;
const local = inProcess(builds);
const http = await overHttp();
if (JSON_OUT) {
  process.stdout.write(JSON.stringify({ load_average_1m: load, per_round: PER_ROUND, rounds: ROUNDS, in_process: local, http }) + "\n");
} else {
  process.stdout.write(`bench-mine: 1-minute load average ${load.toFixed(2)} at the start\n`);
  for (const r of local) process.stdout.write(`in process, ${r.label}: ${r.us_per_block.toFixed(1)} µs per empty block (median of ${ROUNDS} rounds of ${PER_ROUND})\n`);
  if (local.length > 1) process.stdout.write(`in process: this build takes ${((local[0]!.us_per_block / local[1]!.us_per_block) * 100).toFixed(0)} % of the baseline's time\n`);
  process.stdout.write(`POST /mine?blocks=${http.blocks}: ${http.seconds.toFixed(2)} s, ${http.us_per_block.toFixed(1)} µs per block, ${Math.round(http.blocks_per_second)} blocks/s\n`);
  process.stdout.write(`POST /devnet/revert to height ${http.blocks} (replays ${http.blocks} blocks): ${http.revert_seconds.toFixed(2)} s, ${http.revert_us_per_block.toFixed(1)} µs per block\n`);
}
