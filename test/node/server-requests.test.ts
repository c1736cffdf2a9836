// The server's own handling of a request (src/node/server.ts), before and after any
// endpoint's code runs: the strict query reader, the request-body bounds however the body is
// framed (declared length, exact bound, chunked), the CORS answers a page relies on, the words
// of the 429s and of a malformed request, the internal error's log entry, the explorer's files,
// an IPv6 listener's URL, and what close() leaves behind.
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { devnetGenesisSource } from "../../src/harness/devnet.js";
import { readFixture } from "../../src/harness/documents.js";
import { runNode } from "../../src/node/run.js";
import { startServer, type NodeServer } from "../../src/node/server.js";
import type { ChainDb } from "../../state/chain-db/chain-db.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";
import { MAX_ENVELOPE_BYTES } from "../../src/bounds.js";
import { address, get, post, request, startNode, toHex, transferTx, type TestNode } from "./helpers.js";

const FIXTURE = "fixtures/corpus/create-quote.json"; // head at block 6
const KEY = `0x01${"00".repeat(53)}`;

async function withNode(options: Parameters<typeof startNode>[1], use: (n: TestNode) => Promise<void>, start: Parameters<typeof startNode>[0] = FIXTURE): Promise<void> {
  const n = await startNode(start, options);
  try {
    await use(n);
  } finally {
    await n.close();
  }
}

/** Sends raw bytes on a fresh connection; everything the server answered once it closes (or after `waitMs`). */
function raw(url: string, payload: string | Buffer, waitMs = 15_000): Promise<{ text: string; closedByServer: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let text = "";
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      socket.destroy();
    }, waitMs);
    socket.on("data", (d) => (text += d.toString("latin1")));
    socket.on("close", () => {
      clearTimeout(timer);
      resolve({ text, closedByServer: !timedOut });
    });
    socket.on("error", reject);
    socket.write(payload);
  });
}

/** The status line, headers (lower-cased names) and body of one raw HTTP/1.1 answer. */
function parseRaw(text: string): { status: string; headers: Record<string, string>; body: string } {
  const end = text.indexOf("\r\n\r\n");
  const [status, ...lines] = text.slice(0, end).split("\r\n");
  const headers: Record<string, string> = {};
  for (const l of lines) {
    const colon = l.indexOf(":");
    headers[l.slice(0, colon).toLowerCase()] = l.slice(colon + 1).trim();
  }
  return { status: status!, headers, body: text.slice(end + 4) };
}

/** A POST whose body is sent chunked (no Content-Length), in `parts`. */
function chunkedPost(url: string, parts: string[]): Promise<{ status: number; headers: IncomingHttpHeaders; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: "POST", headers: { "content-type": "application/json", "x-cbqs-client": "test" }, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d: string) => (text += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: JSON.parse(text) as Record<string, unknown> }));
      res.on("error", reject);
    });
    // The server may answer and close before the whole body is sent: that is the answer wanted.
    req.on("error", () => {});
    for (const p of parts) req.write(p);
    req.end();
  });
}

/** A raw connection to the node, once it is connected. */
async function connected(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  socket.on("error", () => {});
  await new Promise<void>((r) => socket.once("connect", () => r()));
  return socket;
}

