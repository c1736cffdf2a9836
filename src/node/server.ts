// The node's HTTP face on node:http (docs/guides/run-a-devnet.md): routing, query and body bounds, the CIP-4 §10
// rate limits, and errors — 400 {"error": {"code", "message"}}, 404 unknown route, 405 wrong
// method, 413 oversized body, 429 + Retry-After, and an opaque 500 with an id whose details go to
// the structured log only (CIP-4 §6.4, §10). Before anything else a request passes the guard
// (src/node/guard.ts, docs/spec/security-model.md): Host, Origin, and 403 for what it refuses;
// its CORS headers come from there too. Handlers are synchronous: an answer is built from
// one block without yielding, so block production can never tear it. Two answers outlive their
// request's turn: GET /fixture, streamed over many turns of the event loop from blocks that never
// change once committed (src/node/streamed.ts), one at a time; and GET /subscribe, which stays
// open and is written to as blocks are produced (src/node/subscriptions.ts). The explorer page's
// files are served at `/` and `/explorer/` (src/node/explorer.ts).
import { resolveStreamKey } from "../scenario/refs.js";
import { randomUUID } from "node:crypto";
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { echo } from "../bounds.js";
import { fromHex, HexError, toHex } from "../bytes.js";
import { JsonError, parseJson } from "../json/parse.js";
import { MAX_ENVELOPE_BYTES } from "../chain/envelope.js";
import { U64_MAX } from "../engine/math.js";
import type { CbqsNode } from "./chain-node.js";
import { parseDecimal } from "./decimal.js";
import { MAX_MINE_BLOCKS, WriteCancelled, type Devnet, type MineRequest } from "./devnet.js";
import { badRequest, errorBody, RequestError } from "./errors.js";
import { fixtureAnswer } from "./fixture-answer.js";
import { finalizedViewJson, JsonText, readPointJson, StreamedAnswer, TextAnswer } from "./json.js";
import { EXPLORER_ROUTE, NodeMetrics, UNMATCHED_ROUTE, type LimitName } from "./metrics.js";
import { accountProof, actorProof, multiProof, ProofCache, receiptProof, storageProof, txProof, type ProofLimits } from "./proofs.js";
import { defaultClientRateLimit, PerClientLimiter, TokenBucket } from "./rate-limit.js";
import { BrokerStateCache, brokerState, finalizedView, parseHash } from "./reads.js";
import { feedPage, parseFeedQuery } from "./replication.js";
import { accountAnswer, devAccountsAnswer, pathSegment, providerAnswer, streamAnswer, txAnswer } from "./lookups.js";
import { sendStreamed } from "./streamed.js";
import { DEFAULT_HEARTBEAT_MS, DEFAULT_MAX_SUBSCRIBERS, DEFAULT_SUBSCRIBER_BUFFER, defaultClientSubscribers, EVENT_STREAM_HEADERS, SubscribeRequest, Subscriptions } from "./subscriptions.js";
import { EXPLORER_HEADERS, explorerAsset, isExplorerPath } from "./explorer.js";
import { blockAnswer, eventsAnswer, historyAnswer, searchAnswer } from "./explorer-reads.js";
import { RequestGuard } from "./guard.js";

export type Logger = (entry: Record<string, unknown>) => void;

/** One JSON line per entry on stderr (the server's structured log). */
export const stderrLogger: Logger = (entry) => process.stderr.write(JSON.stringify({ time: new Date().toISOString(), ...entry }) + "\n");

export interface ServerOptions {
  host: string;
  port: number;
  /** Global limit on every endpoint, requests per second (CIP-4 §10: 100); 0 = off. */
  rateLimit: number;
  /** Per client address on every endpoint, requests per second; 0 = off. Default: defaultClientRateLimit(rateLimit). */
  clientRateLimit?: number;
  /** Per client address on the proof endpoints, requests per second; 0 = off. */
  proofRateLimit: number;
  proofLimits: ProofLimits;
  log: Logger;
  /** Milliseconds clock for the limiters (tests pass a fake one). */
  now?: () => number;
  /** GET /subscribe: open subscriptions at most (0 = off). Default DEFAULT_MAX_SUBSCRIBERS. */
  maxSubscribers?: number;
  /** GET /subscribe: open subscriptions per client address at most. Default defaultClientSubscribers(maxSubscribers). */
  maxClientSubscribers?: number;
  /** Unsent bytes a subscriber may hold before it is dropped. Default DEFAULT_SUBSCRIBER_BUFFER. */
  subscriberBuffer?: number;
  /** Milliseconds between two heartbeat comments. Default DEFAULT_HEARTBEAT_MS. */
  heartbeatMs?: number;
  /** Host names answered to besides IP addresses, localhost and `host` (--http-vhosts); "*" = any. */
  vhosts?: readonly string[];
  /** Origins whose pages may call the node, with CORS (--http-corsdomain); "*" = any. */
  corsOrigins?: readonly string[];
  /** GET /devnet/accounts to clients off loopback too (--expose-dev-seeds). */
  exposeDevSeeds?: boolean;
}

