// What verify-broker prints (src/broker-kit/report.ts): the human lines — a line per failure, the
// notes, the verdict (a bundle refused on B2 alone — served_at views that are not the given
// chain's blocks — gets a hint that the wrong chain may have been given); the --json document with
// a row per rule; and the --junit/--report suites, a case per rule (failed, passed or skipped).
import { describe, expect, it } from "vitest";
import type { Failure } from "../../src/broker-kit/checks.js";
import { bundleOk, humanLines, reportJson, suitesOf, unexercised, VERIFY_BROKER_FORMAT } from "../../src/broker-kit/report.js";
import { BROKER_RULES, RULE_IDS, ruleOf, type RuleId } from "../../src/broker-kit/rules.js";
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

const KEY = `0x${"00".repeat(32)}`;
/** A report in which every rule ran `ran[rule]` checks (0 unless named) and `failures` failed. */
function reportOf(failures: Failure[], ran: Partial<Record<RuleId, number>>, o: Partial<BundleReport> = {}): BundleReport {
  const all = Object.fromEntries(BROKER_RULES.map((r) => [r.id, ran[r.id] ?? 0])) as Record<RuleId, number>;
  return { stream: new Uint8Array(32), deliveryClass: "Fast", artifacts: 1, failures, checks: all, notes: [], ...o };
}
const fail = (rule: RuleId, line: number, evidence: string): Failure => ({ line, type: "CheckpointReceiptV1", rule, section: ruleOf(rule).section, evidence });

describe("verify-broker's human lines: a line per failure, the notes, then the verdict", () => {
  it("an accepted bundle: its notes, then ok with the artifacts, the class, the stream, and the rules checked and not exercised", () => {
    const r = reportOf([], { B1: 3, B2: 1 }, { notes: ["batch 2 not carried"], artifacts: 1 });
    expect(humanLines({ file: "f.jsonl", report: r, seconds: 0 })).toEqual([
      "f.jsonl: note: batch 2 not carried",
      `f.jsonl: ok: 1 artifact of the Fast stream ${KEY}; 2 of 30 rules checked (nothing to check for ${RULE_IDS.filter((id) => id !== "B1" && id !== "B2").join(", ")})`,
    ]);
  });

  it("every rule exercised: no list of unexercised rules; an unknown class is named as such", () => {
    const r = reportOf([], Object.fromEntries(RULE_IDS.map((id) => [id, 1])), { artifacts: 1_200, deliveryClass: null });
    expect(humanLines({ file: "f.jsonl", report: r, seconds: 0 })).toEqual([`f.jsonl: ok: 1,200 artifacts of the unknown-class stream ${KEY}; 30 of 30 rules checked`]);
  });

  it("a refused bundle: each failure with its line, type, rule, section and evidence, then the notes, then the verdict naming each failed rule once", () => {
    const r = reportOf([fail("B24", 3, "gap"), fail("B3", 4, "forged"), fail("B24", 5, "gap again")], { B24: 2, B3: 1 }, { notes: ["n"], artifacts: 4 });
    expect(humanLines({ file: "f.jsonl", report: r, seconds: 0 })).toEqual([
      "f.jsonl: line 3 CheckpointReceiptV1: B24 (§12.2, §13.2): gap",
      "f.jsonl: line 4 CheckpointReceiptV1: B3 (§4.3, §14): forged",
      "f.jsonl: line 5 CheckpointReceiptV1: B24 (§12.2, §13.2): gap again",
      "f.jsonl: note: n",
      `f.jsonl: refused: 3 failures (B24, B3) in 4 artifacts of the Fast stream ${KEY}`,
    ]);
  });

  it("one failure, one artifact: singular words", () => {
    const r = reportOf([fail("B3", 2, "forged")], { B3: 1 });
    expect(humanLines({ file: "f", report: r, seconds: 0 }).at(-1)).toBe(`f: refused: 1 failure (B3) in 1 artifact of the Fast stream ${KEY}`);
  });
});

