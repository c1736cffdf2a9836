// CIP-4 §10: a global RPC rate limit on every endpoint (100 req/s by default); below it a
// per-client (src/node/client-key.ts) limit on every endpoint, so that one client flooding the
// node cannot spend the global budget of the others; and a per-client limiter on the proof
// endpoints. Token buckets holding one second of burst; a refused request learns when a token will
// be there (Retry-After, whole seconds). A large answer costs more than a small one to build and
// send: it is charged one more request per ANSWER_BYTES_PER_REQUEST of its body once built, which
// may leave its client's bucket (and the global one) in debt. Time comes from the caller (wall
// clock in the server, a fake one in tests); none of this touches consensus.
import { CLIENT_SHARE } from "../chain-node/devnet.js";

export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    /** Requests per second; 0 = unlimited. */
    readonly rate: number,
    now: number,
  ) {
    this.tokens = rate;
    this.last = now;
  }

  /** Takes one token; returns 0 when allowed, else the seconds to wait (≥ 1). */
  take(now: number): number {
    if (this.rate === 0) return 0;
    this.tokens = Math.min(this.rate, this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - this.tokens) / this.rate));
  }

  /** Takes `n` more tokens, however few are left: the bucket may go into debt, paid back by its refill. */
  charge(n: number, now: number): void {
    if (this.rate === 0) return;
    this.tokens = Math.min(this.rate, this.tokens + ((now - this.last) / 1000) * this.rate) - n;
    this.last = now;
  }
}

/**
 * An answer costs one request more per this many bytes of its body (256 KiB): building and sending
 * a large answer is work in proportion to its size, so at 25 requests per second a client is
 * answered at most about 6 MiB of JSON per second, whatever it asks for.
 */
export const ANSWER_BYTES_PER_REQUEST = 256 * 1024;

/** The requests an answer of `bytes` costs beyond the one it was counted as when it arrived. */
export const extraRequests = (bytes: number): number => Math.floor(bytes / ANSWER_BYTES_PER_REQUEST);

/**
 * The per-client limit when none is given: a quarter of the global one (25 of 100 req/s), so three
 * clients at their full rate still leave a quarter of the global budget to everyone else; 0 (off)
 * when the global limit is off.
 */
export { CLIENT_SHARE };
export const defaultClientRateLimit = (globalRate: number): number => (globalRate === 0 ? 0 : Math.max(1, Math.floor(globalRate / CLIENT_SHARE)));

/**
 * One bucket per client (src/node/client-key.ts), at most `maxClients` of them: beyond that the least recently
 * seen client's bucket is dropped (it comes back full, which a client that idle has earned).
 */
export class PerClientLimiter {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(
    readonly rate: number,
    private readonly maxClients = 10_000,
  ) {}

  /** Buckets held: never more than maxClients. */
  get size(): number {
    return this.buckets.size;
  }

  take(client: string, now: number): number {
    if (this.rate === 0) return 0;
    let bucket = this.buckets.get(client);
    if (bucket === undefined) {
      if (this.buckets.size >= this.maxClients) this.buckets.delete(this.buckets.keys().next().value!);
      bucket = new TokenBucket(this.rate, now);
    } else this.buckets.delete(client); // re-inserted below: Map order is recency
    this.buckets.set(client, bucket);
    return bucket.take(now);
  }

  /** `client`'s bucket takes `n` more tokens (TokenBucket.charge); a client without one starts full. */
  charge(client: string, n: number, now: number): void {
    if (this.rate === 0 || n === 0) return;
    let bucket = this.buckets.get(client);
    if (bucket === undefined) {
      if (this.buckets.size >= this.maxClients) this.buckets.delete(this.buckets.keys().next().value!);
      this.buckets.set(client, (bucket = new TokenBucket(this.rate, now)));
    }
    bucket.charge(n, now);
  }
}
