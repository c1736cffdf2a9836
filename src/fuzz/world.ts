// The fixed cast every generated chain acts in (three owners, three provider addresses, a
// sponsor, governance) and the genesis it starts from: one fixed genesis for the engine property
// tests, and a fast-check arbitrary of valid genesis documents for `cbqs fuzz` (random chain id,
// timestamps, §18 parameters at their bounds, balances up to the u64 total-supply edge, fees).
import fc from "fast-check";
import { fromHex, utf8 } from "../bytes.js";
import type { GenesisConfig } from "../engine/inputs.js";
import { chainInstanceId } from "../codec/derive.js";
import { Chain } from "../engine/chain.js";
import { paramMinimum } from "../engine/governance.js";
import { LIVE_SCALARS, paramRow } from "../params.js";
import { canonicalJson, parseGenesis } from "../scenario/genesis.js";
import type { JsonObject } from "../scenario/json.js";
import { createStateCommitment } from "../../state/qmdb/index.js";
import { MemoryStateStore } from "../../state/store/store.js";

const addr = (b: string): string => "0x" + b.repeat(20);
export const U64_MAX = (1n << 64n) - 1n;
export const U128_MAX = (1n << 128n) - 1n;

export const GOV = addr("aa");
export const OWNERS = [addr("11"), addr("12"), addr("13")];
/** The setup block registers the first two; the third registers only when an action says so. */
export const PROVIDERS = [addr("21"), addr("22"), addr("23")];
export const SPONSOR = addr("55");
export const REGISTRY = "0x0000000000000000000000000000000000000017";

/** Ed25519 seeds: provider signing keys, quote keys, the keys an UpdateProvider rotates to, stream keys. */
export const SIGN_SEEDS = ["51", "53", "57"].map((b) => "0x" + b.repeat(32));
export const QUOTE_SEEDS = ["52", "54", "58"].map((b) => "0x" + b.repeat(32));
export const ROTATED_SIGN_SEEDS = ["5a", "5b", "5c"].map((b) => "0x" + b.repeat(32));
export const ADMIN_SEEDS = ["61", "62"].map((b) => "0x" + b.repeat(32));
export const ROTATION_SEED = "0x" + "63".repeat(32);

/** A genesis and the exact bytes that define its chain_instance_id (CIP-39 §3). */
export interface World {
  config: GenesisConfig;
  source: Uint8Array;
  chainInstanceId: Uint8Array;
}

export function worldOf(config: GenesisConfig, source: Uint8Array): World {
  return { config, source, chainInstanceId: chainInstanceId(source) };
}

export function newChain(world: World): { chain: Chain; store: MemoryStateStore } {
  const store = new MemoryStateStore(createStateCommitment());
  return { chain: Chain.genesis(world.config, world.source, store), store };
}

// ---- the property tests' genesis --------------------------------------------------------------

const PROPERTY_BALANCE = 10n ** 15n;

/** Zero prices, so the property tests can assert that CBY is conserved. */
export const PROPERTY_WORLD: World = worldOf(
  {
    chain_id: 7n,
    timestamp: 0n,
    block_time_seconds: 1n,
    governance: fromHex(GOV),
    params: new Map([["cbqs.suspend_grace_blocks", 5n]]),
    accounts: [...OWNERS, ...PROVIDERS, SPONSOR].map((a) => ({ address: fromHex(a), balance: PROPERTY_BALANCE })),
    cycle_price: 0n,
    cell_price: 0n,
  },
  utf8("cbqs-property-genesis"),
);

// ---- random genesis documents (cbqs fuzz) --------------------------------------------------------

/** A genesis as scenario-format §2 JSON; its canonical serialization is the fixture's genesis source. */
export type GenesisJson = JsonObject;

/** Genesis JSON → world; the source bytes are the canonical serialization (D-0069). */
export function worldFromJson(genesis: GenesisJson): World {
  return worldOf(parseGenesis(genesis, "genesis"), utf8(canonicalJson(genesis)));
}

const s = (v: bigint | number): string => v.toString();

/** Values of one live scalar that sit on its §18 bounds (minimum, maximum) or are typical. */
function scalarValues(name: string): bigint[] {
  const row = paramRow(name)!;
  return [paramMinimum(name), row.maximum, row.default];
}

/** Rent split pairs (provider_bps, platform_bps) summing to 10,000 (§6.1), chosen so that floors bite. */
export const BPS_PAIRS: Array<[bigint, bigint]> = [
  [9_000n, 1_000n],
  [9_999n, 1n],
  [1n, 9_999n],
  [3_333n, 6_667n],
  [10_000n, 0n],
  [0n, 10_000n],
];

/** Short grace windows so suspensions reach their deadline inside a generated chain. */
export const GRACE_VALUES = [0n, 1n, 2n, 3n, 5n, 8n, 20n];

