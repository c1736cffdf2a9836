// The fuzz generator: chains are a pure function of (seed, run), start with the setup actions,
// and reach what docs/reference/fuzzer.md says they reach — every instruction accepted and rejected,
// every kind of junk envelope left out by t8n — and land heights on runway ends, grace deadlines
// and pause expiries.
import { describe, expect, it } from "vitest";
import { ChainBuilder, type BuiltBlock } from "../../src/fuzz/build.js";
import { ChainModel, SETUP_ACTIONS, type Action } from "../../src/fuzz/model.js";
import fc from "fast-check";
import { chainArb, chainSize, generateChain, MAX_ACTIONS, MAX_JUNK, runSeed, type FuzzChain, type Junk } from "../../src/fuzz/plan.js";
import { inputTexts } from "../../src/target/target.js";
import type { JsonObject } from "../../src/scenario/json.js";
import { newChain, OWNERS, PLAIN_GENESIS, PROPERTY_WORLD, SPONSOR } from "../../src/fuzz/world.js";
import { RESERVATIONS } from "../../src/engine/meter.js";

function buildAll(plan: FuzzChain): BuiltBlock[] {
  const builder = new ChainBuilder(plan);
  const out: BuiltBlock[] = [];
  while (!builder.done) out.push(builder.build());
  return out;
}

/**
 * docs/reference/fuzzer.md §7, computed independently (BigInt, no Math.imul): murmur3's 32-bit finalizer
 * over (S × 0x9e3779b1 ⊕ i × 0x85ebca77) mod 2^32, as a signed 32-bit integer.
 */
function documentedRunSeed(seed: number, run: number): number {
  const M = 1n << 32n;
  const mul = (a: bigint, b: bigint) => (a * b) % M;
  let h = mul(BigInt(seed), 0x9e3779b1n) ^ mul(BigInt(run), 0x85ebca77n);
  h ^= h >> 16n;
  h = mul(h, 0x85ebca6bn);
  h ^= h >> 13n;
  h = mul(h, 0xc2b2ae35n);
  h ^= h >> 16n;
  return Number(BigInt.asIntN(32, h));
}

/** The nine instructions in §14 tag order (the §18.1 reservation table is keyed by them). */
const INSTRUCTIONS = Object.keys(RESERVATIONS);