export const DEFAULT_RATE_LIMIT = 100;
export const DEFAULT_PROOF_RATE_LIMIT = 20;
/** Request body bounds: a /proof/multi body of 256 keys fits in 64 KiB; a hex envelope in twice its bound. */
const MAX_JSON_BODY = 64 * 1024;
const MAX_TX_BODY = 2 * MAX_ENVELOPE_BYTES + 64;

interface Context {
  node: CbqsNode;
  devnet: Devnet;
  params: ReadonlyMap<string, string>;
  path: Record<string, string>;
  body: Buffer;
  contentType: string;
  limits: ProofLimits;
  brokerCache: BrokerStateCache;
  proofCache: ProofCache;
  metrics: NodeMetrics;
  subscriptionsOn: boolean;
  /** The client's address (per-client bounds). */
  client: string;
  /** Aborted when the client goes away before its answer is sent (a devnet write for it is cancelled). */
  gone: () => AbortSignal;
}

interface Route {
  method: "GET" | "POST";
  /** Segments; ":name" captures one segment. */
  path: string;
  /** RFC 6570 template for service discovery. */
  template: string;
  name: string;
  /** Further discovery names of the same endpoint (a standard's name for it). */
  aliases?: readonly string[];
  query: readonly string[];
  maxBody: number;
  /** Behind the per-client proof limit: always, or only when the query asks for a proof (`?proof=true`). */
  proof?: boolean | "when-asked";
  /** Synchronous, from one block; a devnet write may return a promise (src/node/devnet.ts). */
  handle: (c: Context) => unknown;
  /** Served (and in discovery) only when subscriptions are on (--max-subscribers above 0). */
  subscriptions?: true;
  /** Changes the chain: only with the X-Cbqs-Client header (src/node/guard.ts). */
  write?: true;
  /** Serves the dev seeds: to loopback clients only, unless --expose-dev-seeds. */
  seeds?: true;
}

const route = (r: Route): Route => r;

