// Test ids, the corpus index (cbqs-fixture-index/v1) and selection. fill writes
// index.json beside its fixtures; replay and consume check a directory against it (a missing,
// extra or edited fixture is a failure naming it) and select by -k, --instruction, --error and
// --shard, which compose; --list prints the ids without running anything.
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { cbqs, unusableInput } from "../cli/program.js";
import { CORPUS, corpusFiles } from "./helpers.js";
import { readFixture } from "../../src/harness/documents.js";
import { txKind } from "../../src/harness/trace.js";
import { decodeEnvelope } from "../../src/chain/envelope.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "cbqs-index-"));
  for (const f of readdirSync(CORPUS)) copyFileSync(join(CORPUS, f), join(dir, f));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const ids = (out: string): string[] => out.trimEnd().split("\n").filter((l) => l !== "");
const allIds = (): string[] => corpusFiles().map((f) => f.slice(CORPUS.length + 1));

interface Entry {
  id: string;
  file: string;
  sha256: string;
  blocks: string;
  transactions: string;
  instructions: string[];
  errors: string[];
}
const index = (): Entry[] => (JSON.parse(readFileSync(join(dir, "index.json"), "utf8")) as { fixtures: Entry[] }).fixtures;

describe("the corpus index", () => {
  it("fill's index.json lists every fixture: its id, the SHA-256 of its bytes, its size, the kinds and errors it exercises", () => {
    const entries = index();
    expect(entries.map((e) => e.id)).toEqual(allIds());
    for (const e of entries) {
      const file = join(CORPUS, e.file);
      const fixture = readFixture(file);
      const kinds = new Set(fixture.blocks.flatMap((b) => b.transactions.map((raw) => txKind(decodeEnvelope(raw)))));
      const errors = new Set(fixture.blocks.flatMap((b) => b.receipts.flatMap((r) => (r.error === null ? [] : [r.error.name]))));
      expect(e).toEqual({
        id: e.file,
        file: e.file,
        sha256: createHash("sha256").update(readFileSync(file)).digest("hex"),
        blocks: String(fixture.blocks.length),
        transactions: String(fixture.blocks.reduce((n, b) => n + b.transactions.length, 0)),
        instructions: [...kinds].sort(),
        errors: [...errors].sort(),
      });
    }
    expect(JSON.parse(readFileSync(join(CORPUS, "index.json"), "utf8")).format).toBe("cbqs-fixture-index/v1");
  });

  it("cbqs index <dir> writes the same index for a directory of fixtures", async () => {
    unlinkSync(join(dir, "index.json"));
    const r = await cbqs("index", dir);
    expect([r.exitCode, r.out, r.err]).toEqual([0, `${join(dir, "index.json")}\n`, ""]);
    expect(readFileSync(join(dir, "index.json"), "utf8")).toBe(readFileSync(join(CORPUS, "index.json"), "utf8"));
  });

  it("replay and consume fail a directory that differs from its index, naming each fixture: edited, missing, extra (exit 1)", async () => {
    writeFileSync(join(dir, "transfers.json"), readFileSync(join(dir, "transfers.json"), "utf8").replace('"description": "', '"description": "edited. '));
    unlinkSync(join(dir, "update-stream.json"));
    copyFileSync(join(dir, "create-quote.json"), join(dir, "create-quote-copy.json"));
    const r = await cbqs("replay", dir, "--quiet");
    expect(r.exitCode).toBe(1);
    expect(r.out).toContain(`INDEX ${dir}/index.json: create-quote-copy.json: in ${dir} but not listed in index.json\n`);
    expect(r.out).toMatch(new RegExp(`INDEX ${dir}/index.json: transfers\\.json: edited since index\\.json was written: sha256 [0-9a-f]{64}, the index has [0-9a-f]{64}\\n`));
    expect(r.out).toContain(`INDEX ${dir}/index.json: update-stream.json: listed in index.json but missing from ${dir}\n`);
    expect(r.out).toMatch(/^replay: 19 fixtures: 19 ok, 0 mismatches, 0 unusable, 3 index failures; /m);
    const list = await cbqs("consume", dir, "--t8n-server", "unused", "--list");
    expect(list.exitCode).toBe(1);
    expect(list.out.match(/^INDEX /gm)).toHaveLength(3);
    // A single file is checked against its own entry only.
    expect((await cbqs("replay", join(dir, "create-quote.json"), "--quiet")).exitCode).toBe(0);
    const one = await cbqs("replay", join(dir, "transfers.json"), "--quiet");
    expect([one.exitCode, one.out.match(/^INDEX .*transfers\.json: edited/m) !== null]).toEqual([1, true]);
  });

  it("a malformed index is unusable input naming its JSON path", async () => {
    const doc = JSON.parse(readFileSync(join(dir, "index.json"), "utf8"));
    doc.fixtures[2].sha256 = "0x12";
    writeFileSync(join(dir, "index.json"), JSON.stringify(doc));
    expect(await cbqs("replay", dir)).toEqual(unusableInput(/index\.json: \$\.fixtures\[2\]\.sha256: expected a SHA-256 digest/));
  });
});

