// The report model (src/report/model.ts): the counts both writers show, and seconds and start
// times as every report writes them.
import { describe, expect, it } from "vitest";
import { secondsText, tally, tallyAll, timestampText, type TestCase } from "../../src/report/model.js";

const of = (status: TestCase["status"]): TestCase => ({ id: status, status, seconds: 0 });

describe("report model", () => {
  it("tally counts the cases by status; tallyAll adds up several suites", () => {
    const cases = [of("passed"), of("failed"), of("failed"), of("error"), of("skipped"), of("passed"), of("passed")];
    expect(tally(cases)).toEqual({ tests: 7, passed: 3, failed: 2, errors: 1, skipped: 1 });
    expect(tally([])).toEqual({ tests: 0, passed: 0, failed: 0, errors: 0, skipped: 0 });
    const suite = (c: TestCase[]) => ({ name: "s", classname: "c", cases: c, seconds: 0 });
    expect(tallyAll([suite(cases.slice(0, 3)), suite([]), suite(cases.slice(3))])).toEqual(tally(cases));
  });

  it("seconds have three decimals, and are never negative nor anything but a number (a clock that went back, NaN, Infinity all write 0.000)", () => {
    expect([0.1234, 0.0126, 1.5, 12345.6789, 0].map(secondsText)).toEqual(["0.123", "0.013", "1.500", "12345.679", "0.000"]);
    expect([-0, -1, -0.5, NaN, Infinity, -Infinity].map(secondsText)).toEqual(["0.000", "0.000", "0.000", "0.000", "0.000", "0.000"]);
  });

  it("a start time is ISO 8601 in UTC to the second, its milliseconds cut", () => {
    expect(timestampText(new Date("2026-12-03T06:37:38.512Z"))).toBe("2026-12-03T06:37:38Z");
    expect(timestampText(new Date("2026-12-03T23:59:59.999+01:00"))).toBe("2026-12-03T22:59:59Z");
    expect(timestampText(new Date(0))).toBe("1970-01-01T00:00:00Z");
  });
});
