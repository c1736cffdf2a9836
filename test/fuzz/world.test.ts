// The fuzz world (src/fuzz/world.ts): every random genesis document is one Chain.genesis accepts,
// with the fixed cast's accounts, a rent split summing to 10,000, a short grace window (or the
// default), the balance kinds up to the u64 total-supply edge and the parameter overrides it is
// there to move; the shrinker's plain genesis and the property tests' world are what they say.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { paramMinimum } from "../../src/engine/governance.js";
import { paramRow } from "../../src/params.js";
import type { JsonObject } from "../../src/scenario/json.js";
import { BPS_PAIRS, GOV, GRACE_VALUES, genesisArb, newChain, OWNERS, PLAIN_GENESIS, PROPERTY_WORLD, PROVIDERS, SPONSOR, U64_MAX, worldFromJson } from "../../src/fuzz/world.js";

const HOLDERS = [...OWNERS, ...PROVIDERS];
const balances = (g: JsonObject): Map<string, bigint> => new Map(Object.entries(g["accounts"] as Record<string, { balance: string }>).map(([a, e]) => [a, BigInt(e.balance)]));

describe("the fuzz world (src/fuzz/world.ts)", () => {
  // Sampled in each test, not once while the file is collected: a mutation test activates its
  // mutant per test, and a sample drawn before would test the unmutated generator.
  const sample = (): JsonObject[] => fc.sample(genesisArb, { seed: 5, numRuns: 400 });

  it("every random genesis is accepted by Chain.genesis, with the cast's accounts, a rent split of 10,000 and a grace window of the list", () => {
    const geneses = sample();
    for (const g of geneses) {
      expect(() => newChain(worldFromJson(g)), JSON.stringify(g)).not.toThrow();
      expect(g["governance"]).toBe(GOV);
      expect([...balances(g).keys()]).toEqual([...HOLDERS, SPONSOR]);
      const params = g["params"] as Record<string, string>;
      expect(BigInt(params["cbqs.rent.provider_bps"]!) + BigInt(params["cbqs.rent.platform_bps"]!)).toBe(10_000n);
      expect([...GRACE_VALUES, 604_800n]).toContain(BigInt(params["cbqs.suspend_grace_blocks"]!));
    }
    for (const [p, q] of BPS_PAIRS) expect(p + q).toBe(10_000n);
  });

  it("the chain id, times, grace windows and fees include their edges", () => {
    const geneses = sample();
    const seen = (f: (g: JsonObject) => unknown) => [...new Set(geneses.map((g) => BigInt(f(g) as string)))].sort((a, b) => (a < b ? -1 : 1));
    expect(seen((g) => g["chain_id"]).filter((id) => [0n, 1n, 7n, U64_MAX].includes(id))).toEqual([0n, 1n, 7n, U64_MAX]);
    expect(seen((g) => g["timestamp"])).toEqual([0n, 1_767_225_600n, 1n << 62n]);
    expect(seen((g) => g["block_time_seconds"])).toEqual([0n, 1n, 6n]);
    expect(seen((g) => (g["params"] as Record<string, string>)["cbqs.suspend_grace_blocks"])).toEqual([...GRACE_VALUES, 604_800n]);
    expect(seen((g) => g["cycle_price"])).toEqual([0n, 1n, 1_000n]);
    expect(seen((g) => g["cell_price"])).toEqual([0n, 1n]);
  });

  it("balances: every holder the same poor, modest or rich amount; at max-supply the sponsor holds the rest of u64 exactly", () => {
    const geneses = sample();
    const seen = new Set<string>();
    for (const g of geneses) {
      const b = balances(g);
      const each = b.get(HOLDERS[0]!)!;
      for (const a of HOLDERS) expect(b.get(a)).toBe(each);
      expect([5_000_000_000n, 20_000_000_000n, 10n ** 15n]).toContain(each);
      const sponsor = b.get(SPONSOR)!;
      const total = [...b.values()].reduce((n, x) => n + x, 0n);
      if (sponsor === each) seen.add(String(each));
      else {
        expect([each, total]).toEqual([10n ** 15n, U64_MAX]);
        seen.add("max-supply");
      }
    }
    expect([...seen].sort()).toEqual(["1000000000000000", "20000000000", "5000000000", "max-supply"]);
  });

  it("the genesis moves base rates and live scalars, each to a value of its list", () => {
    const geneses = sample();
    const values = new Map<string, Set<string>>();
    for (const g of geneses) for (const [name, v] of Object.entries(g["params"] as Record<string, string>)) values.set(name, (values.get(name) ?? new Set()).add(v));
    const sorted = (name: string) => [...(values.get(name) ?? [])].map(BigInt).sort((a, b) => (a < b ? -1 : 1));
    expect(sorted("cbqs.base_rate.standard.retained_unit_rate_per_block")).toEqual([1n, 8_001n, 12_345n, 1_000_000_000n]);
    expect(sorted("cbqs.base_rate.fast.throughput_unit_rate_per_block")).toEqual([1n, 8_003n, 77_777n]);
    expect(sorted("cbqs.base_rate.standard.delivered_unit_bytes_per_sec")).toEqual([1n, 1_000_003n]);
    expect(sorted("cbqs.base_rate.fast.retained_unit_bytes")).toEqual([1n, 999_999_937n]);
    expect(sorted("cbqs.max_provider_endpoints")).toEqual([1n, 2n]);
    expect(sorted("cbqs.max_inline_message_bytes")).toEqual([1_023n, 1_024n, 1_025n]);
    expect(sorted("cbqs.max_lanes_per_stream")).toEqual([1n]);
    const owner = paramRow("cbqs.max_streams_per_owner")!;
    expect(sorted("cbqs.max_streams_per_owner")).toEqual([...new Set([1n, 2n, paramMinimum(owner.name), owner.maximum, owner.default])].sort((a, b) => (a < b ? -1 : 1)));
    // One genesis in three moves no live scalar (fc.option with freq 3).
    const moved = geneses.filter((g) => Object.keys(g["params"] as object).some((n) => n.startsWith("cbqs.max_")));
    expect(moved.length).toBeGreaterThan(0);
    expect(moved.length).toBeLessThan(geneses.length);
  });

  it("the plain genesis: chain 7 from time 0, one-second blocks, grace 5, rich accounts, no fees; the property world prices nothing", () => {
    expect(PLAIN_GENESIS).toEqual({
      chain_id: "7",
      timestamp: "0",
      block_time_seconds: "1",
      governance: GOV,
      params: { "cbqs.suspend_grace_blocks": "5" },
      accounts: Object.fromEntries([...HOLDERS, SPONSOR].map((a) => [a, { balance: "1000000000000000" }])),
      cycle_price: "0",
      cell_price: "0",
    });
    expect([PROPERTY_WORLD.config.cycle_price, PROPERTY_WORLD.config.cell_price]).toEqual([0n, 0n]);
    expect(PROPERTY_WORLD.config.accounts.map((a) => a.balance)).toEqual(Array(7).fill(10n ** 15n));
  });
});
