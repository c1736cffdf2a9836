// consumeFixture and consumeFile in this process (src/consume/consume.ts), against targets that
// are our own t8n driven in memory — a per-call one (each block with its pre-state, the post-state
// with the answer) and a session (one chain from genesis, the post-state only when asked) — with
// one thing changed where a test needs it. What each test pins is a rule of docs/fixtures.md §4 /
// §4.1 as consume applies it: which state goes with a block, when the post-state is fetched, what
// stops a fixture, and what makes it a mismatch or unusable. test/consume/consume.test.ts runs the
// same code through the compiled CLI against real processes.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { consumeFile, consumeFixture, FixtureNotReplayable, TargetFailed, type ConsumeFileOptions } from "../../src/consume/consume.js";
import { readFixture } from "../../src/harness/documents.js";
import type { Fixture } from "../../src/harness/fixture.js";
import { sessionBlock, transition } from "../../src/harness/t8n.js";
import { TargetError, type ChainTarget, type Entries, type T8nInputs, type TargetAnswer, type TargetOutput } from "../../src/target/target.js";
import { createStateCommitment } from "../../state/qmdb/index.js";
import { MemoryStateStore } from "../../state/store/store.js";

const TRANSFERS = "fixtures/corpus/transfers.json"; // blocks 1 (6 txs) and 2 (8 txs)

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "cbqs-consume-fixture-"));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** What a target was asked, in order. */
interface Asked {
  started: Array<{ entries: number; height: bigint }>;
  applied: Array<{ height: bigint; alloc: number; txs: number }>;
  postStates: bigint[];
}

interface Scripted {
  /** Alters our answer to block `height` (the result as the target reports it). */
  alter?: (height: bigint, result: Record<string, unknown>) => void;
  /** Fails the request for block `height` (null: starting the chain) with this error. */
  fail?: { height: bigint | null; error: Error };
  /** Answers each block only after this many macrotask turns. */
  lag?: number;
}

function output(result: Record<string, unknown>, entries: Entries): TargetOutput {
  return { result, alloc: {}, allocEntries: entries, resultText: JSON.stringify(result), allocText: "", stderr: "" };
}

const turns = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setTimeout(r, 0));
};

/** Our per-call t8n as a target: the block's pre-state comes with it, the post-state with the answer. */
function perCallTarget(script: Scripted = {}): ChainTarget & { asked: Asked } {
  const asked: Asked = { started: [], applied: [], postStates: [] };
  return {
    asked,
    stateRoot: "per_block",
    memoizable: true,
    startChain(alloc, height) {
      asked.started.push({ entries: alloc.length, height });
      return script.fail?.height === null ? Promise.reject(script.fail.error) : Promise.resolve();
    },
    async apply(inputs) {
      asked.applied.push({ height: inputs.env.height, alloc: inputs.alloc.length, txs: inputs.txs.length });
      await turns(script.lag ?? 0);
      if (script.fail !== undefined && script.fail.height === inputs.env.height) throw script.fail.error;
      const run = transition(inputs.alloc, inputs.txs, inputs.env);
      script.alter?.(inputs.env.height, run.result);
      const out = output(run.result, [...run.store.entries()]);
      return { result: out.result, resultText: out.resultText, output: out };
    },
    postState(inputs, answer) {
      asked.postStates.push(inputs.env.height);
      return Promise.resolve(answer.output!);
    },
    close: () => Promise.resolve(),
  };
}

/** Our t8n server's session in memory: one chain from startChain on, the post-state only when asked. */
function sessionTarget(stateRoot: "chain" | "per_block", script: Scripted = {}): ChainTarget & { asked: Asked } {
  const asked: Asked = { started: [], applied: [], postStates: [] };
  let store: MemoryStateStore | null = null;
  return {
    asked,
    stateRoot,
    memoizable: false,
    startChain(alloc, height) {
      asked.started.push({ entries: alloc.length, height });
      if (script.fail?.height === null) return Promise.reject(script.fail.error);
      store = MemoryStateStore.fromEntries(alloc, height, createStateCommitment());
      return Promise.resolve();
    },
    async apply(inputs) {
      asked.applied.push({ height: inputs.env.height, alloc: inputs.alloc.length, txs: inputs.txs.length });
      await turns(script.lag ?? 0);
      if (script.fail !== undefined && script.fail.height === inputs.env.height) throw script.fail.error;
      const { result } = sessionBlock(store!, inputs.txs, inputs.env);
      script.alter?.(inputs.env.height, result);
      return { result, resultText: JSON.stringify(result) };
    },
    postState(inputs: T8nInputs, answer: TargetAnswer) {
      asked.postStates.push(inputs.env.height);
      return Promise.resolve(output(answer.result, [...store!.entries()]));
    },
    close: () => Promise.resolve(),
  };
}

