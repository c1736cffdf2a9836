// Canonical input (docs/reference/formats/transaction.md "Canonical input: the decoder audit"): decoders other
// than the envelope's, checked for the same class — a byte-order mark or a second spelling that
// would decode to the same value.
import { describe, expect, it } from "vitest";
import { fromHex, HexError, utf8 } from "../../src/bytes.js";
import { decode, encode, utf8String } from "../../src/codec/core.js";
import { classifyRegistryUserKey } from "../../src/engine/layout.js";

describe("canonical input: decoders keep or refuse a BOM, never strip it", () => {
  it("registry user keys are compared as bytes: BOM + \"registry\" names nothing", () => {
    expect(classifyRegistryUserKey(utf8("registry"))).toEqual({ kind: "singleton" });
    expect(classifyRegistryUserKey(Uint8Array.of(0xef, 0xbb, 0xbf, ...utf8("registry")))).toBeUndefined();
    expect(classifyRegistryUserKey(Uint8Array.of(0xef, 0xbb, 0xbf, ...utf8("base-rate-schedules")))).toBeUndefined();
  });

  it("CIP-39 §14 strings keep a leading BOM: it decodes as part of the value and re-encodes to the same bytes", () => {
    const codec = utf8String("text", { maxBytes: 16, arbitrary: (fc) => fc.string() });
    const bytes = Uint8Array.of(0, 0, 0, 4, 0xef, 0xbb, 0xbf, 0x78); // u32 length 4 ‖ BOM ‖ "x"
    expect(decode(codec, bytes)).toBe("\ufeffx");
    expect(encode(codec, decode(codec, bytes))).toEqual(bytes);
    expect(decode(codec, Uint8Array.of(0, 0, 0, 1, 0x78))).toBe("x");
  });
});

describe("canonical input: hex", () => {
  it("a multi-megabyte value parses (no regex stack overflow) and a bad digit at its end is refused", () => {
    const big = "0x" + "ab".repeat(5_000_000);
    expect(fromHex(big).length).toBe(5_000_000);
    expect(() => fromHex(big.slice(0, -1) + "g")).toThrow(HexError);
  });

  it("refuses a missing prefix, an odd digit count, a non-hex pair and a wrong length", () => {
    for (const bad of ["ab", "0X00", "0x0", "0x0g", "0x 0", "0xg0"]) expect(() => fromHex(bad), bad).toThrow(HexError);
    expect(() => fromHex("0x00", 2)).toThrow(/expected 2 bytes, got 1/);
    expect(fromHex("0xAb")).toEqual(Uint8Array.of(0xab));
  });
});
