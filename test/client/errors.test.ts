// How the client fails. 429 is retried as Retry-After says, within maxRetries and
// maxRetryWaitMs, then RateLimited with the last Retry-After; 404/410/other statuses map to
// NotFound/Gone/NodeError with the node's code and message; a silent node is a RequestTimeout,
// an abort a RequestAborted, a refused connection a ConnectionFailed, an answer that is not JSON a
// MalformedAnswer naming the endpoint. Every one of them is a ClientError.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  CLIENT_DEFAULTS,
  ClientError,
  ConnectionFailed,
  createClient,
  Gone,
  MalformedAnswer,
  NodeError,
  NotFound,
  RateLimited,
  RequestAborted,
  RequestTimeout,
} from "../../src/client/index.js";
import { parseRetryAfter } from "../../src/client/request.js";
import { startNode, type TestNode } from "../node/helpers.js";
import { fake, rejection, silentServer, type TestServer } from "./helpers.js";

const FIXTURE = "fixtures/corpus/create-quote.json";
const VIEW = { height: "0", block_hash: `0x${"00".repeat(32)}`, state_root: `0x${"00".repeat(32)}` };
const refusal = (code: string, message: string) => JSON.stringify({ error: { code, message } });

describe("client errors", () => {
  const cleanups: Array<() => unknown> = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });
  async function node(options: Parameters<typeof startNode>[1] = {}): Promise<TestNode> {
    const n = await startNode(FIXTURE, options);
    cleanups.push(() => n.close());
    return n;
  }
  async function scripted(...args: Parameters<typeof fake>): Promise<TestServer> {
    const s = await fake(...args);
    cleanups.push(() => s.close());
    return s;
  }

  it("a 429 from a real node is waited out as Retry-After says (1 s) and the request then succeeds", async () => {
    const n = await node({ rateLimit: 1, clientRateLimit: 0 });
    const client = createClient(n.url);
    await client.feedPage({ limit: 1 }); // the one token of the global bucket
    const started = performance.now();
    const page = await client.feedPage({ limit: 1 });
    expect(page.items).toHaveLength(1);
    expect(performance.now() - started).toBeGreaterThanOrEqual(900);
  });

  it("a 429 that cannot be waited out within maxRetryWaitMs or maxRetries is RateLimited at once, with the last Retry-After", async () => {
    const n = await node({ rateLimit: 1, clientRateLimit: 0 });
    await createClient(n.url).feedPage({ limit: 1 });
    const started = performance.now();
    const err = await rejection(createClient(n.url, { maxRetryWaitMs: 500 }).feedPage({ limit: 1 }));
    expect(performance.now() - started).toBeLessThan(500);
    expect(err).toBeInstanceOf(RateLimited);
    expect(err).toBeInstanceOf(NodeError);
    expect(err).toMatchObject({ status: 429, code: "rate_limited", retryAfter: 1, attempts: 1 });
    expect(err.message).toBe(`${n.url}/replication?limit=1: HTTP 429 rate_limited: the node answers at most 1 requests per second (gave up after 1 attempt; Retry-After 1 s)`);
    expect(await rejection(createClient(n.url, { maxRetries: 0 }).feedPage({ limit: 1 }))).toMatchObject({ name: "RateLimited", attempts: 1 });
  });

  it("Retry-After 0 is retried at once, up to maxRetries; then RateLimited counting every attempt", async () => {
    const limited = { status: 429, headers: { "retry-after": "0" }, body: refusal("rate_limited", "slow down") };
    const s = await scripted((_path, i) => (i < 2 ? limited : { status: 200, body: JSON.stringify({ ...VIEW, view: { chain_instance_id: VIEW.block_hash, height: "0", block_hash: VIEW.block_hash } }) }));
    const err = await rejection(createClient(s.url, { maxRetries: 1 }).mine());
    expect(err).toMatchObject({ name: "RateLimited", attempts: 2, retryAfter: 0, nodeMessage: "slow down" });
    expect(s.requests).toEqual(["/mine", "/mine"]);
    // The third request (index 2) is answered 200: two retries are enough.
    const again = await scripted((_path, i) => (i < 2 ? limited : { status: 200, body: JSON.stringify({ ...VIEW, timestamp: "0", effective_rent_height: "0", receipts: [], dropped: [] }) }));
    expect((await createClient(again.url, { maxRetries: 2 }).mine()).height).toBe(0n);
    expect(again.requests).toHaveLength(3);
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", () => Date.parse("Wed, 21 Oct 2015 07:27:58 GMT"))).toBe(2);
    expect(parseRetryAfter("soon", () => 0)).toBeUndefined();
  });

  it("404 is NotFound and 410 is Gone, with the node's code and message; another status is a NodeError", async () => {
    const n = await node({ retainBlocks: 1 });
    const client = createClient(n.url);
    const missing = await rejection(client.finalized({ block: `0x${"ab".repeat(32)}` }));
    expect(missing).toBeInstanceOf(NotFound);
    expect(missing).toMatchObject({ status: 404, code: "block_not_found", nodeMessage: `no committed block has hash 0x${"ab".repeat(32)}` });
    const gone = await rejection(client.brokerState({ stream: "owner:0x1111111111111111111111111111111111111111/nonce:1" }, { height: 1n }));
    expect(gone).toBeInstanceOf(Gone);
    expect(gone).toMatchObject({ status: 410, code: "block_not_retained" });
    const s = await scripted(() => ({ status: 503, body: refusal("tx_pool_full", "the pool is full") }));
    const full = await rejection(createClient(s.url).mine());
    expect(full).toBeInstanceOf(NodeError);
    expect(full).not.toBeInstanceOf(NotFound);
    expect(full.message).toBe(`${s.url}/mine: HTTP 503 tx_pool_full: the pool is full`);
  });

  it("a node that accepts and never answers is a RequestTimeout after timeoutMs; an abort ends a request at once", async () => {
    const silent = await silentServer();
    cleanups.push(silent.close);
    const started = performance.now();
    const err = await rejection(createClient(silent.url, { timeoutMs: 300 }).genesis());
    const took = performance.now() - started;
    expect(err).toBeInstanceOf(RequestTimeout);
    expect(err.message).toBe(`${silent.url}/genesis: no answer within 0.3 s`);
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(3_000);

    const abort = new AbortController();
    const pending = rejection(createClient(silent.url, { signal: abort.signal }).finalized());
    setTimeout(() => abort.abort(), 50);
    expect(await pending).toBeInstanceOf(RequestAborted);
  });

  it("an answer that is not JSON, not an object, lacks a field or is too large is a MalformedAnswer naming the endpoint", async () => {
    const s = await scripted((path) => {
      if (path.startsWith("/cbqs/finalized-view")) return { status: 200, body: '{"height": ' };
      if (path.startsWith("/replication")) return { status: 200, body: "[1]" };
      if (path === "/mine") return { status: 200, body: JSON.stringify({ ...VIEW, block_hash: "0x12", timestamp: "0", effective_rent_height: "0", receipts: [], dropped: [] }) };
      return { status: 200, body: JSON.stringify({ padding: "x".repeat(4096) }) };
    });
    const client = createClient(s.url);
    const notJson = await rejection(client.finalized());
    expect(notJson).toBeInstanceOf(MalformedAnswer);
    expect(notJson.message).toMatch(new RegExp(`^${s.url}/cbqs/finalized-view: HTTP 200, not a usable JSON answer \\(`));
    expect((await rejection(client.feedPage())).message).toBe(`${s.url}/replication: the answer is not a JSON object`);
    expect((await rejection(client.mine())).message).toMatch(new RegExp(`^${s.url}/mine: \\$\\.block_hash: `));
    expect((await rejection(createClient(s.url, { maxAnswerBytes: 1024 }).genesis())).message).toBe(`${s.url}/genesis: the answer exceeds 1024 bytes`);
  });

  it("an answer that keeps arriving too slowly is cut at answerDeadlineMs (4 × timeoutMs unless given): a RequestTimeout that says so", async () => {
    // A node that sends the head of its answer, then a space every 50 ms: never silent for timeoutMs.
    const dripping = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("{");
      const drip = setInterval(() => (res.destroyed ? clearInterval(drip) : res.write(" ")), 50);
    });
    await new Promise<void>((r) => dripping.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(dripping.address() as AddressInfo).port}`;
    try {
      const given = await rejection(createClient(url, { timeoutMs: 5_000, answerDeadlineMs: 400 }).genesis());
      expect(given).toBeInstanceOf(RequestTimeout);
      expect(given).toMatchObject({ timeoutMs: 400, whole: true, message: `${url}/genesis: the answer did not arrive whole within 0.4 s` });
      expect((await rejection(createClient(url, { timeoutMs: 150 }).genesis())).message).toBe(`${url}/genesis: the answer did not arrive whole within 0.6 s`);
    } finally {
      dripping.closeAllConnections();
      dripping.close();
    }
  });

  it("an answer of tiny values (`[[],[],…]`, some 25 bytes of heap per byte) is refused at one value per 16 bytes, a MalformedAnswer; the default size bound is 64 MiB", async () => {
    const s = await scripted(() => ({ status: 200, body: `{"a":[${"[],".repeat(200_000)}[]]}` }));
    const err = await rejection(createClient(s.url).genesis());
    expect(err).toBeInstanceOf(MalformedAnswer);
    expect(err.message).toBe(`${s.url}/genesis: HTTP 200, not a usable JSON answer ($: more values than a document of its size may hold (at most 37500))`);
    expect(CLIENT_DEFAULTS.maxAnswerBytes).toBe(64 * 1024 * 1024);
  });

  it("a refused connection is ConnectionFailed after connectRetries; every error is a ClientError", async () => {
    const s = await scripted(() => ({ status: 200, body: "{}" }));
    const url = s.url;
    await s.close();
    const started = performance.now();
    const err = await rejection(createClient(url, { connectRetries: 1 }).genesis());
    expect(err).toBeInstanceOf(ConnectionFailed);
    expect(err).toMatchObject({ code: "ECONNREFUSED" });
    expect(err.message).toBe(`cannot reach ${url}/genesis: ECONNREFUSED`);
    expect(performance.now() - started).toBeGreaterThanOrEqual(240); // one retry, after 250 ms
    for (const e of [err, new NotFound("u", 404, "c", "m"), new RequestTimeout("u", 1)]) expect(e).toBeInstanceOf(ClientError);
  });
});
