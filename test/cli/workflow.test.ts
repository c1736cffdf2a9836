// The workflow of node teams and auditors: every input may be gzipped, replay reports
// every fixture and never hides a mismatch, shards cover a corpus exactly once, progress is
// bounded and quiet on request, npm start ends with one verdict line, run streams, diffs name
// the field, state dumps filter, and the CLI follows one set of conventions.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import v8 from "node:v8";
import vm from "node:vm";
import { gunzipSync, gzipSync } from "node:zlib";
import type { Command } from "commander";
import * as fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/program.js";
import { Progress, progressMode, type Clock } from "../../src/harness/progress.js";
import type { FixtureReport } from "../../src/harness/replay.js";
import { shardOf } from "../../src/harness/replay.js";
import { Output, Streamed, writeJsonDocument } from "../../src/json/write.js";
import { parseScenario } from "../../src/scenario/parse.js";
import { runScenario, ScenarioRun } from "../../src/scenario/run.js";
import { start, verdict } from "../../scripts/start.js";
import { cbqs, unusableInput } from "./program.js";

const dir = mkdtempSync(join(tmpdir(), "cbqs-workflow-"));
const put = (name: string, data: string | Uint8Array): string => {
  const p = join(dir, name);
  writeFileSync(p, data);
  return p;
};
const FIXTURE = "fixtures/corpus/create-quote.json";
const fixture = () => JSON.parse(readFileSync(FIXTURE, "utf8")) as { genesis: { chain_instance_id: string }; blocks: Array<Record<string, any>> };
const gz = (name: string, text: string): string => put(name, gzipSync(text));
const fakeClock = (): Clock & { advance(ms: number): void } => {
  let t = 0;
  return { now: () => t, advance: (ms) => void (t += ms) };
};

describe("the standard input as `-` and pipes named as files (one file reader)", () => {
  const cli = (args: string[], input?: string | Uint8Array) => spawnSync(process.execPath, ["dist/src/cli.js", ...args], { encoding: "utf8", ...(input === undefined ? {} : { input }) });
  const text = readFileSync(FIXTURE, "utf8");

  it("a fixture piped in plain or gzipped replays as from its file; a pipe named /dev/stdin too", () => {
    for (const input of [text, gzipSync(text)]) {
      const r = cli(["replay", "-", "--quiet"], input);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^replay: 1 fixture: 1 ok, 0 mismatches, 0 unusable; 3 blocks, 18 txs/);
    }
    expect(cli(["replay", "/dev/stdin", "--quiet"], text).status).toBe(0);
    expect(cli(["diff", "-", FIXTURE], text).stdout).toBe("same\n");
  });

  it("strict reading holds on the standard input, and a second `-` is refused in words", () => {
    const dup = cli(["replay", "-"], '{"format":"cbqs-fixture/v1","format":"x"}');
    expect(dup.status).toBe(2);
    expect(dup.stderr).toMatch(/^cbqs: error: -: \$\.format: duplicate key/m);
    const twice = cli(["diff", "-", "-"], text);
    expect(twice.status).toBe(2);
    expect(twice.stderr).toBe("cbqs: error: -: the standard input was already read by another argument\n");
  });
});

describe(".json.gz is read wherever a document is read (one file reader)", () => {
  it("replay, trace, state dump, diff, state diff, prove-state, verify-proof, t8n, run, fill and gas-vectors verify", async () => {
    const f = fixture();
    const fixtureGz = gz("f.json.gz", readFileSync(FIXTURE, "utf8"));
    const dumpGz = gz("d.json.gz", JSON.stringify(f.blocks[0]!["post_state"]));
    const b = f.blocks[1]!;
    const env = { height: b["height"], timestamp: b["timestamp"], chain_id: "7", chain_instance_id: f.genesis.chain_instance_id, governance: "0x00000000000000000000000000000000000000aa" };
    expect((await cbqs("replay", fixtureGz, "--quiet")).exitCode).toBe(0);
    expect((await cbqs("trace", fixtureGz, "--block", String(b["height"]))).exitCode).toBe(0);
    expect((await cbqs("state", "dump", fixtureGz, "--height", "1")).exitCode).toBe(0);
    expect((await cbqs("diff", FIXTURE, fixtureGz)).out).toBe("same\n");
    expect((await cbqs("state", "diff", dumpGz, dumpGz)).out).toBe("equal\n");
    const proofFile = join(dir, "p.json");
    const key = (f.blocks[0]!["post_state"] as { entries: Array<{ key: string }> }).entries[0]!.key;
    const root = (await cbqs("prove-state", dumpGz, "--key", key, "-o", proofFile)).out.trim();
    expect((await cbqs("verify-proof", gz("p.json.gz", readFileSync(proofFile, "utf8")), "--root", root)).exitCode).toBe(0);
    const t8n = await cbqs("t8n", "--input.alloc", dumpGz, "--input.txs", gz("t.json.gz", JSON.stringify(b["transactions"])), "--input.env", gz("e.json.gz", JSON.stringify(env)), "--quiet");
    expect(t8n.exitCode).toBe(0);
    const scenarioGz = gz("s.json.gz", readFileSync("fixtures/scenarios/transfers.json", "utf8"));
    expect((await cbqs("run", scenarioGz)).exitCode).toBe(0);
    expect((await cbqs("fill", scenarioGz, "-o", join(dir, "filled"), "--quiet")).exitCode).toBe(0);
    expect((await cbqs("gas-vectors", "verify", gz("g.json.gz", readFileSync("gas-vectors/cip-39-gas-vectors-v1.json", "utf8")))).exitCode).toBe(0);
  });
});

