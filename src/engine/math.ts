// Checked u64/u128 arithmetic (CIP-39 §4.5, §5, §6): overflow or underflow is a typed
// rejection, never a wrap.
import { reject } from "./errors.js";

export const U64_MAX = (1n << 64n) - 1n;
export const U128_MAX = (1n << 128n) - 1n;

function fit(value: bigint, max: bigint, what: string): bigint {
  if (value < 0n || value > max) reject("ArithmeticOverflow", `${what} overflows`);
  return value;
}

export const addU64 = (a: bigint, b: bigint, what: string): bigint => fit(a + b, U64_MAX, what);
export const subU64 = (a: bigint, b: bigint, what: string): bigint => fit(a - b, U64_MAX, what);
export const addU128 = (a: bigint, b: bigint, what: string): bigint => fit(a + b, U128_MAX, what);
export const subU128 = (a: bigint, b: bigint, what: string): bigint => fit(a - b, U128_MAX, what);
export const mulU128 = (a: bigint, b: bigint, what: string): bigint => fit(a * b, U128_MAX, what);

/** ceil(a / b) for b > 0 (§4.5 unit derivation). */
export function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}
