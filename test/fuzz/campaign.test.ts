// The campaign over several lanes (src/fuzz/campaign.ts) and the cheap comparison of a session
// target (src/fuzz/fuzz.ts): whichever lane finishes first, the lowest diverging (or failing) run
// is the result and the counts are those of the runs up to it; a server session's post-state is
// fetched only when its result differs or no state root is compared.
import { describe, expect, it } from "vitest";
import { campaign, type Lane } from "../../src/fuzz/campaign.js";
import type { CensusJson } from "../../src/fuzz/census.js";
import { fuzz, type RunOutcome } from "../../src/fuzz/fuzz.js";
import type { ChainTarget, TargetAnswer, TargetOutput } from "../../src/target/target.js";
import { parseTargetOutput } from "../../src/target/target.js";
import type { Entries, T8nInputs } from "../../src/target/target.js";
import { sessionBlock } from "../../src/harness/t8n.js";
import { MemoryStateStore } from "../../state/store/store.js";
import { createStateCommitment } from "../../state/qmdb/index.js";
import { dumpState } from "../../state/kv/dump.js";

/** A run's census: a cell of its own and one every run hits twice. */
const runCensus = (run: number): CensusJson => ({
  runs: 1,
  cells: [
    { group: "outcome", name: "every run", hits: 2, runs: 1 },
    { group: "outcome", name: `run ${run}`, hits: 1, runs: 1 },
  ],
});

/** A lane whose runs take `delay(run)` ms and diverge or fail where told. */
function fakeLane(diverging: Set<number>, failing: Set<number>, delay: (run: number) => number, log: string[]): Lane<string> {
  // A lane holds the divergence it found last (it stops at it), which `drop` lets go of.
  let held: number | undefined;
  return {
    async run(run: number): Promise<RunOutcome> {
      await new Promise((r) => setTimeout(r, delay(run)));
      if (failing.has(run)) throw new Error(`failure in run ${run}`);
      if (diverging.has(run)) held = run;
      return { run, blocks: 2, txs: run, divergent: diverging.has(run), stopped: false, restarts: [], census: runCensus(run) };
    },
    finish: (run) => Promise.resolve(`finding of run ${run}`),
    drop: () => void log.push(`drop ${held}`),
  };
}

const options = (endRun: number) => ({ firstRun: 0, endRun, timeUp: () => false, stopped: () => false });

describe("campaign (src/fuzz/campaign.ts)", () => {
  it("the lowest diverging run is the result whichever lane is faster, and the counts stop at it", async () => {
    for (const slow of [0, 1, 2]) {
      const log: string[] = [];
      // Run 5 diverges quickly on some lane while run 3 is still under way on another.
      const delay = (run: number) => (run === 3 ? 30 : run % 3 === slow ? 10 : 1);
      const lanes = [0, 1, 2].map(() => fakeLane(new Set([3, 5]), new Set(), delay, log));
      const { census, ...r } = await campaign(lanes, options(20));
      expect(r).toEqual({ runs: 4, blocks: 8, txs: 0 + 1 + 2 + 3, finding: "finding of run 3" });
      // The census is the counted runs' too (run 5 finished before run 3 diverged, and is left out).
      expect(census.toJSON()).toEqual({
        runs: 4,
        cells: [{ group: "outcome", name: "every run", hits: 8, runs: 4 }, ...[0, 1, 2, 3].map((run) => ({ group: "outcome", name: `run ${run}`, hits: 1, runs: 1 }))],
      });
    }
  });

  it("a lower run's failure wins over a higher divergence; a lower divergence over a higher failure", async () => {
    const log: string[] = [];
    const failFirst = [0, 1].map(() => fakeLane(new Set([4]), new Set([2]), () => 1, log));
    await expect(campaign(failFirst, options(10))).rejects.toThrow("failure in run 2");
    const divergeFirst = [0, 1].map(() => fakeLane(new Set([2]), new Set([4]), () => 1, log));
    expect((await campaign(divergeFirst, options(10))).finding).toBe("finding of run 2");
  });

  it("a higher divergence found meanwhile is dropped", async () => {
    const log: string[] = [];
    const lanes = [0, 1].map(() => fakeLane(new Set([1, 2]), new Set(), (run) => (run === 1 ? 20 : 1), log));
    expect((await campaign(lanes, options(10))).finding).toBe("finding of run 1");
    expect(log).toEqual(["drop 2"]);
  });

  it("stops starting runs once the time is up", async () => {
    let started = 0;
    const lane: Lane<string> = {
      run: (run) => (started++, Promise.resolve({ run, blocks: 1, txs: 1, divergent: false, stopped: false, restarts: [], census: runCensus(run) })),
      finish: () => Promise.resolve(""),
      drop: () => undefined,
    };
    const r = await campaign([lane], { ...options(1_000), timeUp: () => started >= 7 });
    expect(r.runs).toBe(7);
  });

  it("a clean campaign runs every index from firstRun up to endRun once, reports each run with the totals so far, and finds nothing", async () => {
    const log: string[] = [];
    const started: number[] = [];
    const lanes = [0, 1].map(() => {
      const lane = fakeLane(new Set(), new Set(), (run) => (run % 2 === 0 ? 3 : 1), log);
      return { ...lane, run: (run: number) => (started.push(run), lane.run(run)) };
    });
    const reported: Array<{ run: number; totals: { runs: number; blocks: number; txs: number } }> = [];
    const { census, ...r } = await campaign(lanes, { ...options(9), firstRun: 5, onRun: (outcome, totals) => void reported.push({ run: outcome.run, totals }) });
    expect(started.sort()).toEqual([5, 6, 7, 8]);
    expect(r).toEqual({ runs: 4, blocks: 8, txs: 5 + 6 + 7 + 8, finding: null });
    expect(census.toJSON()).toEqual({
      runs: 4,
      cells: [{ group: "outcome", name: "every run", hits: 8, runs: 4 }, ...[5, 6, 7, 8].map((run) => ({ group: "outcome", name: `run ${run}`, hits: 1, runs: 1 }))],
    });
    // Each run as it ends, with the totals up to it (a copy: later runs do not change it).
    expect(reported.map((x) => x.run).sort()).toEqual([5, 6, 7, 8]);
    const upTo = (i: number) => reported.slice(0, i + 1);
    expect(reported.map((x) => x.totals)).toEqual(reported.map((_, i) => ({ runs: i + 1, blocks: 2 * (i + 1), txs: upTo(i).reduce((n, x) => n + x.run, 0) })));
    expect(log).toEqual([]);
  });

  it("once a run diverges, no lane starts a run above it", async () => {
    const started: number[] = [];
    const lanes = [0, 1].map(() => {
      const lane = fakeLane(new Set([1]), new Set(), (run) => (run === 0 ? 20 : 1), []);
      return { ...lane, run: (run: number) => (started.push(run), lane.run(run)) };
    });
    const { census, ...r } = await campaign(lanes, options(10));
    expect(started.sort()).toEqual([0, 1]);
    expect(r).toEqual({ runs: 2, blocks: 4, txs: 0 + 1, finding: "finding of run 1" });
    expect(census.runs).toBe(2);
  });

  it("no run starts once the campaign is stopped (a signal)", async () => {
    let started = 0;
    const lane = fakeLane(new Set(), new Set(), () => 1, []);
    const counting = { ...lane, run: (run: number) => (started++, lane.run(run)) };
    const r = await campaign([counting], { ...options(1_000), stopped: () => started >= 3 });
    expect([started, r.runs]).toEqual([3, 3]);
  });

  it("a run a signal stopped is not counted, and does not keep the runs above it out of the counts and the census", async () => {
    const reported: number[] = [];
    // Run 1 is under way on one lane when the signal comes; the other lane has run 0 and then run 2, which diverges.
    const lanes = [0, 1].map(() => {
      const lane = fakeLane(new Set([2]), new Set(), (run) => (run === 1 ? 20 : 1), []);
      return { ...lane, run: async (run: number) => ({ ...(await lane.run(run)), stopped: run === 1 }) };
    });
    const { census, ...r } = await campaign(lanes, { ...options(10), onRun: (outcome) => void reported.push(outcome.run) });
    expect(r).toEqual({ runs: 2, blocks: 4, txs: 0 + 2, finding: "finding of run 2" });
    expect(reported).toEqual([0, 2]);
    expect(census.toJSON()).toEqual({
      runs: 2,
      cells: [{ group: "outcome", name: "every run", hits: 4, runs: 2 }, ...[0, 2].map((run) => ({ group: "outcome", name: `run ${run}`, hits: 1, runs: 1 }))],
    });
  });
});

