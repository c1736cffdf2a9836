// The chain model shared by the engine property tests and `cbqs fuzz`: fast-check arbitraries of
// actions over the fixed cast of src/fuzz/world.ts, and their translation into transactions
// against the chain state before the block (an action names "owner 1's stream 0" or "the next
// key generation"; the transaction gets the exact ids, generations and signatures then).
//
// The actions reach the states consensus bugs hide in: every CIP-39 §5 instruction, valid and
// invalid (wrong sender or signer, stale or skipped generations, caps exactly at the reservation,
// quotes at valid_until_block, u64/u128 amounts and rates), pauses of 0x17, parameter writes at
// their §18 bounds, encrypted pairs, malformed payloads; and gaps between blocks that land
// exactly on a grace deadline, the end of a stream's escrow runway or a pause's expiry.
import fc from "fast-check";
import { bytesEqual, fromHex, toHex } from "../bytes.js";
import type { BlockInput, GovAction, Transaction } from "../engine/inputs.js";
import { streamId } from "../codec/derive.js";
import type { StreamRecordV1 } from "../codec/types.js";
import { ed25519PublicKeyFromSeed } from "../crypto/ed25519.js";
import type { Chain } from "../engine/chain.js";
import { paramMinimum } from "../engine/governance.js";
import { REGISTRY_ADDRESS } from "../engine/layout.js";
import { effectiveRentHeight } from "../engine/pause.js";
import { paramRow } from "../params.js";
import type { JsonObject } from "../scenario/json.js";
import { resolveInstruction } from "../scenario/resolve.js";
import {
  ADMIN_SEEDS,
  BPS_PAIRS,
  GOV,
  GRACE_VALUES,
  OWNERS,
  PARAM_NAMES,
  PROVIDERS,
  QUOTE_SEEDS,
  REGISTRY,
  ROTATED_SIGN_SEEDS,
  ROTATION_SEED,
  SIGN_SEEDS,
  SPONSOR,
  U128_MAX,
  U64_MAX,
  type World,
} from "./world.js";

const GiB = 1_073_741_824n;
const MiB = 1_048_576n;

/** Owner nonces a stream reference may use; the last is the u64 edge. */
const NONCES = [0n, 1n, 2n, U64_MAX];

const CAPACITIES: Array<[bigint, bigint, bigint]> = [
  [GiB, 0n, 0n],
  [0n, MiB, MiB],
  [2n * GiB, MiB, 2n * MiB],
  [0n, 0n, 0n], // all-zero: rejected on the base schedule (§4.5)
];

/** The §4 signing context a signed object carries: this chain's, or another chain id's or chain instance's (ChainInstanceMismatch). */
export type Context = "own" | "chain" | "instance";

/** A signed PriceQuoteV1 (§4.4), described relative to what the stream expects at that height. */
export interface QuotePlan {
  rate: bigint;
  /** valid_until_block = executing height + until (−1: expired one block ago; 0: its last valid block). */
  until: number;
  /** "quote": the provider's quote key (valid); "signing": its signing key (wrong signer). */
  signer: "quote" | "signing";
  /** pricing_generation offset from the expected one (−1 stale, 1 ahead). */
  generation: number;
  context: Context;
}

/** Cap values relative to the provider's current base-rate reservation (§4.3 admission, §5). */
export type CapMode = "ample" | "exact" | "below" | "above";

/**
 * Directed actions (src/fuzz/scenarios.ts) aim at a stream the state before the block has: the
 * Suspended one whose grace deadline comes next, the Active one in arrears (its escrow runway
 * ended before this height) whose runway ended last, an encrypted one, one on the governance
 * base, the one on a provider quote with the longest runway, the live one with the highest rate.
 * With none such, owner and nonce name the stream as usual.
 */
export type Focus = "suspended" | "arrears" | "encrypted" | "base" | "quoted" | "priciest";

