// The node's endpoints, each declared once (docs/node.md "Endpoints"): its method, path and query
// parameters, what it answers and how that answer is sent, its limits, and its handler. The
// discovery template (RFC 6570) is derived from the path and the query; routeTable() is the
// table as plain data (method, template, parameters with their types, answer kind, summary), from
// which the HTTP reference can be generated. Matching a request to its route, the strict query
// and the Allow list live here too; src/node/server.ts runs the request through them.
import { resolveStreamKey } from "../scenario/refs.js";
import { fromHex, HexError, toHex } from "../bytes.js";
import { JsonError, parseJson } from "../json/parse.js";
import { MAX_ENVELOPE_BYTES } from "../chain/envelope.js";
import { U64_MAX } from "../engine/math.js";
import type { CbqsNode } from "../chain-node/chain-node.js";
import { parseDecimal } from "./decimal.js";
import { MAX_MINE_BLOCKS, type Devnet, type MineRequest } from "../chain-node/devnet.js";
import { minedAnswer, revertedJson, snapshotJson, submittedJson } from "./devnet-answers.js";
import { badRequest } from "./errors.js";
import { fixtureAnswer } from "./fixture-answer.js";
import { finalizedViewJson, readPointJson } from "./json.js";
import type { NodeMetrics } from "./metrics.js";
import { accountProof, actorProof, multiProof, receiptProof, storageProof, txProof, type ProofCache, type ProofLimits } from "./proofs.js";
import { brokerState, finalizedView, parseHash, type BrokerStateCache } from "./reads.js";
import { feedPage, parseFeedQuery } from "./replication.js";
import { accountAnswer, devAccountsAnswer, devNamesAnswer, pathSegment, providerAnswer, streamAnswer, txAnswer } from "./lookups.js";
import { SubscribeRequest } from "./subscriptions.js";
import { blockAnswer, eventsAnswer, historyAnswer, latestAnswer, searchAnswer } from "./explorer-reads.js";

/** Request body bounds: a /proof/multi body of 256 keys fits in 64 KiB; a hex envelope in twice its bound. */
const MAX_JSON_BODY = 64 * 1024;
const MAX_TX_BODY = 2 * MAX_ENVELOPE_BYTES + 64;

/** What a handler is given: the node, the request's parsed parts, and the server's caches and limits. */
export interface Context {
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
  /** The client's key (src/node/client-key.ts): what per-client bounds count by. */
  client: string;
  /** Aborted when the client goes away before its answer is sent (a devnet write for it is cancelled). */
  gone: () => AbortSignal;
}

/** How an answer is sent: JSON built whole from one block; text (the metrics); streamed over many turns (GET /fixture); an event stream that stays open (GET /subscribe). */
export type AnswerKind = "json" | "text" | "streamed" | "events";

/** What a parameter holds (docs/node.md "Endpoints" says each in full). */
export const PARAM_TYPES = {
  address: "0x 20-byte address",
  key: "0x hex, at most 1,024 bytes",
  tx_hash: "0x 32-byte hash",
  stream_id: "0x 32-byte stream id, or a stream-key form",
  height_or_hash: "decimal height or 0x 32-byte block hash",
  block: "decimal height or 0x 32-byte block hash",
  stream: "0x 32-byte stream id, or a stream-key form",
  height: "decimal u64",
  since: "decimal u64",
  until: "decimal u64",
  limit: "decimal count",
  order: "asc | desc",
  q: "text",
  post_state: "every | final | none",
  proof: "true | false",
  from: "decimal u64",
  to: "decimal u64",
  points: "decimal count",
  blocks: "decimal count, 1 to 100,000",
  timestamp: "decimal u64 seconds",
  id: "decimal snapshot id",
} as const;

export type ParamName = keyof typeof PARAM_TYPES;

