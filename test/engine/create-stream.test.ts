import { describe, expect, it } from "vitest";
import { keyStreamId, signingKeyId } from "../../src/codec/derive.js";
import { quoteDigest } from "../../src/codec/signing.js";
import type { StreamConfigV1 } from "../../src/codec/types.js";
import { encode } from "../../src/codec/core.js";
import * as S from "../../src/codec/schema.js";
import { accountKey, providerKey, REGISTRY_ADDRESS, streamKey, ZERO_ADDRESS } from "../../src/engine/layout.js";
import { U128_MAX, U64_MAX } from "../../src/engine/math.js";
import { encodeStateValue } from "../../state/kv/value.js";
import {
  cbqs,
  genesisConfig,
  gov,
  ix,
  OPEN_ADMISSION,
  OTHER,
  OWNER,
  PROVIDER,
  PROVIDER2,
  pubKey,
  QUOTE_SEED,
  RICH,
  seed,
  SIGNING_SEED,
  snapshot,
  standardConfig,
  STANDARD_ONE_UNIT_RATE,
  TestChain,
  writeOutOfBand,
} from "./harness.js";

function chainWithProvider(admission = OPEN_ADMISSION, params: Record<string, bigint> = {}) {
  const t = new TestChain(genesisConfig(params));
  t.ok(cbqs(PROVIDER, ix.registerProvider(admission)));
  return t;
}
const errorOf = (t: TestChain, i = ix.createStream(), from = OWNER) => t.tx(cbqs(from, i)).error?.name;

