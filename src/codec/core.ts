// The §14 canonical codec as combinators. Each type is declared once (src/codec/schema.ts)
// and that one declaration yields the encoder, the strict bounded decoder, the JSON mapping
// (docs/reference/formats/scenario.md §1) and a fast-check arbitrary.
import type * as FC from "fast-check";
import { echo } from "../bounds.js";
import { HexError, fromHex, readU64BE, toHex, writeU64BE } from "../bytes.js";
import { childPath } from "../json/parse.js";
import { DecodeError, EncodeError, JsonValueError, type DecodeErrorKind } from "./errors.js";

export type FastCheck = typeof FC;
export type Arbitrary<T> = FC.Arbitrary<T>;
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

export interface JsonContext {
  /**
   * Called for a Bytes32 field whose JSON is not a hex string (the scenario runner resolves
   * stream references here). Returns the 32 bytes, or undefined to reject the value.
   */
  resolveBytes32?: (value: unknown, path: string) => Uint8Array | undefined;
}

/** A JSON Schema (draft 2020-12) node. */
export type JsonSchema = { [key: string]: unknown };
/** Named schemas collected while describing a type (`$defs`): structs and unions are referenced by name. */
export type SchemaDefs = Record<string, JsonSchema>;

export interface Codec<T> {
  readonly name: string;
  /** Smallest possible encoding; bounds a vector count by the remaining input before allocating. */
  readonly minSize: number;
  /** True for Option<T>: a JSON struct field may then be absent (= None). */
  readonly optional?: boolean;
  write(w: Writer, value: T, path: string): void;
  read(r: Reader, path: string): T;
  toJson(value: T): Json;
  fromJson(json: unknown, path: string, ctx: JsonContext): T;
  arbitrary(fc: FastCheck): Arbitrary<T>;
  /** The JSON Schema of what `fromJson` accepts (named types go into `defs` and are referenced). */
  jsonSchema(defs: SchemaDefs): JsonSchema;
}

/** The JSON Schema of one codec's JSON form, with its `$defs` (docs/reference/formats/scenario.md). */
export function jsonSchemaOf(codec: Codec<unknown>): { schema: JsonSchema; defs: SchemaDefs } {
  const defs: SchemaDefs = {};
  return { schema: codec.jsonSchema(defs), defs };
}

/** A named schema: described once into `defs`, referenced everywhere. */
function named(defs: SchemaDefs, name: string, describe: () => JsonSchema): JsonSchema {
  if (!Object.hasOwn(defs, name)) {
    defs[name] = {}; // placeholder: a name is described once even if it refers to itself
    defs[name] = describe();
  }
  return { $ref: `#/$defs/${name}` };
}

const hexSchema = (bytes?: number): JsonSchema =>
  bytes === undefined
    ? { type: "string", pattern: "^0x([0-9a-fA-F]{2})*$" }
    : { type: "string", pattern: `^0x[0-9a-fA-F]{${2 * bytes}}$` };

/** §1 integers: a decimal string, or a JSON integer within the safe range. */
export const integerSchema = (max: bigint, what: string): JsonSchema => ({
  type: ["string", "integer"],
  pattern: "^[0-9]{1,80}$",
  minimum: 0,
  maximum: Number(max < BigInt(Number.MAX_SAFE_INTEGER) ? max : BigInt(Number.MAX_SAFE_INTEGER)),
  description: `${what}: a decimal string (any size up to ${max}) or a JSON integer`,
});

// ---------------------------------------------------------------- byte cursors

const U64_LIMIT = 1n << 64n;

export class Writer {
  /** Room for every registry record at once (a stream record is ~450 bytes): growing copies. */
  private buf = new Uint8Array(1024);
  private len = 0;

  /** `paths`: build field paths for the errors (joinPath); off on encode's first attempt. */
  constructor(readonly paths = true) {}

  private reserve(n: number): void {
    if (this.len + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.len + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  byte(b: number): void {
    this.reserve(1);
    this.buf[this.len++] = b;
  }

  bytes(data: Uint8Array): void {
    this.reserve(data.length);
    this.buf.set(data, this.len);
    this.len += data.length;
  }

  /** Big-endian unsigned integer of `width` bytes; the caller has range-checked `value`. */
  uint(value: bigint, width: number): void {
    this.reserve(width);
    if (width >= 8 && value < U64_LIMIT) {
      // Most u64/u128 values fit 64 bits (and most of those 2^53: writeU64BE then needs no BigInt arithmetic).
      const end = this.len + width;
      this.buf.fill(0, this.len, end - 8);
      writeU64BE(this.buf, end - 8, value);
      this.len = end;
      return;
    }
    // 32 bits per BigInt step (records are mostly u64/u128 fields), then single bytes.
    let v = value;
    let i = width - 1;
    for (; i >= 3; i -= 4) {
      const word = Number(v & 0xffff_ffffn);
      this.buf[this.len + i] = word & 0xff;
      this.buf[this.len + i - 1] = (word >>> 8) & 0xff;
      this.buf[this.len + i - 2] = (word >>> 16) & 0xff;
      this.buf[this.len + i - 3] = word >>> 24;
      v >>= 32n;
    }
    for (; i >= 0; i--) {
      this.buf[this.len + i] = Number(v & 0xffn);
      v >>= 8n;
    }
    this.len += width;
  }

  /** Bytes written so far. */
  get length(): number {
    return this.len;
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.len);
  }

  /** Empties the writer, keeping its buffer. */
  reset(): void {
    this.len = 0;
  }
}

export class Reader {
  pos = 0;
  readonly bytes: Uint8Array;
  /** `paths`: build field paths for the errors (joinPath); off on decode's first attempt. */
  constructor(
    input: Uint8Array,
    readonly paths = true,
  ) {
    // A plain Uint8Array view, so take() copies even when given a Node Buffer (whose slice aliases).
    this.bytes = new Uint8Array(input.buffer, input.byteOffset, input.byteLength);
  }