export type Action =
  | { k: "register"; provider: number; endpoints: Endpoints }
  | { k: "create"; owner: number; nonce: number; provider: number; encrypted: boolean; fast: boolean; cap: number; escrow: bigint; quote: QuotePlan | null }
  /** toDue: instead of `amount`, exactly what brings the escrow to the rent due at this height, plus toDue. */
  | { k: "topup"; payer: number; owner: number; nonce: number; key: boolean; amount: bigint; toDue: number | null; focus?: Focus }
  | { k: "settle"; sender: number; owner: number; nonce: number; key: boolean; focus?: Focus }
  | { k: "close"; by: "owner" | "other"; owner: number; nonce: number; key: boolean; focus?: Focus }
  | {
      k: "update";
      by: "owner" | "other";
      owner: number;
      nonce: number;
      key: boolean;
      variant: "bump" | "admin" | "capacity" | "rotation" | "noop";
      cap: number;
      rotation: "Set" | "Clear";
      quote: QuotePlan | null;
      focus?: Focus;
    }
  /**
   * generation: offset from the next encryption generation (0 valid, 1 skips one, −1 repeats the
   * current one); context "served": served_at names another chain instance.
   */
  | {
      k: "activate";
      by: "owner" | "other";
      owner: number;
      nonce: number;
      key: boolean;
      generation: number;
      bump: boolean;
      signer: "own" | "other";
      served: "previous" | "current";
      context: Context | "served";
      focus?: Focus;
    }
  | { k: "status"; provider: number; status: "Active" | "Draining" | "Deregistered" }
  /** endpoints: what the "endpoints" variant sets (loopback, or three past a live limit of 1 or 2, are rejected). */
  | { k: "provider"; provider: number; variant: "admission" | "signing" | "endpoints" | "noop"; caps: CapMode; accepts: boolean; endpoints: Endpoints }
  | { k: "pause"; variant: "Pause" | "ExtendPause" | "Unpause"; actor: "registry" | "platform"; blocks: bigint; by: "gov" | "other" }
  /** One write is a SetParam, several (or none) a SetParams; `split` adds both rent bps from BPS_PAIRS. */
  | { k: "param"; by: "gov" | "other"; writes: Array<{ name: number; value: number }>; split: number | null }
  | { k: "transfer"; from: number; to: number; amount: bigint }
  | { k: "raw"; variant: "bytes" | "flip" | "truncate" | "version" | "opcode"; payload: Uint8Array; at: number };

export type Endpoints = "https" | "wss" | "loopback" | "three";

/**
 * How the next block's height is chosen: a plain step, or the nearest boundary of the state ahead
 * (plus offset): a Suspended stream's grace deadline, the height where an Active stream's escrow
 * runs out (both effective rent heights, mapped to physical ones), or the running 0x17 pause's
 * expiry; "any" takes the nearest of all three. With no such boundary ahead: the next height.
 */
export type Gap = { k: "step"; blocks: number } | { k: "boundary"; of: "any" | "deadline" | "runway" | "pauseEnd"; offset: number };

export interface BlockPlan {
  gap: Gap;
  actions: Action[];
}

// ---- arbitraries ------------------------------------------------------------------------------

/** Transfer senders and recipients: owners, providers, sponsor, then the keyless custody account 0x17. */
const TRANSFER_PARTIES = [...OWNERS, ...PROVIDERS, SPONSOR, REGISTRY];

const owner = fc.integer({ min: 0, max: OWNERS.length - 1 });
/** Mostly the streams the setup block creates (nonce 0), often a second one, rarely the far nonces. */
const nonce = fc.oneof({ arbitrary: fc.constant(0), weight: 6 }, { arbitrary: fc.constant(1), weight: 3 }, { arbitrary: fc.integer({ min: 2, max: NONCES.length - 1 }), weight: 1 });
/** The setup block registers providers 0 and 1; 2 is mostly unregistered. */
const provider = fc.oneof({ arbitrary: fc.integer({ min: 0, max: 1 }), weight: 6 }, { arbitrary: fc.constant(2), weight: 1 });
/** Index into OWNERS ++ [SPONSOR]. */
const payer = fc.integer({ min: 0, max: OWNERS.length });
const by = fc.constantFrom("owner" as const, "owner" as const, "owner" as const, "other" as const);
const U64_AMOUNTS = [0n, 1n, 8_000n, 40_000n, 1_000_000n, 100_000_000n, 10_000_000_000n, U64_MAX];
/** CBQS amounts are u128 (§5); above u64 no balance can cover them. */
const amount = fc.constantFrom(...U64_AMOUNTS, U64_MAX + 1n, U128_MAX);
const rate = fc.constantFrom(7_999n, 8_000n, 8_001n, 9_000n, 12_345n, 100_000n, 1n << 64n, 1n << 127n);

const quoteArb: fc.Arbitrary<QuotePlan> = fc.record({
  rate,
  until: fc.constantFrom(0, 0, 5, -1, -1, 1),
  signer: fc.constantFrom("quote" as const, "quote" as const, "quote" as const, "signing" as const),
  generation: fc.constantFrom(0, 0, 0, 0, -1, 1),
  context: fc.constantFrom<Context>("own", "own", "own", "own", "own", "own", "own", "own", "own", "own", "own", "own", "chain", "instance"),
});

