// What a test report says, whichever command produced it (`replay`, `gas-vectors verify`, `fuzz`,
// and any later verifier): suites of cases, each case one thing checked — a fixture, a gas vector,
// a fuzz campaign — with its outcome. The JUnit and HTML writers (junit.ts, html.ts) take only
// this, so a command builds its cases once and gets both formats (docs/reference/formats/fixture.md "Reports").
// Nothing here reads a clock: the command measures its seconds and passes its start time, so the
// writers are pure functions and a test can pin their bytes.

/** A case's outcome: JUnit's four (a mismatch is "failed", unusable input "error"). */
export type CaseStatus = "passed" | "failed" | "error" | "skipped";

export interface TestCase {
  /**
   * Stable across runs and machines, so a CI server can follow the case's history: a fixture's
   * path relative to the corpus root it was found under, a gas vector's id, `fuzz/seed-S`.
   */
  id: string;
  status: CaseStatus;
  seconds: number;
  /** What was executed, when the command counts it (fixtures, fuzz campaigns). */
  blocks?: number;
  txs?: number;
  /** For failed, error and skipped: the first difference (or the reason), one line. */
  message?: string;
  /** JUnit's failure/error `type`: "mismatch", "unusable", "divergence", … */
  type?: string;
  /** Lines under the message: the differing keys, a shrunk chain in words. */
  details?: string[];
  /** A shell command that reproduces the outcome. */
  reproduce?: string;
}

export interface Suite {
  /** What ran: `cbqs replay fixtures/corpus`, `cbqs fuzz --seed 7`. */
  name: string;
  /** JUnit's `classname` of every case, dotted as CI servers group it: `cbqs.replay`. */
  classname: string;
  cases: TestCase[];
  seconds: number;
  /** When the command started (wall clock); left out, the report carries no date. */
  timestamp?: Date;
  /** The command's own summary line (JUnit: the suite's system-out). */
  summary?: string;
}

export interface Tally {
  tests: number;
  passed: number;
  failed: number;
  errors: number;
  skipped: number;
}

export function tally(cases: readonly TestCase[]): Tally {
  const n = (s: CaseStatus) => cases.filter((c) => c.status === s).length;
  return { tests: cases.length, passed: n("passed"), failed: n("failed"), errors: n("error"), skipped: n("skipped") };
}

/** The tally of several suites together. */
export function tallyAll(suites: readonly Suite[]): Tally {
  return tally(suites.flatMap((s) => s.cases));
}

/** Seconds as reports write them: three decimals, never negative (JUnit's `time`). */
export function secondsText(seconds: number): string {
  return (Number.isFinite(seconds) && seconds > 0 ? seconds : 0).toFixed(3);
}

/** A start time as reports write it: ISO 8601 in UTC to the second (an xs:dateTime). */
export function timestampText(at: Date): string {
  return at.toISOString().replace(/\.\d{3}Z$/, "Z");
}
