// The client's request seams, each reached alone: a signal already aborted sends nothing; a
// request or a wait leaves no listener on the caller's signal (one signal may serve a whole
// session); a failure of the caller's own response hook ends the request with that failure; an
// error answer denser than the JSON bound is not read for its code; a bad answerDeadlineMs is
// refused by name.
import { getEventListeners } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { ClientError, createClient, InvalidArgument, RateLimited, RequestAborted } from "../../src/client/index.js";
import { httpRequest } from "../../src/client/http.js";
import { sleep } from "../../src/client/request.js";
import { rejection } from "./helpers.js";

const servers: Array<{ close(): void }> = [];
afterEach(() => {
  for (const s of servers.splice(0)) s.close();
});

/** A server answering every request with `status` and `body`; keeps what it was asked and the client's name. */
async function answering(status: number, body: string): Promise<{ url: string; requests: string[]; clients: Array<string | string[] | undefined> }> {
  const requests: string[] = [];
  const clients: Array<string | string[] | undefined> = [];
  const server = createServer((req, res) => {
    requests.push(req.url!);
    clients.push(req.headers["x-cbqs-client"]);
    res.writeHead(status, { "content-type": "application/json" });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  servers.push({ close: () => server.close() });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, clients };
}

describe("the client's requests and the caller's signal (src/client/http.ts, request.ts)", () => {
  it("a signal aborted before the request: RequestAborted, and nothing is sent", async () => {
    const s = await answering(200, "{}");
    const err = await rejection(httpRequest(`${s.url}/x`, { timeoutMs: 5_000, signal: AbortSignal.abort(), onChunk: () => undefined }));
    expect(err).toBeInstanceOf(RequestAborted);
    await new Promise((r) => setTimeout(r, 100));
    expect(s.requests).toEqual([]);
  });

  it("every request names its client (X-Cbqs-Client: cbqs-emulator; a node's devnet writes need it)", async () => {
    const s = await answering(200, "{}");
    await httpRequest(`${s.url}/x`, { timeoutMs: 5_000, onChunk: () => undefined });
    expect(s.clients).toEqual(["cbqs-emulator"]);
  });

  it("a request that completes leaves no listener on the caller's signal", async () => {
    const s = await answering(200, "{}");
    const signal = new AbortController().signal;
    await httpRequest(`${s.url}/x`, { timeoutMs: 5_000, signal, onChunk: () => undefined });
    await httpRequest(`${s.url}/y`, { timeoutMs: 5_000, signal, onChunk: () => undefined });
    expect(getEventListeners(signal, "abort")).toHaveLength(0);
  });

  it("a wait that ends, or is aborted, leaves no listener on the caller's signal", async () => {
    const done = new AbortController().signal;
    await sleep(1, done, "u");
    expect(getEventListeners(done, "abort")).toHaveLength(0);
    const during = new AbortController();
    const waiting = sleep(60_000, during.signal, "u");
    during.abort();
    expect(await rejection(waiting)).toBeInstanceOf(RequestAborted);
    expect(getEventListeners(during.signal, "abort")).toHaveLength(0);
  });

  it("a response hook that throws ends the request with its error (the body is not read on)", async () => {
    const s = await answering(200, "{}");
    const refused = new Error("the hook refused the answer");
    const chunks: Buffer[] = [];
    const err = await rejection(httpRequest(`${s.url}/x`, { timeoutMs: 5_000, onResponse: () => { throw refused; }, onChunk: (c) => void chunks.push(c) }));
    expect(err).toBe(refused);
    expect(chunks).toEqual([]);
  });

  it("an error answer denser than one JSON value per 16 bytes is not read for its code", async () => {
    // The same error, read when it keeps to the bound and not when an array of tiny values pads it
    // past it (5,000 values in ~10 KB, where the bound is the larger of 4,096 and bytes ÷ 16).
    const error = { error: { code: "stream_not_found", message: "no such stream" } };
    const plain = await answering(400, JSON.stringify(error));
    const padded = await answering(400, JSON.stringify({ ...error, pad: new Array(5_000).fill(0) }));
    const read = await rejection(createClient(plain.url).genesis());
    const unread = await rejection(createClient(padded.url).genesis());
    expect(read).toBeInstanceOf(ClientError);
    expect(read.message).toContain("no such stream");
    expect(unread).toBeInstanceOf(ClientError);
    expect(unread.message).not.toContain("no such stream");
    // The same for a 429 that cannot be waited out: its code is read from a body within the bound only.
    const limited = { error: { code: "too_many_proofs", message: "slow down" } };
    const within = await answering(429, JSON.stringify(limited));
    const beyond = await answering(429, JSON.stringify({ ...limited, pad: new Array(5_000).fill(0) }));
    const named = await rejection(createClient(within.url, { maxRetries: 0 }).genesis());
    const unnamed = await rejection(createClient(beyond.url, { maxRetries: 0 }).genesis());
    expect([named.name, (named as RateLimited).code]).toEqual(["RateLimited", "too_many_proofs"]);
    expect([unnamed.name, (unnamed as RateLimited).code]).toEqual(["RateLimited", "rate_limited"]);
  });

  it("answerDeadlineMs below 1 is refused by its name", () => {
    let err: unknown;
    try {
      createClient("http://127.0.0.1:1", { answerDeadlineMs: 0 });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidArgument);
    expect((err as Error).message).toContain("answerDeadlineMs");
  });
});
