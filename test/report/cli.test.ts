// --junit and --report on the commands (docs/reference/formats/fixture.md "Reports: --junit and --report"): replay
// (a case per fixture, a suite per target), gas-vectors verify (a case per check), fuzz (one case
// per campaign). The verdict and exit code are the command's own; the files are checked against
// test/junit.xsd when xmllint is there, and read as text otherwise.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ARTIFACT_PATH } from "../../src/gas/artifact.js";
import { cbqs, unusableInput } from "../cli/program.js";
import { requireFreshDist } from "../fuzz/dist.js";
import { mixedCorpus } from "./corpus.js";
import { inCi, junitSchemaErrors, xmllintMissing } from "./tools.js";

const dir = mkdtempSync(join(tmpdir(), "cbqs-reports-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const corpus = join(dir, "corpus");

/** The testcases of a JUnit file: name, outcome element, its message and text. */
function testcases(xml: string): Array<{ name: string; outcome: string | null; message: string | null; text: string | null }> {
  return [...xml.matchAll(/<testcase classname="[^"]*" name="([^"]*)" time="[0-9.]+"(?:\/>|>\n\s*<(failure|error|skipped)(?: type="[^"]*")?(?: message="([^"]*)")?(?:\/>|>([^]*?)<\/\2>))/g)].map((m) => ({
    name: m[1]!,
    outcome: m[2] ?? null,
    message: m[3] ?? null,
    text: m[4] ?? null,
  }));
}

const unescape = (s: string): string => s.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, '"').replace(/&amp;/g, "&");

/** Valid against test/junit.xsd; without xmllint only the text checks of each test run (and in CI that fails). */
function expectValidJunit(file: string): void {
  const missing = xmllintMissing();
  if (missing !== null && inCi()) throw new Error(`${missing}: CI must have it (.ci/run installs it)`);
  if (missing === null) expect(junitSchemaErrors(file)).toBeNull();
}

beforeAll(() => {
  mixedCorpus(corpus);
});

describe("cbqs replay --junit / --report", () => {
  it("a mixed corpus: the exit code and output are replay's own; a testcase per fixture named by its path under the directory; a mismatch is a failure with the first difference, an unusable fixture an error", async () => {
    const junit = join(dir, "replay.xml");
    const html = join(dir, "replay.html");
    const plain = await cbqs("replay", corpus, "--quiet");
    const r = await cbqs("replay", corpus, "--quiet", "--junit", junit, "--report", html);
    expect([r.exitCode, r.out.replace(/ in [^\n]*/g, ""), r.err]).toEqual([1, plain.out.replace(/ in [^\n]*/g, ""), plain.err]);
    const xml = readFileSync(junit, "utf8");
    expectValidJunit(junit);
    expect(xml).toMatch(new RegExp(`<testsuite name="cbqs replay ${corpus}" tests="5" failures="2" errors="2" skipped="0" time="[0-9.]+" timestamp="\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ">`));
    expect(xml).toMatch(/<system-out>replay: 5 fixtures: 1 ok, 2 mismatches, 2 unusable; /);
    const cases = testcases(xml);
    expect(cases.map((c) => [c.name, c.outcome])).toEqual([
      ["a-ok.json", null],
      ["b-receipt.json", "failure"],
      ["c-state.json", "failure"],
      ["d-&lt;script&gt;.json", "error"],
      ["e-truncated.json", "error"],
    ]);
    // The message is the MISMATCH line without its file; the details are the indented key lines; then the command.
    const mismatch = r.out.split("\n").filter((l) => l.startsWith(`MISMATCH ${join(corpus, "c-state.json")}: `) || l.startsWith("  key "));
    expect(mismatch).toHaveLength(2);
    expect(unescape(cases[2]!.message!)).toBe(mismatch[0]!.slice(`MISMATCH ${join(corpus, "c-state.json")}: `.length));
    expect(unescape(cases[2]!.text!)).toBe(`${mismatch[1]!.trim()}\nreproduce: cbqs replay ${join(corpus, "c-state.json")}`);
    expect(cases[1]!.message).toMatch(/^block 5: receipt_root \(\$\.blocks\[1\]\.receipt_root\): expected 0x(ab){32} got 0x/);
    expect(unescape(cases[3]!.message!)).toBe(`${join(corpus, "d-<script>.json")}: $.format: unexpected format "<script>alert(1)</script>" (expected "cbqs-fixture/v1")`);
    expect(unescape(cases[3]!.text!)).toBe(`reproduce: cbqs replay '${join(corpus, "d-<script>.json")}'`);
    const page = readFileSync(html, "utf8");
    expect([...page.matchAll(/<td class="id">([^<]*)<\/td>/g)].map((m) => unescape(m[1]!))).toEqual(["a-ok.json", "b-receipt.json", "c-state.json", "d-<script>.json", "e-truncated.json"]);
    expect(page).not.toMatch(/<script>/);
  });

  it("the reproduce command shows the same first difference again", async () => {
    const junit = join(dir, "again.xml");
    await cbqs("replay", corpus, "--quiet", "--to-height", "5", "--junit", junit);
    const failure = testcases(readFileSync(junit, "utf8")).find((c) => c.name === "c-state.json")!;
    const command = /reproduce: (cbqs replay .*)$/.exec(unescape(failure.text!))![1]!;
    expect(command).toBe(`cbqs replay ${join(corpus, "c-state.json")} --to-height 5`);
    const again = await cbqs(...command.split(" ").slice(1), "--quiet");
    expect(again.exitCode).toBe(1);
    expect(again.out).toContain(`: ${unescape(failure.message!)}\n`);
  });

  it("a fixture's id is the same given by its directory or by itself; a suite per target; --shard names the shard; a gzipped report name is gzipped", async () => {
    const junit = join(dir, "targets.xml");
    expect((await cbqs("replay", join(corpus, "a-ok.json"), "fixtures/corpus/create-quote.json", "--quiet", "--junit", junit)).exitCode).toBe(0);
    const xml = readFileSync(junit, "utf8");
    expectValidJunit(junit);
    expect([...xml.matchAll(/<testsuite name="([^"]*)"/g)].map((m) => m[1])).toEqual([`cbqs replay ${join(corpus, "a-ok.json")}`, "cbqs replay fixtures/corpus/create-quote.json"]);
    expect(testcases(xml).map((c) => c.name)).toEqual(["a-ok.json", "create-quote.json"]);
    expect((await cbqs("replay", "fixtures/corpus", "--shard", "2/3", "--quiet", "--junit", junit)).exitCode).toBe(0);
    const shard = readFileSync(junit, "utf8");
    expect(shard).toMatch(/<testsuite name="cbqs replay fixtures\/corpus \(shard 2\/3\)" tests="\d+" failures="0" errors="0"/);
    expect(testcases(shard).map((c) => c.name)).toEqual(readdirSync("fixtures/corpus").filter((f) => f !== "index.json").sort().filter((_, i) => i % 3 === 1));
  });

  it("an unwritable --junit or --report is refused before any fixture is replayed; both naming one file is refused", async () => {
    expect(await cbqs("replay", corpus, "--junit", join(dir, "no", "such", "dir.xml"))).toEqual(unusableInput(/cannot write .*dir\.xml: no such file or directory \(ENOENT\)/));
    expect(await cbqs("replay", corpus, "--report", dir)).toEqual(unusableInput(/cannot write .*: it is a directory/));
    expect(await cbqs("gas-vectors", "verify", "--junit", join(dir, "x.xml"), "--report", join(dir, ".", "x.xml"))).toEqual(unusableInput(/--junit and --report name the same file/));
    expect(await cbqs("fuzz", "--t8n", "true", "--junit", join(dir, "no", "x.xml"))).toEqual(unusableInput(/cannot write .*x\.xml/));
    expect(existsSync(join(dir, "x.xml"))).toBe(false);
  });

  it("a report the disk refuses after the work: the command's output as usual, one error line, exit 2 — but a mismatch stays exit 1", async () => {
    const ok = await cbqs("replay", join(corpus, "a-ok.json"), "--quiet", "--junit", "/dev/full");
    expect([ok.exitCode, ok.err]).toEqual([2, "cbqs: error: cannot write /dev/full: no space left on the device (ENOSPC)\n"]);
    expect(ok.out).toMatch(/^replay: 1 fixture: 1 ok/);
    const bad = await cbqs("replay", join(corpus, "b-receipt.json"), "--quiet", "--report", "/dev/full");
    expect([bad.exitCode, bad.err]).toEqual([1, "cbqs: error: cannot write /dev/full: no space left on the device (ENOSPC)\n"]);
  });

  it("replay --db: one case, its reproduce command with the store", async () => {
    const junit = join(dir, "db.xml");
    const store = join(dir, "store");
    expect((await cbqs("replay", join(corpus, "b-receipt.json"), "--db", store, "--quiet", "--junit", junit)).exitCode).toBe(1);
    const [c] = testcases(readFileSync(junit, "utf8"));
    expect([c!.name, c!.outcome, c!.text]).toEqual(["b-receipt.json", "failure", `reproduce: cbqs replay ${join(corpus, "b-receipt.json")} --db ${store}`]);
    expectValidJunit(junit);
  });
});

describe("cbqs gas-vectors verify --junit / --report", () => {
  it("a case per check: the cost table, each vector by its id, the canonical form, the pinned SHA-256; a differing number fails its vector alone", async () => {
    const junit = join(dir, "gas.xml");
    expect((await cbqs("gas-vectors", "verify", "--junit", junit)).exitCode).toBe(0);
    const ids = (JSON.parse(readFileSync(ARTIFACT_PATH, "utf8")) as { vectors: Array<{ id: string }> }).vectors.map((v) => v.id);
    expect(testcases(readFileSync(junit, "utf8"))).toEqual(["cost table", ...ids, "canonical form", "pinned SHA-256"].map((name) => ({ name, outcome: null, message: null, text: null })));
    expectValidJunit(junit);
    const tampered = join(dir, "tampered.json");
    writeFileSync(tampered, readFileSync(ARTIFACT_PATH, "utf8").replace('"payload_bytes": 3,', '"payload_bytes": 4,'));
    const html = join(dir, "gas.html");
    const r = await cbqs("gas-vectors", "verify", tampered, "--junit", junit, "--report", html);
    expect(r.exitCode).toBe(1);
    const failed = testcases(readFileSync(junit, "utf8")).filter((c) => c.outcome !== null);
    // The vector, and the digest of a file that is no longer the pinned one.
    expect(failed.map((c) => [c.name, unescape(c.message!)])).toEqual([
      ["set-provider-status", r.out.trim().replace(/^mismatch: /, "")],
      ["pinned SHA-256", expect.stringMatching(/^SHA-256 [0-9a-f]{64} is not the pinned GAS_VECTORS_SHA256/)],
    ]);
    expect(failed[0]!.text).toBe(`reproduce: cbqs gas-vectors verify ${tampered}`);
    expect(readFileSync(html, "utf8")).toContain('<p class="verdict bad">FAILED: 2 failed, 0 errors of 16</p>');
  });
});

describe("cbqs fuzz --junit / --report: one case per campaign", () => {
  const OURS = "node dist/src/cli.js t8n";
  beforeAll(requireFreshDist);

  it("a clean campaign passes as fuzz/seed-S with its blocks and txs; --run i names the run", async () => {
    const junit = join(dir, "fuzz.xml");
    const html = join(dir, "fuzz.html");
    const r = await cbqs("fuzz", "--jobs", "1", "--t8n", OURS, "--seed", "5", "--runs", "2", "--blocks", "1", "--quiet", "--junit", junit, "--report", html);
    expect(r.exitCode).toBe(0);
    const xml = readFileSync(junit, "utf8");
    expectValidJunit(junit);
    expect(xml).toContain(`<testsuite name="cbqs fuzz --t8n '${OURS}'" tests="1" failures="0" errors="0" skipped="0"`);
    expect(testcases(xml)).toEqual([{ name: "fuzz/seed-5", outcome: null, message: null, text: null }]);
    expect(xml).toContain(`<system-out>${r.out.trim()}</system-out>`);
    expect(readFileSync(html, "utf8")).toMatch(/<td class="id">fuzz\/seed-5<\/td><td class="num">2<\/td><td class="num">[\d,]+<\/td>/);
    expect((await cbqs("fuzz", "--jobs", "1", "--t8n", OURS, "--seed", "5", "--run", "1", "--blocks", "1", "--quiet", "--junit", junit)).exitCode).toBe(0);
    expect(testcases(readFileSync(junit, "utf8")).map((c) => c.name)).toEqual(["fuzz/seed-5/run-1"]);
  });

  it("a divergence fails the campaign: the first difference as message, the shrunk chain as details, the reproduce line printed", async () => {
    const tamper = join(dir, "tamper.cjs");
    writeFileSync(tamper, `const fs = require("fs"); const f = process.argv[2]; const r = JSON.parse(fs.readFileSync(f, "utf8"));
       if (r.receipts.length > 0) r.receipts[0].cycles = String(BigInt(r.receipts[0].cycles) + 1n);
       fs.writeFileSync(f, JSON.stringify(r));`);
    const command = `f() { node dist/src/cli.js t8n "$@" && node ${tamper} "$8"; }; f`;
    const junit = join(dir, "divergence.xml");
    const r = await cbqs("fuzz", "--jobs", "1", "--t8n", command, "--seed", "9", "--runs", "5", "--blocks", "1", "--quiet", "--out", join(dir, "fuzz-out"), "--junit", junit);
    expect(r.exitCode).toBe(1);
    expectValidJunit(junit);
    const [c] = testcases(readFileSync(junit, "utf8"));
    const lines = r.out.trimEnd().split("\n");
    expect([c!.name, c!.outcome, unescape(c!.message!)]).toEqual(["fuzz/seed-9", "failure", lines[0]]);
    expect(unescape(c!.text!)).toBe(lines.slice(1, -1).map((l) => l.trim()).join("\n"));
    expect(lines.at(-2)).toMatch(/^  reproduce: cbqs fuzz --t8n '.*' --seed 9 --run 0 --blocks 1$/);
  });

  it("an implementation under test that fails is an error case, and still exit 2 with its one error line", async () => {
    const junit = join(dir, "failing.xml");
    const r = await cbqs("fuzz", "--jobs", "1", "--t8n", "false", "--seed", "1", "--runs", "1", "--blocks", "1", "--quiet", "--out", join(dir, "fuzz-fail"), "--junit", junit);
    expect(r).toEqual(unusableInput(/--t8n command failed on block \d+ of run 0 \(seed 1\): exit 1 without writing --output\.result/));
    const [c] = testcases(readFileSync(junit, "utf8"));
    expect([c!.name, c!.outcome]).toEqual(["fuzz/seed-1", "error"]);
    expect(unescape(c!.message!)).toBe(r.err.replace(/^cbqs: error: /, "").trim());
    expectValidJunit(junit);
  });
});

describe("cbqs consume --junit / --report", () => {
  it("a testcase per fixture id; a difference of the implementation is a failure with its first difference and reproduce command, valid JUnit", async () => {
    const { buildMutant, MUTANTS, removeMutant } = await import("../../scripts/mutants.js");
    const mutant = buildMutant(process.cwd(), MUTANTS.find((m) => m.name === "quote-accepted-one-block-late")!);
    try {
      const junit = join(dir, "consume.xml");
      const html = join(dir, "consume.html");
      const command = `node ${mutant}/dist/src/cli.js t8n --server`;
      const r = await cbqs("consume", "fixtures/corpus", "--t8n-server", command, "--jobs", "1", "--quiet", "--junit", junit, "--report", html);
      expect(r.exitCode).toBe(1);
      expectValidJunit(junit);
      const cases = testcases(readFileSync(junit, "utf8"));
      expect(cases.map((c) => c.name)).toEqual(readdirSync("fixtures/corpus").filter((f) => f !== "index.json").sort());
      const failed = cases.filter((c) => c.outcome !== null);
      expect(failed.map((c) => [c.name, c.outcome])).toEqual([["create-quote.json", "failure"]]);
      expect(unescape(failed[0]!.message!)).toBe('block 5 tx 4 CreateStream: t8n result: receipts[4].status expected "rejected" got "ok"');
      expect(unescape(failed[0]!.text!)).toContain(`reproduce: cbqs consume fixtures/corpus/create-quote.json --t8n-server '${command}'`);
      expect(readFileSync(html, "utf8")).toContain("create-quote.json");
    } finally {
      removeMutant(mutant);
    }
  });
});