describe("§5 CreateStream", () => {
  it("§4.1/§5/§6 governance-base creation: record fields, creation charge burned, escrow in custody, counters", () => {
    const t = chainWithProvider();
    const o = t.ok(cbqs(OWNER, ix.createStream({ initial_escrow: 1234n })));
    expect(o.events.map((e) => e.topic)).toEqual(["cbqs.stream.created"]);
    expect(o.events[0]!.payload).toEqual(t.streamId());
    const r = t.chain.stream(t.streamId())!;
    expect(r.status).toBe("Active");
    expect(r.pricing_generation).toBe(1n);
    expect(r.pricing_basis.type).toBe("GovernanceBase");
    expect(r.created_at_block).toBe(2n);
    expect(r.last_settled_block).toBe(2n);
    expect(r.provider_epoch).toBe(0n);
    const charge = STANDARD_ONE_UNIT_RATE * 604_800n;
    expect(t.balance(OWNER)).toBe(RICH - charge - 1234n);
    expect(t.balance(ZERO_ADDRESS)).toBe(charge);
    expect(t.balance(REGISTRY_ADDRESS)).toBe(1234n);
    const p = t.chain.provider(PROVIDER)!;
    expect(p.live_assigned_streams).toBe(1n);
    expect(p.base_rate_reserved).toEqual({ reserved_streams: 1n, retained_bytes: 1n << 30n, append_bytes_per_sec: 1n << 20n, delivered_bytes_per_sec: 1n << 20n });
    expect([o.reads <= 34, o.writes <= 11]).toEqual([true, true]);
  });

  it("§4.1 an owner nonce is never reusable, including after the stream closes", () => {
    const t = chainWithProvider();
    t.ok(cbqs(OWNER, ix.createStream()));
    expect(errorOf(t)).toBe("OwnerNonceUsed");
    t.ok(cbqs(OWNER, ix.close(t.streamId())));
    expect(errorOf(t)).toBe("OwnerNonceUsed");
    expect(t.tx(cbqs(OWNER, ix.createStream({ owner_nonce: 1n }))).status).toBe("ok");
  });

  it("§4.5 an all-zero-capacity governance-base configuration is rejected; a cheap one is clamped up to 8,000", () => {
    const t = chainWithProvider();
    const zero = standardConfig({ retained_bytes_limit: 0n, max_append_bytes_per_sec: 0n, max_delivered_bytes_per_sec: 0n });
    expect(errorOf(t, ix.createStream({ config: zero }))).toBe("PricingBasisInvalid");
    const cheap = standardConfig({ retained_bytes_limit: 1n, max_append_bytes_per_sec: 0n, max_delivered_bytes_per_sec: 0n });
    t.ok(cbqs(OWNER, ix.createStream({ config: cheap })));
    expect(t.chain.stream(t.streamId())!.rate_per_block).toBe(8_000n);
  });

  it("§4.5 units are ceil-divided: one byte over a unit costs a second unit, in each priced field (throughput rounding included)", () => {
    const t = chainWithProvider();
    const MiB = 1n << 20n;
    // [config, retained units, throughput units, delivered units]; delivered ≥ append (§4.2).
    const cases: Array<[Partial<StreamConfigV1>, bigint, bigint, bigint]> = [
      [{ retained_bytes_limit: (1n << 30n) + 1n }, 2n, 1n, 1n],
      [{ max_append_bytes_per_sec: 1_048_577n, max_delivered_bytes_per_sec: 2n * MiB }, 1n, 2n, 2n],
      [{ max_append_bytes_per_sec: 1_048_577n, max_delivered_bytes_per_sec: 1_048_577n }, 1n, 2n, 2n],
      [{ max_append_bytes_per_sec: MiB - 1n, max_delivered_bytes_per_sec: MiB + 1n }, 1n, 1n, 2n],
    ];
    cases.forEach(([over, retained, throughput, delivered], nonce) => {
      t.ok(cbqs(OWNER, ix.createStream({ owner_nonce: BigInt(nonce), config: standardConfig(over) })));
      const rate = t.chain.stream(t.streamId(OWNER, BigInt(nonce)))!.rate_per_block;
      expect(rate, JSON.stringify(over, (_, v) => (typeof v === "bigint" ? String(v) : v))).toBe(
        retained * 67n + throughput * 13_300n + delivered * 66_700n,
      );
    });
  });

  it("§5 governance base needs accepts_new (BaseRateNotAccepted) and must fit every cap (BaseRateCapacityExceeded)", () => {
    expect(errorOf(chainWithProvider({ ...OPEN_ADMISSION, accepts_new: false }))).toBe("BaseRateNotAccepted");
    expect(errorOf(chainWithProvider({ ...OPEN_ADMISSION, max_active_streams: 0n }))).toBe("BaseRateCapacityExceeded");
    expect(errorOf(chainWithProvider({ ...OPEN_ADMISSION, max_total_delivered_bytes_per_sec: 1n << 19n }))).toBe("BaseRateCapacityExceeded");
  });

  it("§6 an owner who cannot pay the creation charge or the escrow creates nothing", () => {
    const t = chainWithProvider();
    const before = snapshot(t);
    expect(errorOf(t, ix.createStream({ initial_escrow: RICH }))).toBe("InsufficientBalance");
    // §5: a u128 amount above u64 is insufficient balance, never truncated
    expect(errorOf(t, ix.createStream({ initial_escrow: 1n << 64n }))).toBe("InsufficientBalance");
    expect(snapshot(t)).toEqual(before);
  });

  it("§4.3 the provider must exist and be Active", () => {
    const t = new TestChain();
    expect(errorOf(t)).toBe("ProviderNotFound");
  });

  it("§4.2 config validation: LIVE and IMMUTABLE sources, nonzero, max_delivered >= max_append, default <= max visibility", () => {
    const t = chainWithProvider();
    const bad = (over: Parameters<typeof standardConfig>[0]) => errorOf(t, ix.createStream({ config: standardConfig(over) }));
    expect(bad({ max_message_bytes: 0 })).toBe("InvalidStreamConfig");
    expect(bad({ max_lanes: 0 })).toBe("InvalidStreamConfig");
    expect(bad({ retention_ms: 0n })).toBe("InvalidStreamConfig");
    expect(bad({ default_max_attempts: 0 })).toBe("InvalidStreamConfig");
    expect(bad({ max_message_bytes: 262_145 })).toBe("InvalidStreamConfig"); // live default 262,144
    expect(bad({ retention_ms: 2_592_000_001n })).toBe("InvalidStreamConfig"); // immutable Maximum
    expect(bad({ max_visibility_ms: 900_001n, default_visibility_ms: 1n })).toBe("InvalidStreamConfig");
    expect(bad({ default_visibility_ms: 60_001n })).toBe("InvalidStreamConfig");
    expect(bad({ max_delivered_bytes_per_sec: (1n << 20n) - 1n })).toBe("InvalidStreamConfig");
    // the IMMUTABLE Maximum, not the live default: retention above the 604,800,000 default is fine
    t.ok(cbqs(OWNER, ix.createStream({ config: standardConfig({ retention_ms: 2_592_000_000n }) })));
    // the LIVE bound follows governance writes
    t.ok(gov({ type: "SetParam", name: "cbqs.max_inline_message_bytes", value: 1_048_576n }));
    t.ok(cbqs(OWNER, ix.createStream({ owner_nonce: 1n, config: standardConfig({ max_message_bytes: 262_145 }) })));
  });

  it("§4.2 Fast: fast-only fields nonzero and bounded, standard-only fields unchecked, 268,435,456 cross-field bound", () => {
    const t = chainWithProvider(OPEN_ADMISSION, { "cbqs.max_inline_message_bytes": 1_048_576n });
    const fast = (over: Parameters<typeof standardConfig>[0]) =>
      ix.createStream({
        delivery_class: "Fast",
        config: standardConfig({ retention_ms: 3_600_000n, fast_batch_max_ms: 100, fast_batch_max_records: 256, default_max_attempts: 0, ...over }),
      });
    expect(errorOf(t, fast({ fast_batch_max_ms: 0 }))).toBe("InvalidStreamConfig");
    expect(errorOf(t, fast({ fast_batch_max_records: 65_537 }))).toBe("InvalidStreamConfig");
    expect(errorOf(t, fast({ retention_ms: 86_400_001n }))).toBe("InvalidStreamConfig");
    expect(errorOf(t, fast({ max_message_bytes: 1_048_576, fast_batch_max_records: 257 }))).toBe("InvalidStreamConfig");
    t.ok(cbqs(OWNER, fast({ max_message_bytes: 1_048_576, fast_batch_max_records: 256 })));
  });

  it("cbqs.max_streams_per_owner bounds live streams; a terminal stream frees its slot", () => {
    const t = chainWithProvider(OPEN_ADMISSION, { "cbqs.max_streams_per_owner": 1n });
    t.ok(cbqs(OWNER, ix.createStream()));
    expect(errorOf(t, ix.createStream({ owner_nonce: 1n }))).toBe("OwnerStreamLimit");
    t.ok(cbqs(OWNER, ix.close(t.streamId())));
    t.ok(cbqs(OWNER, ix.createStream({ owner_nonce: 1n })));
  });

  it("§4.1 an encrypted stream creates its linked zero-rate Standard key stream atomically: one reservation, one live count, one event", () => {
    const t = chainWithProvider();
    const o = t.ok(cbqs(OWNER, ix.createStream({ encrypted: true, rotation_key: { algorithm: "Ed25519", key: new Uint8Array(32).fill(5) } })));
    expect(o.events.map((e) => e.topic)).toEqual(["cbqs.stream.created"]);
    const main = t.chain.stream(t.streamId())!;
    const key = t.chain.stream(keyStreamId(t.streamId()))!;
    expect(main.linked_stream_id).toEqual(key.stream_id);
    expect(key.linked_stream_id).toEqual(main.stream_id);
    expect(key.purpose).toBe("Key");
    expect(key.delivery_class).toBe("Standard");
    expect(key.encrypted).toBe(false);
    expect(key.rate_per_block).toBe(0n);
    expect(key.escrow_balance).toBe(0n);
    expect(key.pricing_basis).toEqual(main.pricing_basis);
    expect(key.rotation_key).toEqual(main.rotation_key);
    expect(key.config.retention_ms).toBe(main.config.retention_ms);
    const p = t.chain.provider(PROVIDER)!;
    expect(p.live_assigned_streams).toBe(1n);
    expect(p.base_rate_reserved.reserved_streams).toBe(1n);
    // a key stream is never operated independently
    expect(t.tx(cbqs(OWNER, ix.topUp(key.stream_id, 5n))).error!.name).toBe("KeyStreamNotIndependent");
    expect(t.tx(cbqs(OWNER, ix.close(key.stream_id))).error!.name).toBe("KeyStreamNotIndependent");
  });
});

