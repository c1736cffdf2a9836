// SIGINT/SIGTERM on the long-running commands (src/steps.ts): the real CLI is spawned on an input
// large enough to be mid-work, the signal is sent once its progress (or its temporary output)
// shows the work began, and then: exit 130/143, one stderr line saying what was kept, no file
// under the asked name, no `.partial-*` or other temporary left; a store reopens consistent and
// `replay --db` resumes to the end with every root matching; `snapshot import` leaves the target
// untouched. No timing is asserted: every wait is for a marker.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateLongChainScenario } from "../../scripts/gen-long-chain.js";
import { toHex } from "../../src/bytes.js";
import { fillScenario } from "../../src/harness/fill.js";
import { fixtureJsonText, type Fixture } from "../../src/harness/fixture.js";
import { parseScenario } from "../../src/scenario/parse.js";
import { LmdbChainDb } from "../../state/lmdb/chain-db.js";
import { importSnapshotSteps } from "../../src/store-tools/snapshot.js";
import { CbqsNode } from "../../src/chain-node/chain-node.js";
import { Stopped } from "../../src/steps.js";

const CLI = "dist/src/cli.js";
const root = mkdtempSync(join(tmpdir(), "cbqs-signals-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

interface Ended {
  code: number | null;
  out: string;
  err: string;
  /** Whether the signal was sent (the marker appeared before the command ended). */
  signalled: boolean;
}

/**
 * Spawns `cbqs args…` (progress lines every 20 ms), sends `signal` once `ready` holds (checked on
 * every stderr chunk and every 20 ms), and waits for the exit.
 */
function stopWhen(args: string[], signal: "SIGINT" | "SIGTERM", ready: (err: string) => boolean): Promise<Ended> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, CBQS_PROGRESS_MS: "20" } });
  let out = "";
  let err = "";
  let signalled = false;
  const check = () => {
    if (!signalled && ready(err)) {
      signalled = true;
      child.kill(signal);
    }
  };
  child.stdout.on("data", (c: Buffer) => (out += c.toString()));
  child.stderr.on("data", (c: Buffer) => {
    err += c.toString();
    check();
  });
  const timer = setInterval(check, 20);
  return new Promise((resolve) => {
    child.on("close", (code) => {
      clearInterval(timer);
      resolve({ code, out, err, signalled });
    });
  });
}

function run(args: string[]): Promise<Ended> {
  return stopWhen(args, "SIGINT", () => false);
}

/** The last stderr line. */
const lastLine = (text: string): string => text.trimEnd().split("\n").pop() ?? "";

/** Files in `dir` (recursively) whose name says they are temporary. */
function temporaries(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (/\.partial-\d+$|\.tmp-\d+$|\.import-\d+$/.test(name)) found.push(path);
    else if (statSync(path).isDirectory()) found.push(...temporaries(path));
  }
  return found;
}

/** Whether a temporary output of the file `name` has appeared in `dir`, with some content. */
const begunWriting = (dir: string, name: string) => () => readdirSync(dir).some((f) => f.startsWith(`${name}.partial-`) && statSync(join(dir, f)).size > 0);

let scenarioFile: string;
let fixtureFile: string;
let fixture: Fixture;
let bigDump: string;
const ENV = { height: "5", timestamp: "1767225605", chain_id: "7", chain_instance_id: "0x" + "3f".repeat(32), governance: "0x" + "00".repeat(19) + "aa" };

beforeAll(async () => {
  scenarioFile = join(root, "chain.json");
  writeFileSync(scenarioFile, JSON.stringify(generateLongChainScenario({ blocks: 300, minTxs: 0 })));
  fixture = fillScenario(parseScenario(JSON.parse(JSON.stringify(generateLongChainScenario({ blocks: 150, minTxs: 0 })))), "none");
  fixtureFile = join(root, "chain-fixture.json");
  writeFileSync(fixtureFile, fixtureJsonText(fixture));
  bigDump = join(root, "big-dump.json");
  const gen = spawn(process.execPath, ["dist/scripts/gen-big-dump.js", bigDump, "--entries", "200000"], { stdio: "ignore" });
  await new Promise((resolve) => gen.on("close", resolve));
  writeFileSync(join(root, "txs.json"), "[]");
  writeFileSync(join(root, "env.json"), JSON.stringify(ENV));
}, 60_000);