const compareRoots = { compare: { stateRoot: true } };
const transfers = (): Fixture => readFixture(TRANSFERS);

describe("consumeFixture: every block through the target, from the fixture's genesis on (docs/fixtures.md §4)", () => {
  it("a per-call target: each block gets the state before it, the post-state comes with the answer and is never asked for; the progress counts blocks and transactions", async () => {
    const target = perCallTarget();
    const progress: unknown[] = [];
    const outcome = await consumeFixture(transfers(), target, { ...compareRoots, onBlock: (...a) => progress.push(a) });
    expect(outcome).toEqual({ blocks: 2, txs: 14, difference: null, stopped: false });
    expect(progress).toEqual([
      [1, 2, 1n, 6],
      [2, 2, 2n, 14],
    ]);
    // The chain starts from the genesis state at height 0; each block carries the state before it.
    expect(target.asked.started).toHaveLength(1);
    expect(target.asked.started[0]!.height).toBe(0n);
    expect(target.asked.started[0]!.entries).toBeGreaterThan(0);
    expect(target.asked.applied.map((a) => [a.height, a.txs])).toEqual([
      [1n, 6],
      [2n, 8],
    ]);
    expect(target.asked.applied[0]!.alloc).toBe(target.asked.started[0]!.entries);
    expect(target.asked.applied[1]!.alloc).toBeGreaterThan(target.asked.applied[0]!.alloc);
    expect(target.asked.postStates).toEqual([]);
  });

  it("a session whose root is the chain's gets no state with its blocks; with state_root compared and equal, the post-state is asked only where the fixture holds one", async () => {
    const fixture = transfers();
    delete fixture.blocks[0]!.post_state;
    const target = sessionTarget("chain");
    expect(await consumeFixture(fixture, target, compareRoots)).toEqual({ blocks: 2, txs: 14, difference: null, stopped: false });
    expect(target.asked.applied.map((a) => a.alloc)).toEqual([0, 0]);
    expect(target.asked.postStates).toEqual([2n]);
  });

  it("a session whose root is per block (its hello says so) gets the state before each block, as a per-call t8n would", async () => {
    const target = sessionTarget("per_block");
    const outcome = await consumeFixture(transfers(), target, { compare: { stateRoot: false } });
    expect(outcome.difference).toBeNull();
    expect(target.asked.applied.every((a) => a.alloc > 0)).toBe(true);
  });

  it("with state_root not compared, the post-state is asked at every block (nothing else vouches for the state)", async () => {
    const fixture = transfers();
    for (const b of fixture.blocks) delete b.post_state;
    const target = sessionTarget("chain");
    expect((await consumeFixture(fixture, target, { compare: { stateRoot: false } })).difference).toBeNull();
    expect(target.asked.postStates).toEqual([1n, 2n]);
  });

  it("an answer that differs: the first difference in words at its block, the post-state fetched for it, and no later block asked", async () => {
    const fixture = transfers();
    for (const b of fixture.blocks) delete b.post_state;
    const target = sessionTarget("chain", {
      alter: (h, result) => {
        if (h === 1n) (result["receipts"] as Array<Record<string, unknown>>)[0]!["status"] = "rejected";
      },
    });
    const outcome = await consumeFixture(fixture, target, compareRoots);
    expect(outcome.blocks).toBe(1);
    expect(outcome.txs).toBe(6);
    expect(outcome.stopped).toBe(false);
    expect(outcome.difference?.height).toBe(1n);
    expect(outcome.difference?.text).toMatch(/^block 1 tx 0 \w+: t8n result: receipts\[0\]\.status expected "ok" got "rejected"/);
    expect(target.asked.postStates).toEqual([1n]);
    expect(target.asked.applied.map((a) => a.height)).toEqual([1n]);
  });

  it("a differing state_root alone is found by the cheap check, then named", async () => {
    const fixture = transfers();
    for (const b of fixture.blocks) delete b.post_state;
    const target = sessionTarget("chain", {
      alter: (h, result) => {
        if (h === 2n) result["state_root"] = `0x${"11".repeat(32)}`;
      },
    });
    const outcome = await consumeFixture(fixture, target, compareRoots);
    expect(outcome).toMatchObject({ blocks: 2, txs: 14, stopped: false });
    expect(outcome.difference?.height).toBe(2n);
    expect(outcome.difference?.text).toMatch(/^block 2: .*state_root/);
    expect(target.asked.postStates).toEqual([2n]);
  });

  it("stopped is polled before each block: a stop after block 1 leaves block 2 unasked; a stop at once asks no block", async () => {
    let done = 0;
    const target = perCallTarget();
    const outcome = await consumeFixture(transfers(), target, { ...compareRoots, stopped: () => done === 1, onBlock: (d) => (done = d) });
    expect(outcome).toEqual({ blocks: 1, txs: 6, difference: null, stopped: true });
    expect(target.asked.applied.map((a) => a.height)).toEqual([1n]);
    const never = perCallTarget();
    expect(await consumeFixture(transfers(), never, { ...compareRoots, stopped: () => true })).toEqual({ blocks: 0, txs: 0, difference: null, stopped: true });
    expect(never.asked.applied).toEqual([]);
  });

  it("a target error is TargetFailed with the block's height (null when starting the chain) and the target's stderr; any other error passes through as it is", async () => {
    const failed = (height: bigint | null) => consumeFixture(transfers(), perCallTarget({ fail: { height, error: new TargetError("the answer is not JSON", "trace on stderr") } }), compareRoots);
    const atBlock = await failed(2n).catch((e: unknown) => e);
    expect(atBlock).toBeInstanceOf(TargetFailed);
    expect(atBlock).toMatchObject({ name: "TargetFailed", message: "the answer is not JSON", height: 2n, stderr: "trace on stderr" });
    const atStart = await failed(null).catch((e: unknown) => e);
    expect(atStart).toBeInstanceOf(TargetFailed);
    expect(atStart).toMatchObject({ message: "the answer is not JSON", height: null, stderr: "trace on stderr" });
    const other = new RangeError("not a target's failure");
    await expect(consumeFixture(transfers(), perCallTarget({ fail: { height: 1n, error: other } }), compareRoots)).rejects.toBe(other);
  });

  it("a fixture this emulator does not replay is FixtureNotReplayable, naming genesis or the block, the field and both values — after the target's answer to that block has been read", async () => {
    const badGenesis = transfers();
    badGenesis.genesis.state_root = new Uint8Array(32);
    const genesis = await consumeFixture(badGenesis, perCallTarget(), compareRoots).catch((e: unknown) => e);
    expect(genesis).toBeInstanceOf(FixtureNotReplayable);
    expect((genesis as Error).name).toBe("FixtureNotReplayable");
    expect((genesis as Error).message).toMatch(/^this emulator does not replay the fixture \(genesis: genesis state_root: expected 0x0{64} got 0x[0-9a-f]{64}; see cbqs replay\)$/);

    const badBlock = transfers();
    badBlock.blocks[1]!.receipt_root = new Uint8Array(32);
    const target = perCallTarget({ lag: 5 });
    let answered = 0;
    const apply = target.apply.bind(target);
    target.apply = (inputs) => apply(inputs).finally(() => answered++);
    const block = await consumeFixture(badBlock, target, compareRoots).catch((e: unknown) => e);
    expect(block).toBeInstanceOf(FixtureNotReplayable);
    expect((block as Error).message).toMatch(/^this emulator does not replay the fixture \(block 2: receipt_root: expected 0x0{64} got 0x[0-9a-f]{64}; see cbqs replay\)$/);
    // Block 2's request was out before our execution failed; its answer was awaited, not left for the next fixture.
    expect(answered).toBe(2);
  });

  it("a fixture whose genesis or transaction cannot be executed is FixtureNotReplayable with the input's reason", async () => {
    const genesis = transfers();
    genesis.genesis.config = { ...genesis.genesis.config, chain_id: -1n };
    const noChain = await consumeFixture(genesis, perCallTarget(), compareRoots).catch((e: unknown) => e);
    expect(noChain).toBeInstanceOf(FixtureNotReplayable);
    expect((noChain as Error).message).toBe("$.genesis.source: invalid genesis: chain_id -1 is not a u64");

    const tx = transfers();
    tx.blocks[1]!.transactions[0] = new Uint8Array([0xff]);
    const target = perCallTarget();
    const undecodable = await consumeFixture(tx, target, compareRoots).catch((e: unknown) => e);
    expect(undecodable).toBeInstanceOf(FixtureNotReplayable);
    expect((undecodable as Error).message).toBe("block 2 $.blocks[1].transactions[0]: invalid transaction envelope: Unsupported at offset 0: envelope: expected CBOR major type 5, got 7");
    expect(target.asked.applied.map((a) => a.height)).toEqual([1n, 2n]);
  });
});

