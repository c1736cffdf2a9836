import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeDiff, firstDivergence } from "../../src/harness/diff.js";
import { readDocument } from "../../src/harness/documents.js";
import { cli, flipHex, readDoc } from "./helpers.js";

const FIXTURE = "fixtures/corpus/provider-lifecycle.json";
const dir = mkdtempSync(join(tmpdir(), "cbqs-diff-"));
const put = (name: string, v: unknown): string => {
  const p = join(dir, name);
  writeFileSync(p, typeof v === "string" ? v : JSON.stringify(v, null, 2));
  return p;
};
let n = 0;
const diffOf = (a: unknown, b: unknown): string | null => describeDiff(readDocument(put(`ours-${++n}.json`, a)), readDocument(put(`theirs-${n}.json`, b)))?.join("\n") ?? null;

describe("first divergence (goevmlab convention)", () => {
  it("walks arrays and objects in document order and reports the first differing leaf", () => {
    expect(firstDivergence({ a: [1, { b: 2 }], c: 3 }, { a: [1, { b: 4 }], c: 5 })).toEqual({ path: ["a", 1, "b"], ours: 2, theirs: 4 });
    expect(firstDivergence([1, 2], [1, 2, 3])).toEqual({ path: ["length"], ours: 2, theirs: 3 });
    expect(firstDivergence({ a: 1 }, { a: 1, z: 2 })).toEqual({ path: ["z"], ours: undefined, theirs: 2 });
    expect(firstDivergence({ a: [1] }, { a: [1] })).toBeNull();
  });

  it("fixtures: names the block height, tx index, instruction and field", () => {
    const ours = readDoc(FIXTURE);
    const theirs = readDoc(FIXTURE);
    theirs.blocks[1]!.receipts[1]!.cycles = "1";
    theirs.blocks[2]!.receipts[0]!.cells = "1"; // a later difference is not the first
    expect(diffOf(ours, theirs)).toBe(
      `block ${ours.blocks[1]!.height} tx 1 UpdateProvider: receipts[1].cycles expected "${ours.blocks[1]!.receipts[1]!.cycles}" got "1"`,
    );
    expect(diffOf(ours, readDoc(FIXTURE))).toBeNull();
  });

  it("state dumps: the first differing key with decoded values", () => {
    const post = readDoc(FIXTURE).blocks[2]!["post_state"] as { format: string; entries: Array<{ key: string; value: string }> };
    const theirs = JSON.parse(JSON.stringify(post)) as typeof post;
    const i = theirs.entries.findIndex((e) => e.key.startsWith("0x01"));
    theirs.entries[i]!.value = flipHex(theirs.entries[i]!.value);
    const text = diffOf(post, theirs)!;
    expect(text).toMatch(new RegExp(`^state: key ${post.entries[i]!.key}: balance expected "\\d+" got "\\d+"`));
  });

  it("traces: block, tx, instruction, the n-th write and its key", async () => {
    const trace = put("ours.trace", "");
    const r = await cli(["trace", FIXTURE, "--block", "1", "-o", trace]);
    expect(r.exitCode).toBe(0);
    const lines = readFileSync(trace, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l));
    const tx = lines.findIndex((l) => l.steps?.some((s: { op: string }) => s.op === "write") && l.tx_index !== null);
    const steps = lines[tx].steps as Array<{ op: string; key: string; after: string | null }>;
    const w = steps.map((s, k) => [s, k] as const).filter(([s]) => s.op === "write");
    const [step] = w[w.length - 1]!;
    const theirs = JSON.parse(JSON.stringify(lines));
    theirs[tx].steps[w[w.length - 1]![1]].after = "0x00";
    const text = diffOf(readFileSync(trace, "utf8"), theirs.map((l: unknown) => JSON.stringify(l)).join("\n") + "\n");
    expect(text).toContain(`block 1 tx ${lines[tx].tx_index} ${lines[tx].kind}: write #${w.length} key ${step.key}: after expected "${step.after}" got "0x00"`);
  });

  it("firstDivergence is iterative: 100,000 levels of nesting do not exhaust the stack", () => {
    let a: unknown = 1;
    let b: unknown = 2;
    for (let i = 0; i < 100_000; i++) {
      a = [a];
      b = [b];
    }
    expect(firstDivergence(a, b)?.path.length).toBe(100_000);
  });
});

describe("cbqs diff CLI", () => {
  it("exit 0 and 'same' for equal inputs, exit 1 with the divergence otherwise", async () => {
    const a = put("a.json", readDoc(FIXTURE));
    expect(await cli(["diff", a, a])).toMatchObject({ exitCode: 0, out: "same\n" });
    const t = readDoc(FIXTURE);
    t.blocks[0]!.tx_root = flipHex(t.blocks[0]!.tx_root as string);
    const r = await cli(["diff", a, put("b.json", t)]);
    expect(r.exitCode).toBe(1);
    expect(r.out).toMatch(/^block 1: tx_root expected "0x[0-9a-f]{64}" got "0x[0-9a-f]{64}"\n$/);
  });

  it("exit 2 for different kinds, unknown formats and unreadable files", async () => {
    const fixture = put("f.json", readDoc(FIXTURE));
    const dump = put("d.json", readDoc(FIXTURE).blocks[0]!["post_state"]);
    expect(await cli(["diff", fixture, dump])).toMatchObject({ exitCode: 2, thrown: `${fixture} and ${dump}: cannot compare a fixture with a state dump: give two documents of the same kind (or a t8n result and a fixture)` });
    expect((await cli(["diff", fixture, put("u.json", { format: "x" })])).thrown).toMatch(/u\.json: \$\.format: unexpected format "x" \(expected "cbqs-run\/v1", /);
    expect((await cli(["diff", fixture, join(dir, "missing.json")])).thrown).toMatch(/cannot read .*missing\.json: no such file or directory \(ENOENT\)/);
  });

  it("both documents are validated completely before comparing — a bare {format} is refused, never 'same'", async () => {
    const bare = put("bare.json", { format: "cbqs-run/v1" });
    const r = await cli(["diff", bare, bare]);
    expect(r).toMatchObject({ exitCode: 2, out: "" });
    expect(r.thrown).toMatch(/bare\.json: \$\.chain_instance_id: missing/);
    const t8n = put("t8n.json", { format: "cbqs-t8n-result/v1", tx_root: "0x01" });
    expect((await cli(["diff", t8n, t8n])).thrown).toMatch(/t8n\.json: \$\.height: missing/);
    const doc = readDoc(FIXTURE);
    (doc.blocks[2]!.receipts[0] as Record<string, unknown>)["extra"] = 1;
    const bad = put("bad-later.json", doc);
    expect((await cli(["diff", put("good.json", readDoc(FIXTURE)), bad])).thrown).toMatch(/bad-later\.json: \$\.blocks\[2\]\.receipts\[0\]\.extra: unknown field/);
  });

  it("a duplicate key anywhere is refused with its JSON path", async () => {
    const text = JSON.stringify(readDoc(FIXTURE), null, 2).replace('"status": "ok",', '"status": "ok", "status": "rejected",');
    const r = await cli(["diff", put("dup.json", text), put("dup2.json", readDoc(FIXTURE))]);
    expect(r.exitCode).toBe(2);
    expect(r.thrown).toMatch(/dup\.json: \$\.blocks\[0\]\.receipts\[0\]\.status: duplicate key/);
  });
});
