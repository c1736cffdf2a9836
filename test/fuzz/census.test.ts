// The fuzz census (src/fuzz/census.ts, cells.ts, reach.ts): hand-built chains
// hit exactly the §6.1 cells they were built for, per-run counts add up the same however lanes'
// censuses are merged, and seed 1's first 300 runs reach every required cell in at least 0.5 %
// of runs (docs/reference/fuzzer.md §4 measures 10,000).
import { describe, expect, it } from "vitest";
import { ChainBuilder } from "../../src/fuzz/build.js";
import { Census, type CellCount, type CensusJson } from "../../src/fuzz/census.js";
import { CELL_GROUPS, STATE, type CellGroup } from "../../src/fuzz/cells.js";
import { SETUP_ACTIONS, type Action } from "../../src/fuzz/model.js";
import { generateChain, type FuzzChain } from "../../src/fuzz/plan.js";
import { EXCLUDED_ERRORS, MIN_SHARE, missedCells, REQUIRED_OUTCOMES, REQUIRED_STATES, requiredCells, UNREACHABLE_PAIRS } from "../../src/fuzz/reach.js";
import { OWNERS, PLAIN_GENESIS, U64_MAX } from "../../src/fuzz/world.js";
import { ERRORS } from "../../src/engine/errors.js";

/** A chain of blocks at the given heights (each a step from the one before). */
function chain(blocks: Array<[height: number, actions: Action[]]>): FuzzChain {
  return {
    genesis: PLAIN_GENESIS, // grace 5 blocks, default rent split, no fees
    blocks: blocks.map(([height, actions], i) => ({ gap: { k: "step", blocks: height - (i === 0 ? 0 : blocks[i - 1]![0]) }, actions, junk: [] })),
  };
}

function census(...plans: FuzzChain[]): Census {
  const c = new Census();
  for (const plan of plans) {
    const builder = new ChainBuilder(plan);
    while (!builder.done) c.add(builder.build());
    c.endRun();
  }
  return c;
}

const settle = (owner: number): Action => ({ k: "settle", sender: 0, owner, nonce: 0, key: false });
const topUp = (owner: number, toDue: number | null, amount = 1n, payer = owner): Action => ({ k: "topup", payer, owner, nonce: 0, key: false, amount, toDue });

// The setup at height 1: owner 0's stream pays 8,000 a block from 40,000 (paid through 6); owner
// 2's quoted stream pays 9,000 a block from no escrow (its runway ended at 1).
const lifecycle = chain([
  [1, [...SETUP_ACTIONS]],
  [2, [settle(2), settle(0)]], // owner 2: Suspended at 1, deadline 6; owner 0 pays block 2 in full
  [6, [settle(2)]], // exactly at owner 2's deadline: DataExpired
  [8, [settle(0)]], // owner 0: paid through 6, Suspended at 6, deadline 11
  [10, [topUp(0, 0), topUp(1, null, U64_MAX, OWNERS.length)]], // one block before the deadline: back to Active; the sponsor cannot pay u64 max
]);
// Owner 0 in arrears at 8, never settled: settle #1 pays 5 blocks from the escrow, settle #2 the other 2 from the deposit.
const twice = chain([
  [1, [...SETUP_ACTIONS]],
  [8, [topUp(0, 0)]],
]);

