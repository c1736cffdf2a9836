// The public API is reviewed, not accidental: the committed reports (docs/api-report/) must be
// what API Extractor reads from the built declarations; a change to an entry point's exports
// fails here until its report is updated (node dist/scripts/api-report.js --update) and committed.
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { API_ENTRIES, apiReports, REPORT_FOLDER, reportName } from "../../scripts/api-report.js";
import { requireFreshDist } from "../fuzz/dist.js";

describe("API reports (docs/api-report/)", () => {
  it("every entry point of package.json has a report, and every report is an entry point", () => {
    const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { exports: Record<string, unknown> };
    const subpaths = Object.keys(pkg.exports).filter((k) => k !== "./package.json").map((k) => (k === "." ? "cbqs-emulator" : `cbqs-emulator/${k.slice(2)}`));
    expect(API_ENTRIES.map((e) => e.subpath).sort()).toEqual(subpaths.sort());
  });

  it("each committed report is the API of the built declarations", () => {
    requireFreshDist();
    const results = apiReports(false);
    expect(results.filter((r) => r.changed || r.errors.length > 0)).toEqual([]);
  }, 120_000);

  it("a report that differs from the declarations is found (the check can fail)", () => {
    requireFreshDist();
    const saved = mkdtempSync(join(tmpdir(), "cbqs-api-report-"));
    const file = join(REPORT_FOLDER, reportName("cbqs-emulator/crypto"));
    cpSync(file, join(saved, "report.md"));
    try {
      writeFileSync(file, readFileSync(file, "utf8").replace("export function keccak256", "export function keccak257"));
      const crypto = apiReports(false).find((r) => r.subpath === "cbqs-emulator/crypto")!;
      expect(crypto.changed).toBe(true);
    } finally {
      cpSync(join(saved, "report.md"), file);
      rmSync(saved, { recursive: true, force: true });
    }
  }, 120_000);
});
