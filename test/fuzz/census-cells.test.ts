// The census cells one built block hits (src/fuzz/cells.ts), block by block, for hand-built
// chains on the plain genesis (grace 5): each §6.1 and path cell is named exactly where its rule
// holds and not one block or one unit off it — deadlines reached or not, escrow exactly at the
// rent due, a pause holding a deadline or a runway end back, settle #1 and #2 of a top-up — and
// the edge and parameter cells only for the values and outcomes they name.
// Hand-reviewed mutants of the cells.
import { describe, expect, it } from "vitest";
import { ChainBuilder } from "../../src/fuzz/build.js";
import { blockCells, STATE } from "../../src/fuzz/cells.js";
import { SETUP_ACTIONS, type Action, type QuotePlan } from "../../src/fuzz/model.js";
import type { FuzzChain, Junk } from "../../src/fuzz/plan.js";
import { PARAM_NAMES, PLAIN_GENESIS, U128_MAX, U64_MAX } from "../../src/fuzz/world.js";
import { REQUIRED_EDGES } from "../../src/fuzz/reach.js";

/** The cells each block of a chain at the given heights hits, in the order hit (the setup block first). */
function cellsOf(blocks: Array<[height: number, actions: Action[], junk?: Junk[]]>, genesis = PLAIN_GENESIS): string[][] {
  const plan: FuzzChain = {
    genesis,
    blocks: blocks.map(([height, actions, junk], i) => ({ gap: { k: "step", blocks: height - (i === 0 ? 0 : blocks[i - 1]![0]) }, actions, junk: junk ?? [] })),
  };
  const builder = new ChainBuilder(plan);
  const out: string[][] = [];
  while (!builder.done) {
    const cells: string[] = [];
    blockCells(builder.build(), (g, n) => cells.push(`${g}: ${n}`));
    out.push(cells);
  }
  return out;
}
const settle = (owner: number): Action => ({ k: "settle", sender: 0, owner, nonce: 0, key: false });
const topUp = (owner: number, toDue: number | null, amount = 1n): Action => ({ k: "topup", payer: owner, owner, nonce: 0, key: false, amount, toDue });
const close = (owner: number): Action => ({ k: "close", by: "owner", owner, nonce: 0, key: false });
const grace = PARAM_NAMES.indexOf("cbqs.suspend_grace_blocks");
const q = (until: number, extra: Partial<QuotePlan> = {}): QuotePlan => ({ rate: 9_000n, until, signer: "quote", generation: 0, context: "own", ...extra });
const activate: Action = { k: "activate", by: "owner", owner: 0, nonce: 0, key: false, generation: 0, bump: false, signer: "own", served: "previous", context: "own" };

