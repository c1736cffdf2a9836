// Property tests over every codec in the registry (fast-check, small CI run counts).
import { describe, expect, it } from "vitest";
import * as fc from "fast-check";
import { CODEC_NAMES, DecodeError, codecByName, decode, encode, fromJson, toJson } from "../../src/codec/index.js";
import { u128, u64 } from "../../src/codec/core.js";

const RUNS = 200;

/** Either a DecodeError, or a value whose encoding is exactly the input (one encoding per value). */
function mustDecodeOrDecodeError(name: string, bytes: Uint8Array): void {
  const codec = codecByName(name)!;
  try {
    const value = decode(codec, bytes);
    expect(encode(codec, value)).toEqual(bytes);
  } catch (err) {
    if (!(err instanceof DecodeError)) throw err;
    expect(err.offset).toBeGreaterThanOrEqual(0);
    expect(err.offset).toBeLessThanOrEqual(bytes.length);
  }
}

describe.each(CODEC_NAMES)("%s", (name) => {
  const codec = codecByName(name)!;
  const arb = codec.arbitrary(fc);

  it("§14: decode(encode(x)) = x and re-encoding is byte-identical", () => {
    fc.assert(
      fc.property(arb, (v) => {
        const bytes = encode(codec, v);
        const back = decode(codec, bytes);
        expect(back).toEqual(v);
        expect(encode(codec, back)).toEqual(bytes);
      }),
      { numRuns: RUNS },
    );
  });

  it("scenario-format §1: fromJson(JSON.parse(JSON.stringify(toJson(x)))) = x", () => {
    fc.assert(
      fc.property(arb, (v) => {
        const text = JSON.stringify(toJson(codec, v));
        expect(fromJson(codec, JSON.parse(text))).toEqual(v);
      }),
      { numRuns: RUNS },
    );
  });

  it("§14/§18: random bytes never make decode throw anything but DecodeError, and accepted bytes are canonical", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => mustDecodeOrDecodeError(name, bytes)),
      { numRuns: RUNS },
    );
  });

  it("§14/§18: mutated valid encodings (flip, truncate, extend) never throw anything but DecodeError", () => {
    fc.assert(
      fc.property(arb, fc.nat(), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 2 }), (v, pos, byte, op) => {
        const bytes = encode(codec, v);
        let mutated: Uint8Array;
        if (op === 0 && bytes.length > 0) {
          mutated = bytes.slice();
          mutated[pos % bytes.length] = byte;
        } else if (op === 1) {
          mutated = bytes.slice(0, pos % (bytes.length + 1));
        } else {
          mutated = Uint8Array.from([...bytes, byte]);
          // Trailing bytes are always rejected (§14 strict decode).
          expect(() => decode(codec, mutated)).toThrow(DecodeError);
        }
        mustDecodeOrDecodeError(name, mutated);
      }),
      { numRuns: RUNS },
    );
  });
});

describe("§14 u64/u128: the number fast path below 2^53 (src/codec/core.ts Reader.uint, Writer.uint)", () => {
  /** Big-endian bytes by BigInt arithmetic alone: the reference both paths must equal. */
  const reference = (v: bigint, width: number): Uint8Array => {
    const out = new Uint8Array(width);
    for (let i = width - 1; i >= 0; i--, v >>= 8n) out[i] = Number(v & 0xffn);
    return out;
  };
  const edges = [0n, 1n, 255n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 64n - 1n];
  for (const [name, codec, width] of [["u64", u64, 8], ["u128", u128, 16]] as const) {
    it(`${name}: encode is the big-endian reference and decode inverts it, on both sides of 2^53 and at every edge`, () => {
      const max = (1n << BigInt(8 * width)) - 1n;
      const values = [...edges, ...(width === 16 ? [2n ** 64n, 2n ** 96n + 5n, max] : [])];
      fc.assert(
        fc.property(fc.oneof(fc.constantFrom(...values), fc.bigInt({ min: 0n, max }), fc.bigInt({ min: 0n, max: 2n ** 60n })), (v) => {
          const bytes = encode(codec, v);
          expect(bytes).toEqual(reference(v, width));
          expect(decode(codec, bytes)).toBe(v);
        }),
        { numRuns: 5000 },
      );
    });
  }
});