interface Route {
  method: "GET" | "POST";
  /** Segments; "{name}" captures one segment. With the query it is the RFC 6570 template (templateOf). */
  path: string;
  name: string;
  /** One line: what the endpoint answers (Markdown: docs/reference/http.md's endpoint table is generated from it). */
  summary: string;
  answer: AnswerKind;
  /** Further discovery names of the same endpoint (a standard's name for it). */
  aliases?: readonly string[];
  query: readonly ParamName[];
  maxBody: number;
  /** Behind the per-client proof limit: always, or only when the query asks for a proof (`?proof=true`). */
  proof?: boolean | "when-asked";
  /** Synchronous, from one block; a devnet write may return a promise (src/chain-node/devnet.ts). */
  handle: (c: Context) => unknown;
  /** Served (and in discovery) only when subscriptions are on (--max-subscribers above 0). */
  subscriptions?: true;
  /** Changes the chain: only with the X-Cbqs-Client header (src/node/guard.ts). */
  write?: true;
  /** Serves the dev seeds: to loopback clients only, unless --expose-dev-seeds. */
  seeds?: true;
}

export type { Route };

const route = (r: Route): Route => r;

export const ROUTES: readonly Route[] = [
  route({ method: "GET", path: "/.well-known/cbqs", name: "cbqs.discovery",
    summary: "service discovery: every endpoint name with its RFC 6570 template (the feed also as `net.concrnt.core.replication`, CIP-16 §3), and `history_start` (guide)",
    answer: "json", query: [], maxBody: 0, handle: (c) => discovery(c.node, c.subscriptionsOn) }),
  route({ method: "GET", path: "/genesis", name: "cbqs.genesis",
    summary: "the genesis block, `chain_id`, `chain_instance_id`, `timestamp`, the exact genesis `source` bytes, and `history_start` (guide)",
    answer: "json", query: [], maxBody: 0, handle: (c) => genesisJson(c.node) }),
  route({
    method: "GET",
    path: "/cbqs/finalized-view",
    name: "cbqs.finalized-view",
    summary: "CIP-39 §3 `FinalizedViewV1` (`view`): chain instance, height, block hash",
    answer: "json",
    query: ["block"],
    maxBody: 0,
    handle: (c) => finalizedView(c.node.db, c.node.chainInstanceId, c.params.get("block")),
  }),
  route({
    method: "GET",
    path: "/cbqs/broker-state",
    name: "cbqs.broker-state",
    summary: "CIP-39 §3 atomic broker-state response (guide)",
    answer: "json",
    query: ["stream", "block"],
    maxBody: 0,
    handle: (c) => brokerState(c.node.db, c.node.chainInstanceId, c.node.config.governance, streamParam(c.node, c.params.get("stream")), c.params.get("block"), c.brokerCache),
  }),
  route({
    method: "GET",
    path: "/replication",
    name: "cbqs.replication",
    summary: "the replication feed: committed blocks (guide)",
    answer: "json",
    // CIP-16 §3: the feed MUST be advertised under this name. Its template has no `owner`: a
    // block has no single owner, so there is nothing to filter by (D-0106).
    aliases: ["net.concrnt.core.replication"],
    query: ["since", "until", "limit", "order"],
    maxBody: 0,
    handle: (c) => feedPage(c.node.db, parseFeedQuery(c.params)),
  }),
  route({
    method: "GET",
    path: "/subscribe",
    name: "cbqs.subscribe",
    summary: "Server-Sent Events: the head block, then every new block as it is committed, a `rewind` when a revert replaced the chain (\"Subscriptions\" in the guide)",
    answer: "events",
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
    path: "/block/{height_or_hash}",
    name: "cbqs.block",
    summary: "a block with its transactions decoded (a CBQS instruction to its arguments), receipts, fees and named events, and the stored blocks either side",
    answer: "json",
    query: [],
    maxBody: 0,
    handle: (c) => blockAnswer(c.node, c.path["height_or_hash"]!),
  }),
  route({
    method: "GET",
    path: "/search",
    name: "cbqs.search",
    summary: "what a height, hash, id, address or dev account name names (`kind`, `id`)",
    answer: "json",
    query: ["q"],
    maxBody: 0,
    handle: (c) => searchAnswer(c.node, c.params.get("q"), (text) => streamParam(c.node, text)),
  }),
  route({
    method: "GET",
    path: "/fixture",
    name: "cbqs.fixture",
    summary: "the chain as a `cbqs-fixture/v1`, what `cbqs fixture export --db` writes of the node's store (guide)",
    answer: "streamed",
    query: ["since", "until", "post_state"],
    maxBody: 0,
    handle: (c) => fixtureAnswer(c.node.db, c.params),
  }),
  route({
    method: "GET",
    path: "/proof/account/{address}",
    name: "cip4.proof.account",
    summary: "CIP-4 §5.4 state proof of the account key `0x01 ‖ address ‖ 0…`",
    answer: "json",
    query: [],
    maxBody: 0,
    proof: true,
    handle: (c) => accountProof(c.node.db, c.path["address"]!, c.limits, c.proofCache),
  }),
  route({
    method: "GET",
    path: "/proof/actor/{address}",
    name: "cip4.proof.actor",
    summary: "state proof of the actor key `0x02 ‖ address ‖ 0…`",
    answer: "json",
    query: [],
    maxBody: 0,
    proof: true,
    handle: (c) => actorProof(c.node.db, c.path["address"]!, c.limits, c.proofCache),
  }),
  route({
    method: "GET",
    path: "/proof/storage/{address}/{key}",
    name: "cip4.proof.storage",
    summary: "state proof of actor storage `0x03 ‖ address ‖ slot(key)`",
    answer: "json",
    query: [],
    maxBody: 0,
    proof: true,
    handle: (c) => storageProof(c.node.db, c.path["address"]!, c.path["key"]!, c.limits, c.proofCache),
  }),
  route({
    method: "GET",
    path: "/proof/tx/{tx_hash}",
    name: "cip4.proof.tx",
    summary: "BMT inclusion proof of the envelope under its block's `tx_root`",
    answer: "json",
    query: [],
    maxBody: 0,
    proof: true,
    handle: (c) => txProof(c.node.db, c.path["tx_hash"]!),
  }),
  route({
    method: "GET",
    path: "/proof/receipt/{tx_hash}",
    name: "cip4.proof.receipt",
    summary: "BMT inclusion proof of the receipt under its block's `receipt_root`",
    answer: "json",
    query: [],
    maxBody: 0,
    proof: true,
    handle: (c) => receiptProof(c.node.db, c.path["tx_hash"]!),
  }),
  route({
    method: "POST",
    path: "/proof/multi",
    name: "cip4.proof.multi",
    summary: "CIP-4 §8.2 batch proof; body `{\"keys\": [\"0x<54-byte key>\", …]}`, 1–256 keys",
    answer: "json",
    query: [],
    maxBody: MAX_JSON_BODY,
    proof: true,
    handle: (c) => multiProof(c.node.db, jsonBody(c.body)),
  }),
  route({
    method: "GET",
    path: "/account/{address}",
    name: "cbqs.account",
    summary: "an account's nonce and balance (at the head also `pending` and `next_nonce`), pinned like broker-state, with its state proof on request",
    answer: "json",
    query: ["height", "block", "proof"],
    maxBody: 0,
    proof: "when-asked",
    handle: (c) => accountAnswer(c.node, c.path["address"]!, c.params, c.limits),
  }),
  route({
    method: "GET",
    path: "/cbqs/stream/{stream_id}",
    name: "cbqs.stream",
    summary: "one `StreamRecordV1` (the codec's JSON mapping); the id in broker-state's forms",
    answer: "json",
    query: ["height", "block"],
    maxBody: 0,
    handle: (c) => {
      const text = pathSegment(c.path["stream_id"]!, "stream");
      return streamAnswer(c.node, parseHash(streamParam(c.node, text)!, "stream"), text, c.params);
    },
  }),
  route({
    method: "GET",
    path: "/cbqs/stream/{stream_id}/history",
    name: "cbqs.stream.history",
    summary: "a stream at up to 256 blocks of the retained state: status, escrow, the escrow a settlement would leave",
    answer: "json",
    query: ["from", "to", "points"],
    maxBody: 0,
    handle: (c) => historyAnswer(c.node, streamPathId(c.node, c.path["stream_id"]!), c.params),
  }),
  route({
    method: "GET",
    path: "/cbqs/stream/{stream_id}/events",
    name: "cbqs.stream.events",
    summary: "a stream's events, newest first, from a bounded scan of blocks",
    answer: "json",
    query: ["until", "limit"],
    maxBody: 0,
    handle: (c) => eventsAnswer(c.node, streamPathId(c.node, c.path["stream_id"]!), c.params),
  }),
  route({
    method: "GET",
    path: "/latest",
    name: "cbqs.latest",
    summary: "the newest transactions (decoded, outcome, cycles, cells, fee) and the newest streams (as they stand at the head), from a bounded scan of blocks (\"The explorer\" in the guide)",
    answer: "json",
    query: ["limit"],
    maxBody: 0,
    handle: (c) => latestAnswer(c.node, c.params),
  }),
  route({
    method: "GET",
    path: "/cbqs/provider/{address}",
    name: "cbqs.provider",
    summary: "one `ProviderRecordV1`",
    answer: "json",
    query: ["height", "block"],
    maxBody: 0,
    handle: (c) => providerAnswer(c.node, c.path["address"]!, c.params),
  }),
  route({
    method: "GET",
    path: "/tx/{tx_hash}",
    name: "cbqs.tx",
    summary: "a transaction: `included` (block, index, receipt, decoded events), `pending`, `dropped`; 404 when unknown",
    answer: "json",
    query: [],
    maxBody: 0,
    handle: (c) => txAnswer(c.node, c.path["tx_hash"]!),
  }),
  route({ method: "GET", path: "/metrics", name: "cbqs.metrics",
    summary: "the node's metrics in the Prometheus text format: CIP-4 §9.2's `block_apply_ms`, `proof_generation_ms`, `batch_commit_ms`, `speculative_cache_size`, requests and 429s by endpoint (\"Metrics\" in the guide)",
    answer: "text", query: [], maxBody: 0, handle: (c) => c.metrics.answer() }),
  route({
    method: "POST",
    path: "/tx",
    name: "cbqs.devnet.tx",
    summary: "devnet: queue a raw transaction envelope (under `--mining auto`: and mine it)",
    answer: "json",
    query: [],
    maxBody: MAX_TX_BODY,
    write: true,
    handle: async (c) => submittedJson(await c.devnet.submit(txBody(c.body, c.contentType))),
  }),
  route({
    method: "POST",
    path: "/mine",
    name: "cbqs.devnet.mine",
    summary: "devnet: produce a block now (at `height`, skipping the heights between; at `timestamp`), or `blocks` of them",
    answer: "json",
    query: ["height", "blocks", "timestamp"],
    maxBody: 0,
    write: true,
    handle: async (c) => minedAnswer(await c.devnet.mine(mineRequest(c.params), { client: c.client, gone: c.gone() })),
  }),
  route({
    method: "GET",
    path: "/devnet/accounts",
    name: "cbqs.devnet.accounts",
    summary: "the dev accounts: name, address, seed, public key, balance, nonce, pending, next nonce",
    answer: "json",
    query: [],
    maxBody: 0,
    seeds: true,
    handle: (c) => devAccountsAnswer(c.node),
  }),
  route({
    method: "GET",
    path: "/devnet/names",
    name: "cbqs.devnet.names",
    summary: "the dev accounts' names and addresses only (nothing secret: served to every client; none unless a devnet genesis)",
    answer: "json",
    query: [],
    maxBody: 0,
    handle: (c) => devNamesAnswer(c.node),
  }),
  route({
    method: "POST",
    path: "/devnet/snapshot",
    name: "cbqs.devnet.snapshot",
    summary: "devnet: remember the head block and the pool",
    answer: "json",
    query: [],
    maxBody: 0,
    write: true,
    handle: async (c) => snapshotJson(await c.devnet.snapshot()),
  }),
  route({
    method: "POST",
    path: "/devnet/revert",
    name: "cbqs.devnet.revert",
    summary: "devnet: rewind the chain to a snapshot",
    answer: "json",
    query: ["id"],
    maxBody: 0,
    write: true,
    handle: async (c) => revertedJson(await c.devnet.revert(snapshotId(c.params.get("id")), { client: c.client, gone: c.gone() })),
  }),
];

