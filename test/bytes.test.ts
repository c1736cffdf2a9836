import { describe, expect, it } from "vitest";
import { compareBytes, fromHex, toHex, uintBE } from "../src/bytes.js";

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
  it("orders bytes lexicographically", () => {
    expect(compareBytes(fromHex("0x01"), fromHex("0x0100"))).toBeLessThan(0);
    expect(compareBytes(fromHex("0x02"), fromHex("0x0100"))).toBeGreaterThan(0);
  });
});
