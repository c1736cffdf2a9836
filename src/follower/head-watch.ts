// The follower's wake-up (docs/guides/run-a-devnet.md "The follower"): when the node's discovery document lists
// GET /subscribe, a waiting follower holds one subscription open and reads the next page of the
// feed as soon as an event says the chain changed — a new block, a rewind, a gap — instead of
// polling. The events are a wake-up only: every block is still read from the feed and verified
// by re-execution, and a `rewind` leads to the feed page that shows the fork. A subscription that
// fails or ends (a node restarting, a proxy cutting it) makes the follower poll until the next
// wait opens it again. Events are parsed by eventsource-parser (Node 20 has no EventSource).
import { StringDecoder } from "node:string_decoder";
import { createParser } from "eventsource-parser";
import { httpRequest } from "../client/http.js";
import { JsonError, parseJson, valuesFor } from "../json/parse.js";
import { SUBSCRIBE_HEARTBEAT_MS } from "../client/wire-bounds.js";

/** Discovery documents are small: a larger answer is not one. */
const MAX_DISCOVERY_BYTES = 1024 * 1024;
/** The events that mean the feed may have something new. */
const CHAIN_EVENTS = new Set(["block", "rewind", "gap"]);
/**
 * One event as the follower reads it (its lines up to the blank line that ends it, line breaks not
 * counted). A node's block event is about 1 KB; a node that sends more without ending the event
 * is not followed (the parser would hold it all).
 */
export const MAX_EVENT_BYTES = 1024 * 1024;

/** The node sent an event past MAX_EVENT_BYTES: it is not a node to follow. */
export class EventTooLarge extends Error {
  override name = "EventTooLarge";
}

/**
 * Counts the bytes of the event being read, over the raw stream (LF, CR and CRLF line ends, as
 * the event-stream format allows), and refuses one past MAX_EVENT_BYTES before it is buffered.
 */
export class EventBound {
  private size = 0;
  private atLineStart = true;
  private previous = -1;

  constructor(private readonly max = MAX_EVENT_BYTES) {}

  check(chunk: Uint8Array): void {
    for (const b of chunk) {
      if (b === 10 && this.previous === 13) {
        // the LF of a CRLF: the line already ended at its CR
      } else if (b === 10 || b === 13) {
        if (this.atLineStart) this.size = 0; // a blank line ends the event
        this.atLineStart = true;
      } else {
        this.atLineStart = false;
        if (++this.size > this.max) throw new EventTooLarge(`the node sent an event of more than ${this.max} bytes`);
      }
      this.previous = b;
    }
  }
}

export type WaitOutcome = "event" | "timeout" | "down" | "stopped";

/** GET /subscribe's URL when `base`'s discovery document lists it (`cbqs.subscribe`), else undefined (a node without it, or no usable discovery). */
export async function subscribeUrl(base: string, timeoutMs: number, signal?: AbortSignal): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  let status: number;
  try {
    ({ status } = await httpRequest(`${base}/.well-known/cbqs`, {
      timeoutMs,
      signal,
      onChunk: (c) => {
        size += c.length;
        if (size > MAX_DISCOVERY_BYTES) throw new Error("the discovery document is too large");
        chunks.push(c);
      },
    }));
  } catch {
    return undefined;
  }
  if (status !== 200) return undefined;
  let doc: unknown;
  try {
    doc = parseJson(Buffer.concat(chunks), { maxValues: valuesFor(size) });
  } catch (err) {
    if (err instanceof JsonError) return undefined;
    throw err;
  }
  const template = (doc as { endpoints?: Record<string, unknown> } | null)?.endpoints?.["cbqs.subscribe"];
  // An RFC 6570 template: the path before its query expression.
  return typeof template === "string" && template.startsWith("/") ? base + template.replace(/\{.*$/, "") : undefined;
}

export class HeadWatch {
  /** Chain events received since the watch began: a waiter compares it with what it had seen. */
  private events = 0;
  private state: "closed" | "connecting" | "up" = "closed";
  private connection: AbortController | undefined;
  private waiters: Array<() => void> = [];
  /** Why the node is not to be followed (an event past the bound), once it has said so. */
  private refusal: EventTooLarge | undefined;