function discovery(node: CbqsNode, subscriptionsOn: boolean): Record<string, unknown> {
  const endpoints: Record<string, string> = {};
  for (const r of ROUTES) if (subscriptionsOn || r.subscriptions !== true) for (const name of [r.name, ...(r.aliases ?? [])]) endpoints[name] = templateOf(r);
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

/** Where the node's history starts: the first block whose state it has held (docs/node.md "history_start"). */
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
    // The one strict reader (docs/fixtures.md §0): repeated keys, floats and a BOM are refused.
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
  // Its size is judged with the pool's room (413 tx_too_large, src/chain-node/chain-node.ts checkRoom).
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
const PATTERNS = new Map(ROUTES.map((r) => [r, r.path.split("/").map((s) => (s.startsWith("{") ? `:${s.slice(1, -1)}` : s))]));

export function matchRoute(pathname: string, subscriptionsOn: boolean): { routes: Route[]; captures: Record<string, string> } {
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
export function parseQuery(query: string, allowed: readonly string[]): Map<string, string> {
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

/** The methods a path takes, as an Allow header: GET implies HEAD; OPTIONS is every path's. */
export function allowed(routes: readonly Route[]): string {
  const methods = routes.flatMap((x) => (x.method === "GET" ? ["GET", "HEAD"] : [x.method]));
  return [...methods, "OPTIONS"].join(", ");
}

/** A route's RFC 6570 template: its path, then its query parameters (`/mine{?height,blocks,timestamp}`). */
export function templateOf(r: Pick<Route, "path" | "query">): string {
  return r.query.length === 0 ? r.path : `${r.path}{?${r.query.join(",")}}`;
}

/** One endpoint as data: what the HTTP reference says of it. */
export interface RouteDoc {
  method: "GET" | "POST";
  name: string;
  aliases: readonly string[];
  template: string;
  summary: string;
  answer: AnswerKind;
  params: ReadonlyArray<{ name: ParamName; in: "path" | "query"; type: string }>;
  write: boolean;
  proof: boolean | "when-asked";
  /** Only when subscriptions are on. */
  optional: boolean;
  /** Serves the dev seeds: to loopback clients only, unless --expose-dev-seeds. */
  seeds: boolean;
}

/** The route table as plain data, in declaration order (no handlers). */
export function routeTable(): RouteDoc[] {
  return ROUTES.map((r) => {
    const inPath = [...r.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as ParamName);
    return {
      method: r.method,
      name: r.name,
      aliases: r.aliases ?? [],
      template: templateOf(r),
      summary: r.summary,
      answer: r.answer,
      params: [...inPath.map((name) => ({ name, in: "path" as const, type: PARAM_TYPES[name] })), ...r.query.map((name) => ({ name, in: "query" as const, type: PARAM_TYPES[name] }))],
      write: r.write === true,
      proof: r.proof ?? false,
      optional: r.subscriptions === true,
      seeds: r.seeds === true,
    };
  });
}
