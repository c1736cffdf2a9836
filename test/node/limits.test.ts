// CIP-4 §10 and §6.4 at the node's edge: the global rate limit on every endpoint and the per-client
// limit on proof endpoints (429 + Retry-After), 404/405/413 with the error shape, a malformed HTTP
// request answered 400, and an internal or storage error answered by an opaque 500 whose details
// only reach the server's structured log.
import { Agent, request as httpRequest } from "node:http";
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { defaultClientRateLimit, PerClientLimiter, TokenBucket } from "../../src/node/rate-limit.js";
import { DEFAULT_PROOF_RATE_LIMIT, DEFAULT_RATE_LIMIT } from "../../src/node/server.js";
import type { ChainDb } from "../../state/chain-db/chain-db.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";
import { get, post, request, startNode } from "./helpers.js";

const FIXTURE = "fixtures/corpus/create-quote.json";

describe("rate limiting (CIP-4 §10)", () => {
  it("a token bucket allows `rate` requests per second and says when to retry", () => {
    const b = new TokenBucket(3, 0);
    expect([b.take(0), b.take(0), b.take(0)]).toEqual([0, 0, 0]);
    expect(b.take(0)).toBe(1);
    expect(b.take(400)).toBe(0); // 1.2 tokens refilled
    expect(b.take(400)).toBe(1);
    expect(new TokenBucket(0, 0).take(0)).toBe(0); // 0 = off
  });

  it("a per-client limiter that is off (rate 0) allows everyone and keeps no bucket", () => {
    const l = new PerClientLimiter(0, 2);
    for (let i = 0; i < 10; i++) expect(l.take(`client-${i}`, 0)).toBe(0);
    expect(l.size).toBe(0);
  });

  it("the per-client limiter keeps one bucket per client, bounded in number", () => {
    const l = new PerClientLimiter(1, 2);
    expect([l.take("a", 0), l.take("a", 0), l.take("b", 0)]).toEqual([0, 1, 0]);
    expect(l.take("c", 0)).toBe(0); // evicts a, the least recently used
    expect(l.take("a", 0)).toBe(0);
  });

  it("over the global limit every endpoint answers 429 with Retry-After; proofs also have a per-client limit", async () => {
    let clock = 0;
    const n = await startNode(FIXTURE, { rateLimit: 5, clientRateLimit: 0, proofRateLimit: 2, now: () => clock });
    try {
      const codes: number[] = [];
      for (let i = 0; i < 6; i++) codes.push((await get(n.url, i % 2 === 0 ? "/cbqs/finalized-view" : "/nowhere")).status);
      expect(codes).toEqual([200, 404, 200, 404, 200, 429]);
      const limited = await get(n.url, "/cbqs/finalized-view");
      expect(limited.status).toBe(429);
      expect(limited.headers.get("retry-after")).toBe("1");
      expect(limited.body).toMatchObject({ error: { code: "rate_limited" } });
      clock += 1000;
      const proof = "/proof/account/0x1111111111111111111111111111111111111111";
      expect([(await get(n.url, proof)).status, (await get(n.url, proof)).status, (await get(n.url, proof)).status]).toEqual([200, 200, 429]);
      expect((await get(n.url, "/cbqs/finalized-view")).status).toBe(200); // the global budget still has room
    } finally {
      await n.close();
    }
  });
});

/** A GET sent from `localAddress` (127.0.0.2, 127.0.0.3, …: every loopback address is this host), so two test clients are two clients to the node. */
function getFrom(localAddress: string, url: string, agent?: Agent): Promise<{ status: number; body: Record<string, unknown>; retryAfter: string | undefined }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { localAddress, ...(agent === undefined ? {} : { agent }) }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown>, retryAfter: res.headers["retry-after"] }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

const BROKER_STATE = `/cbqs/broker-state?stream=${encodeURIComponent("owner:0x1111111111111111111111111111111111111111/nonce:1")}`;

