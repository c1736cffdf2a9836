// Load on a real `cbqs node` process over loopback, limits off: requests per second and latency
// percentiles for GET /cbqs/broker-state, GET /proof/account and POST /proof/multi (docs/performance.md
// "Node"). The node imports a corpus fixture, then the devnet grows its state with `--accounts`
// funded accounts so proofs walk a realistic tree. The load generator is this process: keep-alive
// connections, each sending its next request when the previous answer is complete (no pipelining).
//
//   npm run build && node dist/scripts/bench-node.js [--seconds 10] [--connections 32] [--accounts 2000]
import { Agent, request } from "node:http";
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { fileURLToPath } from "node:url";
import { encodeEnvelope } from "../src/chain/envelope.js";
import { accountKey } from "../state/kv/keys.js";
import { fromHex, toHex } from "../src/bytes.js";
import { decodeStateValueAs } from "../state/kv/value.js";
import { MemoryChainDb } from "../state/chain-db/memory.js";
import { readFixture } from "../src/harness/documents.js";
import { CbqsNode } from "../src/node/chain-node.js";
import { BrokerStateCache, brokerState } from "../src/node/reads.js";
import { intArg, startNode } from "./node-process.js";
import { checkScriptArgs } from "./script-args.js";

checkScriptArgs(process.argv.slice(2), "usage: bench-node [--seconds N] [--connections N] [--accounts N]", ["--seconds", "--connections", "--accounts"]);
const SECONDS = intArg("seconds", 10);
const CONNECTIONS = intArg("connections", 16);
const ACCOUNTS = intArg("accounts", 2_000);
/** The repository's corpus (dist/scripts/ is two levels below it), whatever the working directory. */
const FIXTURE = fileURLToPath(new URL("../../fixtures/corpus/create-base-schedule.json", import.meta.url));
const FUNDED = new Uint8Array(20).fill(0x11); // 10^18 at genesis in that fixture
const CHAIN_ID = 7n;

interface Target {
  name: string;
  method: "GET" | "POST";
  path: string;
  body?: string;
}

function call(agent: Agent, base: URL, t: Target): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: base.hostname, port: base.port, method: t.method, path: t.path, agent, headers: t.body === undefined ? {} : { "content-type": "application/json" } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
    req.end(t.body);
  });
}

async function load(agent: Agent, base: URL, t: Target, seconds: number) {
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        const r = await call(agent, base, t);
        latencies.push(performance.now() - t0);
        if (r.status !== 200) errors++;
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!;
  return { requests: latencies.length, rps: latencies.length / seconds, p50: pct(50), p99: pct(99), max: latencies[latencies.length - 1]!, errors };
}

/**
 * CPU seconds (user + sys) the server process has used, from /proc (Linux; USER_HZ = 100): with the
 * machine shared, CPU per request says more about the server than wall-clock throughput does.
 */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

