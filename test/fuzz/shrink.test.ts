// The delta-debugging shrinker (src/fuzz/shrink.ts) against a synthetic divergence, so the
// result can be checked exactly: it must keep only what the divergence needs, stay within its
// budget, and stop when told to.
import { describe, expect, it } from "vitest";
import type { Action } from "../../src/fuzz/model.js";
import { chainSize, generateChain, type FuzzChain } from "../../src/fuzz/plan.js";
import { shrink, truncate } from "../../src/fuzz/shrink.js";
import { PLAIN_GENESIS } from "../../src/fuzz/world.js";

/** "Diverges" at the first block holding a settle action when an earlier block holds a create. */
async function settleAfterCreate(plan: FuzzChain): Promise<{ index: number } | null> {
  let created = false;
  for (let i = 0; i < plan.blocks.length; i++) {
    const kinds = plan.blocks[i]!.actions.map((a) => a.k);
    if (created && kinds.includes("settle")) return { index: i };
    if (kinds.includes("create")) created = true;
  }
  return null;
}

const create: Action = { k: "create", owner: 0, nonce: 0, provider: 0, encrypted: false, fast: false, cap: 0, escrow: 0n, quote: null };
const settle: Action = { k: "settle", sender: 0, owner: 0, nonce: 0, key: false };
const transfer: Action = { k: "transfer", from: 0, to: 1, amount: 1n };

/** A generated chain with the two needed actions buried among others, plus a block after them. */
function buried(): FuzzChain {
  const plan = generateChain(5, 0, 6);
  const blocks = plan.blocks.map((b) => ({ ...b, actions: b.actions.filter((a): boolean => a.k !== "settle"), junk: [...b.junk, { kind: "bytes" as const, at: 0, pick: 0, bytes: new Uint8Array(3) }] }));
  blocks[1] = { ...blocks[1]!, actions: [transfer, ...blocks[1]!.actions, create, transfer] };
  blocks[4] = { ...blocks[4]!, gap: { k: "boundary", of: "any", offset: 1 }, actions: [transfer, transfer, settle, transfer] };
  return { ...plan, blocks };
}

describe("shrink (src/fuzz/shrink.ts)", () => {
  it("keeps exactly one create, one later settle, plain gaps and the plain genesis", async () => {
    const plan = buried();
    const start = (await settleAfterCreate(plan))!;
    expect(start.index).toBe(4);
    const r = await shrink({ plan, divergence: start }, settleAfterCreate, { budget: 1_000 });
    expect(r.plan.blocks.map((b) => b.actions.map((a) => a.k))).toEqual([["create"], ["settle"]]);
    expect(r.plan.blocks.every((b) => b.junk.length === 0 && b.gap.k === "step" && b.gap.blocks === 1)).toBe(true);
    expect(r.plan.genesis).toEqual(PLAIN_GENESIS);
    expect(chainSize(r.plan)).toEqual({ blocks: 2, txs: 2 });
    expect(r.divergence.index).toBe(1);
    expect(r.candidates).toBeLessThan(200);
  });

  it("never runs more candidates than its budget, and stops when interrupted, keeping the best chain so far", async () => {
    const plan = buried();
    const start = (await settleAfterCreate(plan))!;
    const small = await shrink({ plan, divergence: start }, settleAfterCreate, { budget: 3 });
    expect(small.candidates).toBe(3);
    expect(await settleAfterCreate(small.plan)).not.toBeNull();
    let calls = 0;
    const stopped = await shrink(
      { plan, divergence: start },
      async (p) => {
        calls++;
        return settleAfterCreate(p);
      },
      { budget: 1_000, stopped: () => calls >= 5 },
    );
    expect(stopped.candidates).toBe(5);
    expect(stopped.plan.blocks.length).toBeLessThanOrEqual(5);
    expect(truncate(plan, 1).blocks).toHaveLength(2);
  });
});

/** A transfer whose amount names it, so a candidate's actions can be read back as numbers. */
const tagged = (id: number): Action => ({ k: "transfer", from: 0, to: 1, amount: BigInt(id) });
const ids = (b: FuzzChain["blocks"][number]): number[] => b.actions.map((a) => Number((a as { amount: bigint }).amount));
const block = (actions: Action[], gap: FuzzChain["blocks"][number]["gap"] = { k: "step", blocks: 1 }): FuzzChain["blocks"][number] => ({ gap, actions, junk: [] });
const junk = (at: number): FuzzChain["blocks"][number]["junk"][number] => ({ kind: "bytes", at, pick: 0, bytes: new Uint8Array(1) });

