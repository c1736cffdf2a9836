// `cbqs consume` end to end, the compiled CLI as a node team runs it in CI: our own server and
// per-call t8n pass the corpus; a planted engine bug (a mutant copy of dist/) fails a fixture,
// named by its id and block, with a reproduce line; a fixture this emulator does not replay and
// a target that cannot run are unusable (exit 2), never a pass; SIGINT stops it cleanly.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { marked } from "../marked-processes.js";
import { requireFreshDist } from "../fuzz/dist.js";
import { buildMutant, MUTANTS, removeMutant } from "../../scripts/mutants.js";

const SERVER = "node dist/src/cli.js t8n --server";
let scratch: string;

beforeAll(() => {
  requireFreshDist();
  scratch = mkdtempSync(join(tmpdir(), "cbqs-consume-"));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Ran {
  code: number | null;
  out: string;
  err: string;
}

function consume(args: string[], onStart?: (kill: (signal: NodeJS.Signals) => void, err: () => string) => void): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["dist/src/cli.js", "consume", ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (c) => (out += String(c)));
    child.stderr.on("data", (c) => (err += String(c)));
    child.on("close", (code) => resolve({ code, out, err }));
    onStart?.((s) => child.kill(s), () => err);
  });
}

const SUMMARY = /^consume: (\d+) fixtures?: (\d+) ok, (\d+) mismatch(?:es)?, (\d+) unusable; (\d+) blocks?, (\d+) txs? in [\d.]+ s/m;