describe("§4.4 CreateStream with a PriceQuoteV1", () => {
  it("§4.4 a valid quote prices the stream, stores quote_digest, consumes no base-rate reservation", () => {
    const t = chainWithProvider({ ...OPEN_ADMISSION, accepts_new: false });
    const q = t.quote();
    const o = t.ok(cbqs(OWNER, ix.createStream({ price_quote: q })));
    expect(o.events.map((e) => e.topic)).toEqual(["cbqs.stream.created"]);
    const r = t.chain.stream(t.streamId())!;
    expect(r.rate_per_block).toBe(10_000n);
    expect(r.pricing_basis).toEqual({ type: "ProviderQuote", quote_digest: quoteDigest(q) });
    expect(t.chain.provider(PROVIDER)!.base_rate_reserved.reserved_streams).toBe(0n);
    expect(t.balance(ZERO_ADDRESS)).toBe(10_000n * 604_800n);
  });

  it("§4.4 each binding is checked: owner, stream, generation, class, capacity, floor, expiry, key id, signature, context", () => {
    const t = chainWithProvider();
    const cfg = standardConfig();
    // Each refusal names the binding that failed (§4.4), so one check cannot hide behind another.
    const bad = (over: Parameters<TestChain["quote"]>[0], signer?: Uint8Array) => {
      const error = t.tx(cbqs(OWNER, ix.createStream({ price_quote: t.quote(over, signer) }))).error;
      return `${error?.name}: ${error?.message}`;
    };
    const invalid = (reason: string) => `PricingBasisInvalid: price quote ${reason} (§4.4)`;
    expect(bad({ owner: OTHER })).toBe(invalid("names another owner"));
    expect(bad({ stream_id: t.streamId(OWNER, 1n) })).toBe(invalid("binds another stream_id"));
    expect(bad({ pricing_generation: 2n })).toBe(invalid("pricing_generation 2 is not 1"));
    expect(bad({ delivery_class: "Fast" })).toBe(invalid("delivery class differs from the stream's"));
    expect(bad({ retained_bytes: cfg.retained_bytes_limit + 1n })).toBe(invalid("retained_bytes differs from config.retained_bytes_limit"));
    expect(bad({ append_bytes_sec: 0n })).toBe(invalid("append_bytes_sec differs from config.max_append_bytes_per_sec"));
    expect(bad({ delivered_bytes_sec: 0n })).toBe(invalid("delivered_bytes_sec differs from config.max_delivered_bytes_per_sec"));
    expect(bad({ rate_per_block: 7_999n })).toBe(invalid("rate 7999 is below CBQS_MIN_RATE_PER_BLOCK"));
    expect(bad({ valid_until_block: 1n })).toBe(invalid("expired at block 1")); // expired blocks before the executing height
    expect(bad({ signing_key_id: new Uint8Array(32) })).toBe(invalid("signing_key_id is not the provider's quote_key id"));
    expect(bad({}, seed(77))).toBe(invalid("signature does not verify"));
    expect(bad({ context: { ...t.context(), chain_id: 8n } })).toMatch(/^ChainInstanceMismatch: /);
    expect(bad({ context: { ...t.context(), chain_instance_id: new Uint8Array(32) } })).toMatch(/^ChainInstanceMismatch: /);
    // valid_until_block equal to the executing height is still valid
    expect(t.tx(cbqs(OWNER, ix.createStream({ price_quote: t.quote({ valid_until_block: t.height + 1n }) }))).status).toBe("ok");
  });
});

