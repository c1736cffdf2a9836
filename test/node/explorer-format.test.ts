// How the explorer page words its figures (src/explorer/format.ts): amounts exact and with their
// unit, and how long a stream's escrow pays — CIP-39 §6.1 read off the record, exact past 2^53.
import { describe, expect, it } from "vitest";
import { amount, cby, funding } from "../../src/explorer/format.js";

const record = (fields: Record<string, string | null>) => ({ status: "Active", rate_per_block: "8000", escrow_balance: "80000", last_settled_block: "2", suspended_at_block: null, suspension_grace_deadline_block: null, ...fields });

describe("the explorer's figures", () => {
  it("amounts are grouped exactly and carry nano-CBY", () => {
    expect(amount("1234567890123456789012")).toBe("1,234,567,890,123,456,789,012");
    expect(cby("80000")).toBe("80,000 nano-CBY");
    expect(cby("0")).toBe("0 nano-CBY");
  });

  it("§6.1: an Active stream is funded through last_settled_block + escrow / rate, whole blocks only", () => {
    expect(funding(record({}))).toEqual({ kind: "until", block: "12" });
    // 79,999 pays 9 whole blocks of 8,000, not 10.
    expect(funding(record({ escrow_balance: "79999" }))).toEqual({ kind: "until", block: "11" });
    expect(funding(record({ escrow_balance: "0" }))).toEqual({ kind: "until", block: "2" });
    // Beyond 2^53: exact, never through a float.
    expect(funding(record({ escrow_balance: "340282366920938463463374607431768211455", rate_per_block: "3", last_settled_block: "18446744073709551615" }))).toEqual({
      kind: "until",
      block: (18446744073709551615n + 340282366920938463463374607431768211455n / 3n).toString(),
    });
  });

  it("a rate of 0 never runs out; a Suspended stream shows its pinned fields; a closed or expired one pays nothing more", () => {
    expect(funding(record({ rate_per_block: "0" }))).toEqual({ kind: "unbounded" });
    expect(funding(record({ status: "Suspended", suspended_at_block: "7", suspension_grace_deadline_block: "107" }))).toEqual({ kind: "suspended", since: "7", graceUntil: "107" });
    expect(funding(record({ status: "Closed" }))).toEqual({ kind: "ended" });
    expect(funding(record({ status: "DataExpired" }))).toEqual({ kind: "ended" });
  });
});