describe("replay of a directory reports every fixture; a mismatch is never hidden", () => {
  const corpus = join(dir, "mixed");
  mkdirSync(corpus, { recursive: true });
  const good = "fixtures/corpus/transfers.json";
  copyFileSync(good, join(corpus, "a-ok.json"));
  const bad = fixture();
  bad.blocks[1]!["receipt_root"] = "0x" + "ab".repeat(32);
  writeFileSync(join(corpus, "b-mismatch.json"), JSON.stringify(bad));
  writeFileSync(join(corpus, "c-unusable.json"), "{");

  it("one ok, one mismatch, one unusable: exit 1 (a mismatch wins), all three reported", async () => {
    const r = await cbqs("replay", corpus, "--quiet");
    expect(r.exitCode).toBe(1);
    expect(r.out).toMatch(/^MISMATCH .*b-mismatch\.json: block \d+: receipt_root/m);
    expect(r.err).toMatch(/^cbqs: error: .*c-unusable\.json: \$: not valid JSON/m);
    expect(r.out).toMatch(/^replay: 3 fixtures: 1 ok, 1 mismatch, 1 unusable; /m);
    const json = JSON.parse((await cbqs("replay", corpus, "--json")).out) as { fixtures: Array<{ status: string }> };
    expect(json.fixtures.map((f) => f.status)).toEqual(["ok", "mismatch", "unusable"]);
  });

  it("ok and unusable only: exit 2; several targets in one run", async () => {
    const r = await cbqs("replay", good, join(corpus, "c-unusable.json"), "--quiet");
    expect(r.exitCode).toBe(2);
    expect(r.out).toMatch(/^replay: 2 fixtures: 1 ok, 0 mismatches, 1 unusable; /m);
  });

  it("--help says which exit code wins", async () => {
    expect((await cbqs("replay", "--help")).out).toMatch(/1 +a fixture does not match \(1 wins: a mismatch is never hidden/);
  });
});

describe("replay --shard i/n", () => {
  it("the n shards are disjoint, cover every fixture exactly once, and depend only on the file names (property)", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1, maxLength: 12 }), { maxLength: 40 }), fc.integer({ min: 1, max: 9 }), (names, n) => {
        const shards = Array.from({ length: n }, (_, i) => shardOf(names, { index: i + 1, count: n }));
        expect(shards.flat().sort()).toEqual([...names].sort());
        expect(shardOf([...names].reverse(), { index: 1, count: n })).toEqual(shards[0]);
        const sizes = shards.map((s) => s.length);
        expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
      }),
    );
  });

  it("files are ordered by file name, not by directory; the same name in two directories by full path", () => {
    const files = ["b/a.json", "a/z.json", "c/m.json"];
    expect([1, 2, 3].map((index) => shardOf(files, { index, count: 3 }))).toEqual([["b/a.json"], ["c/m.json"], ["a/z.json"]]);
    expect(shardOf(["y/s.json", "x/s.json"], { index: 1, count: 2 })).toEqual(["x/s.json"]);
  });

  it("on the CLI: three shards of the corpus replay every fixture once; a bad --shard is exit 2", async () => {
    const seen: string[] = [];
    for (const i of [1, 2, 3]) {
      const r = await cbqs("replay", "fixtures/corpus", "--shard", `${i}/3`, "--json");
      expect(r.exitCode).toBe(0);
      expect(r.err).toMatch(new RegExp(`^replay \\(shard ${i}/3\\): `));
      seen.push(...(JSON.parse(r.out) as { fixtures: Array<{ file: string }> }).fixtures.map((f) => f.file));
    }
    expect(seen.sort()).toEqual(readdirSync("fixtures/corpus").filter((f) => f !== "index.json").map((f) => join("fixtures/corpus", f)).sort());
    expect(await cbqs("replay", "fixtures/corpus", "--shard", "4/3")).toEqual(unusableInput(/--shard must be i\/n with 1 ≤ i ≤ n \(got 4\/3\)/));
  });
});

