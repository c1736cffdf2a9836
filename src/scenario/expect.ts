// Partial matching of scenario expectations (scenario-format §3) against run-document JSON.
// Every listed field must equal; unlisted fields are not checked; nested objects match
// partially the same way. Expected values may use any §1 input convention: integers as
// numbers, hex in either case, {"ed25519_seed"} keys, and stream references.
import { toHex } from "../bytes.js";
import { ed25519PublicKeyFromSeed } from "../crypto/ed25519.js";
import { at, hexBytes, isObject, type Json } from "./json.js";
import { resolveStreamRef, type ChainIdentity } from "./refs.js";

export interface Mismatch {
  path: string;
  expected: Json;
  actual: Json | undefined;
}

export class ExpectationFailed extends Error {
  override name = "ExpectationFailed";
  constructor(readonly mismatch: Mismatch) {
    super(
      `expectation failed at ${mismatch.path}: expected ${JSON.stringify(mismatch.expected)}, actual ${
        mismatch.actual === undefined ? "(absent)" : JSON.stringify(mismatch.actual)
      }`,
    );
  }
}

const DECIMAL = /^[0-9]+$/;
const HEX = /^0x[0-9a-fA-F]*$/;

/** Returns the first mismatch of `expected` within `actual`, or null. */
export function partialMatch(expected: Json, actual: Json | undefined, path: string, id: ChainIdentity): Mismatch | null {
  const fail = (): Mismatch => ({ path, expected, actual });
  if (actual === undefined) return fail();
  if (isObject(expected)) {
    const converted = convertInputObject(expected, path, id, actual);
    if (converted !== undefined) return scalarEqual(converted, actual) ? null : { path, expected: converted, actual };
    if (!isObject(actual)) return fail();
    for (const key of Object.keys(expected)) {
      const m = partialMatch(expected[key]!, actual[key], at(path, key), id);
      if (m !== null) return m;
    }
    return null;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual) || actual.length !== expected.length) return fail();
    for (let i = 0; i < expected.length; i++) {
      const m = partialMatch(expected[i]!, actual[i], at(path, i), id);
      if (m !== null) return m;
    }
    return null;
  }
  return scalarEqual(expected, actual) ? null : fail();
}

/** Input-only object forms that stand for a plain output value, or undefined. */
function convertInputObject(o: { [k: string]: Json }, path: string, id: ChainIdentity, actual: Json): Json | undefined {
  const keys = Object.keys(o);
  if (keys.length === 1 && keys[0] === "ed25519_seed") {
    return { ed25519: toHex(ed25519PublicKeyFromSeed(hexBytes(o["ed25519_seed"], at(path, "ed25519_seed"), 32))) };
  }
  const isRef = (keys.length === 1 && keys[0] === "key_stream_of") || (keys.length === 2 && "owner" in o && "owner_nonce" in o);
  if (isRef && typeof actual === "string") return toHex(resolveStreamRef(o, path, id));
  return undefined;
}

function scalarEqual(expected: Json, actual: Json): boolean {
  if (isObject(expected)) {
    if (!isObject(actual)) return false;
    const e = expected;
    const ek = Object.keys(e);
    return ek.length === Object.keys(actual).length && ek.every((k) => actual[k] !== undefined && scalarEqual(e[k]!, actual[k]!));
  }
  if (typeof expected === "number" && Number.isSafeInteger(expected)) expected = String(expected);
  if (typeof expected === "string" && typeof actual === "string") {
    if (DECIMAL.test(expected) && DECIMAL.test(actual)) return BigInt(expected) === BigInt(actual);
    if (HEX.test(expected) && HEX.test(actual)) return expected.toLowerCase() === actual.toLowerCase();
  }
  return expected === actual;
}