describe("verify-broker --json: one cbqs-verify-broker/v1 document", () => {
  it("per bundle: its stream, class, artifacts, verdict, failures, and a row per rule — failed, passed or not exercised — and its notes", () => {
    const refused = reportOf([fail("B3", 2, "forged"), fail("B3", 4, "forged too")], { B1: 2, B3: 5 }, { notes: ["n"], artifacts: 4 });
    const accepted = reportOf([], { B1: 1 }, { stream: new Uint8Array(32).fill(1), deliveryClass: null });
    const doc = reportJson("fixture k.json", [
      { file: "a.jsonl", report: refused, seconds: 1 },
      { file: "b.jsonl", report: accepted, seconds: 2 },
    ]) as { format: string; ok: boolean; source: string; bundles: Array<Record<string, unknown>> };
    expect([doc.format, VERIFY_BROKER_FORMAT, doc.ok, doc.source]).toEqual(["cbqs-verify-broker/v1", "cbqs-verify-broker/v1", false, "fixture k.json"]);
    const [a, b] = doc.bundles;
    const rowsOf = (rules: unknown) => rules as Array<{ id: string; section: string; checks: string; failures: string; status: string }>;
    expect({ ...a, rules: rowsOf(a!["rules"]).slice(0, 4) }).toEqual({
      file: "a.jsonl",
      stream_id: KEY,
      delivery_class: "Fast",
      artifacts: "4",
      ok: false,
      failures: [
        { line: "2", type: "CheckpointReceiptV1", rule: "B3", section: "§4.3, §14", evidence: "forged" },
        { line: "4", type: "CheckpointReceiptV1", rule: "B3", section: "§4.3, §14", evidence: "forged too" },
      ],
      rules: [
        { id: "B1", section: "§4, §7 check 2", checks: "2", failures: "0", status: "passed" },
        { id: "B2", section: "§3, §9.3, §14", checks: "0", failures: "0", status: "not exercised" },
        { id: "B3", section: "§4.3, §14", checks: "5", failures: "2", status: "failed" },
        { id: "B4", section: "§7 check 1", checks: "0", failures: "0", status: "not exercised" },
      ],
      notes: ["n"],
    });
    expect(rowsOf(a!["rules"]).map((r) => r.id)).toEqual([...RULE_IDS]);
    expect([b!["file"], b!["stream_id"], b!["delivery_class"], b!["ok"], b!["failures"]]).toEqual(["b.jsonl", `0x${"01".repeat(32)}`, null, true, []]);
  });

  it("ok only when every bundle is accepted", () => {
    const ok = (reports: BundleReport[]) => (reportJson("s", reports.map((report) => ({ file: "f", report, seconds: 0 }))) as { ok: boolean }).ok;
    expect([ok([reportOf([], {})]), ok([reportOf([], {}), reportOf([fail("B1", 2, "e")], {})]), ok([])]).toEqual([true, false, true]);
  });
});

describe("verify-broker --junit/--report: a suite per bundle, a case per rule", () => {
  it("a failed rule's case carries its first failure as the message and the rest as details, with the reproduce command; an unexercised rule is skipped; a checked one passed", () => {
    const started = new Date(0);
    const r = reportOf([fail("B3", 2, "forged"), fail("B1", 3, "foreign"), fail("B3", 4, "forged too"), fail("B3", 6, "again")], { B1: 1, B2: 1, B3: 3 });
    const [suite] = suitesOf([{ file: "a.jsonl", report: r, seconds: 1.5 }], (file) => `cbqs verify-broker ${file} --fixture k.json`, started);
    expect({ ...suite, cases: suite!.cases.slice(0, 4) }).toEqual({
      name: "cbqs verify-broker a.jsonl",
      classname: "cbqs.verify-broker",
      seconds: 1.5,
      timestamp: started,
      summary: humanLines({ file: "a.jsonl", report: r, seconds: 1.5 }).at(-1),
      cases: [
        { id: `B1 ${ruleOf("B1").title}`, status: "failed", seconds: 0, type: "broken-rule", message: "line 3 CheckpointReceiptV1: foreign", details: [], reproduce: "cbqs verify-broker a.jsonl --fixture k.json" },
        { id: `B2 ${ruleOf("B2").title}`, status: "passed", seconds: 0 },
        {
          id: `B3 ${ruleOf("B3").title}`,
          status: "failed",
          seconds: 0,
          type: "broken-rule",
          message: "line 2 CheckpointReceiptV1: forged",
          details: ["line 4 CheckpointReceiptV1: forged too", "line 6 CheckpointReceiptV1: again"],
          reproduce: "cbqs verify-broker a.jsonl --fixture k.json",
        },
        { id: `B4 ${ruleOf("B4").title}`, status: "skipped", seconds: 0, message: "nothing in the bundle exercised this rule" },
      ],
    });
    expect(suite!.cases).toHaveLength(30);
    expect(suite!.summary).toMatch(/^a\.jsonl: refused: 4 failures \(B3, B1\)/);
  });

  it("one suite per bundle, in order", () => {
    const suites = suitesOf(["a", "b"].map((file) => ({ file, report: reportOf([], {}), seconds: 0 })), (f) => f, new Date(0));
    expect(suites.map((s) => s.name)).toEqual(["cbqs verify-broker a", "cbqs verify-broker b"]);
  });
});

describe("a bundle's verdict and its unexercised rules", () => {
  it("ok means no failure; unexercised lists the rules with no check, in rule order", () => {
    expect([bundleOk(reportOf([], {})), bundleOk(reportOf([fail("B1", 2, "e")], { B1: 1 }))]).toEqual([true, false]);
    expect(unexercised(reportOf([], Object.fromEntries(RULE_IDS.filter((id) => id !== "B7" && id !== "B30").map((id) => [id, 1]))))).toEqual(["B7", "B30"]);
  });
});