describe("§4.1/§4.2 key stream of a Fast main stream", () => {
  it("§4.1 the key stream is Standard with the §18 Standard defaults and no fast fields; retention equals the main's", () => {
    const t = chainWithProvider();
    const cfg = standardConfig({ fast_batch_max_ms: 100, fast_batch_max_records: 64, default_max_attempts: 0, idempotency_horizon_ms: 0n });
    t.ok(cbqs(OWNER, ix.createStream({ delivery_class: "Fast", encrypted: true, config: cfg })));
    const key = t.chain.stream(keyStreamId(t.streamId()))!;
    expect(key.delivery_class).toBe("Standard");
    expect(key.config.retention_ms).toBe(cfg.retention_ms);
    expect(key.config.retained_bytes_limit).toBe(cfg.retained_bytes_limit);
    expect([key.config.default_max_attempts, key.config.idempotency_horizon_ms, key.config.max_visibility_ms]).toEqual([10, 86_400_000n, 30_000n]);
    expect([key.config.fast_batch_max_ms, key.config.fast_batch_max_records]).toEqual([0, 0]);
  });
});

describe("§4.4 spec-fidelity audit: the quote is bound to the named provider's finalized quote_key", () => {
  it("§4.4 a quote naming another provider, or signed by the provider's signing_key instead of its quote_key, is rejected", () => {
    const t = chainWithProvider();
    t.ok(cbqs(PROVIDER2, ix.registerProvider()));
    expect(t.tx(cbqs(OWNER, ix.createStream({ price_quote: t.quote({ provider: PROVIDER2 }) }))).error).toMatchObject({
      name: "PricingBasisInvalid",
      message: "price quote names another provider (§4.4)",
    });
    const bySigningKey = t.quote({ signing_key_id: signingKeyId(pubKey(SIGNING_SEED)) }, SIGNING_SEED);
    expect(errorOf(t, ix.createStream({ price_quote: bySigningKey }))).toBe("PricingBasisInvalid");
  });

  it("§4.4 after UpdateProvider rotates quote_key, a quote under the old key is rejected and one under the new key admits", () => {
    const t = chainWithProvider();
    const newSeed = seed(90);
    t.ok(cbqs(PROVIDER, { type: "UpdateProvider", args: { endpoints: null, signing_key: null, quote_key: pubKey(newSeed), base_rate_admission: null, metadata_hash: null } }));
    expect(errorOf(t, ix.createStream({ price_quote: t.quote({}, QUOTE_SEED) }))).toBe("PricingBasisInvalid");
    t.ok(cbqs(OWNER, ix.createStream({ price_quote: t.quote({ signing_key_id: signingKeyId(pubKey(newSeed)) }, newSeed) })));
  });

  it("§4.4/§6 a quote at exactly CBQS_MIN_RATE_PER_BLOCK is accepted as signed (never clamped); its creation charge is 8,000 × 604,800 burned", () => {
    const t = chainWithProvider();
    const ownerBefore = t.balance(OWNER);
    t.ok(cbqs(OWNER, ix.createStream({ price_quote: t.quote({ rate_per_block: 8_000n }), initial_escrow: 5n })));
    expect(t.chain.stream(t.streamId())!.rate_per_block).toBe(8_000n);
    expect(t.balance(ZERO_ADDRESS)).toBe(8_000n * 604_800n);
    expect(ownerBefore - t.balance(OWNER)).toBe(8_000n * 604_800n + 5n);
    expect(t.balance(REGISTRY_ADDRESS)).toBe(5n);
  });
});

