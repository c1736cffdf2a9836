// What the client refuses before it sends anything (an InvalidArgument naming the argument and
// what it must be), and what it sends: each method's request as a scripted node records it —
// method, path and query, content type — and which requests it sends again after a failed
// connection (reads only).
import { createServer, type IncomingMessage, type Server } from "node:http";
import { createServer as createNetServer, type AddressInfo, type Socket } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { transferEnvelope } from "../../src/client/envelopes.js";
import { ConnectionFailed, createClient, InvalidArgument, MalformedAnswer, NotFound, ProofInvalid, WaitTimeout, type Client } from "../../src/client/index.js";
import { bytesArg, heightArg, intArg, MAX_TIMER_MS } from "../../src/client/inputs.js";
import { REGISTRY_ADDRESS } from "../../src/engine/layout.js";
import { accountKey } from "../../state/kv/keys.js";
import { fromHex, startNode, toHex, type TestNode } from "../node/helpers.js";
import { rejection } from "./helpers.js";

const ALICE = "0x1111111111111111111111111111111111111111";
const HASH = `0x${"ab".repeat(32)}`;

/** The InvalidArgument `f` throws (or its promise rejects with), checked to be one. */
async function invalid(f: () => unknown): Promise<string> {
  let err: unknown;
  try {
    await f();
  } catch (e) {
    err = e;
  }
  expect(err, String(err)).toBeInstanceOf(InvalidArgument);
  return (err as Error).message;
}

interface Seen {
  method: string;
  path: string;
  contentType: string | undefined;
  body: string;
}