describe("consumeFile: one fixture's report row (`cbqs consume`)", () => {
  const options = (more: Partial<ConsumeFileOptions> = {}): ConsumeFileOptions => ({ ...compareRoots, targetName: "t8n-server ours", ...more });

  it("a fixture that passes: ok, its blocks and transactions, no message, and its wall time within the call's", async () => {
    const before = performance.now();
    const report = await consumeFile(TRANSFERS, "transfers.json", perCallTarget(), options());
    const outer = (performance.now() - before) / 1000;
    expect(report).toMatchObject({ id: "transfers.json", file: TRANSFERS, status: "ok", blocks: 2, txs: 14 });
    expect(Object.keys(report!).sort()).toEqual(["blocks", "file", "id", "seconds", "status", "txs"]);
    expect(report!.seconds).toBeGreaterThan(0);
    expect(report!.seconds).toBeLessThanOrEqual(outer);
  });

  it("a mismatch: the difference as the message, its height, the blocks up to it", async () => {
    const target = perCallTarget({ alter: (h, r) => h === 2n && (r["state_root"] = `0x${"11".repeat(32)}`) });
    const report = await consumeFile(TRANSFERS, "transfers.json", target, options());
    expect(report).toMatchObject({ status: "mismatch", blocks: 2, txs: 14, height: 2n });
    expect(report!.message).toMatch(/^block 2: /);
  });

  it("a target that fails is unusable and not trusted further: named, with where (starting the chain, or the block and its height)", async () => {
    const error = new TargetError("exited with code 3", "");
    const atStart = await consumeFile(TRANSFERS, "transfers.json", perCallTarget({ fail: { height: null, error } }), options());
    expect(atStart).toMatchObject({ status: "unusable", message: "t8n-server ours: starting the chain: exited with code 3", targetFailed: true, blocks: 0, txs: 0 });
    expect(atStart).not.toHaveProperty("height");
    const atBlock = await consumeFile(TRANSFERS, "transfers.json", perCallTarget({ fail: { height: 2n, error } }), options());
    expect(atBlock).toMatchObject({ status: "unusable", message: "t8n-server ours: block 2: exited with code 3", targetFailed: true, height: 2n });
  });

  it("a fixture that is not replayable or not readable is unusable with its reason, and the target is not blamed", async () => {
    const doc = JSON.parse(readFileSync(TRANSFERS, "utf8"));
    doc.blocks[0].receipt_root = `0x${"00".repeat(32)}`;
    const broken = join(scratch, "broken.json");
    writeFileSync(broken, JSON.stringify(doc));
    const notReplayed = await consumeFile(broken, "broken.json", perCallTarget(), options());
    expect(notReplayed).toMatchObject({ status: "unusable", blocks: 0, txs: 0 });
    expect(notReplayed!.message).toMatch(/^this emulator does not replay the fixture \(block 1: receipt_root/);
    expect(notReplayed).not.toHaveProperty("targetFailed");

    const missing = await consumeFile(join(scratch, "absent.json"), "absent.json", perCallTarget(), options());
    expect(missing).toMatchObject({ status: "unusable" });
    expect(missing!.message).toContain("absent.json");
    expect(missing).not.toHaveProperty("targetFailed");
  });

  it("any other error is not a report: it is thrown", async () => {
    const other = new RangeError("a bug of ours");
    await expect(consumeFile(TRANSFERS, "transfers.json", perCallTarget({ fail: { height: 1n, error: other } }), options())).rejects.toBe(other);
  });

  it("a stop leaves no report: stopped between blocks, or a failure that comes while stopping", async () => {
    let done = 0;
    expect(await consumeFile(TRANSFERS, "transfers.json", perCallTarget(), options({ stopped: () => done === 1, onBlock: (d) => (done = d) }))).toBeNull();
    // The signal that stops the run also ends the target: its failure comes after the stop.
    let stopping = false;
    const target = perCallTarget();
    target.apply = () => {
      stopping = true;
      return Promise.reject(new TargetError("killed by SIGINT"));
    };
    expect(await consumeFile(TRANSFERS, "transfers.json", target, options({ stopped: () => stopping }))).toBeNull();
  });
});
