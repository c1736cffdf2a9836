// One lane's work (src/fuzz/fuzz.ts) against in-process targets: the runs counted and reported
// as documented (docs/reference/fuzzer.md §2, §6), a per-call command's answers reused only within a run,
// a server that dies replaced once per run with the documented line, a target's failure naming
// the run and block, our own failure naming the seed and run, a signal ending the run under way
// uncounted, and the finding shrunk only for the run that diverged.
import { describe, expect, it } from "vitest";
import { createHash } from "node:crypto";
import { toHex } from "../../src/bytes.js";
import { ChainBuilder } from "../../src/fuzz/build.js";
import { fuzz, FuzzLane, TargetFailure, type FuzzProgress, type LaneSettings } from "../../src/fuzz/fuzz.js";
import { chainSize, generateChain } from "../../src/fuzz/plan.js";
import { sessionBlock, transition } from "../../src/harness/t8n.js";
import { ServerDied } from "../../src/target/server-target.js";
import { inputTexts, parseTargetOutput, perCall, TargetError, type ChainTarget, type Entries, type T8nInputs, type T8nTarget, type TargetAnswer, type TargetOutput } from "../../src/target/target.js";
import { dumpState } from "../../state/kv/dump.js";
import { createStateCommitment } from "../../state/qmdb/index.js";
import { MemoryStateStore } from "../../state/store/store.js";

type Result = Record<string, unknown>;
const ZERO_ROOT = "0x" + "00".repeat(32);

/** Our own t8n as a per-call command, its result tampered with as told; each call's inputs recorded. */
class PerCall implements T8nTarget {
  readonly asked: string[] = [];
  constructor(private readonly tamper: (result: Result, inputs: T8nInputs) => void = () => undefined) {}
  run(inputs: T8nInputs): Promise<TargetOutput> {
    const t = inputTexts(inputs);
    this.asked.push(createHash("sha256").update(t.alloc).update(t.txs).update(t.env).digest("hex"));
    const run = transition(inputs.alloc, inputs.txs, inputs.env);
    const result = structuredClone(run.result) as Result;
    this.tamper(result, inputs);
    return Promise.resolve(parseTargetOutput(JSON.stringify(result), JSON.stringify(dumpState(run.store, { height: inputs.env.height })), ""));
  }
  close(): void {}
}