describe("shrink: ddmin, step by step (src/fuzz/shrink.ts)", () => {
  it("complements only: halves, then quarters, then single items, and one more pass that changes nothing", async () => {
    // One block of eight actions of which only the first (id 0) is needed: ddmin's complements,
    // in order — drop the first half (fails), the second (kept); of four, drop [0,1] (fails),
    // [2,3] (kept); of two, drop [0] (fails), [1] (kept); of one, drop it (fails, size 1: done);
    // the second pass tries that last one again and ends the shrink.
    const tried: number[][] = [];
    const plan: FuzzChain = { genesis: PLAIN_GENESIS, blocks: [block([0, 1, 2, 3, 4, 5, 6, 7].map(tagged))] };
    const r = await shrink({ plan, divergence: { index: 0 } }, async (p) => (tried.push(ids(p.blocks[0]!)), ids(p.blocks[0]!).includes(0) ? { index: 0 } : null), { budget: 100 });
    expect(tried).toEqual([[4, 5, 6, 7], [0, 1, 2, 3], [2, 3], [0, 1], [1], [0], [], []]);
    expect(ids(r.plan.blocks[0]!)).toEqual([0]);
    expect(r.candidates).toBe(8);
  });

  it("stops at the first chunk whose removal is kept, and re-reads the list before the next", async () => {
    // The needed action last: dropping the first half is kept at once, so the second half is
    // never tried against the stale list; then [6,7] and [7] the same way.
    const tried: number[][] = [];
    const plan: FuzzChain = { genesis: PLAIN_GENESIS, blocks: [block([0, 1, 2, 3, 4, 5, 6, 7].map(tagged))] };
    await shrink({ plan, divergence: { index: 0 } }, async (p) => (tried.push(ids(p.blocks[0]!)), ids(p.blocks[0]!).includes(7) ? { index: 0 } : null), { budget: 100 });
    expect(tried).toEqual([[4, 5, 6, 7], [6, 7], [7], [], []]);
  });

  it("granularity: doubled after a round that removes nothing, one less (at least 2) after a removal", async () => {
    // Two needed actions, 0 and 4, among eight: the ddmin trace worked out by hand.
    const tried: number[][] = [];
    const plan: FuzzChain = { genesis: PLAIN_GENESIS, blocks: [block([0, 1, 2, 3, 4, 5, 6, 7].map(tagged))] };
    const needs = async (p: FuzzChain) => {
      const kept = ids(p.blocks[0]!);
      tried.push(kept);
      return kept.includes(0) && kept.includes(4) ? { index: 0 } : null;
    };
    const r = await shrink({ plan, divergence: { index: 0 } }, needs, { budget: 100 });
    expect(tried).toEqual([
      [4, 5, 6, 7], [0, 1, 2, 3], // 2 chunks of 4: neither kept
      [2, 3, 4, 5, 6, 7], [0, 1, 4, 5, 6, 7], // 4 chunks of 2: [2,3] dropped
      [4, 5, 6, 7], [0, 1, 6, 7], [0, 1, 4, 5], // 3 chunks of 2: [6,7] dropped
      [4, 5], [0, 1], // 2 chunks of 2: neither
      [1, 4, 5], [0, 4, 5], // 4 chunks of 1: 1 dropped
      [4, 5], [0, 5], [0, 4], // 3 chunks of 1: 5 dropped
      [4], [0], // 2 chunks of 1: neither, and size 1 ends the list
      [4], [0], // the second pass changes nothing
    ]);
    expect(ids(r.plan.blocks[0]!)).toEqual([0, 4]);
  });

  it("a kept candidate is cut after its own divergence, which may be earlier than the start's", async () => {
    // Diverges at the first settle not preceded by a block with a transfer: block 3 at the start;
    // dropping blocks 0–1 leaves [settle, settle], which diverges at block 0 — so block 1 goes too.
    const guard = tagged(9);
    const plan: FuzzChain = { genesis: PLAIN_GENESIS, blocks: [block([create]), block([guard]), block([settle]), block([settle])] };
    const unguarded = async (p: FuzzChain) => {
      const i = p.blocks.findIndex((b, j) => b.actions.some((a) => a.k === "settle") && !(p.blocks[j - 1]?.actions ?? []).some((a) => a.k === "transfer"));
      return i < 0 ? null : { index: i };
    };
    expect(await unguarded(plan)).toEqual({ index: 3 });
    const r = await shrink({ plan, divergence: { index: 3 } }, unguarded, { budget: 1 });
    expect(r.candidates).toBe(1);
    expect(r.plan.blocks.map((b) => b.actions.map((a) => a.k))).toEqual([["settle"]]);
    expect(r.divergence).toEqual({ index: 0 });
  });

  it("the start is cut after its divergence before any candidate runs", async () => {
    const plan: FuzzChain = { genesis: PLAIN_GENESIS, blocks: [block([tagged(0)]), block([tagged(1)]), block([tagged(2)])] };
    const r = await shrink({ plan, divergence: { index: 1 } }, async () => ({ index: 0 }), { budget: 0 });
    expect(r.candidates).toBe(0);
    expect(r.plan.blocks.map(ids)).toEqual([[0], [1]]);
  });

  it("keeps a junk envelope, a gap and a block the divergence needs; drops the rest and turns long steps into one-block steps", async () => {
    const needs = async (p: FuzzChain) =>
      p.blocks.length === 3 && p.blocks[1]!.junk.some((j) => j.at === 7) && p.blocks[2]!.gap.k === "boundary" ? { index: 2 } : null;
    const plan: FuzzChain = {
      genesis: PLAIN_GENESIS,
      blocks: [
        { gap: { k: "step", blocks: 5 }, actions: [tagged(0)], junk: [junk(1)] },
        { gap: { k: "boundary", of: "any", offset: 0 }, actions: [tagged(1), tagged(2)], junk: [junk(3), junk(7), junk(4)] },
        { gap: { k: "boundary", of: "deadline", offset: 2 }, actions: [], junk: [] },
      ],
    };
    const r = await shrink({ plan, divergence: { index: 2 } }, needs, { budget: 1_000 });
    expect(r.plan.blocks).toEqual([
      { gap: { k: "step", blocks: 1 }, actions: [], junk: [] },
      { gap: { k: "step", blocks: 1 }, actions: [], junk: [junk(7)] },
      { gap: { k: "boundary", of: "deadline", offset: 2 }, actions: [], junk: [] },
    ]);
  });

  it("reports every candidate, numbered from 1, with a chain that diverges", async () => {
    const seen: Array<[FuzzChain, number]> = [];
    const plan = buried();
    const r = await shrink({ plan, divergence: (await settleAfterCreate(plan))! }, settleAfterCreate, { budget: 1_000, onCandidate: (best, n) => seen.push([best, n]) });
    expect(seen.map(([, n]) => n)).toEqual(Array.from({ length: r.candidates }, (_, i) => i + 1));
    for (const [best] of seen) expect(await settleAfterCreate(best)).not.toBeNull();
  });
});