export const actionArb: fc.Arbitrary<Action> = fc.oneof(
  { arbitrary: fc.record({ k: fc.constant("register" as const), provider, endpoints: fc.constantFrom<Endpoints>("https", "wss", "loopback", "three") }), weight: 1 },
  {
    arbitrary: fc.record({
      k: fc.constant("create" as const),
      owner,
      nonce,
      provider,
      encrypted: fc.boolean(),
      fast: fc.boolean(),
      cap: fc.integer({ min: 0, max: CAPACITIES.length - 1 }),
      escrow: fc.constantFrom(0n, 8_000n, 40_000n, 200_000n, 2_000_000n, U64_MAX, U64_MAX + 1n, U128_MAX),
      quote: fc.option(quoteArb, { freq: 2, nil: null }),
    }),
    weight: 4,
  },
  {
    arbitrary: fc.record({
      k: fc.constant("topup" as const),
      payer,
      owner,
      nonce,
      key: fc.constantFrom(false, false, true),
      amount,
      toDue: fc.option(fc.constantFrom(0, -1, 1), { freq: 2, nil: null }),
    }),
    weight: 3,
  },
  { arbitrary: fc.record({ k: fc.constant("settle" as const), sender: payer, owner, nonce, key: fc.constantFrom(false, false, true) }), weight: 4 },
  { arbitrary: fc.record({ k: fc.constant("close" as const), by, owner, nonce, key: fc.constantFrom(false, false, false, true) }), weight: 1 },
  {
    arbitrary: fc.record({
      k: fc.constant("update" as const),
      by,
      owner,
      nonce,
      key: fc.constantFrom(false, false, false, false, false, true),
      variant: fc.constantFrom("bump" as const, "admin" as const, "capacity" as const, "capacity" as const, "rotation" as const, "noop" as const),
      cap: fc.integer({ min: 0, max: CAPACITIES.length - 1 }),
      rotation: fc.constantFrom("Set" as const, "Clear" as const),
      quote: fc.option(quoteArb, { freq: 2, nil: null }),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      k: fc.constant("activate" as const),
      by,
      owner,
      nonce,
      key: fc.constantFrom(false, false, false, false, false, true),
      generation: fc.constantFrom(0, 0, 0, 0, 1, -1),
      bump: fc.boolean(),
      signer: fc.constantFrom("own" as const, "own" as const, "own" as const, "other" as const),
      served: fc.constantFrom("previous" as const, "previous" as const, "previous" as const, "current" as const),
      context: fc.constantFrom<Context | "served">("own", "own", "own", "own", "own", "own", "own", "own", "own", "chain", "instance", "served"),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({ k: fc.constant("status" as const), provider, status: fc.constantFrom("Active" as const, "Draining" as const, "Deregistered" as const) }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      k: fc.constant("provider" as const),
      provider,
      variant: fc.constantFrom("admission" as const, "admission" as const, "signing" as const, "endpoints" as const, "noop" as const),
      caps: fc.constantFrom<CapMode>("ample", "exact", "below", "above"),
      accepts: fc.constantFrom(true, true, false),
      endpoints: fc.constantFrom<Endpoints>("wss", "wss", "loopback", "three"),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      k: fc.constant("pause" as const),
      variant: fc.constantFrom("Pause" as const, "Pause" as const, "ExtendPause" as const, "Unpause" as const),
      actor: fc.constantFrom("registry" as const, "registry" as const, "registry" as const, "platform" as const),
      blocks: fc.oneof({ arbitrary: fc.bigInt({ min: 0n, max: 10n }), weight: 9 }, { arbitrary: fc.constant(U64_MAX), weight: 1 }),
      by: fc.constantFrom("gov" as const, "gov" as const, "gov" as const, "other" as const),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      k: fc.constant("param" as const),
      by: fc.constantFrom("gov" as const, "gov" as const, "gov" as const, "other" as const),
      writes: fc.array(
        fc.record({
          name: fc.oneof({ arbitrary: fc.constant(PARAM_NAMES.indexOf("cbqs.suspend_grace_blocks")), weight: 3 }, { arbitrary: fc.nat({ max: PARAM_NAMES.length - 1 }), weight: 2 }),
          value: fc.nat({ max: 12 }),
        }),
        { maxLength: 2 },
      ),
      split: fc.option(fc.nat({ max: BPS_PAIRS.length - 1 }), { freq: 3, nil: null }),
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      k: fc.constant("transfer" as const),
      from: fc.integer({ min: 0, max: TRANSFER_PARTIES.length - 1 }),
      to: fc.integer({ min: 0, max: TRANSFER_PARTIES.length - 1 }),
      amount: fc.constantFrom(...U64_AMOUNTS), // a native transfer's amount is a u64 (docs/reference/formats/transaction.md)
    }),
    weight: 1,
  },
  {
    arbitrary: fc.record({
      k: fc.constant("raw" as const),
      variant: fc.constantFrom("bytes" as const, "flip" as const, "truncate" as const, "version" as const, "opcode" as const),
      payload: fc.uint8Array({ maxLength: 40 }),
      at: fc.nat({ max: 1_000 }),
    }),
    weight: 1,
  },
);

/** Offsets around a boundary, the boundary itself most often. */
const offset = fc.constantFrom(0, 0, 0, -1, 1);

export const gapArb: fc.Arbitrary<Gap> = fc.oneof(
  { arbitrary: fc.record({ k: fc.constant("step" as const), blocks: fc.integer({ min: 1, max: 12 }) }), weight: 8 },
  { arbitrary: fc.record({ k: fc.constant("step" as const), blocks: fc.integer({ min: 13, max: 2_000 }) }), weight: 1 },
  {
    arbitrary: fc.record({ k: fc.constant("boundary" as const), of: fc.constantFrom("any" as const, "any" as const, "any" as const, "deadline" as const, "runway" as const, "pauseEnd" as const), offset }),
    weight: 8,
  },
);

export const blocksArb = (maxBlocks: number, maxTxs: number): fc.Arbitrary<BlockPlan[]> =>
  fc.array(fc.record({ gap: gapArb, actions: fc.array(actionArb, { maxLength: maxTxs }) }), { minLength: 1, maxLength: maxBlocks });

/** Block 1 of a property-test run (and the head of a fuzz chain's first block): both providers register, three streams exist. */
export const SETUP_ACTIONS: readonly Action[] = [
  { k: "register", provider: 0, endpoints: "https" },
  { k: "register", provider: 1, endpoints: "https" },
  { k: "create", owner: 0, nonce: 0, provider: 0, encrypted: true, fast: false, cap: 0, escrow: 40_000n, quote: null },
  { k: "create", owner: 1, nonce: 0, provider: 0, encrypted: false, fast: true, cap: 1, escrow: 2_000_000n, quote: null },
  {
    k: "create",
    owner: 2,
    nonce: 0,
    provider: 1,
    encrypted: true,
    fast: false,
    cap: 2,
    escrow: 0n,
    quote: { rate: 9_000n, until: 0, signer: "quote", generation: 0, context: "own" },
  },
];

// ---- action → transaction -----------------------------------------------------------------------

const payerAddress = (i: number): string => (i < OWNERS.length ? OWNERS[i]! : SPONSOR);
const otherOwner = (o: number): string => OWNERS[(o + 1) % OWNERS.length]!;

function config(fast: boolean, cap: number): JsonObject {
  const [retained, append, delivered] = CAPACITIES[cap]!;
  return {
    retention_ms: "3600000",
    retained_bytes_limit: retained.toString(),
    max_message_bytes: "1024",
    max_append_bytes_per_sec: append.toString(),
    max_delivered_bytes_per_sec: delivered.toString(),
    max_lanes: "1",
    idempotency_horizon_ms: fast ? "0" : "60000",
    default_visibility_ms: fast ? "0" : "30000",
    max_visibility_ms: fast ? "0" : "30000",
    default_max_attempts: fast ? "0" : "10",
    fast_batch_max_ms: fast ? "100" : "0",
    fast_batch_max_records: fast ? "1024" : "0",
  };
}

function endpoints(kind: Endpoints): JsonObject[] {
  const https = { transport: "Https", uri: "https://provider.example" };
  switch (kind) {
    case "https":
      return [https];
    case "wss":
      return [{ transport: "WebSocketTls", uri: "wss://cbqs.example/stream" }];
    case "loopback":
      return [{ transport: "Https", uri: "https://127.0.0.1/stream" }]; // §4.3: rejected
    case "three":
      return [https, { transport: "WebSocketTls", uri: "wss://cbqs.example/stream" }, { transport: "Https", uri: "https://backup.example" }];
  }
}

function admission(accepts: boolean, streams: bigint, retained = 8n * GiB, append = 8n * MiB, delivered = 8n * MiB): JsonObject {
  return {
    accepts_new: accepts,
    max_active_streams: streams.toString(),
    max_total_retained_bytes: retained.toString(),
    max_total_append_bytes_per_sec: append.toString(),
    max_total_delivered_bytes_per_sec: delivered.toString(),
  };
}

/** Admission caps relative to the provider's current reservation (§4.3: no cap below it). */
function capsJson(mode: CapMode, accepts: boolean, chain: Chain, providerAddress: string): JsonObject {
  const r = chain.provider(fromHex(providerAddress))?.base_rate_reserved;
  if (mode === "ample" || r === undefined) return admission(accepts, 10n);
  if (mode === "above") return admission(accepts, r.reserved_streams + 1n, r.retained_bytes + 2n * GiB, r.append_bytes_per_sec + MiB, r.delivered_bytes_per_sec + 2n * MiB);
  // below: one stream fewer than reserved. With none reserved every reservation is zero (each
  // reserved stream adds its capacity), so nothing can be below: exact.
  const streams = mode === "below" && r.reserved_streams > 0n ? r.reserved_streams - 1n : r.reserved_streams;
  return admission(accepts, streams, r.retained_bytes, r.append_bytes_per_sec, r.delivered_bytes_per_sec);
}

/** Candidate values of a param write: its §18 bounds, one past the maximum, the default, the u64 edge, short graces. */
function paramValues(name: string): bigint[] {
  const row = paramRow(name);
  if (row === undefined) return [1n];
  const values = [paramMinimum(name), row.maximum, row.maximum + 1n, row.default, U64_MAX];
  return name === "cbqs.suspend_grace_blocks" ? [...GRACE_VALUES, ...values] : values;
}

const publicKeys = new Map<string, string>();
function publicKeyOf(seed: string): string {
  let k = publicKeys.get(seed);
  if (k === undefined) {
    k = toHex(ed25519PublicKeyFromSeed(fromHex(seed)));
    publicKeys.set(seed, k);
  }
  return k;
}

/** The seed of a provider signing key a stream snapshotted, and one that is not it. */
function signerSeeds(record: StreamRecordV1 | null): { own: string; other: string } {
  const seeds = [...SIGN_SEEDS, ...ROTATED_SIGN_SEEDS];
  const own = record === null ? undefined : seeds.find((s) => publicKeyOf(s) === toHex(record.provider_signing_key.key));
  const o = own ?? SIGN_SEEDS[0]!;
  return { own: o, other: seeds.find((s) => s !== o)! };
}

/** Translates actions into transactions for one world (genesis). */
export class ChainModel {
  private streamsAt: { chain: Chain; height: bigint; streams: StreamRecordV1[] } | null = null;

  constructor(readonly world: World) {}

  private cbqs(instruction: JsonObject): Uint8Array {
    return resolveInstruction(instruction, "$", { chainId: this.world.config.chain_id, chainInstanceId: this.world.chainInstanceId, blockHashAt: () => undefined });
  }

  private system(from: string, instruction: JsonObject): Transaction {
    return { from: fromHex(from), body: { kind: "system", opcode: 218, payload: this.cbqs(instruction) } };
  }

  private stream(chain: Chain, o: number, n: number): StreamRecordV1 | null {
    return chain.stream(streamId(this.world.config.chain_id, this.world.chainInstanceId, fromHex(OWNERS[o]!), NONCES[n]!));
  }

  timestamp(height: bigint): bigint {
    return this.world.config.timestamp + height * this.world.config.block_time_seconds;
  }

  /** The setup block at height 1. */
  setupBlock(chain: Chain): BlockInput {
    return this.toBlock({ gap: { k: "step", blocks: 1 }, actions: [...SETUP_ACTIONS] }, chain, 1n);
  }

  toBlock(plan: BlockPlan, chain: Chain, height: bigint): BlockInput {
    return { height, timestamp: this.timestamp(height), txs: plan.actions.map((a) => this.toTransaction(a, chain, height)) };
  }

  /** The transaction an action stands for at `height`, given the chain state before the block. */
  toTransaction(action: Action, chain: Chain, height: bigint): Transaction {
    const a = this.aim(action, chain, height);
    const ref = (o: number, n: number) => ({ owner: OWNERS[o]!, owner_nonce: NONCES[n]!.toString() });
    const streamRef = (o: number, n: number, key: boolean) => (key ? { key_stream_of: ref(o, n) } : ref(o, n));
    const quote = (q: QuotePlan, o: number, n: number, p: number, fast: boolean, cap: number, generation: bigint): JsonObject => {
      const [retained, append, delivered] = CAPACITIES[cap]!;
      const until = height + BigInt(q.until);
      const gen = generation + BigInt(q.generation);
      return {
        provider: PROVIDERS[p]!,
        owner: OWNERS[o]!,
        stream_id: ref(o, n),
        pricing_generation: gen.toString(),
        delivery_class: fast ? "Fast" : "Standard",
        retained_bytes: retained.toString(),
        append_bytes_sec: append.toString(),
        delivered_bytes_sec: delivered.toString(),
        rate_per_block: q.rate.toString(),
        valid_until_block: until.toString(),
        signer_seed: q.signer === "quote" ? QUOTE_SEEDS[p]! : SIGN_SEEDS[p]!,
        ...(q.context === "own" ? {} : { context: this.foreignContext(q.context) }),
      };
    };
    switch (a.k) {
      case "register":
        return this.system(PROVIDERS[a.provider]!, {
          RegisterProvider: {
            signing_key: { ed25519_seed: SIGN_SEEDS[a.provider]! },
            endpoints: endpoints(a.endpoints),
            quote_key: { ed25519_seed: QUOTE_SEEDS[a.provider]! },
            base_rate_admission: admission(true, 10n),
            metadata_hash: "0x" + "00".repeat(32),
          },
        });
      case "create":
        return this.system(OWNERS[a.owner]!, {
          CreateStream: {
            owner_nonce: NONCES[a.nonce]!.toString(),
            initial_escrow: a.escrow.toString(),
            admin_key: { ed25519_seed: ADMIN_SEEDS[0]! },
            rotation_key: null,
            delivery_class: a.fast ? "Fast" : "Standard",
            encrypted: a.encrypted,
            provider: PROVIDERS[a.provider]!,
            config: config(a.fast, a.cap),
            price_quote: a.quote === null ? null : quote(a.quote, a.owner, a.nonce, a.provider, a.fast, a.cap, 1n),
          },
        });
      case "topup":
        return this.system(payerAddress(a.payer), { TopUpStream: { stream_id: streamRef(a.owner, a.nonce, a.key), amount: this.topUpAmount(a, chain, height).toString() } });
      case "settle":
        return this.system(payerAddress(a.sender), { SettleStreamRent: { stream_id: streamRef(a.owner, a.nonce, a.key) } });
      case "close":
        return this.system(a.by === "owner" ? OWNERS[a.owner]! : otherOwner(a.owner), { CloseStream: { stream_id: streamRef(a.owner, a.nonce, a.key) } });
      case "update": {
        const record = this.stream(chain, a.owner, a.nonce);
        const fast = record?.delivery_class === "Fast";
        const args: JsonObject = { stream_id: streamRef(a.owner, a.nonce, a.key), rotation_key: "Keep", bump_authorization_generation: a.variant === "bump" };
        if (a.variant === "admin") args["admin_key"] = { ed25519_seed: ADMIN_SEEDS[1]! };
        if (a.variant === "rotation") args["rotation_key"] = a.rotation === "Set" ? { Set: { ed25519_seed: ROTATION_SEED } } : "Clear";
        if (a.variant === "capacity") {
          args["config"] = config(fast, a.cap);
          if (a.quote !== null && record !== null) {
            const p = Math.max(0, PROVIDERS.findIndex((x) => bytesEqual(fromHex(x), record.provider)));
            args["price_quote"] = quote(a.quote, a.owner, a.nonce, p, fast, a.cap, record.pricing_generation + 1n);
          }
        }
        return this.system(a.by === "owner" ? OWNERS[a.owner]! : otherOwner(a.owner), { UpdateStream: args });
      }
      case "activate": {
        const record = this.stream(chain, a.owner, a.nonce);
        const next = (record?.encryption_generation ?? 0n) + 1n + BigInt(a.generation);
        const seeds = signerSeeds(record);
        const served: JsonObject = { height: (a.served === "previous" ? height - 1n : height).toString(), block_hash: "0x" + "bb".repeat(32) };
        if (a.context === "served") served["chain_instance_id"] = this.foreignContext("instance")["chain_instance_id"]!;
        return this.system(a.by === "owner" ? OWNERS[a.owner]! : otherOwner(a.owner), {
          ActivateKeyGeneration: {
            bump_authorization_generation: a.bump,
            receipt: {
              ...(a.context === "own" || a.context === "served" ? {} : { context: this.foreignContext(a.context) }),
              served_at: served,
              key_stream_id: { key_stream_of: ref(a.owner, a.nonce) },
              main_stream_id: streamRef(a.owner, a.nonce, a.key),
              provider_epoch: "0", // the codec admits only epoch 0 in v1 (§4)
              encryption_generation: next.toString(),
              batch_digest: "0x" + "b1".repeat(32),
              envelope_count: "1",
              envelope_root: "0x" + "e1".repeat(32),
              first_sequence: "0",
              last_sequence: "1",
              previous_global_receipt: "0x" + "00".repeat(32),
              final_append_receipt: "0x" + "f1".repeat(32),
              signer_seed: a.signer === "own" ? seeds.own : seeds.other,
            },
          },
        });
      }
      case "status":
        return this.system(PROVIDERS[a.provider]!, { SetProviderStatus: { status: a.status } });
      case "provider": {
        const p = PROVIDERS[a.provider]!;
        const args: JsonObject = {};
        if (a.variant === "admission") args["base_rate_admission"] = capsJson(a.caps, a.accepts, chain, p);
        if (a.variant === "signing") args["signing_key"] = { ed25519_seed: ROTATED_SIGN_SEEDS[a.provider]! };
        if (a.variant === "endpoints") args["endpoints"] = endpoints(a.endpoints);
        return this.system(p, { UpdateProvider: args });
      }
      case "pause": {
        const actor = a.actor === "registry" ? REGISTRY_ADDRESS : fromHex("0x0000000000000000000000000000000000000018");
        const action: GovAction = a.variant === "Unpause" ? { type: a.variant, actor } : { type: a.variant, actor, blocks: a.blocks };
        return { from: fromHex(a.by === "gov" ? GOV : SPONSOR), body: { kind: "gov", action } };
      }
      case "param": {
        const values = a.writes.map((w) => {
          const name = PARAM_NAMES[w.name]!;
          const candidates = paramValues(name);
          return { name, value: candidates[w.value % candidates.length]! };
        });
        if (a.split !== null) {
          const [p, q] = BPS_PAIRS[a.split]!;
          values.push({ name: "cbqs.rent.provider_bps", value: p }, { name: "cbqs.rent.platform_bps", value: q });
        }
        const action: GovAction = values.length === 1 ? { type: "SetParam", ...values[0]! } : { type: "SetParams", values };
        return { from: fromHex(a.by === "gov" ? GOV : SPONSOR), body: { kind: "gov", action } };
      }
      case "transfer":
        return { from: fromHex(TRANSFER_PARTIES[a.from]!), body: { kind: "transfer", to: fromHex(TRANSFER_PARTIES[a.to]!), amount: a.amount } };
      case "raw":
        return { from: fromHex(OWNERS[0]!), body: { kind: "system", opcode: a.variant === "opcode" ? 217 : 218, payload: this.rawPayload(a) } };
    }
  }

  /** A §4 signing context of another chain: the next chain id, or this chain id with another chain instance. */
  private foreignContext(c: "chain" | "instance"): JsonObject {
    const { chain_id: id } = this.world.config;
    const instance = this.world.chainInstanceId.slice();
    if (c === "instance") instance[0] = instance[0]! ^ 0xff;
    return { version: "1", chain_id: (c === "chain" ? (id === U64_MAX ? 0n : id + 1n) : id).toString(), chain_instance_id: toHex(instance) };
  }

  /** A directed action with owner and nonce of the stream its focus finds in the state before the block (if any). */
  private aim(a: Action, chain: Chain, height: bigint): Action {
    if (!("focus" in a) || a.focus === undefined) return a;
    const focus = a.focus;
    const H = effectiveRentHeight(chain.pause(), height);
    const streams = this.mainStreams(chain, height);
    const fits = (s: StreamRecordV1): bigint | null => {
      switch (focus) {
        case "suspended":
          // The deadline still ahead comes first (a boundary gap lands on it), then those passed.
          return s.status === "Suspended" ? (s.suspension_grace_deadline_block! >= H ? 0n : 1n << 64n) + s.suspension_grace_deadline_block! : null;
        case "arrears": {
          // The runway a boundary gap just passed: its settle #1 still pays, its deadline is ahead.
          const end = runwayEnd(s);
          return end !== null && end < H ? -end : null;
        }
        case "encrypted":
          return s.status === "Active" && s.encrypted ? 0n : null;
        case "base":
          return s.status === "Active" && s.pricing_basis.type === "GovernanceBase" ? 0n : null;
        case "quoted":
          return s.status === "Active" && s.pricing_basis.type === "ProviderQuote" ? -(runwayEnd(s) ?? 0n) : null;
        case "priciest":
          return s.status === "Active" || s.status === "Suspended" ? -s.rate_per_block : null;
      }
    };
    let best: { s: StreamRecordV1; rank: bigint } | null = null;
    for (const s of streams) {
      const rank = fits(s);
      if (rank !== null && (best === null || rank < best.rank)) best = { s, rank };
    }
    if (best === null) return a;
    // Every stream is one the model created: its owner is in OWNERS, its nonce in NONCES.
    return { ...a, owner: OWNERS.findIndex((o) => bytesEqual(fromHex(o), best.s.owner)), nonce: NONCES.indexOf(best.s.owner_nonce) };
  }

  /** The main stream records before the block at `height` (read once per block: a block's actions share them). */
  private mainStreams(chain: Chain, height: bigint): StreamRecordV1[] {
    if (this.streamsAt?.chain !== chain || this.streamsAt.height !== height) {
      this.streamsAt = { chain, height, streams: chain.streams().filter((s) => s.purpose === "Main") };
    }
    return this.streamsAt.streams;
  }

  /** §6.1 boundary: the deposit that leaves the escrow exactly at the rent due (± toDue), where a stream stays or turns Suspended. */
  private topUpAmount(a: Extract<Action, { k: "topup" }>, chain: Chain, height: bigint): bigint {
    const record = this.stream(chain, a.owner, a.nonce);
    // A main stream pays at least the §6 floor: its rate is never zero.
    if (a.toDue === null || record === null) return a.amount;
    const H = effectiveRentHeight(chain.pause(), height);
    const due = (H - record.last_settled_block) * record.rate_per_block; // settled heights never pass H
    const need = due - record.escrow_balance + BigInt(a.toDue);
    // A stream repriced to a rate near u128 owes more than any u128 amount (its settle overflows first).
    return need > U128_MAX ? U128_MAX : need > 0n ? need : 1n;
  }

  /** Malformed CbqsInstructionV1 payloads (§14 strict decode): random, or a valid one damaged. */
  private rawPayload(a: Extract<Action, { k: "raw" }>): Uint8Array {
    if (a.variant === "bytes") return a.payload;
    const valid = this.cbqs({ SettleStreamRent: { stream_id: { owner: OWNERS[0]!, owner_nonce: "0" } } });
    switch (a.variant) {
      case "opcode":
        return valid;
      case "version":
        return Uint8Array.of(2, ...valid.subarray(1));
      case "truncate":
        return valid.subarray(0, a.at % valid.length);
      case "flip": {
        const out = valid.slice();
        const i = a.at % out.length;
        out[i] = out[i]! ^ (1 + (a.at % 255));
        return out;
      }
    }
  }

  /** The next block's height after `previous`: a plain step, or onto a boundary of the current state. */
  nextHeight(gap: Gap, chain: Chain, previous: bigint): bigint {
    if (gap.k === "step") return previous + BigInt(gap.blocks);
    const ahead: bigint[] = [];
    const active = chain.pause().active;
    if ((gap.of === "any" || gap.of === "pauseEnd") && active !== null) ahead.push(active.expires_at_block + BigInt(gap.offset));
    if (gap.of !== "pauseEnd") {
      // Key streams add no target: a key stream has its main's deadline and no rent (§4.1).
      const targets = chain
        .streams()
        .flatMap((s) => [gap.of !== "runway" ? s.suspension_grace_deadline_block : null, gap.of !== "deadline" ? runwayEnd(s) : null])
        .filter((t): t is bigint => t !== null)
        .map((t) => t + BigInt(gap.offset));
      const h = this.physicalHeight(chain, previous, targets);
      if (h !== null) ahead.push(h);
    }
    return leastAbove(ahead, previous) ?? previous + 1n;
  }

  /** The first physical height after `previous` whose effective rent height reaches the nearest target still ahead. */
  private physicalHeight(chain: Chain, previous: bigint, targets: bigint[]): bigint | null {
    const pause = chain.pause();
    const now = effectiveRentHeight(pause, previous);
    const ahead = leastAbove(targets, now);
    if (ahead === undefined) return null;
    // Past the running pause (if any), effective height grows one per block: invert that.
    const end = pause.active === null ? previous : pause.active.expires_at_block > previous ? pause.active.expires_at_block : previous;
    const h = end + (ahead - effectiveRentHeight(pause, end));
    return h > MAX_GAP_TARGET ? null : h;
  }
}

/** The least of `values` above `floor` (undefined: none is). */
export function leastAbove(values: readonly bigint[], floor: bigint): bigint | undefined {
  let least: bigint | undefined;
  for (const v of values) if (v > floor && (least === undefined || v < least)) least = v;
  return least;
}

/** Heights beyond this are not targeted (a 604,800-block grace still is). */
const MAX_GAP_TARGET = 1n << 40n;

/** §6.1: the effective height where settle() first cannot pay in full (a key stream pays no rent: none). */
function runwayEnd(s: StreamRecordV1): bigint | null {
  if (s.status !== "Active" || s.rate_per_block === 0n) return null;
  return s.last_settled_block + s.escrow_balance / s.rate_per_block;
}
