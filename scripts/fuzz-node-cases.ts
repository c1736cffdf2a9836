// Malformed requests for the node fuzzer (scripts/fuzz-node.ts, test/node/fuzz.test.ts): a seeded,
// deterministic mix of mutated paths, queries, methods, headers and bodies over every endpoint, and
// raw bytes that are not HTTP at all. Loopback only; `sendCase` never throws for a refused or
// dropped connection (that is an answer too), only reports what came back.
import { request, type Agent } from "node:http";
import { connect } from "node:net";
import { Rng } from "./rng.js";

export type FuzzCase =
  | { kind: "http"; method: string; path: string; headers: Record<string, string>; body: Buffer | null; class?: "multi-keys" }
  | { kind: "raw"; bytes: Buffer };

const PATHS = [
  "/.well-known/cbqs",
  "/genesis",
  "/cbqs/finalized-view",
  "/cbqs/broker-state",
  "/replication",
  "/fixture",
  "/proof/account/{a}",
  "/proof/actor/{a}",
  "/proof/storage/{a}/{k}",
  "/proof/tx/{h}",
  "/proof/receipt/{h}",
  "/proof/multi",
  "/tx",
  "/mine",
  "/account/{a}",
  "/cbqs/stream/{h}",
  "/cbqs/provider/{a}",
  "/tx/{h}",
  "/devnet/accounts",
  "/devnet/snapshot",
  "/devnet/revert",
  "/subscribe",
  "/block/{h}",
  "/cbqs/stream/{h}/history",
  "/cbqs/stream/{h}/events",
  "/search",
  "/",
  "/explorer/{x}",
  "/metrics",
];
const PARAMS = ["stream", "block", "since", "until", "limit", "order", "post_state", "height", "owner", "blocks", "timestamp", "proof", "id", "from", "to", "points", "q", "x", ""];
const METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "GET", "GET", "POST"];
const TYPES = ["application/json", "application/cbor", "application/octet-stream", "text/plain", "multipart/form-data; boundary=x", "", "application/json; charset=latin1"];

function hex(rng: Rng, bytes: number): string {
  return "0x" + Buffer.from(rng.bytes(bytes)).toString("hex");
}

function value(rng: Rng): string {
  return rng.pick([
    () => String(rng.below(100)),
    () => "-" + String(rng.below(100)),
    () => "18446744073709551616",
    () => "99999999999999999999999999999999999",
    () => "1e309",
    () => "0.5",
    () => "",
    () => "asc",
    () => "desc",
    () => "DESC",
    () => "final",
    () => hex(rng, 32),
    () => hex(rng, rng.below(80)),
    () => "0x" + "zz".repeat(32),
    () => "%zz",
    () => "%00%ff%C0%80",
    () => "x".repeat(rng.below(9000)),
    () => encodeURIComponent("\u{1F600}\u0000\uFFFF"),
  ])();
}

function segment(rng: Rng, name: string): string {
  const len = name === "a" ? 20 : name === "h" ? 32 : rng.below(70);
  return rng.pick([() => hex(rng, len), () => hex(rng, rng.below(70)), () => "0x", () => "", () => "..", () => "%2e%2e", () => value(rng)])();
}

