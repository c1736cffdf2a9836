// commonware-codec primitives (codec/src/varint.rs, types/primitives.rs, types/bytes.rs at
// dc41a895f069) shared by the QMDB operation encoding and the receipt/event encodings
// (CIP-4 §5.3 "commonware-codec encoding"):
//   - fixed-width integers are big-endian;
//   - a length or count (`usize`) is an unsigned LEB128 varint of at most u32 range: 7 bits per
//     byte, low group first, and exactly one encoding per value (a zero byte after the first and
//     bits beyond 32 are refused on decode);
//   - a byte vector is its varint length then the bytes (commonware has no String type: text is
//     written as its UTF-8 bytes).

export class CodecError extends Error {
  override name = "CodecError";
}

const U32_MAX = 0xffff_ffff;

/** Unsigned LEB128 (`varint::UInt`) of a non-negative safe integer. */
export function encodeVarint(value: number): Uint8Array {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`varint ${value} out of range`);
  const out = new Uint8Array(varintSize(value));
  writeVarint(out, 0, value);
  return out;
}

/** Bytes in the varint of a u32 length or count (encodeLength's length, without building it). */
export function lengthSize(length: number): number {
  checkLength(length);
  return varintSize(length);
}

/** Writes encodeLength(length) into `out` at `at`; returns the offset after it. */
export function writeLength(out: Uint8Array, at: number, length: number): number {
  checkLength(length);
  return writeVarint(out, at, length);
}

function checkLength(length: number): void {
  if (!Number.isInteger(length) || length < 0 || length > U32_MAX) throw new CodecError(`length ${length} does not fit in u32`);
}

/** 7 bits per byte, low group first; `value` is a checked non-negative safe integer. */
function varintSize(value: number): number {
  let size = 1;
  for (let v = value; v >= 0x80; v = Math.floor(v / 0x80)) size++;
  return size;
}

function writeVarint(out: Uint8Array, at: number, value: number): number {
  let v = value;
  while (v >= 0x80) {
    out[at++] = (v % 0x80) | 0x80;
    v = Math.floor(v / 0x80);
  }
  out[at++] = v;
  return at;
}

/** A `usize` length or count: a varint of a value that fits in u32. */
export function encodeLength(length: number): Uint8Array {
  checkLength(length);
  return encodeVarint(length);
}

/**
 * Reads a u32 varint at `offset`; returns the value and the offset after it. Refuses every
 * non-canonical form commonware refuses: a zero byte after the first (an overlong encoding)
 * and any bit beyond the 32nd (which also rules out a sixth byte).
 */
export function decodeLength(bytes: Uint8Array, offset: number, what: string): [number, number] {
  let value = 0;
  let shift = 0;
  for (let i = offset; ; i++) {
    if (i >= bytes.length) throw new CodecError(`${what}: truncated varint`);
    const byte = bytes[i]!;
    if (byte === 0 && shift > 0) throw new CodecError(`${what}: non-canonical varint (overlong)`);
    if (shift === 28 && byte > 0x0f) throw new CodecError(`${what}: varint exceeds u32`);
    value += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return [value, i + 1];
    shift += 7;
  }
}

/** `Vec<u8>` / `Bytes`: varint length, then the bytes. */
export function encodeByteVec(what: string, bytes: Uint8Array): Uint8Array {
  if (bytes.length > U32_MAX) throw new CodecError(`${what} longer than u32::MAX bytes`);
  const length = encodeVarint(bytes.length);
  const out = new Uint8Array(length.length + bytes.length);
  out.set(length, 0);
  out.set(bytes, length.length);
  return out;
}

/**
 * Reads a `Vec<u8>` at `offset`, checking the declared length against the remaining input
 * before anything is allocated; returns the bytes and the offset after them.
 */
export function decodeByteVec(bytes: Uint8Array, offset: number, what: string): [Uint8Array, number] {
  const [length, start] = decodeLength(bytes, offset, what);
  if (length > bytes.length - start) throw new CodecError(`${what}: length ${length} exceeds remaining input`);
  return [bytes.slice(start, start + length), start + length];
}
