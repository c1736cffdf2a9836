// The random actions and gaps of the fuzz generator (src/fuzz/model.ts actionArb, gapArb) as
// docs/reference/fuzzer.md §4 lists them: from a large sample, exactly the documented values — nonces 0, 1,
// 2 and u64 max, the three providers, quotes at the §6 floor − 1, the floor, odd rates, 2^64 and
// 2^127, at their last valid block, one past it or later, stale and skipped generations, the
// wrong signer, other chains' contexts; escrows and top-ups at the u64/u128 edges, top-ups to the
// rent due ± 1; every update and provider variant; pauses of 0x17 and 0x18 for 0–10 blocks or u64
// max; parameter writes of every name; transfers between every party of u64 amounts; every
// malformed payload; plain steps of 1–12 and 13–2,000 blocks and every boundary ± 1. A value the
// generator stopped producing is a class of chains the fuzzer stopped trying.
// Hand-reviewed mutants of the arbitraries.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { actionArb, blocksArb, gapArb, type Action, type Gap, type QuotePlan } from "../../src/fuzz/model.js";
import { BPS_PAIRS, OWNERS, PARAM_NAMES, PROVIDERS, U128_MAX, U64_MAX } from "../../src/fuzz/world.js";

// Sampled in each test, not once while the file is collected: a mutation test activates its
// mutant per test, and a sample drawn before would test the unmutated generator.
const sampleActions = (): Action[] => fc.sample(actionArb, { seed: 22, numRuns: 40_000 });
const sampleGaps = (): Gap[] => fc.sample(gapArb, { seed: 22, numRuns: 20_000 });

