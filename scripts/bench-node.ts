// Load on a real `cbqs node` process over loopback, limits off, WHILE IT PRODUCES BLOCKS (the
// real condition; docs/engineering/performance.md "Node"): requests per second and latency percentiles for
// GET /cbqs/broker-state, GET /proof/account (one key, and keys spread over every funded account)
// and POST /proof/multi. The node imports a corpus fixture, the devnet grows its state with
// `--accounts` funded accounts, then runs `--mining interval --block-time <s>` while a sender
// here posts `--tx-rate` transfers per second; `--block-time 0` measures a node producing nothing.
// `--baseline <dist>` runs another build's node (e.g. main's) beside this one, the two measured
// in turn per endpoint, so each row has its ratio from the same minutes of the same machine.
//
// The load generator is this process: `--connections` keep-alive sockets, each sending its next
// request when the previous answer is complete (no pipelining). It writes requests and reads
// answers on raw sockets (a request is a fixed byte string; an answer is read by its
// content-length), because node:http's client costs more CPU per request than the node's server
// does, and it shares the 2 cores with the node; its own CPU is reported. `--pin` runs the node on
// core 0 and this process on core 1, so neither takes the other's core.
//
//   npm run build && node dist/scripts/bench-node.js [--seconds 5] [--connections 16] [--accounts 2000]
//       [--block-time 1] [--tx-rate 100] [--baseline <dist dir>] [--pin] [--only <name,…>] [--profile <dir>]
// (`--only broker-state,multi`: the endpoints whose names contain one of those; `--profile <dir>`:
// each node writes a V8 CPU profile there when it stops, node --cpu-prof.)
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { loadavg } from "node:os";
import { resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath, pathToFileURL } from "node:url";
import { encodeEnvelope } from "../src/chain/envelope.js";
import { accountKey } from "../state/kv/keys.js";
import { fromHex, toHex } from "../src/bytes.js";
import { decodeStateValueAs } from "../state/kv/value.js";
import { startNode } from "./node-process.js";
import { checkScriptArgs } from "./script-args.js";

const USAGE =
  "usage: bench-node [--seconds N] [--connections N] [--accounts N] [--block-time S] [--tx-rate N] [--baseline <dist dir>] [--pin] [--only <name,…>] [--profile <dir>] [--open <req/s>]";
checkScriptArgs(process.argv.slice(2), USAGE, ["--seconds", "--connections", "--accounts", "--block-time", "--tx-rate", "--baseline", "--only", "--profile", "--open"], ["--pin"]);
const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? undefined : process.argv[i + 1]!;
};
const int = (name: string, fallback: number, min = 1) => {
  const text = arg(name);
  if (text === undefined) return fallback;
  const v = Number(text);
  if (!Number.isSafeInteger(v) || v < min) throw new Error(`--${name} must be an integer of at least ${min}`);
  return v;
};
const SECONDS = int("seconds", 5);
const CONNECTIONS = int("connections", 16);
const ACCOUNTS = int("accounts", 2_000);
const BLOCK_TIME = arg("block-time") ?? "1";
const TX_RATE = int("tx-rate", 100, 0);
const BASELINE = arg("baseline");
const PIN = process.argv.includes("--pin");
const ONLY = arg("only")?.split(",");
const PROFILE = arg("profile");
/**
 * Open loop: requests are due at this total rate whether or not the node keeps up, and a latency
 * is counted from when its request was due (so a stall delays every request due during it, as it
 * would for clients that do not wait for each other). Without it the load is closed-loop.
 */
const OPEN_RATE = arg("open") === undefined ? undefined : int("open", 1);
const PRODUCING = Number(BLOCK_TIME) > 0;
/** The repository's corpus (dist/scripts/ is two levels below it), whatever the working directory. */
const FIXTURE = fileURLToPath(new URL("../../fixtures/corpus/create-base-schedule.json", import.meta.url));
const FUNDED = new Uint8Array(20).fill(0x11); // 10^18 at genesis in that fixture
const CHAIN_ID = 7n;

interface Answer {
  status: number;
  body: Buffer;
}