describe("progress (one module): a terminal line, a plain line at most every 10 s of work, --quiet none", () => {
  const state = (done: number) => ({ done, total: 10_000, unit: "blocks", height: { at: BigInt(done), last: 10_000n }, txs: done * 5 });

  it("non-TTY: nothing before 10 s of work, then one line per 10 s, with height, rates and ETA", () => {
    let out = "";
    const clock = fakeClock();
    const p = new Progress("replay x.json", "plain", { write: (t: string) => void (out += t) }, clock);
    for (let i = 1; i <= 100; i++) {
      clock.advance(250);
      p.update(state(i * 40));
    }
    p.end();
    const lines = out.trimEnd().split("\n");
    expect(lines).toHaveLength(2); // 25 s of work: at 10 s and at 20 s
    expect(lines[0]).toBe("replay x.json: height 1,600/10,000, 160 blocks/s, 800 tx/s, ETA 53 s");
    expect(out).not.toMatch(/\r|\x1b/);
  });

  it("TTY: one self-overwriting line, redrawn at most every 250 ms, cleared at the end; --quiet: nothing", () => {
    let out = "";
    const clock = fakeClock();
    const p = new Progress("fill s.json (executing)", "tty", { write: (t: string) => void (out += t) }, clock);
    for (let i = 1; i <= 10; i++) {
      clock.advance(100);
      p.update(state(i));
    }
    p.end();
    expect(out.split("\r\x1b[K").filter((x) => x !== "")).toHaveLength(3); // at 300, 600 and 900 ms
    expect(out.endsWith("\r\x1b[K")).toBe(true);
    expect(progressMode(true, { isTTY: true })).toBe("off");
    expect(progressMode(false, { isTTY: true })).toBe("tty");
    expect(progressMode(undefined, { isTTY: false })).toBe("plain");
  });

  it("every long command takes --quiet", async () => {
    for (const cmd of [["run"], ["fill"], ["replay"], ["t8n"]]) expect((await cbqs(...cmd, "--help")).out, cmd[0]).toMatch(/--quiet +no progress on stderr/);
  });
});

describe("npm start ends with exactly one verdict line", () => {
  it("package.json start runs the one script that prints it", () => {
    expect((JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> }).scripts["start"]).toBe("node dist/scripts/start.js");
  });

  it("OK: names the fixtures, blocks, transactions and the gas-vector SHA-256 it verified", async () => {
    const r = await start({ jobs: 2, corpus: "fixtures/corpus", longChain: join(dir, "lc", "long-chain.json.gz"), blocks: 30, minTxs: 0, quiet: true });
    const n = readdirSync("fixtures/corpus").filter((f) => f !== "index.json").length + 1;
    expect(r.exitCode).toBe(0);
    expect(r.line).toMatch(new RegExp(`^OK: ${n} fixtures \\([0-9,]+ blocks, [0-9,]+ txs\\) replayed and matched; gas-vector SHA-256 [0-9a-f]{64} verified \\(13 vectors re-executed\\)$`));
  });

  it("FAILED: names what failed, with the exit code of the worst problem", async () => {
    const corpus = join(dir, "bad-corpus");
    mkdirSync(corpus, { recursive: true });
    const bad = fixture();
    bad.blocks[0]!["tx_root"] = "0x" + "00".repeat(32);
    writeFileSync(join(corpus, "bad.json"), JSON.stringify(bad));
    const r = await start({ jobs: 2, corpus, longChain: join(dir, "lc2", "long-chain.json.gz"), blocks: 10, minTxs: 0, quiet: true });
    expect(r.exitCode).toBe(1);
    // What failed, then what was verified all the same: the long chain, and the gas vectors.
    expect(r.line).toMatch(/^FAILED: 1 fixture of 2 did not replay \(.*bad\.json: mismatch\); 1 fixture \(10 blocks, [0-9,]+ txs\) replayed and matched; gas-vector SHA-256 [0-9a-f]{64} verified \(13 vectors re-executed\)$/);
  });

  it("a mismatch wins the exit code over unusable input, whether of a fixture or of the gas vectors", () => {
    const report = (file: string, status: FixtureReport["status"], blocks = 0, txs = 0): FixtureReport => ({ file, name: null, status, blocks, txs });
    const gasOk = { status: "ok", sha256: "ab".repeat(32), vectors: 13 } as const;
    const unusableAndGasMismatch = verdict([report("a.json", "ok", 1, 1), report("b.json", "unusable")], { status: "mismatch", reason: "vector x: cycles differ" });
    expect(unusableAndGasMismatch.exitCode).toBe(1);
    expect(unusableAndGasMismatch.line).toMatch(
      /^FAILED: 1 fixture of 2 did not replay \(b\.json: unusable\); gas-vector SHA-256 [0-9a-f]{64} not verified \(mismatch: vector x: cycles differ\); 1 fixture \(1 block, 1 tx\) replayed and matched$/,
    );
    expect(verdict([report("a.json", "mismatch")], { status: "unusable", reason: "g.json: $: expected an object" }).exitCode).toBe(1);
    expect(verdict([report("a.json", "unusable")], gasOk)).toEqual({
      exitCode: 2,
      line: expect.stringMatching(/^FAILED: 1 fixture of 1 did not replay \(a\.json: unusable\); 0 fixtures \(0 blocks, 0 txs\) replayed and matched; gas-vector SHA-256 (ab){32} verified/),
    });
    expect(verdict([report("a.json", "ok", 2, 3)], gasOk)).toEqual({ exitCode: 0, line: `OK: 1 fixture (2 blocks, 3 txs) replayed and matched; gas-vector SHA-256 ${"ab".repeat(32)} verified (13 vectors re-executed)` });
  });
});