describe("fuzz census (src/fuzz/census.ts)", () => {
  it("a hand-built chain hits the §6.1 cells it was built for, once per run", () => {
    const c = census(lifecycle, twice);
    expect(c.runs).toBe(2);
    const runs = (name: string) => c.runsWith("state", name);
    expect(runs("Active → Suspended by SettleStreamRent")).toBe(1);
    expect(runs(STATE.expiredAtDeadline)).toBe(1);
    expect(runs(STATE.expiredAfterDeadline)).toBe(0);
    expect(runs(STATE.settledInFull)).toBe(1);
    expect(runs("Suspended → Active by TopUpStream")).toBe(1);
    expect(runs(STATE.topUpLastBlock)).toBe(1);
    expect(runs(STATE.paysTwice)).toBe(1);
    expect(runs(STATE.partialKeepsPair)).toBe(0);
    expect(runs(STATE.createdBase)).toBe(2);
    expect(runs(STATE.createdQuote)).toBe(2);
    expect(c.runsWith("edge", "TopUpStream amount u64 max")).toBe(1);
    const hits = new Map(c.cells().map((x) => [`${x.group}: ${x.name}`, x.hits]));
    expect(hits.get("outcome: SettleStreamRent: ok")).toBe(4);
    expect(hits.get("outcome: TopUpStream: ok")).toBe(2);
    expect(hits.get("outcome: TopUpStream: InsufficientBalance")).toBe(1);
    expect(hits.get("outcome: CreateStream: ok")).toBe(6);
  });

  it("merging lanes' censuses in any grouping and order gives one census of all the runs, also through JSON", () => {
    const plans = [0, 1, 2, 3, 4, 5].map((run) => generateChain(3, run, 4));
    const whole = census(...plans).toJSON();
    const parts = plans.map((p) => census(p).toJSON());
    const left = parts.reduce((acc, p) => acc.merge(p), new Census());
    const right = parts.reduceRight((acc, p) => Census.fromJSON(p).merge(acc), new Census());
    const pairs = new Census().merge(census(plans[4]!, plans[1]!)).merge(new Census().merge(parts[5]!).merge(parts[0]!)).merge(census(plans[3]!, plans[2]!));
    for (const c of [left, right, pairs]) expect(c.toJSON()).toEqual(whole);
    expect(Census.fromJSON(JSON.parse(JSON.stringify(whole)) as typeof whole).toJSON()).toEqual(whole);
    expect(whole.runs).toBe(6);
  });

  it("cells are listed by group in CELL_GROUPS order, then by name, whatever order they were counted in; a name may recur in another group", () => {
    const cell = (group: CellGroup, name: string, hits = 1): CellCount => ({ group, name, hits, runs: 1 });
    const c = Census.fromJSON({
      runs: 1,
      cells: [cell("param", "a"), cell("edge", "b"), cell("outcome", "b"), cell("state", "a"), cell("left out", "c"), cell("outcome", "a"), cell("edge", "a", 3)],
    });
    expect(c.cells().map((x) => `${x.group}: ${x.name}`)).toEqual(["outcome: a", "outcome: b", "left out: c", "state: a", "edge: a", "edge: b", "param: a"]);
    expect(CELL_GROUPS).toEqual(["outcome", "left out", "state", "edge", "param"]);
    expect(c.reached).toBe(7);
    expect([c.runsWith("edge", "a"), c.runsWith("edge", "c"), c.runsWith("outcome", "c")]).toEqual([1, 0, 0]);
    expect(c.cells().find((x) => x.group === "edge" && x.name === "a")!.hits).toBe(3);
  });

  it("reached counts distinct cells, not hits or runs", () => {
    const c = census(lifecycle, twice);
    expect(c.reached).toBe(c.cells().length);
    expect(c.reached).toBeGreaterThan(10);
    expect(new Census().reached).toBe(0);
  });

  it("a census's cells, and the JSON merged into one, are copies: changing them changes no census", () => {
    const json: CensusJson = { runs: 1, cells: [{ group: "outcome", name: "x", hits: 2, runs: 1 }] };
    const c = Census.fromJSON(json).merge(json);
    expect(json.cells).toEqual([{ group: "outcome", name: "x", hits: 2, runs: 1 }]);
    c.cells()[0]!.hits = 100;
    expect(c.toJSON()).toEqual({ runs: 2, cells: [{ group: "outcome", name: "x", hits: 4, runs: 2 }] });
  });

  it("a census with a run under way has no final counts and cannot be merged into; ended, it can", () => {
    const plan = chain([[1, [...SETUP_ACTIONS]]]);
    const c = new Census();
    c.add(new ChainBuilder(plan).build());
    expect(() => c.toJSON()).toThrow(new Error("a census with a run under way has no final counts"));
    expect(() => c.merge({ runs: 0, cells: [] })).toThrow(new Error("a census with a run under way cannot be merged into"));
    expect(() => new Census().merge(c)).toThrow(new Error("a census with a run under way has no final counts"));
    expect(c.runs).toBe(0);
    c.endRun();
    expect(c.merge({ runs: 2, cells: [] }).runs).toBe(3);
    expect(c.toJSON().cells).toEqual(c.cells());
    expect(c.runsWith("state", STATE.createdBase)).toBe(1);
  });

  it("every engine error is required from some transaction or excluded with a reason (the check is not vacuous)", () => {
    const required = new Set(Object.values(REQUIRED_OUTCOMES).flat());
    for (const name of Object.keys(ERRORS)) expect(required.has(name as keyof typeof ERRORS) !== (name in EXCLUDED_ERRORS), name).toBe(true);
  });

  it("every exclusion and every pair the fuzz world cannot provoke gives its reason; such a pair's error is required from some other kind", () => {
    for (const [name, reason] of Object.entries(EXCLUDED_ERRORS)) expect(reason.length, name).toBeGreaterThan(40);
    const required = new Set(Object.values(REQUIRED_OUTCOMES).flat());
    for (const p of UNREACHABLE_PAIRS) {
      expect(p.reason.length, p.error).toBeGreaterThan(40);
      expect(p.kinds, p.error).not.toBe("");
      expect(required.has(p.error), p.error).toBe(true);
      expect(REQUIRED_OUTCOMES[p.kinds] ?? [], p.kinds).not.toContain(p.error);
    }
  });

  it("every named §6.1 and path cell is required; the required cells come in the census's group order, each once", () => {
    const named = Object.values(STATE).flatMap((v) => (typeof v === "string" ? [v] : [v("CreateStream"), v("UpdateStream")]));
    for (const name of named) expect(REQUIRED_STATES, name).toContain(name);
    const cells = requiredCells();
    const groups = cells.map((c) => c.group);
    expect([...new Set(groups)]).toEqual(CELL_GROUPS.filter((g) => g !== "left out"));
    expect(groups).toEqual([...groups].sort((a, b) => CELL_GROUPS.indexOf(a) - CELL_GROUPS.indexOf(b)));
    expect(new Set(cells.map((c) => `${c.group}: ${c.name}`)).size).toBe(cells.length);
    expect(cells[0]).toEqual({ group: "outcome", name: "RegisterProvider: ok" });
  });

  it("a required cell is missed when it is in fewer than 0.5 % of the runs, counted in its own group; at 0.5 % exactly it is not", () => {
    expect(MIN_SHARE).toBe(0.005);
    const [first, second, ...rest] = requiredCells();
    // 400 runs: 2 is 0.5 %. The second cell is counted only under another group.
    const cells: CellCount[] = [
      { ...first!, hits: 1, runs: 1 },
      { group: second!.group === "edge" ? "state" : "edge", name: second!.name, hits: 9, runs: 9 },
      ...rest.map((c) => ({ ...c, hits: 2, runs: 2 })),
    ];
    expect(missedCells(cells, 400)).toEqual([
      { ...first!, runs: 1 },
      { ...second!, runs: 0 },
    ]);
    // 200 runs: the first cell's one run is 0.5 %.
    expect(missedCells(cells, 200)).toEqual([{ ...second!, runs: 0 }]);
  });

  it("seed 1's first 300 runs reach every required cell in at least 0.5 % of runs, and every outcome, edge and parameter cell they reach is required", () => {
    const c = census(...Array.from({ length: 300 }, (_, run) => generateChain(1, run, 8)));
    expect(missedCells(c.cells(), c.runs)).toEqual([]);
    // What the world can provoke is required, so a requirement cannot go missing from reach.ts unnoticed.
    const required = new Set(requiredCells().map((x) => `${x.group}: ${x.name}`));
    const unrequired = c
      .cells()
      .filter((x) => x.group === "outcome" || x.group === "edge" || x.group === "param")
      .map((x) => `${x.group}: ${x.name}`)
      .filter((x) => !required.has(x));
    expect(unrequired).toEqual([]);
  }, 60_000);
});
