// The node's one reader of numeric query parameters (src/node/decimal.ts, docs/guides/run-a-devnet.md "Numeric
// parameters"): the refusals name the parameter, echo a bounded part of the value, and a clamped
// parameter (the feed's `limit`, CIP-16 §3.1) is brought into [min, max] instead of refused.
import { describe, expect, it } from "vitest";
import { parseDecimal } from "../../src/node/decimal.js";
import { RequestError } from "../../src/node/errors.js";

const HEIGHT = { name: "height", what: "a block height", max: 2n ** 64n - 1n };
const LIMIT = { name: "limit", what: "a page size", max: 100n, clamp: { min: 1n } };

function refusal(text: string, p: Parameters<typeof parseDecimal>[1]): string {
  try {
    parseDecimal(text, p);
  } catch (err) {
    expect(err).toBeInstanceOf(RequestError);
    return (err as RequestError).message;
  }
  throw new Error(`${text} was accepted`);
}

describe("numeric query parameters", () => {
  it("a malformed value is refused, echoing at most its first 40 characters", () => {
    const long = "x".repeat(100);
    expect(refusal(long, HEIGHT)).toBe(`height must be a block height: decimal digits without sign or leading zeros (got "${"x".repeat(40)}")`);
    expect(refusal("007", HEIGHT)).toContain('(got "007")');
  });

  it("a value above the maximum is refused naming the maximum; up to 24 digits it is echoed, longer ones by their length", () => {
    const max = "18446744073709551615";
    expect(refusal("18446744073709551616", HEIGHT)).toBe(`height must be a block height of at most ${max} (got 18446744073709551616)`);
    expect(refusal("9".repeat(24), HEIGHT)).toBe(`height must be a block height of at most ${max} (got ${"9".repeat(24)})`);
    expect(refusal("9".repeat(25), HEIGHT)).toBe(`height must be a block height of at most ${max} (got 25 digits)`);
    expect(parseDecimal(max, HEIGHT)).toBe(2n ** 64n - 1n);
    expect(parseDecimal("0", HEIGHT)).toBe(0n);
  });

  it("a clamped parameter is brought into [min, max] whatever its number of digits, never refused for its size", () => {
    expect(parseDecimal("0", LIMIT)).toBe(1n);
    expect(parseDecimal("1", LIMIT)).toBe(1n);
    expect(parseDecimal("57", LIMIT)).toBe(57n);
    expect(parseDecimal("100", LIMIT)).toBe(100n);
    expect(parseDecimal("101", LIMIT)).toBe(100n);
    expect(parseDecimal("9".repeat(500), LIMIT)).toBe(100n);
    expect(refusal("-1", LIMIT)).toContain("limit must be a page size");
  });
});
