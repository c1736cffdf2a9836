import { describe, expect, it } from "vitest";
import { LIVE_SCALARS, PARAMS, paramRow } from "../src/params.js";

describe("§18 parameter table", () => {
  it("§18: 25 live scalars + 12 base-rate rows + 7 codec bounds = 44 rows", () => {
    expect(PARAMS.filter((r) => r.class === "live")).toHaveLength(25);
    expect(PARAMS.filter((r) => r.class === "base_rate")).toHaveLength(12);
    expect(PARAMS.filter((r) => r.class === "codec")).toHaveLength(7);
  });
  it("§18.1: the 25-scalar read set is exactly the live class", () => {
    expect(new Set(LIVE_SCALARS).size).toBe(25);
    for (const name of LIVE_SCALARS) expect(paramRow(name)?.class).toBe("live");
  });
  it("§18: every default is within [1, Maximum]", () => {
    for (const r of PARAMS) {
      expect(r.default >= 1n && r.default <= r.maximum, r.name).toBe(true);
    }
  });
});