async function main(): Promise<void> {
  const { child, url: base } = await startNode(["--fixture", FIXTURE, "--quiet"], "inherit");
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  try {
    // Grow the state: ACCOUNTS transfers from the funded account, mined in blocks of 1,000.
    const funded = JSON.parse((await call(agent, base, { name: "account", method: "GET", path: `/proof/account/${toHex(FUNDED)}` })).text) as { proof: { value: string } };
    let nonce = decodeStateValueAs(fromHex(funded.proof.value), "Account").nonce;
    const addresses: Uint8Array[] = [];
    for (let i = 0; i < ACCOUNTS; i++) {
      const to = new Uint8Array(20);
      to[0] = 0xb0;
      new DataView(to.buffer).setUint32(16, i);
      addresses.push(to);
      const tx = encodeEnvelope({ chain_id: CHAIN_ID, nonce: nonce++, tx: { from: FUNDED, body: { kind: "transfer", to, amount: 1_000n + BigInt(i) } } });
      const r = await call(agent, base, { name: "tx", method: "POST", path: "/tx", body: JSON.stringify(toHex(tx)) });
      if (r.status !== 200) throw new Error(`POST /tx: ${r.status} ${r.text}`);
      if ((i + 1) % 1_000 === 0 || i === ACCOUNTS - 1) await call(agent, base, { name: "mine", method: "POST", path: "/mine" });
    }
    const feed = JSON.parse((await call(agent, base, { name: "feed", method: "GET", path: "/replication?limit=100" })).text) as { items: Array<{ receipts: Array<{ events: Array<{ topic: string; payload: string }> }> }> };
    const created = feed.items.flatMap((i) => i.receipts).flatMap((r) => r.events).find((e) => e.topic === "cbqs.stream.created");
    if (created === undefined) throw new Error("the fixture has no stream");
    const stream = "0x" + created.payload.slice(2, 66);
    const check = await call(agent, base, { name: "broker-state", method: "GET", path: `/cbqs/broker-state?stream=${stream}` });
    if (check.status !== 200) throw new Error(`broker-state: ${check.status} ${check.text}`);
    const keys = (n: number) => JSON.stringify({ keys: addresses.slice(0, n).map((a) => toHex(accountKey(a))) });
    const targets: Target[] = [
      // Baseline: routing and a small JSON answer, no state read (the HTTP floor of this machine and client).
      { name: "GET /.well-known/cbqs (baseline)", method: "GET", path: "/.well-known/cbqs" },
      { name: "GET /cbqs/broker-state", method: "GET", path: `/cbqs/broker-state?stream=${stream}` },
      { name: "GET /proof/account", method: "GET", path: `/proof/account/${toHex(addresses[Math.floor(ACCOUNTS / 2)]!)}` },
      { name: "POST /proof/multi (16 keys)", method: "POST", path: "/proof/multi", body: keys(16) },
      { name: "POST /proof/multi (256 keys)", method: "POST", path: "/proof/multi", body: keys(256) },
    ];
    console.log(`bench-node: ${FIXTURE} + ${ACCOUNTS} accounts; ${CONNECTIONS} keep-alive connections; ${SECONDS} s per endpoint after a 1 s warm-up; loopback, limits off`);
    console.log(`load average before: ${loadavg().map((x) => x.toFixed(2)).join(" ")} (${process.platform}, node ${process.version})`);
    console.log("| endpoint | requests | req/s | vs baseline | p50 ms | p99 ms | max ms | non-200 | server CPU µs/req | req/s per server core |");
    console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    let baseline = 0;
    for (const t of targets) {
      await load(agent, base, t, 1);
      const cpu0 = cpuSeconds(child.pid!);
      const r = await load(agent, base, t, SECONDS);
      const cpuPerReq = ((cpuSeconds(child.pid!) - cpu0) / r.requests) * 1e6;
      if (baseline === 0) baseline = r.rps;
      console.log(
        `| ${t.name} | ${r.requests} | ${Math.round(r.rps)} | ${(r.rps / baseline).toFixed(2)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.max.toFixed(1)} | ${r.errors} | ${cpuPerReq.toFixed(0)} | ${Math.round(1e6 / cpuPerReq)} |`,
      );
    }
    console.log(`load average after: ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
    // The cost of building a broker-state answer when no kept answer exists (the first request at a
    // new block), in-process on the same fixture: what the cache saves per repeated request.
    const db = new MemoryChainDb();
    const node = CbqsNode.open(db, { kind: "fixture", fixture: readFixture(FIXTURE) });
    const build = () => brokerState(db, node.chainInstanceId, node.config.governance, stream, undefined, new BrokerStateCache());
    for (let i = 0; i < 200; i++) build();
    const t0 = performance.now();
    let built = 0;
    while (performance.now() - t0 < 2_000) {
      build();
      built++;
    }
    console.log(`broker-state built without a kept answer (in-process, same fixture): ${((1_000 * (performance.now() - t0)) / built).toFixed(0)} µs per answer`);
  } finally {
    agent.destroy();
    child.kill("SIGTERM");
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