describe("fuzz chains (src/fuzz/plan.ts, build.ts)", () => {
  it("the same seed and run give the same chain and the same t8n input bytes; other runs and seeds differ", () => {
    const a = generateChain(42, 3, 4);
    expect(generateChain(42, 3, 4)).toEqual(a);
    const texts = (p: FuzzChain) => buildAll(p).map((b) => inputTexts(b.inputs));
    expect(texts(generateChain(42, 3, 4))).toEqual(texts(a));
    expect(generateChain(42, 4, 4)).not.toEqual(a);
    expect(generateChain(43, 3, 4)).not.toEqual(a);
    expect(new Set([0, 1, 2, 3].map((r) => runSeed(7, r))).size).toBe(4);
  });

  it("has exactly --blocks blocks, the first starting with the setup actions", () => {
    for (let run = 0; run < 5; run++) {
      const plan = generateChain(1, run, 6);
      expect(plan.blocks).toHaveLength(6);
      expect(plan.blocks[0]!.actions.slice(0, SETUP_ACTIONS.length)).toEqual(SETUP_ACTIONS);
      expect(chainSize(plan).blocks).toBe(6);
    }
  });

  it("run i of seed S is fast-check's sample of the chain arbitrary at the documented 32-bit seed (docs/reference/fuzzer.md §7)", () => {
    const pairs: Array<[number, number]> = [[0, 0], [1, 0], [0, 1], [42, 3], [7, 2], [123_456_789, 1_000_000], [4_294_967_295, 4_294_967_295], [2_147_483_648, 12]];
    for (const [seed, run] of pairs) expect(runSeed(seed, run), `seed ${seed} run ${run}`).toBe(documentedRunSeed(seed, run));
    expect(runSeed(0, 0)).toBe(0);
    expect(generateChain(42, 3, 4)).toEqual(fc.sample(chainArb(4), { seed: documentedRunSeed(42, 3), numRuns: 1 })[0]);
  });

  it("only the first block starts with the setup actions", () => {
    for (let run = 0; run < 20; run++) {
      for (const block of generateChain(2, run, 5).blocks.slice(1)) expect(block.actions.slice(0, SETUP_ACTIONS.length)).not.toEqual(SETUP_ACTIONS);
    }
  });

  it("a chain's size is its blocks and its transactions: model actions and junk envelopes", () => {
    const junk: Junk = { kind: "bytes", at: 0, pick: 0, bytes: new Uint8Array(2) };
    const transfer: Action = { k: "transfer", from: 0, to: 1, amount: 1n };
    const plan: FuzzChain = {
      genesis: PLAIN_GENESIS,
      blocks: [
        { gap: { k: "step", blocks: 1 }, actions: [transfer, transfer, transfer], junk: [junk] },
        { gap: { k: "step", blocks: 1 }, actions: [], junk: [junk, junk] },
        { gap: { k: "step", blocks: 1 }, actions: [transfer], junk: [] },
      ],
    };
    expect(chainSize(plan)).toEqual({ blocks: 3, txs: 7 });
    expect(chainSize({ genesis: PLAIN_GENESIS, blocks: [] })).toEqual({ blocks: 0, txs: 0 });
  });

  it("a random block has at most MAX_ACTIONS actions and MAX_JUNK junk envelopes, junk at positions 0…64 made from picks 0…1000, replays twice as likely as each other kind", () => {
    expect([MAX_ACTIONS, MAX_JUNK]).toEqual([6, 2]);
    const actions: number[] = [];
    const junk: Junk[] = [];
    const junkCounts: number[] = [];
    for (let run = 0; run < 300; run++) {
      generateChain(1, run, 8).blocks.forEach((b, i) => {
        // Directed scenarios' blocks carry no junk: a block with junk is a random one.
        if (b.junk.length === 0) return;
        actions.push(b.actions.length - (i === 0 ? SETUP_ACTIONS.length : 0));
        junkCounts.push(b.junk.length);
        junk.push(...b.junk);
      });
    }
    const range = (xs: number[]) => [Math.min(...xs), Math.max(...xs)];
    expect(range(actions)).toEqual([0, MAX_ACTIONS]);
    expect(range(junkCounts)).toEqual([1, MAX_JUNK]);
    expect(range(junk.map((j) => j.at))).toEqual([0, 64]);
    expect(range(junk.map((j) => j.pick))).toEqual([0, 1_000]);
    const kinds = new Map<string, number>();
    for (const j of junk) kinds.set(j.kind, (kinds.get(j.kind) ?? 0) + 1);
    expect([...kinds.keys()].sort()).toEqual(["bytes", "chain", "kind", "nonce", "replay", "trailing", "truncate", "version"]);
    const others = [...kinds].filter(([k]) => k !== "replay").map(([, n]) => n);
    expect(kinds.get("replay")!).toBeGreaterThan(1.5 * Math.max(...others));
  });

  it("a directed scenario's block gets up to four random actions after its (up to four) directed ones; about one block in six carries junk", () => {
    let blocks = 0;
    let withJunk = 0;
    let longest = 0;
    for (let run = 0; run < 300; run++) {
      generateChain(1, run, 8).blocks.forEach((b, i) => {
        blocks++;
        if (b.junk.length > 0) withJunk++;
        // Random blocks have at most MAX_ACTIONS actions: a longer junk-free block is a scenario's.
        else if (i > 0) longest = Math.max(longest, b.actions.length);
      });
    }
    expect(longest).toBe(4 + 4);
    // Three segments in four are a random block, one in four of those with junk; scenarios (no junk) are about a third of the blocks.
    expect(withJunk / blocks).toBeGreaterThan(0.12);
    expect(withJunk / blocks).toBeLessThan(0.22);
  });

  it("reaches every instruction accepted and rejected and gets every kind of junk envelope left out", () => {
    const outcomes = new Set<string>();
    const junk = new Set<string>();
    // 30 runs: directed scenarios (src/fuzz/scenarios.ts) take about a third of the blocks, and carry no junk.
    for (let run = 0; run < 30; run++) {
      const plan = generateChain(11, run, 6);
      for (const block of buildAll(plan)) {
        const result = block.ours.result as { receipts: Array<{ index: string; status: string }>; rejected: Array<{ index: string }> };
        for (const r of result.receipts) outcomes.add(`${block.kinds[Number(r.index)]} ${r.status}`);
        // The builder already insists that t8n leaves out exactly the junk; here: every kind occurs.
        for (const r of result.rejected) junk.add(block.kinds[Number(r.index)]!);
      }
    }
    for (const name of INSTRUCTIONS) {
      expect(outcomes, `${name} ok`).toContain(`${name} ok`);
      expect(outcomes, `${name} rejected`).toContain(`${name} rejected`);
    }
    for (const kind of ["Gov.Pause", "Gov.SetParams", "Transfer", "System(217)"]) expect([...outcomes].some((o) => o.startsWith(kind)), kind).toBe(true);
    expect([...junk].sort()).toEqual(
      [
        "junk: envelope for another chain_id",
        "junk: envelope of an unknown kind",
        "junk: envelope version 2",
        "junk: envelope with a nonce far ahead",
        "junk: envelope with a trailing byte",
        "junk: random bytes",
        "junk: replayed envelope (stale nonce)",
        "junk: truncated envelope",
        // A transfer from the keyless custody account is not includable.
        "not includable: Transfer",
      ].sort(),
    );
  });

  it("a transaction whose sender cannot pay the fee at the reservation is not includable: the builder and t8n leave it out, the sender's next transaction takes its nonce", () => {
    // The generator's balances (at least 5e9) always cover the fee at the reservation at its
    // prices (cycle_price ≤ 1,000), so this class is built by hand: a sponsor holding 10.
    const accounts = { ...(PLAIN_GENESIS["accounts"] as JsonObject), [SPONSOR]: { balance: "10" } };
    const settle: Action = { k: "settle", sender: OWNERS.length, owner: 0, nonce: 0, key: false };
    const transfer: Action = { k: "transfer", from: OWNERS.length + 3, to: 0, amount: 1n }; // TRANSFER_PARTIES: owners, providers, sponsor
    const plan: FuzzChain = {
      genesis: { ...PLAIN_GENESIS, accounts, cycle_price: "1000", cell_price: "1" },
      blocks: [{ gap: { k: "step", blocks: 1 }, actions: [...SETUP_ACTIONS, settle, transfer], junk: [] }],
    };
    const [block] = buildAll(plan); // the builder insists that t8n leaves out exactly the excluded
    const n = SETUP_ACTIONS.length;
    expect(block!.kinds.slice(n)).toEqual(["not includable: SettleStreamRent", "Transfer"]);
    const result = block!.ours.result as { receipts: Array<{ index: string; status: string }>; rejected: Array<{ index: string; error: string }> };
    expect(result.rejected).toEqual([{ index: String(n), error: expect.stringMatching(/^0x5{40} holds 10, less than the fee at the reservation \d+ of SettleStreamRent$/) }]);
    expect(result.receipts.find((r) => r.index === String(n + 1))).toMatchObject({ status: "ok" });
  });

  it("boundary gaps land on the escrow runway end, the pause expiry and the grace deadline (§6.1, Denial of service)", () => {
    const model = new ChainModel(PROPERTY_WORLD);
    const { chain } = newChain(PROPERTY_WORLD);
    chain.executeBlock(model.setupBlock(chain));
    const next = (of: "any" | "deadline" | "runway" | "pauseEnd", offset: number, previous: bigint) => model.nextHeight({ k: "boundary", of, offset }, chain, previous);
    // Owner 0's stream: 8,000 per block (the §6 floor), 40,000 escrow, settled at 1: paid through 6.
    // Owner 2's quoted stream has no escrow: its runway ended at 1, so "one past a runway end" is 2.
    expect([next("runway", -1, 1n), next("runway", 0, 1n), next("runway", 1, 1n)]).toEqual([5n, 6n, 2n]);
    expect(next("deadline", 0, 1n)).toBe(2n); // nothing Suspended: the next height
    const exec = (height: bigint, action: Action) => chain.executeBlock(model.toBlock({ gap: { k: "step", blocks: 1 }, actions: [action] }, chain, height));
    expect(exec(2n, { k: "pause", variant: "Pause", actor: "registry", blocks: 3n, by: "gov" }).outcomes[0]!.status).toBe("ok");
    // Paused over [2, 5): the rent clock stands still for 3 blocks, so the runway ends at physical 9.
    expect([next("pauseEnd", 0, 2n), next("any", 0, 2n), next("runway", 0, 2n)]).toEqual([5n, 5n, 9n]);
    const settle: Action = { k: "settle", sender: 0, owner: 0, nonce: 0, key: false };
    expect(exec(9n, settle).outcomes[0]!.status).toBe("ok"); // paid in full through effective 6
    expect(exec(10n, settle).outcomes[0]!.events.map((e) => e.topic)).toEqual(["cbqs.stream.rent_settled", "cbqs.stream.suspended"]);
    // Suspended at effective 6, grace 5 blocks: deadline 11 effective = physical 14.
    expect([next("deadline", 0, 10n), next("deadline", 1, 10n)]).toEqual([14n, 15n]);
  });
});