describe("a fair share per client below the global limit (CIP-4 §10)", () => {
  it("the default per-client limit is a quarter of the global one; the per-client table stays bounded", () => {
    expect([defaultClientRateLimit(100), defaultClientRateLimit(1_000), defaultClientRateLimit(3), defaultClientRateLimit(0)]).toEqual([25, 250, 1, 0]);
    const l = new PerClientLimiter(5, 100);
    for (let i = 0; i < 20_000; i++) l.take(`10.0.${i >> 8}.${i & 255}`, i);
    expect(l.size).toBe(100);
  });

  it("at default limits a client flooding /nowhere is refused 429 (Retry-After) while another's broker-state read every 200 ms is always answered (injected clock)", async () => {
    let clock = 0;
    const n = await startNode(FIXTURE, { rateLimit: DEFAULT_RATE_LIMIT, proofRateLimit: DEFAULT_PROOF_RATE_LIMIT, now: () => clock });
    try {
      const flood: number[] = [];
      const reads: number[] = [];
      for (let i = 0; i < 20; i++) {
        if (i > 0) clock += 200;
        for (let j = 0; j < 30; j++) flood.push((await getFrom("127.0.0.2", n.url + "/nowhere")).status);
        reads.push((await getFrom("127.0.0.3", n.url + BROKER_STATE)).status);
      }
      expect(reads).toEqual(Array(20).fill(200));
      // The flooder had its burst (25) and then its refill (25/s, 5 per 200 ms) — no more.
      expect(flood.filter((s) => s === 404).length).toBe(25 + 19 * 5);
      expect(flood.filter((s) => s === 429).length).toBe(600 - 25 - 19 * 5);
      const refused = await getFrom("127.0.0.2", n.url + "/nowhere");
      expect(refused).toEqual({ status: 429, retryAfter: "1", body: { error: { code: "rate_limited", message: "one client may make at most 25 requests per second" } } });
      // The global limit is still there: clients each within their share, together above it, are refused.
      clock += 10_000;
      const many = [];
      for (let c = 0; c < 5; c++) for (let j = 0; j < 25; j++) many.push((await getFrom(`127.0.1.${c + 1}`, n.url + "/cbqs/finalized-view")).status);
      expect(many.filter((s) => s === 200).length).toBe(100);
      expect(many.slice(100)).toEqual(Array(25).fill(429));
    } finally {
      await n.close();
    }
  });

  it("over real sockets and the real clock, client A floods (bounded) while client B's 10 reads 100 ms apart all answer 200", async () => {
    const n = await startNode(FIXTURE, { rateLimit: DEFAULT_RATE_LIMIT, proofRateLimit: DEFAULT_PROOF_RATE_LIMIT });
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    try {
      let done = false;
      const flood = new Map<number, number>();
      let sent = 0;
      const started = performance.now();
      const a = Promise.all(
        Array.from({ length: 8 }, async () => {
          while (!done && sent < 4_000) {
            sent++;
            const s = (await getFrom("127.0.0.2", n.url + "/nowhere", agent)).status;
            flood.set(s, (flood.get(s) ?? 0) + 1);
          }
        }),
      );
      // B starts once A has spent more than the whole global burst (100): without a per-client
      // bucket the global one would be empty by now.
      while (sent < 150) await new Promise((r) => setTimeout(r, 5));
      const reads: number[] = [];
      for (let i = 0; i < 10; i++) {
        reads.push((await getFrom("127.0.0.3", n.url + BROKER_STATE)).status);
        await new Promise((r) => setTimeout(r, 100));
      }
      const seconds = (performance.now() - started) / 1000;
      done = true;
      await a;
      expect(reads).toEqual(Array(10).fill(200));
      // A really flooded: far beyond its share, and was held to it (burst + 25/s over the run).
      expect(flood.get(429) ?? 0).toBeGreaterThan(100);
      expect(flood.get(404) ?? 0).toBeLessThanOrEqual(25 + Math.ceil(25 * (seconds + 1)));
    } finally {
      agent.destroy();
      await n.close();
    }
  });
});

describe("rate-limit rules (CIP-4 §10)", () => {
  it("a token bucket holds at most one second of burst: idle time does not accumulate tokens (CIP-4 §10)", () => {
    const b = new TokenBucket(3, 0);
    expect([b.take(0), b.take(0), b.take(0), b.take(0)]).toEqual([0, 0, 0, 1]);
    // Ten idle seconds refill the bucket to 3, not to 30.
    expect([b.take(10_000), b.take(10_000), b.take(10_000), b.take(10_000)]).toEqual([0, 0, 0, 1]);
    const fresh = new TokenBucket(2, 0);
    expect([fresh.take(60_000), fresh.take(60_000), fresh.take(60_000)]).toEqual([0, 0, 1]);
  });

  it("the per-client proof limit is keyed on the client's remote address: one client's exhausted bucket does not refuse another (CIP-4 §10)", async () => {
    const n = await startNode(FIXTURE, { rateLimit: 0, clientRateLimit: 0, proofRateLimit: 2, now: () => 0 });
    try {
      const proof = n.url + "/proof/account/0x1111111111111111111111111111111111111111";
      const a = [];
      for (let i = 0; i < 3; i++) a.push((await getFrom("127.0.0.2", proof)).status);
      expect(a).toEqual([200, 200, 429]);
      const b = [];
      for (let i = 0; i < 3; i++) b.push((await getFrom("127.0.0.3", proof)).status);
      expect(b).toEqual([200, 200, 429]);
    } finally {
      await n.close();
    }
  });
});

