// The client's one exchange with a node (src/client/request.ts, http.ts) at its edges: the answer
// size bound, which failures are sent again and after how long, the 429 budget, refusals whose
// body is not the node's error object, Retry-After's forms, an abort while waiting, https, and the
// headers a request carries.
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { createServer as createNetServer } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ConnectionFailed, createClient, MalformedAnswer, NotFound, RateLimited, RequestAborted, RequestTimeout } from "../../src/client/index.js";
import { httpRequest } from "../../src/client/http.js";
import { parseRetryAfter, sleep } from "../../src/client/request.js";
import { rejection } from "./helpers.js";

interface Answer {
  status?: number;
  headers?: Record<string, string>;
  /** Sent as it is. */
  body: string;
}

const closers: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

/** A scripted node answering the i-th request with `answer(i)`; records each request's headers. */
async function node(answer: (i: number) => Answer): Promise<{ url: string; requests: IncomingHttpHeaders[] }> {
  const requests: IncomingHttpHeaders[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const a = answer(requests.length);
      requests.push(req.headers);
      res.writeHead(a.status ?? 200, { "content-type": "application/json", ...a.headers });
      res.end(a.body);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(() => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

/** A TCP server that counts connections and does `onSocket` with each. */
async function tcp(onSocket: (s: Socket) => void): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  const sockets: Socket[] = [];
  const server = createNetServer((s) => {
    connections++;
    sockets.push(s);
    onSocket(s);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  closers.push(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections };
}

const GENESIS_PATH = "/genesis";

describe("one exchange with the node", () => {
  it("an answer of exactly maxAnswerBytes is read; one byte more is refused", async () => {
    const body = JSON.stringify({ pad: "x".repeat(100) });
    const s = await node(() => ({ status: 404, body }));
    const size = Buffer.byteLength(body);
    expect(await rejection(createClient(s.url, { maxAnswerBytes: size }).genesis())).toBeInstanceOf(NotFound);
    const err = await rejection(createClient(s.url, { maxAnswerBytes: size - 1 }).genesis());
    expect(err).toBeInstanceOf(MalformedAnswer);
    expect(err.message).toBe(`${s.url}${GENESIS_PATH}: the answer exceeds ${size - 1} bytes`);
  });

  it("a read that times out is not sent again (only a failed connection is)", async () => {
    const silent = await tcp(() => undefined);
    const err = await rejection(createClient(silent.url, { timeoutMs: 100, connectRetries: 2 }).genesis());
    expect(err).toBeInstanceOf(RequestTimeout);
    expect(silent.connections()).toBe(1);
  });

  it("a failed connection is sent again after 250 ms, then 500 ms", async () => {
    const refusing = await tcp((s) => s.destroy());
    const started = performance.now();
    expect(await rejection(createClient(refusing.url, { connectRetries: 2 }).genesis())).toBeInstanceOf(ConnectionFailed);
    expect(refusing.connections()).toBe(3);
    expect(performance.now() - started).toBeGreaterThanOrEqual(740);
  });

  it("429: a retry whose wait reaches maxRetryWaitMs exactly is made; the waits add up against it", async () => {
    const limited = { status: 429, headers: { "retry-after": "1" }, body: "" };
    const ok = { body: JSON.stringify({ error: { code: "x", message: "y" } }), status: 404 };
    const once = await node((i) => (i === 0 ? limited : ok));
    expect(await rejection(createClient(once.url, { maxRetryWaitMs: 1000 }).genesis())).toBeInstanceOf(NotFound);
    expect(once.requests).toHaveLength(2);
    const always = await node(() => limited);
    const err = await rejection(createClient(always.url, { maxRetryWaitMs: 1500, maxRetries: 5 }).genesis());
    expect(err).toBeInstanceOf(RateLimited);
    // One retry after 1 s; a second would make 2 s of waiting, over 1.5 s.
    expect(err).toMatchObject({ attempts: 2, retryAfter: 1, code: "rate_limited", nodeMessage: "" });
    expect(always.requests).toHaveLength(2);
  });

  it("an abort while waiting out a 429 ends the wait at once", async () => {
    const s = await node(() => ({ status: 429, headers: { "retry-after": "30" }, body: "" }));
    const abort = new AbortController();
    const started = performance.now();
    const pending = rejection(createClient(s.url, { signal: abort.signal, maxRetryWaitMs: 60_000 }).genesis());
    setTimeout(() => abort.abort(), 100);
    expect(await pending).toBeInstanceOf(RequestAborted);
    expect(performance.now() - started).toBeLessThan(5_000);
    abort.abort();
    expect(await rejection(createClient(s.url, { signal: abort.signal }).genesis())).toBeInstanceOf(RequestAborted);
  });

  it("a refusal whose body is not the node's error object has an empty code and message", async () => {
    for (const body of ["null", "5", '"text"', '{"error": null}', '{"error": "text"}', '{"error": {"code": 5, "message": false}}']) {
      const s = await node(() => ({ status: 404, body }));
      const err = await rejection(createClient(s.url).genesis());
      expect(err, body).toBeInstanceOf(NotFound);
      expect(err, body).toMatchObject({ code: "", nodeMessage: "" });
    }
  });

  it("a 200 answer that is JSON but not an object is a MalformedAnswer", async () => {
    for (const body of ["null", "5", '"text"', "[]"]) {
      const s = await node(() => ({ body }));
      const err = await rejection(createClient(s.url).genesis());
      expect(err, body).toBeInstanceOf(MalformedAnswer);
      expect(err.message).toBe(`${s.url}${GENESIS_PATH}: the answer is not a JSON object`);
    }
  });

  it("Retry-After: whole seconds (spaces around them ignored) or an HTTP date; anything else is unreadable", () => {
    const now = () => Date.parse("Wed, 21 Oct 2015 07:27:58 GMT");
    expect(parseRetryAfter(" 2 ", now)).toBe(2);
    expect(parseRetryAfter("12", now)).toBe(12);
    expect(parseRetryAfter("123456789", now)).toBe(123456789);
    for (const v of ["2x", "x2", "1234567890", "", undefined, ["1"]]) expect(parseRetryAfter(v as string, now), String(v)).toBeUndefined();
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:28:00 GMT", now)).toBe(2);
    expect(parseRetryAfter("Wed, 21 Oct 2015 07:27:00 GMT", now)).toBe(0);
  });

  it("sleep: resolves after its time; an abort, before or during it, rejects at once naming the URL", async () => {
    await sleep(1, undefined, "u");
    const before = new AbortController();
    before.abort();
    const started = performance.now();
    expect(await rejection(sleep(10_000, before.signal, "u1"))).toMatchObject({ name: "RequestAborted", url: "u1" });
    const during = new AbortController();
    const pending = rejection(sleep(10_000, during.signal, "u2"));
    setTimeout(() => during.abort(), 20);
    expect(await pending).toMatchObject({ name: "RequestAborted", url: "u2" });
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it("https:// is spoken as TLS: a plain-HTTP server behind an https URL is a failed connection", async () => {
    const s = await node(() => ({ body: "{}" }));
    const err = await rejection(createClient(s.url.replace("http:", "https:"), { connectRetries: 0 }).genesis());
    expect(err).toBeInstanceOf(ConnectionFailed);
  });

  it("a request asks for JSON; a body without a content type is sent as application/octet-stream", async () => {
    const s = await node(() => ({ body: "{}" }));
    await httpRequest(`${s.url}/x`, { method: "POST", body: Uint8Array.of(1), timeoutMs: 5_000, onChunk: () => undefined });
    await httpRequest(`${s.url}/y`, { timeoutMs: 5_000, onChunk: () => undefined, accept: "text/event-stream" });
    expect(s.requests.map((h) => [h.accept, h["content-type"], h["content-length"]])).toEqual([
      ["application/json", "application/octet-stream", "1"],
      ["text/event-stream", undefined, undefined],
    ]);
  });

  it("an answer cut off in the middle of its body is a failed connection (ECONNRESET)", async () => {
    const cut = await tcp((sock) => {
      sock.once("data", () => {
        sock.write("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{\"a\":");
        setTimeout(() => sock.destroy(), 50);
      });
    });
    const err = await rejection(createClient(cut.url, { connectRetries: 0 }).genesis());
    expect(err).toBeInstanceOf(ConnectionFailed);
    expect(err).toMatchObject({ code: "ECONNRESET" });
  });
});
