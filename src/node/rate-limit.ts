// CIP-4 §10: a global RPC rate limit on every endpoint (100 req/s by default) and a per-IP limiter
// on the proof endpoints. Token buckets holding one second of burst; a refused request learns
// when a token will be there (Retry-After, whole seconds). Time comes from the caller (wall clock
// in the server, a fake one in tests); none of this touches consensus.

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
}

/** One bucket per client address, at most `maxClients` of them (the least recently used are dropped). */
export class PerClientLimiter {
  private readonly buckets = new Map<string, TokenBucket>();

  constructor(
    readonly rate: number,
    private readonly maxClients = 10_000,
  ) {}

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
}
