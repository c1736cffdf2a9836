// GET /metrics (docs/guides/run-a-devnet.md "Metrics", CIP-4 §9.2): scraped over a real socket and read as the
// Prometheus text format; the counters must move as requests are answered, refused and blocks
// produced, and two nodes in one process must not share them.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { devAccount, devnetGenesisSource } from "../../src/harness/devnet.js";
import { NodeMetrics } from "../../src/node/metrics.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";
import { LmdbChainDb } from "../../state/lmdb/chain-db.js";
import { get, post, startNode, toHex, transferTx, type TestNode } from "./helpers.js";

const DEVNET = { kind: "genesis", source: devnetGenesisSource(3) } as const;

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

interface Scrape {
  contentType: string;
  types: Map<string, string>;
  samples: Sample[];
  /** The one sample of `name` whose labels include `labels` (undefined: none). */
  value(name: string, labels?: Record<string, string>): number | undefined;
}

/** The text exposition format, version 0.0.4: `# TYPE name kind` lines and `name{l="v",…} value` samples. */
function parse(contentType: string, text: string): Scrape {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("# HELP ")) continue;
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      types.set(type[1]!, type[2]!);
      continue;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/g)) labels[l[1]!] = l[2]!;
    const value = m[3] === "+Inf" ? Infinity : Number(m[3]);
    if (Number.isNaN(value)) throw new Error(`not a number: ${line}`);
    samples.push({ name: m[1]!, labels, value });
  }
  const value = (name: string, labels: Record<string, string> = {}) => {
    const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
    if (found.length > 1) throw new Error(`${name} ${JSON.stringify(labels)}: ${found.length} samples`);
    return found[0]?.value;
  };
  return { contentType, types, samples, value };
}

async function scrape(url: string): Promise<Scrape> {
  const res = await fetch(url + "/metrics");
  expect(res.status).toBe(200);
  return parse(res.headers.get("content-type") ?? "", await res.text());
}

/** docs/guides/run-a-devnet.md "Metrics": every histogram's upper bounds, in milliseconds. */
const DOCUMENTED_BUCKETS = ["0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10", "25", "50", "100", "250", "500", "1000", "2500", "+Inf"];

/** A histogram's buckets must be cumulative, end with +Inf = count, and use the documented bounds. */
function checkHistogram(s: Scrape, name: string, labels: Record<string, string> = {}): number {
  const buckets = s.samples.filter((x) => x.name === `${name}_bucket` && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
  expect(buckets.map((b) => b.labels["le"])).toEqual(DOCUMENTED_BUCKETS);
  for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.value).toBeGreaterThanOrEqual(buckets[i - 1]!.value);
  const count = s.value(`${name}_count`, labels)!;
  expect(buckets.at(-1)!.value).toBe(count);
  return count;
}

const started: TestNode[] = [];
const start = async (...args: Parameters<typeof startNode>) => {
  const n = await startNode(...args);
  started.push(n);
  return n;
};
afterEach(async () => {
  await Promise.all(started.splice(0).map((n) => n.close()));
});

