// `cbqs export --db`: a stored chain as a cbqs-fixture/v1. A store filled by replaying
// a fixture exports that fixture byte for byte (genesis, transactions, every expected result, the
// post_state dumps; the same canonical writer as fill), an export replays, ranges and refusals
// are exact, a store that does not re-execute is exit 1 with nothing written. Real LMDB stores in
// a temporary directory, the CLI in-process.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { open } from "lmdb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cbqs, unusableInput } from "./program.js";

const FIXTURE = "fixtures/corpus/create-quote.json"; // genesis and blocks 1, 5, 6
const root = mkdtempSync(join(tmpdir(), "cbqs-export-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const tmp = (name: string): string => join(root, `${name}-${dirs++}`);

interface FixtureDoc {
  name: string;
  description: string;
  blocks: Array<Record<string, unknown> & { height: string }>;
  [member: string]: unknown;
}
const readDoc = (file: string): FixtureDoc => JSON.parse(readFileSync(file, "utf8")) as FixtureDoc;
/** The canonical text of a fixture document (fill's writer: fixed order, two spaces, a newline). */
const text = (doc: unknown): string => JSON.stringify(doc, null, 2) + "\n";

/** A store holding `fixture`'s chain, filled by `cbqs replay --db`. */
async function storeOf(fixture: string, ...args: string[]): Promise<string> {
  const db = tmp("store");
  const r = await cbqs("replay", fixture, "--db", db, "--quiet", ...args);
  expect([r.exitCode, r.err], r.out).toEqual([0, ""]);
  return db;
}

let store = "";
beforeAll(async () => {
  store = await storeOf(FIXTURE);
});

describe("cbqs export of a store filled from a fixture is that fixture", () => {
  it("every corpus fixture, replayed into a store and exported under its own name and description, is byte-identical to the fixture", async () => {
    const files = readdirSync("fixtures/corpus").filter((f) => f.endsWith(".json") && f !== "index.json");
    expect(files.length).toBeGreaterThan(15);
    for (const f of files) {
      const fixture = join("fixtures/corpus", f);
      const doc = readDoc(fixture);
      const db = await storeOf(fixture, "--snapshot-interval", "0");
      const out = join(root, `export-${f}`);
      const r = await cbqs("export", "--db", db, "--name", doc.name, "--description", doc.description, "-o", out, "--quiet");
      expect([r.exitCode, r.err], f).toEqual([0, ""]);
      expect(r.out, f).toMatch(new RegExp(`^exported \\d+ blocks? \\(genesis through height \\d+; \\d+ txs?\\), post_state on ${doc.blocks.length} blocks? to ${out}\\n$`));
      expect(readFileSync(out, "utf8") === readFileSync(fixture, "utf8"), f).toBe(true);
    }
  }, 120_000);

  it("without --name/--description the export names the chain and says what it holds; everything else is the fixture's, and cbqs replay of it passes", async () => {
    const r = await cbqs("export", "--db", store, "-o", "-", "--quiet");
    expect(r.exitCode).toBe(0);
    // The document alone on stdout; what is said beside it goes to stderr.
    expect(r.err).toBe("exported 3 blocks (genesis through height 6; 18 txs), post_state on 3 blocks to stdout\n");
    const doc = JSON.parse(r.out) as FixtureDoc;
    const fixture = readDoc(FIXTURE);
    expect(doc.name).toBe("chain-3f93346a-to-6");
    expect(doc.description).toBe(
      "Chain instance 0x3f93346a64b5affd02f49c61e470a422d6e7c4a6f5dc093bfd41d52212512e65: genesis and every stored block through height 6, exported from a store and re-executed from genesis; post_state on every block",
    );
    expect(r.out).toBe(text({ ...fixture, name: doc.name, description: doc.description }));
    const file = join(root, "default.json");
    writeFileSync(file, r.out);
    const replayed = await cbqs("replay", file, "--quiet");
    expect([replayed.exitCode, replayed.err]).toEqual([0, ""]);
    expect(replayed.out).toMatch(/^replay: 1 fixture: 1 ok, 0 mismatches, 0 unusable; 3 blocks, 18 txs in /);
  });

  for (const mode of ["final", "none"] as const) {
    it(`--post-state ${mode} writes exactly what fill --post-state ${mode} writes`, async () => {
      const filled = tmp(`fill-${mode}`);
      expect((await cbqs("fill", "fixtures/scenarios/create-quote.json", "-o", filled, "--post-state", mode, "--quiet")).exitCode).toBe(0);
      const expected = readFileSync(join(filled, "create-quote.json"), "utf8");
      const doc = JSON.parse(expected) as FixtureDoc;
      const r = await cbqs("export", "--db", store, "--post-state", mode, "--name", doc.name, "--description", doc.description, "--quiet");
      expect([r.exitCode, r.out === expected]).toEqual([0, true]);
      expect(r.err).toBe(`exported 3 blocks (genesis through height 6; 18 txs), post_state on ${mode === "final" ? "1 block" : "0 blocks"} to stdout\n`);
    });
  }
});

describe("--to, --from", () => {
  const fixture = readDoc(FIXTURE);
  const exported = async (...args: string[]): Promise<{ doc: FixtureDoc; text: string; err: string }> => {
    const r = await cbqs("export", "--db", store, "--name", fixture.name, "--description", fixture.description, "--quiet", ...args);
    expect(r.exitCode, r.err).toBe(0);
    return { doc: JSON.parse(r.out) as FixtureDoc, text: r.out, err: r.err };
  };

  it("--to h writes genesis and every block at or below h (a height without a block ends at the block below it; 0 is genesis alone), each a fixture replay accepts", async () => {
    for (const [to, heights] of [
      ["6", ["1", "5", "6"]],
      ["5", ["1", "5"]],
      ["4", ["1"]],
      ["1", ["1"]],
      ["0", []],
    ] as const) {
      const e = await exported("--to", to);
      expect(e.text, `--to ${to}`).toBe(text({ ...fixture, blocks: fixture.blocks.filter((b) => (heights as readonly string[]).includes(b.height)) }));
      const file = join(root, `to-${to}.json`);
      writeFileSync(file, e.text);
      expect((await cbqs("replay", file, "--quiet")).exitCode, `--to ${to}`).toBe(0);
    }
    expect((await exported("--to", "0")).err).toBe("exported 0 blocks (genesis only; 0 txs), post_state on 0 blocks to stdout\n");
    // The default description says when there is no block at all.
    const bare = await cbqs("export", "--db", store, "--to", "0", "--quiet");
    expect((JSON.parse(bare.out) as FixtureDoc).description).toMatch(/: genesis only \(no block at or below height 0\), exported from a store/);
  });

  it("--from h keeps every block from genesis (a fixture replays from genesis) and puts a post_state on the blocks from h on only", async () => {
    for (const [from, withState] of [
      ["5", ["5", "6"]],
      ["2", ["5", "6"]],
      ["6", ["6"]],
      ["0", ["1", "5", "6"]],
      ["1", ["1", "5", "6"]],
    ] as const) {
      const e = await exported("--from", from);
      const expected = fixture.blocks.map((b) => ((withState as readonly string[]).includes(b.height) ? b : { ...b, post_state: undefined }));
      expect(e.text, `--from ${from}`).toBe(text({ ...fixture, blocks: expected }));
      const file = join(root, `from-${from}.json`);
      writeFileSync(file, e.text);
      expect((await cbqs("replay", file, "--quiet")).exitCode, `--from ${from}`).toBe(0);
    }
    const between = await exported("--from", "5", "--to", "5");
    expect(between.doc.blocks.map((b) => [b.height, b["post_state"] !== undefined])).toEqual([
      ["1", false],
      ["5", true],
    ]);
    const bare = await cbqs("export", "--db", store, "--from", "5", "--quiet");
    expect((JSON.parse(bare.out) as FixtureDoc).description).toMatch(/; post_state on every block from height 5$/);
  });
});

describe("the default description", () => {
  it("without --description it says which blocks carry a post_state: every block, every block from --from h (above 1), the last block, or none", async () => {
    const chain = "Chain instance 0x3f93346a64b5affd02f49c61e470a422d6e7c4a6f5dc093bfd41d52212512e65: genesis and every stored block through height 6";
    for (const [args, states] of [
      [[], "post_state on every block"],
      [["--from", "1"], "post_state on every block"],
      [["--from", "2"], "post_state on every block from height 2"],
      [["--post-state", "final"], "post_state on the last block"],
      [["--post-state", "none"], "no post_state"],
    ] as const) {
      const r = await cbqs("export", "--db", store, "--quiet", ...args);
      expect([r.exitCode, (JSON.parse(r.out) as FixtureDoc).description], args.join(" ")).toEqual([0, `${chain}, exported from a store and re-executed from genesis; ${states}`]);
    }
  });
});

describe("refusals (exit 2, one line, nothing written)", () => {
  it("a range outside the chain, a malformed height, --from without --post-state every, a bad --post-state", async () => {
    const out = join(root, "refused.json");
    const db = `--db ${store}: `;
    for (const [args, problem] of [
      [["--to", "7"], `${db}--to 7 is above the chain's head, block 6`],
      [["--from", "7"], `${db}--from 7 is above the chain's head, block 6`],
      [["--from", "6", "--to", "5"], `${db}--from 6 is above --to 5`],
      [["--from", "1", "--post-state", "final"], `${db}--from chooses the first block that carries a post_state: it needs --post-state every (got final, which writes one on the last block only)`],
      [["--from", "1", "--post-state", "none"], `${db}--from chooses the first block that carries a post_state: it needs --post-state every (got none, which writes none)`],
      [["--to", "x"], "--to must be a decimal integer up to 2^64 - 1 (got x)"],
      [["--to", "-1"], "--to must be a decimal integer up to 2^64 - 1 (got -1)"],
      [["--from", "1.5"], "--from must be a decimal integer up to 2^64 - 1 (got 1.5)"],
      [["--to", "18446744073709551616"], "--to must be a decimal integer up to 2^64 - 1 (got 18446744073709551616)"],
      [["--post-state", "all"], "--post-state must be every, final or none (got all)"],
    ] as const) {
      const r = await cbqs("export", "--db", store, "-o", out, ...args);
      expect(r, args.join(" ")).toEqual({ exitCode: 2, out: "", err: `cbqs: error: ${problem}\n` });
      expect(existsSync(out)).toBe(false);
    }
    expect(readdirSync(root).filter((f) => f.startsWith("refused.json"))).toEqual([]);
  });

  it("export without --db, or with an empty or absent store directory, is unusable input (exit 2)", async () => {
    expect(await cbqs("export")).toEqual(unusableInput(/required option '--db <dir>' not specified/));
    const empty = tmp("empty");
    mkdirSync(empty);
    expect(await cbqs("export", "--db", empty)).toEqual(unusableInput(/--db .*: no store there/));
    expect(await cbqs("export", "--db", join(root, "absent"))).toEqual(unusableInput(/--db .*absent: no store there/));
  });

  it("a store started from a snapshot holds no block below it: refused naming its history_start", async () => {
    const snap = join(root, "h6.cbqs");
    const snapshotStore = tmp("snapshot-store");
    expect((await cbqs("snapshot", "export", "--db", store, "-o", snap)).exitCode).toBe(0);
    expect((await cbqs("snapshot", "import", snap, "--db", snapshotStore)).exitCode).toBe(0);
    expect(await cbqs("export", "--db", snapshotStore)).toEqual({
      exitCode: 2,
      out: "",
      err: `cbqs: error: --db ${snapshotStore}: the store's history starts at block 6 (history_start: it was started from a snapshot of that block) and holds no block between genesis and it; a cbqs-fixture/v1 is replayed from genesis, so only a store holding the chain from genesis can be exported\n`,
    });
  });
});

describe("the store is re-executed, not trusted; the output is written whole or not at all", () => {
  it("a block record altered in the store (block 5's timestamp): exit 1, MISMATCH naming block 5, the file at -o left as it was", async () => {
    const dir = tmp("altered");
    cpSync(store, dir, { recursive: true });
    const env = open({ path: dir, maxDbs: 16, noSubdir: false, compression: false });
    const blocks = env.openDB<Buffer, Buffer>({ name: "blocks", encoding: "binary", keyEncoding: "binary" });
    for (const { key, value } of blocks.getRange({})) {
      if (Buffer.from(key).readBigUInt64BE(0) !== 5n) continue;
      const v = Buffer.from(value);
      v.writeUInt8(v.readUInt8(8 + 8 + 7) ^ 1, 8 + 8 + 7); // log size (8), height (8), the timestamp's last byte
      blocks.putSync(Buffer.from(key), v);
    }
    await env.close();
    const out = join(root, "altered.json");
    writeFileSync(out, "the previous content\n");
    const r = await cbqs("export", "--db", dir, "-o", out, "--quiet");
    expect(r.exitCode).toBe(1);
    expect(r.err).toBe("");
    expect(r.out).toMatch(new RegExp(`^MISMATCH --db ${dir}: block 5: [a-z_]+: stored \\S+, re-executed from genesis \\S+\\n  \\(the store's record of that block is not what executing the chain from genesis gives: nothing written; cbqs store verify --db ${dir} looks for damage\\)\\n$`));
    expect(readFileSync(out, "utf8")).toBe("the previous content\n");
    expect(readdirSync(root).filter((f) => f.startsWith("altered.json."))).toEqual([]);
  });

  it("-o replaces an existing file when complete, a .gz name is gzipped, and the store is only read (its files unchanged, no lock left)", async () => {
    const before = readdirSync(store).sort();
    const data = readFileSync(join(store, "data.mdb"));
    const plain = join(root, "plain.json");
    writeFileSync(plain, "old");
    expect((await cbqs("export", "--db", store, "-o", plain, "--quiet")).exitCode).toBe(0);
    const gz = join(root, "zipped.json.gz");
    expect((await cbqs("export", "--db", store, "-o", gz, "--quiet")).exitCode).toBe(0);
    const bytes = readFileSync(gz);
    expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b]);
    expect(gunzipSync(bytes).toString("utf8")).toBe(readFileSync(plain, "utf8"));
    expect((await cbqs("replay", gz, "--quiet")).exitCode).toBe(0);
    expect(readdirSync(store).sort()).toEqual(before);
    expect(readFileSync(join(store, "data.mdb")).equals(data)).toBe(true);
  });
});