describe("the scripts a user runs take --help and refuse unknown options", () => {
  const script = (name: string, ...args: string[]) => spawnSync(process.execPath, [join("dist", "scripts", name), ...args], { encoding: "utf8" });

  it("gen-long-chain and start: --help is the usage (exit 0); an unknown option, a bad value or nothing to do is one error line, exit 2", () => {
    for (const name of ["gen-long-chain.js", "start.js"]) {
      const help = script(name, "--help");
      expect([help.status, help.stdout], name).toEqual([0, expect.stringMatching(/^Usage: [^]*\nExit codes:\n  0  .+\n  1  .+\n  2  .+\n$/)]);
      const bad = script(name, "--bogus");
      expect([bad.status, bad.stderr], name).toEqual([2, "cbqs: error: unknown option '--bogus' (see --help)\n"]);
    }
    expect(script("gen-long-chain.js").stderr).toBe("cbqs: error: give --scenario <file> or --fixture <file> (see --help)\n");
    expect(script("gen-long-chain.js", "--blocks", "ten", "--scenario", join(dir, "x.json"))).toMatchObject({ status: 2, stderr: "cbqs: error: --blocks must be an integer of at least 1 (got ten)\n" });
  });

  it("every developer script (benches, fuzzers, generators): --help is its usage (exit 0) and an unknown option exit 2, before it does anything", () => {
    const scripts = readdirSync(join("dist", "scripts")).filter((f) => f.endsWith(".js") && !["gen-long-chain.js", "start.js"].includes(f));
    // Modules other scripts import, not run on their own.
    const libraries = new Set(["chart.js", "envelope-mutations.js", "fuzz-node-cases.js", "layers.js", "long-chain-cache.js", "mutants.js", "node-process.js", "perf-baseline.js", "perf-guard-lib.js", "record-loads.js", "rng.js", "script-args.js", "state-workload.js"]);
    const runnable = scripts.filter((f) => !libraries.has(f));
    expect(runnable.length).toBeGreaterThanOrEqual(13);
    const before = readdirSync(".").sort();
    for (const name of runnable) {
      const help = script(name, "--help");
      expect([help.status, help.stdout], name).toEqual([0, expect.stringMatching(/^usage: /)]);
      const bad = script(name, "--bogus");
      expect(bad.status, `${name}: ${bad.stderr}`).toBe(2);
      expect(bad.stderr, name).toMatch(/--bogus[^]*\nusage: /);
    }
    // Nothing was written (gen-big-dump once wrote a file named "--help").
    expect(readdirSync(".").sort()).toEqual(before);
  });

  it("gen-long-chain states no fixed time estimate (it would be wrong for any other --blocks)", () => {
    const r = script("gen-long-chain.js", "--blocks", "3", "--min-txs", "0", "--fixture", join(dir, "lc3", "long-chain.json.gz"), "--quiet");
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^long-chain: 3 blocks, \d+ transactions\nlong-chain: filling .* \(executes the chain, then checks it by replay\)\nlong-chain: wrote /);
  });
});