describe("GET /metrics (CIP-4 §9.2)", () => {
  it("serves the Prometheus text format with the four CIP-4 §9.2 metrics under their names; is discoverable", async () => {
    const n = await start(DEVNET);
    const s = await scrape(n.url);
    expect(s.contentType).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(Object.fromEntries(["block_apply_ms", "batch_commit_ms", "proof_generation_ms", "speculative_cache_size", "cbqs_http_requests_total", "cbqs_http_rate_limited_total", "cbqs_subscribers", "cbqs_store_state_keys"].map((k) => [k, s.types.get(k)]))).toEqual({
      block_apply_ms: "histogram",
      batch_commit_ms: "histogram",
      proof_generation_ms: "histogram",
      speculative_cache_size: "gauge",
      cbqs_http_requests_total: "counter",
      cbqs_http_rate_limited_total: "counter",
      cbqs_subscribers: "gauge",
      cbqs_store_state_keys: "gauge",
    });
    expect([s.value("block_apply_ms_count"), s.value("batch_commit_ms_count"), s.value("speculative_cache_size"), s.value("cbqs_subscribers"), s.value("cbqs_head_height")]).toEqual([0, 0, 0, 0, 0]);
    // An in-memory node has nothing on disk: no such series rather than a misleading 0.
    expect(s.types.has("cbqs_store_disk_bytes")).toBe(false);
    expect((await get(n.url, "/.well-known/cbqs")).body["endpoints"]).toMatchObject({ "cbqs.metrics": "/metrics" });
    // HEAD as every endpoint.
    const head = await fetch(n.url + "/metrics", { method: "HEAD" });
    expect([head.status, await head.text()]).toEqual([200, ""]);
  });

  it("block_apply_ms and batch_commit_ms observe every produced block (POST /mine, a batch, auto mining); the head height and live keys follow", async () => {
    const n = await start(DEVNET);
    const before = (await scrape(n.url)).value("cbqs_store_state_keys")!;
    await post(n.url, "/mine", "");
    await post(n.url, "/mine?blocks=4", "");
    // A transfer to a fresh address: one more live key.
    const tx = transferTx(7n, devAccount(0).address, 0n, new Uint8Array(20).fill(0x5e), 5n);
    expect((await post(n.url, "/tx", toHex(tx))).status).toBe(200);
    await post(n.url, "/mine", "");
    const s = await scrape(n.url);
    expect(checkHistogram(s, "block_apply_ms")).toBe(6);
    expect(checkHistogram(s, "batch_commit_ms")).toBe(6);
    expect(s.value("block_apply_ms_sum")).toBeGreaterThan(0);
    expect(s.value("cbqs_head_height")).toBe(6);
    expect(s.value("cbqs_store_state_keys")).toBeGreaterThan(before);
    expect(s.value("cbqs_store_state_keys")).toBe((n.db as MemoryChainDb).commitment.db.any.activeKeys);
    expect(s.value("speculative_cache_size")).toBe(0);
  });

  it("requests are counted by endpoint name and status, never by path; proof_generation_ms by proof endpoint", async () => {
    const n = await start(DEVNET);
    const dev0 = toHex(devAccount(0).address);
    const dev1 = toHex(devAccount(1).address);
    for (const path of [`/account/${dev0}`, `/account/${dev1}`, "/account/dev2", `/proof/account/${dev0}`, `/proof/account/${dev1}`, `/account/${dev0}?proof=true`]) expect((await get(n.url, path)).status).toBe(200);
    expect((await get(n.url, "/account/0x12")).status).toBe(400);
    for (const path of ["/no/such/thing", "/another-unknown-path", "/proof/nothing/here/at/all"]) expect((await get(n.url, path)).status).toBe(404);
    expect((await fetch(n.url + "/genesis", { method: "POST" })).status).toBe(405);
    const s = await scrape(n.url);
    const requests = (labels: Record<string, string>) => s.value("cbqs_http_requests_total", labels);
    expect(requests({ route: "cbqs.account", status: "200" })).toBe(4);
    expect(requests({ route: "cbqs.account", status: "400" })).toBe(1);
    expect(requests({ route: "cip4.proof.account", status: "200" })).toBe(2);
    expect(requests({ route: "unmatched", status: "404" })).toBe(3);
    expect(requests({ route: "cbqs.genesis", status: "405" })).toBe(1);
    // Every label value is an endpoint name (or "unmatched"): no path ever becomes a series.
    const names = new Set(s.samples.filter((x) => x.name === "cbqs_http_requests_total").map((x) => x.labels["route"]));
    for (const name of names) expect(name).toMatch(/^(unmatched|[a-z0-9]+(\.[a-z0-9-]+)+)$/);
    expect(checkHistogram(s, "proof_generation_ms", { route: "cip4.proof.account" })).toBe(2);
    expect(checkHistogram(s, "proof_generation_ms", { route: "cbqs.account" })).toBe(1); // ?proof=true only
    // The scrape itself is counted by the next one.
    expect((await scrape(n.url)).value("cbqs_http_requests_total", { route: "cbqs.metrics", status: "200" })).toBe(1);
  });

  it("429s are counted by endpoint and the limit that refused them (client, global, proof)", async () => {
    let clock = 0;
    const n = await start(DEVNET, { rateLimit: 100, clientRateLimit: 3, proofRateLimit: 1, now: () => clock });
    const statuses: number[] = [];
    for (let i = 0; i < 2; i++) statuses.push((await get(n.url, `/proof/account/${toHex(devAccount(0).address)}`)).status);
    for (let i = 0; i < 2; i++) statuses.push((await get(n.url, "/genesis")).status);
    statuses.push((await get(n.url, "/nowhere")).status);
    expect(statuses).toEqual([200, 429, 200, 429, 429]);
    clock += 10_000; // every bucket full again
    const s = await scrape(n.url);
    expect(s.value("cbqs_http_rate_limited_total", { route: "cip4.proof.account", limit: "proof" })).toBe(1);
    expect(s.value("cbqs_http_rate_limited_total", { route: "cbqs.genesis", limit: "client" })).toBe(1);
    expect(s.value("cbqs_http_rate_limited_total", { route: "unmatched", limit: "client" })).toBe(1);
    expect(s.value("cbqs_http_requests_total", { route: "cip4.proof.account", status: "429" })).toBe(1);
    expect(s.value("cbqs_http_requests_total", { route: "cbqs.genesis", status: "429" })).toBe(1);
    // The global limit: a second client address is not available on loopback, so the global
    // bucket is made smaller than the client's.
    const g = await start(DEVNET, { rateLimit: 1, clientRateLimit: 5, now: () => 0 });
    expect([(await get(g.url, "/genesis")).status, (await get(g.url, "/genesis")).status]).toEqual([200, 429]);
    const res = await fetch(g.url + "/metrics");
    expect(res.status).toBe(429); // /metrics is an endpoint like the others, under the same limits
    expect(await res.json()).toMatchObject({ error: { code: "rate_limited" } });
    expect(g.metrics.registry.getSingleMetric("cbqs_http_rate_limited_total")).toBeDefined();
    const text = await g.metrics.registry.metrics();
    expect(text).toContain('cbqs_http_rate_limited_total{route="cbqs.genesis",limit="global"} 1');
    expect(text).toContain('cbqs_http_rate_limited_total{route="cbqs.metrics",limit="global"} 1');
  });

  it("two nodes in one process keep their own counters; the subscribers gauge counts open GET /subscribe subscriptions", async () => {
    const a = await start(DEVNET);
    const b = await start(DEVNET);
    await post(a.url, "/mine?blocks=3", "");
    await get(a.url, "/genesis");
    const [sa, sb] = [await scrape(a.url), await scrape(b.url)];
    expect([sa.value("block_apply_ms_count"), sb.value("block_apply_ms_count")]).toEqual([3, 0]);
    expect([sa.value("cbqs_http_requests_total", { route: "cbqs.genesis" }), sb.value("cbqs_http_requests_total", { route: "cbqs.genesis" })]).toEqual([1, undefined]);
    const aborter = new AbortController();
    const subscription = await fetch(a.url + "/subscribe", { signal: aborter.signal });
    const reader = subscription.body!.getReader();
    await reader.read(); // the first event: the subscription is open
    try {
      expect([(await scrape(a.url)).value("cbqs_subscribers"), (await scrape(b.url)).value("cbqs_subscribers")]).toEqual([1, 0]);
    } finally {
      aborter.abort();
      await reader.cancel().catch(() => {});
    }
    // Gone once the node has seen the connection close.
    for (let i = 0; i < 100 && (await scrape(a.url)).value("cbqs_subscribers") !== 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect((await scrape(a.url)).value("cbqs_subscribers")).toBe(0);
  });

  it("a request whose client goes away before it is answered is counted with status none", async () => {
    const n = await start(DEVNET);
    // A POST /tx (a devnet's cbqs.devnet.tx) whose body never arrives in full: the client leaves mid-body.
    const socket = connect(Number(new URL(n.url).port), "127.0.0.1");
    await new Promise<void>((r) => socket.once("connect", () => r()));
    socket.write("POST /tx HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Cbqs-Client: test\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n0x12");
    socket.destroy();
    let s = await scrape(n.url);
    for (let i = 0; i < 500 && s.value("cbqs_http_requests_total", { route: "cbqs.devnet.tx" }) === undefined; i++) {
      await new Promise((r) => setTimeout(r, 20));
      s = await scrape(n.url);
    }
    expect(s.samples.filter((x) => x.name === "cbqs_http_requests_total" && x.labels["route"] === "cbqs.devnet.tx")).toEqual([
      { name: "cbqs_http_requests_total", labels: { route: "cbqs.devnet.tx", status: "none" }, value: 1 },
    ]);
  });

  it("a store without a block yet reads as height 0; a block staged and not yet committed is speculative_cache_size 1; no subscriber count given is 0", async () => {
    const db = new MemoryChainDb();
    const metrics = new NodeMetrics(() => db);
    const read = async () => {
      const answer = await metrics.answer();
      return parse(answer.contentType, answer.text);
    };
    const empty = await read();
    expect([empty.value("cbqs_head_height"), empty.value("speculative_cache_size"), empty.value("cbqs_subscribers")]).toEqual([0, 0, 0]);
    db.stage({ height: 1n, stateRoot: new Uint8Array(32), undo: new Map() });
    expect((await read()).value("speculative_cache_size")).toBe(1);
  });

  it("cbqs_unread_answer_bytes reports, at each scrape, the bytes of answers the server holds unsent", async () => {
    const metrics = new NodeMetrics(() => new MemoryChainDb());
    let unsent = 0;
    metrics.unreadBytes = () => unsent;
    const read = async () => {
      const answer = await metrics.answer();
      return parse(answer.contentType, answer.text).value("cbqs_unread_answer_bytes");
    };
    expect(await read()).toBe(0);
    unsent = 8_388_608;
    expect(await read()).toBe(8_388_608);
    unsent = 0;
    expect(await read()).toBe(0);
  });

  it("the explorer's files are counted as cbqs.explorer, never by their path", async () => {
    const n = await start(DEVNET);
    for (const path of ["/", "/explorer/no-such-file.js"]) await fetch(n.url + path).then((r) => r.arrayBuffer());
    const s = await scrape(n.url);
    const explorer = s.samples.filter((x) => x.name === "cbqs_http_requests_total" && x.labels["route"] === "cbqs.explorer");
    expect(explorer.reduce((sum, x) => sum + x.value, 0)).toBe(2);
    expect(s.samples.filter((x) => x.name === "cbqs_http_requests_total").every((x) => !x.labels["route"]!.includes("/"))).toBe(true);
  });

  it("an LMDB store reports the bytes its data file occupies on disk", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cbqs-metrics-"));
    try {
      const n = await start(DEVNET, { db: LmdbChainDb.open(dir) });
      await post(n.url, "/mine?blocks=2", "");
      const s = await scrape(n.url);
      expect(s.types.get("cbqs_store_disk_bytes")).toBe("gauge");
      expect(s.value("cbqs_store_disk_bytes")).toBe(statSync(join(dir, "data.mdb")).blocks * 512);
      expect(s.value("cbqs_store_disk_bytes")).toBeGreaterThan(0);
      expect(checkHistogram(s, "batch_commit_ms")).toBe(2);
    } finally {
      await Promise.all(started.splice(0).map((n) => n.close()));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