const ROUTES: readonly Route[] = [
  route({ method: "GET", path: "/.well-known/cbqs", template: "/.well-known/cbqs", name: "cbqs.discovery", query: [], maxBody: 0, handle: (c) => discovery(c.node, c.subscriptionsOn) }),
  route({ method: "GET", path: "/genesis", template: "/genesis", name: "cbqs.genesis", query: [], maxBody: 0, handle: (c) => genesisJson(c.node) }),
  route({
    method: "GET",
    path: "/cbqs/finalized-view",
    template: "/cbqs/finalized-view{?block}",
    name: "cbqs.finalized-view",
    query: ["block"],
    maxBody: 0,
    handle: (c) => finalizedView(c.node.db, c.node.chainInstanceId, c.params.get("block")),
  }),
  route({
    method: "GET",
    path: "/cbqs/broker-state",
    template: "/cbqs/broker-state{?stream,block}",
    name: "cbqs.broker-state",
    query: ["stream", "block"],
    maxBody: 0,
    handle: (c) => brokerState(c.node.db, c.node.chainInstanceId, c.node.config.governance, streamParam(c.node, c.params.get("stream")), c.params.get("block"), c.brokerCache),
  }),
  route({
    method: "GET",
    path: "/replication",
    template: "/replication{?since,until,limit,order}",
    name: "cbqs.replication",
    // CIP-16 §3: the feed MUST be advertised under this name. Its template has no `owner`: a
    // block has no single owner, so there is nothing to filter by (docs/decisions.md).
    aliases: ["net.concrnt.core.replication"],
    query: ["since", "until", "limit", "order"],
    maxBody: 0,
    handle: (c) => feedPage(c.node.db, parseFeedQuery(c.params)),
  }),
  route({
    method: "GET",
    path: "/subscribe",
    template: "/subscribe{?stream}",
    name: "cbqs.subscribe",
    query: ["stream"],
    maxBody: 0,
    subscriptions: true,
    handle: (c) => {
      const stream = streamParam(c.node, c.params.get("stream"));
      return new SubscribeRequest(stream === undefined ? undefined : parseHash(stream, "stream"));
    },
  }),
  route({
    method: "GET",
    path: "/block/:block",
    template: "/block/{height_or_hash}",
    name: "cbqs.block",
    query: [],
    maxBody: 0,
    handle: (c) => blockAnswer(c.node, c.path["block"]!),
  }),
  route({
    method: "GET",
    path: "/search",
    template: "/search{?q}",
    name: "cbqs.search",
    query: ["q"],
    maxBody: 0,
    handle: (c) => searchAnswer(c.node, c.params.get("q"), (text) => streamParam(c.node, text)),
  }),
  route({
    method: "GET",
    path: "/fixture",
    template: "/fixture{?since,until,post_state}",
    name: "cbqs.fixture",
    query: ["since", "until", "post_state"],
    maxBody: 0,
    handle: (c) => fixtureAnswer(c.node.db, c.params),
  }),
  route({
    method: "GET",
    path: "/proof/account/:address",
    template: "/proof/account/{address}",
    name: "cip4.proof.account",
    query: [],
    maxBody: 0,
    proof: true,
    handle: (c) => accountProof(c.node.db, c.path["address"]!, c.limits, c.proofCache),
  }),
  route({
    method: "GET",
    path: "/proof/actor/:address",
    template: "/proof/actor/{address}",
    name: "cip4.proof.actor",
    query: [],
    maxBody: 0,
    proof: true,
    handle: (c) => actorProof(c.node.db, c.path["address"]!, c.limits, c.proofCache),
  }),
  route({
    method: "GET",
    path: "/proof/storage/:address/:key",
    template: "/proof/storage/{address}/{key}",
    name: "cip4.proof.storage",
    query: [],
    maxBody: 0,
    proof: true,
    handle: (c) => storageProof(c.node.db, c.path["address"]!, c.path["key"]!, c.limits, c.proofCache),
  }),
  route({
    method: "GET",
    path: "/proof/tx/:hash",
    template: "/proof/tx/{tx_hash}",
    name: "cip4.proof.tx",
    query: [],
    maxBody: 0,
    proof: true,
    handle: (c) => txProof(c.node.db, c.path["hash"]!),
  }),
  route({
    method: "GET",
    path: "/proof/receipt/:hash",
    template: "/proof/receipt/{tx_hash}",
    name: "cip4.proof.receipt",
    query: [],
    maxBody: 0,
    proof: true,
    handle: (c) => receiptProof(c.node.db, c.path["hash"]!),
  }),
  route({
    method: "POST",
    path: "/proof/multi",
    template: "/proof/multi",
    name: "cip4.proof.multi",
    query: [],
    maxBody: MAX_JSON_BODY,
    proof: true,
    handle: (c) => multiProof(c.node.db, jsonBody(c.body)),
  }),
  route({
    method: "GET",
    path: "/account/:address",
    template: "/account/{address}{?height,block,proof}",
    name: "cbqs.account",
    query: ["height", "block", "proof"],
    maxBody: 0,
    proof: "when-asked",
    handle: (c) => accountAnswer(c.node, c.path["address"]!, c.params, c.limits),
  }),
  route({
    method: "GET",
    path: "/cbqs/stream/:id",
    template: "/cbqs/stream/{stream_id}{?height,block}",
    name: "cbqs.stream",
    query: ["height", "block"],
    maxBody: 0,
    handle: (c) => {
      const text = pathSegment(c.path["id"]!, "stream");
      return streamAnswer(c.node, parseHash(streamParam(c.node, text)!, "stream"), text, c.params);
    },
  }),
  route({
    method: "GET",
    path: "/cbqs/stream/:id/history",
    template: "/cbqs/stream/{stream_id}/history{?from,to,points}",
    name: "cbqs.stream.history",
    query: ["from", "to", "points"],
    maxBody: 0,
    handle: (c) => historyAnswer(c.node, streamPathId(c.node, c.path["id"]!), c.params),
  }),
  route({
    method: "GET",
    path: "/cbqs/stream/:id/events",
    template: "/cbqs/stream/{stream_id}/events{?until,limit}",
    name: "cbqs.stream.events",
    query: ["until", "limit"],
    maxBody: 0,
    handle: (c) => eventsAnswer(c.node, streamPathId(c.node, c.path["id"]!), c.params),
  }),
  route({
    method: "GET",
    path: "/cbqs/provider/:address",
    template: "/cbqs/provider/{address}{?height,block}",
    name: "cbqs.provider",
    query: ["height", "block"],
    maxBody: 0,
    handle: (c) => providerAnswer(c.node, c.path["address"]!, c.params),
  }),
  route({
    method: "GET",
    path: "/tx/:hash",
    template: "/tx/{tx_hash}",
    name: "cbqs.tx",
    query: [],
    maxBody: 0,
    handle: (c) => txAnswer(c.node, c.path["hash"]!),
  }),
  route({ method: "GET", path: "/metrics", template: "/metrics", name: "cbqs.metrics", query: [], maxBody: 0, handle: (c) => c.metrics.answer() }),
  route({
    method: "POST",
    path: "/tx",
    template: "/tx",
    name: "cbqs.devnet.tx",
    query: [],
    maxBody: MAX_TX_BODY,
    write: true,
    handle: (c) => c.devnet.submit(txBody(c.body, c.contentType)),
  }),
  route({
    method: "POST",
    path: "/mine",
    template: "/mine{?height,blocks,timestamp}",
    name: "cbqs.devnet.mine",
    query: ["height", "blocks", "timestamp"],
    maxBody: 0,
    write: true,
    handle: (c) => c.devnet.mine(mineRequest(c.params), { client: c.client, gone: c.gone() }),
  }),
  route({
    method: "GET",
    path: "/devnet/accounts",
    template: "/devnet/accounts",
    name: "cbqs.devnet.accounts",
    query: [],
    maxBody: 0,
    seeds: true,
    handle: (c) => devAccountsAnswer(c.node),
  }),
  route({
    method: "POST",
    path: "/devnet/snapshot",
    template: "/devnet/snapshot",
    name: "cbqs.devnet.snapshot",
    query: [],
    maxBody: 0,
    write: true,
    handle: (c) => c.devnet.snapshot(),
  }),
  route({
    method: "POST",
    path: "/devnet/revert",
    template: "/devnet/revert{?id}",
    name: "cbqs.devnet.revert",
    query: ["id"],
    maxBody: 0,
    write: true,
    handle: (c) => c.devnet.revert(snapshotId(c.params.get("id")), { client: c.client, gone: c.gone() }),
  }),
];