describe("run streams block by block", () => {
  const gc = (() => {
    v8.setFlagsFromString("--expose-gc");
    return vm.runInNewContext("gc") as () => void;
  })();
  const empty = (n: number) =>
    parseScenario({
      format: "cbqs-scenario/v1",
      genesis: { chain_id: "7", timestamp: "0", block_time_seconds: "1", governance: "0x00000000000000000000000000000000000000aa" },
      blocks: Array.from({ length: n }, (_, i) => ({ height: String(i + 1) })),
    });

  it("the runner keeps none of the blocks it has produced: every block object is collectable once written", async () => {
    const refs: WeakRef<object>[] = [];
    for (const b of new ScenarioRun(empty(3_000)).blocks()) refs.push(new WeakRef(b.run), new WeakRef(b.sealed.blockHash));
    // Let the finalization of the last generator frame settle, then collect.
    await new Promise((r) => setTimeout(r, 0));
    gc();
    const alive = refs.filter((r) => r.deref() !== undefined).length;
    expect(alive).toBeLessThanOrEqual(2); // at most the last block's objects, still on a stack frame
  });

  it("-o <name>.gz writes gzip (one member per flushed chunk) that gunzip and our reader unpack whole", async () => {
    const items = Array.from({ length: 30_000 }, (_, i) => ({ i, payload: "y".repeat(60) }));
    const file = join(dir, "big.json.gz");
    const out = new Output(file);
    writeJsonDocument(out, { format: "f", items: new Streamed(items) });
    out.close();
    const bytes = readFileSync(file);
    expect([bytes[0], bytes[1]]).toEqual([0x1f, 0x8b]);
    expect(gunzipSync(bytes).toString("utf8")).toBe(JSON.stringify({ format: "f", items }, null, 2) + "\n");
    // A command's -o: the dump is gzipped, and reads back as the same document.
    const dumpGz = join(dir, "dump.json.gz");
    expect((await cbqs("state", "dump", FIXTURE, "-o", dumpGz)).exitCode).toBe(0);
    expect([...readFileSync(dumpGz).subarray(0, 2)]).toEqual([0x1f, 0x8b]);
    expect((await cbqs("state", "dump", FIXTURE, "-o", join(dir, "dump.json"))).exitCode).toBe(0);
    expect(gunzipSync(readFileSync(dumpGz)).toString("utf8")).toBe(readFileSync(join(dir, "dump.json"), "utf8"));
    expect(await cbqs("state", "diff", dumpGz, join(dir, "dump.json"))).toMatchObject({ exitCode: 0 });
  });

  it("the JSON writer keeps no element it has written", async () => {
    const refs: WeakRef<object>[] = [];
    const items = function* () {
      for (let i = 0; i < 2_000; i++) {
        const o = { i, payload: "x".repeat(100) };
        refs.push(new WeakRef(o));
        yield o;
      }
    };
    const out = new Output(join(dir, "stream.json"));
    writeJsonDocument(out, { format: "f", items: new Streamed(items()) });
    out.close();
    await new Promise((r) => setTimeout(r, 0));
    gc();
    expect(refs.filter((r) => r.deref() !== undefined).length).toBeLessThanOrEqual(1);
    expect(JSON.parse(readFileSync(join(dir, "stream.json"), "utf8")).items).toHaveLength(2_000);
  });

  it("cbqs run --json -o writes, block by block, exactly the run document (byte-identical to JSON.stringify)", async () => {
    const file = "fixtures/scenarios/provider-lifecycle.json";
    const out = join(dir, "run.json");
    expect((await cbqs("run", file, "--json", "-o", out, "--quiet")).exitCode).toBe(0);
    const expected = runScenario(parseScenario(JSON.parse(readFileSync(file, "utf8")))).document;
    expect(readFileSync(out, "utf8")).toBe(JSON.stringify(expected, null, 2) + "\n");
    const text = await cbqs("run", file);
    expect(text.out.split("\n").filter((l) => l.startsWith("block ")).length).toBe(expected.blocks.length);
  });
});

describe("diffs that name the field", () => {
  it("a fixture's state_root difference is narrowed to the differing key and field through post_state", async () => {
    const theirs = fixture();
    const post = theirs.blocks[1]!["post_state"] as { entries: Array<{ key: string; value: string }> };
    const i = post.entries.findIndex((e) => e.key.startsWith("0x01"));
    post.entries[i]!.value = post.entries[i]!.value.slice(0, -1) + (post.entries[i]!.value.endsWith("0") ? "1" : "0");
    theirs.blocks[1]!["state_root"] = "0x" + "cd".repeat(32);
    const r = await cbqs("diff", FIXTURE, put("sr.json", JSON.stringify(theirs)));
    expect(r.exitCode).toBe(1);
    const lines = r.out.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^block \d+: state_root expected "0x[0-9a-f]{64}" got "0xcdcd/);
    expect(lines[1]).toMatch(new RegExp(`^  key ${post.entries[i]!.key}: balance expected "\\d+" got "\\d+"$`));
  });

  it("a differing envelope is decoded field by field, down to the instruction's field", async () => {
    const { decodeEnvelope, encodeEnvelope } = await import("../../src/chain/envelope.js");
    const { fromHex, toHex } = await import("../../src/bytes.js");
    const theirs = fixture();
    const b = theirs.blocks[1]!;
    const env = decodeEnvelope(fromHex((b["transactions"] as string[])[0]!));
    env.nonce += 1n;
    (b["transactions"] as string[])[0] = toHex(encodeEnvelope(env));
    const r = await cbqs("diff", FIXTURE, put("env.json", JSON.stringify(theirs)));
    expect(r.out).toMatch(/^block \d+ tx 0 \w+: transactions\[0\]\.nonce expected "\d+" got "\d+"\n$/);
  });

  it("run documents: a state_root difference points into the final state's first differing field", async () => {
    const file = "fixtures/scenarios/transfers.json";
    const a = runScenario(parseScenario(JSON.parse(readFileSync(file, "utf8")))).document;
    const b = JSON.parse(JSON.stringify(a)) as typeof a;
    b.blocks[0]!.state_root = "0x" + "ee".repeat(32);
    const account = Object.keys(b.state["accounts"] as object)[0]!;
    (b.state["accounts"] as Record<string, { balance: string }>)[account]!.balance = "1";
    const r = await cbqs("diff", put("ra.json", JSON.stringify(a)), put("rb.json", JSON.stringify(b)));
    expect(r.out).toMatch(new RegExp(`^block \\d+: state_root expected .*\\n  final state: accounts\\.${account}\\.balance expected "\\d+" got "1"\\n$`));
  });

  it("a t8n result against the fixture block of its height, the state_root caveat stated (same, and differing)", async () => {
    const f = fixture();
    const b = f.blocks[1]!;
    const env = { height: b["height"], timestamp: b["timestamp"], chain_id: "7", chain_instance_id: f.genesis.chain_instance_id, governance: "0x00000000000000000000000000000000000000aa" };
    const result = join(dir, "t8n-result.json");
    await cbqs("t8n", "--input.alloc", put("pre.json", JSON.stringify(f.blocks[0]!["post_state"])), "--input.txs", put("txs.json", JSON.stringify(b["transactions"])), "--input.env", put("env.json", JSON.stringify(env)), "--output.result", result, "--quiet");
    const same = await cbqs("diff", FIXTURE, result);
    expect(same).toMatchObject({ exitCode: 0 });
    expect(same.out).toMatch(/^same\n  note: state_root and block_hash not compared: t8n commits its pre-state as one batch/);
    const r = JSON.parse(readFileSync(result, "utf8")) as { receipts: Array<{ cycles: string }> };
    r.receipts[0]!.cycles = "1";
    const differ = await cbqs("diff", FIXTURE, put("t8n-bad.json", JSON.stringify(r)));
    expect(differ.exitCode).toBe(1);
    expect(differ.out).toMatch(/^block \d+ tx 0 \w+: receipts\[0\]\.cycles expected "\d+" got "1"\n  note: state_root and block_hash not compared/);
  });
});