/** One keep-alive connection, one request at a time, answers read by their content-length. */
class Connection {
  private readonly socket: Socket;
  private chunks: Buffer[] = [];
  private size = 0;
  private waiting: { resolve: (a: Answer) => void; reject: (e: Error) => void } | undefined;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on("data", (d: Buffer) => this.data(d));
    socket.on("error", (e) => this.waiting?.reject(e));
    socket.on("close", () => this.waiting?.reject(new Error("the node closed the connection")));
  }

  static open(url: URL): Promise<Connection> {
    return new Promise((resolveOpen, reject) => {
      const socket = connect(Number(url.port), url.hostname, () => resolveOpen(new Connection(socket)));
      socket.once("error", reject);
    });
  }

  send(request: Buffer): Promise<Answer> {
    return new Promise((resolveAnswer, reject) => {
      this.waiting = { resolve: resolveAnswer, reject };
      this.socket.write(request);
    });
  }

  private data(d: Buffer): void {
    this.chunks.push(d);
    this.size += d.length;
    const all = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
    const end = all.indexOf("\r\n\r\n");
    if (end < 0) return;
    const head = all.toString("latin1", 0, end);
    const length = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (length === null) throw new Error(`an answer without content-length: ${head}`);
    const total = end + 4 + Number(length[1]);
    if (all.length < total) {
      this.chunks = [all];
      return;
    }
    if (all.length > total) throw new Error("more bytes than one answer (the client never pipelines)");
    this.chunks = [];
    this.size = 0;
    const w = this.waiting!;
    this.waiting = undefined;
    w.resolve({ status: Number(head.slice(9, 12)), body: all.subarray(end + 4) });
  }

  close(): void {
    this.socket.destroy();
  }
}

const requestBytes = (url: URL, method: "GET" | "POST", path: string, body?: string): Buffer =>
  Buffer.from(
    `${method} ${path} HTTP/1.1\r\nhost: ${url.host}\r\n${method === "POST" ? "x-cbqs-client: bench\r\n" : ""}` +
      (body === undefined ? "\r\n" : `content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`),
  );

interface Target {
  name: string;
  /** On `node`: the i-th request's bytes (a target may vary its key per request). */
  on: (node: Node) => (i: number) => Buffer;
}

interface Result {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  max: number;
  errors: number;
  serverUsPerReq: number;
  clientCores: number;
  txs: number;
  blocks: number;
  load: number;
}

/** CPU seconds (user + sys) of a process, from /proc (Linux; USER_HZ = 100). */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** A node of one build, with its sender's envelopes (the funded account's next nonces). */
interface Node {
  label: string;
  url: URL;
  pid: number;
  /** SIGTERM, resolved once it has exited (a profile is written by then). */
  stop: () => Promise<void>;
  nextNonce: bigint;
  addresses: Uint8Array[];
  stream: string;
}

function transfer(node: Node, i: number): string {
  const to = node.addresses[i % node.addresses.length]!;
  return JSON.stringify(toHex(encodeEnvelope({ chain_id: CHAIN_ID, nonce: node.nextNonce++, tx: { from: FUNDED, body: { kind: "transfer", to, amount: 1n } } })));
}

async function ask(conn: Connection, url: URL, method: "GET" | "POST", path: string, body?: string): Promise<unknown> {
  const a = await conn.send(requestBytes(url, method, path, body));
  if (a.status !== 200) throw new Error(`${method} ${path}: ${a.status} ${a.body.toString()}`);
  return JSON.parse(a.body.toString());
}

async function start(label: string, cli: string | undefined): Promise<Node> {
  const mining = PRODUCING ? ["--mining", "interval", "--block-time", BLOCK_TIME] : [];
  const { child, url } = await startNode(["--fixture", FIXTURE, "--quiet", ...mining], "inherit", {
    ...(cli === undefined ? {} : { cli }),
    ...(PIN ? { cpus: "0" } : {}),
    ...(PROFILE === undefined ? {} : { nodeFlags: ["--cpu-prof", `--cpu-prof-dir=${resolve(PROFILE)}`] }),
  });
  const conn = await Connection.open(url);
  // Grow the state: ACCOUNTS transfers from the funded account, mined in blocks of 1,000.
  const funded = (await ask(conn, url, "GET", `/proof/account/${toHex(FUNDED)}`)) as { proof: { value: string } };
  const node: Node = { label, url, pid: child.pid!, stop: () => new Promise<void>((done) => (child.once("exit", () => done()), child.kill("SIGTERM"))), nextNonce: decodeStateValueAs(fromHex(funded.proof.value), "Account").nonce, addresses: [], stream: "" };
  for (let i = 0; i < ACCOUNTS; i++) {
    const to = new Uint8Array(20);
    to[0] = 0xb0;
    new DataView(to.buffer).setUint32(16, i);
    node.addresses.push(to);
    await ask(conn, url, "POST", "/tx", JSON.stringify(toHex(encodeEnvelope({ chain_id: CHAIN_ID, nonce: node.nextNonce++, tx: { from: FUNDED, body: { kind: "transfer", to, amount: 1_000n + BigInt(i) } } }))));
    if ((i + 1) % 1_000 === 0 || i === ACCOUNTS - 1) await ask(conn, url, "POST", "/mine");
  }
  const feed = (await ask(conn, url, "GET", "/replication?limit=100")) as { items: Array<{ receipts: Array<{ events: Array<{ topic: string; payload: string }> }> }> };
  const created = feed.items.flatMap((i) => i.receipts).flatMap((r) => r.events).find((e) => e.topic === "cbqs.stream.created");
  if (created === undefined) throw new Error("the fixture has no stream");
  node.stream = "0x" + created.payload.slice(2, 66);
  await ask(conn, url, "GET", `/cbqs/broker-state?stream=${node.stream}`);
  conn.close();
  return node;
}

