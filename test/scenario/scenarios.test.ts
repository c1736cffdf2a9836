// Every scenario in fixtures/scenarios runs through the runner with all its expectations
// (scenario-format §3) passing. Each scenario names the CIP-39 sections it exercises.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseScenarioText } from "../../src/scenario/parse.js";
import { runScenario } from "../../src/scenario/run.js";

const DIR = join(import.meta.dirname, "../../fixtures/scenarios");
const files = readdirSync(DIR).filter((f) => f.endsWith(".json")).sort();

describe("engine scenario suite (fixtures/scenarios, scenario-format §3)", () => {
  it("the suite is not empty", () => {
    expect(files.length).toBeGreaterThan(0);
  });
  for (const file of files) {
    const text = readFileSync(join(DIR, file), "utf8");
    const description = (JSON.parse(text) as { description?: string }).description ?? "";
    it(`${file}: ${description}`, () => {
      // Each scenario names the CIP-39 sections it exercises.
      expect(description).toMatch(/§\d/);
      const { failure, document } = runScenario(parseScenarioText(text));
      expect(failure?.message ?? null).toBeNull();
      expect(document.blocks.length).toBeGreaterThan(0);
    });
  }
});