// The setup at height 1: owner 0's stream pays 8,000 a block from 40,000 (runway end 6), owner 1's
// 74,700 from 2,000,000 (runway end 27), owner 2's quoted one 9,000 from nothing (runway end 1).
describe("the census cells of a block (src/fuzz/cells.ts)", () => {
  it("settle and close: a deadline one block ahead, exactly reached or passed; escrow exactly at the rent due is not arrears", () => {
    const [, b2, b5, b6, b7] = cellsOf([
      [1, [...SETUP_ACTIONS]],
      [2, [settle(2)]], // owner 2: Suspended at 1, deadline 6
      [5, [settle(2)]],
      [6, [close(0)]], // owner 0 owes 5 × 8,000 = 40,000, its escrow
      [7, [settle(2)]],
    ]);
    expect(b2).toEqual(["outcome: SettleStreamRent: ok", "state: Active → Suspended by SettleStreamRent"]);
    expect(b5).toEqual(["outcome: SettleStreamRent: NoOpRejected", `state: ${STATE.settleBeforeDeadline}`]);
    expect(b6).toEqual(["outcome: CloseStream: ok", "state: Active → Closed by CloseStream"]);
    expect(b7).toEqual(["outcome: SettleStreamRent: ok", "state: Suspended → DataExpired by SettleStreamRent", `state: ${STATE.expiredAfterDeadline}`]);
  });

  it("a settle that suspends at the deadline itself, a close in arrears, a close exactly at the deadline; a top-up past the deadline names no top-up cell", () => {
    const [, b11, b32, b33] = cellsOf([
      [1, [...SETUP_ACTIONS]],
      [11, [settle(0), close(2), close(0)]], // owner 0: runway end 6, deadline 11
      [32, [settle(1)]], // owner 1: runway end 27, deadline 32
      [33, [topUp(1, null, 100_000_000n), close(1)]],
    ]);
    expect(b11).toEqual([
      "outcome: SettleStreamRent: ok",
      "state: Active → Suspended by SettleStreamRent",
      `state: ${STATE.suspendedPastDeadline}`,
      "outcome: CloseStream: ok",
      "state: Active → Closed by CloseStream",
      `state: ${STATE.closedInArrears}`,
      "outcome: CloseStream: ok",
      "state: Suspended → Closed by CloseStream",
      `state: ${STATE.closedSuspendedAfter}`,
    ]);
    expect(b32).toEqual(["outcome: SettleStreamRent: ok", "state: Active → Suspended by SettleStreamRent", `state: ${STATE.suspendedPastDeadline}`]);
    expect(b33).toEqual(["outcome: TopUpStream: GraceDeadlinePassed", "outcome: CloseStream: ok", "state: Suspended → Closed by CloseStream", `state: ${STATE.closedSuspendedAfter}`]);
  });

  it("top-ups: settle #1 alone is not paying twice; nothing paid keeps no pair; part of a Suspended stream's arrears paid keeps its pair (no settle #2 cell: it was never Active)", () => {
    const [, , b3, b8] = cellsOf([
      [1, [...SETUP_ACTIONS]],
      [2, [settle(2)]],
      [3, [topUp(0, null, 5n), topUp(2, null, 5n), topUp(2, null, 9_000n)]], // owner 2 owes 18,000: the 9,000 pays one block
      [8, [topUp(0, -1)]], // owner 0 owes 56,000: settle #1 pays 40,000, settle #2 8,000 of the 15,999, Suspended
    ]);
    expect(b3).toEqual([
      "outcome: TopUpStream: ok",
      "state: Active → Active by TopUpStream",
      "outcome: TopUpStream: ok",
      "state: Suspended → Suspended by TopUpStream",
      "outcome: TopUpStream: ok",
      "state: Suspended → Suspended by TopUpStream",
      `state: ${STATE.partialKeepsPair}`,
    ]);
    expect(b8).toEqual(["outcome: TopUpStream: ok", "state: Active → Suspended by TopUpStream", `state: ${STATE.paysTwice}`, `state: ${STATE.secondKeepsPair}`]);
    // 40,000 and 16,000 split at the default bps floor to the same as 56,000 split once.
    const [, twice] = cellsOf([
      [1, [...SETUP_ACTIONS]],
      [8, [topUp(0, 0)]],
    ]);
    expect(twice).toEqual(["outcome: TopUpStream: ok", "state: Active → Active by TopUpStream", `state: ${STATE.paysTwice}`]);
  });

  it("the split floors of a double payment differ from one split of the sum: settle #1 pays whole blocks of the escrow, not the escrow", () => {
    // Provider share 1 bps. Owner 1's 2,000,000 escrow covers 26 blocks of 74,700 (1,942,200, 57,800 left); at 29
    // the deposit pays 2 more: 194 + 14 of the provider's share against 209 of 2,091,600 split once.
    const genesis = { ...PLAIN_GENESIS, params: { "cbqs.suspend_grace_blocks": "5", "cbqs.rent.provider_bps": "1", "cbqs.rent.platform_bps": "9999" } };
    const [, b29] = cellsOf(
      [
        [1, [...SETUP_ACTIONS]],
        [29, [topUp(1, 0)]],
      ],
      genesis,
    );
    expect(b29).toEqual(["outcome: TopUpStream: ok", "state: Active → Active by TopUpStream", `state: ${STATE.paysTwice}`, `state: ${STATE.paysTwiceFloors}`]);
  });

  it("a pause holds a deadline back while H < deadline ≤ height, and a runway end while H ≤ end < height", () => {
    const [, b2, b6, b7, b9] = cellsOf([
      [1, [...SETUP_ACTIONS]],
      [2, [settle(2), { k: "pause", variant: "Pause", actor: "registry", blocks: 3n, by: "gov" }]], // paused over [2, 5)
      [6, [settle(0), settle(2)]], // H 3: owner 2's deadline 6 is the height
      [7, [settle(0), settle(2)]], // H 4
      [9, [settle(0), settle(2)]], // H 6: owner 0's runway end (4 + 16,000 / 8,000) and owner 2's deadline
    ]);
    expect(b2).toEqual(["outcome: SettleStreamRent: ok", "state: Active → Suspended by SettleStreamRent", "outcome: Gov.Pause: ok"]);
    const paid = ["outcome: SettleStreamRent: ok", "state: Active → Active by SettleStreamRent", `state: ${STATE.settledInFull}`];
    const runway = `state: ${STATE.pauseHoldsRunway}`;
    const held = ["outcome: SettleStreamRent: NoOpRejected", `state: ${STATE.pauseHoldsDeadline}`];
    expect(b6).toEqual([...paid, ...held]);
    expect(b7).toEqual([paid[0], runway, ...paid.slice(1), ...held]);
    expect(b9).toEqual([paid[0], runway, ...paid.slice(1), "outcome: SettleStreamRent: ok", "state: Suspended → DataExpired by SettleStreamRent", `state: ${STATE.expiredAtDeadline}`]);
  });

  it("edges, quotes and parameters: only the values and outcomes the cells name", () => {
    const [, b2, b3] = cellsOf([
      [1, [...SETUP_ACTIONS]],
      [
        2,
        [
          { k: "transfer", from: 0, to: 1, amount: 1n },
          { k: "transfer", from: 0, to: 1, amount: U64_MAX },
          { k: "param", by: "other", writes: [{ name: grace, value: 4 }], split: null },
          { k: "param", by: "gov", writes: [{ name: grace, value: 4 }, { name: grace, value: 11 }], split: null }, // 5, then u64 max
          { k: "param", by: "gov", writes: [{ name: grace, value: 4 }], split: null },
          { k: "pause", variant: "Pause", actor: "registry", blocks: 3n, by: "other" },
          { k: "pause", variant: "Pause", actor: "registry", blocks: U64_MAX, by: "other" },
          { k: "pause", variant: "ExtendPause", actor: "registry", blocks: U64_MAX, by: "other" },
          { k: "create", owner: 1, nonce: 3, provider: 0, encrypted: false, fast: false, cap: 0, escrow: 0n, quote: null },
          { k: "create", owner: 0, nonce: 1, provider: 1, encrypted: false, fast: false, cap: 0, escrow: 0n, quote: q(5) },
          { k: "create", owner: 1, nonce: 1, provider: 1, encrypted: false, fast: false, cap: 0, escrow: 0n, quote: q(0, { signer: "signing" }) },
          { k: "create", owner: 1, nonce: 2, provider: 1, encrypted: false, fast: false, cap: 0, escrow: 0n, quote: q(-1) },
          { k: "create", owner: 2, nonce: 2, provider: 2, encrypted: false, fast: false, cap: 0, escrow: 0n, quote: q(-1) }, // unregistered: refused before the quote
          { k: "create", owner: 2, nonce: 1, provider: 1, encrypted: false, fast: false, cap: 0, escrow: 0n, quote: q(0, { rate: 1n << 64n }) },
          topUp(0, null, 5n),
          topUp(0, null, U64_MAX + 1n),
          { k: "update", by: "owner", owner: 2, nonce: 0, key: false, variant: "capacity", cap: 0, rotation: "Set", quote: q(0) },
          { k: "update", by: "owner", owner: 0, nonce: 0, key: false, variant: "capacity", cap: 2, rotation: "Set", quote: null },
          activate,
        ],
        [{ kind: "bytes", at: 0, pick: 0, bytes: Uint8Array.of(1, 2, 3) }],
      ],
      [3, [activate]],
    ]);
    expect(b2).toEqual([
      "outcome: Transfer: ok",
      "outcome: Transfer: InsufficientBalance",
      "edge: Transfer amount u64 max",
      "outcome: Gov.SetParam: Unauthorized",
      "outcome: Gov.SetParams: InvalidGovernanceAction",
      "edge: parameter write of u64 max (SetParam or SetParams)",
      "outcome: Gov.SetParam: ok",
      "param: cbqs.suspend_grace_blocks",
      "outcome: Gov.Pause: Unauthorized",
      "outcome: Gov.Pause: Unauthorized",
      "edge: Pause blocks u64 max",
      "outcome: Gov.ExtendPause: Unauthorized",
      "edge: ExtendPause blocks u64 max",
      "outcome: CreateStream: ok",
      "edge: CreateStream owner_nonce u64 max",
      `state: ${STATE.createdBase}`,
      "outcome: CreateStream: ok",
      `state: ${STATE.createdQuote}`,
      "outcome: CreateStream: PricingBasisInvalid",
      "outcome: CreateStream: PricingBasisInvalid",
      `state: ${STATE.quoteExpired("CreateStream")}`,
      "outcome: CreateStream: ProviderNotFound",
      "outcome: CreateStream: InsufficientBalance",
      "edge: quote rate_per_block 2^64",
      "outcome: TopUpStream: ok",
      "state: Active → Active by TopUpStream",
      "outcome: TopUpStream: InsufficientBalance",
      "edge: TopUpStream amount u64 max + 1",
      "outcome: UpdateStream: ok",
      `state: ${STATE.quoteLastBlock("UpdateStream")}`,
      "state: Active → Suspended by UpdateStream",
      `state: ${STATE.repricedQuote}`,
      "outcome: UpdateStream: ok",
      "state: Active → Active by UpdateStream",
      `state: ${STATE.repricedBase}`,
      "outcome: ActivateKeyGeneration: ok",
      "state: Active → Active by ActivateKeyGeneration",
      "left out: junk: random bytes",
    ]);
    expect(b3).toEqual(["outcome: ActivateKeyGeneration: ok", "state: Active → Active by ActivateKeyGeneration", `state: ${STATE.generationChain}`]);
  });
});