describe("SIGINT/SIGTERM on the long-running commands", () => {
  it("run -o: stopped after a block, exit 130, the file not written", async () => {
    const dir = join(root, "run");
    mkdirSync(dir);
    const out = join(dir, "run.json");
    const r = await stopWhen(["run", scenarioFile, "--json", "-o", out], "SIGINT", (err) => /run .*: height/.test(err));
    expect(r.signalled).toBe(true);
    expect(r.code).toBe(130);
    expect(lastLine(r.err)).toMatch(new RegExp(`^cbqs: stopped by SIGINT; after \\d+ blocks?; ${out} is not written$`));
    expect(readdirSync(dir)).toEqual([]);
  }, 20_000);

  it("fill: stopped while filling, exit 143, no fixture written", async () => {
    const dir = join(root, "fill");
    const r = await stopWhen(["fill", scenarioFile, "-o", dir], "SIGTERM", (err) => /fill .*\(executing\): height/.test(err));
    expect(r.signalled).toBe(true);
    expect(r.code).toBe(143);
    expect(lastLine(r.err)).toMatch(/^cbqs: stopped by SIGTERM; no fixture written \(stopped while filling .*chain\.json\)$/);
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
  }, 20_000);

  it("replay of many fixtures with --trace: exit 130, no trace file", async () => {
    const dir = join(root, "replay");
    mkdirSync(dir);
    for (let i = 0; i < 6; i++) writeFileSync(join(dir, `copy-${i}.json`), fixtureJsonText(fixture));
    const trace = join(root, "replay-trace.jsonl");
    const r = await stopWhen(["replay", join(dir, "copy-0.json"), "--trace", trace], "SIGINT", (err) => /replay .*: height/.test(err));
    expect(r.signalled).toBe(true);
    expect(r.code).toBe(130);
    expect(lastLine(r.err)).toMatch(/^cbqs: stopped by SIGINT; 0 of 1 fixture replayed before it; nothing written \(the trace .* is not\)$/);
    expect(existsSync(trace)).toBe(false);
    expect(temporaries(root)).toEqual([]);
    const many = await stopWhen(["replay", dir, "--jobs", "1"], "SIGTERM", (err) => /replay .*copy-1\.json: height/.test(err));
    expect(many.signalled).toBe(true);
    expect(many.code).toBe(143);
    expect(lastLine(many.err)).toMatch(/^cbqs: stopped by SIGTERM; [1-5] of 6 fixtures replayed before it; nothing written$/);
    // On worker threads (--jobs 2): the same stop, the workers ended with the command.
    const wide = join(root, "replay-jobs");
    mkdirSync(wide);
    for (let i = 0; i < 60; i++) writeFileSync(join(wide, `copy-${i}.json`), fixtureJsonText(fixture));
    const pooled = await stopWhen(["replay", wide, "--jobs", "2"], "SIGTERM", (err) => /replay: [1-9]\d*\/60 fixtures/.test(err));
    expect(pooled.signalled).toBe(true);
    expect(pooled.code).toBe(143);
    expect(lastLine(pooled.err)).toMatch(/^cbqs: stopped by SIGTERM; \d+ of 60 fixtures replayed before it; nothing written$/);
  }, 30_000);

  it("replay --pipeline: stopped inside a fixture and between fixtures, exit 130 (a pipelined fixture was one unit and ran on)", async () => {
    const dir = join(root, "replay");
    const one = await stopWhen(["replay", join(dir, "copy-0.json"), "--pipeline"], "SIGINT", (err) => /replay .*: height/.test(err));
    expect(one.signalled).toBe(true);
    expect(one.code).toBe(130);
    expect(lastLine(one.err)).toBe("cbqs: stopped by SIGINT; 0 of 1 fixture replayed before it; nothing written");
    const many = await stopWhen(["replay", dir, "--pipeline"], "SIGINT", (err) => /replay .*copy-1\.json: height/.test(err));
    expect(many.signalled).toBe(true);
    expect(many.code).toBe(130);
    expect(lastLine(many.err)).toMatch(/^cbqs: stopped by SIGINT; [1-5] of 6 fixtures replayed before it; nothing written$/);
  }, 30_000);

  for (const [signal, phase, code] of [
    ["SIGINT", "reading", 130],
    ["SIGTERM", "committing the pre-state", 143],
  ] as const) {
    it(`t8n on a 200,000-entry alloc, ${signal} while ${phase}: exit ${code}, no result, post-state or trace`, async () => {
      const dir = join(root, `t8n-${signal}`);
      mkdirSync(dir);
      const r = await stopWhen(
        ["t8n", "--input.alloc", bigDump, "--input.txs", join(root, "txs.json"), "--input.env", join(root, "env.json"), "--output.result", join(dir, "r.json"), "--output.alloc", join(dir, "a.json"), "--trace", join(dir, "t.jsonl")],
        signal,
        (err) => err.includes(`(${phase}): `),
      );
      expect(r.signalled).toBe(true);
      expect(r.code).toBe(code);
      expect(lastLine(r.err)).toBe(`cbqs: stopped by ${signal}; nothing written`);
      expect(readdirSync(dir)).toEqual([]);
    }, 30_000);
  }

  it("state dump -o of a large dump: stopped while writing, exit 143, no file and no .partial", async () => {
    const dir = join(root, "dump");
    mkdirSync(dir);
    const out = join(dir, "d.json");
    const r = await stopWhen(["state", "dump", bigDump, "-o", out], "SIGTERM", begunWriting(dir, "d.json"));
    expect(r.signalled).toBe(true);
    expect(r.code).toBe(143);
    expect(lastLine(r.err)).toBe(`cbqs: stopped by SIGTERM; ${out} is not written`);
    expect(readdirSync(dir)).toEqual([]);
  }, 30_000);

  it("replay --db: stopped after a committed block (130), the store reopens at that block, a rerun resumes to the end", async () => {
    const db = join(root, "store");
    const r = await stopWhen(["replay", fixtureFile, "--db", db, "--snapshot-interval", "0"], "SIGINT", (err) => /replay .*: height/.test(err));
    expect(r.signalled).toBe(true);
    expect(r.code).toBe(130);
    const m = /^cbqs: stopped by SIGINT; the store .* holds every block through height (\d+), each committed whole; run again to resume$/.exec(lastLine(r.err));
    expect(m).not.toBeNull();
    const head = BigInt(m![1]!);
    const store = LmdbChainDb.open(db);
    try {
      const block = fixture.blocks.find((b) => b.height === head)!;
      expect(store.head()!.height).toBe(head);
      expect(toHex(store.state.root())).toBe(toHex(block.state_root));
      expect(toHex(store.head()!.block_hash)).toBe(toHex(block.block_hash));
    } finally {
      store.close();
    }
    const again = await run(["replay", fixtureFile, "--db", db, "--snapshot-interval", "0"]);
    expect(again.code).toBe(0);
    expect(again.out).toMatch(new RegExp(`ok; resumed after height ${head}, \\d+ blocks.*store head ${fixture.blocks[fixture.blocks.length - 1]!.height}\\n$`));
    expect(temporaries(root)).toEqual([]);
  }, 30_000);

  it("export -o stopped while writing (SIGINT between two blocks): exit 130, no file and no .partial, the store reopens unchanged", async () => {
    const db = join(root, "export-store");
    expect((await run(["replay", fixtureFile, "--db", db, "--snapshot-interval", "0", "--quiet"])).code).toBe(0);
    const dir = join(root, "export");
    mkdirSync(dir);
    const out = join(dir, "chain.json");
    const r = await stopWhen(["export", "--db", db, "-o", out], "SIGINT", (err) => /export --db .*: height/.test(err));
    expect(r.signalled).toBe(true);
    expect(r.code).toBe(130);
    expect(lastLine(r.err)).toBe(`cbqs: stopped by SIGINT; ${out} is not written; the store is closed unchanged`);
    expect(readdirSync(dir)).toEqual([]);
    const again = await run(["export", "--db", db, "-o", out, "--post-state", "none", "--quiet"]);
    expect(again.code).toBe(0);
    expect(again.out).toBe(`exported ${fixture.blocks.length} blocks (genesis through height ${fixture.blocks.at(-1)!.height}; ${fixture.blocks.reduce((n, b) => n + b.transactions.length, 0)} txs), post_state on 0 blocks to ${out}\n`);
    expect(temporaries(root)).toEqual([]);
  }, 30_000);

  it("snapshot import stopped between two ops records: the half-built store is removed, the target untouched", async () => {
    const db = join(root, "store");
    const snapshot = join(root, "head.cbqs");
    expect((await run(["snapshot", "export", "--db", db, "-o", snapshot])).code).toBe(0);
    const target = join(root, "target");
    mkdirSync(target);
    const building = `${target}.import-${process.pid}`;
    // The command runs these steps with stoppable(): after a signal it throws Stopped in at a step.
    const steps = importSnapshotSteps(snapshot, target);
    expect(steps.next().done).toBe(false);
    expect(existsSync(building)).toBe(true);
    expect(() => steps.throw(new Stopped("SIGINT"))).toThrow(Stopped);
    expect(existsSync(building)).toBe(false);
    expect(readdirSync(target)).toEqual([]);
    // Unstopped, the same import succeeds.
    const imported = await run(["snapshot", "import", snapshot, "--db", target]);
    expect(imported.code).toBe(0);
    expect(temporaries(root)).toEqual([]);
  }, 20_000);

  it("node --fixture stopped during its import: the blocks committed so far are kept and a replay --db resumes after them", async () => {
    const dir = join(root, "node-store");
    const db = LmdbChainDb.open(dir);
    // `cbqs node` runs these steps with stoppable(): after a signal it throws Stopped in between two blocks.
    const steps = CbqsNode.openSteps(db, { kind: "fixture", fixture });
    expect(steps.next().done).toBe(false);
    expect(steps.next().done).toBe(false);
    expect(() => steps.throw(new Stopped("SIGTERM"))).toThrow(Stopped);
    db.close();
    const second = fixture.blocks[1]!;
    const reopened = LmdbChainDb.open(dir);
    try {
      expect(reopened.head()!.height).toBe(second.height);
      expect(toHex(reopened.head()!.block_hash)).toBe(toHex(second.block_hash));
    } finally {
      reopened.close();
    }
    const resumed = await run(["replay", fixtureFile, "--db", dir, "--snapshot-interval", "0"]);
    expect(resumed.code).toBe(0);
    expect(resumed.out).toMatch(new RegExp(`ok; resumed after height ${second.height}, `));
  }, 30_000);
});
