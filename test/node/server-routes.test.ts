// The node's route table and the server's per-route checks (src/node/server.ts): which
// path and method reach each endpoint, the query parameters each one takes (pinned by the words of
// its unknown-parameter refusal, which lists them), which endpoints are behind the per-client proof
// limit, the numeric parameters of the devnet writes by their refusals, the stream forms a path or
// ?stream= takes, and how a path is matched segment by segment.
import { get as httpGet, type IncomingMessage } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_ENVELOPE_BYTES } from "../../src/bounds.js";
import { readFixture } from "../../src/harness/documents.js";
import { address, get, post, startNode, toHex, type Answer, type TestNode } from "./helpers.js";

const FIXTURE = "fixtures/corpus/create-quote.json"; // head at block 6
const S = `0x${"ab".repeat(32)}`;
const A = toHex(address(1));
const REGISTRY = toHex(address(0x17));
const KEY = `0x01${"00".repeat(53)}`;

const error = (r: Answer) => r.body["error"] as { code: string; message: string } | undefined;
const send = (n: TestNode, method: "GET" | "POST", path: string, body = ""): Promise<Answer> => (method === "GET" ? get(n.url, path) : post(n.url, path, body, "application/json"));

/** Every endpoint: its method, a path that reaches it, and the query parameters it takes, in order. */
const ROUTES: Array<[method: "GET" | "POST", path: string, takes: string]> = [
  ["GET", "/.well-known/cbqs", "none"],
  ["GET", "/genesis", "none"],
  ["GET", "/cbqs/finalized-view", "block"],
  ["GET", "/cbqs/broker-state", "stream, block"],
  ["GET", "/replication", "since, until, limit, order"],
  ["GET", "/subscribe", "stream"],
  ["GET", "/block/1", "none"],
  ["GET", "/search", "q"],
  ["GET", "/fixture", "since, until, post_state"],
  ["GET", `/proof/account/${A}`, "none"],
  ["GET", `/proof/actor/${A}`, "none"],
  ["GET", `/proof/storage/${REGISTRY}/${KEY}`, "none"],
  ["GET", `/proof/tx/${S}`, "none"],
  ["GET", `/proof/receipt/${S}`, "none"],
  ["POST", "/proof/multi", "none"],
  ["GET", `/account/${A}`, "height, block, proof"],
  ["GET", `/cbqs/stream/${S}`, "height, block"],
  ["GET", `/cbqs/stream/${S}/history`, "from, to, points"],
  ["GET", `/cbqs/stream/${S}/events`, "until, limit"],
  ["GET", `/cbqs/provider/${A}`, "height, block"],
  ["GET", `/tx/${S}`, "none"],
  ["GET", "/metrics", "none"],
  ["POST", "/tx", "none"],
  ["POST", "/mine", "height, blocks, timestamp"],
  ["GET", "/devnet/accounts", "none"],
  ["POST", "/devnet/snapshot", "none"],
  ["POST", "/devnet/revert", "id"],
];

describe("the route table (src/node/server.ts ROUTES)", () => {
  let n: TestNode;
  beforeAll(async () => {
    n = await startNode(FIXTURE);
  });
  afterAll(() => n.close());

  it("every endpoint is reached by its method and path, and names exactly the query parameters it takes when given another", async () => {
    for (const [method, path, takes] of ROUTES) {
      const r = await send(n, method, `${path}?zz=1`);
      expect([r.status, error(r)], `${method} ${path}`).toEqual([400, { code: "unknown_parameter", message: `unknown query parameter "zz" (this endpoint takes: ${takes})` }]);
    }
  });
});