function path(rng: Rng): string {
  let p = rng.pick(PATHS).replace(/\{(\w)\}/g, (_, n: string) => segment(rng, n));
  if (rng.float() < 0.1) p = p.replace(/\//g, rng.pick(["//", "/./", "/../"]));
  if (rng.float() < 0.1) p += rng.pick(["/", "/extra", "?", "#frag", ";x"]);
  if (rng.float() < 0.6) {
    const n = rng.below(5);
    const parts: string[] = [];
    for (let i = 0; i < n; i++) parts.push(rng.float() < 0.1 ? rng.pick(["&", "=", "=&=", "a=b=c"]) : `${rng.pick(PARAMS)}=${value(rng)}`);
    p += "?" + parts.join("&");
  }
  return p;
}

function body(rng: Rng): Buffer | null {
  return rng.pick([
    () => null,
    () => Buffer.from(""),
    () => Buffer.from(rng.bytes(rng.below(2048))),
    () => Buffer.from(JSON.stringify({ keys: Array.from({ length: rng.below(300) }, () => hex(rng, rng.pick([54, 54, 53, 20]))) })),
    () => Buffer.from(JSON.stringify({ keys: [null, 1, {}, [], "0x"] })),
    () => Buffer.from('{"keys": [' + '"0x'.repeat(3)),
    () => Buffer.from("[".repeat(20_000) + "]".repeat(20_000)),
    () => Buffer.from(JSON.stringify(hex(rng, rng.below(400)))),
    () => Buffer.from(hex(rng, rng.below(400))),
    () => Buffer.from("a7" + Buffer.from(rng.bytes(50)).toString("hex")),
    () => Buffer.concat([Buffer.from([0xa7, 0x67]), Buffer.from("version"), Buffer.from(rng.bytes(rng.below(200)))]),
    () => Buffer.alloc(70_000 + rng.below(2_200_000), 0x30),
  ])();
}

function raw(rng: Rng): Buffer {
  return rng.pick([
    () => Buffer.from(rng.bytes(1 + rng.below(512))),
    () => Buffer.from(`GET ${"/x".repeat(9000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`),
    () => Buffer.from(`GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX: ${"y".repeat(20_000)}\r\n\r\n`),
    () => Buffer.from("GET /genesis HTTP/9.9\r\n\r\n"),
    () => Buffer.from("POST /tx HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nxx\r\n0\r\n\r\n"),
    () => Buffer.from("POST /tx HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\n12345"),
    () => Buffer.from("POST /proof/multi HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 99999999999999999999\r\n\r\n{}"),
    () => Buffer.from("GET /cbqs/finalized-view HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".repeat(1 + rng.below(20))),
    () => Buffer.from(`GET /cbqs/broker-state?stream=\u0000\u00ff HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`, "latin1"),
    () => Buffer.from("\r\n\r\n\r\n"),
    () => Buffer.from("GET"),
  ])();
}

/**
 * A state key for POST /proof/multi: every prefix byte (CIP-4 §4.2 has 0x01–0x1d; 0x00 and
 * 0x1e–0xff are unknown) at the right length of 54 bytes, or any prefix at a wrong length.
 */
function stateKey(rng: Rng): string {
  const prefix = rng.pick([() => 0x00, () => 0x1e + rng.below(0xff - 0x1e + 1), () => rng.below(256), () => 1 + rng.below(0x1d)])();
  const length = rng.float() < 0.7 ? 54 : rng.pick([0, 1, 20, 21, 53, 55, 64, 108, rng.below(120)]);
  const bytes = Buffer.from(rng.bytes(length));
  if (length > 0) bytes[0] = prefix;
  return "0x" + bytes.toString("hex");
}

/** A well-formed POST /proof/multi whose keys are of every prefix and length: the class that once answered 500. */
function multiKeys(rng: Rng): FuzzCase {
  const keys = Array.from({ length: 1 + rng.below(4) }, () => stateKey(rng));
  return { kind: "http", method: "POST", path: "/proof/multi", headers: { "content-type": "application/json" }, body: Buffer.from(JSON.stringify({ keys })), class: "multi-keys" };
}

export function fuzzCase(rng: Rng): FuzzCase {
  if (rng.float() < 0.12) return { kind: "raw", bytes: raw(rng) };
  if (rng.float() < 0.06) return multiKeys(rng);
  const b = body(rng);
  // Past the guard (src/node/guard.ts) to the routes: a devnet write needs this header.
  const headers: Record<string, string> = { "x-cbqs-client": "fuzz" };
  const type = rng.pick(TYPES);
  if (type !== "") headers["content-type"] = type;
  if (rng.float() < 0.1) headers["last-event-id"] = value(rng).slice(0, 200);
  return { kind: "http", method: rng.pick(METHODS), path: path(rng), headers, body: b };
}

/** What came back: an HTTP status, "closed" (the server dropped a garbage connection) or "timeout". */
export type Outcome = number | "closed" | "timeout";

function isSendablePath(p: string): boolean {
  return /^\/[\x21-\x7e]*$/.test(p);
}

export function sendCase(base: URL, c: FuzzCase, agent: Agent, timeoutMs = 10_000): Promise<Outcome> {
  if (c.kind === "http" && !isSendablePath(c.path)) {
    return sendCase(base, { kind: "raw", bytes: Buffer.from(`${c.method} ${c.path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`, "latin1") }, agent, timeoutMs);
  }
  if (c.kind === "raw") {
    return new Promise((resolve) => {
      const socket = connect(Number(base.port), base.hostname);
      let head = "";
      const timer = setTimeout(() => {
        socket.destroy();
        resolve("timeout");
      }, timeoutMs);
      socket.on("data", (d) => {
        if (head.length < 64) head += d.toString("latin1");
      });
      const done = () => {
        clearTimeout(timer);
        const m = /^HTTP\/1\.1 (\d{3})/.exec(head);
        resolve(m === null ? "closed" : Number(m[1]));
      };
      socket.on("close", done);
      socket.on("error", () => undefined);
      socket.end(c.bytes);
    });
  }
  return new Promise((resolve) => {
    const req = request({ host: base.hostname, port: base.port, method: c.method, path: c.path, headers: c.headers, agent, timeout: timeoutMs }, (res) => {
      // An accepted subscription (GET /subscribe) never ends: its status is the answer.
      if (String(res.headers["content-type"]).startsWith("text/event-stream") && c.method !== "HEAD") {
        resolve(res.statusCode ?? 0);
        req.destroy();
        return;
      }
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
      res.on("error", () => resolve(res.statusCode ?? "closed"));
    });
    req.on("timeout", () => {
      req.destroy();
      resolve("timeout");
    });
    req.on("error", () => resolve("closed"));
    if (c.body !== null) req.write(c.body);
    req.end();
  });
}
