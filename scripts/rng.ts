// xorshift32: the small deterministic PRNG of the fuzz scripts, so every run is reproducible from
// its seed on every machine (no Math.random, no clock).
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0 || 0x9e3779b9;
  }
  /** The next u32. */
  next(): number {
    let x = this.s;
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    this.s = x >>> 0;
    return this.s;
  }
  /** A number in [0, 1). */
  float(): number {
    return this.next() / 0x1_0000_0000;
  }
  below(n: number): number {
    return this.next() % n;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.below(items.length)]!;
  }
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.next() & 0xff;
    return out;
  }
  /** Mostly small values (short CBOR heads), sometimes every width up to u64::MAX. */
  u64(): bigint {
    const width = [0, 1, 1, 2, 4, 8][this.below(6)]!;
    let v = 0n;
    for (let i = 0; i < width; i++) v = (v << 8n) | BigInt(this.next() & 0xff);
    return width === 0 ? BigInt(this.below(24)) : v;
  }
}

/**
 * mulberry32 as a function returning floats in [0, 1): the generator of the long chain
 * (gen-long-chain.ts, whose transactions it fixes) and of the crash script's kill schedule.
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}