describe("state dump filters", () => {
  const OWNER = "0x1111111111111111111111111111111111111111";
  const PROVIDER = "0x2222222222222222222222222222222222222222";
  const keysOf = async (...args: string[]) => {
    const r = await cbqs("state", "dump", FIXTURE, ...args);
    expect(r.exitCode).toBe(0);
    return (JSON.parse(r.out) as { entries: Array<{ key: string; decoded: { value: { record?: Record<string, Record<string, string>> } } }> }).entries;
  };

  it("--stream by owner reference finds one stream's record (its escrow) without deriving the id", async () => {
    const e = await keysOf("--stream", `owner:${OWNER}/nonce:1`);
    expect(e).toHaveLength(1);
    const record = e[0]!.decoded.value.record!["StreamRecordV1"]!;
    expect(record["owner_nonce"]).toBe("1");
    expect(record["escrow_balance"]).toMatch(/^\d+$/);
    expect(await keysOf("--stream", record["stream_id"]!)).toEqual(e);
  });

  it("--owner: the owner's streams, stream count and account; --provider: its record and account; --account: every key under it", async () => {
    const owner = await keysOf("--owner", OWNER);
    expect(owner.filter((x) => x.decoded.value.record?.["StreamRecordV1"]?.["owner"] === OWNER).length).toBeGreaterThanOrEqual(2);
    expect(owner.some((x) => x.key.startsWith("0x01" + OWNER.slice(2)))).toBe(true);
    const provider = await keysOf("--provider", PROVIDER);
    expect(provider.map((x) => Object.keys(x.decoded.value.record ?? { Account: 1 })[0]).sort()).toEqual(["Account", "ProviderRecordV1"]);
    expect((await keysOf("--account", OWNER)).map((x) => x.key)).toEqual([`0x01${OWNER.slice(2)}${"00".repeat(33)}`]);
    expect(await cbqs("state", "dump", FIXTURE, "--owner", "0x12")).toEqual(unusableInput(/--owner: expected 20 bytes, got 1/));
  });
});