function discovery(node: CbqsNode, subscriptionsOn: boolean): Record<string, unknown> {
  const endpoints: Record<string, string> = {};
  for (const r of ROUTES) if (subscriptionsOn || r.subscriptions !== true) for (const name of [r.name, ...(r.aliases ?? [])]) endpoints[name] = r.template;
  return { ...readPointJson(node.head()), history_start: historyStartJson(node), endpoints };
}

function genesisJson(node: CbqsNode): Record<string, unknown> {
  const g = node.genesis;
  return {
    ...readPointJson(g.block),
    chain_id: node.config.chain_id.toString(),
    chain_instance_id: toHex(g.chain_instance_id),
    timestamp: g.block.timestamp.toString(),
    source: toHex(g.source),
    view: finalizedViewJson(g.chain_instance_id, g.block),
    history_start: historyStartJson(node),
  };
}

/** Where the node's history starts: the first block whose state it has held (docs/guides/run-a-devnet.md "history_start"). */
function historyStartJson(node: CbqsNode): Record<"height" | "block_hash", string> {
  const b = node.historyStart();
  return { height: b.height.toString(), block_hash: toHex(b.block_hash) };
}

/**
 * `?stream=` as an id, or in the stream-key forms the CLI takes ("owner:0x<addr>/nonce:<n>",
 * "key_stream_of:<key>"), derived for this chain (CIP-39 §4.1).
 */
function streamParam(node: CbqsNode, text: string | undefined): string | undefined {
  if (text === undefined || text.startsWith("0x")) return text;
  try {
    return toHex(resolveStreamKey(text, "stream", { chainId: node.config.chain_id, chainInstanceId: node.chainInstanceId }));
  } catch (err) {
    if (err instanceof JsonError) throw badRequest("invalid_stream", `stream must be a 0x 32-byte id, "owner:0x<addr>/nonce:<n>" or "key_stream_of:<stream>" (got ${JSON.stringify(text.slice(0, 120))})`);
    throw err;
  }
}

