// Shared pieces of the engine property tests: a small fixed world (three owners, two
// providers, a sponsor, governance), fast-check arbitraries of actions over it, the
// translation of an action into a Transaction against the current chain state, and the
// invariant checks run after every block.
import fc from "fast-check";
import { bytesEqual, fromHex, toHex } from "../../src/bytes.js";
import type { BlockInput, GenesisConfig, Transaction } from "../../src/chain/types.js";
import { toJson } from "../../src/codec/core.js";
import { chainInstanceId, keyStreamId, streamId } from "../../src/codec/derive.js";
import * as S from "../../src/codec/schema.js";
import type { StreamRecordV1 } from "../../src/codec/types.js";
import { Chain } from "../../src/engine/chain.js";
import { ownerCountKey, REGISTRY_ADDRESS } from "../../src/engine/layout.js";
import { resolveInstruction } from "../../src/scenario/resolve.js";
import type { JsonObject } from "../../src/scenario/json.js";
import { createStateCommitment } from "../../state/qmdb/index.js";
import { MemoryStateStore } from "../../state/store.js";
import { decodeStateValueAs } from "../../state/value.js";

/** Runs per property: small in CI, raise locally with CBQS_PROPERTY_RUNS=1000. */
export const NUM_RUNS = Number(process.env["CBQS_PROPERTY_RUNS"] ?? 30);

const addr = (b: string): string => "0x" + b.repeat(20);
export const GOV = addr("aa");
export const OWNERS = [addr("11"), addr("12"), addr("13")];
export const PROVIDERS = [addr("21"), addr("22")];
export const SPONSOR = addr("55");
const SIGN_SEEDS = ["0x" + "51".repeat(32), "0x" + "53".repeat(32)];
const QUOTE_SEEDS = ["0x" + "52".repeat(32), "0x" + "54".repeat(32)];
const ADMIN_SEED = "0x" + "61".repeat(32);
const GiB = 1_073_741_824n;
const MiB = 1_048_576n;
const BALANCE = 10n ** 15n;

export const GENESIS: GenesisConfig = {
  chain_id: 7n,
  timestamp: 0n,
  block_time_seconds: 1n,
  governance: fromHex(GOV),
  params: new Map([["cbqs.suspend_grace_blocks", 5n]]),
  accounts: [...OWNERS, ...PROVIDERS, SPONSOR].map((a) => ({ address: fromHex(a), balance: BALANCE })),
  cycle_price: 0n,
  cell_price: 0n,
};
export const GENESIS_SOURCE = new TextEncoder().encode("cbqs-property-genesis");
export const TOTAL_SUPPLY = BALANCE * BigInt(GENESIS.accounts.length);

export function newChain(): { chain: Chain; store: MemoryStateStore } {
  const store = new MemoryStateStore(createStateCommitment());
  return { chain: Chain.genesis(GENESIS, GENESIS_SOURCE, store), store };
}

// ---- actions --------------------------------------------------------------------------------

const CAPACITIES: Array<[bigint, bigint, bigint]> = [
  [GiB, 0n, 0n],
  [0n, MiB, MiB],
  [2n * GiB, MiB, 2n * MiB],
  [0n, 0n, 0n], // all-zero: rejected on the base schedule (§4.5)
];

export type Action =
  | { k: "create"; owner: number; nonce: number; provider: number; encrypted: boolean; fast: boolean; cap: number; escrow: bigint; quote: boolean; rate: bigint }
  | { k: "topup"; payer: number; owner: number; nonce: number; key: boolean; amount: bigint }
  | { k: "settle"; sender: number; owner: number; nonce: number; key: boolean }
  | { k: "close"; sender: number; owner: number; nonce: number }
  | { k: "update"; owner: number; nonce: number; variant: "bump" | "admin" | "capacity"; cap: number; quote: boolean }
  /** `skip` 0 names the next encryption generation (valid), 1 the one after (invalid). */
  | { k: "activate"; owner: number; nonce: number; skip: number; bump: boolean; signer: number }
  | { k: "status"; provider: number; status: "Active" | "Draining" | "Deregistered" }
  | { k: "admission"; provider: number; accepts: boolean; streams: bigint }
  | { k: "pause"; variant: "Pause" | "ExtendPause" | "Unpause"; blocks: bigint }
  | { k: "grace"; value: bigint }
  | { k: "transfer"; from: number; to: number; amount: bigint }
  | { k: "raw"; payload: Uint8Array };