describe("discovery without subscriptions (src/node/server.ts discovery)", () => {
  it("with --max-subscribers 0 discovery lists every other endpoint and only /subscribe is gone (404)", async () => {
    const on = await startNode(FIXTURE);
    const off = await startNode(FIXTURE, { maxSubscribers: 0 });
    try {
      const all = (await get(on.url, "/.well-known/cbqs")).body["endpoints"] as Record<string, string>;
      expect(all).toHaveProperty("cbqs.subscribe");
      const { ["cbqs.subscribe"]: _, ...rest } = all;
      expect((await get(off.url, "/.well-known/cbqs")).body["endpoints"]).toEqual(rest);
      const r = await get(off.url, "/subscribe");
      expect([r.status, error(r)]).toEqual([404, { code: "not_found", message: 'no endpoint at "/subscribe" (see /.well-known/cbqs)' }]);
    } finally {
      await on.close();
      await off.close();
    }
  });
});

describe("which endpoints are behind the per-client proof limit (CIP-4 §10)", () => {
  it("each proof endpoint (and /account?proof=true) is refused 429 by the proof limit once its client's bucket is empty; the lookups without a proof are not", async () => {
    let clock = 0;
    const n = await startNode(FIXTURE, { rateLimit: 0, clientRateLimit: 0, proofRateLimit: 1, now: () => clock });
    try {
      const limited = { code: "rate_limited", message: "proof endpoints answer at most 1 requests per second per client" };
      const proofs: Array<["GET" | "POST", string, string?]> = [
        ["GET", `/proof/account/${A}`],
        ["GET", `/proof/actor/${A}`],
        ["GET", `/proof/storage/${REGISTRY}/${KEY}`],
        ["GET", `/proof/tx/${S}`],
        ["GET", `/proof/receipt/${S}`],
        ["POST", "/proof/multi", JSON.stringify({ keys: [KEY] })],
        ["GET", `/account/${A}?proof=true`],
      ];
      for (const [method, path, body] of proofs) {
        clock += 1_000; // the bucket is full again
        const first = await send(n, method, path, body);
        expect(first.status, path).not.toBe(429);
        const second = await send(n, method, path, body);
        expect([second.status, error(second), second.headers.get("retry-after")], path).toEqual([429, limited, "1"]);
      }
      // The bucket is empty now: reads without a proof still answer.
      for (const path of [`/account/${A}`, `/account/${A}?proof=false`, `/tx/${S}`, `/cbqs/provider/${A}`, "/genesis"]) {
        expect((await get(n.url, path)).status, path).not.toBe(429);
      }
    } finally {
      await n.close();
    }
  });
});

describe("the devnet writes' numeric parameters, by their refusals (src/node/server.ts mineRequest, snapshotId)", () => {
  let n: TestNode;
  beforeAll(async () => {
    n = await startNode(FIXTURE);
  });
  afterAll(() => n.close());

  const FORM = "decimal digits without sign or leading zeros";
  const U64 = "18446744073709551615";

  it("POST /mine's height, timestamp and blocks and POST /devnet/revert's id each say what the number is, and its bound", async () => {
    for (const [path, code, message] of [
      ["/mine?height=x", "invalid_height", `height must be a block height: ${FORM} (got "x")`],
      ["/mine?height=18446744073709551616", "invalid_height", `height must be a block height of at most ${U64} (got 18446744073709551616)`],
      ["/mine?timestamp=1.5", "invalid_timestamp", `timestamp must be seconds since the Unix epoch: ${FORM} (got "1.5")`],
      ["/mine?timestamp=18446744073709551616", "invalid_timestamp", `timestamp must be seconds since the Unix epoch of at most ${U64} (got 18446744073709551616)`],
      ["/mine?blocks=-1", "invalid_blocks", `blocks must be a number of blocks: ${FORM} (got "-1")`],
      ["/devnet/revert?id=01", "invalid_id", `id must be a snapshot id: ${FORM} (got "01")`],
      ["/devnet/revert?id=18446744073709551616", "invalid_id", `id must be a snapshot id of at most ${U64} (got 18446744073709551616)`],
    ] as const) {
      const r = await post(n.url, path, "");
      expect([r.status, error(r)], path).toEqual([400, { code, message }]);
    }
    expect(n.node.head().height).toBe(6n); // nothing refused was mined
  });

  it("blocks=1 is the least batch (one block); the answer of a batch names its first block", async () => {
    const before = n.node.head().height;
    const one = await post(n.url, "/mine?blocks=1", "");
    expect([one.status, one.body["height"]]).toEqual([200, (before + 1n).toString()]);
    const timestamp = n.node.head().timestamp + 100n;
    const r = await post(n.url, `/mine?height=${before + 10n}&timestamp=${timestamp}&blocks=2`, "");
    expect(r.body).toMatchObject({ height: (before + 11n).toString(), first: { height: (before + 10n).toString(), timestamp: timestamp.toString() }, blocks: 2 });
  });
});

