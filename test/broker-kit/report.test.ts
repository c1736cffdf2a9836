// verify-broker's human lines (src/broker-kit/report.ts): a bundle refused on B2 alone — served_at
// views that are not the given chain's blocks — gets a hint that the wrong chain may have been given.
import { describe, expect, it } from "vitest";
import type { Failure } from "../../src/broker-kit/checks.js";
import { humanLines } from "../../src/broker-kit/report.js";
import { BROKER_RULES, type RuleId } from "../../src/broker-kit/rules.js";
import type { BundleReport } from "../../src/broker-kit/verify.js";

const checks = Object.fromEntries(BROKER_RULES.map((r) => [r.id, 1])) as Record<RuleId, number>;
const failure = (rule: RuleId, line: number): Failure => ({ line, type: "AppendReceiptV1", rule, section: "§3", evidence: "e" });

function report(rules: RuleId[]): BundleReport {
  return { stream: new Uint8Array(32), deliveryClass: "Standard", artifacts: 5, failures: rules.map((r, i) => failure(r, i + 2)), checks, notes: [] };
}

describe("verify-broker's verdict lines", () => {
  it("B2 failures alone add a hint naming the likely mistake: the wrong chain", () => {
    const lines = humanLines({ file: "b.jsonl", report: report(["B2", "B2"]), seconds: 0 });
    expect(lines.at(-2)).toBe("b.jsonl: hint: every failure is B2 (served_at views that are not this chain's blocks): is the chain given with --node or --fixture the one these artifacts were served on?");
    expect(lines.at(-1)).toMatch(/^b\.jsonl: refused: 2 failures \(B2\) in 5 artifacts of the Standard stream 0x0{64}$/);
  });

  it("no hint when another rule fails too, or none does", () => {
    for (const rules of [["B2", "B3"], ["B3"], []] as RuleId[][]) {
      expect(humanLines({ file: "b.jsonl", report: report(rules), seconds: 0 }).some((l) => l.includes("hint:")), rules.join()).toBe(false);
    }
  });
});