describe("the u64/u128 edge cells by name (src/fuzz/cells.ts AMOUNT_EDGES, RATE_EDGES; hand-reviewed mutants)", () => {
  it("escrows and top-ups of u64 max, u64 max + 1 and u128 max, a quote of 2^127 a block: each named as reach.ts requires it, whatever the outcome", () => {
    const [, b2] = cellsOf([
      [1, [...SETUP_ACTIONS]],
      [
        2,
        [
          { k: "create", owner: 0, nonce: 1, provider: 0, encrypted: false, fast: false, cap: 0, escrow: U64_MAX, quote: null },
          { k: "create", owner: 0, nonce: 2, provider: 0, encrypted: false, fast: false, cap: 0, escrow: U64_MAX + 1n, quote: null },
          { k: "create", owner: 1, nonce: 1, provider: 0, encrypted: false, fast: false, cap: 0, escrow: U128_MAX, quote: null },
          { k: "create", owner: 1, nonce: 2, provider: 1, encrypted: false, fast: false, cap: 0, escrow: 0n, quote: q(0, { rate: 1n << 127n }) },
          topUp(0, null, U64_MAX),
          topUp(0, null, U128_MAX),
        ],
      ],
    ]);
    const edges = b2!.filter((c) => c.startsWith("edge: ")).map((c) => c.slice("edge: ".length));
    expect(edges).toEqual([
      "CreateStream initial_escrow u64 max",
      "CreateStream initial_escrow u64 max + 1",
      "CreateStream initial_escrow u128 max",
      "quote rate_per_block 2^127",
      "TopUpStream amount u64 max",
      "TopUpStream amount u128 max",
    ]);
    for (const e of edges) expect(REQUIRED_EDGES, e).toContain(e);
  });
});