describe("shrink: the genesis (src/fuzz/shrink.ts)", () => {
  const rich = {
    ...PLAIN_GENESIS,
    cycle_price: "5",
    cell_price: "7",
    params: { "cbqs.suspend_grace_blocks": "5", "cbqs.max_streams_per_owner": "3", "cbqs.rent.provider_bps": "9000", "cbqs.rent.platform_bps": "1000" },
  };
  const plan: FuzzChain = { genesis: rich, blocks: [block([tagged(0)])] };
  const json = (p: FuzzChain) => JSON.stringify(p, (_, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
  /**
   * Diverges while the genesis keeps what `keep` says; a genesis with one rent share alone is
   * refused (no divergence), as the engine refuses it. Records each candidate's genesis, and
   * every candidate that is the best chain itself (a wasted run).
   */
  const needing = (keep: (g: FuzzChain["genesis"]) => boolean, geneses: FuzzChain["genesis"][], repeats: string[] = []) => {
    let best = json(plan);
    return async (p: FuzzChain) => {
      geneses.push(p.genesis);
      if (json(p) === best) repeats.push(best);
      const params = p.genesis["params"] as Record<string, string>;
      if (("cbqs.rent.provider_bps" in params) !== ("cbqs.rent.platform_bps" in params)) return null;
      if (!keep(p.genesis)) return null;
      best = json(p);
      return { index: 0 };
    };
  };
  const oneShareAlone = (geneses: FuzzChain["genesis"][]) =>
    geneses.filter((g) => ("cbqs.rent.provider_bps" in (g["params"] as object)) !== ("cbqs.rent.platform_bps" in (g["params"] as object)));

  it("becomes the plain genesis when the divergence needs nothing of it", async () => {
    const r = await shrink({ plan, divergence: { index: 0 } }, needing(() => true, []), { budget: 1_000 });
    expect(r.plan.genesis).toEqual(PLAIN_GENESIS);
  });

  it("otherwise loses each price and each parameter the divergence does not need, the two rent shares together", async () => {
    const geneses: FuzzChain["genesis"][] = [];
    const repeats: string[] = [];
    const keep = (g: FuzzChain["genesis"]) => g["cycle_price"] === "5" && "cbqs.max_streams_per_owner" in (g["params"] as object);
    const r = await shrink({ plan, divergence: { index: 0 } }, needing(keep, geneses, repeats), { budget: 1_000 });
    expect(r.plan.genesis).toEqual({ ...rich, cell_price: "0", params: { "cbqs.max_streams_per_owner": "3" } });
    // Never one rent share without the other: their sum is checked at genesis.
    expect(oneShareAlone(geneses)).toEqual([]);
    // The platform share, gone with the provider's, is not "removed" again.
    expect(repeats).toEqual([]);
  });

  it("keeps both rent shares when the divergence needs one of them", async () => {
    const geneses: FuzzChain["genesis"][] = [];
    const keep = (g: FuzzChain["genesis"]) => g["cell_price"] === "7" && "cbqs.rent.platform_bps" in (g["params"] as object);
    const r = await shrink({ plan, divergence: { index: 0 } }, needing(keep, geneses), { budget: 1_000 });
    expect(r.plan.genesis).toEqual({ ...rich, cycle_price: "0", params: { "cbqs.rent.provider_bps": "9000", "cbqs.rent.platform_bps": "1000" } });
    expect(oneShareAlone(geneses)).toEqual([]);
  });

  it("a plain genesis is left alone: no candidate runs for it", async () => {
    const geneses: FuzzChain["genesis"][] = [];
    await shrink({ plan: { ...plan, genesis: PLAIN_GENESIS }, divergence: { index: 0 } }, needing(() => true, geneses), { budget: 1_000 });
    expect(geneses.every((g) => g === PLAIN_GENESIS)).toBe(true);
  });
});

describe("shrink: a kept change of a gap or of the genesis brings another pass (src/fuzz/shrink.ts)", () => {
  // Each divergence needs action 0, and action 1 too for as long as the chain keeps what the
  // case names: only once that is simplified away can action 1 go, which takes another pass.
  const needing = (extra: (p: FuzzChain) => boolean) => async (p: FuzzChain) => {
    const kept = ids(p.blocks[0]!);
    return kept.includes(0) && (!extra(p) || kept.includes(1)) ? { index: 0 } : null;
  };
  const params = (p: FuzzChain) => p.genesis["params"] as Record<string, string>;
  const CASES: Array<[string, FuzzChain["genesis"], FuzzChain["blocks"][number]["gap"], (p: FuzzChain) => boolean, (p: FuzzChain) => boolean]> = [
    ["a long gap made one block", PLAIN_GENESIS, { k: "step", blocks: 5 }, (p) => p.blocks[0]!.gap.k !== "step" || p.blocks[0]!.gap.blocks !== 1, () => true],
    ["the plain genesis", { ...PLAIN_GENESIS, cycle_price: "5" }, { k: "step", blocks: 1 }, (p) => p.genesis["cycle_price"] !== "0", () => true],
    // The plain genesis is refused, and so is every parameter's removal (the divergence needs both): the price alone goes.
    ["a price made 0", { ...PLAIN_GENESIS, cycle_price: "5", params: { "cbqs.suspend_grace_blocks": "5", "cbqs.max_streams_per_owner": "3" } }, { k: "step", blocks: 1 }, (p) => p.genesis["cycle_price"] !== "0", (p) => "cbqs.suspend_grace_blocks" in params(p) && "cbqs.max_streams_per_owner" in params(p)],
    // The plain genesis is refused (it lacks cbqs.max_streams_per_owner): the grace parameter alone goes.
    ["a parameter removed", { ...PLAIN_GENESIS, params: { "cbqs.suspend_grace_blocks": "5", "cbqs.max_streams_per_owner": "3" } }, { k: "step", blocks: 1 }, (p) => "cbqs.suspend_grace_blocks" in params(p), (p) => "cbqs.max_streams_per_owner" in params(p)],
  ];
  for (const [what, genesis, gap, extra, needed] of CASES) {
    it(`${what}: action 1 then goes too, and the shrink ends before its budget`, async () => {
      const plan: FuzzChain = { genesis, blocks: [block([tagged(0), tagged(1)], gap)] };
      const test = async (p: FuzzChain) => (needed(p) ? needing(extra)(p) : null);
      expect(await test(plan)).toEqual({ index: 0 });
      const r = await shrink({ plan, divergence: { index: 0 } }, test, { budget: 1_000 });
      expect(ids(r.plan.blocks[0]!)).toEqual([0]);
      expect(extra(r.plan)).toBe(false);
      expect(r.candidates).toBeLessThan(50);
    });
  }
});
