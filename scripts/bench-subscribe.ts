// GET /subscribe under load, on a real `cbqs node` process over loopback (docs/guides/run-a-devnet.md
// "Subscriptions", docs/engineering/performance.md "Subscriptions"): the node's resident memory with
// --subscribers reading clients connected, how long a block takes to reach all of them after the
// POST /mine answer (against one subscriber alone, the baseline of the same run), a burst of
// blocks, the --max-subscribers bound, and --stalled clients that never read: each must be dropped
// and the node's memory must stay bounded while blocks keep coming. Bounded in counts and time;
// every client is this process.
//
//   npm run build && node dist/scripts/bench-subscribe.js [--subscribers 1000] [--stalled 200] [--blocks 20]
import { request, type ClientRequest } from "node:http";
import { connect, type Socket } from "node:net";
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { DEFAULT_SUBSCRIBER_BUFFER } from "../src/node/subscriptions.js";
import { intArg, startNode } from "./node-process.js";
import { checkScriptArgs } from "./script-args.js";

checkScriptArgs(process.argv.slice(2), "usage: bench-subscribe [--subscribers N] [--stalled N] [--blocks N]", ["--subscribers", "--stalled", "--blocks"]);
const SUBSCRIBERS = intArg("subscribers", 1_000);
const STALLED = intArg("stalled", 200);
const BLOCKS = intArg("blocks", 20);
/** The whole run is given up after this long (a bounded script). */
const DEADLINE_MS = 180_000;

/** The node's resident set, MiB (Linux /proc). */
function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m === null ? NaN : Number(m[1]) / 1024;
}

function post(base: URL, path: string): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const req = request({ host: base.hostname, port: base.port, method: "POST", path, headers: { "x-cbqs-client": "bench" }, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (text += c));
      res.on("end", () => (res.statusCode === 200 ? resolve(JSON.parse(text) as Record<string, unknown>) : reject(new Error(`POST ${path}: ${res.statusCode} ${text}`))));
    });
    req.on("error", reject);
    req.end();
  });
}

/** A reading subscriber that keeps only the height of the last block event (the `id:` lines). */
interface Reader {
  req: ClientRequest;
  last: number;
  status: number;
}

function subscribe(base: URL): Promise<Reader> {
  return new Promise((resolve, reject) => {
    const r: Reader = { req: undefined as unknown as ClientRequest, last: -1, status: 0 };
    let tail = "";
    r.req = request({ host: base.hostname, port: base.port, path: "/subscribe", agent: false }, (res) => {
      r.status = res.statusCode ?? 0;
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        const text = tail + chunk;
        for (const m of text.matchAll(/^id: (\d+)$/gm)) r.last = Number(m[1]);
        tail = text.slice(text.lastIndexOf("\n") + 1);
      });
      res.on("error", () => {});
      resolve(r);
    });
    r.req.on("error", reject);
    r.req.end();
  });
}

/** Resolves with the milliseconds until `check` holds, polled every millisecond; throws past `limitMs`. */
async function until(what: string, check: () => boolean, limitMs = 30_000): Promise<number> {
  const t0 = performance.now();
  while (!check()) {
    if (performance.now() - t0 > limitMs) throw new Error(`bench-subscribe: ${what}: not within ${limitMs} ms`);
    await new Promise((r) => setTimeout(r, 1));
  }
  return performance.now() - t0;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Mines `blocks` single blocks, each timed from its POST /mine answer until every reader has it. */
async function fanOut(base: URL, readers: Reader[], blocks: number): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < blocks; i++) {
    const height = Number((await post(base, "/mine"))["height"]);
    times.push(await until(`block ${height} to ${readers.length} subscribers`, () => readers.every((r) => r.last >= height)));
  }
  return times;
}

