// The performance guard's judgement (scripts/perf-guard-lib.ts, docs/engineering/performance.md "Regression
// guard"): what a ratio of instructions means against a tolerance, how repeated measurements are
// summarised, and how valgrind's count is read. No process runs here; the guard itself is proved
// by hand (the doc's runs on an unchanged build and on a planted regression).
import { describe, expect, it } from "vitest";
import { failed, guardTable, instructionsOf, judge, leastWorkload, median, spreadOf, toleranceFor, verdictOf, workloadInstructions } from "../../scripts/perf-guard-lib.js";

describe("perf guard: the verdict of a ratio (this build ÷ baseline) against a tolerance", () => {
  it("within the tolerance either way is ok; the bounds themselves are ok", () => {
    expect([verdictOf(1, 0.02), verdictOf(1.02, 0.02), verdictOf(0.98, 0.02), verdictOf(1.0199, 0.02)]).toEqual(["ok", "ok", "ok", "ok"]);
  });

  it("more instructions than the tolerance allows is a regression; fewer is faster (which passes)", () => {
    expect(verdictOf(1.0201, 0.02)).toBe("REGRESSION");
    expect(verdictOf(0.9799, 0.02)).toBe("faster");
    expect(failed([judge({ workload: "w", what: "", baseline: 100, current: 97, tolerance: 0.02 })])).toBe(false);
    expect(failed([judge({ workload: "w", what: "", baseline: 100, current: 103, tolerance: 0.02 })])).toBe(true);
  });

  it("a ratio or tolerance that cannot be judged is refused, not passed", () => {
    for (const [ratio, tolerance] of [[Number.NaN, 0.02], [0, 0.02], [-1, 0.02], [Number.POSITIVE_INFINITY, 0.02], [1, -0.01], [1, Number.NaN]] as const) {
      expect(() => verdictOf(ratio, tolerance), `${ratio} at ${tolerance}`).toThrow(RangeError);
    }
  });

  it("builds that did different work are not comparable, whatever the ratio, and fail the guard", () => {
    const row = judge({ workload: "replay", what: "120 blocks", baseline: 100, current: 100, tolerance: 0.02, notComparable: "roots differ" });
    expect(row.verdict).toBe("NOT COMPARABLE");
    expect(failed([row])).toBe(true);
    expect(guardTable([row])).toContain("replay: not comparable: roots differ");
  });
});

describe("perf guard: measurements", () => {
  it("a workload's instructions are its run's minus its set-up's", () => {
    expect(workloadInstructions({ full: 3_467_000_000, setup: 1_581_000_000 })).toBe(1_886_000_000);
  });

  it("over repetitions, the workload is the least full run minus the least set-up (the sporadic extra instructions only ever add)", () => {
    // One set-up that read 25 M high does not make the workload read 25 M low.
    expect(leastWorkload([{ full: 5_947, setup: 2_288 }, { full: 5_925, setup: 2_267 }])).toBe(5_925 - 2_267);
    expect(leastWorkload([{ full: 5_925, setup: 2_288 }, { full: 5_947, setup: 2_267 }])).toBe(5_925 - 2_267);
    expect(leastWorkload([{ full: 10, setup: 4 }])).toBe(6);
    expect(() => leastWorkload([])).toThrow(RangeError);
  });

  it("the median of repetitions (the middle two averaged for an even count); the spread is (max − min) ÷ median", () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(() => median([])).toThrow(RangeError);
    expect(spreadOf([99, 100, 101])).toBeCloseTo(0.02, 12);
  });

  it("the tolerance a spread calls for is three times it, never below the floor", () => {
    expect(toleranceFor(0.001, 0.02)).toBe(0.02);
    expect(toleranceFor(0.01, 0.02)).toBeCloseTo(0.03, 12);
  });

  it("valgrind's instruction count is read from its log's 'I refs' line; a log without it reads as null", () => {
    const log = "==4408== Callgrind, a call-graph generating cache profiler\n==4408== Events    : Ir\n==4408== Collected : 1144584381\n==4408== \n==4408== I   refs:      1,144,584,381\n";
    expect(instructionsOf(log)).toBe(1_144_584_381);
    expect(instructionsOf("==4408== Callgrind, a call-graph generating cache profiler\n")).toBeNull();
  });

  it("the table shows both counts in millions, the ratio, the tolerance and the verdict", () => {
    const table = guardTable([judge({ workload: "qmdb-writes", what: "20 blocks", baseline: 1_885_700_000, current: 1_932_800_000, tolerance: 0.02 })]);
    expect(table.split("\n")[2]).toBe("| qmdb-writes | 20 blocks | 1,885.7 M | 1,932.8 M | 1.0250 | ±2.0 % | REGRESSION |");
  });
});
