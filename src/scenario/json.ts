// Path-aware readers for the scenario-format §1 value conventions. Every failure is a
// ScenarioError naming the JSON path ("$.blocks[2].txs[0].from"), which the CLI reports
// as one line with exit 2 (unusable input).
import { echo } from "../bounds.js";
import { fromHex, HexError } from "../bytes.js";
import { childPath, JsonError } from "../json/parse.js";

export class ScenarioError extends JsonError {
  override name = "ScenarioError";
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
export type JsonObject = { [key: string]: Json };

export function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function obj(v: unknown, path: string): JsonObject {
  if (!isObject(v)) throw new ScenarioError(path, "expected a JSON object");
  return v;
}

export function arr(v: unknown, path: string): Json[] {
  if (!Array.isArray(v)) throw new ScenarioError(path, "expected a JSON array");
  return v as Json[];
}

export function str(v: unknown, path: string): string {
  if (typeof v !== "string") throw new ScenarioError(path, "expected a string");
  return v;
}

/** Rejects keys outside `allowed` so a typo never silently means "absent". */
export function onlyKeys(o: JsonObject, allowed: readonly string[], path: string): void {
  for (const k of Object.keys(o)) {
    if (!allowed.includes(k)) throw new ScenarioError(at(path, k), `unknown field (expected one of: ${allowed.join(", ")})`);
  }
}

/** §1 integers: a decimal string, or a safe-integer JSON number; checked against `max`. */
export function uint(v: unknown, path: string, max: bigint): bigint {
  let n: bigint;
  if (typeof v === "string" && /^[0-9]+$/.test(v)) n = BigInt(v);
  else if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) n = BigInt(v);
  else throw new ScenarioError(path, "expected an unsigned integer (decimal string or safe JSON integer)");
  if (n > max) throw new ScenarioError(path, `${echo(String(v))} exceeds the maximum ${max}`);
  return n;
}

export const U64_MAX = (1n << 64n) - 1n;
export const U128_MAX = (1n << 128n) - 1n;

export const u64 = (v: unknown, path: string): bigint => uint(v, path, U64_MAX);

/** §1 byte strings: "0x" + hex of the exact length (either case). */
export function hexBytes(v: unknown, path: string, length?: number): Uint8Array {
  if (typeof v !== "string") throw new ScenarioError(path, "expected a 0x-prefixed hex string");
  try {
    return fromHex(v, length);
  } catch (err) {
    if (err instanceof HexError) throw new ScenarioError(path, err.message.replace(/^hex value: /, ""));
    throw err;
  }
}

export const address = (v: unknown, path: string): Uint8Array => hexBytes(v, path, 20);

/** Seconds since the epoch from an RFC 3339 UTC timestamp ("2026-01-01T00:00:00Z") or an integer. */
export function timestamp(v: unknown, path: string): bigint {
  if (typeof v === "number" || (typeof v === "string" && /^[0-9]+$/.test(v))) return u64(v, path);
  const s = str(v, path);
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/.exec(s);
  if (m === null) throw new ScenarioError(path, 'expected an RFC 3339 UTC timestamp like "2026-01-01T00:00:00Z" or integer seconds');
  const [y, mo, d, h, mi, se] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const ms = Date.UTC(y, mo - 1, d, h, mi, se);
  const back = new Date(ms);
  if (back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d || h > 23 || mi > 59 || se > 59 || ms < 0) {
    throw new ScenarioError(path, `not a valid date-time: ${echo(s, 40)}`);
  }
  return BigInt(ms / 1000);
}

/** Child path helper (the one path syntax of every reader, src/json/parse.ts). */
export const at = childPath;
