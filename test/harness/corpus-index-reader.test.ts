// The corpus index read, written and checked in process (docs/reference/formats/fixture.md "Test
// ids and the index"): every malformed index.json is unusable input naming the JSON path of the
// bad value; entries, kinds, errors and problems come out sorted whatever order they arrive in.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkIndex, fileSha256, fixtureSummary, readIndex, writeIndex, type IndexEntry } from "../../src/harness/corpus-index.js";
import { readFixture } from "../../src/harness/documents.js";
import { CORPUS } from "./helpers.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "cbqs-index-unit-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const SHA = "ab".repeat(32);
const entry = (id: string, extra: Record<string, unknown> = {}) => ({ id, file: id, sha256: SHA, blocks: "1", transactions: "2", instructions: ["Transfer"], errors: [], ...extra });
/** readIndex of an index.json holding `doc`: its entries, or the message it is refused with. */
function read(doc: unknown): IndexEntry[] | string {
  writeFileSync(join(dir, "index.json"), JSON.stringify(doc));
  try {
    return readIndex(dir)!;
  } catch (err) {
    return (err as Error).message.replace(`${join(dir, "index.json")}: `, "");
  }
}

describe("readIndex: a malformed index.json is refused, naming the JSON path of the bad value", () => {
  it("a directory without index.json has no index; a well-formed one is read with its counts as numbers", () => {
    expect(readIndex(dir)).toBeNull();
    expect(read({ format: "cbqs-fixture-index/v1", fixtures: [entry("a.json", { errors: ["NotAuthorized"] })] })).toEqual([
      { id: "a.json", file: "a.json", sha256: SHA, blocks: 1, transactions: 2, instructions: ["Transfer"], errors: ["NotAuthorized"] },
    ]);
  });

  it("the format, the fixtures list and every field of an entry are checked where they are", () => {
    const fixtures = (...e: unknown[]) => ({ format: "cbqs-fixture-index/v1", fixtures: e });
    expect(read({ format: "cbqs-fixture-index/v2", fixtures: [] })).toBe('$.format: expected "cbqs-fixture-index/v1"');
    expect(read({ format: "cbqs-fixture-index/v1", fixtures: {} })).toMatch(/^\$\.fixtures: /);
    expect(read({ fixtures: [] })).toMatch(/^\$(\.format)?: /);
    expect(read(fixtures(entry("a.json"), entry("b.json", { id: 7 })))).toMatch(/^\$\.fixtures\[1\]\.id: /);
    expect(read(fixtures(entry("a.json", { file: null })))).toMatch(/^\$\.fixtures\[0\]\.file: /);
    expect(read(fixtures(entry("a.json", { sha256: "xyz" })))).toMatch(/^\$\.fixtures\[0\]\.sha256: /);
    expect(read(fixtures(entry("a.json", { blocks: "-1" })))).toMatch(/^\$\.fixtures\[0\]\.blocks: /);
    expect(read(fixtures(entry("a.json", { transactions: 2 })))).toMatch(/^\$\.fixtures\[0\]\.transactions: /);
    expect(read(fixtures(entry("a.json", { instructions: "Transfer" })))).toMatch(/^\$\.fixtures\[0\]\.instructions: /);
    expect(read(fixtures(entry("a.json", { errors: ["Fine", 3] })))).toMatch(/^\$\.fixtures\[0\]\.errors\[1\]: /);
    expect(read(fixtures(entry("a.json", { extra: 1 })))).toMatch(/^\$\.fixtures\[0\]/);
  });

  it("an entry's file is a fixture's name in the directory: not a path, not index.json itself; an id is listed once", () => {
    const fixtures = (...e: unknown[]) => ({ format: "cbqs-fixture-index/v1", fixtures: e });
    const notAFixture = "expected the name of a fixture file in this directory";
    expect(read(fixtures(entry("a.json", { file: "../a.json" })))).toBe(`$.fixtures[0].file: ${notAFixture}`);
    expect(read(fixtures(entry("a.json", { file: "index.json" })))).toBe(`$.fixtures[0].file: ${notAFixture}`);
    expect(read(fixtures(entry("a.json"), entry("b.json"), entry("a.json", { file: "c.json" })))).toBe("$.fixtures[2].id: a.json is listed twice");
  });
});

describe("the index's order does not depend on the order entries, kinds or problems arrive in", () => {
  it("writeIndex lists the entries sorted by id, counts as decimal strings", () => {
    const e = (id: string): IndexEntry => ({ id, file: id, sha256: SHA, blocks: 3, transactions: 4, instructions: [], errors: [] });
    writeIndex(dir, [e("b.json"), e("c.json"), e("a.json")]);
    const doc = JSON.parse(readFileSync(join(dir, "index.json"), "utf8")) as { fixtures: Array<{ id: string; blocks: string }> };
    expect(doc.fixtures.map((f) => f.id)).toEqual(["a.json", "b.json", "c.json"]);
    expect(doc.fixtures[0]!.blocks).toBe("3");
  });

  it("fixtureSummary's kinds and error names are distinct and sorted, whatever the order of the transactions and receipts", () => {
    const fixture = readFixture(join(CORPUS, "create-base-schedule.json"));
    const forward = fixtureSummary(fixture);
    expect(forward.errors.length).toBeGreaterThan(2);
    expect(forward.instructions.length).toBeGreaterThan(2);
    for (const list of [forward.errors, forward.instructions]) expect(list).toEqual([...new Set(list)].sort());
    const reversed = { ...fixture, blocks: [...fixture.blocks].reverse().map((b) => ({ ...b, transactions: [...b.transactions].reverse(), receipts: [...b.receipts].reverse() })) };
    expect(fixtureSummary(reversed)).toEqual(forward);
  });

  it("checkIndex names missing, extra and edited fixtures sorted by id; problems of one id keep their order (the index's first)", () => {
    writeFileSync(join(dir, "a.json"), "a");
    writeFileSync(join(dir, "c.json"), "c");
    writeFileSync(join(dir, "d.json"), "d");
    const listed = (id: string, file = id, sha256 = SHA): IndexEntry => ({ id, file, sha256, blocks: 0, transactions: 0, instructions: [], errors: [] });
    // Found in the order b (listed, missing), c (edited), a (not listed): neither sorted nor reversed.
    const problems = checkIndex(dir, ["d.json", "c.json", "a.json"], [listed("b.json"), listed("d.json", "d.json", fileSha256(join(dir, "d.json"))), listed("c.json")]);
    expect(problems).toEqual([
      { id: "a.json", problem: `in ${dir} but not listed in index.json` },
      { id: "b.json", problem: `listed in index.json but missing from ${dir}` },
      { id: "c.json", problem: `edited since index.json was written: sha256 ${fileSha256(join(dir, "c.json"))}, the index has ${SHA}` },
    ]);
    // A hand-edited index whose entry "a.json" names a missing file, beside an unlisted a.json.
    expect(checkIndex(dir, ["a.json"], [listed("a.json", "gone.json")])).toEqual([
      { id: "a.json", problem: `listed in index.json but missing from ${dir}` },
      { id: "a.json", problem: `in ${dir} but not listed in index.json` },
    ]);
  });
});