/** A scripted node: records each request, answers with `answer(path)` (status 200 unless given). */
async function scripted(answer: (path: string) => { status?: number; body: unknown }): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen.push({ method: req.method!, path: req.url!, contentType: req.headers["content-type"], body: Buffer.concat(chunks).toString("utf8") });
      const a = answer(req.url!);
      res.writeHead(a.status ?? 200, { "content-type": "application/json" });
      res.end(JSON.stringify(a.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

const POINT = { height: "6", block_hash: HASH, state_root: HASH };
const PAGE = { ...POINT, items: [], prev: null, next: null };

let n: TestNode;
let client: Client;
beforeAll(async () => {
  n = await startNode("fixtures/corpus/create-quote.json");
  client = createClient(n.url);
});
afterAll(() => n.close());

describe("arguments the client refuses before sending anything", () => {
  it("the node URL: http or https with a host, a port from 1, no query or fragment; trailing slashes dropped", async () => {
    expect(await invalid(() => createClient(5 as unknown as string))).toBe("the node URL must be an http(s) URL (got 5)");
    expect(await invalid(() => createClient("ftp://127.0.0.1:1"))).toBe("the node URL must be an http(s) URL (got ftp://127.0.0.1:1)");
    expect(await invalid(() => createClient("not a url"))).toBe("the node URL must be an http(s) URL (got not a url)");
    const long = `x${"y".repeat(300)}`;
    expect(await invalid(() => createClient(long))).toBe(`the node URL must be an http(s) URL (got ${long.slice(0, 200)})`);
    expect(await invalid(() => createClient("http://127.0.0.1:0"))).toBe("the node URL must name a port from 1 to 65535 (got http://127.0.0.1:0)");
    expect(await invalid(() => createClient("http://127.0.0.1:1/?a=1"))).toBe("the node URL takes no query or fragment (got http://127.0.0.1:1/?a=1)");
    expect(await invalid(() => createClient("http://127.0.0.1:1/#top"))).toBe("the node URL takes no query or fragment (got http://127.0.0.1:1/#top)");
    expect(createClient("http://127.0.0.1:1///").url).toBe("http://127.0.0.1:1");
    expect(createClient("http://127.0.0.1:1/base/").url).toBe("http://127.0.0.1:1/base");
    expect(createClient("https://node.example").url).toBe("https://node.example");
    expect(createClient("http://node.example:8545").url).toBe("http://node.example:8545");
  });

  it("each option, by name, an integer in its range", async () => {
    const cases: Array<[string, number, string]> = [
      ["timeoutMs", 0, `timeoutMs must be an integer from 1 to ${MAX_TIMER_MS} (got 0)`],
      ["maxRetries", 1001, "maxRetries must be an integer from 0 to 1000 (got 1001)"],
      ["maxRetryWaitMs", -1, `maxRetryWaitMs must be an integer from 0 to ${MAX_TIMER_MS} (got -1)`],
      ["connectRetries", 101, "connectRetries must be an integer from 0 to 100 (got 101)"],
      ["maxAnswerBytes", 0, `maxAnswerBytes must be an integer from 1 to ${Number.MAX_SAFE_INTEGER} (got 0)`],
    ];
    for (const [name, value, message] of cases) expect(await invalid(() => createClient(n.url, { [name]: value }))).toBe(message);
    expect(createClient(n.url, { timeoutMs: 1, maxRetries: 1000, maxRetryWaitMs: MAX_TIMER_MS, connectRetries: 100, maxAnswerBytes: Number.MAX_SAFE_INTEGER }).url).toBe(n.url);
  });

  it("intArg: an integer from min to max, both included; anything else refused with its name and range", async () => {
    expect(MAX_TIMER_MS).toBe(2_147_483_647);
    expect(intArg("u", undefined, "x", 7, 1, 10)).toBe(7);
    expect(intArg("u", 1, "x", 7, 1, 10)).toBe(1);
    expect(intArg("u", 10, "x", 7, 1, 10)).toBe(10);
    expect(intArg("u", MAX_TIMER_MS, "x", 7)).toBe(MAX_TIMER_MS);
    for (const v of [0, 11, 1.5, Number.NaN, "5", Infinity]) expect(await invalid(() => intArg("u", v as number, "x", 7, 1, 10))).toBe(`x must be an integer from 1 to 10 (got ${String(v)})`);
    expect(await invalid(() => intArg("u", MAX_TIMER_MS + 1, "x", 7))).toBe(`x must be an integer from 0 to ${MAX_TIMER_MS} (got ${MAX_TIMER_MS + 1})`);
    expect(await invalid(() => intArg("u", -1, "x", 7))).toBe(`x must be an integer from 0 to ${MAX_TIMER_MS} (got -1)`);
  });

  it("heightArg: a bigint or safe integer from 0 to 2^64 − 1, both included", async () => {
    expect(heightArg("u", 0, "h")).toBe(0n);
    expect(heightArg("u", 2n ** 64n - 1n, "h")).toBe(2n ** 64n - 1n);
    expect(heightArg("u", Number.MAX_SAFE_INTEGER, "h")).toBe(BigInt(Number.MAX_SAFE_INTEGER));
    for (const v of [2n ** 64n, -1n, -1, 1.5, "5", undefined, Number.MAX_SAFE_INTEGER + 1]) {
      expect(await invalid(() => heightArg("u", v as bigint, "h"))).toBe(`h must be a bigint or safe integer from 0 to 2^64-1 (got ${String(v)})`);
    }
  });

  it("bytesArg: bytes of the length asked, as a Uint8Array or 0x hex", async () => {
    expect(bytesArg("u", new Uint8Array(3), "k")).toEqual(new Uint8Array(3));
    expect(await invalid(() => bytesArg("u", new Uint8Array(3), "address", 20))).toBe("address must be 20 bytes (got 3)");
    expect(await invalid(() => bytesArg("u", 5, "address", 20))).toBe("address must be a Uint8Array or 0x-prefixed hex");
    expect(await invalid(() => bytesArg("u", "0x12", "address", 20))).toMatch(/^address: expected /);
  });

  it("every method names the argument it refuses", async () => {
    const c = client;
    const cases: Array<[() => unknown, string | RegExp]> = [
      [() => c.finalized({ block: "0x12" }), /^block: expected /],
      [() => c.brokerState({ stream: "" }), "stream must not be empty"],
      [() => c.brokerState({ stream: "0x12" }), /^stream: expected /],
      [() => c.brokerState(undefined as unknown as { stream: string }), "stream must be a Uint8Array or 0x-prefixed hex"],
      [() => c.brokerState({ stream: HASH }, { height: 1n, block: HASH }), "brokerState pins by height or by block hash, not both"],
      [() => c.brokerState({ stream: HASH }, { height: -1 }), /^height must be/],
      [() => c.brokerState({ stream: HASH }, { block: "0x1" }), /^block: expected /],
      [() => c.feedPage({ since: -1 }), /^since must be/],
      [() => c.feedPage({ until: 1.5 }), /^until must be/],
      [() => c.feedPage({ limit: -2 }), /^limit must be/],
      [() => c.feedPage({ order: "up" as "asc" }), 'order must be "asc" or "desc" (got up)'],
      [() => c.block(-1), /^height must be/],
      [() => c.block(0), "height 0 is genesis, which is not a feed block: use genesis()"],
      [() => c.accountProof("0x12"), /^address: expected /],
      [() => c.actorProof(5 as unknown as string), "address must be a Uint8Array or 0x-prefixed hex"],
      [() => c.storageProof(ALICE, 5 as unknown as string), "key must be a Uint8Array or 0x-prefixed hex"],
      [() => c.multiProof("keys" as unknown as string[]), "keys must be an array of 1 to 256 state keys"],
      [() => c.multiProof([]), "keys must be an array of 1 to 256 state keys"],
      [() => c.multiProof(Array.from({ length: 257 }, () => accountKey(fromHex(ALICE)))), "keys must be an array of 1 to 256 state keys"],
      [() => c.multiProof([accountKey(fromHex(ALICE)), "0x01"]), /^keys\[1\]: expected /],
      [() => c.txProof("0x12"), /^txHash: expected /],
      [() => c.receiptProof(7 as unknown as string), "txHash must be a Uint8Array or 0x-prefixed hex"],
      [() => c.feed({ since: -1 }), /^since must be/],
      [() => c.feed({ until: -1 }), /^until must be/],
      [() => c.feed({ pageSize: 101 }), "pageSize must be an integer from 1 to 100 (got 101)"],
      [() => c.feed({ pageSize: 0 }), "pageSize must be an integer from 1 to 100 (got 0)"],
      [() => c.send(5 as unknown as string), "envelope must be a Uint8Array or 0x-prefixed hex"],
      [() => c.waitForReceipt("0x1"), /^txHash: expected /],
      [() => c.waitForReceipt(HASH, { timeoutMs: -1 }), /^timeoutMs must be an integer from 0 /],
      [() => c.waitForReceipt(HASH, { pollMs: 0 }), /^pollMs must be an integer from 1 /],
      [() => c.mine({ height: -1 }), /^height must be/],
      [() => transferEnvelope({ chainId: -1, from: ALICE, to: ALICE, amount: 1, nonce: 0 }), /^chainId must be/],
      [() => transferEnvelope({ chainId: 7, from: ALICE, to: ALICE, amount: 1, nonce: -1 }), /^nonce must be/],
      [() => transferEnvelope({ chainId: 7, from: "0x1", to: ALICE, amount: 1, nonce: 0 }), /^from: expected /],
      [() => transferEnvelope({ chainId: 7, from: ALICE, to: 5 as unknown as string, amount: 1, nonce: 0 }), "to must be a Uint8Array or 0x-prefixed hex"],
      [() => transferEnvelope({ chainId: 7, from: ALICE, to: ALICE, amount: -5, nonce: 0 }), /^amount must be/],
    ];
    for (const [f, want] of cases) {
      const message = await invalid(f);
      if (typeof want === "string") expect(message).toBe(want);
      else expect(message).toMatch(want);
    }
  });

  it("transferEnvelope's refusals name it as where they happened", () => {
    let err: unknown;
    try {
      transferEnvelope({ chainId: -1, from: ALICE, to: ALICE, amount: 1, nonce: 0 });
    } catch (e) {
      err = e;
    }
    expect(err).toMatchObject({ name: "InvalidArgument", url: "transferEnvelope" });
  });
});

describe("what the client sends", () => {
  it("feedPage names since, limit, until and an explicit order in the follower's order; none when not given", async () => {
    const s = await scripted(() => ({ body: PAGE }));
    try {
      const c = createClient(s.url);
      await c.feedPage();
      await c.feedPage({ since: 3, until: 9n, limit: 2, order: "desc" });
      await c.feedPage({ order: "asc" });
      expect(s.seen.map((x) => x.path)).toEqual(["/replication", "/replication?since=3&limit=2&until=9&order=desc", "/replication?order=asc"]);
    } finally {
      await s.close();
    }
  });

  it("the pins and the stream as broker-state takes them; a key form is passed as it is", async () => {
    const s = await scripted(() => ({ status: 404, body: { error: { code: "stream_not_found", message: "none" } } }));
    try {
      const c = createClient(s.url);
      await rejection(c.brokerState({ stream: "owner:0x11/nonce:1" }));
      await rejection(c.brokerState({ stream: HASH.toUpperCase().replace("0X", "0x") }, { block: HASH }));
      await rejection(c.finalized({ block: fromHex(HASH) }));
      await rejection(c.mine({ height: 12 }));
      expect(s.seen.map((x) => `${x.method} ${x.path}`)).toEqual([
        "GET /cbqs/broker-state?stream=owner%3A0x11%2Fnonce%3A1",
        `GET /cbqs/broker-state?stream=${HASH}&block=${HASH}`,
        `GET /cbqs/finalized-view?block=${HASH}`,
        "POST /mine?height=12",
      ]);
    } finally {
      await s.close();
    }
  });

  it("a batch proof is a JSON body of the keys; a transaction, the raw envelope as CBOR", async () => {
    const s = await scripted(() => ({ status: 404, body: { error: { code: "key_not_found", message: "none" } } }));
    try {
      const c = createClient(s.url);
      await rejection(c.multiProof([accountKey(fromHex(ALICE))]));
      await rejection(c.send("0x0102"));
      expect(s.seen.map((x) => [x.method, x.path, x.contentType, x.body])).toEqual([
        ["POST", "/proof/multi", "application/json", JSON.stringify({ keys: [toHex(accountKey(fromHex(ALICE)))] })],
        ["POST", "/tx", "application/cbor", "\u0001\u0002"],
      ]);
    } finally {
      await s.close();
    }
  });

  it("a batch proof of exactly 256 keys is sent", async () => {
    const s = await scripted(() => ({ status: 404, body: { error: { code: "key_not_found", message: "none" } } }));
    try {
      const keys = Array.from({ length: 256 }, (_, i) => accountKey(new Uint8Array(20).fill(i)));
      expect(await rejection(createClient(s.url).multiProof(keys))).toBeInstanceOf(NotFound);
      expect(s.seen).toHaveLength(1);
    } finally {
      await s.close();
    }
  });

  it("finalized: a view that is not a FinalizedViewV1 is a MalformedAnswer naming $.view", async () => {
    const s = await scripted(() => ({ body: { ...POINT, view: { height: "6" } } }));
    try {
      const err = await rejection(createClient(s.url).finalized());
      expect(err).toBeInstanceOf(MalformedAnswer);
      expect((err as MalformedAnswer).problem).toMatch(/^\$\.view/);
    } finally {
      await s.close();
    }
  });

  it("send: a tx_hash the envelope does not hash to is refused", async () => {
    const s = await scripted(() => ({ body: { tx_hash: HASH, nonce: "0", pending: 1, height: "0" } }));
    try {
      const err = await rejection(createClient(s.url).send("0x0102"));
      expect(err).toBeInstanceOf(ProofInvalid);
      expect(err).toMatchObject({ check: "tx_hash", height: undefined, actual: HASH });
      expect(err.message).toMatch(new RegExp(`^${s.url}/tx: tx_hash: the envelope hashes to 0x[0-9a-f]{64}, the node names ${HASH}$`));
    } finally {
      await s.close();
    }
  });

  it("a read whose connection failed is sent again; a send or mine never is", async () => {
    const sockets: Socket[] = [];
    let accepted = 0;
    const server = createNetServer((sock) => {
      accepted++;
      sockets.push(sock);
      sock.destroy();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const c = createClient(url, { connectRetries: 1 });
      expect(await rejection(c.genesis())).toBeInstanceOf(ConnectionFailed);
      expect(accepted).toBe(2);
      expect(await rejection(c.send("0x01"))).toBeInstanceOf(ConnectionFailed);
      expect(accepted).toBe(3);
      expect(await rejection(c.mine())).toBeInstanceOf(ConnectionFailed);
      expect(accepted).toBe(4);
    } finally {
      server.close();
    }
  });
});

describe("block, storage and wait", () => {
  it("block(h) of a height without a block is NotFound naming the head", async () => {
    const err = await rejection(client.block(3n));
    expect(err).toBeInstanceOf(NotFound);
    expect(err).toMatchObject({ code: "block_not_found", nodeMessage: "no block at height 3 (the node's head is 6)" });
  });

  it("a storage slot proven absent has no data", async () => {
    const absent = await client.storageProof(REGISTRY_ADDRESS, "0x0102");
    expect(absent.value).toBeNull();
    expect(absent.data).toBeNull();
  });

  it("waitForReceipt: a refusal other than tx_not_found ends the wait at once; a poll never outlasts the timeout", async () => {
    const s = await scripted((path) =>
      path.startsWith("/proof/receipt/") ? { status: 404, body: { error: { code: "not_found", message: "no endpoint" } } } : { body: {} },
    );
    try {
      const started = performance.now();
      const err = await rejection(createClient(s.url).waitForReceipt(HASH, { timeoutMs: 5_000, pollMs: 1_000 }));
      expect(err).toBeInstanceOf(NotFound);
      expect(err).toMatchObject({ code: "not_found" });
      expect(s.seen).toHaveLength(1);
      expect(performance.now() - started).toBeLessThan(900);
    } finally {
      await s.close();
    }
    const waiting = await scripted(() => ({ status: 404, body: { error: { code: "tx_not_found", message: "not yet" } } }));
    try {
      const started = performance.now();
      const err = await rejection(createClient(waiting.url).waitForReceipt(HASH, { timeoutMs: 200, pollMs: 60_000 }));
      expect(err).toBeInstanceOf(WaitTimeout);
      expect(err).toMatchObject({ txHash: HASH, timeoutMs: 200 });
      expect(performance.now() - started).toBeLessThan(5_000);
      expect(waiting.seen.length).toBeGreaterThanOrEqual(2);
    } finally {
      await waiting.close();
    }
  });
});