  constructor(
    readonly url: string,
    private readonly timeoutMs: number,
    private readonly signal?: AbortSignal,
    /** Told when a subscription is established and when it ends. */
    private readonly onState?: (state: "up" | "down", reason: string) => void,
  ) {}

  /** The count to pass to `wait` so that an event arriving after this moment ends the wait at once. */
  get seen(): number {
    return this.events;
  }

  /** Whether the node has accepted the subscription (it is sending events). */
  get up(): boolean {
    return this.state === "up";
  }

  /**
   * Until a chain event newer than `seen` ("event"), `maxMs` ("timeout"), the subscription
   * failing ("down": poll instead), or the signal ("stopped"). Opens the subscription when it is
   * not open. A node that sent an event past MAX_EVENT_BYTES rejects it with EventTooLarge.
   */
  wait(seen: number, maxMs: number): Promise<WaitOutcome> {
    if (this.refusal !== undefined) return Promise.reject(this.refusal);
    if (this.signal?.aborted) return Promise.resolve("stopped");
    if (this.events > seen) return Promise.resolve("event");
    if (this.state === "closed") this.open();
    return new Promise((resolve, reject) => {
      let timedOut = false;
      const timer = setTimeout(() => {
        timedOut = true;
        wake();
      }, maxMs);
      const check = () => {
        if (this.signal?.aborted) resolve("stopped");
        else if (this.refusal !== undefined) reject(this.refusal);
        else if (this.events > seen) resolve("event");
        else if (this.state === "closed") resolve("down");
        else if (timedOut) resolve("timeout");
        else return false;
        clearTimeout(timer);
        this.signal?.removeEventListener("abort", wake);
        this.waiters = this.waiters.filter((w) => w !== wake);
        return true;
      };
      const wake = () => {
        if (!check()) this.waiters.push(wake);
      };
      this.signal?.addEventListener("abort", wake, { once: true });
      this.waiters.push(wake);
    });
  }

  close(): void {
    this.connection?.abort();
  }

  private wakeAll(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private open(): void {
    const connection = new AbortController();
    this.connection = connection;
    const stop = () => connection.abort();
    this.signal?.addEventListener("abort", stop, { once: true });
    this.state = "connecting";
    const decoder = new StringDecoder("utf8");
    const bound = new EventBound();
    const parser = createParser({
      onEvent: (e) => {
        if (e.event === undefined || !CHAIN_EVENTS.has(e.event)) return;
        this.events++;
        this.wakeAll();
      },
    });
    const down = (reason: string) => {
      this.signal?.removeEventListener("abort", stop);
      if (this.connection === connection) this.connection = undefined;
      this.state = "closed";
      // Ended by us (close, the follower's signal): nothing to tell.
      if (!connection.signal.aborted) this.onState?.("down", reason);
      this.wakeAll();
    };
    httpRequest(this.url, {
      accept: "text/event-stream",
      // A quiet chain sends a heartbeat every 15 s: silence is judged over two of them at least,
      // so a short --timeout does not end a healthy subscription between heartbeats.
      timeoutMs: Math.max(this.timeoutMs, 2 * SUBSCRIBE_HEARTBEAT_MS),
      signal: connection.signal,
      onResponse: (status, headers) => {
        if (status !== 200) throw new Error(`HTTP ${status}`);
        if (!String(headers["content-type"] ?? "").startsWith("text/event-stream")) throw new Error("the answer is not an event stream");
        this.state = "up";
        this.onState?.("up", "");
      },
      onChunk: (chunk) => {
        bound.check(chunk);
        parser.feed(decoder.write(chunk));
      },
    }).then(
      () => down("the node ended the subscription"),
      (err: Error) => {
        if (err instanceof EventTooLarge) this.refusal = new EventTooLarge(`${this.url}: ${err.message}`);
        down(err.message);
      },
    );
  }
}