describe("selection", () => {
  it("--list prints the test ids in corpus order without running anything; replay and consume agree", async () => {
    const r = await cbqs("replay", dir, "--list");
    expect([r.exitCode, r.err]).toEqual([0, ""]);
    expect(ids(r.out)).toEqual(allIds());
    expect((await cbqs("consume", dir, "--t8n-server", "not-started", "--list")).out).toBe(r.out);
  });

  it("-k takes a substring or a regular expression of ids; a bad expression is exit 2", async () => {
    expect(ids((await cbqs("replay", dir, "--list", "-k", "quote")).out)).toEqual(["create-quote.json"]);
    expect(ids((await cbqs("replay", dir, "--list", "-k", "^pause-")).out)).toEqual(["pause-accounting.json", "pause-breaker-every-instruction.json"]);
    expect(await cbqs("replay", dir, "--list", "-k", "(")).toEqual(unusableInput(/-k must be a regular expression or a substring of test ids/));
  });

  it("--instruction and --error select from the index (any of the names given); an unknown name is exit 2 naming the ones listed", async () => {
    const entries = index();
    const withKind = (k: string) => entries.filter((e) => e.instructions.includes(k)).map((e) => e.id);
    const withError = (n: string) => entries.filter((e) => e.errors.includes(n)).map((e) => e.id);
    expect(ids((await cbqs("replay", dir, "--list", "--instruction", "ActivateKeyGeneration")).out)).toEqual(withKind("ActivateKeyGeneration"));
    expect(withKind("ActivateKeyGeneration").length).toBeGreaterThan(0);
    const either = [...new Set([...withError("GraceDeadlinePassed"), ...withError("OwnerStreamLimit")])].sort();
    expect(either.length).toBeGreaterThan(withError("GraceDeadlinePassed").length);
    expect(ids((await cbqs("replay", dir, "--list", "--error", "GraceDeadlinePassed", "--error", "OwnerStreamLimit")).out)).toEqual(either);
    expect(ids((await cbqs("replay", dir, "--list", "--error", "GraceDeadlinePassed")).out)).toEqual(withError("GraceDeadlinePassed"));
    expect(await cbqs("replay", dir, "--list", "--error", "NoSuchError")).toEqual(unusableInput(/--error NoSuchError: no indexed fixture has it \(the index lists: ArithmeticOverflow, /));
  });

  it("--instruction needs an index: a directory without one is exit 2", async () => {
    unlinkSync(join(dir, "index.json"));
    expect(await cbqs("replay", dir, "--list", "--instruction", "CreateStream")).toEqual(unusableInput(/select from the corpus index, and .* is not in one/));
  });

  it("--shard composes with the selection: the shards of the selected set cover it exactly once", async () => {
    const selected = ids((await cbqs("replay", dir, "--list", "--instruction", "CreateStream")).out);
    expect(selected.length).toBeGreaterThan(4);
    const shards = [];
    for (const i of [1, 2, 3]) shards.push(...ids((await cbqs("replay", dir, "--list", "--instruction", "CreateStream", "--shard", `${i}/3`)).out));
    expect(shards.sort()).toEqual(selected);
    const r = await cbqs("replay", dir, "--instruction", "CreateStream", "--shard", "1/3", "--quiet");
    expect(r.out).toMatch(new RegExp(`^replay \\(shard 1/3\\): ${Math.ceil(selected.length / 3)} fixtures: `, "m"));
  });
});