/** An in-process session target (as `cbqs t8n --server` keeps one), counting post-state requests. */
class SessionTarget implements ChainTarget {
  readonly stateRoot = "chain";
  readonly memoizable = false;
  postStates = 0;
  private store: MemoryStateStore | null = null;
  constructor(private readonly tamper: (result: Record<string, unknown>) => void = () => undefined) {}
  startChain(alloc: Entries, height: bigint): Promise<void> {
    this.store = MemoryStateStore.fromEntries(alloc, height, createStateCommitment());
    return Promise.resolve();
  }
  apply(inputs: T8nInputs): Promise<TargetAnswer> {
    const result = structuredClone(sessionBlock(this.store!, inputs.txs, inputs.env).result) as Record<string, unknown>;
    this.tamper(result);
    return Promise.resolve({ result, resultText: JSON.stringify(result) });
  }
  postState(inputs: T8nInputs, answer: TargetAnswer): Promise<TargetOutput> {
    this.postStates++;
    return Promise.resolve(parseTargetOutput(answer.resultText, JSON.stringify(dumpState(this.store!, { height: inputs.env.height })), ""));
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

describe("a session target: the cheap comparison first (src/fuzz/fuzz.ts)", () => {
  const base = { seed: 11, firstRun: 0, runs: 3, blocks: 4, shrinkBudget: 50 };

  it("a clean campaign compares results and roots only: no post-state is fetched, and its chain state roots agree with ours", async () => {
    const target = new SessionTarget();
    const r = await fuzz(target, { ...base, compare: { stateRoot: true } });
    expect(r.finding).toBeNull();
    expect(r.blocks).toBe(12);
    expect(target.postStates).toBe(0);
  });

  it("without a state root to compare, every block's post-state is fetched and compared", async () => {
    const target = new SessionTarget((result) => (result["state_root"] = "0x" + "00".repeat(32)));
    const r = await fuzz(target, { ...base, compare: { stateRoot: false } });
    expect(r.finding).toBeNull();
    expect(target.postStates).toBe(12);
  });

  it("a differing state root fetches the post-state, and the difference is named in the order a reader wants it", async () => {
    const target = new SessionTarget((result) => (result["state_root"] = "0x" + "11".repeat(32)));
    const r = await fuzz(target, { ...base, compare: { stateRoot: true } });
    expect(r.finding?.divergence.text).toMatch(/^block \d+: t8n result: state_root expected "0x[0-9a-f]{64}" got "0x1{64}"$/);
    expect(target.postStates).toBeGreaterThan(0);
  });
});