describe("the split floors of a double payment at other provider shares (src/fuzz/cells.ts topUpPayments; hand-reviewed mutants)", () => {
  it("each payment's provider share is paid × bps / 10,000, floored: at 2 bps the floors differ, at 5 bps they do not", () => {
    // Owner 1's top-up at 29 as above: 1,942,200 from the escrow, then 149,400 from the deposit.
    // 2 bps: 388 + 29 against 418 of 2,091,600 split once; 5 bps: 971 + 74 = 1,045 either way.
    const at = (bps: number) =>
      cellsOf(
        [
          [1, [...SETUP_ACTIONS]],
          [29, [topUp(1, 0)]],
        ],
        { ...PLAIN_GENESIS, params: { "cbqs.suspend_grace_blocks": "5", "cbqs.rent.provider_bps": String(bps), "cbqs.rent.platform_bps": String(10_000 - bps) } },
      )[1];
    expect(at(2)).toEqual(["outcome: TopUpStream: ok", "state: Active → Active by TopUpStream", `state: ${STATE.paysTwice}`, `state: ${STATE.paysTwiceFloors}`]);
    expect(at(5)).toEqual(["outcome: TopUpStream: ok", "state: Active → Active by TopUpStream", `state: ${STATE.paysTwice}`]);
  });
});

