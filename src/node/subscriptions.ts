// GET /subscribe: the chain's head pushed as Server-Sent Events (docs/guides/run-a-devnet.md "Subscriptions"),
// so a broker, a follower or the explorer page learns of a new block without polling. One event
// per committed block (`block`, `id:` its height), `rewind` when a devnet revert replaced the
// chain, `gap` when a resuming subscriber missed more blocks than are replayed, and a comment line
// every heartbeat so proxies keep the connection. Bounded: at most `maxSubscribers` connections
// (503 beyond), at most `maxClientSubscribers` of them per client (src/node/client-key.ts; 429
// beyond: one client cannot take every place from the others), and a subscriber whose unsent events exceed `maxBufferedBytes` is dropped — the
// node's memory never grows with a client that does not read (it holds at most the bound plus
// one write per subscriber).
//
// Events are gathered as the chain changes and written on the next turn of the event loop, one
// write per subscriber for everything gathered (a POST /mine?blocks=N batch turns the loop every
// 25 ms: a write per subscriber per turn, not per block); each distinct `?stream=` filter's text
// is built once and shared by its subscribers.
import type { ServerResponse } from "node:http";
import { toHex } from "../bytes.js";
import { SUBSCRIBE_HEARTBEAT_MS } from "../client/wire-bounds.js";
import { U64_MAX } from "../engine/math.js";
import type { BlockRecord } from "../../state/chain-db/chain-db.js";
import type { CbqsNode, ChainListener } from "../chain-node/chain-node.js";
import { parseDecimal } from "./decimal.js";
import { RequestError } from "./errors.js";
import { finalizedViewJson, readPointJson } from "./json.js";
import { decodedEvent } from "./lookups.js";
import { CLIENT_SHARE } from "./rate-limit.js";

type Logger = (entry: Record<string, unknown>) => void;

export interface SubscriptionLimits {
  /** Open subscriptions at most; a request beyond is 503. 0 turns GET /subscribe off. */
  maxSubscribers: number;
  /** Open subscriptions per client (src/node/client-key.ts) at most; a request beyond is 429. */
  maxClientSubscribers: number;
  /** A subscriber whose written-but-unsent bytes exceed this is dropped. */
  maxBufferedBytes: number;
  /** Milliseconds between two heartbeat comments. */
  heartbeatMs: number;
}

export const DEFAULT_MAX_SUBSCRIBERS = 1_024;
/**
 * The per-client bound when none is given: a quarter of the global one (256 of 1,024), as the
 * per-client rate limit is a quarter of the global limit: three clients at their bound leave a
 * quarter of the places to everyone else.
 */
export const defaultClientSubscribers = (maxSubscribers: number): number => (maxSubscribers === 0 ? 0 : Math.max(1, Math.floor(maxSubscribers / CLIENT_SHARE)));
/** 256 KiB: with 1,024 subscribers the node holds at most 256 MiB of unsent events. */
export const DEFAULT_SUBSCRIBER_BUFFER = 256 * 1024;
export const DEFAULT_HEARTBEAT_MS = SUBSCRIBE_HEARTBEAT_MS;
/** A resuming subscriber (Last-Event-ID) is sent at most this many missed blocks; more is a `gap`. */
export const MAX_REPLAY_BLOCKS = 128;
/** What an EventSource waits before reconnecting (the `retry:` field). */
export const RETRY_MS = 1_000;

const HEARTBEAT = Buffer.from(": heartbeat\n\n");

/** What the route hands to the server: GET /subscribe's checked query. */
export class SubscribeRequest {
  constructor(
    /** `?stream=`: this stream's events are added to each block event. */
    readonly stream: Uint8Array | undefined,
  ) {}
}

/** The headers of every subscription answer (HEAD included). */
export const EVENT_STREAM_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
  // nginx buffers answers unless told not to: events would arrive in bursts, late.
  "x-accel-buffering": "no",
  // The connection is the subscription's: closed with it (a shutdown then waits for no idle socket).
  connection: "close",
};

type Change = { kind: "block"; block: BlockRecord } | { kind: "rewound"; head: BlockRecord; fromHeight: bigint };

interface Subscriber {
  res: ServerResponse;
  client: string;
  stream: Uint8Array | undefined;
}

