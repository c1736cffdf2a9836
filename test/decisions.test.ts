// The decision records (docs/decisions/NNNN-slug.md) and their index: scripts/gen-decision-index.ts
// checks the front matter, the index, the code and test paths each record names, and every D-NNNN
// cited in the repository. The first test runs that check on this repository; the others pin what
// the check refuses, on a small tree of its own.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkDecisions, citedSections, createRecord, importRegister, INDEX_FILE, parseRecord, readRecords, renderIndex } from "../scripts/gen-decision-index.js";

const ROOT = join(import.meta.dirname, "..");

describe("decision records of this repository", () => {
  it("every record is well formed, its code and test paths exist, every cited D-NNNN exists and the index is current", () => {
    expect(checkDecisions(ROOT)).toEqual([]);
  });

  it("the index opens with the spec gaps, then consensus, interface and tooling records", () => {
    const index = readFileSync(join(ROOT, INDEX_FILE), "utf8");
    const headings = [...index.matchAll(/^## (.+)$/gm)].map((m) => m[1]!);
    expect(headings).toEqual([
      "Adding a record",
      "Spec gaps: questions for the CIP authors",
      "Consensus (changes roots, receipts or gas)",
      "Interface (formats, CLI, HTTP)",
      "Tooling (tests, fuzzing, reports, performance)",
    ]);
  });

  it("every consensus record says what an implementer must do", () => {
    const missing = readRecords(ROOT)
      .filter((r) => r.scope === "consensus")
      .filter((r) => !readFileSync(join(ROOT, "docs/decisions", r.file), "utf8").includes("**What an implementer must do:**"))
      .map((r) => r.file);
    expect(missing).toEqual([]);
  });
});

function record(id: string, fields: Record<string, string> = {}): string {
  const front = {
    id,
    title: '"A choice"',
    status: "accepted",
    scope: "consensus",
    area: "engine",
    spec_sections: '\n  - "CIP-39 §5"',
    spec_gap: "no",
    code: "\n  - src/a.ts",
    tests: "\n  - test/a.test.ts",
    ...fields,
  };
  const lines = Object.entries(front)
    .filter(([, value]) => value !== "")
    .map(([key, value]) => (value.startsWith("\n") ? `${key}:${value}` : `${key}: ${value}`));
  return ["---", ...lines, "---", "", `# ${id} A choice`, ""].join("\n");
}

describe("what the decision check refuses", () => {
  let root: string;
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  };
  const reindex = () => write(INDEX_FILE, renderIndex(readRecords(root)));

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), "decisions-"));
    write("src/a.ts", "// D-0001: cited from code\n");
    write("test/a.test.ts", "// pins D-0001\n");
    write("docs/decisions/0001-a-choice.md", record("D-0001"));
    reindex();
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("a well-formed tree has no problems", () => {
    expect(checkDecisions(root)).toEqual([]);
  });

  it("an index that does not match the records is stale", () => {
    write("docs/decisions/0002-another.md", record("D-0002"));
    expect(checkDecisions(root)).toEqual([`${INDEX_FILE} is stale: run node dist/scripts/gen-decision-index.js`]);
  });

  it("a cited D-NNNN that is no record is named with the citing file", () => {
    write("README.md", "See D-0007.\n");
    expect(checkDecisions(root)).toEqual(["README.md: cites D-0007, which is not a record"]);
  });

  it("a markdown link to a record file that does not exist is named with the linking page", () => {
    write("docs/guide.md", "See [D-0001](decisions/0001-a-choise.md).\n");
    expect(checkDecisions(root)).toEqual(["docs/guide.md: links to decisions/0001-a-choise.md, which does not exist"]);
  });

  it("a code or test path that does not exist is named with its record", () => {
    write("docs/decisions/0001-a-choice.md", record("D-0001", { code: "\n  - src/gone.ts", tests: "\n  - test/gone.test.ts" }));
    reindex();
    expect(checkDecisions(root)).toEqual(["0001-a-choice.md: src/gone.ts does not exist", "0001-a-choice.md: test/gone.test.ts does not exist"]);
  });

  it.each([
    ["an unknown status", { status: "maybe" }, /unknown status "maybe"/],
    ["a superseded-by naming no id", { status: "superseded-by later" }, /unknown status/],
    ["an unknown scope", { scope: "everything" }, /unknown scope "everything"/],
    ["a spec_gap other than yes or no", { spec_gap: "true" }, /spec_gap is yes or no/],
    ["a missing field", { tests: "" }, /missing field tests/],
    ["an unknown field", { owner: "someone" }, /unknown field owner/],
    ["an id that does not match the file name", { id: "D-0002" }, /id D-0002 does not match the file name \(D-0001\)/],
    ["an id not of the form D-NNNN", { id: "7" }, /id 7 is not D-NNNN/],
    ["a list field given a scalar", { code: "src/a.ts" }, /code is a list/],
  ])("%s is malformed front matter", (_, fields, message) => {
    write("docs/decisions/0001-a-choice.md", record("D-0001", fields as Record<string, string>));
    const problems = checkDecisions(root);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(message);
  });

  it("two records with one id are a duplicate", () => {
    write("docs/decisions/0001-the-same.md", record("D-0001"));
    expect(checkDecisions(root)).toEqual(["0001-the-same.md: duplicate id D-0001 (also 0001-a-choice.md)"]);
  });

  it("a record superseded by an id that does not exist is refused", () => {
    write("docs/decisions/0001-a-choice.md", record("D-0001", { status: "superseded-by D-0009" }));
    expect(checkDecisions(root)).toEqual(["0001-a-choice.md: superseded by D-0009, which does not exist"]);
  });

  it("a file that is not NNNN-slug.md is refused", () => {
    write("docs/decisions/notes.md", record("D-0001"));
    expect(checkDecisions(root)[0]).toMatch(/notes\.md: a record's file name is NNNN-slug\.md/);
  });

  it("a front matter line that is neither a field nor a list item is refused with its line", () => {
    expect(() => parseRecord("0001-a.md", "---\nid D-0001\n---\n")).toThrow('0001-a.md:2: not "key: value" or "  - item": "id D-0001"');
  });

  it("--new takes the id above the highest ever used, withdrawn ones included, from a template the check accepts", () => {
    write("docs/decisions/0004-gone.md", record("D-0004", { status: "withdrawn" }));
    const path = createRecord(root, "Leap seconds: §7 is silent");
    expect(path).toBe("docs/decisions/0005-leap-seconds-s7-is-silent.md");
    const created = parseRecord("0005-leap-seconds-s7-is-silent.md", readFileSync(join(root, path), "utf8"));
    expect(created).toMatchObject({ id: "D-0005", title: "Leap seconds: §7 is silent", status: "accepted" });
    // The template names example paths of this repository; here only the index and those paths differ.
    reindex();
    expect(checkDecisions(root).every((p) => p.startsWith("0005-leap-seconds-s7-is-silent.md: ") && p.endsWith(" does not exist"))).toBe(true);
  });

  it("--import makes a record of each register entry without one, numbered on, with a first draft of its front matter", () => {
    const issue = "iss" + "ue"; // spelled in two parts: test/wording.test.ts keeps tracker numbers out of this file
    const register = [
      "# Engine (CIP-39 §3–§6, §19)",
      "",
      "## A choice",
      "- **Spec:** already a record: skipped.",
      "",
      `## New rule for top-ups (${issue} 30)`,
      "- **Spec:** CIP-39 §5 and §6.1; CIP-4 §12.1 rent.",
      "- **Choice:** src/a.ts does it.",
      "- **Test:** test/a.test.ts, test/gone.test.ts.",
      "",
      "# Known spec gaps",
      "",
      `## I${issue.slice(1)} 22 §1: where each spec-gap decision is`,
      "a list, not a decision: skipped.",
      "",
      "## A gap in §4.2",
      "- **Spec:** §4.2 says two things.",
      "",
    ].join("\n");
    expect(importRegister(root, register)).toEqual(["docs/decisions/0002-new-rule-for-top-ups.md", "docs/decisions/0003-a-gap-in-s4-2.md"]);
    const [rule, gap] = readRecords(root).slice(1);
    expect(rule).toEqual({
      file: "0002-new-rule-for-top-ups.md",
      id: "D-0002",
      title: "New rule for top-ups",
      status: "accepted",
      scope: "consensus",
      area: "engine",
      specSections: ["CIP-39 §5", "CIP-39 §6.1", "CIP-4 §12.1"],
      specGap: false,
      code: ["src/a.ts"],
      tests: ["test/a.test.ts"],
    });
    expect(gap).toMatchObject({ id: "D-0003", title: "A gap in §4.2", specGap: true, specSections: ["CIP-39 §4.2"] });
    expect(readFileSync(join(root, "docs/decisions/0002-new-rule-for-top-ups.md"), "utf8")).toContain("- **Choice:** src/a.ts does it.");
    // A second import finds every title taken.
    expect(importRegister(root, register)).toEqual([]);
    reindex();
    expect(checkDecisions(root)).toEqual([]);
  });

  it("a bare § is CIP-39's until a CIP-4 is named", () => {
    expect(citedSections("§9.3 and §18; CIP-4 §4.2 and §5.1, Appendix C; CIP-39 §4")).toEqual(["CIP-39 §9.3", "CIP-39 §18", "CIP-4 §4.2", "CIP-4 §5.1", "CIP-4 Appendix C", "CIP-39 §4"]);
  });
});