/** Drives `target` on `node` for `seconds` while the sender posts TX_RATE transfers per second to it. */
async function load(node: Node, target: Target, seconds: number): Promise<Result> {
  const conns = await Promise.all(Array.from({ length: CONNECTIONS }, () => Connection.open(node.url)));
  const sender = await Connection.open(node.url);
  const make = target.on(node);
  const latencies: number[] = [];
  let errors = 0;
  let txs = 0;
  let next = 0;
  const heightOf = async () => Number(((await ask(sender, node.url, "GET", "/cbqs/finalized-view")) as { height: string }).height);
  const firstHeight = await heightOf();
  const cpu0 = cpuSeconds(node.pid);
  const client0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const send = async () => {
    if (TX_RATE === 0 || !PRODUCING) return;
    while (performance.now() < end) {
      const due = t0 + (txs * 1000) / TX_RATE;
      const now = performance.now();
      if (due > now) await sleep(due - now);
      const a = await sender.send(requestBytes(node.url, "POST", "/tx", transfer(node, txs)));
      if (a.status !== 200) throw new Error(`POST /tx: ${a.status} ${a.body.toString()}`);
      txs++;
    }
  };
  await Promise.all([
    send(),
    ...conns.map(async (c, ci) => {
      // Open loop: connection ci's k-th request is due at t0 + (k·C + ci)/rate.
      const interval = OPEN_RATE === undefined ? 0 : (1000 * conns.length) / OPEN_RATE;
      for (let k = 0; performance.now() < end; k++) {
        let started = performance.now();
        if (OPEN_RATE !== undefined) {
          const due = t0 + (k + ci / conns.length) * interval;
          if (due >= end) break;
          if (due > started) await sleep(due - started);
          started = due;
        }
        const a = await c.send(make(next++));
        latencies.push(performance.now() - started);
        if (a.status !== 200) errors++;
      }
    }),
  ]);
  const wall = (performance.now() - t0) / 1000;
  const client = process.cpuUsage(client0);
  const serverCpu = cpuSeconds(node.pid) - cpu0;
  const blocks = (await heightOf()) - firstHeight;
  for (const c of [...conns, sender]) c.close();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!;
  return {
    requests: latencies.length,
    rps: latencies.length / wall,
    p50: pct(50),
    p99: pct(99),
    max: latencies[latencies.length - 1]!,
    errors,
    serverUsPerReq: (serverCpu / latencies.length) * 1e6,
    clientCores: (client.user + client.system) / 1e6 / wall,
    txs,
    blocks,
    load: loadavg()[0]!,
  };
}

/**
 * µs per single-key account proof built without a cache, on the in-memory store of the bench's
 * chain (the fixture plus ACCOUNTS funded accounts), by the build whose dist/ is `dist`.
 */
async function proofCostUs(dist: string): Promise<number> {
  const load = (path: string) => import(pathToFileURL(resolve(dist, path)).href);
  const [{ MemoryChainDb }, { readFixture }, { CbqsNode }, { stateProof }] = await Promise.all([
    load("state/chain-db/memory.js"),
    load("src/harness/documents.js"),
    load("src/chain-node/chain-node.js"),
    load("src/node/proofs.js"),
  ]);
  const db = new MemoryChainDb();
  const node = CbqsNode.open(db, { kind: "fixture", fixture: readFixture(FIXTURE) });
  let nonce = node.chain.account(FUNDED).nonce as bigint;
  const keys: Uint8Array[] = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const to = new Uint8Array(20);
    to[0] = 0xb0;
    new DataView(to.buffer).setUint32(16, i);
    keys.push(accountKey(to));
    node.submit(encodeEnvelope({ chain_id: CHAIN_ID, nonce: nonce++, tx: { from: FUNDED, body: { kind: "transfer", to, amount: 1_000n + BigInt(i) } } }));
    if ((i + 1) % 1_000 === 0 || i === ACCOUNTS - 1) node.mine();
  }
  const limits = { maxExclusionOps: 4096 };
  for (let i = 0; i < 500; i++) stateProof(db, keys[i % keys.length], limits);
  let built = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < 2_000) stateProof(db, keys[built++ % keys.length], limits);
  return (1_000 * (performance.now() - t0)) / built;
}