/** Odd unit rates and sizes make base rates that are not multiples of 10 (provider-share floors). */
const BASE_RATE_OVERRIDES: Array<[string, bigint[]]> = [
  ["cbqs.base_rate.standard.retained_unit_rate_per_block", [1n, 8_001n, 12_345n, 1_000_000_000n]],
  ["cbqs.base_rate.fast.throughput_unit_rate_per_block", [1n, 8_003n, 77_777n]],
  ["cbqs.base_rate.standard.delivered_unit_bytes_per_sec", [1n, 1_000_003n]],
  ["cbqs.base_rate.fast.retained_unit_bytes", [1n, 999_999_937n]],
];

/** Live scalars worth moving at genesis: owner and endpoint limits, message size and lanes at our configs' values. */
const SCALAR_OVERRIDES: Array<[string, bigint[]]> = [
  ["cbqs.max_streams_per_owner", [1n, 2n, ...scalarValues("cbqs.max_streams_per_owner")]],
  ["cbqs.max_provider_endpoints", [1n, 2n]],
  ["cbqs.max_inline_message_bytes", [1_023n, 1_024n, 1_025n]],
  ["cbqs.max_lanes_per_stream", [1n]],
];

const optional = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | null> => fc.option(arb, { freq: 3, nil: null });

const balanceKinds = fc.constantFrom("rich", "rich", "rich", "modest", "poor", "max-supply");

/** Valid genesis documents (Chain.genesis accepts every one of them). */
export const genesisArb: fc.Arbitrary<GenesisJson> = fc
  .record({
    chainId: fc.oneof(fc.constantFrom(7n, 0n, 1n, U64_MAX), fc.bigInt({ min: 0n, max: U64_MAX })),
    timestamp: fc.constantFrom(0n, 1_767_225_600n, 1n << 62n),
    blockTime: fc.constantFrom(0n, 1n, 1n, 6n),
    grace: fc.constantFrom(...GRACE_VALUES, 604_800n),
    bps: fc.constantFrom(...BPS_PAIRS),
    baseRates: fc.array(fc.integer({ min: 0, max: BASE_RATE_OVERRIDES.length - 1 }), { maxLength: 2 }),
    baseRatePick: fc.nat(),
    scalar: optional(fc.record({ index: fc.nat({ max: SCALAR_OVERRIDES.length - 1 }), pick: fc.nat() })),
    balances: balanceKinds,
    cyclePrice: fc.constantFrom(0n, 0n, 0n, 1n, 1_000n),
    cellPrice: fc.constantFrom(0n, 0n, 0n, 1n),
  })
  .map((g) => {
    const params: JsonObject = {
      "cbqs.suspend_grace_blocks": s(g.grace),
      "cbqs.rent.provider_bps": s(g.bps[0]),
      "cbqs.rent.platform_bps": s(g.bps[1]),
    };
    for (const i of g.baseRates) {
      const [name, values] = BASE_RATE_OVERRIDES[i]!;
      params[name] = s(values[g.baseRatePick % values.length]!);
    }
    if (g.scalar !== null) {
      const [name, values] = SCALAR_OVERRIDES[g.scalar.index]!;
      params[name] = s(values[g.scalar.pick % values.length]!);
    }
    return {
      chain_id: s(g.chainId),
      timestamp: s(g.timestamp),
      block_time_seconds: s(g.blockTime),
      governance: GOV,
      params,
      accounts: accountsJson(g.balances),
      cycle_price: s(g.cyclePrice),
      cell_price: s(g.cellPrice),
    };
  });

function accountsJson(kind: string): JsonObject {
  const holders = [...OWNERS, ...PROVIDERS];
  // A stream's creation charge is at least 8,000 × 604,800 ≈ 4.8e9 (§6): "poor" pays for one, "modest" for a few.
  const each = kind === "poor" ? 5_000_000_000n : kind === "modest" ? 20_000_000_000n : 10n ** 15n;
  const accounts: JsonObject = {};
  for (const a of holders) accounts[a] = { balance: s(each) };
  // max-supply: the sponsor holds the rest of u64, so every balance sum sits at the edge (§5).
  const sponsor = kind === "max-supply" ? U64_MAX - each * BigInt(holders.length) : each;
  accounts[SPONSOR] = { balance: s(sponsor) };
  return accounts;
}

/** The simplest genesis the shrinker tries: default parameters but a short grace window, no fees. */
export const PLAIN_GENESIS: GenesisJson = {
  chain_id: "7",
  timestamp: "0",
  block_time_seconds: "1",
  governance: GOV,
  params: { "cbqs.suspend_grace_blocks": "5" },
  accounts: accountsJson("rich"),
  cycle_price: "0",
  cell_price: "0",
};

/** Names a param action may write: every live scalar, plus two that governance may not write. */
export const PARAM_NAMES = [...LIVE_SCALARS, "cbqs.base_rate.fast.retained_unit_bytes", "cbqs.no_such_param"];