const ofKind = (actions: Action[]) => <K extends Action["k"]>(k: K) => actions.filter((a): a is Extract<Action, { k: K }> => a.k === k);
const sorted = <T>(xs: Iterable<T>): T[] => [...new Set(xs)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
const range = (n: number): number[] => [...Array(n).keys()];
/** Every quote of a creation or an update. */
const quotesOf = (actions: Action[]): QuotePlan[] => actions.flatMap((a) => ((a.k === "create" || a.k === "update") && a.quote !== null ? [a.quote] : []));
/** The u64 amounts of docs/reference/fuzzer.md §4 (0, 1, the §6 floor, escrows of a few blocks to 10^10, u64 max). */
const U64_AMOUNTS = [0n, 1n, 8_000n, 40_000n, 1_000_000n, 100_000_000n, 10_000_000_000n, U64_MAX];

describe("the random actions (src/fuzz/model.ts actionArb, docs/reference/fuzzer.md §4)", () => {
  it("stream references: owner nonces 0, 1, 2 and u64 max (NONCES' four), key streams directly; providers 0, 1 and the unregistered 2; payers every owner and the sponsor", () => {
    const actions = sampleActions();
    const of = ofKind(actions);
    const refs = actions.filter((a): a is Extract<Action, { nonce: number }> => "nonce" in a);
    expect(sorted(refs.map((a) => a.nonce))).toEqual([0, 1, 2, 3]);
    expect(sorted(refs.map((a) => a.owner))).toEqual(range(OWNERS.length));
    for (const k of ["topup", "settle", "close", "update", "activate"] as const) expect(sorted(of(k).map((a) => a.key)), k).toEqual([false, true]);
    for (const k of ["register", "create", "status", "provider"] as const) expect(sorted(of(k).map((a) => a.provider)), k).toEqual([0, 1, 2]);
    expect(sorted(of("topup").map((a) => a.payer))).toEqual(range(OWNERS.length + 1));
    expect(sorted(of("settle").map((a) => a.sender))).toEqual(range(OWNERS.length + 1));
    for (const k of ["close", "update", "activate"] as const) expect(sorted(of(k).map((a) => a.by)), k).toEqual(["other", "owner"]);
  });

  it("quotes: the §6 floor − 1, the floor, odd rates, 2^64 and 2^127; their last valid block, one past it or later; stale and skipped generations; the wrong signer; another chain's or instance's context", () => {
    const actions = sampleActions();
    const of = ofKind(actions);
    const quotes = quotesOf(actions);
    expect(sorted(quotes.map((q) => q.rate))).toEqual([7_999n, 8_000n, 8_001n, 9_000n, 12_345n, 100_000n, 1n << 64n, 1n << 127n]);
    expect(sorted(quotes.map((q) => q.until))).toEqual([-1, 0, 1, 5]);
    expect(sorted(quotes.map((q) => q.generation))).toEqual([-1, 0, 1]);
    expect(sorted(quotes.map((q) => q.signer))).toEqual(["quote", "signing"]);
    expect(sorted(quotes.map((q) => q.context))).toEqual(["chain", "instance", "own"]);
    // With or without a quote.
    for (const k of ["create", "update"] as const) expect(sorted(of(k).map((a) => a.quote === null)), k).toEqual([false, true]);
  });

  it("creations: both classes, encrypted or not, the four capacities, escrows up to u64 max, u64 + 1 and u128 max", () => {
    const actions = sampleActions();
    const of = ofKind(actions);
    const creates = of("create");
    expect(sorted(creates.map((a) => a.cap))).toEqual([0, 1, 2, 3]);
    expect(sorted(creates.map((a) => a.escrow))).toEqual([0n, 8_000n, 40_000n, 200_000n, 2_000_000n, U64_MAX, U64_MAX + 1n, U128_MAX]);
    expect(sorted(creates.map((a) => a.fast))).toEqual([false, true]);
    expect(sorted(creates.map((a) => a.encrypted))).toEqual([false, true]);
  });

  it("top-ups: the u64 and u128 edge amounts, or the rent due exactly, one over or one short", () => {
    const actions = sampleActions();
    const of = ofKind(actions);
    const topups = of("topup");
    expect(sorted(topups.map((a) => a.amount))).toEqual([...U64_AMOUNTS, U64_MAX + 1n, U128_MAX]);
    expect(sorted(topups.flatMap((a) => (a.toDue === null ? [] : [a.toDue])))).toEqual([-1, 0, 1]);
    expect(topups.some((a) => a.toDue === null)).toBe(true);
  });

  it("updates, activations, providers: every variant the docs name", () => {
    const actions = sampleActions();
    const of = ofKind(actions);
    const updates = of("update");
    expect(sorted(updates.map((a) => a.variant))).toEqual(["admin", "bump", "capacity", "noop", "rotation"]);
    expect(sorted(updates.map((a) => a.rotation))).toEqual(["Clear", "Set"]);
    expect(sorted(updates.map((a) => a.cap))).toEqual([0, 1, 2, 3]);
    const acts = of("activate");
    expect(sorted(acts.map((a) => a.generation))).toEqual([-1, 0, 1]);
    expect(sorted(acts.map((a) => a.signer))).toEqual(["other", "own"]);
    expect(sorted(acts.map((a) => a.served))).toEqual(["current", "previous"]);
    expect(sorted(acts.map((a) => a.context))).toEqual(["chain", "instance", "own", "served"]);
    expect(sorted(acts.map((a) => a.bump))).toEqual([false, true]);
    expect(sorted(of("register").map((a) => a.endpoints))).toEqual(["https", "loopback", "three", "wss"]);
    const providers = of("provider");
    expect(sorted(providers.map((a) => a.variant))).toEqual(["admission", "endpoints", "noop", "signing"]);
    expect(sorted(providers.map((a) => a.caps))).toEqual(["above", "ample", "below", "exact"]);
    expect(sorted(providers.map((a) => a.accepts))).toEqual([false, true]);
    expect(sorted(providers.map((a) => a.endpoints))).toEqual(["loopback", "three", "wss"]);
    expect(sorted(of("status").map((a) => a.status))).toEqual(["Active", "Deregistered", "Draining"]);
  });

  it("governance: Pause, ExtendPause and Unpause of 0x17 and 0x18 for 0–10 blocks or u64 max; writes of every parameter name, the rent split pairs; by governance or not", () => {
    const actions = sampleActions();
    const of = ofKind(actions);
    const pauses = of("pause");
    expect(sorted(pauses.map((a) => a.variant))).toEqual(["ExtendPause", "Pause", "Unpause"]);
    expect(sorted(pauses.map((a) => a.actor))).toEqual(["platform", "registry"]);
    expect(sorted(pauses.map((a) => a.blocks))).toEqual([...range(11).map(BigInt), U64_MAX]);
    expect(sorted(pauses.map((a) => a.by))).toEqual(["gov", "other"]);
    const params = of("param");
    expect(sorted(params.map((a) => a.by))).toEqual(["gov", "other"]);
    // Up to two writes: none, one (a SetParam) or two (a SetParams).
    expect(sorted(params.map((a) => a.writes.length))).toEqual([0, 1, 2]);
    expect(sorted(params.flatMap((a) => a.writes.map((w) => w.name)))).toEqual(range(PARAM_NAMES.length));
    expect(sorted(params.flatMap((a) => (a.split === null ? [] : [a.split])))).toEqual(range(BPS_PAIRS.length));
    expect(params.some((a) => a.split === null)).toBe(true);
  });

  it("native transfers between every party (owners, providers, sponsor, 0x17) of the u64 amounts; malformed payloads of every kind", () => {
    const actions = sampleActions();
    const of = ofKind(actions);
    const transfers = of("transfer");
    const parties = OWNERS.length + PROVIDERS.length + 2;
    expect(sorted(transfers.map((a) => a.from))).toEqual(range(parties));
    expect(sorted(transfers.map((a) => a.to))).toEqual(range(parties));
    expect(sorted(transfers.map((a) => a.amount))).toEqual(U64_AMOUNTS);
    const raws = of("raw");
    expect(sorted(raws.map((a) => a.variant))).toEqual(["bytes", "flip", "opcode", "truncate", "version"]);
    // Random bytes of 0–40 bytes (fast-check's default size draws at most 10); flips and cuts anywhere in a valid instruction.
    expect(sorted(raws.map((a) => a.payload.length))).toEqual(range(11));
    expect(Math.max(...raws.map((a) => a.at))).toBeGreaterThan(900);
    expect(Math.max(...raws.map((a) => a.at))).toBeLessThanOrEqual(1_000);
  });
});

describe("the random gaps (src/fuzz/model.ts gapArb, docs/reference/fuzzer.md §4 Gaps)", () => {
  it("plain steps of 1–12 blocks, sometimes 13–2,000; boundaries of every kind, the boundary itself or ± 1", () => {
    const gaps = sampleGaps();
    const steps = gaps.flatMap((g) => (g.k === "step" ? [g.blocks] : []));
    expect(sorted(steps.filter((b) => b <= 12))).toEqual(range(12).map((i) => i + 1));
    expect(Math.min(...steps)).toBe(1);
    expect(Math.max(...steps)).toBeGreaterThan(1_900);
    expect(Math.max(...steps)).toBeLessThanOrEqual(2_000);
    const boundaries = gaps.filter((g): g is Extract<Gap, { k: "boundary" }> => g.k === "boundary");
    expect(sorted(boundaries.map((g) => g.of))).toEqual(["any", "deadline", "pauseEnd", "runway"]);
    expect(sorted(boundaries.map((g) => g.offset))).toEqual([-1, 0, 1]);
    // "The boundary itself most often".
    const at = boundaries.filter((g) => g.offset === 0).length;
    expect(at).toBeGreaterThan(boundaries.filter((g) => g.offset === 1).length * 2);
    expect(at).toBeGreaterThan(boundaries.filter((g) => g.offset === -1).length * 2);
  });
});

describe("the random block plans (src/fuzz/model.ts blocksArb; Stryker survivors of 2026-12-06)", () => {
  it("a chain of blocksArb(maxBlocks, maxTxs) has 1 to maxBlocks blocks, each of 0 to maxTxs actions, every count reached", () => {
    const chains = fc.sample(blocksArb(3, 2), { seed: 22, numRuns: 500 });
    expect(sorted(chains.map((c) => c.length))).toEqual([1, 2, 3]);
    expect(sorted(chains.flatMap((c) => c.map((b) => b.actions.length)))).toEqual([0, 1, 2]);
  });
});
