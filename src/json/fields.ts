// Field readers for the documents this project writes (fixtures, run documents, t8n env and
// results, traces): the scenario-format §1 OUTPUT conventions, read strictly — integers are
// decimal strings without leading zeros, bytes are "0x" + hex, objects have exactly their
// fields. Every problem is a JsonError naming the JSON path. (Scenarios, written by people,
// also accept JSON-number integers: src/scenario/json.ts.)
import { echo } from "../bounds.js";
import { fromHex, HexError } from "../bytes.js";
import { childPath, JsonError, type Json, type JsonObject } from "./parse.js";

export const U64_MAX = (1n << 64n) - 1n;

/** An object whose members are all in `required` or `optional`, with every `required` one present. */
export function object(v: unknown, path: string, required: readonly string[], optional: readonly string[] = []): JsonObject {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new JsonError(path, "expected a JSON object");
  const o = v as JsonObject;
  for (const k of Object.keys(o)) {
    if (!required.includes(k) && !optional.includes(k)) {
      throw new JsonError(childPath(path, k), `unknown field (expected one of: ${[...required, ...optional].join(", ")})`);
    }
  }
  for (const k of required) if (o[k] === undefined) throw new JsonError(childPath(path, k), "missing");
  return o;
}

export function array(v: unknown, path: string, max: number): Json[] {
  if (!Array.isArray(v)) throw new JsonError(path, "expected a JSON array");
  if (v.length > max) throw new JsonError(path, `${v.length} entries exceed the bound ${max}`);
  return v as Json[];
}

export function string(v: unknown, path: string): string {
  if (typeof v !== "string") throw new JsonError(path, "expected a string");
  return v;
}

export function oneOf<T extends string>(v: unknown, path: string, values: readonly T[]): T {
  if (typeof v !== "string" || !(values as readonly string[]).includes(v)) {
    throw new JsonError(path, `expected ${values.map((x) => JSON.stringify(x)).join(" or ")}`);
  }
  return v as T;
}

/** An unsigned integer as a decimal string, no leading zeros, at most `max`. */
export function decimal(v: unknown, path: string, max: bigint = U64_MAX): bigint {
  if (typeof v !== "string" || !/^(0|[1-9][0-9]*)$/.test(v)) throw new JsonError(path, "expected an unsigned integer as a decimal string");
  if (v.length > 40) throw new JsonError(path, `${echo(v, 40)} is out of range`);
  const n = BigInt(v);
  if (n > max) throw new JsonError(path, `${v} exceeds the maximum ${max}`);
  return n;
}

/** "0x" + hex, of exactly `length` bytes or at most `maxLength` (checked on the text, before decoding). */
export function hex(v: unknown, path: string, length?: number, maxLength?: number): Uint8Array {
  if (typeof v !== "string") throw new JsonError(path, "expected a 0x-prefixed hex string");
  if (maxLength !== undefined && v.length > 2 + 2 * maxLength) {
    throw new JsonError(path, `${Math.floor((v.length - 2) / 2)} bytes exceed the bound of ${maxLength} bytes`);
  }
  try {
    return fromHex(v, length, "value");
  } catch (err) {
    if (err instanceof HexError) throw new JsonError(path, err.message.replace(/^value: /, ""));
    throw err;
  }
}

/** A SHA-256 digest as 64 lowercase hex digits without "0x" (the gas-vector digest convention). */
export function sha256Hex(v: unknown, path: string): string {
  if (typeof v !== "string" || !/^[0-9a-f]{64}$/.test(v)) throw new JsonError(path, "expected a SHA-256 digest as 64 lowercase hex digits");
  return v;
}

/** A non-negative safe integer written as a JSON number (trace counters, proof locations). */
export function count(v: unknown, path: string): number {
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) throw new JsonError(path, "expected a non-negative integer");
  return v;
}

/** "a", "a or b", "a, b or c" */
export function alternatives(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`;
}

/**
 * The one phrasing of "this is not the document expected": `$.format: missing (expected "…")` or
 * `$.format: unexpected format "x" (expected "…")`.
 */
export function formatProblem(format: unknown, expected: readonly string[]): string {
  const wanted = `expected ${alternatives(expected.map((f) => `"${f}"`))}`;
  if (format === undefined) return `missing (${wanted})`;
  const use = typeof format === "string" ? READ_BY[format] : undefined;
  return `unexpected format ${echo(JSON.stringify(format), 60)} (${wanted})${use === undefined ? "" : `; this is ${use}`}`;
}

/** What each of this project's documents is and which command takes it, for a document given to the wrong one. */
const READ_BY: Record<string, string> = {
  "cbqs-scenario/v1": "a scenario: cbqs run executes it, cbqs fill turns it into a fixture",
  "cbqs-fixture/v1": "a fixture: cbqs replay checks it, cbqs diff compares two",
  "cbqs-run/v1": "a run document (cbqs run --json): cbqs diff compares two",
  "cbqs-t8n-result/v1": "a t8n result: cbqs diff compares it with another or with a fixture",
  "cbqs-state-dump/v1": "a state dump: cbqs state diff compares two, cbqs t8n takes it as --input.alloc",
  "cbqs-trace/v1": "a trace (JSON lines): cbqs diff compares two",
  "cbqs-fuzz-report/v1": "a cbqs fuzz report: its fixture.json replays with cbqs replay",
};

/** Checks a document's `format` member. */
export function format(doc: JsonObject, expected: string): void {
  if (doc["format"] !== expected) throw new JsonError("$.format", formatProblem(doc["format"], [expected]));
}