describe("a path is matched segment by segment (src/node/server.ts matchRoute)", () => {
  let n: TestNode;
  beforeAll(async () => {
    n = await startNode(FIXTURE);
  });
  afterAll(() => n.close());

  it("a path with a segment more or less than an endpoint's, or an empty segment where the endpoint captures one, is no endpoint (404), never a read of nothing", async () => {
    for (const path of ["/genesis/x", "/tx/", "/account/", `/proof/storage/${REGISTRY}`, `/proof/storage/${REGISTRY}/`, `/cbqs/stream/${S}/history/x`, "/cbqs/stream//events"]) {
      const r = await get(n.url, path);
      expect([r.status, error(r)], path).toEqual([404, { code: "not_found", message: `no endpoint at ${JSON.stringify(path)} (see /.well-known/cbqs)` }]);
    }
  });

  it("a stream in a path or in ?stream= is an id or a stream-key form; text that is neither is refused quoting at most 120 characters of it", async () => {
    const long = `owner:${"x".repeat(200)}`;
    const message = (got: string) => `stream must be a 0x 32-byte id, "owner:0x<addr>/nonce:<n>" or "key_stream_of:<stream>" (got ${JSON.stringify(got)})`;
    for (const path of [`/cbqs/stream/${long}`, `/cbqs/stream/${long}/history`, `/cbqs/stream/${long}/events`, `/cbqs/broker-state?stream=${long}`, `/subscribe?stream=${long}`]) {
      const r = await get(n.url, path);
      expect([r.status, error(r)], path).toEqual([400, { code: "invalid_stream", message: message(long.slice(0, 120)) }]);
    }
    // A stream-key form is this chain's stream id: the same answer as the id itself.
    const key = encodeURIComponent(`owner:${REGISTRY}/nonce:1`);
    const byKey = await get(n.url, `/cbqs/broker-state?stream=${key}`);
    expect([byKey.status, error(byKey)?.code]).toEqual([404, "stream_not_found"]);
    expect(error(byKey)?.message).toMatch(/^no stream 0x[0-9a-f]{64} at height 6$/);
  });
});

describe("POST /tx's binary envelope bound (src/node/server.ts txBody)", () => {
  it("a binary envelope of exactly the envelope bound is read and judged as a transaction; one byte more is 413", async () => {
    const n = await startNode(FIXTURE);
    try {
      const exact = await post(n.url, "/tx", new Uint8Array(MAX_ENVELOPE_BYTES), "application/octet-stream");
      expect(exact.status).toBe(400);
      expect(error(exact)?.code).toBe("invalid_transaction");
      const over = await post(n.url, "/tx", new Uint8Array(MAX_ENVELOPE_BYTES + 1), "application/octet-stream");
      expect([over.status, error(over)]).toEqual([413, { code: "tx_too_large", message: `a transaction envelope is at most ${MAX_ENVELOPE_BYTES} bytes (this one has ${MAX_ENVELOPE_BYTES + 1})` }]);
    } finally {
      await n.close();
    }
  });
});

