// The performance guard's arithmetic and report (scripts/perf-guard.ts): no timing, no
// processes, so its own tests (test/scripts/perf-guard.test.ts) run in milliseconds.

/** Instructions of one measurement: the whole run, and the same run doing everything but the workload. */
export interface Measurement {
  full: number;
  setup: number;
}

/** The workload's own instructions: the run minus its set-up (module loading, fixture reading, process start). */
export const workloadInstructions = (m: Measurement): number => m.full - m.setup;

/**
 * The workload's instructions over repeated measurements: the least full run minus the least
 * set-up. A process now and then executes some 25 M instructions more than its twin (seen in the
 * set-up alone, with address-space randomisation off too: likely a garbage collection on one side
 * of a threshold); that noise only ever adds, so the least of each is the count without it.
 */
export function leastWorkload(runs: readonly Measurement[]): number {
  if (runs.length === 0) throw new RangeError("no measurement");
  return Math.min(...runs.map((m) => m.full)) - Math.min(...runs.map((m) => m.setup));
}

/**
 * "ok": within tolerance. "faster": this build does the work in fewer instructions by more than the
 * tolerance (it passes; docs/engineering/performance.md says when to move the baseline). "REGRESSION": more
 * instructions than the baseline by more than the tolerance. "NOT COMPARABLE": the two builds did
 * not do the same work (a different root, a different fuzz campaign), so there is no ratio to judge.
 */
export type Verdict = "ok" | "faster" | "REGRESSION" | "NOT COMPARABLE";

/** `ratio` (this build ÷ baseline) against `tolerance` (a fraction: 0.02 is 2 %). */
export function verdictOf(ratio: number, tolerance: number): Exclude<Verdict, "NOT COMPARABLE"> {
  if (!(tolerance >= 0) || !Number.isFinite(ratio) || ratio <= 0) throw new RangeError(`no verdict for ratio ${ratio} at tolerance ${tolerance}`);
  if (ratio > 1 + tolerance) return "REGRESSION";
  if (ratio < 1 - tolerance) return "faster";
  return "ok";
}

/** One row of the guard's table. */
export interface Row {
  workload: string;
  /** What was run, in words (sizes). */
  what: string;
  /** Workload instructions (leastWorkload over the repetitions), baseline and this build. */
  baseline: number;
  current: number;
  tolerance: number;
  /** Set when the two builds' results differ: why they are not comparable. */
  notComparable?: string;
}

export interface Judged extends Row {
  ratio: number;
  verdict: Verdict;
}

export function judge(row: Row): Judged {
  const ratio = row.current / row.baseline;
  return { ...row, ratio, verdict: row.notComparable !== undefined ? "NOT COMPARABLE" : verdictOf(ratio, row.tolerance) };
}

/** The guard fails on a regression or on a workload it could not compare. */
export const failed = (rows: readonly Judged[]): boolean => rows.some((r) => r.verdict === "REGRESSION" || r.verdict === "NOT COMPARABLE");

const millions = (n: number): string => `${(n / 1e6).toLocaleString("en-US", { maximumFractionDigits: 1, minimumFractionDigits: 1 })} M`;
const percent = (fraction: number, digits = 1): string => `${(100 * fraction).toFixed(digits)} %`;

/** The table: a Markdown table, one row per workload, and the reason under any not comparable. */
export function guardTable(rows: readonly Judged[]): string {
  const lines = [
    "| workload | what | baseline (instructions) | this build | ratio | tolerance | verdict |",
    "| --- | --- | ---: | ---: | ---: | ---: | --- |",
    ...rows.map((r) => `| ${r.workload} | ${r.what} | ${millions(r.baseline)} | ${millions(r.current)} | ${r.ratio.toFixed(4)} | ±${percent(r.tolerance)} | ${r.verdict} |`),
  ];
  for (const r of rows) if (r.notComparable !== undefined) lines.push(`${r.workload}: not comparable: ${r.notComparable}`);
  return lines.join("\n");
}

/** The median (the mean of the middle two for an even count). */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new RangeError("median of nothing");
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Spread of repeated measurements of one thing: (max − min) / median, a fraction. */
export function spreadOf(values: readonly number[]): number {
  return (Math.max(...values) - Math.min(...values)) / median(values);
}

/** The tolerance a measured spread calls for: three times it, and never below `floor`. */
export function toleranceFor(spread: number, floor: number): number {
  return Math.max(3 * spread, floor);
}

/**
 * The instructions executed by one process, from its valgrind log (`--log-file`): the
 * `I   refs:` line that callgrind and cachegrind both print at exit. Null when the process did
 * not get that far (killed, or valgrind failed).
 */
export function instructionsOf(log: string): number | null {
  const m = /^==\d+== I\s+refs:\s+([\d,]+)\s*$/m.exec(log);
  return m === null ? null : Number(m[1]!.replace(/,/g, ""));
}
