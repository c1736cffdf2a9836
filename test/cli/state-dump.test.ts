// `cbqs state dump <fixture|scenario|dump> [--height N] [-o file]` (docs/reference/formats/state-dump.md): the state a
// chain reaches, replayed from genesis, as the canonical dump. The expected values are the
// fixtures' own post_state dumps and roots (written by `cbqs fill`), not output of this command.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { cbqs, unusableInput } from "./program.js";

interface FixtureJson {
  format: string;
  genesis: { state_root: string };
  blocks: Array<{ height: string; state_root: string; post_state?: { entries: Array<{ key: string; value: string }> } }>;
}
interface DumpJson {
  format: string;
  height?: string;
  state_root?: string;
  entries: Array<{ key: string; value: string; decoded?: { key: unknown; value: unknown } }>;
}

const CORPUS = "fixtures/corpus";
const QUOTE = `${CORPUS}/create-quote.json`; // blocks at heights 1, 5 and 6, each with post_state
const fixtureJson = (file: string) => JSON.parse(readFileSync(file, "utf8")) as FixtureJson;
const keysAndValues = (d: { entries: Array<{ key: string; value: string }> }) => d.entries.map(({ key, value }) => ({ key, value }));
const dir = mkdtempSync(join(tmpdir(), "cbqs-state-dump-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function dumpOf(...args: string[]): Promise<DumpJson> {
  const r = await cbqs("state", "dump", ...args);
  expect(r.err).toBe("");
  expect(r.exitCode).toBe(0);
  return JSON.parse(r.out) as DumpJson;
}

describe("cbqs state dump of a fixture (docs/reference/formats/state-dump.md, CIP-4 §6.1 replay)", () => {
  it("CIP-4 §6.1: at the last height, every corpus fixture's dump equals its last block's post_state and state_root", async () => {
    const files = ["create-quote", "provider-lifecycle", "rent-settle-suspend-expire", "transfers"].map((n) => `${CORPUS}/${n}.json`);
    for (const file of files) {
      const last = fixtureJson(file).blocks.at(-1)!;
      expect(last.post_state, `${file} has a final post_state (test precondition)`).toBeDefined();
      const dump = await dumpOf(file);
      expect(dump.format).toBe("cbqs-state-dump/v1");
      expect(dump.height).toBe(last.height);
      expect(dump.state_root).toBe(last.state_root);
      expect(keysAndValues(dump), file).toEqual(keysAndValues(last.post_state!));
      expect(dump.entries.every((e) => e.decoded !== undefined)).toBe(true);
    }
  });

  it("docs/reference/formats/state-dump.md: at an intermediate height the dump equals that block's post_state", async () => {
    const block5 = fixtureJson(QUOTE).blocks.find((b) => b.height === "5")!;
    const dump = await dumpOf(QUOTE, "--height", "5");
    expect([dump.height, dump.state_root]).toEqual(["5", block5.state_root]);
    expect(keysAndValues(dump)).toEqual(keysAndValues(block5.post_state!));
    expect(keysAndValues(dump)).not.toEqual(keysAndValues(fixtureJson(QUOTE).blocks.at(-1)!.post_state!));
  });

  it("docs/reference/formats/state-dump.md: heights are sparse — a height without a block dumps the last block below it; 0 is genesis", async () => {
    const [block1] = fixtureJson(QUOTE).blocks;
    const at4 = await dumpOf(QUOTE, "--height", "4");
    expect([at4.height, at4.state_root]).toEqual(["1", block1!.state_root]);
    expect(keysAndValues(at4)).toEqual(keysAndValues(block1!.post_state!));
    const beyond = await dumpOf(QUOTE, "--height", "1000");
    expect(beyond.height).toBe(fixtureJson(QUOTE).blocks.at(-1)!.height);
    const genesis = await dumpOf(QUOTE, "--height", "0");
    expect([genesis.height, genesis.state_root]).toEqual(["0", fixtureJson(QUOTE).genesis.state_root]);
    expect(genesis.entries.length).toBeGreaterThan(0);
  });

  it("reads .json.gz fixtures and writes -o <file> with the same bytes as stdout", async () => {
    const gz = join(dir, "quote.json.gz");
    writeFileSync(gz, gzipSync(readFileSync(QUOTE)));
    const out = join(dir, "quote-5.json");
    const r = await cbqs("state", "dump", gz, "--height", "5", "-o", out);
    expect([r.exitCode, r.out, r.err]).toEqual([0, "", ""]);
    const stdout = await cbqs("state", "dump", QUOTE, "--height", "5");
    expect(readFileSync(out, "utf8")).toBe(stdout.out);
  });

  it("a cbqs-scenario/v1 is filled and replayed: its dump equals the fixture filled from it", async () => {
    const fromScenario = await dumpOf("fixtures/scenarios/create-quote.json", "--height", "5");
    expect(fromScenario).toEqual(await dumpOf(QUOTE, "--height", "5"));
  });

  it("a state dump file is re-printed canonically as before (no --height)", async () => {
    const post = fixtureJson(QUOTE).blocks[0]!.post_state!;
    const file = join(dir, "alloc.json");
    writeFileSync(file, JSON.stringify({ format: "cbqs-state-dump/v1", entries: [...post.entries].reverse() }));
    const dump = await dumpOf(file);
    expect(dump.height).toBeUndefined();
    expect(keysAndValues(dump)).toEqual(keysAndValues(post));
  });

  it("docs/reference/formats/state-dump.md: `state diff` of two heights' dumps exits 1 and lists every change, field by field, with the key named", async () => {
    const [a, b] = [join(dir, "h1.json"), join(dir, "h6.json")];
    expect((await cbqs("state", "dump", QUOTE, "--height", "1", "-o", a)).exitCode).toBe(0);
    expect((await cbqs("state", "dump", QUOTE, "-o", b)).exitCode).toBe(0);
    const r = await cbqs("state", "diff", a, b);
    expect(r.exitCode).toBe(1);
    const lines = r.out.trim().split("\n");
    // The changes, the summary, then the note on the dumps' differing heights and roots.
    const changes = lines.slice(0, -2);
    expect(changes.length).toBeGreaterThan(0);
    expect(changes.every((l) => /^[+~-] (account|stream|provider|owner stream count|registry singleton|base-rate schedules|key) /.test(l))).toBe(true);
    // A changed record is one line per changed field, never two whole records.
    expect(lines).toContainEqual(expect.stringMatching(/^~ account 0x[0-9a-f]{40}: (balance|nonce) "\d+" → "\d+"$/));
    expect(lines.filter((l) => l.startsWith("~ ")).every((l) => l.length < 400)).toBe(true);
    expect(lines.at(-2)).toMatch(/^\d+ added, \d+ removed, \d+ changed$/);
    expect(lines.at(-1)).toMatch(/^note: height 1 vs 6, state_root 0x[0-9a-f]{64} vs 0x[0-9a-f]{64}: not compared/);
    expect((await cbqs("state", "diff", b, b)).out).toBe("equal\n");
    const json = JSON.parse((await cbqs("state", "diff", a, b, "--json")).out) as { changed: Array<{ name: string; fields: Array<{ path: string }> }> };
    expect(json.changed.length).toBeGreaterThan(0);
    expect(json.changed[0]!.fields.length).toBeGreaterThan(0);
  });

  it("docs/reference/formats/state-dump.md: `state diff` and `diff` compare entries only, and note a differing height or state_root", async () => {
    const [a, b] = [join(dir, "note-a.json"), join(dir, "note-b.json")];
    expect((await cbqs("state", "dump", QUOTE, "--height", "5", "-o", a)).exitCode).toBe(0);
    const moved = JSON.parse(readFileSync(a, "utf8")) as DumpJson;
    const root = moved.state_root!;
    writeFileSync(b, JSON.stringify({ ...moved, height: "99", state_root: "0x" + "ab".repeat(32) }));
    const note = `note: height 5 vs 99, state_root ${root} vs 0x${"ab".repeat(32)}: not compared, only the entries are`;
    const stateDiff = await cbqs("state", "diff", a, b);
    expect([stateDiff.exitCode, stateDiff.err]).toEqual([0, ""]);
    expect(stateDiff.out).toMatch(new RegExp(`^equal\n${note} \\(a state root commits to the history`));
    expect(JSON.parse((await cbqs("state", "diff", a, b, "--json")).out)).toMatchObject({ changed: [], note: expect.stringMatching(/^height 5 vs 99, /) });
    const diff = await cbqs("diff", a, b);
    expect([diff.exitCode, diff.err]).toEqual([0, ""]);
    expect(diff.out).toMatch(new RegExp(`^same\n  ${note} `));
    // Only the root differs (the same height, e.g. a t8n alloc against the chain's dump): only it is named.
    writeFileSync(b, JSON.stringify({ ...moved, state_root: "0x" + "cd".repeat(32) }));
    expect((await cbqs("diff", a, b)).out).toMatch(new RegExp(`^same\n  note: state_root ${root} vs 0x${"cd".repeat(32)}: not compared`));
    // Equal members: no note.
    expect((await cbqs("state", "diff", a, a)).out).toBe("equal\n");
    expect((await cbqs("diff", a, a)).out).toBe("same\n");
  });

  it("CIP-4 §6.1: a mismatch before the height exits 1 with the MISMATCH line and dumps nothing", async () => {
    const doc = fixtureJson(QUOTE);
    doc.blocks[1]!.state_root = "0x" + "ab".repeat(32);
    const file = join(dir, "tampered.json");
    writeFileSync(file, JSON.stringify(doc));
    const r = await cbqs("state", "dump", file);
    expect([r.exitCode, r.out]).toEqual([1, ""]);
    expect(r.err).toMatch(new RegExp(`^MISMATCH ${file}: block 5: state_root `));
    expect((await cbqs("state", "dump", file, "--height", "4")).exitCode).toBe(0); // before the tampered block
  });
});

describe("cbqs state dump: unusable input exits 2 with one line", () => {
  const write = (name: string, text: string | Uint8Array) => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  it.each([
    [
      "an unknown format",
      () => [write("unknown.json", JSON.stringify({ format: "cbqs-run/v1" }))],
      /unknown\.json: \$\.format: unexpected format "cbqs-run\/v1" \(expected "cbqs-state-dump\/v1", "cbqs-fixture\/v1" or "cbqs-scenario\/v1"\)/,
    ],
    ["no format at all", () => [write("no-format.json", "{}")], /no-format\.json: \$\.format: missing \(expected "cbqs-state-dump\/v1", /],
    ["not an object", () => [write("array.json", "[1]")], /array\.json: \$: expected a JSON object/],
    ["not JSON", () => [write("garbage.json", "{nope")], /garbage\.json: \$: not valid JSON/],
    ["a broken gzip", () => [write("broken.json.gz", Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x01]))], /broken\.json\.gz: not a readable gzip file/],
    ["a missing file", () => [join(dir, "absent.json")], /cannot read .*absent\.json: no such file or directory \(ENOENT\)/],
    ["a malformed fixture", () => [write("bad-fixture.json", JSON.stringify({ format: "cbqs-fixture/v1" }))], /bad-fixture\.json: /],
    ["a malformed scenario", () => [write("bad-scenario.json", JSON.stringify({ format: "cbqs-scenario/v1" }))], /bad-scenario\.json: /],
    ["a non-decimal --height", () => [QUOTE, "--height", "0x5"], /--height must be a decimal integer/],
    ["a --height beyond u64", () => [QUOTE, "--height", "18446744073709551616"], /--height exceeds u64/],
  ])("%s", async (_what, args, problem) => {
    expect(await cbqs("state", "dump", ...args())).toEqual(unusableInput(problem));
  });

  it("--height on a state dump file", async () => {
    const post = fixtureJson(QUOTE).blocks[0]!.post_state!;
    const file = write("dump.json", JSON.stringify({ format: "cbqs-state-dump/v1", entries: post.entries }));
    expect(await cbqs("state", "dump", file, "--height", "1")).toEqual(unusableInput(/--height needs a fixture or scenario/));
  });
});