export class Subscriptions {
  /** Subscribers by filter: "" for none, else the stream id's hex. */
  private readonly groups = new Map<string, Set<Subscriber>>();
  private count = 0;
  /** Open subscriptions by client key (a client appears while it holds one). */
  private readonly byClient = new Map<string, number>();
  private pending: Change[] = [];
  private flushScheduled = false;
  private readonly unlisten: () => void;
  private readonly heartbeat: NodeJS.Timeout;
  private closed = false;
  /** Subscribers dropped for not reading (the load script and the tests read it). */
  droppedSlow = 0;

  constructor(
    private readonly node: CbqsNode,
    readonly limits: SubscriptionLimits,
    private readonly log: Logger,
  ) {
    const listener: ChainListener = {
      block: (block) => this.record({ kind: "block", block }),
      rewound: (head, from) => this.record({ kind: "rewound", head, fromHeight: from.height }),
    };
    this.unlisten = node.listen(listener);
    this.heartbeat = setInterval(() => this.writeAll(HEARTBEAT), limits.heartbeatMs);
    this.heartbeat.unref();
  }

  get enabled(): boolean {
    return this.limits.maxSubscribers > 0;
  }

  get size(): number {
    return this.count;
  }

  /**
   * Checks a subscription of `client` before anything is written: the bounds (503
   * `too_many_subscribers` in all, then 429 `too_many_subscriptions` for one client) and `Last-Event-ID`
   * (the numeric rule, 400 `invalid_last_event_id`). Returns the resume height.
   */
  check(client: string, lastEventId: string | undefined): bigint | undefined {
    if (this.closed) throw new RequestError(503, "shutting_down", "the node is stopping");
    if (this.count >= this.limits.maxSubscribers) {
      throw new RequestError(503, "too_many_subscribers", `the node serves at most ${this.limits.maxSubscribers} subscriptions (--max-subscribers) and all are taken`, {}, { "retry-after": "5" });
    }
    const own = this.byClient.get(client) ?? 0;
    if (own >= this.limits.maxClientSubscribers) {
      throw new RequestError(429, "too_many_subscriptions", `one client may hold at most ${this.limits.maxClientSubscribers} subscriptions (--max-client-subscribers) and this one holds ${own}`, {}, { "retry-after": "5" });
    }
    if (lastEventId === undefined) return undefined;
    return parseDecimal(lastEventId, { name: "last_event_id", what: "the id (a block height) of the last event received", max: U64_MAX });
  }

  /**
   * Starts a checked subscription on `res`: the head block (or, resuming after `lastEventId`, the
   * blocks since, or a `rewind`/`gap`), then every change as it happens, until the client goes,
   * is dropped or the node stops.
   */
  open(res: ServerResponse, client: string, request: SubscribeRequest, lastEventId: bigint | undefined, headers: Record<string, string>): void {
    // Everything gathered so far goes to the subscribers before this one, which starts from the
    // store: it neither misses a block nor gets one twice.
    this.flush();
    const sub: Subscriber = { res, client, stream: request.stream };
    res.writeHead(200, { ...EVENT_STREAM_HEADERS, ...headers });
    const key = sub.stream === undefined ? "" : toHex(sub.stream);
    let group = this.groups.get(key);
    if (group === undefined) this.groups.set(key, (group = new Set()));
    group.add(sub);
    this.count++;
    this.byClient.set(sub.client, (this.byClient.get(sub.client) ?? 0) + 1);
    res.on("close", () => this.remove(sub));
    this.write(sub, Buffer.from(`retry: ${RETRY_MS}\n\n` + this.start(lastEventId, sub.stream)));
  }

  /** Ends every subscription (shutdown): each answer's body ends cleanly. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unlisten();
    clearInterval(this.heartbeat);
    for (const group of this.groups.values()) for (const sub of group) sub.res.end();
    this.groups.clear();
    this.count = 0;
    this.byClient.clear();
  }

  /** The first events of a subscription. */
  private start(lastEventId: bigint | undefined, stream: Uint8Array | undefined): string {
    const db = this.node.db;
    const head = db.head()!;
    if (lastEventId === undefined) return this.blockEvent(head, stream);
    if (lastEventId > head.height) return rewindEvent(head, lastEventId);
    if (lastEventId === head.height) return "";
    const missed = db.blocks({ from: lastEventId + 1n, to: head.height, order: "asc", limit: MAX_REPLAY_BLOCKS + 1 });
    if (missed.length > MAX_REPLAY_BLOCKS) return gapEvent(lastEventId + 1n, head);
    return missed.map((b) => this.blockEvent(b, stream)).join("");
  }

