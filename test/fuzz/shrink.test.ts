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
