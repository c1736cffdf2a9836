// Answers their clients have not read (docs/node.md "Limits and errors"). An answer is handed to
// its socket whole; what the socket has not passed on — a client that does not read, or reads
// slowly — stays in the node's memory until it has. Bounded in bytes and in time:
// - a client (src/node/client-key.ts) holding `clientBytes` or more of answers not yet sent is
//   refused (429 unread_answers) until it reads them or closes their connections; the node holding
//   `totalBytes` in all refuses everyone (503 unread_answers_full). The check comes before an
//   answer is built, so the node holds at most `totalBytes` plus the answer being sent;
// - an answer must be taken within `graceMs` plus one second per `minBytesPerSecond` of it (an
//   average rate), or its connection is cut and its bytes freed.
// GET /fixture, streamed as the socket takes it, holds little: it is held to the same rate
// (src/node/streamed.ts). Subscriptions have their own rule (src/node/subscriptions.ts).
import type { ServerResponse } from "node:http";
import { RequestError } from "./errors.js";
import { CLIENT_SHARE } from "./rate-limit.js";

type Logger = (entry: Record<string, unknown>) => void;

export interface UnreadLimits {
  /** Bytes of answers not yet sent, in all; at or above it every request is 503. */
  totalBytes: number;
  /** The same per client; at or above it the client's requests are 429. */
  clientBytes: number;
  /** Milliseconds an answer may take before the rate applies. */
  graceMs: number;
  /** The slowest average rate at which a client may take an answer, bytes per second. */
  minBytesPerSecond: number;
}

const MiB = 1024 * 1024;

/**
 * 256 MiB in all (as the subscribers' buffers), a quarter per client: 64 MiB, several of the
 * largest answers (a block of four 1 MiB transactions is about 8 MiB of JSON, a feed page at most
 * 16 MiB plus its last block). 30 s of grace, then 1 MiB/s: a whole feed page in under a minute,
 * far below what a reader on this machine or a LAN takes.
 */
export const DEFAULT_UNREAD_LIMITS: UnreadLimits = { totalBytes: 256 * MiB, clientBytes: (256 * MiB) / CLIENT_SHARE, graceMs: 30_000, minBytesPerSecond: MiB };

/** The milliseconds a client may take to read `bytes` of an answer. */
export const readDeadlineMs = (limits: Pick<UnreadLimits, "graceMs" | "minBytesPerSecond">, bytes: number): number => limits.graceMs + (bytes * 1000) / limits.minBytesPerSecond;

export class UnreadAnswers {
  private total = 0;
  /** Unsent bytes by client (a client appears while it holds some). */
  private readonly byClient = new Map<string, number>();
  /** Answers cut for not being read in time (the tests read it). */
  cut = 0;

  constructor(
    readonly limits: UnreadLimits,
    private readonly log: Logger,
  ) {}

  /** Bytes of answers not yet sent, in all. */
  get bytes(): number {
    return this.total;
  }

  /** Refuses a request of `client` while it, or the node, holds its bound of answers not read. */
  check(client: string): void {
    const own = this.byClient.get(client) ?? 0;
    if (own >= this.limits.clientBytes) {
      throw new RequestError(
        429,
        "unread_answers",
        `this client has ${own} bytes of answers it has not read, and one client may have at most ${this.limits.clientBytes}: read them, or close their connections, first`,
        {},
        { "retry-after": "1" },
      );
    }
    if (this.total >= this.limits.totalBytes) {
      throw new RequestError(503, "unread_answers_full", `the node holds ${this.total} bytes of answers its clients have not read, and at most ${this.limits.totalBytes}`, {}, { "retry-after": "5" });
    }
  }

  /**
   * Called once an answer is handed to `res` whole (res.end): what its socket has not taken yet is
   * counted for `client` until it has been, or the connection closes — cut at the deadline.
   */
  track(res: ServerResponse, client: string): void {
    const bytes = res.writableLength;
    if (bytes === 0 || res.destroyed) return;
    this.total += bytes;
    this.byClient.set(client, (this.byClient.get(client) ?? 0) + bytes);
    const timer = setTimeout(() => {
      this.cut++;
      this.log({ level: "info", msg: "answer cut", reason: "not read in time", client, unsent_bytes: res.writableLength, deadline_ms: Math.round(readDeadlineMs(this.limits, bytes)) });
      res.destroy();
    }, readDeadlineMs(this.limits, bytes));
    timer.unref();
    let done = false;
    const release = (): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      this.total -= bytes;
      const own = this.byClient.get(client)! - bytes;
      if (own === 0) this.byClient.delete(client);
      else this.byClient.set(client, own);
    };
    res.once("finish", release);
    res.once("close", release);
  }
}