  private record(change: Change): void {
    if (this.count === 0) return;
    this.pending.push(change);
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  /**
   * Writes what was gathered: each filter's text built and encoded once, one write of the same
   * bytes per subscriber (sockets queue a reference, not a copy).
   */
  private flush(): void {
    this.flushScheduled = false;
    const changes = this.pending;
    if (changes.length === 0) return;
    this.pending = [];
    for (const group of [...this.groups.values()]) {
      const first = group.values().next().value;
      if (first === undefined) continue;
      const bytes = Buffer.from(changes.map((c) => (c.kind === "block" ? this.blockEvent(c.block, first.stream) : rewindEvent(c.head, c.fromHeight))).join(""));
      for (const sub of [...group]) this.write(sub, bytes);
    }
  }

  private writeAll(bytes: Buffer): void {
    for (const group of [...this.groups.values()]) for (const sub of [...group]) this.write(sub, bytes);
  }

  /**
   * The slow-subscriber rule: a subscriber that still holds more than the bound unsent when its
   * next events are due is dropped, not buffered further. Judged before the write, so a burst
   * larger than the bound (a batch's 25 ms of blocks) never drops a subscriber that keeps reading;
   * one that does not read holds at most the bound plus one write.
   */
  private write(sub: Subscriber, bytes: Buffer): void {
    if (bytes.length === 0 || sub.res.destroyed) return;
    const buffered = sub.res.writableLength;
    if (buffered <= this.limits.maxBufferedBytes) {
      sub.res.write(bytes);
      return;
    }
    this.droppedSlow++;
    this.log({ level: "info", msg: "subscriber dropped", reason: "slow", client: sub.client, buffered, max_buffered: this.limits.maxBufferedBytes });
    this.remove(sub);
    sub.res.destroy();
  }

  private remove(sub: Subscriber): void {
    const key = sub.stream === undefined ? "" : toHex(sub.stream);
    const group = this.groups.get(key);
    if (group === undefined || !group.delete(sub)) return;
    this.count--;
    const own = this.byClient.get(sub.client)! - 1;
    if (own === 0) this.byClient.delete(sub.client);
    else this.byClient.set(sub.client, own);
    if (group.size === 0) this.groups.delete(key);
  }

  private blockEvent(b: BlockRecord, stream: Uint8Array | undefined): string {
    const data: Record<string, unknown> = {
      ...readPointJson(b),
      parent_hash: toHex(b.parent_hash),
      timestamp: b.timestamp.toString(),
      tx_root: toHex(b.tx_root),
      receipt_root: toHex(b.receipt_root),
      logs_root: toHex(b.logs_root),
      effective_rent_height: b.effective_rent_height.toString(),
      txs: b.transactions.length,
      view: finalizedViewJson(this.node.chainInstanceId, b),
    };
    if (stream !== undefined) {
      data["stream_id"] = toHex(stream);
      data["events"] = streamEvents(b, stream);
    }
    return event("block", b.height, data);
  }
}

/** The events of block `b` naming `stream` (CIP-39 §19: a stream event's payload is the main stream's id), with their transaction. */
export function streamEvents(b: BlockRecord, stream: Uint8Array): Array<Record<string, unknown>> {
  const id = toHex(stream);
  return b.receipts.flatMap((r, index) =>
    r.events.map(decodedEvent).flatMap((e) => (e["stream_id"] === id ? [{ tx_hash: toHex(r.tx_hash), index, ...e }] : [])),
  );
}

function event(name: string, height: bigint, data: Record<string, unknown>): string {
  // JSON.stringify writes no line breaks: the data is one `data:` line.
  return `id: ${height}\nevent: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}

/** The chain now ends at `head`, below the subscriber's last block (`fromHeight`): what it saw above `head` is no longer the chain. */
function rewindEvent(head: BlockRecord, fromHeight: bigint): string {
  return event("rewind", head.height, { ...readPointJson(head), from_height: fromHeight.toString() });
}

/** The blocks from `from` through the head were not sent (more than MAX_REPLAY_BLOCKS): read them from the feed. */
function gapEvent(from: bigint, head: BlockRecord): string {
  return event("gap", head.height, { ...readPointJson(head), from: from.toString(), to: head.height.toString() });
}