const owner = fc.integer({ min: 0, max: OWNERS.length - 1 });
const nonce = fc.integer({ min: 0, max: 1 });
const provider = fc.integer({ min: 0, max: PROVIDERS.length - 1 });
/** Index into OWNERS ++ [SPONSOR]. */
const payer = fc.integer({ min: 0, max: OWNERS.length });
const amount = fc.constantFrom(0n, 1n, 8_000n, 40_000n, 1_000_000n, 100_000_000n, 10_000_000_000n);

export const actionArb: fc.Arbitrary<Action> = fc.oneof(
  {
    arbitrary: fc.record({
      k: fc.constant("create" as const),
      owner,
      nonce,
      provider,
      encrypted: fc.boolean(),
      fast: fc.boolean(),
      cap: fc.integer({ min: 0, max: CAPACITIES.length - 1 }),
      escrow: fc.constantFrom(0n, 8_000n, 40_000n, 200_000n, 2_000_000n),
      quote: fc.boolean(),
      rate: fc.constantFrom(7_999n, 8_000n, 9_000n, 9_000n, 100_000n),
    }),
    weight: 4,
  },
  { arbitrary: fc.record({ k: fc.constant("topup" as const), payer, owner, nonce, key: fc.constantFrom(false, false, true), amount }), weight: 3 },
  { arbitrary: fc.record({ k: fc.constant("settle" as const), sender: payer, owner, nonce, key: fc.constantFrom(false, false, true) }), weight: 4 },
  { arbitrary: fc.record({ k: fc.constant("close" as const), sender: payer, owner, nonce }), weight: 1 },
  {
    arbitrary: fc.record({
      k: fc.constant("update" as const),
      owner,
      nonce,
      variant: fc.constantFrom("bump" as const, "admin" as const, "capacity" as const),
      cap: fc.integer({ min: 0, max: CAPACITIES.length - 1 }),
      quote: fc.boolean(),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({ k: fc.constant("activate" as const), owner, nonce, skip: fc.constantFrom(0, 0, 1), bump: fc.boolean(), signer: fc.constantFrom(0, 0, 1) }),
    weight: 2,
  },
  {
    arbitrary: fc.record({ k: fc.constant("status" as const), provider, status: fc.constantFrom("Active" as const, "Draining" as const, "Deregistered" as const) }),
    weight: 1,
  },
  { arbitrary: fc.record({ k: fc.constant("admission" as const), provider, accepts: fc.boolean(), streams: fc.constantFrom(0n, 2n, 10n) }), weight: 1 },
  {
    arbitrary: fc.record({
      k: fc.constant("pause" as const),
      variant: fc.constantFrom("Pause" as const, "ExtendPause" as const, "Unpause" as const),
      blocks: fc.bigInt({ min: 0n, max: 10n }),
    }),
    weight: 1,
  },
  { arbitrary: fc.record({ k: fc.constant("grace" as const), value: fc.bigInt({ min: 0n, max: 20n }) }), weight: 1 },
  {
    arbitrary: fc.record({
      k: fc.constant("transfer" as const),
      from: fc.integer({ min: 0, max: OWNERS.length + PROVIDERS.length }),
      to: fc.integer({ min: 0, max: OWNERS.length + PROVIDERS.length + 1 }),
      amount,
    }),
    weight: 1,
  },
  { arbitrary: fc.record({ k: fc.constant("raw" as const), payload: fc.uint8Array({ maxLength: 40 }) }), weight: 1 },
);

export interface BlockPlan {
  gap: number;
  actions: Action[];
}

export const blocksArb = (maxBlocks: number, maxTxs: number): fc.Arbitrary<BlockPlan[]> =>
  fc.array(fc.record({ gap: fc.integer({ min: 1, max: 12 }), actions: fc.array(actionArb, { maxLength: maxTxs }) }), {
    minLength: 1,
    maxLength: maxBlocks,
  });

// ---- action → transaction -----------------------------------------------------------------------

const payerAddress = (i: number): string => (i < OWNERS.length ? OWNERS[i]! : SPONSOR);
const transferParty = (i: number): string =>
  [...OWNERS, ...PROVIDERS, SPONSOR, "0x0000000000000000000000000000000000000017"][i]!;
const ref = (o: number, n: number) => ({ owner: OWNERS[o]!, owner_nonce: String(n) });

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

function quote(o: number, n: number, p: number, fast: boolean, cap: number, generation: bigint, rate: bigint, height: bigint): JsonObject {
  const [retained, append, delivered] = CAPACITIES[cap]!;
  return {
    provider: PROVIDERS[p]!,
    owner: OWNERS[o]!,
    stream_id: ref(o, n),
    pricing_generation: generation.toString(),
    delivery_class: fast ? "Fast" : "Standard",
    retained_bytes: retained.toString(),
    append_bytes_sec: append.toString(),
    delivered_bytes_sec: delivered.toString(),
    rate_per_block: rate.toString(),
    valid_until_block: height.toString(),
    signer_seed: QUOTE_SEEDS[p]!,
  };
}

/** Block 1 of every run: both providers register, then three streams exist to act on. */
export function setupBlock(): BlockInput {
  const txs: Transaction[] = PROVIDERS.map((p, i) => ({
    from: fromHex(p),
    body: { kind: "system", opcode: 218, payload: cbqs({ RegisterProvider: registerArgs(i) }) },
  }));
  const created: Action[] = [
    { k: "create", owner: 0, nonce: 0, provider: 0, encrypted: true, fast: false, cap: 0, escrow: 40_000n, quote: false, rate: 0n },
    { k: "create", owner: 1, nonce: 0, provider: 0, encrypted: false, fast: true, cap: 1, escrow: 2_000_000n, quote: false, rate: 0n },
    { k: "create", owner: 2, nonce: 0, provider: 1, encrypted: true, fast: false, cap: 2, escrow: 0n, quote: true, rate: 9_000n },
  ];
  for (const a of created) txs.push(createTx(a as Extract<Action, { k: "create" }>, 1n));
  return { height: 1n, timestamp: 1n, txs };
}

function createTx(a: Extract<Action, { k: "create" }>, height: bigint): Transaction {
  const instruction = {
    CreateStream: {
      owner_nonce: String(a.nonce),
      initial_escrow: a.escrow.toString(),
      admin_key: { ed25519_seed: ADMIN_SEED },
      rotation_key: null,
      delivery_class: a.fast ? "Fast" : "Standard",
      encrypted: a.encrypted,
      provider: PROVIDERS[a.provider]!,
      config: config(a.fast, a.cap),
      price_quote: a.quote ? quote(a.owner, a.nonce, a.provider, a.fast, a.cap, 1n, a.rate, height) : null,
    },
  };
  return { from: fromHex(OWNERS[a.owner]!), body: { kind: "system", opcode: 218, payload: cbqs(instruction) } };
}

function registerArgs(i: number): JsonObject {
  return {
    signing_key: { ed25519_seed: SIGN_SEEDS[i]! },
    endpoints: [{ transport: "Https", uri: "https://provider.example" }],
    quote_key: { ed25519_seed: QUOTE_SEEDS[i]! },
    base_rate_admission: admission(true, 10n),
    metadata_hash: "0x" + "00".repeat(32),
  };
}

function admission(accepts: boolean, streams: bigint): JsonObject {
  return {
    accepts_new: accepts,
    max_active_streams: streams.toString(),
    max_total_retained_bytes: (8n * GiB).toString(),
    max_total_append_bytes_per_sec: (8n * MiB).toString(),
    max_total_delivered_bytes_per_sec: (8n * MiB).toString(),
  };
}

const INSTANCE = chainInstanceId(GENESIS_SOURCE);
const cbqs = (instruction: JsonObject): Uint8Array =>
  resolveInstruction(instruction, "$", { chainId: GENESIS.chain_id, chainInstanceId: INSTANCE, blockHashAt: () => undefined });

/** The transaction an action stands for at `height`, given the chain state before the block. */
export function toTransaction(a: Action, chain: Chain, height: bigint): Transaction {
  const system = (from: string, instruction: JsonObject): Transaction => ({
    from: fromHex(from),
    body: { kind: "system", opcode: 218, payload: cbqs(instruction) },
  });
  const streamRef = (o: number, n: number, key: boolean) => (key ? { key_stream_of: ref(o, n) } : ref(o, n));
  switch (a.k) {
    case "create":
      return createTx(a, height);
    case "topup":
      return system(payerAddress(a.payer), { TopUpStream: { stream_id: streamRef(a.owner, a.nonce, a.key), amount: a.amount.toString() } });
    case "settle":
      return system(payerAddress(a.sender), { SettleStreamRent: { stream_id: streamRef(a.owner, a.nonce, a.key) } });
    case "close":
      return system(payerAddress(a.sender), { CloseStream: { stream_id: ref(a.owner, a.nonce) } });
    case "update": {
      const record = chain.stream(streamId(GENESIS.chain_id, chain.chainInstanceId, fromHex(OWNERS[a.owner]!), BigInt(a.nonce)));
      const fast = record?.delivery_class === "Fast";
      const args: JsonObject = { stream_id: ref(a.owner, a.nonce), rotation_key: "Keep", bump_authorization_generation: a.variant === "bump" };
      if (a.variant === "admin") args["admin_key"] = { ed25519_seed: "0x" + "62".repeat(32) };
      if (a.variant === "capacity") {
        args["config"] = config(fast, a.cap);
        if (a.quote && record !== null) {
          const p = PROVIDERS.findIndex((x) => bytesEqual(fromHex(x), record.provider));
          args["price_quote"] = quote(a.owner, a.nonce, p, fast, a.cap, record.pricing_generation + 1n, 9_000n, height);
        }
      }
      return system(OWNERS[a.owner]!, { UpdateStream: args });
    }
    case "activate": {
      const record = chain.stream(streamId(GENESIS.chain_id, chain.chainInstanceId, fromHex(OWNERS[a.owner]!), BigInt(a.nonce)));
      const gen = (record?.encryption_generation ?? 0n) + 1n + BigInt(a.skip);
      return system(OWNERS[a.owner]!, {
        ActivateKeyGeneration: {
          bump_authorization_generation: a.bump,
          receipt: {
            served_at: { height: (height - 1n).toString(), block_hash: "0x" + "bb".repeat(32) },
            key_stream_id: { key_stream_of: ref(a.owner, a.nonce) },
            main_stream_id: ref(a.owner, a.nonce),
            provider_epoch: "0",
            encryption_generation: gen.toString(),
            batch_digest: "0x" + "b1".repeat(32),
            envelope_count: "1",
            envelope_root: "0x" + "e1".repeat(32),
            first_sequence: "0",
            last_sequence: "1",
            previous_global_receipt: "0x" + "00".repeat(32),
            final_append_receipt: "0x" + "f1".repeat(32),
            signer_seed: SIGN_SEEDS[a.signer]!,
          },
        },
      });
    }
    case "status":
      return system(PROVIDERS[a.provider]!, { SetProviderStatus: { status: a.status } });
    case "admission":
      return system(PROVIDERS[a.provider]!, { UpdateProvider: { base_rate_admission: admission(a.accepts, a.streams) } });
    case "pause": {
      const actor = REGISTRY_ADDRESS;
      const action =
        a.variant === "Unpause" ? { type: a.variant, actor } : { type: a.variant, actor, blocks: a.blocks };
      return { from: fromHex(GOV), body: { kind: "gov", action } };
    }
    case "grace":
      return { from: fromHex(GOV), body: { kind: "gov", action: { type: "SetParam", name: "cbqs.suspend_grace_blocks", value: a.value } } };
    case "transfer":
      return { from: fromHex(transferParty(a.from)), body: { kind: "transfer", to: fromHex(transferParty(a.to)), amount: a.amount } };
    case "raw":
      return { from: fromHex(OWNERS[0]!), body: { kind: "system", opcode: 218, payload: a.payload } };
  }
}

export function toBlock(plan: BlockPlan, chain: Chain, height: bigint): BlockInput {
  return { height, timestamp: height, txs: plan.actions.map((a) => toTransaction(a, chain, height)) };
}

// ---- invariants -----------------------------------------------------------------------------------

const LIVE = new Set(["Active", "Suspended"]);

function ownerCount(store: MemoryStateStore, owner: Uint8Array): bigint {
  const bytes = store.read(ownerCountKey(owner));
  if (bytes === undefined) return 0n;
  const raw = decodeStateValueAs(bytes, "StorageSlot").bytes;
  return raw.reduce((v, b) => (v << 8n) | BigInt(b), 0n);
}

/** Asserts every cross-record invariant; returns a description of the first violation or null. */
export function invariantViolation(chain: Chain, store: MemoryStateStore): string | null {
  const streams = chain.streams();
  const byId = new Map(streams.map((s) => [toHex(s.stream_id), s]));
  const live = streams.filter((s) => LIVE.has(s.status));
  // §5 custody: the registry account backs every live escrow.
  const escrow = streams.reduce((sum, s) => sum + s.escrow_balance, 0n);
  const custody = chain.account(REGISTRY_ADDRESS).balance;
  if (custody < escrow) return `custody ${custody} < Σ escrow ${escrow}`;
  // Conservation: fees are zero, so CBY only moves (burns credit the zero address).
  const supply = chain.accounts().reduce((sum, a) => sum + a.balance, 0n);
  if (supply !== TOTAL_SUPPLY) return `total supply ${supply} != ${TOTAL_SUPPLY}`;
  for (const s of streams) {
    const id = toHex(s.stream_id);
    // §6.1: Active ⇔ both pinned fields absent; Suspended carries both; terminal clears both.
    const pinned = [s.suspended_at_block, s.suspension_grace_deadline_block].filter((x) => x !== null).length;
    if (s.status === "Suspended" ? pinned !== 2 : pinned !== 0) return `${id} ${s.status} with ${pinned} pinned fields`;
    if (!LIVE.has(s.status) && s.escrow_balance !== 0n) return `${id} terminal with escrow ${s.escrow_balance}`;
    if (s.purpose === "Main" && s.encrypted) {
      // §4.1: the key stream mirrors the main stream atomically.
      const k = s.linked_stream_id === null ? undefined : byId.get(toHex(s.linked_stream_id));
      if (k === undefined) return `${id} encrypted without its key stream`;
      if (!bytesEqual(k.stream_id, keyStreamId(s.stream_id))) return `${id} links a key stream with the wrong id`;
      const mirrored: Array<keyof StreamRecordV1> = [
        "status",
        "suspended_at_block",
        "suspension_grace_deadline_block",
        "last_settled_block",
        "encryption_generation",
        "authorization_generation",
        "pricing_generation",
        "pricing_basis",
        "owner",
        "provider",
        "provider_signing_key",
        "admin_key",
      ];
      const mj = toJson(S.StreamRecordV1, s) as JsonObject;
      const kj = toJson(S.StreamRecordV1, k) as JsonObject;
      for (const f of mirrored) {
        if (JSON.stringify(mj[f]) !== JSON.stringify(kj[f])) return `${id} key stream ${f} diverges`;
      }
      if (k.purpose !== "Key" || k.encrypted || k.delivery_class !== "Standard" || k.rate_per_block !== 0n || k.escrow_balance !== 0n) {
        return `${id} key stream shape`;
      }
      if (k.linked_stream_id === null || !bytesEqual(k.linked_stream_id, s.stream_id)) return `${id} key stream back link`;
    }
  }
  // Counters equal what the live main records imply (§4.3, §5).
  const mains = live.filter((s) => s.purpose === "Main");
  for (const o of OWNERS) {
    const want = BigInt(mains.filter((s) => bytesEqual(s.owner, fromHex(o))).length);
    const got = ownerCount(store, fromHex(o));
    if (got !== want) return `owner ${o} count ${got}, live main streams ${want}`;
  }
  for (const p of chain.providers()) {
    const mine = mains.filter((s) => bytesEqual(s.provider, p.provider));
    if (p.live_assigned_streams !== BigInt(mine.length)) return `provider live_assigned_streams ${p.live_assigned_streams} != ${mine.length}`;
    const base = mine.filter((s) => s.pricing_basis.type === "GovernanceBase");
    const r = p.base_rate_reserved;
    const sum = (f: (s: StreamRecordV1) => bigint) => base.reduce((x, s) => x + f(s), 0n);
    if (
      r.reserved_streams !== BigInt(base.length) ||
      r.retained_bytes !== sum((s) => s.config.retained_bytes_limit) ||
      r.append_bytes_per_sec !== sum((s) => s.config.max_append_bytes_per_sec) ||
      r.delivered_bytes_per_sec !== sum((s) => s.config.max_delivered_bytes_per_sec)
    ) {
      return `provider base_rate_reserved ${JSON.stringify(toJson(S.BaseRateReservationTotalsV1, r))} != live GovernanceBase streams`;
    }
    if (p.status === "Deregistered" && mine.length > 0) return "Deregistered provider with live streams";
  }
  return null;
}

/** Terminal records never change again (§5: Closed and DataExpired are absorbing). */
export class TerminalWatch {
  private readonly seen = new Map<string, string>();
  check(chain: Chain): string | null {
    for (const s of chain.streams()) {
      const id = toHex(s.stream_id);
      const bytes = JSON.stringify(toJson(S.StreamRecordV1, s));
      const before = this.seen.get(id);
      if (before !== undefined && before !== bytes) return `terminal record ${id} changed`;
      if (!LIVE.has(s.status)) this.seen.set(id, bytes);
    }
    return null;
  }
}