/** A stream id in a path (percent-decoded; an id or a stream-key form). */
function streamPathId(node: CbqsNode, segment: string): Uint8Array {
  return parseHash(streamParam(node, pathSegment(segment, "stream"))!, "stream");
}

/** POST /mine's query: `height` (first block), `timestamp` (first block's), `blocks` (a batch, 1 to MAX_MINE_BLOCKS). */
function mineRequest(params: ReadonlyMap<string, string>): MineRequest {
  const request: MineRequest = {};
  const height = params.get("height");
  if (height !== undefined) request.height = parseDecimal(height, { name: "height", what: "a block height", max: U64_MAX });
  const timestamp = params.get("timestamp");
  if (timestamp !== undefined) request.timestamp = parseDecimal(timestamp, { name: "timestamp", what: "seconds since the Unix epoch", max: U64_MAX });
  const blocks = params.get("blocks");
  if (blocks !== undefined) {
    const n = parseDecimal(blocks, { name: "blocks", what: "a number of blocks", max: BigInt(MAX_MINE_BLOCKS) });
    if (n === 0n) throw badRequest("invalid_blocks", `blocks must be from 1 to ${MAX_MINE_BLOCKS}`);
    request.blocks = Number(n);
  }
  return request;
}

function snapshotId(text: string | undefined): bigint {
  if (text === undefined) throw badRequest("missing_id", "POST /devnet/revert needs ?id=<the id POST /devnet/snapshot answered>");
  return parseDecimal(text, { name: "id", what: "a snapshot id", max: U64_MAX });
}

function jsonBody(body: Buffer): unknown {
  try {
    // The one strict reader (docs/reference/formats/fixture.md §0): repeated keys, floats and a BOM are refused.
    return parseJson(body);
  } catch (err) {
    if (!(err instanceof JsonError)) throw err;
    throw badRequest("invalid_json", `the body is not usable JSON: ${err.message}`);
  }
}

const TX_BODY_FORMS =
  "the envelope as 0x-prefixed hex (plain text, a JSON string, or cbqs tx --json's {\"envelope\": …}), or binary CBOR with Content-Type application/cbor or application/octet-stream";

/** POST /tx: the raw CBOR envelope, or its 0x hex (plain, a JSON string, or `cbqs tx --json`'s object). */
function txBody(body: Buffer, contentType: string): Uint8Array {
  // Its size is judged with the pool's room (413 tx_too_large, src/node/chain-node.ts checkRoom).
  if (/^application\/(cbor|octet-stream)\b/i.test(contentType)) return new Uint8Array(body);
  let text = body.toString("utf8").trim();
  if (text.startsWith('"') || text.startsWith("{")) {
    const parsed = jsonBody(body);
    const envelope = typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>)["envelope"] : parsed;
    if (typeof envelope !== "string") throw badRequest("invalid_transaction", `the body must be ${TX_BODY_FORMS}`);
    text = envelope;
  }
  try {
    return fromHex(text, undefined, "transaction");
  } catch (err) {
    if (err instanceof HexError) throw badRequest("invalid_transaction", `the body must be ${TX_BODY_FORMS}`);
    throw err;
  }
}

/** Each route's path split into segments once, not on every request. */
const PATTERNS = new Map(ROUTES.map((r) => [r, r.path.split("/")]));

function matchRoute(pathname: string, subscriptionsOn: boolean): { routes: Route[]; captures: Record<string, string> } {
  const segments = pathname.split("/");
  const routes: Route[] = [];
  let captures: Record<string, string> = {};
  for (const r of ROUTES) {
    if (r.subscriptions === true && !subscriptionsOn) continue;
    const pattern = PATTERNS.get(r)!;
    if (pattern.length !== segments.length) continue;
    const got: Record<string, string> = {};
    if (pattern.every((p, i) => (p.startsWith(":") ? segments[i] !== "" && ((got[p.slice(1)] = segments[i]!), true) : p === segments[i]))) {
      routes.push(r);
      captures = got;
    }
  }
  return { routes, captures };
}

