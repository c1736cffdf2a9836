// Arguments are checked before anything is sent, so a mistake is an InvalidArgument naming the
// argument rather than a node's 400 about a URL the caller never wrote.
import { fromHex, HexError } from "../bytes.js";
import { InvalidArgument } from "./errors.js";
import type { HeightLike } from "./types.js";

const U64_MAX = (1n << 64n) - 1n;

export function bytesArg(base: string, value: unknown, name: string, length?: number): Uint8Array {
  if (value instanceof Uint8Array) {
    if (length !== undefined && value.length !== length) throw new InvalidArgument(`${name} must be ${length} bytes (got ${value.length})`, base);
    return value;
  }
  if (typeof value !== "string") throw new InvalidArgument(`${name} must be a Uint8Array or 0x-prefixed hex`, base);
  try {
    return fromHex(value, length, name);
  } catch (err) {
    if (err instanceof HexError) throw new InvalidArgument(err.message, base);
    throw err;
  }
}

export function heightArg(base: string, value: HeightLike | undefined, name: string): bigint {
  const n = typeof value === "number" && Number.isSafeInteger(value) ? BigInt(value) : value;
  if (typeof n !== "bigint" || n < 0n || n > U64_MAX) throw new InvalidArgument(`${name} must be a bigint or safe integer from 0 to 2^64-1 (got ${String(value)})`, base);
  return n;
}

export function optionalHeight(base: string, value: HeightLike | undefined, name: string): bigint | undefined {
  return value === undefined ? undefined : heightArg(base, value, name);
}

/** The longest delay a Node timer keeps (a longer one fires at once). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** A count or a duration in milliseconds: an integer in [min, max]. */
export function intArg(base: string, value: number | undefined, name: string, fallback: number, min = 0, max = MAX_TIMER_MS): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < min || value > max) {
    throw new InvalidArgument(`${name} must be an integer from ${min} to ${max} (got ${String(value)})`, base);
  }
  return value;
}
