// `--jobs N` on worker threads (src/jobs/), the compiled CLI as a user runs it: the same output
// as one job, in the sorted order, whichever worker finishes first — replay's JSON report with a
// mismatch and an unusable fixture among the good ones, and fill's bytes and index.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requireFreshDist } from "../fuzz/dist.js";

let dir: string;
beforeAll(() => {
  requireFreshDist();
  dir = mkdtempSync(join(tmpdir(), "cbqs-jobs-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = (...args: string[]) => spawnSync(process.execPath, ["dist/src/cli.js", ...args], { encoding: "utf8" });

describe("--jobs", () => {
  it("replay --jobs 2 reports exactly what --jobs 1 does, in the sorted order (a mismatch and an unusable fixture among them)", () => {
    const corpus = join(dir, "replay");
    mkdirSync(corpus);
    for (const f of readdirSync("fixtures/corpus").filter((f) => f !== "index.json")) copyFileSync(join("fixtures/corpus", f), join(corpus, f));
    const tampered = JSON.parse(readFileSync("fixtures/corpus/transfers.json", "utf8"));
    tampered.blocks[1].receipts[0].cycles = "1";
    writeFileSync(join(corpus, "transfers.json"), JSON.stringify(tampered));
    writeFileSync(join(corpus, "aaa-broken.json"), "{");
    const strip = (text: string) => JSON.parse(text, (k, v) => (k === "seconds" ? undefined : v));
    const one = cli("replay", corpus, "--json", "--jobs", "1", "--quiet");
    const two = cli("replay", corpus, "--json", "--jobs", "2", "--quiet");
    expect(one.status).toBe(1);
    expect(two.status).toBe(1);
    expect(strip(two.stdout)).toEqual(strip(one.stdout));
    const files = (strip(two.stdout) as { fixtures: Array<{ file: string; status: string }> }).fixtures;
    expect(files.map((f) => f.file)).toEqual([...files.map((f) => f.file)].sort());
    expect(files.filter((f) => f.status !== "ok").map((f) => [f.file.slice(corpus.length + 1), f.status])).toEqual([
      ["aaa-broken.json", "unusable"],
      ["transfers.json", "mismatch"],
    ]);
    const text = cli("replay", corpus, "--jobs", "2", "--quiet");
    expect(text.stdout.replace(/ in [\d.]+ s \(.*\)$/m, "")).toBe(cli("replay", corpus, "--jobs", "1", "--quiet").stdout.replace(/ in [\d.]+ s \(.*\)$/m, ""));
  });

  it("fill --jobs 2 writes the corpus byte for byte, index.json included", () => {
    const out = join(dir, "fill");
    const scenarios = readdirSync("fixtures/scenarios").filter((f) => f.endsWith(".json")).map((f) => join("fixtures/scenarios", f));
    const r = cli("fill", ...scenarios, "-o", out, "--jobs", "2", "--quiet");
    expect([r.status, r.stderr]).toEqual([0, ""]);
    expect(readdirSync(out).sort()).toEqual(readdirSync("fixtures/corpus").sort());
    for (const f of readdirSync(out)) expect(readFileSync(join(out, f), "utf8"), f).toBe(readFileSync(join("fixtures/corpus", f), "utf8"));
  });

  it("--jobs is refused out of range, and above 1 with --trace or --pipeline", () => {
    expect(cli("replay", "fixtures/corpus", "--jobs", "0").stderr).toBe("cbqs: error: --jobs must be an integer from 1 to 256 (got 0)\n");
    const r = cli("replay", "fixtures/corpus", "--jobs", "2", "--pipeline");
    expect([r.status, r.stderr]).toEqual([2, "cbqs: error: --jobs above 1 cannot be combined with --trace or --pipeline\n"]);
  });
});
