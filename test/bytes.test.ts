import { describe, expect, it } from "vitest";
import * as fc from "fast-check";
import { compareBytes, fromHex, readU64BE, toHex, u64BE, uintBE } from "../src/bytes.js";

describe("hex and integer helpers", () => {
  it("round-trips hex and rejects malformed input", () => {
    expect(toHex(fromHex("0xABcd"))).toBe("0xabcd");
    expect(() => fromHex("abcd")).toThrow(/0x-prefixed/);
    expect(() => fromHex("0xabc")).toThrow(/even/);
    expect(() => fromHex("0x00", 2)).toThrow(/expected 2 bytes/);
  });
  it("encodes big-endian and refuses values that do not fit", () => {
    expect(toHex(uintBE(258n, 4))).toBe("0x00000102");
    expect(() => uintBE(1n << 64n, 8)).toThrow(RangeError);
    expect(() => uintBE(-1n, 8)).toThrow(RangeError);
  });
  it("u64: readU64BE inverts u64BE and uintBE(·, 8) on both sides of 2^53 (its number fast path) and at the edges", () => {
    const edges = [0n, 1n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 64n - 1n];
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(...edges), fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.bigInt({ min: 0n, max: 2n ** 56n })), (v) => {
        expect(u64BE(v)).toEqual(uintBE(v, 8));
        const padded = new Uint8Array(11);
        padded.set(u64BE(v), 3);
        expect(readU64BE(padded, 3)).toBe(v);
      }),
      { numRuns: 5000 },
    );
  });
  it("orders bytes lexicographically", () => {
    expect(compareBytes(fromHex("0x01"), fromHex("0x0100"))).toBeLessThan(0);
    expect(compareBytes(fromHex("0x02"), fromHex("0x0100"))).toBeGreaterThan(0);
  });
});
