import { it } from "vitest";
import { PATHS, observePlan } from "../../src/gas/plans.js";
it("scratch", () => {
  for (const p of PATHS) {
    try {
      const o = observePlan(p);
      const m = o.measurement;
      const got = m.status === "ok" ? "ok" : m.error;
      console.log((got === p.outcome ? "  " : "!!"), p.id, got, m.actual.reads, m.actual.writes, o.lines.filter(l => l.includes("unclass")).length);
    } catch (e) { console.log("ERR", p.id, (e as Error).message); }
  }
});
