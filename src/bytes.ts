// Byte-string helpers shared by every layer. Hex is strict: "0x" prefix, even length,
// [0-9a-fA-F] only; output is lowercase.

export class HexError extends Error {
  override name = "HexError";
}

/** Parses "0x…" hex. `expectedLength` (bytes), when given, must match exactly. */
export function fromHex(text: string, expectedLength?: number, what = "hex value"): Uint8Array {
  // No regular expression: a backtracking group over a multi-megabyte value overflows the
  // regex stack. Buffer's decoder stops at the first non-hex pair, so a short result means a bad digit.
  if (typeof text !== "string" || text.length % 2 !== 0 || !text.startsWith("0x")) {
    throw new HexError(`${what}: expected 0x-prefixed hex with an even number of digits`);
  }
  const bytes = Uint8Array.from(Buffer.from(text.slice(2), "hex"));
  if (bytes.length * 2 !== text.length - 2) {
    throw new HexError(`${what}: expected 0x-prefixed hex with an even number of digits`);
  }
  if (expectedLength !== undefined && bytes.length !== expectedLength) {
    throw new HexError(`${what}: expected ${expectedLength} bytes, got ${bytes.length}`);
  }
  return bytes;
}

export function toHex(bytes: Uint8Array): string {
  return "0x" + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let total = 0;
  for (const p of parts) total += p.length;
  const out = new Uint8Array(total);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Lexicographic byte order (shorter prefix first). */
export function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const d = a[i]! - b[i]!;
    if (d !== 0) return d;
  }
  return a.length - b.length;
}

const UTF8 = new TextEncoder();

export function utf8(text: string): Uint8Array {
  return UTF8.encode(text);
}

/** Big-endian fixed-width encoding of a non-negative integer; throws if it does not fit. */
export function uintBE(value: bigint | number, width: number): Uint8Array {
  let v = BigInt(value);
  if (v < 0n || v >= 1n << BigInt(width * 8)) {
    throw new RangeError(`value ${v} does not fit in ${width} bytes`);
  }
  const out = new Uint8Array(width);
  for (let i = width - 1; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

const U64_LIMIT = 1n << 64n;
const U32_MASK = 0xffff_ffffn;
const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);

/** Big-endian u64 (the most frequent width: a few BigInt operations instead of one per byte). */
export function u64BE(value: bigint | number): Uint8Array {
  const v = BigInt(value);
  if (v < 0n || v >= U64_LIMIT) throw new RangeError(`value ${v} does not fit in 8 bytes`);
  const out = new Uint8Array(8);
  writeU64BE(out, 0, v);
  return out;
}

/** Writes the big-endian u64 `v` at `offset` (the caller checks that it is a u64 and fits). */
export function writeU64BE(out: Uint8Array, offset: number, v: bigint): void {
  if (v <= MAX_SAFE) {
    // Below 2^53 split as a number: no BigInt arithmetic.
    const n = Number(v);
    const lo = n % 0x1_0000_0000;
    writeU32BE(out, offset, (n - lo) / 0x1_0000_0000);
    writeU32BE(out, offset + 4, lo);
    return;
  }
  writeU32BE(out, offset, Number(v >> 32n));
  writeU32BE(out, offset + 4, Number(v & U32_MASK));
}

function writeU32BE(out: Uint8Array, offset: number, n: number): void {
  out[offset] = n >>> 24;
  out[offset + 1] = (n >>> 16) & 0xff;
  out[offset + 2] = (n >>> 8) & 0xff;
  out[offset + 3] = n & 0xff;
}

const readU32BE = (bytes: Uint8Array, offset: number): number =>
  ((bytes[offset]! << 24) | (bytes[offset + 1]! << 16) | (bytes[offset + 2]! << 8) | bytes[offset + 3]!) >>> 0;

/** The big-endian u64 at `offset` (the caller checks the length). */
export function readU64BE(bytes: Uint8Array, offset: number): bigint {
  const hi = readU32BE(bytes, offset);
  const lo = readU32BE(bytes, offset + 4);
  // Below 2^53 the value is exact as a number: one BigInt instead of four.
  return hi < 0x20_0000 ? BigInt(hi * 0x1_0000_0000 + lo) : (BigInt(hi) << 32n) | BigInt(lo);
}
export const u32BE = (v: bigint | number): Uint8Array => uintBE(v, 4);