describe("GET /genesis and discovery's read point (src/node/server.ts genesisJson, historyStartJson)", () => {
  it("/genesis names the genesis block, the chain, its instance, timestamp and source, its finalized view and where the node's history starts; discovery names the head", async () => {
    const fixture = readFixture(FIXTURE);
    const n = await startNode(FIXTURE);
    try {
      const g = n.db.blockByHeight(0n)!;
      const head = n.db.head()!;
      const instance = toHex(n.node.chainInstanceId);
      const r = await get(n.url, "/genesis");
      expect(r.body).toEqual({
        height: "0",
        block_hash: toHex(g.block_hash),
        state_root: toHex(g.state_root),
        chain_id: fixture.genesis.config.chain_id.toString(),
        chain_instance_id: instance,
        timestamp: g.timestamp.toString(),
        source: toHex(fixture.genesis.source),
        view: { chain_instance_id: instance, height: "0", block_hash: toHex(g.block_hash) },
        history_start: { height: "0", block_hash: toHex(g.block_hash) },
      });
      const d = await get(n.url, "/.well-known/cbqs");
      expect({ ...d.body, endpoints: undefined }).toEqual({
        height: "6",
        block_hash: toHex(head.block_hash),
        state_root: toHex(head.state_root),
        history_start: { height: "0", block_hash: toHex(g.block_hash) },
        endpoints: undefined,
      });
    } finally {
      await n.close();
    }
  });
});

describe("a 429 is counted under the endpoint its path names (src/node/server.ts)", () => {
  it("a refused request for the explorer's page is counted as cbqs.explorer, one for an endpoint under its name, one for no endpoint as unmatched", async () => {
    let clock = 0;
    const n = await startNode(FIXTURE, { rateLimit: 0, clientRateLimit: 1, now: () => clock });
    try {
      for (const path of ["/", "/explorer/main.js", "/genesis", "/nowhere"]) {
        clock += 1_000; // the client's bucket is full again
        expect((await fetch(n.url + path).then((r) => r.arrayBuffer().then(() => r.status))), path).not.toBe(429);
        expect((await fetch(n.url + path).then((r) => r.arrayBuffer().then(() => r.status))), path).toBe(429);
      }
      const text = await n.metrics.registry.metrics();
      const limited = text.split("\n").filter((l) => l.startsWith("cbqs_http_rate_limited_total{"));
      expect(limited.sort()).toEqual([
        'cbqs_http_rate_limited_total{route="cbqs.explorer",limit="client"} 2',
        'cbqs_http_rate_limited_total{route="cbqs.genesis",limit="client"} 1',
        'cbqs_http_rate_limited_total{route="unmatched",limit="client"} 1',
      ]);
    } finally {
      await n.close();
    }
  });
});

describe("proof_generation_ms measures the proof (src/node/server.ts)", () => {
  it("a proof's observed generation time lies within its request's own time, never the time since the process started", async () => {
    const n = await startNode(FIXTURE);
    try {
      const before = performance.now();
      expect((await get(n.url, `/proof/account/${A}`)).status).toBe(200);
      const after = performance.now();
      const text = await n.metrics.registry.metrics();
      const sum = Number(/^proof_generation_ms_sum\{route="cip4\.proof\.account"\} (\S+)$/m.exec(text)?.[1]);
      expect(sum).toBeGreaterThanOrEqual(0);
      expect(sum).toBeLessThanOrEqual(after - before);
      // A read without a proof observes nothing.
      expect((await get(n.url, `/account/${A}`)).status).toBe(200);
      expect(await n.metrics.registry.metrics()).not.toMatch(/^proof_generation_ms_count\{route="cbqs\.account"\}/m);
    } finally {
      await n.close();
    }
  });
});

describe("close() ends the open subscriptions (src/node/server.ts)", () => {
  it("closing the node ends an open GET /subscribe answer cleanly (its body complete), not by cutting its connection", async () => {
    const n = await startNode(FIXTURE);
    let res: IncomingMessage;
    try {
      res = await new Promise<IncomingMessage>((resolve, reject) => httpGet(`${n.url}/subscribe`, resolve).on("error", reject));
      expect(res.statusCode).toBe(200);
    } catch (err) {
      await n.close();
      throw err;
    }
    res.on("error", () => {});
    res.resume();
    const complete = new Promise<boolean>((done) => res.on("close", () => done(res.complete)));
    await n.close();
    expect(await complete).toBe(true);
  });
});
