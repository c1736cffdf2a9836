// CIP-4 §10 and §6.4 at the node's edge: the global rate limit on every endpoint and the per-client
// limit on proof endpoints (429 + Retry-After), 404/405/413 with the error shape, a malformed HTTP
// request answered 400, and an internal or storage error answered by an opaque 500 whose details
// only reach the server's structured log.
import { connect } from "node:net";
import { describe, expect, it } from "vitest";
import { PerClientLimiter, TokenBucket } from "../../src/node/rate-limit.js";
import type { ChainDb } from "../../state/chain-db.js";
import { MemoryChainDb } from "../../state/chain-db-memory.js";
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

  it("the per-client limiter keeps one bucket per client, bounded in number", () => {
    const l = new PerClientLimiter(1, 2);
    expect([l.take("a", 0), l.take("a", 0), l.take("b", 0)]).toEqual([0, 1, 0]);
    expect(l.take("c", 0)).toBe(0); // evicts a, the least recently used
    expect(l.take("a", 0)).toBe(0);
  });

  it("over the global limit every endpoint answers 429 with Retry-After; proofs also have a per-client limit", async () => {
    let clock = 0;
    const n = await startNode(FIXTURE, { rateLimit: 5, proofRateLimit: 2, now: () => clock });
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

  it("HEAD is GET without a body; any origin may read (CORS), and a preflight is answered 204", async () => {
    const n = await startNode(FIXTURE);
    try {
      const full = await fetch(n.url + "/genesis");
      const head = await fetch(n.url + "/genesis", { method: "HEAD" });
      expect(head.status).toBe(200);
      expect(await head.text()).toBe("");
      expect(head.headers.get("content-length")).toBe(full.headers.get("content-length"));
      expect(full.headers.get("access-control-allow-origin")).toBe("*");
      expect((await get(n.url, "/cbqs/nothing")).headers.get("access-control-allow-origin")).toBe("*");
      const preflight = await fetch(n.url + "/tx", { method: "OPTIONS", headers: { origin: "http://localhost:3000", "access-control-request-method": "POST" } });
      expect(preflight.status).toBe(204);
      expect(preflight.headers.get("access-control-allow-origin")).toBe("*");
      expect(preflight.headers.get("access-control-allow-methods")).toBe("POST, OPTIONS");
      expect(preflight.headers.get("access-control-allow-headers")).toBe("content-type");
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
