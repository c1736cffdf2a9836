// The directed scenarios (src/fuzz/scenarios.ts) as docs/reference/fuzzer.md §4 lists them: from a
// large sample of the scenario arbitrary, exactly the twelve documented shapes (blocks, actions,
// focuses, gaps), each about as often as its weight, with the documented values: graces of 5, 8
// or 20, boundary offsets, top-ups to the rent due ± 1, the biting rent splits, 1–10-block
// pauses or u64 max, two to eight live-scalar writes, quotes at their last block or one past it,
// quotes for another chain, 2^127 a block.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { LIVE_SCALARS } from "../../src/params.js";
import type { Action, BlockPlan, Gap, QuotePlan } from "../../src/fuzz/model.js";
import { scenarioArb } from "../../src/fuzz/scenarios.js";
import { BPS_PAIRS, GRACE_VALUES, OWNERS, PARAM_NAMES, U64_MAX } from "../../src/fuzz/world.js";

const SAMPLES = 4_000;
const plans = fc.sample(scenarioArb, { seed: 22, numRuns: SAMPLES });

const act = (a: Action): string => `${a.k}${"focus" in a && a.focus !== undefined ? `:${a.focus}` : ""}${a.k === "pause" ? `:${a.variant}` : ""}`;
const gapText = (g: Gap): string => (g.k === "step" ? "step" : `${g.of}`);
const shape = (p: BlockPlan[]): string => p.map((b) => `${gapText(b.gap)} ${b.actions.map(act).join(",")}`).join(" | ");

const MATERIALIZE = "runway param,settle:arrears";
/** The documented scenarios: name, weight, shapes. */
const SCENARIOS: Array<[string, number, string[]]> = [
  ["expiry", 2, [`${MATERIALIZE} | deadline settle:suspended`]],
  ["reactivation", 3, [`${MATERIALIZE} | deadline topup:suspended`, `${MATERIALIZE} | step topup:suspended`]],
  ["two payments", 3, ["runway param,topup:arrears"]],
  ["a pause over a deadline", 2, [`${MATERIALIZE} | step pause:Pause | deadline topup:suspended`, `${MATERIALIZE} | step pause:Pause | deadline settle:suspended`]],
  ["closing a Suspended stream", 2, [`${MATERIALIZE} | step close:suspended`, `${MATERIALIZE} | deadline close:suspended`]],
  ["a generation chain", 1, ["step activate:encrypted | step activate:encrypted"]],
  ["caps at the reservation", 2, ["step provider,update:base,create"]],
  ["an extended pause", 1, ["step pause:Pause,pause:ExtendPause"]],
  ["live-scalar writes", 3, ["step param,update:base"]],
  ["quotes at their last block", 2, ["step update:quoted,update:quoted,create"]],
  ["rent due past u128", 2, ["step create | step update:quoted | step update:priciest,topup:priciest,settle:priciest,close:priciest"]],
  ["a pause's expiry", 4, ["step pause:Pause | pauseEnd settle:arrears", "step pause:Pause | pauseEnd topup:arrears", "step pause:Pause | pauseEnd activate:encrypted"]],
];
const TOTAL = SCENARIOS.reduce((n, [, w]) => n + w, 0);