describe("cbqs consume", () => {
  it("our own server passes the whole corpus, block by block (exit 0)", async () => {
    const r = await consume(["fixtures/corpus", "--t8n-server", SERVER, "--quiet"]);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const m = SUMMARY.exec(r.out)!;
    expect([m[1], m[2], m[3], m[4]]).toEqual(["19", "19", "0", "0"]);
    expect(Number(m[5])).toBe(79);
  });

  it("our per-call t8n passes too: a process per block, each given the state before it", async () => {
    const r = await consume(["fixtures/corpus/transfers.json", "fixtures/corpus/create-quote.json", "--t8n", "node dist/src/cli.js t8n", "--quiet"]);
    expect([r.code, r.err]).toEqual([0, ""]);
    expect(SUMMARY.exec(r.out)!.slice(1, 5)).toEqual(["2", "2", "0", "0"]);
  });

  it("a planted bug fails the fixture that exercises it: its id, block, transaction and field, and a reproduce line (exit 1)", async () => {
    const mutant = MUTANTS.find((m) => m.name === "quote-accepted-one-block-late")!;
    const dir = buildMutant(process.cwd(), mutant);
    try {
      const command = `node ${dir}/dist/src/cli.js t8n --server`;
      const r = await consume(["fixtures/corpus", "--t8n-server", command, "--quiet"]);
      expect(r.code).toBe(1);
      expect(r.out).toContain('MISMATCH create-quote.json: block 5 tx 4 CreateStream: t8n result: receipts[4].status expected "rejected" got "ok"\n');
      expect(r.out).toContain(`  reproduce: cbqs consume fixtures/corpus/create-quote.json --t8n-server '${command}'\n`);
      expect(SUMMARY.exec(r.out)!.slice(1, 5)).toEqual(["19", "18", "1", "0"]);
    } finally {
      removeMutant(dir);
    }
  });

  it("a differing state is named key by key, fetched from the server only then", async () => {
    const mutant = MUTANTS.find((m) => m.name === "settled-blocks-off-by-one")!;
    const dir = buildMutant(process.cwd(), mutant);
    try {
      const r = await consume(["fixtures/corpus/update-stream.json", "--t8n-server", `node ${dir}/dist/src/cli.js t8n --server`, "--quiet"]);
      expect(r.code).toBe(1);
      expect(r.out).toMatch(/^MISMATCH update-stream\.json: block 5: state: key 0x03[0-9a-f]+: record\.StreamRecordV1\.last_settled_block expected "2" got "3"$/m);
    } finally {
      removeMutant(dir);
    }
  });

  it("a fixture this emulator does not replay is unusable, not a verdict on the target; the others still run (exit 2)", async () => {
    const fixture = JSON.parse(readFileSync("fixtures/corpus/transfers.json", "utf8"));
    fixture.blocks[0].receipt_root = `0x${"00".repeat(32)}`;
    const dir = mkdtempSync(join(scratch, "bad-"));
    writeFileSync(join(dir, "broken.json"), JSON.stringify(fixture));
    writeFileSync(join(dir, "good.json"), readFileSync("fixtures/corpus/transfers.json"));
    const r = await consume([dir, "--t8n-server", SERVER, "--quiet"]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^cbqs: error: broken\.json: this emulator does not replay the fixture \(block \d+: receipt_root: expected 0x0{64} got 0x[0-9a-f]{64}; see cbqs replay\)\n$/);
    expect(SUMMARY.exec(r.out)!.slice(1, 5)).toEqual(["2", "1", "0", "1"]);
  });

  it("a target that cannot run is unusable for every fixture, named on one line each (exit 2); bad options are exit 2 at once", async () => {
    const r = await consume(["fixtures/corpus/transfers.json", "--t8n-server", "no-such-command-cbqs", "--quiet"]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^cbqs: error: transfers\.json: t8n-server no-such-command-cbqs: starting the chain: .*not found/);
    const both = await consume(["fixtures/corpus", "--t8n", "x", "--t8n-server", "y"]);
    expect([both.code, both.err]).toEqual([2, "cbqs: error: give the implementation under test as --t8n-server <command> (a server) or --t8n <command> (per call), one of them\n"]);
    const timeout = await consume(["fixtures/corpus", "--t8n", "x", "--timeout", "0"]);
    expect([timeout.code, timeout.err]).toEqual([2, "cbqs: error: --timeout must be an integer from 1 to 86400 (got 0)\n"]);
  });

  it("--shard i/n consumes every n-th fixture by name; the shards cover the corpus once", async () => {
    const counts = [];
    for (const shard of ["1/3", "2/3", "3/3"]) {
      const r = await consume(["fixtures/corpus", "--t8n-server", SERVER, "--quiet", "--shard", shard]);
      expect(r.code).toBe(0);
      counts.push(Number(SUMMARY.exec(r.out)![1]));
    }
    expect(counts).toEqual([7, 6, 6]);
  });

  it("SIGINT: the server is stopped, the summary printed, exit 130", async () => {
    const slow = join(scratch, "slow.sh");
    writeFileSync(slow, `#!/bin/sh\nsleep 0.3\nexec node dist/src/cli.js t8n "$@"\n`, { mode: 0o755 });
    const r = await consume(["fixtures/corpus", "--t8n", slow, "--quiet", "--jobs", "1"], (kill) => setTimeout(() => kill("SIGINT"), 1500));
    expect(r.code).toBe(130);
    expect(r.out).toMatch(SUMMARY);
    expect(r.err).toMatch(/^cbqs: stopped by SIGINT; \d+ of 19 fixtures consumed before it; nothing written\n$/);
  });

  it("--jobs 2: the same report in the same order as one job, whichever worker finishes first (a mutant's mismatches included)", async () => {
    const mutant = MUTANTS.find((m) => m.name === "settled-blocks-off-by-one")!;
    const dir = buildMutant(process.cwd(), mutant);
    try {
      const command = `node ${dir}/dist/src/cli.js t8n --server`;
      const one = await consume(["fixtures/corpus", "--t8n-server", command, "--quiet", "--jobs", "1"]);
      const two = await consume(["fixtures/corpus", "--t8n-server", command, "--quiet", "--jobs", "2"]);
      expect(one.code).toBe(1);
      const lines = (r: Ran) => r.out.replace(/ in [\d.]+ s \(.*\)$/m, "");
      expect(lines(two)).toBe(lines(one));
      expect(one.out.match(/^MISMATCH /gm)!.length).toBeGreaterThan(2);
    } finally {
      removeMutant(dir);
    }
  });

  it("--jobs 2: consume ends only after each worker's server has read EOF and exited (each may clean up first)", async () => {
    const exits = mkdtempSync(join(scratch, "exits-"));
    // Each server, once its stdin ends, takes half a second more before it has exited: a consume that did not wait would end first.
    const server = `${SERVER}; sleep 0.5; echo > ${exits}/exited-$$`;
    const r = await consume(["fixtures/corpus", "--t8n-server", server, "--jobs", "2", "--quiet"]);
    expect([r.code, r.err]).toEqual([0, ""]);
    expect(readdirSync(exits)).toHaveLength(2);
  });

  it("SIGINT with --jobs 2: exit 130, the summary, and no server process left behind", async () => {
    const mark = `cbqs-consume-test-${process.pid}-${Date.now()}`;
    const corpus = mkdtempSync(join(scratch, "many-"));
    const text = readFileSync("fixtures/corpus/pause-accounting.json");
    for (let i = 0; i < 40; i++) writeFileSync(join(corpus, `copy-${String(i).padStart(2, "0")}.json`), text);
    const child = spawn(process.execPath, ["dist/src/cli.js", "consume", corpus, "--t8n-server", SERVER, "--jobs", "2", "--quiet"], { env: { ...process.env, CBQS_TEST_MARK: mark }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (c) => (out += String(c)));
    child.stderr.on("data", (c) => (err += String(c)));
    for (let i = 0; i < 600 && marked(mark, "consume").length < 2; i++) await new Promise((r) => setTimeout(r, 50));
    expect(marked(mark, "consume").length, "two servers running").toBeGreaterThanOrEqual(2);
    child.kill("SIGINT");
    const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
    expect(code, err).toBe(130);
    expect(out).toMatch(SUMMARY);
    expect(err).toMatch(/cbqs: stopped by SIGINT; \d+ of 40 fixtures consumed before it; nothing written\n$/);
    for (let i = 0; i < 40 && marked(mark, "consume").length > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(marked(mark, "consume")).toEqual([]);
  });
});
