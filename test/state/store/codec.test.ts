import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { toHex } from "../../../src/bytes.js";
import { decodeByteVec, decodeLength, encodeByteVec, encodeLength, lengthSize, writeLength } from "../../../state/kv/codec.js";

describe("commonware-codec primitives (CIP-4 §5.3; state/kv/codec.ts)", () => {
  it("varint lengths: 7 bits per byte, low group first (commonware's own examples)", () => {
    const cases: Array<[number, string]> = [
      [0, "0x00"], [127, "0x7f"], [128, "0x8001"], [16383, "0xff7f"], [16384, "0x808001"],
      [2097151, "0xffff7f"], [2097152, "0x80808001"], [0xffff_ffff, "0xffffffff0f"],
    ];
    for (const [n, hex] of cases) {
      expect(toHex(encodeLength(n))).toBe(hex);
      expect(decodeLength(encodeLength(n), 0, "n")).toEqual([n, (hex.length - 2) / 2]);
    }
    expect(() => encodeLength(2 ** 32)).toThrow(/does not fit in u32/);
  });

  it("in place (lengthSize, writeLength) is encodeLength, at every varint width and offset; over-u32 is refused", () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 0xffff_ffff })), fc.nat(7), (n, at) => {
        const want = encodeLength(n);
        expect(lengthSize(n)).toBe(want.length);
        const out = new Uint8Array(at + want.length + 2).fill(0xaa);
        expect(writeLength(out, at, n)).toBe(at + want.length);
        expect(toHex(out.subarray(at, at + want.length))).toBe(toHex(want));
        expect(out[at + want.length]).toBe(0xaa);
      }),
      { numRuns: 5_000 },
    );
    for (const bad of [2 ** 32, -1, 1.5]) {
      expect(() => lengthSize(bad)).toThrow(/does not fit in u32/);
      expect(() => writeLength(new Uint8Array(8), 0, bad)).toThrow(/does not fit in u32/);
    }
  });

  it("exactly one accepted encoding per length: decode(b) accepted ⇒ encode(value) = b", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 1, maxLength: 6 }), (bytes) => {
        let decoded: [number, number];
        try {
          decoded = decodeLength(bytes, 0, "n");
        } catch {
          return;
        }
        expect(toHex(encodeLength(decoded[0]))).toBe(toHex(bytes.subarray(0, decoded[1])));
      }),
      { numRuns: 20_000 },
    );
  });

  it("overlong, over-u32 and truncated varints are refused", () => {
    expect(() => decodeLength(Uint8Array.of(0x80, 0x00), 0, "n")).toThrow(/overlong/);
    expect(() => decodeLength(Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0x10), 0, "n")).toThrow(/exceeds u32/);
    expect(() => decodeLength(Uint8Array.of(0x80, 0x80, 0x80, 0x80, 0x80, 0x01), 0, "n")).toThrow(/exceeds u32/);
    expect(() => decodeLength(Uint8Array.of(0x80), 0, "n")).toThrow(/truncated/);
  });

  it("byte vectors: varint length then the bytes; a length past the input is refused before allocating", () => {
    const v = encodeByteVec("v", Uint8Array.of(9, 8, 7));
    expect(toHex(v)).toBe("0x03090807");
    expect(decodeByteVec(v, 0, "v")).toEqual([Uint8Array.of(9, 8, 7), 4]);
    expect(() => decodeByteVec(Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0x0f), 0, "v")).toThrow(/exceeds remaining input/);
  });
});
