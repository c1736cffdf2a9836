// The deterministic CBOR subset the transaction envelope uses (RFC 8949 §4.2.1 core
// deterministic encoding): unsigned integers up to u64, byte strings, UTF-8 text strings,
// arrays and maps, all with definite lengths and shortest-form heads. The reader refuses
// everything else (negative ints, tags, floats, indefinite lengths, non-shortest heads)
// and checks every length against the remaining input BEFORE slicing or allocating.
import { readU64BE, uintBE } from "../bytes.js";

export type CborErrorKind = "Truncated" | "NonCanonical" | "Unsupported" | "BoundExceeded" | "InvalidUtf8";

export class CborError extends Error {
  override name = "CborError";
  constructor(
    readonly kind: CborErrorKind,
    readonly offset: number,
    reason: string,
  ) {
    super(`${kind} at offset ${offset}: ${reason}`);
  }
}

export const MAJOR_UINT = 0;
export const MAJOR_BYTES = 2;
export const MAJOR_TEXT = 3;
export const MAJOR_ARRAY = 4;
export const MAJOR_MAP = 5;

const U64_MAX = (1n << 64n) - 1n;

/** Appends CBOR items to a growing list of chunks. */
export class CborWriter {
  private readonly chunks: Uint8Array[] = [];

  head(major: number, value: bigint | number): this {
    const v = BigInt(value);
    if (v < 0n || v > U64_MAX) throw new RangeError(`CBOR head value ${v} out of u64 range`);
    const m = major << 5;
    if (v < 24n) this.chunks.push(Uint8Array.of(m | Number(v)));
    else if (v <= 0xffn) this.chunks.push(Uint8Array.of(m | 24, Number(v)));
    else if (v <= 0xffffn) this.chunks.push(Uint8Array.of(m | 25, ...uintBE(v, 2)));
    else if (v <= 0xffff_ffffn) this.chunks.push(Uint8Array.of(m | 26, ...uintBE(v, 4)));
    else this.chunks.push(Uint8Array.of(m | 27, ...uintBE(v, 8)));
    return this;
  }

  uint(value: bigint | number): this {
    return this.head(MAJOR_UINT, value);
  }

  bytes(value: Uint8Array): this {
    this.head(MAJOR_BYTES, value.length);
    this.chunks.push(value);
    return this;
  }

  text(value: string): this {
    const b = new TextEncoder().encode(value);
    this.head(MAJOR_TEXT, b.length);
    this.chunks.push(b);
    return this;
  }

  array(count: number): this {
    return this.head(MAJOR_ARRAY, count);
  }

  map(count: number): this {
    return this.head(MAJOR_MAP, count);
  }

  finish(): Uint8Array {
    let total = 0;
    for (const c of this.chunks) total += c.length;
    const out = new Uint8Array(total);
    let off = 0;
    for (const c of this.chunks) {
      out.set(c, off);
      off += c.length;
    }
    return out;
  }
}

// ignoreBOM keeps a leading U+FEFF in the decoded text: without it the decoder strips it, and a
// key or value written as BOM + "version" would decode to the same string as "version" under
// different bytes (a second accepted form, so a different tx_hash for the same transaction).
const utf8Decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Per argument width (1, 2, 4, 8 bytes), the smallest value that needs it (§ canonical CBOR: shortest form). */
const SHORTEST: Readonly<Record<number, bigint>> = { 1: 24n, 2: 1n << 8n, 4: 1n << 16n, 8: 1n << 32n };

/** Head arguments 0…23 (no allocation for the common case). */
const SMALL: readonly bigint[] = Array.from({ length: 24 }, (_, i) => BigInt(i));

/** Strict reader over one buffer. */
export class CborReader {
  pos = 0;
  constructor(private readonly buf: Uint8Array) {}

  get remaining(): number {
    return this.buf.length - this.pos;
  }