/** A session target (as `cbqs t8n --server` keeps one) that fails where told. */
class Session implements ChainTarget {
  readonly stateRoot = "chain";
  readonly memoizable = false;
  starts = 0;
  applies = 0;
  private store: MemoryStateStore | null = null;
  constructor(
    private readonly fail: { start?: (n: number) => Error | null; apply?: (n: number, inputs: T8nInputs) => Error | null } = {},
    private readonly tamper: (result: Result) => void = () => undefined,
  ) {}
  startChain(alloc: Entries, height: bigint): Promise<void> {
    this.starts++;
    const err = this.fail.start?.(this.starts) ?? null;
    if (err !== null) return Promise.reject(err);
    this.store = MemoryStateStore.fromEntries(alloc, height, createStateCommitment());
    return Promise.resolve();
  }
  apply(inputs: T8nInputs): Promise<TargetAnswer> {
    this.applies++;
    const err = this.fail.apply?.(this.applies, inputs) ?? null;
    if (err !== null) return Promise.reject(err);
    const result = structuredClone(sessionBlock(this.store!, inputs.txs, inputs.env).result) as Result;
    this.tamper(result);
    return Promise.resolve({ result, resultText: JSON.stringify(result) });
  }
  state(): MemoryStateStore {
    return this.store!;
  }
  postState(inputs: T8nInputs, answer: TargetAnswer): Promise<TargetOutput> {
    return Promise.resolve(parseTargetOutput(answer.resultText, JSON.stringify(dumpState(this.store!, { height: inputs.env.height })), "their stderr"));
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

const settings = (over: Partial<LaneSettings> = {}): LaneSettings => ({ seed: 5, blocks: 3, compare: { stateRoot: true }, shrinkBudget: 20, stopped: () => false, ...over });

/** Blocks and input transactions of run `run` of seed 5, built here. */
function size(run: number, blocks = 3): { blocks: number; txs: number; first: number; heights: bigint[] } {
  const builder = new ChainBuilder(generateChain(5, run, blocks));
  let txs = 0;
  const heights: bigint[] = [];
  while (!builder.done) {
    const b = builder.build();
    txs += b.inputs.txs.length;
    heights.push(b.height);
  }
  return { blocks, txs, first: new ChainBuilder(generateChain(5, run, blocks)).build().inputs.txs.length, heights };
}

const caught = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => null,
    (e: unknown) => e,
  );

describe("a campaign on one lane (src/fuzz/fuzz.ts fuzz)", () => {
  it("a clean campaign runs firstRun … firstRun + runs − 1, counting every block and input transaction, with progress after each run", async () => {
    const progress: FuzzProgress[] = [];
    const target = new PerCall();
    const r = await fuzz(target, { seed: 5, firstRun: 2, runs: 2, blocks: 3, compare: { stateRoot: true }, shrinkBudget: 20, onProgress: (p) => void progress.push(p) });
    const [two, three] = [size(2), size(3)];
    expect(r).toEqual({ runsDone: 2, blocks: 6, txs: two.txs + three.txs, finding: null, interrupted: false });
    expect(progress).toEqual([
      { phase: "fuzz", run: 2, runsDone: 1, blocks: 3, txs: two.txs },
      { phase: "fuzz", run: 3, runsDone: 2, blocks: 6, txs: two.txs + three.txs },
    ]);
    expect(target.asked).toHaveLength(6);
  });

  it("a divergence ends the campaign: the run counted, its finding shrunk, progress reported per candidate, no later run started", async () => {
    const progress: FuzzProgress[] = [];
    const target = new PerCall((result) => (result["state_root"] = ZERO_ROOT));
    const r = await fuzz(target, { seed: 5, firstRun: 0, runs: 5, blocks: 3, compare: { stateRoot: true }, shrinkBudget: 4, onProgress: (p) => void progress.push(p) });
    const zero = size(0);
    expect([r.runsDone, r.blocks, r.txs, r.interrupted]).toEqual([1, 1, zero.first, false]);
    const f = r.finding!;
    expect([f.seed, f.run, f.candidates]).toEqual([5, 0, 4]);
    expect(f.original).toEqual(chainSize(generateChain(5, 0, 3)));
    expect(f.shrunk).toEqual(chainSize(f.plan));
    expect(f.divergence.text).toMatch(/^block 1: t8n result: state_root expected "0x[0-9a-f]{64}" got "0x0{64}"$/);
    expect(f.divergence.index).toBe(0);
    expect(progress.map((p) => p.phase)).toEqual(["shrink", "shrink", "shrink", "shrink"]);
    expect(progress.map((p) => p.candidates)).toEqual([1, 2, 3, 4]);
    expect(progress[0]).toMatchObject({ run: 0, runsDone: 1, blocks: 1 });
    expect(progress.every((p) => p.size !== undefined && p.size.blocks === 1)).toBe(true);
  });

  it("without a state root to compare, a state_root of their own is no divergence", async () => {
    const r = await fuzz(new PerCall((result) => (result["state_root"] = ZERO_ROOT)), { seed: 5, firstRun: 0, runs: 1, blocks: 2, compare: { stateRoot: false }, shrinkBudget: 4 });
    expect([r.runsDone, r.finding]).toEqual([1, null]);
  });

  it("a signal before the campaign: no run, interrupted; a signal during a run: that run is not counted", async () => {
    const none = await fuzz(new PerCall(), { seed: 5, firstRun: 0, runs: 3, blocks: 2, compare: { stateRoot: true }, shrinkBudget: 4, stopped: () => true });
    expect(none).toEqual({ runsDone: 0, blocks: 0, txs: 0, finding: null, interrupted: true });
    const target = new PerCall();
    const during = await fuzz(target, { seed: 5, firstRun: 0, runs: 3, blocks: 3, compare: { stateRoot: true }, shrinkBudget: 4, stopped: () => target.asked.length >= 4 });
    expect(during).toEqual({ runsDone: 1, blocks: 3, txs: size(0).txs, finding: null, interrupted: true });
  });
});

describe("one lane's runs (src/fuzz/fuzz.ts FuzzLane)", () => {
  it("a run's outcome: its blocks, input transactions and census; a per-call command is asked each distinct block once per run, again in the next run", async () => {
    const target = new PerCall();
    const lane = new FuzzLane(
      {
        stateRoot: "per_block",
        memoizable: true,
        startChain: () => Promise.reject(new Error("a per-call target has no session")),
        apply: async (inputs) => {
          const output = await target.run(inputs);
          return { result: output.result, resultText: output.resultText, output };
        },
        postState: (_i, answer) => Promise.resolve(answer.output!),
        close: () => Promise.resolve(),
      },
      settings(),
    );
    const o = await lane.run(1);
    const one = size(1);
    expect(o).toMatchObject({ run: 1, blocks: 3, txs: one.txs, divergent: false, stopped: false, restarts: [] });
    expect(o.census.runs).toBe(1);
    expect(target.asked).toHaveLength(3);
    await lane.run(1);
    expect(target.asked).toHaveLength(6);
    expect(target.asked.slice(3)).toEqual(target.asked.slice(0, 3));
  });

  it("shrinking asks a per-call command each distinct block once (candidates share prefixes); a candidate it fails on does not count", async () => {
    const target = new PerCall((result, inputs) => {
      if (inputs.env.height > 1n) result["state_root"] = ZERO_ROOT;
    });
    const lane = new FuzzLane(
      {
        stateRoot: "per_block",
        memoizable: true,
        startChain: () => Promise.resolve(),
        apply: async (inputs) => {
          // A block without transactions is one the command cannot take.
          if (inputs.txs.length === 0) throw new TargetError("no transactions", "");
          const output = await target.run(inputs);
          return { result: output.result, resultText: output.resultText, output };
        },
        postState: (_i, answer) => Promise.resolve(answer.output!),
        close: () => Promise.resolve(),
      },
      settings({ shrinkBudget: 30 }),
    );
    let run = 0;
    while (!(await lane.run(run)).divergent) run++;
    target.asked.length = 0;
    const progress: number[] = [];
    const f = await lane.shrink(run, (candidates) => void progress.push(candidates));
    expect(target.asked.length).toBeGreaterThan(0);
    expect(new Set(target.asked).size).toBe(target.asked.length);
    expect(progress.length).toBeGreaterThan(0);
    expect(f.run).toBe(run);
    expect(f.shrunk.blocks).toBeGreaterThanOrEqual(2);
  });

  it("only the run that diverged is shrunk, once; a dropped divergence is gone", async () => {
    const lane = new FuzzLane(perCall(new PerCall((result) => (result["state_root"] = ZERO_ROOT))), settings({ shrinkBudget: 2 }));
    expect(await lane.run(0)).toMatchObject({ run: 0, blocks: 1, divergent: true, stopped: false });
    await expect(lane.shrink(1)).rejects.toThrow(new Error("no divergence of run 1 on this lane"));
    const f = await lane.shrink(0);
    expect(f.run).toBe(0);
    await expect(lane.shrink(0)).rejects.toThrow(new Error("no divergence of run 0 on this lane"));
    await lane.run(2);
    lane.drop();
    await expect(lane.shrink(2)).rejects.toThrow(new Error("no divergence of run 2 on this lane"));
  });

  it("the divergence keeps the fixture and the chain in words through the diverging block only, though the next block was built ahead", async () => {
    const target = new PerCall((result, inputs) => {
      if (inputs.env.height === size(0).heights[1]) result["state_root"] = ZERO_ROOT;
    });
    const lane = new FuzzLane(perCall(target), settings({ shrinkBudget: 1 }));
    expect(await lane.run(0)).toMatchObject({ blocks: 2, divergent: true });
    const d = (await lane.shrink(0)).divergence;
    // The budget of one candidate: the chain truncated after the diverging block.
    expect(d.index).toBe(1);
    expect(d.fixture.blocks.map((b) => b.height)).toEqual(size(0).heights.slice(0, 2));
    expect(d.summary.map((b) => b.height)).toEqual(size(0).heights.slice(0, 2));
    const result = d.block.result as { receipts: Array<{ index: string; status: string; error: { name: string } | null }>; rejected: Array<{ index: string }> };
    const words = d.block.kinds.map((kind, i) => {
      const receipt = result.receipts.find((r) => Number(r.index) === i);
      const outcome = receipt === undefined ? "left out" : receipt.error === null ? receipt.status : `rejected ${receipt.error.name}`;
      return { kind, outcome };
    });
    expect(d.summary[1]).toEqual({ height: d.block.height, txs: words });
    expect(d.theirs.result["state_root"]).toBe(ZERO_ROOT);
    expect(d.ours["state_root"]).toBe(d.block.ours.result["state_root"]);
  });

  it("a target's failure names the run and block, keeping the block and the command's stderr; our own failure names the seed and run", async () => {
    const failed = new FuzzLane(perCall({ run: () => Promise.reject(new TargetError("exit 3", "on stderr")), close: () => undefined }), settings());
    const err = (await caught(failed.run(4))) as TargetFailure;
    expect(err).toBeInstanceOf(TargetFailure);
    expect([err.message, err.run, err.block?.height, err.stderr, err.died]).toEqual(["exit 3", 4, size(4).heights[0], "on stderr", false]);
    const ours = new FuzzLane(perCall({ run: () => Promise.reject(new RangeError("our bug")), close: () => undefined }), settings());
    const bug = (await caught(ours.run(4))) as Error;
    expect(bug).toBeInstanceOf(RangeError);
    expect(bug.message).toBe("seed 5 run 4: our bug");
  });

  it("a server that fails to open its session: a failure with no block", async () => {
    const lane = new FuzzLane(new Session({ start: () => new TargetError("bad hello") }), settings());
    const err = (await caught(lane.run(0))) as TargetFailure;
    expect(err).toBeInstanceOf(TargetFailure);
    expect([err.message, err.block, err.run, err.died]).toEqual(["bad hello", null, 0, false]);
  });

  it("a server that dies is replaced once per run, with the documented line; dying again on the run is the failure", async () => {
    const height = size(0).heights[1]!;
    const once = new Session({ apply: (n) => (n === 2 ? new ServerDied("exited with code 1") : null) });
    const o = await new FuzzLane(once, settings()).run(0);
    expect(o).toMatchObject({ run: 0, blocks: 3, divergent: false, stopped: false });
    expect(o.restarts).toEqual([`the t8n server died during run 0 at block ${height}: exited with code 1; a new one runs the run again`]);
    expect(once.starts).toBe(2);
    // With the last request when the target knows it (a ServerTarget).
    const named = Object.assign(new Session({ start: (n) => (n === 1 ? new ServerDied("gone") : null) }), { lastRequest: "session.start" });
    expect((await new FuzzLane(named, settings()).run(0)).restarts).toEqual(["the t8n server died during run 0 at opening its session (last request: session.start): gone; a new one runs the run again"]);
    const twice = new Session({ apply: (n) => (n === 2 || n === 4 ? new ServerDied("exited with code 1") : null) });
    const err = (await caught(new FuzzLane(twice, settings()).run(0))) as TargetFailure;
    expect(err).toBeInstanceOf(TargetFailure);
    expect([err.message, err.died, err.block?.height]).toEqual(["exited with code 1", true, height]);
    // An error answer (not a death) is the failure at once.
    const answered = new Session({ apply: (n) => (n === 1 ? new TargetError("error answer") : null) });
    expect(((await caught(new FuzzLane(answered, settings()).run(0))) as TargetFailure).died).toBe(false);
    expect(answered.starts).toBe(1);
  });

  it("a signal: the run under way ends as stopped (not a failure, not divergent) and a dying server is not replaced", async () => {
    let stop = false;
    const dies = new Session({
      apply: (n) => {
        if (n < 2) return null;
        stop = true;
        return new ServerDied("killed by the signal");
      },
    });
    const o = await new FuzzLane(dies, settings({ stopped: () => stop })).run(0);
    expect(o).toMatchObject({ run: 0, blocks: 1, divergent: false, stopped: true, restarts: [] });
    expect(dies.starts).toBe(1);
  });

  it("a server session is sent every block of every candidate (its answers are never reused: the session must advance)", async () => {
    const heights = size(0).heights;
    const hex = (entries: Iterable<readonly [Uint8Array, Uint8Array]>) => JSON.stringify([...entries].map(([k, v]) => [toHex(k), toHex(v)]));
    const behind: bigint[] = [];
    class Checked extends Session {
      override apply(inputs: T8nInputs): Promise<TargetAnswer> {
        // The session's state must be the block's pre-state.
        if (hex(this.state().entries()) !== hex(inputs.alloc)) behind.push(inputs.env.height);
        return super.apply(inputs);
      }
    }
    const target = new Checked({}, (result) => {
      if (result["height"] === String(heights[1])) result["state_root"] = ZERO_ROOT;
    });
    const lane = new FuzzLane(target, settings({ shrinkBudget: 3 }));
    expect(await lane.run(0)).toMatchObject({ blocks: 2, divergent: true });
    const applied = target.applies;
    await lane.shrink(0);
    expect(target.applies).toBeGreaterThan(applied);
    expect(behind).toEqual([]);
  });

  it("a server session fetches the post-state only when its result differs, and the difference names their post-state's output", async () => {
    const target = new Session({}, (result) => (result["state_root"] = ZERO_ROOT));
    const lane = new FuzzLane(target, settings({ shrinkBudget: 1 }));
    expect(await lane.run(0)).toMatchObject({ blocks: 1, divergent: true });
    const d = (await lane.shrink(0)).divergence;
    expect(d.theirs.stderr).toBe("their stderr");
    expect(d.ours["state_root"]).toBe(d.block.result["state_root"]);
  });
});


describe("a signal and a target's failure around a session (src/fuzz/fuzz.ts, hand-reviewed mutants)", () => {
  it("a target's failure escapes fuzz() as a TargetFailure by name, with its run", async () => {
    const err = (await caught(fuzz({ run: () => Promise.reject(new TargetError("exit 3", "")), close: () => undefined }, { seed: 5, firstRun: 2, runs: 1, blocks: 1, compare: { stateRoot: true }, shrinkBudget: 4 }))) as TargetFailure;
    expect(err).toBeInstanceOf(TargetFailure);
    expect([err.name, err.run, String(err)]).toEqual(["TargetFailure", 2, "TargetFailure: exit 3"]);
  });

  it("a signal while the session opens: no block is sent, so a target that would diverge is no finding (docs/reference/fuzzer.md §2: stopped at once)", async () => {
    let stop = false;
    class SlowStart extends Session {
      override startChain(alloc: Entries, height: bigint): Promise<void> {
        stop = true; // the signal comes while the server opens its session
        return super.startChain(alloc, height);
      }
    }
    const target = new SlowStart({}, (result) => (result["state_root"] = ZERO_ROOT));
    const o = await new FuzzLane(target, settings({ stopped: () => stop })).run(0);
    expect(o).toMatchObject({ run: 0, blocks: 0, txs: 0, divergent: false, stopped: true, restarts: [] });
    expect(target.applies).toBe(0);
  });

  it("a signal while their post-state is fetched (the server killed by it): the run ends stopped, not as our failure or a finding", async () => {
    let stop = false;
    class KilledOnFetch extends Session {
      override postState(): Promise<TargetOutput> {
        stop = true;
        return Promise.reject(new ServerDied("killed by the signal"));
      }
    }
    const target = new KilledOnFetch({}, (result) => (result["state_root"] = ZERO_ROOT));
    const o = await new FuzzLane(target, settings({ stopped: () => stop })).run(0);
    expect(o).toMatchObject({ run: 0, blocks: 1, divergent: false, stopped: true, restarts: [] });
  });

  it("a signal while the target works on a block that agrees: the block built ahead is never sent, even one that would diverge", async () => {
    let stop = false;
    const first = size(0).heights[0]!;
    class SignalOnFirst extends Session {
      override apply(inputs: T8nInputs): Promise<TargetAnswer> {
        // The signal comes once the next block was built ahead, before this one is answered.
        return super.apply(inputs).then((answer) => {
          if (inputs.env.height === first) stop = true;
          return answer;
        });
      }
    }
    const target = new SignalOnFirst({}, (result) => {
      if (result["height"] !== String(first)) result["state_root"] = ZERO_ROOT;
    });
    const o = await new FuzzLane(target, settings({ stopped: () => stop })).run(0);
    expect(o).toMatchObject({ run: 0, blocks: 1, divergent: false, stopped: true });
    expect(target.applies).toBe(1);
  });

  it("a signal that comes with a divergence: the divergence stands (divergent, not stopped) and fuzz() shrinks and reports it, interrupted", async () => {
    let stop = false;
    class SignalOnAnswer extends Session {
      override apply(inputs: T8nInputs): Promise<TargetAnswer> {
        return super.apply(inputs).then((answer) => {
          stop = true;
          return answer;
        });
      }
    }
    const lane = new FuzzLane(new SignalOnAnswer({}, (result) => (result["state_root"] = ZERO_ROOT)), settings({ stopped: () => stop }));
    expect(await lane.run(0)).toMatchObject({ run: 0, blocks: 1, divergent: true, stopped: false });
    stop = false;
    const r = await fuzz(new SignalOnAnswer({}, (result) => (result["state_root"] = ZERO_ROOT)), { seed: 5, firstRun: 0, runs: 3, blocks: 3, compare: { stateRoot: true }, shrinkBudget: 4, stopped: () => stop });
    expect([r.runsDone, r.blocks, r.interrupted, r.finding?.run]).toEqual([1, 1, true, 0]);
    expect(r.finding!.candidates).toBe(0);
  });

  it("a clean run leaves nothing to shrink, even after a run that diverged", async () => {
    const lane = new FuzzLane(perCall(new PerCall((result, inputs) => {
      if (inputs.env.height === size(0).heights[0]) result["state_root"] = ZERO_ROOT;
    })), settings({ shrinkBudget: 2 }));
    expect(await lane.run(0)).toMatchObject({ divergent: true });
    const clean = await lane.run(1);
    expect(clean).toMatchObject({ divergent: false, stopped: false });
    await expect(lane.shrink(1)).rejects.toThrow(new Error("no divergence of run 1 on this lane"));
  });

  it("a value thrown that is not an Error passes through unchanged (only an Error gets the seed and run)", async () => {
    const lane = new FuzzLane(perCall({ run: () => Promise.reject("a bare string"), close: () => undefined }), settings());
    expect(await caught(lane.run(4))).toBe("a bare string");
  });

  it("the chain in words: each junk envelope t8n leaves out is \"left out\"", async () => {
    // A run whose first block carries junk, every block diverging: with no candidate to try, the finding is the run's first block.
    let run = 0;
    while (generateChain(5, run, 1).blocks[0]!.junk.length === 0) run++;
    const lane = new FuzzLane(perCall(new PerCall((result) => (result["state_root"] = ZERO_ROOT))), settings({ blocks: 1, shrinkBudget: 0 }));
    expect(await lane.run(run)).toMatchObject({ blocks: 1, divergent: true });
    const d = (await lane.shrink(run)).divergence;
    const rejected = (d.block.result as { rejected: Array<{ index: string }> }).rejected.map((r) => Number(r.index));
    expect(rejected.length).toBeGreaterThan(0);
    expect(d.summary[0]!.txs.flatMap((t, i) => (t.outcome === "left out" ? [i] : []))).toEqual(rejected);
  });

  it("our own failure while shrinking is thrown, not taken for a candidate the target fails on", async () => {
    let shrinking = false;
    const target = new PerCall((result) => {
      if (shrinking) throw new RangeError("our bug");
      result["state_root"] = ZERO_ROOT;
    });
    const lane = new FuzzLane(perCall(target), settings({ shrinkBudget: 4 }));
    expect(await lane.run(0)).toMatchObject({ divergent: true });
    shrinking = true;
    const err = (await caught(lane.shrink(0))) as Error;
    expect(err).toBeInstanceOf(RangeError);
    expect(err.message).toBe("our bug");
  });

  it("fuzz() on a server session: a clean campaign runs on the session itself; a signal before it opens no session", async () => {
    const session = new Session();
    const r = await fuzz(session, { seed: 5, firstRun: 0, runs: 2, blocks: 2, compare: { stateRoot: true }, shrinkBudget: 4 });
    expect(r).toEqual({ runsDone: 2, blocks: 4, txs: size(0, 2).txs + size(1, 2).txs, finding: null, interrupted: false });
    expect([session.starts, session.applies]).toEqual([2, 4]);
    const stopped = new Session();
    expect(await fuzz(stopped, { seed: 5, firstRun: 0, runs: 2, blocks: 2, compare: { stateRoot: true }, shrinkBudget: 4, stopped: () => true })).toEqual({ runsDone: 0, blocks: 0, txs: 0, finding: null, interrupted: true });
    expect(stopped.starts).toBe(0);
  });

  it("a campaign without a progress callback shrinks its finding all the same", async () => {
    const r = await fuzz(new PerCall((result) => (result["state_root"] = ZERO_ROOT)), { seed: 5, firstRun: 0, runs: 2, blocks: 2, compare: { stateRoot: true }, shrinkBudget: 3 });
    expect([r.runsDone, r.interrupted, r.finding?.run, r.finding?.candidates]).toEqual([1, false, 0, 3]);
  });
});
