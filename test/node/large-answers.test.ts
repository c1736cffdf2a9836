// Large answers and the clients that do not read them (docs/node.md "Limits and errors"), played
// over real loopback sockets as an attacker would: a request for a block of about 8 MiB of JSON,
// then nothing read. An answer costs its client one request more per 256 KiB; what its socket has
// not sent counts against its client's and the node's bounds of unread answers until it is read,
// its connection closed, or cut at its deadline; and GET /fixture, streamed from the one slot, is
// cut from a client that takes it slower than the rate every answer is held to, so the slot frees.
import { request } from "node:http";
import { connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { encodeEnvelope, MAX_SYSTEM_PAYLOAD_BYTES } from "../../src/chain/envelope.js";
import { readFixture } from "../../src/harness/documents.js";
import { LOOPBACK_CLIENT } from "../../src/node/client-key.js";
import { ANSWER_BYTES_PER_REQUEST } from "../../src/node/rate-limit.js";
import type { UnreadLimits } from "../../src/node/unread.js";
import { address, get, lanAddress, noRemoteClient, post, startNode, waitFor, type TestNode } from "./helpers.js";

const GENESIS = readFixture("fixtures/corpus/transfers.json").genesis.source;
const CHAIN = 7n;
const A = address(0x11);
const MiB = 1024 * 1024;

/** A system transaction of A carrying the largest payload (included, rejected: the block holds it whole). */
const largest = (nonce: bigint): Uint8Array =>
  encodeEnvelope({ chain_id: CHAIN, nonce, tx: { from: A, body: { kind: "system", opcode: 218, payload: new Uint8Array(MAX_SYSTEM_PAYLOAD_BYTES).fill(Number(nonce) + 1) } } });

/** A node whose block 1 holds four of the largest transactions: GET /block/1 is about 8 MiB. */
async function largeBlockNode(options: { unread?: Partial<UnreadLimits>; rateLimit?: number } = {}): Promise<TestNode> {
  const n = await startNode({ kind: "genesis", source: GENESIS }, options);
  for (const k of [0n, 1n, 2n, 3n]) expect((await post(n.url, "/tx", largest(k), "application/octet-stream")).status).toBe(200);
  expect((await post(n.url, "/mine", "")).body).toMatchObject({ height: "1", receipts: Array(4).fill(expect.objectContaining({ status: "rejected" })) });
  return n;
}

/** A raw connection that sends `path`'s GET and then reads nothing: the kernel's buffers fill, then the node's. */
async function neverReads(n: TestNode, path: string): Promise<Socket & { gone: Promise<void> }> {
  const socket = connect(Number(new URL(n.url).port), "127.0.0.1");
  await new Promise<void>((r) => socket.once("connect", () => r()));
  socket.pause();
  socket.on("error", () => {});
  const gone = new Promise<void>((r) => socket.once("close", () => r()));
  socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  return Object.assign(socket, { gone });
}

/** GET `path` from `localAddress` (another client to the node than the loopback one). */
function getFrom(localAddress: string, url: string): Promise<{ status: number; code: unknown }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { localAddress, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, code: res.statusCode === 200 ? undefined : (JSON.parse(text) as { error: { code: string } }).error.code }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end();
  });
}

/** The node's unsent answer bytes (its cbqs_unread_answer_bytes gauge). */
const unreadGauge = (n: TestNode): Promise<number> => n.metrics.registry.getSingleMetric("cbqs_unread_answer_bytes")!.get().then((m) => m.values[0]!.value);

/** Waits (bounded: about 10 s) until the gauge satisfies `done`; fails naming `what` otherwise. */
async function gaugeUntil(n: TestNode, what: string, done: (held: number) => boolean): Promise<void> {
  for (let i = 0; i < 1_000; i++) {
    if (done(await unreadGauge(n))) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`not within 10 s: ${what} (unread bytes: ${await unreadGauge(n)})`);
}

describe("a large answer costs its client by its size", () => {
  it(`an answer costs one request more per ${ANSWER_BYTES_PER_REQUEST} bytes: after an 8 MiB block its client is refused 429 rate_limited for a while, another client is answered`, async (ctx) => {
    const lan = lanAddress();
    if (lan === undefined) return noRemoteClient(ctx);
    let clock = 0;
    const n = await startNode({ kind: "genesis", source: GENESIS }, { rateLimit: 100, now: () => clock });
    try {
      for (const k of [0n, 1n, 2n, 3n]) expect((await post(n.url, "/tx", largest(k), "application/octet-stream")).status).toBe(200);
      expect((await post(n.url, "/mine", "")).body).toMatchObject({ height: "1", receipts: Array(4).fill(expect.objectContaining({ status: "rejected" })) });
      clock += 10_000;
      const block = await fetch(`${n.url}/block/1`);
      const bytes = (await block.arrayBuffer()).byteLength;
      expect([block.status, bytes > 32 * ANSWER_BYTES_PER_REQUEST]).toEqual([200, true]);
      // 25 tokens at most, less the request itself and one per 256 KiB: the client is in debt.
      const after = await get(n.url, "/genesis");
      expect([after.status, after.body]).toEqual([429, { error: { code: "rate_limited", message: "one client may make at most 25 requests per second" } }]);
      expect(await getFrom(lan, `${n.url}/genesis`)).toEqual({ status: 200, code: undefined });
      // The debt is paid back by the refill: a second and a half later (25 per second) it is answered again.
      clock += Math.ceil(((bytes / ANSWER_BYTES_PER_REQUEST - 24) / 25) * 1000) + 1000;
      expect((await get(n.url, "/genesis")).status).toBe(200);
    } finally {
      await n.close();
    }
  }, 60_000);
});

