// Byte-string helpers shared by every layer. Hex is strict: "0x" prefix, even length,
// [0-9a-fA-F] only; output is lowercase.

export class HexError extends Error {
  override name = "HexError";
}

const HEX_RE = /^0x([0-9a-fA-F]{2})*$/;

/** Parses "0x…" hex. `expectedLength` (bytes), when given, must match exactly. */
export function fromHex(text: string, expectedLength?: number, what = "hex value"): Uint8Array {
  if (typeof text !== "string" || !HEX_RE.test(text)) {
    throw new HexError(`${what}: expected 0x-prefixed hex with an even number of digits`);
  }
  const bytes = Uint8Array.from(Buffer.from(text.slice(2), "hex"));
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

export const u64BE = (v: bigint | number): Uint8Array => uintBE(v, 8);
export const u32BE = (v: bigint | number): Uint8Array => uintBE(v, 4);
