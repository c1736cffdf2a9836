// The mutation scores of docs/engineering/testing.md are generated (scripts/mutation-scores.ts) from the
// committed summary of Stryker's reports (docs/mutation/scores.json) and the survivors judged
// equivalent (docs/mutation/equivalent.json): the table must be what they give, every equivalent
// must name a survivor of the summary and give its reason, and the summary is Stryker's counts.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BEGIN, DOC_FILE, mergeFiles, readScores, renderTable, summarize, unmatchedEquivalents, withTable, type Scores } from "../../scripts/mutation-scores.js";

describe("docs/engineering/testing.md's mutation scores (scripts/mutation-scores.ts)", () => {
  it("the table between the markers is the one docs/mutation/ gives (run `node dist/scripts/mutation-scores.js write` after changing either)", () => {
    const { scores, equivalents } = readScores();
    const doc = readFileSync(DOC_FILE, "utf8");
    expect(doc.indexOf(BEGIN)).toBeGreaterThan(0);
    expect(withTable(doc, renderTable(scores, equivalents))).toBe(doc);
  });

  it("every equivalent names a survivor of the summary (file, line, column, mutator, replacement) and says why", () => {
    const { scores, equivalents } = readScores();
    expect(unmatchedEquivalents(scores, equivalents)).toEqual([]);
    for (const e of equivalents) expect(e.reason.length, `${e.file}:${e.line}`).toBeGreaterThan(20);
  });

  it("a report's summary: mutants counted by status per file, survivors and uncovered mutants by file, line, column, mutator and replacement, the run's test files", () => {
    const mutant = (status: string, line: number, mutatorName = "ConditionalExpression", replacement = "true") => ({ status, mutatorName, replacement, location: { start: { line, column: 5 } } });
    const summary = summarize(
      {
        schemaVersion: "1.0",
        files: {
          "src/b.ts": { mutants: [mutant("Killed", 1), mutant("Survived", 9, "StringLiteral", '""'), mutant("CompileError", 2)] },
          "src/a.ts": { mutants: [mutant("Timeout", 3), mutant("NoCoverage", 4), mutant("Ignored", 5), mutant("Killed", 6)] },
        },
        testFiles: { "test/z.test.ts": {}, "test/a.test.ts": {} },
      },
      "2026-12-07",
    );
    expect(summary.testFiles).toEqual(["test/a.test.ts", "test/z.test.ts"]);
    expect(Object.keys(summary.files)).toEqual(["src/a.ts", "src/b.ts"]);
    expect(summary.files["src/a.ts"]).toMatchObject({ Killed: 1, Timeout: 1, NoCoverage: 1, Ignored: 1, Survived: 0, CompileError: 0 });
    expect(summary.survivors).toEqual([
      { file: "src/a.ts", line: 4, column: 5, mutator: "ConditionalExpression", replacement: "true", status: "NoCoverage" },
      { file: "src/b.ts", line: 9, column: 5, mutator: "StringLiteral", replacement: '""', status: "Survived" },
    ]);
    expect(() => summarize({ schemaVersion: "2.0", files: {} }, "")).toThrow(/schemaVersion 2\.0/);
    expect(() => summarize({ schemaVersion: "1.0", files: { "x.ts": { mutants: [mutant("Exploded", 1)] } } }, "")).toThrow("x.ts: unknown mutant status Exploded");
  });

  it("a score is (killed + timed out) / valid, rounded down; an equivalent survivor is counted out only in the last score; an unlisted one is open", () => {
    const counts = { Killed: 18, Timeout: 1, Survived: 1, NoCoverage: 0, CompileError: 7, RuntimeError: 0, Ignored: 3, Pending: 0 };
    const scores: Scores = {
      format: "cbqs-mutation-scores/v1",
      modules: { m: { measured: "2026-12-07", testFiles: ["t.test.ts"], files: { "src/m.ts": counts }, survivors: [{ file: "src/m.ts", line: 7, column: 9, mutator: "EqualityOperator", replacement: "a <= b", status: "Survived" }] } },
    };
    // 19 of 20 = 95.0 %; with the survivor listed, 19 of 19.
    const listed = renderTable(scores, [{ file: "src/m.ts", line: 7, column: 9, mutator: "EqualityOperator", replacement: "a <= b", reason: "at equality both branches are the same number" }]);
    expect(listed).toContain("| **m** (2026-12-07) | 20 | 18 | 1 | 1 | 0 | 1 | 0 | 95.0 % | **100.0 %** | 1 |");
    expect(listed).toContain("| `src/m.ts:7:9` | EqualityOperator → `a <= b` | at equality both branches are the same number |");
    expect(listed).toContain("Open survivors: none.");
    const open = renderTable(scores, []);
    expect(open).toContain("| **m** (2026-12-07) | 20 | 18 | 1 | 1 | 0 | 0 | 1 | 95.0 % | 95.0 % | 1 |");
    expect(open).toContain("- `src/m.ts:7:9` EqualityOperator → `a <= b` (survived)");
    // Mutants no test reached: one line per file, with their count and line range.
    scores.modules["m"]!.survivors.push(
      { file: "src/n.ts", line: 30, column: 1, mutator: "BlockStatement", replacement: "{}", status: "NoCoverage" },
      { file: "src/n.ts", line: 12, column: 5, mutator: "ConditionalExpression", replacement: "true", status: "NoCoverage" },
    );
    expect(renderTable(scores, [])).toContain("- `src/n.ts`: 2 not covered, lines 12–30");
    // 9,499 of 10,000 is 94.99 %: shown as 94.9 %, never as 95.0 %.
    scores.modules["m"]!.files["src/m.ts"] = { ...counts, Killed: 9_498, Timeout: 1, Survived: 501 };
    expect(renderTable(scores, [])).toContain("| 94.9 % |");
  });

  it("a run of some of a module's files (update <module>+=<report>) replaces those files' counts and survivors and keeps the others as measured", () => {
    const counts = (killed: number, survived: number) => ({ Killed: killed, Timeout: 0, Survived: survived, NoCoverage: 0, CompileError: 0, RuntimeError: 0, Ignored: 0, Pending: 0 });
    const survivor = (file: string, line: number) => ({ file, line, column: 1, mutator: "BooleanLiteral", replacement: "false", status: "Survived" as const });
    const module = { measured: "2026-12-06", testFiles: ["test/a.test.ts"], files: { "src/a.ts": counts(5, 1), "src/b.ts": counts(3, 2) }, survivors: [survivor("src/a.ts", 4), survivor("src/b.ts", 2), survivor("src/b.ts", 8)] };
    const part = { measured: "2026-12-07", testFiles: ["test/b.test.ts"], files: { "src/b.ts": counts(4, 1), "src/c.ts": counts(1, 0) }, survivors: [survivor("src/b.ts", 9)] };
    expect(mergeFiles(module, part)).toEqual({
      measured: "2026-12-07",
      testFiles: ["test/a.test.ts", "test/b.test.ts"],
      files: { "src/a.ts": counts(5, 1), "src/b.ts": counts(4, 1), "src/c.ts": counts(1, 0) },
      survivors: [survivor("src/a.ts", 4), survivor("src/b.ts", 9)],
    });
    // A module not in the summary yet is the part itself.
    expect(mergeFiles(undefined, part)).toBe(part);
  });
});