describe("answers not read", () => {
  it("a client that never reads an 8 MiB block holds its unsent bytes: its next request is 429 unread_answers from any loopback address, another client is answered; closing the connection frees them", async (ctx) => {
    const lan = lanAddress();
    if (lan === undefined) return noRemoteClient(ctx);
    const n = await largeBlockNode({ unread: { clientBytes: 1, graceMs: 600_000 } });
    try {
      const attacker = await neverReads(n, "/block/1");
      await gaugeUntil(n, "the block's answer held unsent", (held) => held > 0);
      expect(await unreadGauge(n)).toBeGreaterThan(MiB);
      for (const from of ["127.0.0.1", "127.0.0.2"]) {
        const refused = await getFrom(from, `${n.url}/genesis`);
        expect(refused).toEqual({ status: 429, code: "unread_answers" });
      }
      expect(await getFrom(lan, `${n.url}/genesis`)).toEqual({ status: 200, code: undefined });
      attacker.destroy();
      await attacker.gone;
      await gaugeUntil(n, "the unsent bytes freed", (held) => held === 0);
      expect(await getFrom("127.0.0.1", `${n.url}/genesis`)).toEqual({ status: 200, code: undefined });
    } finally {
      await n.close();
    }
  }, 60_000);

  it("the node holding its bound of unread answers in all refuses every client 503 unread_answers_full", async (ctx) => {
    const lan = lanAddress();
    if (lan === undefined) return noRemoteClient(ctx);
    const n = await largeBlockNode({ unread: { totalBytes: 1, graceMs: 600_000 } });
    try {
      const attacker = await neverReads(n, "/block/1");
      await gaugeUntil(n, "the block's answer held unsent", (held) => held > 0);
      expect(await getFrom(lan, `${n.url}/genesis`)).toEqual({ status: 503, code: "unread_answers_full" });
      attacker.destroy();
    } finally {
      await n.close();
    }
  }, 60_000);

  it("an answer not taken by its deadline (the grace, then the minimum rate) is cut: the connection closes before the whole answer, its bytes are freed, its client is answered again", async () => {
    const n = await largeBlockNode({ unread: { clientBytes: 1, graceMs: 200, minBytesPerSecond: 64 * MiB } });
    try {
      const attacker = await neverReads(n, "/block/1");
      await waitFor("the answer cut", () => n.logs.some((l) => l["msg"] === "answer cut"));
      // Read at last: the connection ends before the whole answer.
      let received = 0;
      attacker.on("data", (d: Buffer) => (received += d.length)).resume();
      await attacker.gone;
      expect(await unreadGauge(n)).toBe(0);
      // Its client is answered again, the whole answer.
      const whole = (await fetch(`${n.url}/block/1`).then((r) => r.arrayBuffer())).byteLength;
      expect(received).toBeLessThan(whole);
      const cut = n.logs.filter((l) => l["msg"] === "answer cut");
      expect(cut).toHaveLength(1);
      expect(cut[0]).toMatchObject({ level: "info", reason: "not read in time", client: LOOPBACK_CLIENT });
      expect(cut[0]!["unsent_bytes"] as number).toBeGreaterThan(MiB);
      await gaugeUntil(n, "the answer read sent whole", (held) => held === 0);
    } finally {
      await n.close();
    }
  }, 60_000);
});

describe("GET /fixture's one slot", () => {
  it("a client that takes /fixture slower than the minimum rate, however steadily, is cut, and the slot is free for the next client", async () => {
    const n = await largeBlockNode({ unread: { graceMs: 200, minBytesPerSecond: 8 * MiB } });
    try {
      // The attacker reads a little every 200 ms: never stalled for STALL_MS, far below 8 MiB/s.
      const attacker = connect(Number(new URL(n.url).port), "127.0.0.1");
      await new Promise<void>((r) => attacker.once("connect", () => r()));
      attacker.on("error", () => {});
      let received = 0;
      let trickle = true;
      const gone = new Promise<void>((r) => attacker.once("close", () => r()));
      attacker.on("data", (d: Buffer) => {
        received += d.length;
        if (!trickle) return;
        attacker.pause();
        setTimeout(() => attacker.resume(), 200).unref();
      });
      attacker.write("GET /fixture HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      await waitFor("the streamed answer cut", () => n.logs.some((l) => l["msg"] === "streamed answer cut"));
      const cut = n.logs.filter((l) => l["msg"] === "streamed answer cut");
      expect(cut).toHaveLength(1);
      expect(cut[0]!["reason"]).toBe(`read slower than ${8 * MiB} bytes per second on average`);
      // The slot is free at once: the next client takes the whole fixture.
      const whole = await fetch(`${n.url}/fixture`);
      const text = await whole.text();
      expect([whole.status, (JSON.parse(text) as { blocks: unknown[] }).blocks.length]).toEqual([200, 1]);
      // The attacker, reading at last, gets what its connection held, then its end: not the whole document.
      trickle = false;
      attacker.resume();
      await gone;
      expect(received).toBeLessThan(text.length);
    } finally {
      await n.close();
    }
  }, 60_000);
});