async function main(): Promise<void> {
  const deadline = setTimeout(() => {
    console.error(`bench-subscribe: gave up after ${DEADLINE_MS / 1000} s`);
    process.exit(1);
  }, DEADLINE_MS);
  const max = SUBSCRIBERS + STALLED;
  // Every subscriber is this one loopback client: its share is the whole bound.
  const { child, url: base, stderr } = await startNode(["--max-subscribers", String(max), "--max-client-subscribers", String(max)], "pipe");
  const pid = child.pid!;
  const readers: Reader[] = [];
  const stalled: Socket[] = [];
  try {
    console.log(`bench-subscribe: ${SUBSCRIBERS} reading subscribers, ${STALLED} that never read, --max-subscribers ${max}; loopback, limits off`);
    console.log(`load average before: ${loadavg().map((x) => x.toFixed(2)).join(" ")} (${process.platform}, node ${process.version})`);
    await post(base, "/mine?blocks=10");
    const idle = rssMiB(pid);

    // Baseline: one subscriber.
    readers.push(await subscribe(base));
    await until("the first subscriber's head event", () => readers[0]!.last >= 10);
    const one = await fanOut(base, readers, BLOCKS);

    // Every reader connected (sequentially: the node sees them one by one, as real clients arrive).
    const t0 = performance.now();
    while (readers.length < SUBSCRIBERS) readers.push(await subscribe(base));
    const head = readers[0]!.last;
    await until("every subscriber's head event", () => readers.every((r) => r.last >= head));
    const connectMs = performance.now() - t0;
    const refusedBefore = readers.filter((r) => r.status !== 200).length;
    const connected = rssMiB(pid);
    const many = await fanOut(base, readers, BLOCKS);
    const afterBlocks = rssMiB(pid);

    // A burst: 1,000 blocks in one POST /mine, until every reader has the last.
    const b0 = performance.now();
    const last = Number((await post(base, "/mine?blocks=1000"))["height"]);
    const burstAnswerMs = performance.now() - b0;
    const burstMs = await until("the burst's last block to every subscriber", () => readers.every((r) => r.last >= last), 60_000);
    const afterBurst = rssMiB(pid);

    // Stalled clients: they send the request and never read. Blocks keep coming until all are dropped.
    for (let i = 0; i < STALLED; i++) {
      const s = connect(Number(base.port), base.hostname);
      s.on("error", () => {});
      s.write(`GET /subscribe HTTP/1.1\r\nHost: ${base.host}\r\n\r\n`);
      s.pause();
      stalled.push(s);
    }
    // The bound: one more than --max-subscribers is refused.
    await new Promise((r) => setTimeout(r, 500));
    const extra = await subscribe(base);
    extra.req.destroy();
    let peak = rssMiB(pid);
    let mined = 0;
    let lastMined = last;
    const dropped = () => (stderr().match(/"msg":"subscriber dropped"/g) ?? []).length;
    const s0 = performance.now();
    while (dropped() < STALLED && performance.now() - s0 < 60_000) {
      const batch = await post(base, "/mine?blocks=2000");
      mined += Number(batch["blocks"]);
      lastMined = Number(batch["height"]);
      peak = Math.max(peak, rssMiB(pid));
    }
    const stalledMs = performance.now() - s0;
    await until("every reader to have the last block", () => readers.every((r) => r.last >= lastMined), 60_000);
    const settled = rssMiB(pid);
    const keptReaders = readers.filter((r) => r.last >= lastMined).length;

    console.log(`| measure | value |`);
    console.log(`| --- | ---: |`);
    console.log(`| node RSS idle, MiB | ${idle.toFixed(1)} |`);
    console.log(`| node RSS with ${SUBSCRIBERS} subscribers, MiB | ${connected.toFixed(1)} (${(((connected - idle) * 1024) / SUBSCRIBERS).toFixed(1)} KiB each) |`);
    console.log(`| connecting ${SUBSCRIBERS} subscribers one by one, s | ${(connectMs / 1000).toFixed(2)} (refused: ${refusedBefore}) |`);
    console.log(`| a block to 1 subscriber, median / max ms (baseline) | ${median(one).toFixed(1)} / ${Math.max(...one).toFixed(1)} |`);
    console.log(`| a block to ${SUBSCRIBERS} subscribers, median / max ms | ${median(many).toFixed(1)} / ${Math.max(...many).toFixed(1)} (${(median(many) / median(one)).toFixed(1)}× the baseline) |`);
    console.log(`| node RSS after ${BLOCKS} blocks, MiB | ${afterBlocks.toFixed(1)} |`);
    console.log(`| 1,000 blocks in one POST /mine: answered / last block at every subscriber, ms | ${burstAnswerMs.toFixed(0)} / ${burstMs.toFixed(0)} |`);
    console.log(`| node RSS after the burst, MiB | ${afterBurst.toFixed(1)} |`);
    console.log(`| subscriber ${max + 1} (over --max-subscribers) | HTTP ${extra.status} |`);
    console.log(`| ${STALLED} stalled subscribers dropped | ${dropped()} of ${STALLED}, after ${mined.toLocaleString("en")} more blocks (${(stalledMs / 1000).toFixed(1)} s) |`);
    console.log(`| node RSS peak while they were dropped, MiB | ${peak.toFixed(1)} (bound on their unsent events: ${STALLED} × ${DEFAULT_SUBSCRIBER_BUFFER / 1024} KiB = ${((STALLED * DEFAULT_SUBSCRIBER_BUFFER) / 2 ** 20).toFixed(0)} MiB, plus one write each) |`);
    console.log(`| node RSS at the end, MiB | ${settled.toFixed(1)} |`);
    console.log(`| reading subscribers that kept every block | ${keptReaders} of ${SUBSCRIBERS} |`);
    console.log(`load average after: ${loadavg().map((x) => x.toFixed(2)).join(" ")}`);
    const ok = refusedBefore === 0 && extra.status === 503 && dropped() === STALLED && keptReaders === SUBSCRIBERS;
    console.log(ok ? "bench-subscribe: bounded" : "bench-subscribe: FAILED (see the table)");
    process.exitCode = ok ? 0 : 1;
  } finally {
    clearTimeout(deadline);
    for (const r of readers) r.req.destroy();
    for (const s of stalled) s.destroy();
    child.kill("SIGTERM");
  }
}

await main();