describe("cells a chain must not name (src/fuzz/cells.ts; Stryker survivors)", () => {
  it("a rejected instruction one block before a Suspended stream's deadline is not the settle's NoOpRejected; an UpdateStream that does not reprice names no repricing; a top-up whose deposit pays no block names no settle #2", () => {
    const admin: Action = { k: "update", by: "owner", owner: 1, nonce: 0, key: false, variant: "admin", cap: 0, rotation: "Set", quote: null };
    const [, , b5, b8] = cellsOf([
      [1, [...SETUP_ACTIONS]],
      [2, [settle(2)]], // owner 2: Suspended at 1, deadline 6
      [5, [{ k: "close", by: "other", owner: 2, nonce: 0, key: false }, admin]],
      [8, [topUp(0, null, 5n)]], // owner 0 owes 56,000: settle #1 pays its 40,000 and suspends it; 5 pays no block
    ]);
    expect(b5).toEqual(["outcome: CloseStream: Unauthorized", "outcome: UpdateStream: ok", "state: Active → Active by UpdateStream"]);
    expect(b8).toEqual(["outcome: TopUpStream: ok", "state: Active → Suspended by TopUpStream"]);
  });

  it("after a pause: a deadline still ahead of the physical height is not held back, nor a runway end already below H; a key-stream action names no cell of the main stream's", () => {
    const [, b8, b10, b12] = cellsOf([
      [1, [...SETUP_ACTIONS]],
      [8, [{ k: "pause", variant: "Pause", actor: "registry", blocks: 2n, by: "gov" }]], // paused over [8, 10): H is the height − 2 after it
      [10, [settle(0), settle(0)]], // H 8: owner 0's runway end 6 is below H, not held back; Suspended at 6, deadline 11 — ahead of 10 too
      [12, [{ k: "settle", sender: 0, owner: 0, nonce: 0, key: true }, settle(0)]], // H 10 < 11 ≤ 12; the key stream mirrors the main one, and only the main one is the census's
    ]);
    expect(b8).toEqual(["outcome: Gov.Pause: ok"]);
    expect(b10).toEqual(["outcome: SettleStreamRent: ok", "state: Active → Suspended by SettleStreamRent", "outcome: SettleStreamRent: NoOpRejected"]);
    expect(b12).toEqual([
      "outcome: SettleStreamRent: KeyStreamNotIndependent",
      "outcome: SettleStreamRent: NoOpRejected",
      `state: ${STATE.pauseHoldsDeadline}`,
      `state: ${STATE.settleBeforeDeadline}`,
    ]);
  });
});