/** Strict query: known names only, each at most once, well-formed percent-encoding. */
function parseQuery(query: string, allowed: readonly string[]): Map<string, string> {
  const params = new Map<string, string>();
  if (query === "") return params;
  for (const part of query.split("&")) {
    if (part === "") continue;
    const eq = part.indexOf("=");
    let name: string;
    let value: string;
    try {
      name = decodeURIComponent(eq < 0 ? part : part.slice(0, eq));
      value = eq < 0 ? "" : decodeURIComponent(part.slice(eq + 1).replace(/\+/g, " "));
    } catch {
      throw badRequest("invalid_query", "the query string has a malformed percent-encoding");
    }
    if (!allowed.includes(name)) {
      throw badRequest("unknown_parameter", `unknown query parameter ${JSON.stringify(name.slice(0, 64))} (this endpoint takes: ${allowed.join(", ") || "none"})`);
    }
    if (params.has(name)) throw badRequest("duplicate_parameter", `query parameter ${name} is given twice`);
    params.set(name, value);
  }
  return params;
}

class ClientGone extends Error {
  override name = "ClientGone";
}

const NO_BODY = Promise.resolve(Buffer.alloc(0));

/**
 * A signal aborted when the request's connection closes before its answer was sent whole: the
 * client has gone. Watched on the socket (a pipelined request's answer has none of its own yet),
 * until the answer is finished (a kept-alive socket outlives it).
 */
function closedEarly(req: IncomingMessage, res: ServerResponse): AbortSignal {
  const controller = new AbortController();
  const socket = req.socket;
  if (socket.destroyed) controller.abort();
  else {
    const gone = () => controller.abort();
    socket.once("close", gone);
    res.once("finish", () => socket.off("close", gone));
  }
  return controller.signal;
}

function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  // A request that declares no body (most GETs) has none to wait for (RFC 9112 §6.3).
  const { "content-length": length, "transfer-encoding": chunked } = req.headers;
  if (chunked === undefined && (length === undefined || length === "0")) return NO_BODY;
  const tooLarge = () => new RequestError(413, "body_too_large", max === 0 ? "this endpoint takes no request body" : `the request body exceeds ${max} bytes`);
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > max) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    req.on("data", (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > max) {
        done = true;
        reject(tooLarge());
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (!done) resolve(Buffer.concat(chunks, size));
    });
    // The client went away mid-body: nobody is left to answer.
    req.on("error", () => {
      if (!done) reject(new ClientGone());
      done = true;
    });
  });
}