const of = <K extends Action["k"]>(k: K) => plans.flatMap((p) => p.flatMap((b) => b.actions.filter((a): a is Extract<Action, { k: K }> => a.k === k)));
const values = <T>(xs: T[]): T[] => [...new Set(xs.map((x) => JSON.stringify(x, (_, v: unknown) => (typeof v === "bigint" ? `${v}n` : v))))].sort().map((s) => JSON.parse(s, (_, v: unknown) => (typeof v === "string" && /^-?\d+n$/.test(v) ? BigInt(v.slice(0, -1)) : v)) as T);
const sorted = <T>(xs: Iterable<T>): T[] => [...new Set(xs)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
/** The plans whose shape is one of a scenario's. */
const scenario = (name: string): BlockPlan[][] => plans.filter((p) => SCENARIOS.find(([n]) => n === name)![2].includes(shape(p)));

describe("the directed scenarios (src/fuzz/scenarios.ts, docs/reference/fuzzer.md §4)", () => {
  it("every scenario is one of the twelve documented shapes, each about as often as its weight", () => {
    const counts = new Map<string, number>();
    for (const p of plans) {
      const found = SCENARIOS.find(([, , shapes]) => shapes.includes(shape(p)));
      expect(found, shape(p)).toBeDefined();
      counts.set(found![0], (counts.get(found![0]) ?? 0) + 1);
    }
    for (const [name, weight, shapes] of SCENARIOS) {
      const share = (counts.get(name) ?? 0) / SAMPLES;
      expect(share, name).toBeGreaterThan((0.75 * weight) / TOTAL);
      expect(share, name).toBeLessThan((1.25 * weight) / TOTAL);
      // Every documented variant of it occurs.
      for (const s of shapes) expect(plans.some((p) => shape(p) === s), s).toBe(true);
    }
  });

  it("gaps: one to three blocks past a runway end (or eight), the deadline −2 … +1, a pause's expiry or one block before; steps of 1–4 blocks", () => {
    const gaps = plans.flatMap((p) => p.map((b) => b.gap));
    const offsets = (kind: string) => sorted(gaps.flatMap((g) => (g.k === "boundary" && g.of === kind ? [g.offset] : [])));
    expect(offsets("runway")).toEqual([1, 2, 3, 8]);
    expect(offsets("deadline")).toEqual([-2, -1, 0, 1]);
    expect(offsets("pauseEnd")).toEqual([-1, 0]);
    expect(offsets("any")).toEqual([]);
    expect(sorted(gaps.flatMap((g) => (g.k === "step" ? [g.blocks] : [])))).toEqual([1, 2, 3, 4]);
    // The suspension: one or two past a runway end; the two payments: one to three or eight.
    expect(sorted(plans.filter((p) => shape(p).startsWith(MATERIALIZE)).map((p) => (p[0]!.gap as { offset: number }).offset))).toEqual([1, 2]);
    expect(sorted(scenario("two payments").map((p) => (p[0]!.gap as { offset: number }).offset))).toEqual([1, 2, 3, 8]);
    // Settled exactly at the deadline, one before or one after; a pause over it ± 1; closed at or after it, or a step or two after the suspension.
    expect(sorted(scenario("expiry").map((p) => (p[1]!.gap as { offset: number }).offset))).toEqual([-1, 0, 1]);
    expect(sorted(scenario("a pause over a deadline").map((p) => (p[2]!.gap as { offset: number }).offset))).toEqual([-1, 0, 1]);
    expect(sorted(scenario("a pause over a deadline").map((p) => (p[1]!.gap as { blocks: number }).blocks))).toEqual([1]);
    expect(values(scenario("closing a Suspended stream").map((p) => p[1]!.gap))).toEqual(
      values([{ k: "boundary", of: "deadline", offset: 0 }, { k: "boundary", of: "deadline", offset: 1 }, { k: "step", blocks: 1 }, { k: "step", blocks: 2 }] as Gap[]),
    );
    expect(sorted(scenario("reactivation").map((p) => (p[1]!.gap.k === "step" ? `step ${p[1]!.gap.blocks}` : `deadline ${p[1]!.gap.offset}`)))).toEqual(["deadline -1", "deadline -2", "deadline 0", "step 1", "step 2"]);
    // The rent due past u128: the stale blocks two to four after the repricing.
    expect(sorted(scenario("rent due past u128").map((p) => (p[2]!.gap as { blocks: number }).blocks))).toEqual([2, 3, 4]);
  });

  it("the suspension's grace is 5, 8 or 20 blocks; the two payments' splits are the biting ones", () => {
    const suspensions = plans.filter((p) => shape(p).startsWith(MATERIALIZE)).map((p) => p[0]!.actions[0] as Extract<Action, { k: "param" }>);
    expect(values(suspensions.map((a) => ({ by: a.by, split: a.split, names: a.writes.map((w) => PARAM_NAMES[w.name]) })))).toEqual([{ by: "gov", split: null, names: ["cbqs.suspend_grace_blocks"] }]);
    expect(sorted(suspensions.map((a) => GRACE_VALUES[a.writes[0]!.value]))).toEqual([5n, 8n, 20n]);
    const splits = scenario("two payments").map((p) => p[0]!.actions[0] as Extract<Action, { k: "param" }>);
    expect(values(splits.map((a) => ({ by: a.by, writes: a.writes })))).toEqual([{ by: "gov", writes: [] }]);
    expect(values(splits.map((a) => BPS_PAIRS[a.split!]))).toEqual(values([[9_999n, 1n], [1n, 9_999n], [3_333n, 6_667n]]));
  });

  it("top-ups: to the rent due, one over it, one short or far over; settles and top-ups of the setup streams, by an owner or the sponsor", () => {
    const topups = of("topup").filter((a) => a.focus !== undefined);
    expect(sorted(topups.map((a) => a.toDue!))).toEqual([-1, 0, 1, 1_000_000]);
    expect(values(topups.map((a) => ({ amount: a.amount, nonce: a.nonce, key: a.key })))).toEqual([{ amount: 1n, nonce: 0, key: false }]);
    expect(sorted(topups.map((a) => a.payer))).toEqual([...OWNERS.keys(), OWNERS.length]);
    expect(sorted(topups.map((a) => a.owner))).toEqual([...OWNERS.keys()]);
    const settles = of("settle");
    expect(sorted(settles.map((a) => a.sender))).toEqual([...OWNERS.keys(), OWNERS.length]);
    expect(sorted(settles.map((a) => a.owner))).toEqual([...OWNERS.keys()]);
    expect(values(settles.map((a) => ({ nonce: a.nonce, key: a.key })))).toEqual([{ nonce: 0, key: false }]);
    expect(values(of("close").map((a) => ({ by: a.by, nonce: a.nonce, key: a.key })))).toEqual([{ by: "owner", nonce: 0, key: false }]);
  });

  it("pauses of 0x17 by governance: 1–10 blocks, extended by 1–10 or u64 max", () => {
    const pauses = of("pause");
    expect(values(pauses.map((a) => ({ actor: a.actor, by: a.by })))).toEqual([{ actor: "registry", by: "gov" }]);
    expect(sorted(pauses.filter((a) => a.variant === "Pause").map((a) => a.blocks))).toEqual([1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n, 9n, 10n]);
    expect(sorted(pauses.filter((a) => a.variant === "ExtendPause").map((a) => a.blocks))).toEqual([1n, 2n, 3n, 4n, 5n, 6n, 7n, 8n, 9n, 10n, U64_MAX]);
  });

  it("live-scalar writes: two to eight distinct live scalars, never the rent split, at their minimum, maximum or default", () => {
    const writes = scenario("live-scalar writes").map((p) => p[0]!.actions[0] as Extract<Action, { k: "param" }>);
    expect(values(writes.map((a) => ({ by: a.by, split: a.split })))).toEqual([{ by: "gov", split: null }]);
    expect(sorted(writes.map((a) => a.writes.length))).toEqual([2, 3, 4, 5, 6, 7, 8]);
    for (const a of writes) expect(new Set(a.writes.map((w) => w.name)).size).toBe(a.writes.length);
    const names = sorted(writes.flatMap((a) => a.writes.map((w) => PARAM_NAMES[w.name]!)));
    expect(names).toEqual(sorted(LIVE_SCALARS.filter((n) => !n.startsWith("cbqs.rent."))));
    expect(sorted(writes.flatMap((a) => a.writes.map((w) => w.value)))).toEqual([0, 1, 3]);
  });

  it("capacity updates by the owner (rotation key Set) and creations: the documented quotes, capacities, escrows and nonces", () => {
    const updates = of("update") as Array<Extract<Action, { k: "update" }> & { cap: number; rotation: string; quote: QuotePlan | null; variant: string }>;
    expect(values(updates.map((a) => ({ by: a.by, nonce: a.nonce, key: a.key, variant: a.variant, rotation: a.rotation })))).toEqual([{ by: "owner", nonce: 0, key: false, variant: "capacity", rotation: "Set" }]);
    const quoted = (k: (q: QuotePlan) => unknown) => values(updates.filter((a) => a.focus === "quoted").map((a) => k(a.quote!)));
    // The repricing quotes: at their last block or one past it; for another chain; 2^127 a block.
    expect(quoted((q) => q.context)).toEqual(["chain", "instance", "own"]);
    const own = updates.filter((a) => a.focus === "quoted" && a.quote!.context === "own").map((a) => a.quote!);
    expect(values(own.filter((q) => q.rate !== 1n << 127n).map((q) => [q.rate, q.until]).flat().filter((x) => typeof x === "number"))).toEqual([-1, 0]);
    expect(sorted(own.map((q) => q.rate))).toEqual([8_000n, 8_001n, 9_000n, 12_345n, 100_000n, 1n << 127n]);
    expect(values(own.filter((q) => q.rate === 1n << 127n).map((q) => q.until))).toEqual([5]);
    expect(values(updates.filter((a) => a.focus === "quoted" && a.quote!.context !== "own").map((a) => [a.quote!.rate, a.quote!.until]))).toEqual([[9_000n, 5]]);
    expect(values(updates.flatMap((a) => (a.quote === null ? [] : [{ signer: a.quote.signer, generation: a.quote.generation }])))).toEqual([{ signer: "quote", generation: 0 }]);
    // Capacities: any of the three nonzero ones; the 2^127 repricing not the created capacity (0).
    expect(sorted(updates.filter((a) => a.quote?.rate !== 1n << 127n).map((a) => a.cap))).toEqual([0, 1, 2]);
    expect(sorted(updates.filter((a) => a.quote?.rate === 1n << 127n).map((a) => a.cap))).toEqual([1, 2]);
    expect(values(updates.filter((a) => a.focus === "base" || a.focus === "priciest").map((a) => a.quote))).toEqual([null]);
    const creates = of("create");
    expect(sorted(creates.map((a) => a.nonce))).toEqual([1, 2]);
    expect(sorted(scenario("caps at the reservation").map((p) => (p[0]!.actions[2] as Extract<Action, { k: "create" }>).escrow))).toEqual([200_000n]);
    expect(sorted(scenario("quotes at their last block").map((p) => (p[0]!.actions[2] as Extract<Action, { k: "create" }>).escrow))).toEqual([0n, 200_000n]);
    const priciest = scenario("rent due past u128").map((p) => p[0]!.actions[0] as Extract<Action, { k: "create" }>);
    expect(values(priciest.map((a) => ({ cap: a.cap, escrow: a.escrow, quote: a.quote })))).toEqual([{ cap: 0, escrow: 2_000_000n, quote: { rate: 9_000n, until: 5, signer: "quote", generation: 0, context: "own" } }]);
    expect(sorted(scenario("caps at the reservation").map((p) => (p[0]!.actions[2] as Extract<Action, { k: "create" }>).provider))).toEqual([0]);
    expect(sorted(scenario("quotes at their last block").map((p) => (p[0]!.actions[2] as Extract<Action, { k: "create" }>).provider))).toEqual([0, 1]);
    const caps = scenario("caps at the reservation").map((p) => p[0]!.actions[0] as Extract<Action, { k: "provider" }> & { caps: string; accepts: boolean; endpoints: string; variant: string });
    expect(values(caps.map((a) => ({ provider: a.provider, variant: a.variant, caps: a.caps, endpoints: a.endpoints })))).toEqual([{ provider: 0, variant: "admission", caps: "exact", endpoints: "wss" }]);
    expect(sorted(caps.map((a) => a.accepts))).toEqual([false, true]);
  });

  it("key activations of an encrypted stream by its owner, generation 0, served the previous one", () => {
    const acts = of("activate") as Array<Extract<Action, { k: "activate" }> & Record<string, unknown>>;
    expect(values(acts.map(({ bump: _bump, owner: _owner, ...rest }) => rest))).toEqual([
      { k: "activate", by: "owner", nonce: 0, key: false, generation: 0, signer: "own", served: "previous", context: "own", focus: "encrypted" },
    ]);
    expect(sorted(acts.map((a) => a.bump))).toEqual([false, true]);
  });
});

describe("the directed scenarios' weights and the weights of their values (src/fuzz/scenarios.ts, hand-reviewed mutants)", () => {
  const N = 20_000;
  const many = fc.sample(scenarioArb, { seed: 7, numRuns: N });
  /** Within four standard deviations of a binomial share p of n draws (a weight one off moves a share well past it). */
  const near = (count: number, n: number, p: number, what: string) => {
    expect(Math.abs(count / n - p), `${what}: ${count} of ${n}, expected a share of ${p.toFixed(4)}`).toBeLessThan(4 * Math.sqrt((p * (1 - p)) / n));
  };
  const named = (name: string) => many.filter((p) => SCENARIOS.find(([n]) => n === name)![2].includes(shape(p)));
  /** The shares of a gap's words ("deadline -1", "step") among the given gaps. */
  const shares = (gaps: Gap[], expected: Record<string, number>, what: string) => {
    const word = (g: Gap) => (g.k === "step" ? "step" : `${g.of} ${g.offset}`);
    expect(sorted(gaps.map(word)), what).toEqual(sorted(Object.keys(expected)));
    for (const [w, p] of Object.entries(expected)) near(gaps.filter((g) => word(g) === w).length, gaps.length, p, `${what} ${w}`);
  };

  it("each scenario is drawn in proportion to its documented weight", () => {
    for (const [name, weight] of SCENARIOS) near(named(name).length, N, weight / TOTAL, name);
  });

  it("the boundary itself most often: one past a runway end twice as often as two, the deadline and a pause's expiry at their weights, steps as often as boundaries where both are drawn", () => {
    const suspensions = many.filter((p) => shape(p).startsWith(MATERIALIZE)).map((p) => p[0]!.gap);
    shares(suspensions, { "runway 1": 2 / 3, "runway 2": 1 / 3 }, "the suspension");
    shares(named("expiry").map((p) => p[1]!.gap), { "deadline 0": 1 / 2, "deadline -1": 1 / 4, "deadline 1": 1 / 4 }, "expiry");
    shares(named("reactivation").map((p) => p[1]!.gap), { "deadline -1": 1 / 4, "deadline -2": 1 / 8, "deadline 0": 1 / 8, step: 1 / 2 }, "reactivation");
    shares(named("two payments").map((p) => p[0]!.gap), { "runway 1": 1 / 4, "runway 2": 1 / 4, "runway 3": 1 / 4, "runway 8": 1 / 4 }, "two payments");
    shares(named("a pause over a deadline").map((p) => p[2]!.gap), { "deadline -1": 1 / 3, "deadline 0": 1 / 3, "deadline 1": 1 / 3 }, "a pause over a deadline");
    shares(named("closing a Suspended stream").map((p) => p[1]!.gap), { "deadline 0": 1 / 4, "deadline 1": 1 / 4, step: 1 / 2 }, "closing");
    shares(named("a pause's expiry").map((p) => p[1]!.gap), { "pauseEnd 0": 3 / 4, "pauseEnd -1": 1 / 4 }, "a pause's expiry");
  });
});
