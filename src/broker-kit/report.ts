// What `cbqs verify-broker` prints: a line per failure (the artifact's line and type, the rule,
// its section, the evidence), the notes, and a verdict line per bundle; or, with --json, one
// `cbqs-verify-broker/v1` document; and for --junit/--report a suite per bundle with a test case
// per rule (failed, passed, or skipped when nothing in the bundle exercised it).
import { toHex } from "../bytes.js";
import { count } from "../format.js";
import type { Suite, TestCase } from "../report/model.js";
import { BROKER_RULES } from "./rules.js";
import type { BundleReport } from "./verify.js";

export const VERIFY_BROKER_FORMAT = "cbqs-verify-broker/v1";

export interface VerifiedBundle {
  file: string;
  report: BundleReport;
  seconds: number;
}

export const bundleOk = (r: BundleReport): boolean => r.failures.length === 0;

/** The rules nothing in the bundle exercised. */
export const unexercised = (r: BundleReport): string[] => BROKER_RULES.filter((rule) => r.checks[rule.id] === 0).map((rule) => rule.id);

export function humanLines(v: VerifiedBundle): string[] {
  const r = v.report;
  const lines = r.failures.map((f) => `${v.file}: line ${f.line} ${f.type}: ${f.rule} (${f.section}): ${f.evidence}`);
  for (const n of r.notes) lines.push(`${v.file}: note: ${n}`);
  const stream = `${r.deliveryClass ?? "unknown-class"} stream ${toHex(r.stream)}`;
  if (bundleOk(r)) {
    const idle = unexercised(r);
    const exercised = BROKER_RULES.length - idle.length;
    lines.push(`${v.file}: ok: ${count(r.artifacts, "artifact")} of the ${stream}; ${exercised} of ${BROKER_RULES.length} rules checked${idle.length === 0 ? "" : ` (nothing to check for ${idle.join(", ")})`}`);
  } else {
    const rules = [...new Set(r.failures.map((f) => f.rule))];
    // Views that are not this chain's blocks, and nothing else: most likely the wrong chain was given.
    if (rules.length === 1 && rules[0] === "B2") {
      lines.push(`${v.file}: hint: every failure is B2 (served_at views that are not this chain's blocks): is the chain given with --node or --fixture the one these artifacts were served on?`);
    }
    lines.push(`${v.file}: refused: ${count(r.failures.length, "failure")} (${rules.join(", ")}) in ${count(r.artifacts, "artifact")} of the ${stream}`);
  }
  return lines;
}

export function reportJson(source: string, verified: readonly VerifiedBundle[]): unknown {
  return {
    format: VERIFY_BROKER_FORMAT,
    ok: verified.every((v) => bundleOk(v.report)),
    source,
    bundles: verified.map(({ file, report: r }) => ({
      file,
      stream_id: toHex(r.stream),
      delivery_class: r.deliveryClass,
      artifacts: String(r.artifacts),
      ok: bundleOk(r),
      failures: r.failures.map((f) => ({ line: String(f.line), type: f.type, rule: f.rule, section: f.section, evidence: f.evidence })),
      rules: BROKER_RULES.map((rule) => {
        const failures = r.failures.filter((f) => f.rule === rule.id).length;
        const checks = r.checks[rule.id];
        return { id: rule.id, section: rule.section, checks: String(checks), failures: String(failures), status: failures > 0 ? "failed" : checks > 0 ? "passed" : "not exercised" };
      }),
      notes: r.notes,
    })),
  };
}

/** One suite per bundle, a case per rule (docs/reference/formats/fixture.md "Reports"). */
export function suitesOf(verified: readonly VerifiedBundle[], reproduce: (file: string) => string, started: Date): Suite[] {
  return verified.map((v) => {
    const r = v.report;
    const cases: TestCase[] = BROKER_RULES.map((rule) => {
      const failures = r.failures.filter((f) => f.rule === rule.id);
      const id = `${rule.id} ${rule.title}`;
      if (failures.length > 0) {
        const first = failures[0]!;
        return {
          id,
          status: "failed",
          seconds: 0,
          type: "broken-rule",
          message: `line ${first.line} ${first.type}: ${first.evidence}`,
          details: failures.slice(1).map((f) => `line ${f.line} ${f.type}: ${f.evidence}`),
          reproduce: reproduce(v.file),
        };
      }
      if (r.checks[rule.id] === 0) return { id, status: "skipped", seconds: 0, message: "nothing in the bundle exercised this rule" };
      return { id, status: "passed", seconds: 0 };
    });
    return { name: `cbqs verify-broker ${v.file}`, classname: "cbqs.verify-broker", cases, seconds: v.seconds, timestamp: started, summary: humanLines(v).at(-1)! };
  });
}