describe("errors", () => {
  it("404 unknown route, 405 wrong method with Allow, 413 oversized or unexpected body, 400 malformed HTTP", async () => {
    const n = await startNode(FIXTURE);
    try {
      const cases: Array<[Promise<Awaited<ReturnType<typeof request>>>, number, string]> = [
        [get(n.url, "/cbqs/nothing"), 404, "not_found"],
        [get(n.url, "/cbqs/broker-state/"), 404, "not_found"],
        [post(n.url, "/cbqs/finalized-view", ""), 405, "method_not_allowed"],
        [get(n.url, "/tx"), 405, "method_not_allowed"],
        [post(n.url, "/tx", "0x" + "00".repeat(1_100_000)), 413, "body_too_large"],
        [post(n.url, "/mine", "x"), 413, "body_too_large"],
      ];
      for (const [answer, status, code] of cases) {
        const r = await answer;
        expect([r.status, (r.body["error"] as { code: string }).code]).toEqual([status, code]);
      }
      expect((await post(n.url, "/cbqs/finalized-view", "")).headers.get("allow")).toBe("GET, HEAD, OPTIONS");
      expect((await get(n.url, "/tx")).headers.get("allow")).toBe("POST, OPTIONS");
      const raw = await rawExchange(n.url, "GARBAGE\r\n\r\n");
      expect(raw).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
      expect(raw).toMatch(/"code":"bad_request"/);
      // Still serving.
      expect((await get(n.url, "/cbqs/finalized-view")).status).toBe(200);
    } finally {
      await n.close();
    }
  });

  it("HEAD is GET without a body; a --http-corsdomain origin may read (CORS), and its preflight is answered 204", async () => {
    const page = "http://localhost:3000";
    const n = await startNode(FIXTURE, { corsOrigins: [page] });
    try {
      const full = await fetch(n.url + "/genesis");
      const head = await fetch(n.url + "/genesis", { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(await head.text()).toBe("");
      expect(head.headers.get("content-length")).toBe(full.headers.get("content-length"));
      expect(full.headers.get("access-control-allow-origin")).toBeNull();
      expect((await fetch(n.url + "/genesis", { headers: { origin: page } })).headers.get("access-control-allow-origin")).toBe(page);
      expect((await fetch(n.url + "/cbqs/nothing", { headers: { origin: page } })).headers.get("access-control-allow-origin")).toBe(page);
      const preflight = await fetch(n.url + "/tx", { method: "OPTIONS", headers: { origin: page, "access-control-request-method": "POST" } });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get("access-control-allow-origin")).toBe(page);
      expect(preflight.headers.get("access-control-allow-methods")).toBe("POST, OPTIONS");
      expect(preflight.headers.get("access-control-allow-headers")).toBe("content-type, last-event-id, x-cbqs-client");
      expect((await fetch(n.url + "/nothing", { method: "OPTIONS" })).status).toBe(404);
      expect((await fetch(n.url + "/tx", { method: "HEAD" })).status).toBe(405);
    } finally {
      await n.close();
    }
  });

  it("a storage error is an opaque 500 with an id; the details are only in the structured log", async () => {
    const db = new MemoryChainDb();
    const failing = new Proxy(db, {
      get(target, prop, receiver) {
        if (prop === "stateAt" && failOn.active) return () => { throw new Error("disk read failed at page 4711 (secret detail)"); };
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    }) as ChainDb;
    const failOn = { active: false };
    const n = await startNode(FIXTURE, { db: failing });
    try {
      failOn.active = true;
      const r = await get(n.url, `/cbqs/broker-state?stream=0x${"11".repeat(32)}`);
      expect(r.status).toBe(500);
      const id = r.body["id"] as string;
      expect(r.body).toEqual({ error: { code: "internal_error", message: `internal error (id ${id}); details are in the node's log` }, id });
      expect(JSON.stringify(r.body)).not.toMatch(/disk|secret|4711/);
      const entry = n.logs.find((e) => e["id"] === id)!;
      expect(entry).toMatchObject({ level: "error", method: "GET" });
      expect(String(entry["error"])).toMatch(/disk read failed at page 4711/);
      failOn.active = false;
      expect((await get(n.url, "/cbqs/finalized-view")).status).toBe(200);
    } finally {
      await n.close();
    }
  });
});

/** Sends raw bytes on a fresh connection and returns everything the server answers. */
export function rawExchange(url: string, payload: string | Buffer): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let data = "";
    socket.setTimeout(5_000, () => socket.destroy());
    socket.on("data", (d) => (data += d.toString("latin1")));
    socket.on("close", () => resolve(data));
    socket.on("error", reject);
    socket.write(payload);
  });
}
