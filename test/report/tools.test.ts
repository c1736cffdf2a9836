// The rule of test/report/tools.ts (D-0098 "Report tests need xmllint and Chromium"):
// a missing tool skips its test on a developer's machine, saying which and how to install it, and
// fails it in CI — never a silent pass.
import { afterEach, describe, expect, it, type TestContext } from "vitest";
import { chromiumMissing, requireTool, xmllintMissing } from "./tools.js";

const saved = { CI: process.env["CI"], PATH: process.env["PATH"], CBQS_CHROMIUM: process.env["CBQS_CHROMIUM"] };
afterEach(() => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

/** A test context whose skip records its note (vitest's throws to end the test). */
function fakeContext(): { ctx: TestContext; skipped: string[] } {
  const skipped: string[] = [];
  const skip = (note?: unknown) => void skipped.push(String(note));
  return { ctx: { skip } as unknown as TestContext, skipped };
}

describe("report test tools: skipped with a reason on a bare machine, failed in CI", () => {
  it("a missing xmllint or Chromium is named with the apt-get command that installs it", () => {
    process.env["PATH"] = "/nonexistent";
    expect(xmllintMissing()).toBe("xmllint is not installed (apt-get update && apt-get install -y --no-install-recommends libxml2-utils)");
    process.env["CBQS_CHROMIUM"] = "/nonexistent/chromium";
    expect(chromiumMissing()).toBe("no Chromium at /nonexistent/chromium (apt-get update && apt-get install -y --no-install-recommends chromium; or set CBQS_CHROMIUM to a Chromium or Chrome binary)");
  });

  it("outside CI the test is skipped with that reason; in CI (CI=1 or true) it fails; a tool that is there changes nothing", () => {
    const missing = "xmllint is not installed (apt-get …)";
    delete process.env["CI"];
    const bare = fakeContext();
    requireTool(bare.ctx, missing);
    expect(bare.skipped).toEqual([missing]);
    for (const ci of ["1", "true"]) {
      process.env["CI"] = ci;
      const c = fakeContext();
      expect(() => requireTool(c.ctx, missing)).toThrow(`${missing}: CI must have it (.ci/run installs it)`);
      expect(c.skipped).toEqual([]);
    }
    const present = fakeContext();
    requireTool(present.ctx, null);
    expect(present.skipped).toEqual([]);
  });
});