/** The methods a path takes, as an Allow header: GET implies HEAD; OPTIONS is every path's. */
function allowed(routes: readonly Route[]): string {
  const methods = routes.flatMap((x) => (x.method === "GET" ? ["GET", "HEAD"] : [x.method]));
  return [...methods, "OPTIONS"].join(", ");
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string>): void {
  if (res.headersSent || res.destroyed) return;
  const text = body instanceof JsonText || body instanceof TextAnswer ? body.text : JSON.stringify(body);
  const type = body instanceof TextAnswer ? body.contentType : "application/json; charset=utf-8";
  res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** What is known of a request as it is handled, for its error answer and its count. */
interface Seen {
  route: string;
  cors: Record<string, string>;
}

export interface NodeServer {
  readonly url: string;
  readonly server: Server;
  readonly subscriptions: Subscriptions;
  /** GET /metrics' registry and counters. */
  readonly metrics: NodeMetrics;
  close(): Promise<void>;
}

export function startServer(devnet: Devnet, options: ServerOptions): Promise<NodeServer> {
  const node = devnet.node;
  const now = options.now ?? (() => performance.now());
  const global = new TokenBucket(options.rateLimit, now());
  const clientRate = options.clientRateLimit ?? defaultClientRateLimit(options.rateLimit);
  const clients = new PerClientLimiter(clientRate);
  const perClient = new PerClientLimiter(options.proofRateLimit);
  const brokerCache = new BrokerStateCache();
  const proofCache = new ProofCache();
  const maxSubscribers = options.maxSubscribers ?? DEFAULT_MAX_SUBSCRIBERS;
  const subscriptions = new Subscriptions(
    node,
    {
      maxSubscribers,
      maxClientSubscribers: options.maxClientSubscribers ?? defaultClientSubscribers(maxSubscribers),
      maxBufferedBytes: options.subscriberBuffer ?? DEFAULT_SUBSCRIBER_BUFFER,
      heartbeatMs: options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
    },
    options.log,
  );
  const metrics = new NodeMetrics(() => node.db);
  const guard = new RequestGuard(options);
  metrics.subscribers = () => subscriptions.size;
  /** The streamed answer being sent (at most one: it re-executes the chain), destroyed by close(). */
  let streaming: ServerResponse | undefined;

  /** The endpoint a refused request is counted under (matched again: a refusal is the rare path). */
  const routeOf = (pathname: string): string => (isExplorerPath(pathname) ? EXPLORER_ROUTE : (matchRoute(pathname, subscriptions.enabled).routes[0]?.name ?? UNMATCHED_ROUTE));

  /** A 429 from `limit`, counted under the endpoint the path names. */
  const limited = (pathname: string, seen: { route: string }, limit: LimitName, message: string, wait: number): RequestError => {
    seen.route = routeOf(pathname);
    metrics.countLimited(seen.route, limit);
    return new RequestError(429, "rate_limited", message, {}, { "retry-after": String(wait) });
  };

  /** `seen.route`: the endpoint name the request is counted under, once its path is matched; `seen.cors`: its answer's CORS headers, once admitted. */
  const handle = async (req: IncomingMessage, res: ServerResponse, seen: Seen): Promise<void> => {
    const url = req.url ?? "/";
    const q = url.indexOf("?");
    const pathname = q < 0 ? url : url.slice(0, q);
    // Host and Origin before anything else (src/node/guard.ts): a refused page spends no one's rate budget.
    try {
      seen.cors = guard.admit(req);
    } catch (err) {
      seen.route = routeOf(pathname);
      throw err;
    }
    const cors = seen.cors;
    const client = req.socket.remoteAddress ?? "";
    // The client's own bucket first: a request it refuses takes nothing from the global budget,
    // so a flooding client exhausts its share only, never the other clients' (docs/guides/run-a-devnet.md).
    const own = clients.take(client, now());
    if (own > 0) throw limited(pathname, seen, "client", `one client may make at most ${clientRate} requests per second`, own);
    const wait = global.take(now());
    if (wait > 0) throw limited(pathname, seen, "global", `the node answers at most ${options.rateLimit} requests per second`, wait);
    if (isExplorerPath(pathname) && (req.method === "GET" || req.method === "HEAD")) {
      seen.route = EXPLORER_ROUTE;
      const file = explorerAsset(pathname);
      const headers = { "content-type": file.type, etag: file.etag, ...EXPLORER_HEADERS, ...cors };
      if (req.headers["if-none-match"] === file.etag) {
        res.writeHead(304, headers);
        res.end();
        return;
      }
      res.writeHead(200, { ...headers, "content-length": file.body.length });
      res.end(file.body);
      return;
    }
    const { routes, captures } = matchRoute(pathname, subscriptions.enabled);
    if (routes.length === 0) throw new RequestError(404, "not_found", `no endpoint at ${JSON.stringify(echo(pathname))} (see /.well-known/cbqs)`);
    seen.route = routes[0]!.name;
    if (req.method === "OPTIONS") {
      // A browser's CORS preflight: granted to the --http-corsdomain origins only (admitted above).
      res.writeHead(204, guard.preflight(cors, allowed(routes)));
      res.end();
      return;
    }
    // HEAD is GET without the body (RFC 9110 §9.3.2); node:http leaves the body out by itself.
    const method = req.method === "HEAD" ? "GET" : req.method;
    const r = routes.find((x) => x.method === method);
    if (r === undefined) {
      const allow = allowed(routes);
      throw new RequestError(405, "method_not_allowed", `${echo(pathname)} takes ${allow}`, {}, { allow });
    }
    seen.route = r.name;
    if (r.write === true) guard.checkWrite(req, pathname);
    if (r.seeds === true) guard.checkSeeds(req);
    const proofLimit = () => {
      const clientWait = perClient.take(client, now());
      if (clientWait > 0) throw limited(pathname, seen, "proof", `proof endpoints answer at most ${options.proofRateLimit} requests per second per client`, clientWait);
    };
    if (r.proof === true) proofLimit();
    const params = parseQuery(q < 0 ? "" : url.slice(q + 1), r.query);
    const proof = r.proof === true || (r.proof === "when-asked" && params.get("proof") === "true");
    if (proof && r.proof !== true) proofLimit();
    const body = await readBody(req, r.maxBody);
    // From here to send: synchronous, one block — except a devnet write, which may wait its turn
    // and produce many blocks (src/node/devnet.ts); its answer is built when it is done.
    const started = proof ? performance.now() : 0;
    const gone = () => closedEarly(req, res);
    let answer = r.handle({ node, devnet, params, path: captures, body, contentType: String(req.headers["content-type"] ?? ""), limits: options.proofLimits, brokerCache, proofCache, metrics, subscriptionsOn: subscriptions.enabled, client, gone });
    if (proof) metrics.observeProof(r.name, performance.now() - started);
    if (answer instanceof Promise) answer = await answer;
    if (answer instanceof SubscribeRequest) {
      const lastEventId = req.headers["last-event-id"];
      const resume = subscriptions.check(client, typeof lastEventId === "string" ? lastEventId : undefined);
      if (req.method === "HEAD") {
        res.writeHead(200, { ...EVENT_STREAM_HEADERS, ...cors });
        res.end();
        return;
      }
      subscriptions.open(req, res, answer, resume, cors);
      return;
    }
    if (!(answer instanceof StreamedAnswer)) {
      send(res, 200, answer, cors);
      return;
    }
    // HEAD: the request was checked, the status and headers are the GET's; nothing is produced.
    if (req.method === "HEAD") {
      res.writeHead(200, { "content-type": "application/json; charset=utf-8", ...cors });
      res.end();
      return;
    }
    if (streaming !== undefined) {
      throw new RequestError(503, "fixture_in_progress", "the node writes one fixture at a time and is writing one now; try again when it is done", {}, { "retry-after": "5" });
    }
    streaming = res;
    try {
      await sendStreamed(res, answer, cors, options.log);
    } finally {
      streaming = undefined;
    }
  };

  /** `cors`: the request's CORS headers, so an allowed page may read why it was refused (a refused page gets none). */
  const answerError = (req: IncomingMessage, res: ServerResponse, err: unknown, cors: Record<string, string>): void => {
    if (err instanceof RequestError) {
      // A body still arriving (refused, or never read) is not drained: answer, then drop the connection.
      const unread = !req.complete;
      send(res, err.status, errorBody(err.code, err.message, err.extra), { ...cors, ...err.headers, ...(unread ? { connection: "close" } : {}) });
      if (unread) res.on("finish", () => req.socket.destroySoon());
      return;
    }
    if (err instanceof ClientGone || err instanceof WriteCancelled) {
      req.socket.destroy();
      return;
    }
    const id = randomUUID();
    options.log({ level: "error", msg: "internal error", id, method: req.method, url: (req.url ?? "").slice(0, 512), error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    send(res, 500, errorBody("internal_error", `internal error (id ${id}); details are in the node's log`, { id }), cors);
  };

  const server = createServer({ requestTimeout: 30_000, headersTimeout: 10_000 }, (req, res) => {
    const seen: Seen = { route: UNMATCHED_ROUTE, cors: {} };
    // Counted once answered (or given up on: status "none"), under the endpoint's name.
    const counted = () => metrics.countRequest(seen.route, res.headersSent ? res.statusCode : 0);
    handle(req, res, seen).then(counted, (err: unknown) => {
      answerError(req, res, err, seen.cors);
      counted();
    });
  });
  server.keepAliveTimeout = 5_000;
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Socket) => {
    if (!socket.writable || err.code === "ECONNRESET") {
      socket.destroy();
      return;
    }
    const status = err.code === "HPE_HEADER_OVERFLOW" ? 431 : err.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : 400;
    const text = JSON.stringify(errorBody("bad_request", `malformed HTTP request (${err.code ?? "parse error"})`));
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`,
    );
  });

  return new Promise((resolve, reject) => {
    // A server that cannot listen (the port taken, say) leaves nothing behind on the node.
    const failed = (err: Error) => {
      subscriptions.close();
      reject(err);
    };
    server.once("error", failed);
    server.listen(options.port, options.host, () => {
      server.off("error", failed);
      // Listening, the server still emits an error when accepting a connection fails (EMFILE, say):
      // the node logs it and serves on, rather than dying of an unhandled 'error' event.
      server.on("error", (err: Error) => options.log({ level: "error", msg: "server error", error: err.message }));
      node.onBlockTimed = metrics.observeBlock;
      const address = server.address() as AddressInfo;
      const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
      resolve({
        url: `http://${host}:${address.port}`,
        server,
        subscriptions,
        metrics,
        close: () =>
          new Promise<void>((done) => {
            if (node.onBlockTimed === metrics.observeBlock) node.onBlockTimed = undefined;
            // A streamed answer may run for a long time: it is cut now, before the store closes under it.
            streaming?.destroy();
            // Subscriptions never end by themselves: each one's body is ended now.
            subscriptions.close();
            server.close(() => done());
            server.closeIdleConnections();
            // In-flight answers are synchronous and short; whatever lingers is cut after a grace period.
            setTimeout(() => server.closeAllConnections(), 2_000).unref();
          }),
      });
    });
  });
}
