// docs/guides/verify-a-broker.md "The 30 rules" is src/broker-kit/rules.ts in words — a row per rule,
// in order, with its sections, its status (checked, or partly with what is not checkable offline)
// and the mutants that test it — and "What cannot be checked offline" lists OFFLINE_LIMITS.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { MUTANTS } from "../../src/broker-kit/mutants.js";
import { BROKER_RULES, OFFLINE_LIMITS, RULE_IDS } from "../../src/broker-kit/rules.js";

const doc = readFileSync("docs/guides/verify-a-broker.md", "utf8");
const section = (title: string): string => doc.split(`### ${title}`)[1]!.split("\n### ")[0]!;
const cells = (row: string): string[] => row.slice(2, -2).split(/ (?<!\\)\| /).map((c) => c.replace(/\\\|/g, "|"));

describe("the 30-rule table", () => {
  it("30 rules, B1 to B30 in order, each with a section, a check, and a limit only when partly checked", () => {
    expect(BROKER_RULES.map((r) => r.id)).toEqual([...RULE_IDS]);
    expect(RULE_IDS).toHaveLength(30);
    for (const r of BROKER_RULES) {
      expect(r.section, r.id).toMatch(/^§\d/);
      expect(r.check.length, r.id).toBeGreaterThan(30);
      if (r.limit !== null) expect(r.limit.length, r.id).toBeGreaterThan(30);
    }
  });

  it("docs/guides/verify-a-broker.md has a row per rule: id, sections, what must hold, the check, the status and the rule's mutants", () => {
    const rows = section("The 30 rules").split("\n").filter((l) => /^\| B\d/.test(l)).map(cells);
    expect(rows.map((r) => r[0])).toEqual([...RULE_IDS]);
    rows.forEach(([id, sections, title, check, status, tests]) => {
      const rule = BROKER_RULES.find((r) => r.id === id)!;
      expect([id, sections, title, check]).toEqual([rule.id, rule.section, rule.title, rule.check]);
      expect([id, status]).toEqual([id, rule.limit === null ? "checked" : `partly — not checked: ${rule.limit}`]);
      expect([id, tests]).toEqual([id, MUTANTS.filter((m) => m.rule === id).map((m) => `“${m.name}”`).join("; ")]);
    });
  });

  it("docs/guides/verify-a-broker.md lists every rule no offline verifier can check, with why", () => {
    const rows = section("What cannot be checked offline").split("\n").filter((l) => /^\| §\d/.test(l)).map(cells);
    expect(rows).toEqual(OFFLINE_LIMITS.map((l) => [l.section, l.rule, l.why]));
  });
});
