import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { COSTS } from "../../src/engine/meter.js";
import { scheduleMarkdown } from "../../src/gas/schedule.js";

describe("gas-vectors/SCHEDULE.md (CIP-39 §18.1)", () => {
  it("§18.1 the committed schedule is exactly the text generated from the cost module", () => {
    expect(readFileSync("gas-vectors/SCHEDULE.md", "utf8")).toBe(scheduleMarkdown());
  });

  it("§18.1 the constants table follows the code: a different schedule renders differently", () => {
    const text = scheduleMarkdown({ ...COSTS, ed25519VerifyCycles: 4_321n });
    expect(text).toContain("| `ed25519VerifyCycles` | 4,321 | cycles |");
    expect(scheduleMarkdown()).toContain("| `ed25519VerifyCycles` | 3,000 | cycles |");
    expect(scheduleMarkdown()).toContain("| `readCycles` | 10 | cycles |");
    expect(scheduleMarkdown()).toContain("| `writeCycles` | 50 | cycles |");
  });
});