  get remaining(): number {
    return this.bytes.length - this.pos;
  }

  fail(kind: DecodeErrorKind, path: string, reason: string, offset = this.pos): never {
    throw new DecodeError(kind, offset, path, reason);
  }

  need(n: number, path: string): void {
    if (n > this.remaining) {
      this.fail("Truncated", path, `needs ${n} bytes, ${this.remaining} remain`);
    }
  }

  /** A copy of the next n bytes (decoded values never alias the input). */
  take(n: number, path: string): Uint8Array {
    this.need(n, path);
    const out = this.bytes.slice(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  byte(path: string): number {
    this.need(1, path);
    return this.bytes[this.pos++]!;
  }

  uint(width: number, path: string): bigint {
    this.need(width, path);
    const b = this.bytes;
    if (width >= 8) {
      // A value within 64 bits (the bytes above them zero) is read by readU64BE: one BigInt below 2^53, not five.
      const end = this.pos + width;
      let zero = true;
      for (let k = this.pos; zero && k < end - 8; k++) zero = b[k] === 0;
      if (zero) {
        this.pos = end;
        return readU64BE(b, end - 8);
      }
    }
    let v = 0n;
    let i = 0;
    for (; i < width % 4; i++) v = (v << 8n) | BigInt(b[this.pos + i]!);
    // 32 bits per BigInt step.
    for (; i < width; i += 4) {
      const p = this.pos + i;
      v = (v << 32n) | BigInt(((b[p]! << 24) | (b[p + 1]! << 16) | (b[p + 2]! << 8) | b[p + 3]!) >>> 0);
    }
    this.pos += width;
    return v;
  }

  /** u8/u16/u32 as a JS number. */
  small(width: 1 | 2 | 4, path: string): number {
    this.need(width, path);
    let v = 0;
    for (let i = 0; i < width; i++) v = v * 256 + this.bytes[this.pos + i]!;
    this.pos += width;
    return v;
  }
}

// ---------------------------------------------------------------- top-level entry points

export function encode<T>(codec: Codec<T>, value: T): Uint8Array {
  try {
    return encodeOnce(codec, value, false);
  } catch (err) {
    if (!isCodecError(err)) throw err;
    encodeOnce(codec, value, true);
    throw err;
  }
}

/** Strict decode: the whole input must be exactly one canonical value (§14). */
export function decode<T>(codec: Codec<T>, bytes: Uint8Array): T {
  try {
    return decodeOnce(codec, bytes, false);
  } catch (err) {
    if (!isCodecError(err)) throw err;
    decodeOnce(codec, bytes, true);
    throw err;
  }
}

// Field paths (`a.b[2].c`) name the offending value in an EncodeError or DecodeError, and only
// there. Building them cost ~15 % of every encode and decode, so `decode` and `encode` first run
// without them (a Reader or Writer whose `paths` is off) and, only when that fails, run again
// with them, to name the field (the same input fails at the same place). Should the second run
// succeed, the first error stands. Any other caller of a codec's read or write gets paths
// throughout.

function encodeOnce<T>(codec: Codec<T>, value: T, paths: boolean): Uint8Array {
  const w = new Writer(paths);
  codec.write(w, value, "");
  return w.finish();
}

function decodeOnce<T>(codec: Codec<T>, bytes: Uint8Array, paths: boolean): T {
  const r = new Reader(bytes, paths);
  const value = codec.read(r, "");
  if (r.remaining !== 0) r.fail("TrailingBytes", "", `${r.remaining} bytes after the ${codec.name}`);
  return value;
}

/** The errors that carry a field path (a codec's read may write, as derive.ts does, and the reverse). */
function isCodecError(err: unknown): boolean {
  return err instanceof DecodeError || err instanceof EncodeError;
}

export function toJson<T>(codec: Codec<T>, value: T): Json {
  return codec.toJson(value);
}

export function fromJson<T>(codec: Codec<T>, json: unknown, ctx: JsonContext = {}): T {
  return codec.fromJson(json, "$", ctx);
}

/** `path.key` when `at` (the Reader or Writer at work) builds paths, else "". */
export function joinPath(at: { readonly paths: boolean }, path: string, key: string): string {
  if (!at.paths) return "";
  return path === "" ? key : `${path}.${key}`;
}

export function indexPath(at: { readonly paths: boolean }, path: string, index: number): string {
  return at.paths ? `${path}[${index}]` : "";
}

function jsonFail(path: string, reason: string): never {
  throw new JsonValueError(path, reason);
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array);
}

// ---------------------------------------------------------------- integers

const DECIMAL_RE = /^[0-9]{1,80}$/;

function jsonInteger(json: unknown, path: string, max: bigint): bigint {
  let v: bigint;
  if (typeof json === "string" && DECIMAL_RE.test(json)) v = BigInt(json);
  else if (typeof json === "number" && Number.isSafeInteger(json) && json >= 0) v = BigInt(json);
  else return jsonFail(path, "expected a decimal integer string (or a safe-integer number)");
  if (v > max) jsonFail(path, `integer ${echo(String(json))} exceeds ${max}`);
  return v;
}

/** u8/u16/u32 as `number` (§14: unsigned big-endian). */
function smallUint(width: 1 | 2 | 4): Codec<number> {
  const max = 2 ** (8 * width) - 1;
  const name = `u${8 * width}`;
  return {
    name,
    minSize: width,
    write(w, v, path) {
      if (!Number.isInteger(v) || v < 0 || v > max) throw new EncodeError(path, `${v} is not a ${name}`);
      w.uint(BigInt(v), width);
    },
    read: (r, path) => r.small(width, path),
    toJson: (v) => String(v),
    fromJson: (j, path) => Number(jsonInteger(j, path, BigInt(max))),
    arbitrary: (fc) => fc.integer({ min: 0, max }),
    jsonSchema: () => integerSchema(BigInt(max), name),
  };
}

/** u64/u128 as `bigint` (§14: unsigned big-endian). */
function bigUint(width: 8 | 16): Codec<bigint> {
  const max = (1n << BigInt(8 * width)) - 1n;
  const name = `u${8 * width}`;
  return {
    name,
    minSize: width,
    write(w, v, path) {
      if (typeof v !== "bigint" || v < 0n || v > max) throw new EncodeError(path, `${v} is not a ${name}`);
      w.uint(v, width);
    },
    read: (r, path) => r.uint(width, path),
    toJson: (v) => v.toString(),
    fromJson: (j, path) => jsonInteger(j, path, max),
    arbitrary: (fc) => fc.oneof(fc.bigInt({ min: 0n, max }), fc.constantFrom(0n, 1n, max)),
    jsonSchema: () => integerSchema(max, name),
  };
}

export const u8 = smallUint(1);
export const u16 = smallUint(2);
export const u32 = smallUint(4);
export const u64 = bigUint(8);
export const u128 = bigUint(16);

/** A version byte: v1 encodes 1; any other value decodes to UnsupportedVersion (§17 3937). */
export const versionV1: Codec<number> = {
  name: "version",
  minSize: 1,
  write(w, v, path) {
    if (v !== 1) throw new EncodeError(path, `version must be 1, got ${v}`);
    w.byte(1);
  },
  read(r, path) {
    const at = r.pos;
    const v = r.byte(path);
    if (v !== 1) r.fail("UnsupportedVersion", path, `version ${v} is not supported (v1 only)`, at);
    return v;
  },
  toJson: () => "1",
  fromJson(j, path) {
    const v = jsonInteger(j, path, 255n);
    if (v !== 1n) jsonFail(path, `version must be 1, got ${v}`);
    return 1;
  },
  arbitrary: (fc) => fc.constant(1),
  jsonSchema: () => ({ enum: ["1", 1], description: "version: 1" }),
};

/** §4: every v1 `provider_epoch` MUST be zero; encoders emit zero, decoders reject nonzero. */
export const providerEpochV1: Codec<bigint> = {
  name: "provider_epoch",
  minSize: 8,
  write(w, v, path) {
    if (v !== 0n) throw new EncodeError(path, "provider_epoch must be 0 in v1 (§4)");
    w.uint(0n, 8);
  },
  read(r, path) {
    const at = r.pos;
    const v = r.uint(8, path);
    if (v !== 0n) r.fail("InvalidValue", path, `provider_epoch must be 0 in v1 (§4), got ${v}`, at);
    return v;
  },
  toJson: () => "0",
  fromJson(j, path) {
    const v = jsonInteger(j, path, (1n << 64n) - 1n);
    if (v !== 0n) jsonFail(path, "provider_epoch must be 0 in v1 (§4)");
    return 0n;
  },
  arbitrary: (fc) => fc.constant(0n),
  jsonSchema: () => ({ enum: ["0", 0], description: "provider_epoch: always 0 in v1 (§4)" }),
};

/** bool: one byte, 0 or 1; any other byte is invalid (D-0027). */
export const bool: Codec<boolean> = {
  name: "bool",
  minSize: 1,
  write(w, v, path) {
    if (typeof v !== "boolean") throw new EncodeError(path, "expected a boolean");
    w.byte(v ? 1 : 0);
  },
  read(r, path) {
    const at = r.pos;
    const b = r.byte(path);
    if (b > 1) r.fail("InvalidTag", path, `bool byte must be 0 or 1, got ${b}`, at);
    return b === 1;
  },
  toJson: (v) => v,
  fromJson(j, path) {
    if (typeof j !== "boolean") jsonFail(path, "expected true or false");
    return j;
  },
  arbitrary: (fc) => fc.boolean(),
  jsonSchema: () => ({ type: "boolean" }),
};

// ---------------------------------------------------------------- byte strings

/** Fixed-width raw bytes (§14: addresses and fixed byte strings are their raw bytes). */
export function fixedBytes(length: number, name: string, opts: { resolvable?: boolean } = {}): Codec<Uint8Array> {
  return {
    name,
    minSize: length,
    write(w, v, path) {
      if (!(v instanceof Uint8Array) || v.length !== length) {
        throw new EncodeError(path, `${name} must be exactly ${length} bytes`);
      }
      w.bytes(v);
    },
    read: (r, path) => r.take(length, path),
    toJson: (v) => toHex(v),
    fromJson(j, path, ctx) {
      if (typeof j !== "string" && opts.resolvable && ctx.resolveBytes32) {
        const resolved = ctx.resolveBytes32(j, path);
        if (resolved === undefined || resolved.length !== length) {
          jsonFail(path, `not a ${name} and not a resolvable reference`);
        }
        return resolved;
      }
      return hexJson(j, path, name, length);
    },
    arbitrary: (fc) => fc.uint8Array({ minLength: length, maxLength: length }),
    jsonSchema: (defs) =>
      opts.resolvable
        ? {
            anyOf: [
              hexSchema(length),
              // What a reference is belongs to the scenario format (src/scenario/schema.ts refines it).
              named(defs, "StreamReference", () => ({ type: "object", description: "a stream reference (scenario input)" })),
            ],
            description: `${name}: ${length} bytes as 0x-hex, or (in a scenario) a stream reference`,
          }
        : { ...hexSchema(length), description: `${name}: ${length} bytes as 0x-hex` },
  };
}

function hexJson(j: unknown, path: string, name: string, length?: number): Uint8Array {
  if (typeof j !== "string") jsonFail(path, `expected a 0x-hex ${name}`);
  try {
    return fromHex(j, length, name);
  } catch (err) {
    if (err instanceof HexError) jsonFail(path, err.message);
    throw err;
  }
}

/** Variable byte string: `u32 length || bytes` (§14), length within [min, max]. */
export function varBytes(name: string, min: number, max: number): Codec<Uint8Array> {
  return {
    name,
    minSize: 4 + min,
    write(w, v, path) {
      if (!(v instanceof Uint8Array) || v.length < min || v.length > max) {
        throw new EncodeError(path, `${name} length must be in [${min}, ${max}]`);
      }
      w.uint(BigInt(v.length), 4);
      w.bytes(v);
    },
    read(r, path) {
      const at = r.pos;
      const n = r.small(4, path);
      if (n > max) r.fail("BoundExceeded", path, `${name} length ${n} exceeds ${max}`, at);
      if (n < min) r.fail("InvalidValue", path, `${name} length ${n} is below ${min}`, at);
      return r.take(n, path);
    },
    toJson: (v) => toHex(v),
    fromJson(j, path) {
      const v = hexJson(j, path, name);
      if (v.length < min || v.length > max) jsonFail(path, `${name} length must be in [${min}, ${max}]`);
      return v;
    },
    arbitrary: (fc) => fc.uint8Array({ minLength: min, maxLength: Math.min(max, min + 64) }),
    jsonSchema: () => ({ ...hexSchema(), minLength: 2 + 2 * min, maxLength: 2 + 2 * max, description: `${name}: ${min} to ${max} bytes as 0x-hex` }),
  };
}

const UTF8_DECODER = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const UTF8_ENCODER = new TextEncoder();

export interface StringRules {
  maxBytes: number;
  /** Checks the raw bytes before they are decoded; returns a reason to reject, or null. */
  checkRaw?: (raw: Uint8Array) => string | null;
  arbitrary: (fc: FastCheck) => Arbitrary<string>;
}

/** String: `u32 length || UTF-8` (§14); invalid UTF-8 is rejected. */
export function utf8String(name: string, rules: StringRules): Codec<string> {
  const check = (raw: Uint8Array): string | null => {
    if (raw.length > rules.maxBytes) return `${name} is ${raw.length} bytes, above ${rules.maxBytes}`;
    return rules.checkRaw ? rules.checkRaw(raw) : null;
  };
  return {
    name,
    minSize: 4,
    write(w, v, path) {
      if (typeof v !== "string") throw new EncodeError(path, `${name} must be a string`);
      const raw = UTF8_ENCODER.encode(v);
      const bad = check(raw);
      if (bad !== null) throw new EncodeError(path, bad);
      if (UTF8_DECODER.decode(raw) !== v) throw new EncodeError(path, `${name} contains unpaired surrogates`);
      w.uint(BigInt(raw.length), 4);
      w.bytes(raw);
    },
    read(r, path) {
      const at = r.pos;
      const n = r.small(4, path);
      if (n > rules.maxBytes) r.fail("BoundExceeded", path, `${name} length ${n} exceeds ${rules.maxBytes}`, at);
      const raw = r.take(n, path);
      const bad = check(raw);
      if (bad !== null) r.fail("InvalidValue", path, bad, at);
      try {
        return UTF8_DECODER.decode(raw);
      } catch {
        return r.fail("InvalidValue", path, `${name} is not valid UTF-8`, at);
      }
    },
    toJson: (v) => v,
    fromJson(j, path) {
      if (typeof j !== "string") jsonFail(path, `${name} must be a string`);
      const raw = UTF8_ENCODER.encode(j);
      const bad = check(raw);
      if (bad !== null) jsonFail(path, bad);
      if (UTF8_DECODER.decode(raw) !== j) jsonFail(path, `${name} contains unpaired surrogates`);
      return j;
    },
    arbitrary: rules.arbitrary,
    jsonSchema: () => ({ type: "string", description: `${name}: UTF-8, at most ${rules.maxBytes} bytes` }),
  };
}

// ---------------------------------------------------------------- option, vector

/** Option: tag 0 = absent, tag 1 || value = present (§14). JSON: null or absent = None. */
export function option<T>(inner: Codec<T>): Codec<T | null> {
  return {
    name: `Option<${inner.name}>`,
    minSize: 1,
    optional: true,
    write(w, v, path) {
      if (v === null || v === undefined) {
        w.byte(0);
      } else {
        w.byte(1);
        inner.write(w, v, path);
      }
    },
    read(r, path) {
      const at = r.pos;
      const tag = r.byte(path);
      if (tag === 0) return null;
      if (tag !== 1) r.fail("InvalidTag", path, `option tag must be 0 or 1, got ${tag}`, at);
      return inner.read(r, path);
    },
    toJson: (v) => (v === null ? null : inner.toJson(v)),
    fromJson: (j, path, ctx) => (j === null || j === undefined ? null : inner.fromJson(j, path, ctx)),
    arbitrary: (fc) => fc.option(inner.arbitrary(fc), { nil: null }),
    jsonSchema: (defs) => ({ anyOf: [inner.jsonSchema(defs), { type: "null" }], description: "optional: null or absent means none" }),
  };
}

export interface VecRules<T> {
  /** Maximum element count, checked against the u32 count before any allocation. */
  maxCount: number;
  /** When given, elements must be strictly ascending under this order (sorted, no duplicates). */
  strictlyAscending?: (a: T, b: T) => number;
  /** When given, the elements' encodings (the count prefix excluded) total at most this many bytes. */
  maxBytes?: number;
}

/** Largest vector the arbitraries generate: keeps property tests fast; bounds have their own tests. */
const ARBITRARY_MAX_ELEMENTS = 4;

/** Vector: `u32 count || elements` (§14), count within its bound. */
export function vec<T>(elem: Codec<T>, rules: VecRules<T>): Codec<T[]> {
  const { maxCount, strictlyAscending: cmp, maxBytes } = rules;
  const orderProblem = (v: T[]): number => {
    if (!cmp) return -1;
    for (let i = 1; i < v.length; i++) if (cmp(v[i - 1]!, v[i]!) >= 0) return i;
    return -1;
  };
  return {
    name: `Vec<${elem.name}>`,
    minSize: 4,
    write(w, v, path) {
      if (!Array.isArray(v)) throw new EncodeError(path, "expected an array");
      if (v.length > maxCount) throw new EncodeError(path, `${v.length} elements exceed the bound ${maxCount}`);
      const bad = orderProblem(v);
      if (bad >= 0) throw new EncodeError(indexPath(w, path, bad), "elements must be strictly ascending");
      w.uint(BigInt(v.length), 4);
      const start = w.length;
      v.forEach((e, i) => {
        elem.write(w, e, indexPath(w, path, i));
        if (maxBytes !== undefined && w.length - start > maxBytes) {
          throw new EncodeError(indexPath(w, path, i), `elements exceed ${maxBytes} bytes in total`);
        }
      });
    },
    read(r, path) {
      const at = r.pos;
      const n = r.small(4, path);
      if (n > maxCount) r.fail("BoundExceeded", path, `count ${n} exceeds the bound ${maxCount}`, at);
      // Before allocating: every element takes at least minSize bytes.
      if (n * elem.minSize > r.remaining) {
        r.fail("Truncated", path, `count ${n} needs at least ${n * elem.minSize} bytes, ${r.remaining} remain`, at);
      }
      const out: T[] = [];
      const start = r.pos;
      for (let i = 0; i < n; i++) {
        const elemAt = r.pos;
        const e = elem.read(r, indexPath(r, path, i));
        if (maxBytes !== undefined && r.pos - start > maxBytes) {
          r.fail("BoundExceeded", indexPath(r, path, i), `elements exceed ${maxBytes} bytes in total`, elemAt);
        }
        if (cmp && i > 0 && cmp(out[i - 1]!, e) >= 0) {
          r.fail("InvalidValue", indexPath(r, path, i), "elements must be strictly ascending", elemAt);
        }
        out.push(e);
      }
      return out;
    },
    toJson: (v) => v.map((e) => elem.toJson(e)),
    fromJson(j, path, ctx) {
      if (!Array.isArray(j)) jsonFail(path, "expected an array");
      if (j.length > maxCount) jsonFail(path, `${j.length} elements exceed the bound ${maxCount}`);
      const out = j.map((e, i) => elem.fromJson(e, `${path}[${i}]`, ctx));
      const bad = orderProblem(out);
      if (bad >= 0) jsonFail(`${path}[${bad}]`, "elements must be strictly ascending");
      if (maxBytes !== undefined) {
        const w = new Writer();
        out.forEach((e, i) => {
          elem.write(w, e, `${path}[${i}]`);
          if (w.length > maxBytes) jsonFail(`${path}[${i}]`, `elements exceed ${maxBytes} bytes in total`);
        });
      }
      return out;
    },
    arbitrary(fc) {
      const maxLength = Math.min(maxCount, ARBITRARY_MAX_ELEMENTS);
      if (!cmp) return fc.array(elem.arbitrary(fc), { maxLength });
      return fc
        .uniqueArray(elem.arbitrary(fc), { maxLength, comparator: (a, b) => cmp(a, b) === 0 })
        .map((xs) => [...xs].sort(cmp));
    },
    jsonSchema: (defs) => ({
      type: "array",
      items: elem.jsonSchema(defs),
      maxItems: maxCount,
      ...(cmp ? { description: "elements strictly ascending (sorted, no duplicates)" } : {}),
    }),
  };
}

// ---------------------------------------------------------------- enums

/** A fieldless enum with declared numeric tags; unknown tags are invalid (§14). */
export function enumeration<N extends string>(name: string, tags: Record<N, number>, width: 1 | 2 = 1): Codec<N> {
  const names = Object.keys(tags) as N[];
  const byTag = new Map<number, N>(names.map((n) => [tags[n], n]));
  return {
    name,
    minSize: width,
    write(w, v, path) {
      if (!Object.hasOwn(tags, v)) throw new EncodeError(path, `unknown ${name} variant ${String(v)}`);
      w.uint(BigInt(tags[v]), width);
    },
    read(r, path) {
      const at = r.pos;
      const tag = r.small(width, path);
      const v = byTag.get(tag);
      return v ?? r.fail("InvalidTag", path, `unknown ${name} tag ${tag}`, at);
    },
    toJson: (v) => v,
    fromJson(j, path) {
      if (typeof j !== "string" || !Object.hasOwn(tags, j)) {
        jsonFail(path, `expected one of ${names.map((n) => `"${n}"`).join(", ")}`);
      }
      return j as N;
    },
    arbitrary: (fc) => fc.constantFrom(...names),
    jsonSchema: () => ({ enum: names, description: name }),
  };
}

// ---------------------------------------------------------------- structs

export type StructFields<T> = { [K in keyof T]-?: Codec<T[K]> };

/** A structural invariant: returns the offending field and the reason, or null when valid. */
export type StructCheck<T> = (value: T) => { field: keyof T & string; reason: string } | null;

export interface StructCodec<T> extends Codec<T> {
  /** Field codecs in declaration order (§14: struct fields appear in the order listed). */
  readonly fields: readonly (readonly [keyof T & string, Codec<unknown>])[];
}

/**
 * A struct: its fields' encodings concatenated in declaration order. `fields` is written in
 * the spec's declaration order; JS preserves the insertion order of string keys.
 */
export function struct<T extends object>(
  name: string,
  fields: StructFields<T>,
  opts: { check?: StructCheck<T>; arbitrary?: (fc: FastCheck, base: Arbitrary<T>) => Arbitrary<T> } = {},
): StructCodec<T> {
  const entries = Object.entries(fields) as [keyof T & string, Codec<unknown>][];
  const keys = new Set<string>(entries.map(([k]) => k));
  const minSize = entries.reduce((s, [, c]) => s + c.minSize, 0);
  const { check } = opts;
  const codec: StructCodec<T> = {
    name,
    minSize,
    fields: entries,
    write(w, v, path) {
      if (!isPlainObject(v)) throw new EncodeError(path, `${name} must be an object`);
      if (check) {
        const bad = check(v);
        if (bad) throw new EncodeError(joinPath(w, path, bad.field), bad.reason);
      }
      const rec = v as Record<string, unknown>;
      for (const [k, c] of entries) c.write(w, rec[k], joinPath(w, path, k));
    },
    read(r, path) {
      const out: Record<string, unknown> = {};
      // Field offsets are kept only for structs with an invariant, to report where it failed.
      const offsets: Record<string, number> | undefined = check ? {} : undefined;
      for (const [k, c] of entries) {
        if (offsets) offsets[k] = r.pos;
        out[k] = c.read(r, joinPath(r, path, k));
      }
      const value = out as T;
      if (check) {
        const bad = check(value);
        if (bad) r.fail("InvalidValue", joinPath(r, path, bad.field), bad.reason, offsets?.[bad.field]);
      }
      return value;
    },
    toJson(v) {
      const out: { [key: string]: Json } = {};
      const rec = v as Record<string, unknown>;
      for (const [k, c] of entries) out[k] = c.toJson(rec[k]);
      return out;
    },
    fromJson(j, path, ctx) {
      if (!isPlainObject(j)) jsonFail(path, `expected a ${name} object`);
      for (const k of Object.keys(j)) if (!keys.has(k)) jsonFail(childPath(path, k), `unknown field of ${name} (expected one of: ${[...keys].join(", ")})`);
      const out: Record<string, unknown> = {};
      for (const [k, c] of entries) {
        const fieldPath = `${path}.${k}`;
        const field = j[k];
        if (field === undefined && !c.optional) jsonFail(fieldPath, "missing field");
        out[k] = c.fromJson(field, fieldPath, ctx);
      }
      const value = out as T;
      if (check) {
        const bad = check(value);
        if (bad) jsonFail(`${path}.${bad.field}`, bad.reason);
      }
      return value;
    },
    arbitrary(fc) {
      const parts: Record<string, Arbitrary<unknown>> = {};
      for (const [k, c] of entries) parts[k] = c.arbitrary(fc);
      const base = fc.record(parts) as unknown as Arbitrary<T>;
      return opts.arbitrary ? opts.arbitrary(fc, base) : base;
    },
    jsonSchema: (defs) =>
      named(defs, name, () => ({
        type: "object",
        properties: Object.fromEntries(entries.map(([k, c]) => [k, c.jsonSchema(defs)])),
        required: entries.filter(([, c]) => !c.optional).map(([k]) => k),
        additionalProperties: false,
      })),
  };
  return codec;
}

// ---------------------------------------------------------------- tagged unions

/**
 * One variant of a tagged union. The in-memory value is `{ type: <variant name>, ...payload }`.
 * - unit: no payload; JSON is the bare name `"Keep"`.
 * - newtype: one payload field `field`; JSON is `{"Set": <payload JSON>}`.
 * - struct: the payload struct's fields are flattened into the value; JSON is `{"Name": {fields}}`.
 */
export type VariantDef =
  | { tag: number; kind: "unit" }
  | { tag: number; kind: "newtype"; field: string; codec: Codec<any> }
  | { tag: number; kind: "struct"; codec: StructCodec<any> };

export function taggedUnion<T extends { type: string }>(
  name: string,
  variants: Record<T["type"], VariantDef>,
  /** Tag width: one byte, or a u16 for the §7.1 method-tagged bodies. */
  width: 1 | 2 = 1,
): Codec<T> {
  const names = Object.keys(variants) as T["type"][];
  const byTag = new Map<number, T["type"]>(names.map((n) => [variants[n].tag, n]));
  const def = (type: string): VariantDef | undefined => (Object.hasOwn(variants, type) ? variants[type as T["type"]] : undefined);
  return {
    name,
    minSize: width,
    write(w, v, path) {
      const d = isPlainObject(v) ? def(String(v.type)) : undefined;
      if (!d) throw new EncodeError(path, `not a ${name} variant`);
      w.uint(BigInt(d.tag), width);
      if (d.kind === "newtype") d.codec.write(w, (v as Record<string, unknown>)[d.field], joinPath(w, path, d.field));
      else if (d.kind === "struct") d.codec.write(w, v, path);
    },
    read(r, path) {
      const at = r.pos;
      const tag = r.small(width, path);
      const type = byTag.get(tag);
      if (type === undefined) return r.fail("InvalidTag", path, `unknown ${name} tag ${tag}`, at);
      const d = variants[type];
      if (d.kind === "unit") return { type } as T;
      if (d.kind === "newtype") return { type, [d.field]: d.codec.read(r, joinPath(r, path, d.field)) } as T;
      return { type, ...d.codec.read(r, path) } as T;
    },
    toJson(v) {
      const d = def(v.type)!;
      if (d.kind === "unit") return v.type;
      if (d.kind === "newtype") return { [v.type]: d.codec.toJson((v as Record<string, unknown>)[d.field]) };
      return { [v.type]: d.codec.toJson(v) };
    },
    fromJson(j, path, ctx) {
      const choices = names.map((n) => `"${n}"`).join(", ");
      if (typeof j === "string") {
        const d = def(j);
        if (!d) jsonFail(path, `unknown ${name} variant; expected one of ${choices}`);
        if (d.kind !== "unit") jsonFail(path, `${name} variant "${j}" needs a payload: {"${j}": …}`);
        return { type: j } as T;
      }
      if (!isPlainObject(j) || Object.keys(j).length !== 1) {
        jsonFail(path, `expected a ${name}: one of ${choices}, as "Name" or {"Name": payload}`);
      }
      const type = Object.keys(j)[0]!;
      const d = def(type);
      if (!d) jsonFail(path, `unknown ${name} variant ${JSON.stringify(echo(type))}; expected one of ${choices}`);
      const payloadPath = `${path}.${type}`;
      if (d.kind === "unit") {
        if (j[type] !== null) jsonFail(payloadPath, `variant "${type}" has no payload`);
        return { type } as T;
      }
      if (d.kind === "newtype") return { type, [d.field]: d.codec.fromJson(j[type], payloadPath, ctx) } as T;
      return { type, ...d.codec.fromJson(j[type], payloadPath, ctx) } as T;
    },
    arbitrary(fc) {
      return fc.oneof(
        ...names.map((type): Arbitrary<T> => {
          const d = variants[type];
          if (d.kind === "unit") return fc.constant({ type } as T);
          if (d.kind === "newtype") return d.codec.arbitrary(fc).map((p) => ({ type, [d.field]: p }) as T);
          return d.codec.arbitrary(fc).map((p) => ({ type, ...p }) as T);
        }),
      );
    },
    jsonSchema: (defs) =>
      named(defs, name, () => ({
        oneOf: names.map((n): JsonSchema => {
          const d = variants[n];
          const payload = d.kind === "unit" ? { type: "null" } : d.codec.jsonSchema(defs);
          const object: JsonSchema = { type: "object", properties: { [n]: payload }, required: [n], additionalProperties: false };
          return d.kind === "unit" ? { anyOf: [{ const: n }, object] } : object;
        }),
      })),
  };
}

// ---------------------------------------------------------------- refinements

/** A rule over a whole value: the offending field (omitted = the value itself) and the reason, or null. */
export type ValueCheck<T> = (value: T) => { field?: string; reason: string } | null;

/**
 * `codec` with one more structural rule, enforced by decode, encode and the JSON reader alike.
 * Used where one shape carries different rules in different places (a group-state update inside a
 * `CreateGroup` response must carry a `GroupCreate` receipt), so the rule cannot live in the
 * shape's own struct check.
 */
export function refine<T>(codec: Codec<T>, check: ValueCheck<T>, arbitrary: (fc: FastCheck) => Arbitrary<T>): Codec<T> {
  const at = (rw: { readonly paths: boolean }, path: string, field: string | undefined): string => (field === undefined ? path : joinPath(rw, path, field));
  return {
    ...codec,
    write(w, v, path) {
      const bad = check(v);
      if (bad) throw new EncodeError(at(w, path, bad.field), bad.reason);
      codec.write(w, v, path);
    },
    read(r, path) {
      const start = r.pos;
      const v = codec.read(r, path);
      const bad = check(v);
      if (bad) r.fail("InvalidValue", at(r, path, bad.field), bad.reason, start);
      return v;
    },
    fromJson(j, path, ctx) {
      const v = codec.fromJson(j, path, ctx);
      const bad = check(v);
      if (bad) jsonFail(bad.field === undefined ? path : `${path}.${bad.field}`, bad.reason);
      return v;
    },
    arbitrary,
  };
}

/**
 * `codec` whose encoding is at most `maxBytes` long. The decoder reads it through a view that ends
 * `maxBytes` after its start, so no field of an oversized value is read past the bound: running
 * into the view's end where the input goes on is `BoundExceeded`, not `Truncated`.
 */
export function sizeLimited<T>(codec: Codec<T>, maxBytes: number, what: string): Codec<T> {
  const tooLarge = `${what} exceeds ${maxBytes} bytes`;
  return {
    ...codec,
    write(w, v, path) {
      const start = w.length;
      codec.write(w, v, path);
      if (w.length - start > maxBytes) throw new EncodeError(path, tooLarge);
    },
    read(r, path) {
      const start = r.pos;
      const end = Math.min(r.bytes.length, start + maxBytes);
      const view = new Reader(r.bytes.subarray(0, end), r.paths);
      view.pos = start;
      let v: T;
      try {
        v = codec.read(view, path);
      } catch (err) {
        if (err instanceof DecodeError && err.kind === "Truncated" && r.bytes.length > end) {
          r.fail("BoundExceeded", path, tooLarge, start);
        }
        throw err;
      }
      r.pos = view.pos;
      return v;
    },
    fromJson(j, path, ctx) {
      const v = codec.fromJson(j, path, ctx);
      const w = new Writer();
      codec.write(w, v, path);
      if (w.length > maxBytes) jsonFail(path, tooLarge);
      return v;
    },
  };
}

/**
 * A §13.2 frame: the version byte 1, then `union`'s tag and variant body. JSON is the union's
 * (`{"<Variant>": body}`); the version is implied.
 */
export function versioned<T extends { type: string }>(name: string, union: Codec<T>): Codec<T> {
  return {
    name,
    minSize: 1 + union.minSize,
    write(w, v, path) {
      versionV1.write(w, 1, joinPath(w, path, "version"));
      union.write(w, v, path);
    },
    read(r, path) {
      versionV1.read(r, joinPath(r, path, "version"));
      return union.read(r, path);
    },
    toJson: (v) => union.toJson(v),
    fromJson: (j, path, ctx) => union.fromJson(j, path, ctx),
    arbitrary: (fc) => union.arbitrary(fc),
    jsonSchema: (defs) => union.jsonSchema(defs),
  };
}
