// The activity bitmap of a QMDB: one bit per log location, 1 = the operation is the current
// value of its key (plus, by convention, the last commit). Bit i lives in byte i/8 under mask
// 1 << (i % 8) — lower bits first (commonware utils/src/bitmap/mod.rs at dc41a895f069) —
// and bytes are grouped in chunks of CHUNK_BYTES. The in-memory BitmapStore (state/qmdb/storage.ts).
import type { BitmapStore } from "./storage.js";

export class ActivityBitmap implements BitmapStore {
  private bytes = new Uint8Array(64);
  private bits = 0;
  /** Chunks whose bits changed since the last `takeChangedChunks` (cache invalidation only). */
  private changed = new Set<number>();

  constructor(readonly chunkBytes: number) {}

  get length(): number {
    return this.bits;
  }

  get chunkBits(): number {
    return this.chunkBytes * 8;
  }

  /** Appends zero bits until the bitmap holds `length` bits. */
  extendTo(length: number): void {
    if (length < this.bits) throw new RangeError(`cannot shrink bitmap from ${this.bits} to ${length}`);
    const needed = Math.ceil(length / 8);
    if (needed > this.bytes.length) {
      const grown = new Uint8Array(Math.max(needed, this.bytes.length * 2));
      grown.set(this.bytes);
      this.bytes = grown;
    }
    this.bits = length;
  }

  get(bit: number): boolean {
    this.check(bit);
    return (this.bytes[bit >> 3]! & (1 << (bit & 7))) !== 0;
  }

  set(bit: number, value: boolean): void {
    this.check(bit);
    const mask = 1 << (bit & 7);
    const before = this.bytes[bit >> 3]!;
    const after = value ? before | mask : before & ~mask;
    if (after === before) return;
    this.bytes[bit >> 3] = after;
    this.changed.add(Math.floor(bit / this.chunkBits));
  }

  /** Indices of the chunks changed since the previous call, in no particular order. */
  takeChangedChunks(): Set<number> {
    const changed = this.changed;
    if (changed.size > 0) this.changed = new Set();
    return changed;
  }

  /** Copy of chunk `index` (bits at and beyond `length` are zero). */
  chunk(index: number): Uint8Array {
    const start = index * this.chunkBytes;
    if (!Number.isInteger(index) || index < 0 || index * this.chunkBits >= this.bits) {
      throw new RangeError(`bitmap chunk ${index} out of range`);
    }
    const out = new Uint8Array(this.chunkBytes);
    out.set(this.bytes.subarray(start, Math.min(start + this.chunkBytes, this.bytes.length)));
    return out;
  }

  private check(bit: number): void {
    if (!Number.isInteger(bit) || bit < 0 || bit >= this.bits) {
      throw new RangeError(`bit ${bit} out of range (length ${this.bits})`);
    }
  }
}