// Each refusal below is asserted with its reason as well as its name: a check (or the label of
// the quantity it guards) that moved or vanished would otherwise pass while a neighbouring check
// refused the same input. Several need state no valid chain produces (docs/engineering/testing.md).
describe("§5/§6 CreateStream refusals name the quantity that failed", () => {
  const refusal = (t: TestChain, i = ix.createStream()) => {
    const e = t.tx(cbqs(OWNER, i)).error;
    return `${e?.name}: ${e?.message}`;
  };
  const slot = (bytes: Uint8Array) => encodeStateValue({ kind: "StorageSlot", bytes });

  it("§6 the creation charge and the initial escrow are debited (and refused) under their own names", () => {
    const poor = new TestChain(genesisConfig({}, [[OWNER, 1_000n], [PROVIDER, RICH]]));
    poor.ok(cbqs(PROVIDER, ix.registerProvider()));
    expect(refusal(poor)).toMatch(/^InsufficientBalance: creation charge: /);
    const t = chainWithProvider();
    expect(refusal(t, ix.createStream({ initial_escrow: RICH }))).toMatch(/^InsufficientBalance: initial escrow: /);
  });

  it("§6 a quoted rate whose creation charge (rate × 604,800) overflows u128 is ArithmeticOverflow, before any debit", () => {
    const t = chainWithProvider();
    const before = snapshot(t);
    const rate = U128_MAX / 604_800n + 1n;
    expect(refusal(t, ix.createStream({ price_quote: t.quote({ rate_per_block: rate }) }))).toBe("ArithmeticOverflow: creation charge overflows");
    expect(snapshot(t)).toEqual(before);
    // one below: the charge fits u128, and the owner simply cannot pay it
    expect(refusal(t, ix.createStream({ price_quote: t.quote({ rate_per_block: rate - 1n }) }))).toMatch(/^InsufficientBalance: creation charge: /);
  });

  it("§4.4 a quote for another chain is refused as the PRICE QUOTE's context", () => {
    const t = chainWithProvider();
    expect(refusal(t, ix.createStream({ price_quote: t.quote({ context: { ...t.context(), chain_id: 8n } }) }))).toBe(
      "ChainInstanceMismatch: price quote context is not this chain's (§4)",
    );
  });

  it("§5 credits that would overflow u64 (custody, the burn address; state corruption) are refused by name, and nothing moves", () => {
    const custody = chainWithProvider();
    writeOutOfBand(custody, accountKey(REGISTRY_ADDRESS), encodeStateValue({ kind: "Account", nonce: 0n, balance: U64_MAX - 5n }));
    let before = snapshot(custody);
    expect(refusal(custody, ix.createStream({ initial_escrow: 6n }))).toMatch(/^ArithmeticOverflow: escrow custody: credit to /);
    expect(snapshot(custody)).toEqual(before);
    custody.ok(cbqs(OWNER, ix.createStream({ initial_escrow: 5n }))); // reaching exactly u64::MAX is fine

    const burn = chainWithProvider();
    const charge = STANDARD_ONE_UNIT_RATE * 604_800n;
    writeOutOfBand(burn, accountKey(ZERO_ADDRESS), encodeStateValue({ kind: "Account", nonce: 0n, balance: U64_MAX - charge + 1n }));
    before = snapshot(burn);
    expect(refusal(burn)).toMatch(/^ArithmeticOverflow: creation charge burn: credit to /);
    expect(snapshot(burn)).toEqual(before);
  });

  it("§4.3 a provider whose live_assigned_streams is already u64::MAX (state corruption) cannot take another stream", () => {
    const t = chainWithProvider();
    const p = t.chain.provider(PROVIDER)!;
    writeOutOfBand(t, providerKey(PROVIDER), slot(encode(S.ProviderRecordV1, { ...p, live_assigned_streams: U64_MAX })));
    expect(refusal(t, ix.createStream({ price_quote: t.quote() }))).toBe("ArithmeticOverflow: live_assigned_streams overflows");
  });

  it("§4.1 a key stream stored under the derived key id while its main stream is absent (state corruption) fails closed", () => {
    const t = chainWithProvider();
    t.ok(cbqs(OWNER, ix.createStream({ encrypted: true })));
    writeOutOfBand(t, streamKey(t.streamId()), null);
    const before = snapshot(t);
    expect(refusal(t, ix.createStream({ encrypted: true }))).toBe("RegistryStateInvalid: a key stream exists for a main stream that does not");
    expect(snapshot(t)).toEqual(before);
  });
});