describe("CLI conventions", () => {
  const commands = (c: Command, path: string[] = []): string[][] => [path, ...c.commands.flatMap((s) => commands(s, [...path, s.name()]))];
  let all: string[][] = [];
  beforeAll(async () => {
    all = commands(await buildProgram("test"));
  });

  it("every command's --help ends with an Exit codes: section (0, 1 and 2), each code with its own meaning", async () => {
    for (const path of all) {
      const r = await cbqs(...path, "--help");
      const m = /\nExit codes:\n  0  (.+)\n  1  (.+)\n  2  (.+)\n(  130\/143  stopped by SIGINT\/SIGTERM: .+\n)?$/.exec(r.out);
      expect(m, path.join(" ")).not.toBeNull();
      // A group says what its subcommands' codes mean, not "(see each subcommand)".
      const meanings = m!.slice(1, 4);
      expect(meanings.filter((x) => /^\(see /.test(x)), path.join(" ")).toEqual([]);
      expect(new Set(meanings).size, path.join(" ")).toBe(3);
    }
  });

  it("--help marks every required option (required), and only those", async () => {
    const visit = (c: Command, path: string): void => {
      const help = c.createHelp();
      for (const o of c.options) expect([path, o.flags, help.optionDescription(o).endsWith(" (required)")]).toEqual([path, o.flags, o.mandatory]);
      c.commands.forEach((s) => visit(s, `${path} ${s.name()}`));
    };
    visit(await buildProgram("test"), "cbqs");
    expect((await cbqs("t8n", "--help")).out).toMatch(/\n  --input\.alloc <file> +pre-state: a cbqs-state-dump\/v1 file \(required\)\n/);
    expect((await cbqs("derive", "stream-id", "--help")).out).toMatch(/\n  --nonce <n> +owner nonce \(u64\) \(required\)\n/);
    expect((await cbqs("t8n", "--help")).out).toMatch(/\n  --output\.result <file> +result JSON; - is stdout \(default: "-"\)\n/);
  });

  it("-o means an output file defaulting to stdout everywhere, and no default is stated twice", async () => {
    const visit = (c: Command, path: string): void => {
      for (const o of c.options) {
        // fill writes a directory; a snapshot is a binary file renamed into place, never stdout.
        if (o.short === "-o" && c.name() !== "fill" && path !== "cbqs snapshot export") expect([path, o.long, o.defaultValue]).toEqual([path, "--output", "-"]);
        expect(o.description, `${path} ${o.flags}`).not.toMatch(/\(default/);
      }
      c.commands.forEach((s) => visit(s, `${path} ${s.name()}`));
    };
    visit(await buildProgram("test"), "cbqs");
  });

  it("commands are listed in workflow order: run → fill → replay → t8n → trace → diff → state → proof → codec → check", async () => {
    const program = await buildProgram("test");
    const names = program.createHelp().visibleCommands(program).map((c) => c.name());
    const order = ["run", "fill", "replay", "t8n", "trace", "diff", "state", "proof", "codec", "check"];
    expect(order.map((n) => names.indexOf(n))).toEqual([...order.map((n) => names.indexOf(n))].sort((a, b) => a - b));
    expect(order.every((n) => names.includes(n))).toBe(true);
  });

  it("required options are commander's requiredOption (missing ones named in one error line)", async () => {
    expect(await cbqs("derive", "stream-id", "--chain-id", "7")).toEqual({ exitCode: 2, out: "", err: expect.stringMatching(/^cbqs: error: required option '--chain-instance <hex>' not specified\n$/) });
    expect((await cbqs("t8n")).err).toMatch(/^cbqs: error: required option '--input\.alloc <file>' not specified\n$/);
  });

  it("counts are worded with singular and plural (1 block, 2 blocks; 1 fixture; 1 mismatch)", async () => {
    const P = "0x1111111111111111111111111111111111111111";
    const doc = {
      format: "cbqs-scenario/v1",
      genesis: { chain_id: "7", timestamp: "0", block_time_seconds: "1", governance: "0x00000000000000000000000000000000000000aa", accounts: { [P]: { balance: "5" } } },
      blocks: [{ height: "1", txs: [{ from: P, transfer: { to: P, amount: "1" } }] }],
    };
    const r = await cbqs("run", put("one.json", JSON.stringify(doc)));
    expect(r.out).toMatch(/^block 1 \(rent height 1\): 1 tx, 1 ok, 0 rejected, 0 events, state_root 0x/m);
    expect(r.out).toMatch(/^ok: 1 block, 0 streams, 0 providers, 1 account$/m);
  });

  it("no user-facing string of src/ or scripts/ hedges a plural with (s): counts go through count() of src/harness/progress.ts", () => {
    const offenders: string[] = [];
    const walk = (d: string): void => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith(".ts"))
          readFileSync(p, "utf8")
            .split("\n")
            .forEach((line, i) => {
              // The text of string and template literals, without ${…} code; "http(s)" is a scheme, not a count.
              const literals = (line.match(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g) ?? []).map((l) => l.replace(/\$\{[^}]*\}/g, "").replace(/http\(s\)/g, ""));
              if (literals.some((l) => /[a-z]\((s|es)\)/.test(l))) offenders.push(`${p}:${i + 1}`);
            });
      }
    };
    ["src", "scripts", "state"].forEach(walk);
    expect(offenders).toEqual([]);
  });

  it("singular counts on the CLI: replay --db, verify-bmt-proof, state diff, fuzz (and fuzz progress from the shared module)", async () => {
    const one = fixture();
    one.blocks = one.blocks.slice(0, 1);
    const db = await cbqs("replay", put("one-block.json", JSON.stringify(one)), "--db", join(dir, "one-block-db"), "--quiet");
    expect(db.out).toMatch(/: ok; from genesis, 1 block, 2 txs in /);

    const proof = join(dir, "one-leaf.json");
    const single = "fixtures/corpus/encrypted-key-stream.json";
    const txRoot = (JSON.parse(readFileSync(single, "utf8")) as { blocks: Array<{ tx_root: string }> }).blocks[0]!.tx_root;
    expect((await cbqs("prove-tx", single, "--block", "1", "--index", "0", "-o", proof)).exitCode).toBe(0);
    expect((await cbqs("verify-bmt-proof", proof, "--root", txRoot)).out).toMatch(/\(index 0 of 1 leaf\) and 0 siblings rebuild/);
    expect((await cbqs("prove-tx", FIXTURE, "--block", "1", "--index", "0", "-o", proof)).exitCode).toBe(0);
    expect((await cbqs("verify-bmt-proof", proof, "--root", fixture().blocks[0]!["tx_root"])).out).toMatch(/\(index 0 of 2 leaves\) and 1 sibling rebuild/);

    const post = fixture().blocks[0]!["post_state"] as { entries: unknown[] };
    const fewer = { ...post, entries: post.entries.slice(2) };
    delete (fewer as { state_root?: unknown }).state_root;
    expect((await cbqs("diff", put("all.json", JSON.stringify(post)), put("fewer.json", JSON.stringify(fewer)))).out).toMatch(/^state: .* \(and 1 more differing key\)\n$/);

    process.env["CBQS_PROGRESS_MS"] = "0";
    let fuzz;
    try {
      fuzz = await cbqs("fuzz", "--jobs", "1", "--t8n", "node dist/src/cli.js t8n", "--seed", "1", "--runs", "2", "--blocks", "1");
    } finally {
      delete process.env["CBQS_PROGRESS_MS"];
    }
    expect(fuzz.err).toMatch(/^fuzz: seed 1, runs 0…1, 1 block per chain, \d+ jobs?, t8n: /);
    expect(fuzz.err).toMatch(/^fuzz: 1\/2 runs, [\d.,]+ runs\/s, [\d.,]+ tx\/s, ETA \d+ s$/m);
    expect(fuzz.out).toMatch(/^fuzz: 2 runs \(seed 1\), 2 blocks, [\d,]+ txs? in [\d.]+ s \([\d.,]+ runs\/s, [\d.,]+ blocks\/s, [\d.,]+ tx\/s\): [\d,]+ states? reached, no divergence\n$/);
  });

  it("a progress line may end with a detail the counts do not give (the fuzz shrinker's smallest chain)", () => {
    let out = "";
    const clock = fakeClock();
    const p = new Progress("fuzz (shrinking run 2)", "plain", { write: (t: string) => void (out += t) }, clock);
    clock.advance(10_000);
    p.update({ done: 1_200, unit: "candidate chains", detail: "smallest so far 2 blocks, 3 txs" });
    expect(out).toBe("fuzz (shrinking run 2): 1,200 candidate chains, 120 candidate chains/s, smallest so far 2 blocks, 3 txs\n");
  });

  it("every exit-2 error about a file's content names the file: diff of two kinds, encode @file, tx @file", async () => {
    const f = fixture();
    const dump = put("kind-dump.json", JSON.stringify(f.blocks[0]!["post_state"]));
    const run = put("kind-run.json", (await cbqs("run", "fixtures/scenarios/transfers.json", "--json")).out);
    expect(await cbqs("diff", dump, run)).toEqual(unusableInput(/kind-dump\.json and .*kind-run\.json: cannot compare a state dump with a run document: give two documents of the same kind/));
    // A run document against a fixture: the next step is named.
    expect(await cbqs("diff", run, "fixtures/corpus/transfers.json")).toEqual(unusableInput(/cannot compare a run document with a fixture: fill the scenario \(cbqs fill\) and diff the two fixtures, or check the fixture alone with cbqs replay/));
    expect(await cbqs("encode", "ProviderStatus", `@${put("status.json", '"Bogus"')}`)).toEqual(unusableInput(/status\.json: \$: expected one of "Active"/));
    expect(await cbqs("encode", "ProviderStatus", '"Bogus"')).toEqual(unusableInput(/<json>: \$: expected one of "Active"/));
    const tx = put("bad-tx.json", JSON.stringify({ from: "0x1111111111111111111111111111111111111111", transfer: { to: "0x1111111111111111111111111111111111111111", amount: "x" } }));
    expect(await cbqs("tx", `@${tx}`, "--chain-id", "7", "--chain-instance", f.genesis.chain_instance_id, "--nonce", "0")).toEqual(unusableInput(/bad-tx\.json: \$\.transfer\.amount: expected an unsigned integer/));
  });
});

describe("the documentation stands alone", () => {
  it("no file of the repository cites a shared/ path", () => {
    const offenders: string[] = [];
    const walk = (d: string): void => {
      for (const e of readdirSync(d, { withFileTypes: true })) {
        const p = join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (/\.(md|ts|json)$/.test(e.name) && p !== join("test", "cli", "workflow.test.ts") && /\bshared\//.test(readFileSync(p, "utf8"))) offenders.push(p);
      }
    };
    for (const d of ["docs", "src", "state", "instructions", "scripts", "test", "gas-vectors", "fixtures/schema"]) walk(d);
    if (/\bshared\//.test(readFileSync("README.md", "utf8"))) offenders.push("README.md");
    expect(offenders).toEqual([]);
  });
});
