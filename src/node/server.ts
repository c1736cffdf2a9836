// The node's HTTP face on node:http (docs/guides/run-a-devnet.md): routing, query and body bounds, the CIP-4 §10
// rate limits, and errors — 400 {"error": {"code", "message"}}, 404 unknown route, 405 wrong
// method, 413 oversized body, 429 + Retry-After, and an opaque 500 with an id whose details go to
// the structured log only (CIP-4 §6.4, §10). Before anything else a request passes the guard
// (src/node/guard.ts, docs/spec/security-model.md): Host, Origin, Sec-Fetch-Site, and 403 for
// what it refuses; its CORS headers come from there too. Every per-client bound counts a request
// under its client's key (src/node/client-key.ts: every loopback address is one client, an IPv6
// client its /64). An answer is bounded once built too: it costs its client one request more per
// 256 KiB (src/node/rate-limit.ts), and what its socket has not sent yet counts against the
// client's and the node's bounds of unread answers and must be taken in time (src/node/unread.ts).
// Handlers are synchronous: an answer is built from one block without yielding, so block
// production can never tear it. Two answers outlive their request's turn: GET /fixture, streamed
// over many turns of the event loop from blocks that never change once committed
// (src/node/streamed.ts), one at a time; and GET /subscribe, which stays open and is written to as
// blocks are produced (src/node/subscriptions.ts). The explorer page's files are served at `/` and
// `/explorer/` (src/node/explorer.ts).
import { randomUUID } from "node:crypto";
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { echo } from "../bounds.js";
import { WriteCancelled, type Devnet } from "../chain-node/devnet.js";
import { answerOf, errorBody, RequestError } from "./errors.js";
import { JsonText, StreamedAnswer, TextAnswer } from "./json.js";
import { EXPLORER_ROUTE, NodeMetrics, UNMATCHED_ROUTE, type LimitName } from "./metrics.js";
import { ProofCache, type ProofLimits } from "./proofs.js";
import { defaultClientRateLimit, extraRequests, PerClientLimiter, TokenBucket } from "./rate-limit.js";
import { BrokerStateCache } from "./reads.js";
import { allowed, matchRoute, parseQuery, type Context, type Route } from "./routes.js";
import { sendStreamed } from "./streamed.js";
import { DEFAULT_HEARTBEAT_MS, DEFAULT_MAX_SUBSCRIBERS, DEFAULT_SUBSCRIBER_BUFFER, defaultClientSubscribers, EVENT_STREAM_HEADERS, SubscribeRequest, Subscriptions } from "./subscriptions.js";
import { EXPLORER_HEADERS, explorerAsset, isExplorerPath } from "./explorer.js";
import { RequestGuard } from "./guard.js";
import { clientKey } from "./client-key.js";
import { DEFAULT_UNREAD_LIMITS, UnreadAnswers, type UnreadLimits } from "./unread.js";

export type Logger = (entry: Record<string, unknown>) => void;

/** One JSON line per entry on stderr (the server's structured log). */
export const stderrLogger: Logger = (entry) => process.stderr.write(JSON.stringify({ time: new Date().toISOString(), ...entry }) + "\n");

export interface ServerOptions {
  host: string;
  port: number;
  /** Global limit on every endpoint, requests per second (CIP-4 §10: 100); 0 = off. */
  rateLimit: number;
  /** Per client (src/node/client-key.ts) on every endpoint, requests per second; 0 = off. Default: defaultClientRateLimit(rateLimit). */
  clientRateLimit?: number;
  /** Per client on the proof endpoints, requests per second; 0 = off. */
  proofRateLimit: number;
  proofLimits: ProofLimits;
  log: Logger;
  /** Milliseconds clock for the limiters (tests pass a fake one). */
  now?: () => number;
  /** GET /subscribe: open subscriptions at most (0 = off). Default DEFAULT_MAX_SUBSCRIBERS. */
  maxSubscribers?: number;
  /** GET /subscribe: open subscriptions per client at most. Default defaultClientSubscribers(maxSubscribers). */
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
  /** Answers not read: bytes held per client and in all, and how fast they must be taken. Default DEFAULT_UNREAD_LIMITS. */
  unread?: Partial<UnreadLimits>;
}

