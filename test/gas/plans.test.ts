import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { RESERVATIONS } from "../../src/engine/meter.js";
import { GOVERNANCE_BOUNDS_LINE } from "../../src/gas/classify.js";
import { observePlan, PATHS, plansMarkdown } from "../../src/gas/plans.js";

const plans = PATHS.map(observePlan);
/** §18.1: these two read no governance scalars; every other handler reads the 25 first. */
const NO_BOUNDS = new Set(["SetProviderStatus", "ActivateKeyGeneration"]);

describe("canonical state-I/O plans (CIP-39 §18.1, docs/reference/canonical-plans.md)", () => {
  it("§18.1 every documented path's observed plan equals the committed docs/reference/canonical-plans.md", () => {
    expect(readFileSync("docs/reference/canonical-plans.md", "utf8")).toBe(plansMarkdown(plans));
  });

  it("§18.1 every path ends in its intended outcome and fits its reservation", () => {
    for (const { path, measurement: m } of plans) {
      expect(m.status === "ok" ? "ok" : m.error, path.id).toBe(path.outcome);
      expect(m.instruction, path.id).toBe(path.instruction);
      expect(m.actual.reads, path.id).toBeLessThanOrEqual(RESERVATIONS[path.instruction].reads);
      expect(m.actual.writes, path.id).toBeLessThanOrEqual(RESERVATIONS[path.instruction].writes);
    }
  });

  it("§18.1 every instruction and every outcome class is covered, with at least one accepted path each", () => {
    for (const name of Object.keys(RESERVATIONS)) {
      expect(plans.some((p) => p.path.instruction === name && p.path.outcome === "ok"), name).toBe(true);
      expect(plans.some((p) => p.path.instruction === name && p.path.outcome !== "ok"), name).toBe(true);
    }
  });

  it("§18.1 every access is classified; a handler that touches state starts with the bounds set (when it reads it), then one pause-record read, then the singleton", () => {
    for (const { path, lines } of plans) {
      expect(lines.filter((l) => l.includes("unclassified")), path.id).toEqual([]);
      if (lines.length === 0) continue;
      const prefix = NO_BOUNDS.has(path.instruction) ? ["R pause-record", "R singleton"] : [GOVERNANCE_BOUNDS_LINE, "R pause-record", "R singleton"];
      expect(lines.slice(0, prefix.length), path.id).toEqual(prefix);
      expect(lines.filter((l) => l === "R pause-record"), path.id).toHaveLength(1);
      expect(lines.some((l) => l.startsWith("R param ")), path.id).toBe(false); // only the ordered 25
    }
  });

  it("§6.1 a rejected TopUpStream writes nothing (the settlement is evaluated, not committed)", () => {
    for (const { path, lines } of plans.filter((p) => p.path.instruction === "TopUpStream" && p.path.outcome !== "ok")) {
      expect(lines.filter((l) => l.startsWith("W")), path.id).toEqual([]);
    }
  });
});