async function main(): Promise<void> {
  if (PIN) execFileSync("taskset", ["-pc", "1", String(process.pid)], { stdio: "ignore" });
  const builds: Array<[string, string | undefined]> = [["this build", undefined]];
  if (BASELINE !== undefined) builds.unshift([`baseline ${BASELINE}`, resolve(BASELINE, "src", "cli.js")]);
  const nodes: Node[] = [];
  try {
    for (const [label, cli] of builds) nodes.push(await start(label, cli));
    const keys = (node: Node, n: number) => JSON.stringify({ keys: node.addresses.slice(0, n).map((a) => toHex(accountKey(a))) });
    const targets: Target[] = [];
    const add = (name: string, request: (node: Node, url: URL) => (i: number) => Buffer) => targets.push({ name, on: (n) => request(n, n.url) });
    add("GET /.well-known/cbqs (HTTP floor)", (_n, url) => {
      const b = requestBytes(url, "GET", "/.well-known/cbqs");
      return () => b;
    });
    add("GET /cbqs/broker-state", (n, url) => {
      const b = requestBytes(url, "GET", `/cbqs/broker-state?stream=${n.stream}`);
      return () => b;
    });
    add("GET /proof/account (one key)", (n, url) => {
      const b = requestBytes(url, "GET", `/proof/account/${toHex(n.addresses[Math.floor(n.addresses.length / 2)]!)}`);
      return () => b;
    });
    add(`GET /proof/account (${ACCOUNTS} keys in turn)`, (n, url) => {
      const all = n.addresses.map((a) => requestBytes(url, "GET", `/proof/account/${toHex(a)}`));
      return (i) => all[i % all.length]!;
    });
    add("POST /proof/multi (16 keys)", (n, url) => {
      const b = requestBytes(url, "POST", "/proof/multi", keys(n, 16));
      return () => b;
    });
    add("POST /proof/multi (256 keys)", (n, url) => {
      const b = requestBytes(url, "POST", "/proof/multi", keys(n, 256));
      return () => b;
    });
    const chosen = ONLY === undefined ? targets : targets.filter((t) => ONLY.some((o) => t.name.includes(o)));
    const loop = OPEN_RATE === undefined ? "closed loop" : `open loop at ${OPEN_RATE} req/s (latency from each request's due time)`;
    const production = PRODUCING ? `producing a block every ${BLOCK_TIME} s (--mining interval) while this process posts ${TX_RATE} transfers/s` : "producing no blocks";
    console.log(`bench-node: ${FIXTURE} + ${ACCOUNTS} accounts; ${production}; ${CONNECTIONS} keep-alive connections, ${loop}; ${SECONDS} s per endpoint and build after a 1 s warm-up; loopback, limits off${PIN ? "; node pinned to core 0, this client to core 1" : ""}`);
    console.log(`load average before: ${loadavg().map((x) => x.toFixed(2)).join(" ")} (${process.platform}, node ${process.version})`);
    console.log("| endpoint | build | req/s | vs baseline | p50 ms | p99 ms | max ms | non-200 | server CPU µs/req | client cores | blocks | txs | load avg (1 min) |");
    console.log("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (const [i, t] of chosen.entries()) {
      // The builds take turns going first (ABBA): a load that drifts during the run favours neither.
      const order = i % 2 === 0 ? nodes : [...nodes].reverse();
      const results = new Map<Node, Result>();
      for (const node of order) {
        await load(node, t, 1);
        results.set(node, await load(node, t, SECONDS));
      }
      const base = results.get(nodes[0]!)!.rps;
      for (const node of nodes) {
        const r = results.get(node)!;
        console.log(
          `| ${t.name} | ${node.label} | ${Math.round(r.rps)} | ${(r.rps / base).toFixed(2)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.max.toFixed(1)} | ${r.errors} | ${r.serverUsPerReq.toFixed(0)} | ${r.clientCores.toFixed(2)} | ${r.blocks} | ${r.txs} | ${r.load.toFixed(2)} |`,
        );
      }
    }
    console.log(`load average after: ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
    // What a proof costs when no kept answer exists (the first request for a key at a new head).
    for (const [label, cli] of builds) {
      const dist = cli === undefined ? fileURLToPath(new URL("..", import.meta.url)) : resolve(cli, "..", "..");
      console.log(`account proof built afresh, in process (${label}): ${(await proofCostUs(dist)).toFixed(0)} µs per proof (load average ${loadavg()[0]!.toFixed(2)})`);
    }
  } finally {
    await Promise.all(nodes.map((n) => n.stop()));
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
