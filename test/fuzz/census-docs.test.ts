// The census's cell names (src/fuzz/cells.ts, reach.ts) are the rows of docs/reference/fuzzer.md §4's
// census tables, word for word: `cbqs fuzz` and scripts/fuzz-census.ts print them, and a reader
// looks them up there. A cell renamed in one place only (as "parameter write of u64 max" once
// was) is a census nobody can read against the docs. Hand-reviewed mutants of the
// cells' names.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { STATE } from "../../src/fuzz/cells.js";
import { requiredCells } from "../../src/fuzz/reach.js";

const doc = readFileSync("docs/reference/fuzzer.md", "utf8");
const census = doc.slice(doc.indexOf("### The census"), doc.indexOf("## 5. Shrinking"));
/** The first column of the census's "runs | times" tables (§6.1 states, edges, parameter writes), without "(not required)". */
const rows = new Set([...census.matchAll(/^\| (.+?) \| [\d.]+ % \| [\d,]+ \|$/gm)].map((m) => m[1]!.replace(/ \(not required\)$/, "")));

describe("the census's cell names are docs/reference/fuzzer.md §4's rows", () => {
  it("every required state, edge and parameter cell is a row of its table", () => {
    expect(rows.size).toBeGreaterThan(70);
    const named = requiredCells().filter((c) => c.group !== "outcome");
    expect(named.length).toBeGreaterThan(60);
    for (const c of named) expect(rows.has(c.name), `${c.group}: ${c.name}`).toBe(true);
  });

  it("every §6.1 cell with a name of its own, and the quote cells of both instructions", () => {
    const names = Object.values(STATE).flatMap((v) => (typeof v === "string" ? [v] : [v("CreateStream"), v("UpdateStream")]));
    expect(names).toHaveLength(Object.keys(STATE).length + 2);
    for (const name of names) expect(rows.has(name), name).toBe(true);
  });
});