/** GET /metrics' request counts of `route` as "status count", waited for until the route is counted. */
async function countedFor(url: string, route: string): Promise<string[]> {
  for (let i = 0; i < 2_000; i++) {
    const text = await (await fetch(url + "/metrics")).text();
    const counted = text.split("\n").filter((l) => l.startsWith("cbqs_http_requests_total{") && l.includes(`route="${route}"`));
    if (counted.length > 0) return counted.map((l) => `${/status="([^"]*)"/.exec(l)?.[1]} ${l.split(" ").pop()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return [];
}

/** The node's chain listeners (private: read to see that a server leaves none behind). */
const listeners = (n: TestNode): number => (n.node as unknown as { listeners: Set<unknown> }).listeners.size;

const error = (r: { body: Record<string, unknown> }) => r.body["error"] as { code: string; message: string } | undefined;

/** A /proof/multi body of exactly `size` bytes: one present key, padded with spaces (JSON whitespace). */
const multiBody = (size: number): string => {
  const text = JSON.stringify({ keys: [KEY] });
  return text + " ".repeat(size - text.length);
};

describe("the strict query reader (src/node/server.ts)", () => {
  it("empty parts of a query are skipped; '+' in a value is a space, '%2B' a plus; an empty name is an unknown parameter; names are percent-decoded", async () => {
    await withNode({}, async (n) => {
      expect((await get(n.url, "/genesis?&&")).status).toBe(200);
      expect((await get(n.url, "/genesis?")).status).toBe(200);
      const spaced = await get(n.url, "/fixture?post_state=a+b%2Bc");
      expect([spaced.status, error(spaced)]).toEqual([400, { code: "invalid_post_state", message: 'post_state must be every, final or none (got "a b+c")' }]);
      const unnamed = await get(n.url, "/genesis?=1");
      expect([unnamed.status, error(unnamed)]).toEqual([400, { code: "unknown_parameter", message: 'unknown query parameter "" (this endpoint takes: none)' }]);
      const twice = await get(n.url, "/replication?lim%69t=1&limit=2");
      expect([twice.status, error(twice)]).toEqual([400, { code: "duplicate_parameter", message: "query parameter limit is given twice" }]);
      const malformed = await get(n.url, "/replication?limit=%ZZ");
      expect([malformed.status, error(malformed)]).toEqual([400, { code: "invalid_query", message: "the query string has a malformed percent-encoding" }]);
    });
  });
});

describe("request-body bounds, however the body is framed (src/node/server.ts readBody)", () => {
  it("a /proof/multi body of exactly 65,536 bytes is read, declared or chunked; one byte more is 413 either way", async () => {
    await withNode({}, async (n) => {
      const declared = await post(n.url, "/proof/multi", multiBody(65_536), "application/json");
      expect([declared.status, error(declared)]).toEqual([200, undefined]);
      const chunked = await chunkedPost(n.url + "/proof/multi", [multiBody(65_536).slice(0, 40_000), multiBody(65_536).slice(40_000)]);
      expect([chunked.status, error(chunked)]).toEqual([200, undefined]);
      expect(chunked.body["keys"]).toEqual(declared.body["keys"]);
      const over = await chunkedPost(n.url + "/proof/multi", [multiBody(65_537).slice(0, 40_000), multiBody(65_537).slice(40_000)]);
      expect([over.status, error(over)]).toEqual([413, { code: "body_too_large", message: "the request body exceeds 65536 bytes" }]);
    });
  });

  it("a chunked body to an endpoint that takes none is 413; an empty one, chunked or declared as 0 bytes, is no body", async () => {
    await withNode({}, async (n) => {
      const chunked = await chunkedPost(n.url + "/mine", ["x"]);
      expect([chunked.status, error(chunked)]).toEqual([413, { code: "body_too_large", message: "this endpoint takes no request body" }]);
      expect((await chunkedPost(n.url + "/mine", [])).status).toBe(200);
      const zero = parseRaw((await raw(n.url, "POST /mine HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Cbqs-Client: test\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")).text);
      expect(zero.status).toBe("HTTP/1.1 200 OK");
    });
  });

  it("a declared length above the bound is refused at once, before any of the body arrives, and the connection is closed (the body is not drained)", async () => {
    await withNode({}, async (n) => {
      // Nothing of the body is ever sent: only the declared length can refuse it.
      const r = await raw(n.url, "POST /proof/multi HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n");
      expect(r.closedByServer).toBe(true);
      const answer = parseRaw(r.text);
      expect([answer.status, answer.headers["connection"], JSON.parse(answer.body)]).toEqual([
        "HTTP/1.1 413 Payload Too Large",
        "close",
        { error: { code: "body_too_large", message: "the request body exceeds 65536 bytes" } },
      ]);
    });
  });

  it("a refusal with the body fully read keeps the connection open (keep-alive): only an unread body closes it", async () => {
    await withNode({}, async (n) => {
      // Two requests on one connection: the first is refused (400) after its body was read in full.
      const bad = "{bad json";
      const second = "GET /genesis HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
      const r = await raw(n.url, `POST /proof/multi HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${bad.length}\r\n\r\n${bad}${second}`);
      const answers = r.text.split(/(?=HTTP\/1\.1 )/);
      expect(answers.map((a) => parseRaw(a).status)).toEqual(["HTTP/1.1 400 Bad Request", "HTTP/1.1 200 OK"]);
      expect(parseRaw(answers[0]!).headers["connection"]).toBe("keep-alive");
    });
  });
});

describe("POST /tx's body forms (src/node/server.ts txBody)", () => {
  const GENESIS = { kind: "genesis", source: readFixture("fixtures/corpus/transfers.json").genesis.source } as const;
  const tx = (nonce: bigint) => transferTx(7n, address(0x11), nonce, address(0x22), 5n);

  it("binary CBOR is recognised by its media type case-insensitively and with parameters, and only by a whole media type at the start; hex may have whitespace around it", async () => {
    await withNode({}, async (n) => {
      const sent = [
        await post(n.url, "/tx", tx(0n), "Application/CBOR"),
        await post(n.url, "/tx", tx(1n), "application/octet-stream; charset=binary"),
        // Not binary media types: their bodies are read as text (hex here).
        await post(n.url, "/tx", toHex(tx(2n)), "application/cborish"),
        await post(n.url, "/tx", toHex(tx(3n)), "x-application/cbor"),
        await post(n.url, "/tx", `\n  ${toHex(tx(4n))}\r\n`),
        await post(n.url, "/tx", ` ${JSON.stringify({ envelope: toHex(tx(5n)) })}`, "application/json"),
      ];
      expect(sent.map((r) => [r.status, r.body["nonce"]])).toEqual([0, 1, 2, 3, 4, 5].map((i) => [200, String(i)]));
    }, GENESIS);
  });

  it("a text body of exactly twice the envelope bound plus 64 bytes is read (and judged as a transaction); one byte more is 413 naming the bound", async () => {
    await withNode({}, async (n) => {
      const max = 2 * MAX_ENVELOPE_BYTES + 64;
      const body = `0x${"00".repeat(MAX_ENVELOPE_BYTES)}`;
      const fits = await post(n.url, "/tx", body + " ".repeat(max - body.length));
      expect([fits.status, error(fits)?.code]).toEqual([400, "invalid_transaction"]);
      const over = await post(n.url, "/tx", body + " ".repeat(max + 1 - body.length));
      expect([over.status, error(over)]).toEqual([413, { code: "body_too_large", message: `the request body exceeds ${max} bytes` }]);
      // A binary envelope may be exactly the envelope bound (then judged: these bytes are none).
      const exact = await post(n.url, "/tx", new Uint8Array(MAX_ENVELOPE_BYTES), "application/cbor");
      expect([exact.status, error(exact)?.code]).toEqual([400, "invalid_transaction"]);
    }, GENESIS);
  });
});

describe("CORS and the 429s' words (src/node/server.ts)", () => {
  it("a preflight names the path's methods in Allow and Access-Control-Allow-Methods, and may be cached 600 s", async () => {
    await withNode({ corsOrigins: ["http://localhost:3000"] }, async (n) => {
      const preflight = await fetch(`${n.url}/account/${toHex(address(1))}`, { method: "OPTIONS", headers: { origin: "http://localhost:3000", "access-control-request-method": "GET" } });
      expect([preflight.status, preflight.headers.get("allow"), preflight.headers.get("access-control-allow-methods"), preflight.headers.get("access-control-max-age")]).toEqual([
        204,
        "GET, HEAD, OPTIONS",
        "GET, HEAD, OPTIONS",
        "600",
      ]);
    });
  });

  it("each 429 names the limit that refused it, in words with its rate; a page may read its Retry-After (exposed by CORS)", async () => {
    const page = "http://localhost:3000";
    await withNode({ rateLimit: 2, clientRateLimit: 0, proofRateLimit: 1, now: () => 0, corsOrigins: [page] }, async (n) => {
      const proof = `/proof/account/${toHex(address(0x11))}`;
      expect((await get(n.url, proof)).status).toBe(200);
      const perClient = await get(n.url, proof);
      expect([perClient.status, error(perClient)]).toEqual([429, { code: "rate_limited", message: "proof endpoints answer at most 1 requests per second per client" }]);
      const global = await request(n.url + "/genesis", { headers: { origin: page } });
      expect([global.status, error(global)]).toEqual([429, { code: "rate_limited", message: "the node answers at most 2 requests per second" }]);
      expect([global.headers.get("retry-after"), global.headers.get("access-control-expose-headers"), global.headers.get("access-control-allow-origin")]).toEqual(["1", "retry-after", page]);
    });
  });

  it("a proof asked of /account (?proof=true) is behind the proof limit; the same read without a proof is not", async () => {
    await withNode({ rateLimit: 0, clientRateLimit: 0, proofRateLimit: 1, now: () => 0 }, async (n) => {
      const account = `/account/${toHex(address(0x11))}`;
      const statuses = [];
      for (const q of ["?proof=true", "?proof=true", "", "?proof=false", ""]) statuses.push((await get(n.url, account + q)).status);
      expect(statuses).toEqual([200, 429, 200, 200, 200]);
    });
  });
});

describe("malformed HTTP and internal errors (src/node/server.ts)", () => {
  it("a malformed request is answered 400 naming the parser's code; headers too large are 431; the connection is closed", async () => {
    await withNode({}, async (n) => {
      const garbage = await raw(n.url, "GARBAGE\r\n\r\n");
      const g = parseRaw(garbage.text);
      expect([g.status, g.headers["connection"], g.headers["content-type"], JSON.parse(g.body)]).toEqual([
        "HTTP/1.1 400 Bad Request",
        "close",
        "application/json; charset=utf-8",
        { error: { code: "bad_request", message: "malformed HTTP request (HPE_INVALID_METHOD)" } },
      ]);
      const big = await raw(n.url, `GET /genesis HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`);
      const b = parseRaw(big.text);
      expect([b.status, JSON.parse(b.body)]).toEqual(["HTTP/1.1 431 Request Header Fields Too Large", { error: { code: "bad_request", message: "malformed HTTP request (HPE_HEADER_OVERFLOW)" } }]);
      expect((await get(n.url, "/genesis")).status).toBe(200);
    });
  });

  it("an internal error's log entry is an error named 'internal error', with the request's method and its URL cut to 512 characters", async () => {
    const db = new MemoryChainDb();
    const failOn = { active: false };
    const failing = new Proxy(db, {
      get(target, prop, receiver) {
        if (prop === "exclusionProofOps" && failOn.active) return () => { throw new Error("index page unreadable (secret detail)"); };
        const v = Reflect.get(target, prop, receiver) as unknown;
        return typeof v === "function" ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    }) as ChainDb;
    await withNode({ db: failing }, async (n) => {
      failOn.active = true;
      // A storage key of 600 bytes makes a URL well above 512 characters.
      const path = `/proof/storage/${toHex(address(0x17))}/0x${"ab".repeat(600)}`;
      const r = await get(n.url, path);
      expect(r.status).toBe(500);
      const id = r.body["id"] as string;
      const entry = n.logs.find((e) => e["id"] === id)!;
      expect([entry["level"], entry["msg"], entry["method"], entry["url"]]).toEqual(["error", "internal error", "GET", path.slice(0, 512)]);
      // The stack, where the error was thrown: the log is what an operator debugs from.
      expect(String(entry["error"])).toMatch(/^Error: index page unreadable \(secret detail\)\n\s+at /);
    });
  });
});

describe("a client gone before its answer (src/node/server.ts send)", () => {
  it("a client that leaves while its devnet write runs is written nothing: the request is counted with status none", async () => {
    await withNode({}, async (n) => {
      const socket = await connected(n.url);
      socket.write("POST /mine?blocks=5000 HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Cbqs-Client: test\r\nContent-Length: 0\r\n\r\n");
      // Gone once the batch has started (its first blocks are committed), long before it ends.
      for (let i = 0; i < 1_000 && n.node.head().height === 0n; i++) await new Promise((r) => setTimeout(r, 10));
      socket.destroy();
      expect(await countedFor(n.url, "cbqs.devnet.mine")).toEqual(["none 1"]);
    }, { kind: "genesis", source: devnetGenesisSource(2) });
  }, 90_000);
});

describe("the explorer's files and the server's edges (src/node/server.ts)", () => {
  it("/ is the explorer page on GET and HEAD, 304 when its ETag is offered back; other methods on it are not the page's", async () => {
    await withNode({}, async (n) => {
      const page = await fetch(n.url + "/");
      const etag = page.headers.get("etag")!;
      expect([page.status, page.headers.get("content-type"), page.headers.get("access-control-allow-origin"), page.headers.get("x-content-type-options")]).toEqual([200, "text/html; charset=utf-8", null, "nosniff"]);
      // Its length is declared (not chunked), and HEAD declares the same.
      expect(page.headers.get("content-length")).toBe(String((await page.arrayBuffer()).byteLength));
      const same = await fetch(n.url + "/", { headers: { "if-none-match": etag } });
      expect([same.status, await same.text(), same.headers.get("etag")]).toEqual([304, "", etag]);
      const other = await fetch(n.url + "/", { headers: { "if-none-match": '"0"' } });
      expect(other.status).toBe(200);
      const head = await fetch(n.url + "/", { method: "HEAD" });
      expect([head.status, await head.text(), head.headers.get("content-length")]).toEqual([200, "", page.headers.get("content-length")]);
      const posted = await post(n.url, "/", "");
      expect([posted.status, error(posted)?.code]).toEqual([404, "not_found"]);
    });
  });

  it("a node on an IPv6 address names it in brackets in its URL, and answers there", async () => {
    const logs: Array<Record<string, unknown>> = [];
    const db = new MemoryChainDb(128);
    const n = await runNode(db, { kind: "fixture", fixture: readFixture(FIXTURE) }, { host: "::1", port: 0, blockTime: 0, rateLimit: 0, proofRateLimit: 0, proofLimits: { maxExclusionOps: 4096 }, log: (e) => logs.push(e) });
    try {
      expect(n.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
      expect((await get(n.url, "/genesis")).status).toBe(200);
    } finally {
      await n.close();
    }
  });

  it("close() gives the node's block timing hook back, and ends even while a client holds a request open mid-body", async () => {
    const n = await startNode({ kind: "genesis", source: devnetGenesisSource(2) });
    expect(n.node.onBlockTimed).toBe(n.metrics.observeBlock);
    const socket = await connected(n.url);
    socket.write("POST /tx HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Cbqs-Client: test\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n0x12");
    const gone = new Promise<void>((r) => socket.once("close", () => r()));
    // The server's own request timeout is 30 s: a close() that waited for it would not be done in 15.
    const closed = await Promise.race([n.close().then(() => "closed"), new Promise((r) => setTimeout(() => r("still open"), 15_000))]);
    expect(closed).toBe("closed");
    await gone;
    expect(n.node.onBlockTimed).toBeUndefined();
  }, 30_000);
});

describe("the server's edges a mutation test found untested (src/node/server.ts)", () => {
  const BODY_FORMS = "the body must be the envelope as 0x-prefixed hex (plain text, a JSON string, or cbqs tx --json's {\"envelope\": …}), or binary CBOR with Content-Type application/cbor or application/octet-stream";

  it("POST /tx reads a body as JSON only when it starts as JSON (a quote or a brace), and names the body's forms when it is none of them", async () => {
    await withNode({}, async (n) => {
      const endsQuoted = await post(n.url, "/tx", '0x12"');
      expect([endsQuoted.status, error(endsQuoted)]).toEqual([400, { code: "invalid_transaction", message: BODY_FORMS }]);
      const unterminated = await post(n.url, "/tx", '"0x12');
      expect([unterminated.status, error(unterminated)?.code]).toEqual([400, "invalid_json"]);
      const notText = await post(n.url, "/tx", '{"envelope": 5}', "application/json");
      expect([notText.status, error(notText)]).toEqual([400, { code: "invalid_transaction", message: BODY_FORMS }]);
    });
  });

  it("a query parameter without '=' is that name with an empty value", async () => {
    await withNode({}, async (n) => {
      const bare = await get(n.url, "/fixture?post_state");
      expect([bare.status, error(bare)]).toEqual([400, { code: "invalid_post_state", message: 'post_state must be every, final or none (got "")' }]);
    });
  });

  it("a stream id in a path is refused as the stream's, malformed hex or malformed percent-encoding alike", async () => {
    await withNode({}, async (n) => {
      const short = await get(n.url, "/cbqs/stream/0x12/events");
      expect([short.status, error(short)]).toEqual([400, { code: "invalid_stream", message: "stream must be 0x-prefixed 32-byte hex" }]);
      const escaped = await get(n.url, "/cbqs/stream/%ZZ/events");
      expect([escaped.status, error(escaped)]).toEqual([400, { code: "invalid_stream", message: "the stream in the path has a malformed percent-encoding" }]);
    });
  });

  it("every JSON answer says so, with its charset", async () => {
    await withNode({}, async (n) => {
      for (const path of ["/genesis", "/head", "/nope"]) expect((await get(n.url, path)).headers.get("content-type"), path).toBe("application/json; charset=utf-8");
    });
  });

  it("a client gone mid-body is no internal error: nothing is logged or answered, its connection is dropped", async () => {
    await withNode({}, async (n) => {
      const socket = await connected(n.url);
      socket.write("POST /proof/multi HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{");
      // Leave once the server reads the body (loopback: well within 200 ms).
      await new Promise((r) => setTimeout(r, 200));
      socket.destroy();
      expect(await countedFor(n.url, "cip4.proof.multi")).toEqual(["none 1"]);
      expect(n.logs.filter((e) => e["level"] === "error")).toEqual([]);
    });
  });

  it("a second server on one node: the block timing hook is the latest server's, and closing another leaves it; a server that cannot listen leaves nothing on the node", async () => {
    await withNode({}, async (n) => {
      const options = { host: "127.0.0.1", port: 0, rateLimit: 0, proofRateLimit: 0, proofLimits: { maxExclusionOps: 4096 }, log: () => {} };
      const before = listeners(n);
      const b: NodeServer = await startServer(n.devnet, options);
      const c: NodeServer = await startServer(n.devnet, options);
      expect(n.node.onBlockTimed).toBe(c.metrics.observeBlock);
      await b.close();
      expect(n.node.onBlockTimed).toBe(c.metrics.observeBlock);
      // The port taken: refused with the system's error, and neither the hook nor a listener is left behind.
      await expect(startServer(n.devnet, { ...options, port: Number(new URL(c.url).port) })).rejects.toThrow(/EADDRINUSE/);
      expect(n.node.onBlockTimed).toBe(c.metrics.observeBlock);
      expect(listeners(n)).toBe(before + 1);
      await c.close();
      expect(n.node.onBlockTimed).toBeUndefined();
      expect(listeners(n)).toBe(before);
    });
  });

  it("an error the listening server emits (a failed accept) is logged; the node serves on, its subscriptions kept", async () => {
    await withNode({}, async (n) => {
      const logs: Array<Record<string, unknown>> = [];
      const b = await startServer(n.devnet, { host: "127.0.0.1", port: 0, rateLimit: 0, proofRateLimit: 0, proofLimits: { maxExclusionOps: 4096 }, log: (e) => logs.push(e) });
      try {
        const before = listeners(n);
        b.server.emit("error", Object.assign(new Error("accept EMFILE"), { code: "EMFILE", syscall: "accept" }));
        expect(logs.filter((e) => e["level"] === "error")).toEqual([{ level: "error", msg: "server error", error: "accept EMFILE" }]);
        expect((await get(b.url, "/genesis")).status).toBe(200);
        expect(listeners(n)).toBe(before);
      } finally {
        await b.close();
      }
    });
  });
});