  /** Reads one head and checks it is of `major`; returns its argument. */
  head(major: number, what: string): bigint {
    const start = this.pos;
    const first = this.byte(what);
    const got = first >> 5;
    if (got !== major) {
      throw new CborError(
        got === 1 || got === 6 || got === 7 ? "Unsupported" : "NonCanonical",
        start,
        `${what}: expected CBOR major type ${major}, got ${got}`,
      );
    }
    const info = first & 0x1f;
    if (info < 24) return SMALL[info]!;
    if (info > 27) throw new CborError("Unsupported", start, `${what}: indefinite or reserved length`);
    const width = 1 << (info - 24);
    if (this.remaining < width) throw new CborError("Truncated", start, `${what}: head needs ${width} more bytes`);
    // Built as a number (exact up to 4 bytes; readU64BE for 8), then one BigInt.
    let v: bigint;
    if (width === 8) v = readU64BE(this.buf, this.pos);
    else {
      let n = 0;
      for (let i = 0; i < width; i++) n = n * 256 + this.buf[this.pos + i]!;
      v = BigInt(n);
    }
    this.pos += width;
    if (v < SHORTEST[width]!) throw new CborError("NonCanonical", start, `${what}: head is not in shortest form`);
    return v;
  }

  uint(what: string, max: bigint = U64_MAX): bigint {
    const start = this.pos;
    const v = this.head(MAJOR_UINT, what);
    if (v > max) throw new CborError("BoundExceeded", start, `${what}: ${v} exceeds ${max}`);
    return v;
  }

  bytes(what: string, maxLength: number, exactLength?: number): Uint8Array {
    const start = this.pos;
    const len = this.head(MAJOR_BYTES, what);
    if (exactLength !== undefined && len !== BigInt(exactLength)) {
      throw new CborError("BoundExceeded", start, `${what}: expected ${exactLength} bytes, got ${len}`);
    }
    return this.take(len, maxLength, start, what);
  }

  text(what: string, maxLength: number): string {
    const start = this.pos;
    const len = this.head(MAJOR_TEXT, what);
    const raw = this.take(len, maxLength, start, what);
    try {
      return utf8Decoder.decode(raw);
    } catch {
      throw new CborError("InvalidUtf8", start, `${what}: invalid UTF-8`);
    }
  }

  /** Array header; `maxCount` is checked before any element is read. */
  array(what: string, maxCount: number): number {
    return this.count(MAJOR_ARRAY, what, maxCount);
  }

  map(what: string, maxCount: number): number {
    return this.count(MAJOR_MAP, what, maxCount);
  }

  /** Reads a text map key and requires it to be exactly `key`. */
  key(key: string): void {
    // The one accepted form of a short ASCII key (every key of the envelope) is the text head
    // (major type 3) with the length, then its characters: when the bytes are exactly that, text() would return
    // `key`, so there is nothing to decode. Any other key, or other bytes, go through text().
    const buf = this.buf;
    const at = this.pos;
    const n = key.length;
    let same = n < 24 && at + 1 + n <= buf.length && buf[at] === ((MAJOR_TEXT << 5) | n);
    for (let i = 0; same && i < n; i++) {
      const c = key.charCodeAt(i);
      same = c < 0x80 && buf[at + 1 + i] === c;
    }
    if (same) {
      this.pos = at + 1 + n;
      return;
    }
    const start = this.pos;
    const got = this.text("map key", 64);
    if (got !== key) throw new CborError("NonCanonical", start, `expected key "${key}", got "${got}"`);
  }

  end(): void {
    if (this.remaining !== 0) throw new CborError("NonCanonical", this.pos, `${this.remaining} trailing bytes`);
  }

  private count(major: number, what: string, maxCount: number): number {
    const start = this.pos;
    const n = this.head(major, what);
    if (n > BigInt(maxCount)) throw new CborError("BoundExceeded", start, `${what}: ${n} entries exceed ${maxCount}`);
    return Number(n);
  }

  private take(len: bigint, maxLength: number, start: number, what: string): Uint8Array {
    if (len > BigInt(maxLength)) throw new CborError("BoundExceeded", start, `${what}: ${len} bytes exceed ${maxLength}`);
    if (len > BigInt(this.remaining)) throw new CborError("Truncated", start, `${what}: needs ${len} bytes`);
    const out = this.buf.slice(this.pos, this.pos + Number(len));
    this.pos += Number(len);
    return out;
  }

  private byte(what: string): number {
    if (this.remaining < 1) throw new CborError("Truncated", this.pos, `${what}: input ended`);
    return this.buf[this.pos++]!;
  }
}