export const DEFAULT_RATE_LIMIT = 100;
export const DEFAULT_PROOF_RATE_LIMIT = 20;
/** A request's target split at its query. */
function splitUrl(url: string): { pathname: string; query: string } {
  const q = url.indexOf("?");
  return q < 0 ? { pathname: url, query: "" } : { pathname: url.slice(0, q), query: url.slice(q + 1) };
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

/** Sends `body` whole; returns its size in bytes (0 when nothing could be sent). */
function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string>): number {
  if (res.headersSent || res.destroyed) return 0;
  const text = body instanceof JsonText || body instanceof TextAnswer ? body.text : JSON.stringify(body);
  const type = body instanceof TextAnswer ? body.contentType : "application/json; charset=utf-8";
  const bytes = Buffer.byteLength(text);
  res.writeHead(status, { "content-type": type, "content-length": bytes, ...headers });
  res.end(text);
  return bytes;
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
  const unread = new UnreadAnswers({ ...DEFAULT_UNREAD_LIMITS, ...options.unread }, options.log);
  metrics.subscribers = () => subscriptions.size;
  metrics.unreadBytes = () => unread.bytes;
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

  /**
   * An answer of `bytes` sent to `client`: what its socket holds is counted as unread until sent;
   * beyond the request it was counted as, it costs one more per ANSWER_BYTES_PER_REQUEST.
   */
  const sent = (res: ServerResponse, client: string, bytes: number): void => {
    unread.track(res, client);
    const extra = extraRequests(bytes);
    if (extra === 0) return;
    clients.charge(client, extra, now());
    global.charge(extra, now());
  };

  // ---- the request's path, stage by stage: limit → static → match → preflight → parse → run → send

  /**
   * Limit: the guard (Host, Origin, Sec-Fetch-Site: a refused page spends no one's rate budget),
   * then the client's own bucket (a request it refuses takes nothing from the global budget, so a
   * flooding client exhausts its share only, docs/node.md), the global one, and the answers this
   * client (or every client) has not read yet.
   */
  const limit = (req: IncomingMessage, pathname: string, seen: Seen, client: string): void => {
    try {
      seen.cors = guard.admit(req);
    } catch (err) {
      seen.route = routeOf(pathname);
      throw err;
    }
    const own = clients.take(client, now());
    if (own > 0) throw limited(pathname, seen, "client", `one client may make at most ${clientRate} requests per second`, own);
    const wait = global.take(now());
    if (wait > 0) throw limited(pathname, seen, "global", `the node answers at most ${options.rateLimit} requests per second`, wait);
    try {
      unread.check(client);
    } catch (err) {
      seen.route = routeOf(pathname);
      throw err;
    }
  };

  /** Static: the explorer page's files (src/node/explorer.ts); true when this request was one. */
  const serveStatic = (req: IncomingMessage, res: ServerResponse, pathname: string, seen: Seen, client: string): boolean => {
    if (!isExplorerPath(pathname) || (req.method !== "GET" && req.method !== "HEAD")) return false;
    seen.route = EXPLORER_ROUTE;
    const file = explorerAsset(pathname);
    const headers = { "content-type": file.type, etag: file.etag, ...EXPLORER_HEADERS, ...seen.cors };
    if (req.headers["if-none-match"] === file.etag) {
      res.writeHead(304, headers);
      res.end();
      return true;
    }
    res.writeHead(200, { ...headers, "content-length": file.body.length });
    res.end(file.body);
    sent(res, client, file.body.length);
    return true;
  };

  /** Match: the routes of this path (404 when none). */
  const match = (pathname: string, seen: Seen): { routes: Route[]; captures: Record<string, string> } => {
    const matched = matchRoute(pathname, subscriptions.enabled);
    if (matched.routes.length === 0) throw new RequestError(404, "not_found", `no endpoint at ${JSON.stringify(echo(pathname))} (see /.well-known/cbqs)`);
    seen.route = matched.routes[0]!.name;
    return matched;
  };

  /** Preflight: a browser's CORS OPTIONS, granted to the --http-corsdomain origins only (admitted by the guard); true when this request was one. */
  const preflight = (req: IncomingMessage, res: ServerResponse, routes: readonly Route[], seen: Seen): boolean => {
    if (req.method !== "OPTIONS") return false;
    res.writeHead(204, guard.preflight(seen.cors, allowed(routes)));
    res.end();
    return true;
  };

  /**
   * Parse: the route of the method (405 otherwise; HEAD is GET without the body, RFC 9110 §9.3.2),
   * the write and seed checks, the proof limit, the strict query and the bounded body: the
   * handler's context.
   */
  const parse = async (req: IncomingMessage, res: ServerResponse, url: { pathname: string; query: string }, matched: { routes: Route[]; captures: Record<string, string> }, seen: Seen, client: string): Promise<{ route: Route; context: Context; proof: boolean }> => {
    const method = req.method === "HEAD" ? "GET" : req.method;
    const route = matched.routes.find((x) => x.method === method);
    if (route === undefined) {
      const allow = allowed(matched.routes);
      throw new RequestError(405, "method_not_allowed", `${echo(url.pathname)} takes ${allow}`, {}, { allow });
    }
    seen.route = route.name;
    if (route.write === true) guard.checkWrite(req, url.pathname);
    if (route.seeds === true) guard.checkSeeds(req);
    const proofLimit = () => {
      const clientWait = perClient.take(client, now());
      if (clientWait > 0) throw limited(url.pathname, seen, "proof", `proof endpoints answer at most ${options.proofRateLimit} requests per second per client`, clientWait);
    };
    if (route.proof === true) proofLimit();
    const params = parseQuery(url.query, route.query);
    const proof = route.proof === true || (route.proof === "when-asked" && params.get("proof") === "true");
    if (proof && route.proof !== true) proofLimit();
    const body = await readBody(req, route.maxBody);
    const gone = () => closedEarly(req, res);
    const context: Context = { node, devnet, params, path: matched.captures, body, contentType: String(req.headers["content-type"] ?? ""), limits: options.proofLimits, brokerCache, proofCache, metrics, subscriptionsOn: subscriptions.enabled, client, gone };
    return { route, context, proof };
  };

  /**
   * Run: the handler — synchronous, from one block, except a devnet write, which may wait its turn
   * and produce many blocks (src/chain-node/devnet.ts); its answer is built when it is done.
   */
  const run = async (route: Route, context: Context, proof: boolean): Promise<unknown> => {
    const started = proof ? performance.now() : 0;
    const answer = route.handle(context);
    if (proof) metrics.observeProof(route.name, performance.now() - started);
    return answer instanceof Promise ? await answer : answer;
  };

  /** Send, by the route's answer kind. */
  const sendAnswer = async (req: IncomingMessage, res: ServerResponse, route: Route, answer: unknown, cors: Record<string, string>, client: string): Promise<void> => {
    switch (route.answer) {
      case "json":
      case "text":
        sent(res, client, send(res, 200, answer, cors));
        return;
      case "events": {
        const lastEventId = req.headers["last-event-id"];
        const resume = subscriptions.check(client, typeof lastEventId === "string" ? lastEventId : undefined);
        if (req.method === "HEAD") {
          res.writeHead(200, { ...EVENT_STREAM_HEADERS, ...cors });
          res.end();
          return;
        }
        subscriptions.open(res, client, answer as SubscribeRequest, resume, cors);
        return;
      }
      case "streamed": {
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
          await sendStreamed(res, answer as StreamedAnswer, cors, options.log, unread.limits);
        } finally {
          streaming = undefined;
        }
      }
    }
  };

  /** `seen.route`: the endpoint name the request is counted under, once its path is matched; `seen.cors`: its answer's CORS headers, once admitted. */
  const handle = async (req: IncomingMessage, res: ServerResponse, seen: Seen, client: string): Promise<void> => {
    const url = splitUrl(req.url ?? "/");
    limit(req, url.pathname, seen, client);
    if (serveStatic(req, res, url.pathname, seen, client)) return;
    const matched = match(url.pathname, seen);
    if (preflight(req, res, matched.routes, seen)) return;
    const { route, context, proof } = await parse(req, res, url, matched, seen, client);
    const answer = await run(route, context, proof);
    await sendAnswer(req, res, route, answer, seen.cors, client);
  };

  /** `cors`: the request's CORS headers, so an allowed page may read why it was refused (a refused page gets none). */
  const answerError = (req: IncomingMessage, res: ServerResponse, err: unknown, cors: Record<string, string>, client: string): void => {
    // A refusal (the HTTP layer's, or a domain error by its table) is answered with its status and code.
    const refusal = answerOf(err);
    if (refusal !== undefined) {
      // A body still arriving (refused, or never read) is not drained: answer, then drop the connection.
      const bodyLeft = !req.complete;
      send(res, refusal.status, errorBody(refusal.code, refusal.message, refusal.extra), { ...cors, ...refusal.headers, ...(bodyLeft ? { connection: "close" } : {}) });
      unread.track(res, client);
      if (bodyLeft) res.on("finish", () => req.socket.destroySoon());
      return;
    }
    if (err instanceof ClientGone || err instanceof WriteCancelled) {
      req.socket.destroy();
      return;
    }
    const id = randomUUID();
    options.log({ level: "error", msg: "internal error", id, method: req.method, url: (req.url ?? "").slice(0, 512), error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    send(res, 500, errorBody("internal_error", `internal error (id ${id}); details are in the node's log`, { id }), cors);
    unread.track(res, client);
  };

  const server = createServer({ requestTimeout: 30_000, headersTimeout: 10_000 }, (req, res) => {
    const seen: Seen = { route: UNMATCHED_ROUTE, cors: {} };
    const client = clientKey(req.socket.remoteAddress ?? "");
    // Counted once answered (or given up on: status "none"), under the endpoint's name.
    const counted = () => metrics.countRequest(seen.route, res.headersSent ? res.statusCode : 0);
    handle(req, res, seen, client).then(counted, (err: unknown) => {
      answerError(req, res, err, seen.cors, client);
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
