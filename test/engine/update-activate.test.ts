import { describe, expect, it } from "vitest";
import { keyStreamId } from "../../src/codec/derive.js";
import type { CbqsInstructionV1, StreamRecordV1, UpdateStreamArgsV1 } from "../../src/codec/types.js";
import { deriveKeyStream } from "../../src/engine/streams.js";
import { activateKeyGeneration } from "../../instructions/activate-key-generation.js";
import { AccountLedger, readAccount } from "../../src/engine/accounts.js";
import type { TxContext } from "../../src/engine/context.js";
import { CbqsError } from "../../src/engine/errors.js";
import { Meter } from "../../src/engine/meter.js";
import { verifyStrictReference } from "../../src/engine/fast-paths.js";
import { encode } from "../../src/codec/core.js";
import * as S from "../../src/codec/schema.js";
import { PLATFORM_ADDRESS, providerKey, REGISTRY_ADDRESS, streamKey } from "../../src/engine/layout.js";
import { pauseRecordKey } from "../../src/engine/pause.js";
import { U64_MAX } from "../../src/engine/math.js";
import { encodeStateValue } from "../../state/kv/value.js";
import {
  cbqs,
  genesisConfig,
  GOV,
  gov,
  ix,
  OPEN_ADMISSION,
  OTHER,
  OWNER,
  PROVIDER,
  pubKey,
  seed,
  SIGNING_SEED,
  snapshot,
  standardConfig,
  STANDARD_ONE_UNIT_RATE,
  TestChain,
  writeOutOfBand,
} from "./harness.js";

const R = STANDARD_ONE_UNIT_RATE;
const update = (id: Uint8Array, over: Partial<UpdateStreamArgsV1>): CbqsInstructionV1 => ({
  type: "UpdateStream",
  args: { stream_id: id, config: null, admin_key: null, rotation_key: { type: "Keep" }, price_quote: null, bump_authorization_generation: false, ...over },
});
const activate = (t: TestChain, over: Parameters<TestChain["receipt"]>[0] = {}, bump = false, signer?: Uint8Array): CbqsInstructionV1 => ({
  type: "ActivateKeyGeneration",
  args: { receipt: t.receipt(over, signer), bump_authorization_generation: bump },
});

function setup(over: Parameters<typeof ix.createStream>[0] = {}, admission = OPEN_ADMISSION) {
  const t = new TestChain(genesisConfig({ "cbqs.suspend_grace_blocks": 100n }));
  t.ok(cbqs(PROVIDER, ix.registerProvider(admission)));
  t.ok(cbqs(OWNER, ix.createStream({ initial_escrow: 1000n * R, ...over })));
  return { t, id: t.streamId() };
}

describe("§5 UpdateStream", () => {
  it("§5 the exact no-op rule; a revocation-only bump is valid; owner only", () => {
    const { t, id } = setup();
    expect(t.tx(cbqs(OWNER, update(id, {}))).error!.name).toBe("NoOpRejected");
    expect(t.tx(cbqs(OTHER, update(id, { bump_authorization_generation: true }))).error!.name).toBe("Unauthorized");
    const o = t.ok(cbqs(OWNER, update(id, { bump_authorization_generation: true })));
    expect(o.events.map((e) => e.topic)).toEqual(["cbqs.stream.updated"]);
    expect(t.chain.stream(id)!.authorization_generation).toBe(2n);
  });

  it("§4.1 an admin-key change always bumps authorization_generation (once); rotation key Set/Clear mirrors to the key stream", () => {
    const { t, id } = setup({ encrypted: true });
    t.ok(cbqs(OWNER, update(id, { admin_key: pubKey(seed(50)), bump_authorization_generation: true, rotation_key: { type: "Set", key: pubKey(seed(51)) } })));
    const main = t.chain.stream(id)!;
    const key = t.chain.stream(keyStreamId(id))!;
    expect(main.authorization_generation).toBe(2n);
    expect(main.admin_key).toEqual(pubKey(seed(50)));
    expect(key.rotation_key).toEqual(pubKey(seed(51)));
    expect(key.authorization_generation).toBe(2n);
    t.ok(cbqs(OWNER, update(id, { rotation_key: { type: "Clear" } })));
    expect(t.chain.stream(keyStreamId(id))!.rotation_key).toBeNull();
    expect(t.chain.stream(id)!.authorization_generation).toBe(2n);
  });

  it("authorization bump (§4.1): an admin-key change WITHOUT the flag bumps authorization_generation once, on main and key stream", () => {
    const { t, id } = setup({ encrypted: true });
    t.ok(cbqs(OWNER, update(id, { admin_key: pubKey(seed(52)) })));
    expect([t.chain.stream(id)!.authorization_generation, t.chain.stream(keyStreamId(id))!.authorization_generation]).toEqual([2n, 2n]);
    // Re-sending the same admin key is still a change request: it bumps again.
    t.ok(cbqs(OWNER, update(id, { admin_key: pubKey(seed(52)) })));
    expect(t.chain.stream(id)!.authorization_generation).toBe(3n);
    // A change that touches neither the admin key nor the flag leaves the generation alone.
    t.ok(cbqs(OWNER, update(id, { config: standardConfig({ max_lanes: 32 }) })));
    expect(t.chain.stream(id)!.authorization_generation).toBe(3n);
  });

  it("§6.1 an administrative update performs no settlement: escrow, status and last_settled_block untouched", () => {
    const { t, id } = setup();
    const before = t.chain.stream(id)!;
    t.ok(cbqs(OWNER, update(id, { config: standardConfig({ max_lanes: 32 }) })), 50n);
    const after = t.chain.stream(id)!;
    expect(after.escrow_balance).toBe(before.escrow_balance);
    expect(after.last_settled_block).toBe(before.last_settled_block);
    expect(after.pricing_generation).toBe(1n);
    expect(after.config.max_lanes).toBe(32);
  });

  it("§5 a governance-base priced-capacity change settles the old rate, reprices, applies the reservation delta, bumps pricing_generation once", () => {
    const { t, id } = setup();
    const cfg = standardConfig({ retained_bytes_limit: 3n << 30n });
    t.ok(cbqs(OWNER, update(id, { config: cfg })), 12n);
    const r = t.chain.stream(id)!;
    expect(r.last_settled_block).toBe(12n);
    expect(r.escrow_balance).toBe(1000n * R - 10n * R);
    expect(r.rate_per_block).toBe(3n * 67n + 13_300n + 66_700n);
    expect(r.pricing_generation).toBe(2n);
    expect(t.chain.provider(PROVIDER)!.base_rate_reserved.retained_bytes).toBe(3n << 30n);
    expect(t.balance(PLATFORM_ADDRESS)).toBe(10n * R - (10n * R * 9000n) / 10000n);
    // §5 a quote where no repricing happens is rejected
    expect(t.tx(cbqs(OWNER, update(id, { config: cfg, price_quote: t.quote() }))).error!.name).toBe("PricingBasisInvalid");
  });

  it("§5 a positive reservation delta needs accepts_new and must fit the caps; a negative delta always releases", () => {
    const { t, id } = setup();
    t.ok(cbqs(PROVIDER, { type: "UpdateProvider", args: { endpoints: null, signing_key: null, quote_key: null, metadata_hash: null, base_rate_admission: { ...OPEN_ADMISSION, accepts_new: false } } }));
    const before = snapshot(t);
    expect(t.tx(cbqs(OWNER, update(id, { config: standardConfig({ retained_bytes_limit: 2n << 30n }) }))).error!.name).toBe("BaseRateNotAccepted");
    expect(snapshot(t)).toEqual(before);
    t.ok(cbqs(OWNER, update(id, { config: standardConfig({ retained_bytes_limit: 1n }) })));
    expect(t.chain.provider(PROVIDER)!.base_rate_reserved.retained_bytes).toBe(1n);
  });

  it("§4.4/§5 a ProviderQuote stream reprices only with a fresh quote bound to pricing_generation + 1", () => {
    const t0 = new TestChain();
    t0.ok(cbqs(PROVIDER, ix.registerProvider()));
    t0.ok(cbqs(OWNER, ix.createStream({ initial_escrow: 10n ** 9n, price_quote: t0.quote() })));
    const id = t0.streamId();
    const cfg = standardConfig({ retained_bytes_limit: 2n << 30n });
    expect(t0.tx(cbqs(OWNER, update(id, { config: cfg }))).error!.name).toBe("PricingBasisInvalid");
    const stale = t0.quote({ retained_bytes: cfg.retained_bytes_limit, pricing_generation: 1n });
    expect(t0.tx(cbqs(OWNER, update(id, { config: cfg, price_quote: stale }))).error!.name).toBe("PricingBasisInvalid");
    const fresh = t0.quote({ retained_bytes: cfg.retained_bytes_limit, pricing_generation: 2n, rate_per_block: 20_000n });
    t0.ok(cbqs(OWNER, update(id, { config: cfg, price_quote: fresh })));
    const r = t0.chain.stream(id)!;
    expect(r.pricing_generation).toBe(2n);
    expect(r.rate_per_block).toBe(20_000n);
    // replaying the accepted quote fails the generation binding
    const cfg3 = standardConfig({ retained_bytes_limit: 5n });
    expect(t0.tx(cbqs(OWNER, update(id, { config: cfg3, price_quote: fresh }))).error!.name).toBe("PricingBasisInvalid");
  });

  it("quote expiry (§4.4): a repricing quote is valid through valid_until_block and expired from the next block, nothing changed", () => {
    const t = new TestChain();
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    t.ok(cbqs(OWNER, ix.createStream({ initial_escrow: 10n ** 9n, price_quote: t.quote() })));
    const id = t.streamId();
    const cfg = standardConfig({ retained_bytes_limit: 2n << 30n });
    const quote = t.quote({ retained_bytes: cfg.retained_bytes_limit, pricing_generation: 2n, valid_until_block: 40n });
    const before = snapshot(t);
    const late = t.tx(cbqs(OWNER, update(id, { config: cfg, price_quote: quote })), 41n);
    expect([late.error?.name, late.error?.message]).toEqual(["PricingBasisInvalid", "price quote expired at block 40 (§4.4)"]);
    expect(snapshot(t)).toEqual(before);
    const t2 = new TestChain();
    t2.ok(cbqs(PROVIDER, ix.registerProvider()));
    t2.ok(cbqs(OWNER, ix.createStream({ initial_escrow: 10n ** 9n, price_quote: t2.quote() })));
    expect(t2.streamId()).toEqual(id); // same genesis, owner and nonce: the quote binds this stream too
    t2.ok(cbqs(OWNER, update(id, { config: cfg, price_quote: quote })), 40n);
    expect(t2.chain.stream(id)!.pricing_generation).toBe(2n);
  });

  it("§6.1 UpdateStream requires materialized Active (StreamSuspended otherwise)", () => {
    const { t, id } = setup({ initial_escrow: 2n * R });
    t.ok(cbqs(OTHER, ix.settle(id)), 10n);
    expect(t.tx(cbqs(OWNER, update(id, { bump_authorization_generation: true }))).error!.name).toBe("StreamSuspended");
  });

  it("§6.1/§19 a priced update that takes the underfunded branch emits updated then suspended", () => {
    const { t, id } = setup({ initial_escrow: 2n * R });
    const o = t.ok(cbqs(OWNER, update(id, { config: standardConfig({ retained_bytes_limit: 2n << 30n }) })), 10n);
    expect(o.events.map((e) => e.topic)).toEqual(["cbqs.stream.updated", "cbqs.stream.suspended"]);
    expect(t.chain.stream(id)!.status).toBe("Suspended");
  });
});

describe("§9.3 ActivateKeyGeneration", () => {
  it("§9.3 a valid receipt advances encryption_generation by one (mirrored), optional auth bump, emits key_generation_activated alone", () => {
    const { t, id } = setup({ encrypted: true });
    const o = t.ok(cbqs(OWNER, activate(t, {}, true)));
    expect(o.events.map((e) => e.topic)).toEqual(["cbqs.stream.key_generation_activated"]);
    expect(o.events[0]!.payload).toEqual(id);
    expect([o.reads, o.writes]).toEqual([4, 2]);
    const main = t.chain.stream(id)!;
    expect(main.encryption_generation).toBe(1n);
    expect(main.authorization_generation).toBe(2n);
    expect(t.chain.stream(keyStreamId(id))!.encryption_generation).toBe(1n);
    // the same receipt again is not the next generation
    expect(t.tx(cbqs(OWNER, activate(t, {})) ).error!.name).toBe("InvalidKeyBatch");
    t.ok(cbqs(OWNER, activate(t, { encryption_generation: 2n })));
  });

  it("§9.3 every receipt check: signature key, served_at height and instance, context, ids, epoch, owner, encryption", () => {
    const { t, id } = setup({ encrypted: true });
    const err = (over: Parameters<TestChain["receipt"]>[0], signer?: Uint8Array, from = OWNER) =>
      t.tx(cbqs(from, activate(t, over, false, signer))).error?.name;
    expect(err({}, seed(9))).toBe("InvalidKeyBatch");
    expect(err({ served_at: { chain_instance_id: t.chain.chainInstanceId, height: t.height + 1n, block_hash: new Uint8Array(32) } })).toBe("InvalidKeyBatch");
    expect(err({ served_at: { chain_instance_id: new Uint8Array(32), height: 1n, block_hash: new Uint8Array(32) } })).toBe("ChainInstanceMismatch");
    expect(err({ context: { ...t.context(), chain_id: 9n } })).toBe("ChainInstanceMismatch");
    expect(err({ key_stream_id: id })).toBe("InvalidKeyBatch");
    expect(err({ main_stream_id: t.streamId(OWNER, 5n) })).toBe("StreamNotFound");
    expect(err({}, SIGNING_SEED, OTHER)).toBe("Unauthorized");
    // §4: a foreign context is rejected before authorization
    expect(err({ context: { ...t.context(), chain_id: 9n } }, SIGNING_SEED, OTHER)).toBe("ChainInstanceMismatch");
    const plain = setup();
    expect(plain.t.tx(cbqs(OWNER, activate(plain.t, {}))).error!.name).toBe("StreamNotEncrypted");
  });

  it("§4.3 the receipt verifies against the stream's snapshotted provider key, not a rotated one", () => {
    const { t } = setup({ encrypted: true });
    t.ok(cbqs(PROVIDER, { type: "UpdateProvider", args: { endpoints: null, signing_key: pubKey(seed(60)), quote_key: null, base_rate_admission: null, metadata_hash: null } }));
    expect(t.tx(cbqs(OWNER, activate(t, {}, false, seed(60)))).error!.name).toBe("InvalidKeyBatch");
    expect(t.tx(cbqs(OWNER, activate(t, {}, false, SIGNING_SEED))).status).toBe("ok");
  });

  it("§6.1 an encrypted pair transitions atomically: suspension and close mirror to the key stream", () => {
    const { t, id } = setup({ encrypted: true, initial_escrow: 2n * R });
    t.ok(cbqs(OTHER, ix.settle(id)), 10n);
    const key = t.chain.stream(keyStreamId(id))!;
    expect(key.status).toBe("Suspended");
    expect(key.suspension_grace_deadline_block).toBe(t.chain.stream(id)!.suspension_grace_deadline_block);
    expect(t.tx(cbqs(OWNER, activate(t, {}))).error!.name).toBe("StreamSuspended");
    t.ok(cbqs(OWNER, ix.close(id)));
    expect(t.chain.stream(keyStreamId(id))!.status).toBe("Closed");
  });
});

describe("§4.2/§18 LIVE bounds at update", () => {
  it("§18 lowering cbqs.max_inline_message_bytes re-examines nothing accepted: an unchanged field passes, a changed one is checked", () => {
    const { t, id } = setup();
    t.ok(gov({ type: "SetParam", name: "cbqs.max_inline_message_bytes", value: 1_024n }));
    t.ok(cbqs(OWNER, update(id, { config: standardConfig({ max_lanes: 8 }) })));
    expect(t.tx(cbqs(OWNER, update(id, { config: standardConfig({ max_lanes: 8, max_message_bytes: 2_048 }) }))).error!.name).toBe("InvalidStreamConfig");
    t.ok(cbqs(OWNER, update(id, { config: standardConfig({ max_lanes: 8, max_message_bytes: 1_024 }) })));
  });
});

describe("§5/§6.1 spec-fidelity audit: UpdateStream and ActivateKeyGeneration edges", () => {
  it("§4.2 the Fast 268,435,456 cross-field bound is checked at every update, not only at creation", () => {
    const t = new TestChain(genesisConfig({ "cbqs.max_inline_message_bytes": 1_048_576n }));
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    const fast = (over: Parameters<typeof standardConfig>[0]) =>
      standardConfig({ max_message_bytes: 1_048_576, fast_batch_max_ms: 100, fast_batch_max_records: 256, default_max_attempts: 0, ...over });
    t.ok(cbqs(OWNER, ix.createStream({ delivery_class: "Fast", config: fast({}), initial_escrow: 1000n * R })));
    const id = t.streamId();
    const before = snapshot(t);
    expect(t.tx(cbqs(OWNER, update(id, { config: fast({ fast_batch_max_records: 257 }) }))).error!.name).toBe("InvalidStreamConfig");
    expect(snapshot(t)).toEqual(before);
    t.ok(cbqs(OWNER, update(id, { config: fast({ max_message_bytes: 524_288, fast_batch_max_records: 512 }) })));
  });

  it("§5 a GovernanceBase stream changing priced capacity rejects a quote: it reprices from the schedule only", () => {
    const { t, id } = setup();
    const cfg = standardConfig({ retained_bytes_limit: 2n << 30n });
    const q = t.quote({ retained_bytes: cfg.retained_bytes_limit, pricing_generation: 2n });
    expect(t.tx(cbqs(OWNER, update(id, { config: cfg, price_quote: q }))).error!.name).toBe("PricingBasisInvalid");
  });

  it("§6.1 a priced update taking the underfunded branch pins fresh fields at the historical paid-through, then installs the new rate", () => {
    const { t, id } = setup({ initial_escrow: 2n * R + 3n }); // created at 2, paid through 4
    t.ok(cbqs(OWNER, update(id, { config: standardConfig({ retained_bytes_limit: 2n << 30n }) })), 10n);
    const r = t.chain.stream(id)!;
    expect(r.status).toBe("Suspended");
    expect(r.last_settled_block).toBe(4n);
    expect(r.suspended_at_block).toBe(4n);
    expect(r.suspension_grace_deadline_block).toBe(104n);
    expect(r.escrow_balance).toBe(3n);
    expect(r.rate_per_block).toBe(2n * 67n + 13_300n + 66_700n);
    expect(r.pricing_generation).toBe(2n);
    // the Active-only gate now refuses every further update and activation
    expect(t.tx(cbqs(OWNER, update(id, { bump_authorization_generation: true }))).error!.name).toBe("StreamSuspended");
  });

  it("§5 Closed and DataExpired are absorbing for UpdateStream and ActivateKeyGeneration too", () => {
    const { t, id } = setup({ encrypted: true });
    t.ok(cbqs(OWNER, ix.close(id)));
    const before = snapshot(t);
    expect(t.tx(cbqs(OWNER, update(id, { bump_authorization_generation: true }))).error!.name).toBe("StreamNotActive");
    expect(t.tx(cbqs(OWNER, activate(t, {}))).error!.name).toBe("StreamNotActive");
    expect(snapshot(t)).toEqual(before);
  });

  it("§4.5 an UpdateStream repricing rejects an all-zero capacity and clamps a cheap one up to the 8,000 floor", () => {
    const { t, id } = setup();
    const zero = standardConfig({ retained_bytes_limit: 0n, max_append_bytes_per_sec: 0n, max_delivered_bytes_per_sec: 0n });
    const before = snapshot(t);
    expect(t.tx(cbqs(OWNER, update(id, { config: zero }))).error!.name).toBe("PricingBasisInvalid");
    expect(snapshot(t)).toEqual(before);
    const cheap = standardConfig({ retained_bytes_limit: 1n, max_append_bytes_per_sec: 0n, max_delivered_bytes_per_sec: 0n });
    t.ok(cbqs(OWNER, update(id, { config: cheap })));
    const r = t.chain.stream(id)!;
    expect(r.rate_per_block).toBe(8_000n);
    expect(r.pricing_generation).toBe(2n);
    expect(t.chain.provider(PROVIDER)!.base_rate_reserved).toEqual({ reserved_streams: 1n, retained_bytes: 1n, append_bytes_per_sec: 0n, delivered_bytes_per_sec: 0n });
  });

  it("§4.2/§18 at update the configuration ceilings use the IMMUTABLE §18 Maximum, never the live value", () => {
    const { t, id } = setup();
    t.ok(gov({ type: "SetParam", name: "cbqs.standard.retention_ms", value: 1_000n }));
    t.ok(cbqs(OWNER, update(id, { config: standardConfig({ retention_ms: 2_592_000_000n }) })));
    expect(t.tx(cbqs(OWNER, update(id, { config: standardConfig({ retention_ms: 2_592_000_001n }) }))).error!.name).toBe("InvalidStreamConfig");
  });

  it("§6.1 ActivateKeyGeneration never settles, even on an economically underfunded unmaterialized stream", () => {
    const { t, id } = setup({ encrypted: true, initial_escrow: 2n * R });
    const before = t.chain.stream(id)!;
    const o = t.ok(cbqs(OWNER, activate(t, {})), 50n);
    expect(o.events.map((e) => e.topic)).toEqual(["cbqs.stream.key_generation_activated"]);
    const after = t.chain.stream(id)!;
    expect(after.status).toBe("Active");
    expect(after.escrow_balance).toBe(before.escrow_balance);
    expect(after.last_settled_block).toBe(before.last_settled_block);
  });
});

// Refusals asserted with their reason: the name alone would let a check vanish while another
// refused the same input. Two need state no valid chain produces (written out of band).
describe("§5 UpdateStream refusals name what failed", () => {
  const refusal = (t: TestChain, i: CbqsInstructionV1) => {
    const before = snapshot(t);
    const e = t.tx(cbqs(OWNER, i)).error;
    expect(snapshot(t)).toEqual(before);
    return `${e?.name}: ${e?.message}`;
  };
  const slot = (bytes: Uint8Array) => encodeStateValue({ kind: "StorageSlot", bytes });
  const priced = standardConfig({ retained_bytes_limit: 2n << 30n });

  it("§4.4 a replacement quote for another chain is refused as the PRICE QUOTE's context", () => {
    const { t, id } = setup();
    const quote = t.quote({ retained_bytes: priced.retained_bytes_limit, pricing_generation: 2n, context: { ...t.context(), chain_id: 8n } });
    expect(refusal(t, update(id, { config: priced, price_quote: quote }))).toBe("ChainInstanceMismatch: price quote context is not this chain's (§4)");
  });

  it("§5 a repricing whose assigned provider has no record (state corruption) is RegistryStateInvalid", () => {
    const { t, id } = setup();
    writeOutOfBand(t, providerKey(PROVIDER), null);
    expect(refusal(t, update(id, { config: priced }))).toBe("RegistryStateInvalid: assigned provider has no record");
    // an administrative update never reads the provider record
    t.ok(cbqs(OWNER, update(id, { bump_authorization_generation: true })));
  });

  it("§5 a repricing past pricing_generation = u64::MAX (state corruption) is ArithmeticOverflow, not a wrap", () => {
    const { t, id } = setup();
    const main = t.chain.stream(id)!;
    writeOutOfBand(t, streamKey(id), slot(encode(S.StreamRecordV1, { ...main, pricing_generation: U64_MAX })));
    expect(refusal(t, update(id, { config: priced }))).toBe("ArithmeticOverflow: pricing_generation overflows");
    writeOutOfBand(t, streamKey(id), slot(encode(S.StreamRecordV1, { ...main, pricing_generation: U64_MAX - 1n })));
    t.ok(cbqs(OWNER, update(id, { config: priced })));
    expect(t.chain.stream(id)!.pricing_generation).toBe(U64_MAX);
  });
});

describe("§9.3 ActivateKeyGeneration refusals name what failed", () => {
  const slot = (bytes: Uint8Array) => encodeStateValue({ kind: "StorageSlot", bytes });
  const refusal = (t: TestChain, i: CbqsInstructionV1) => {
    const before = snapshot(t);
    const e = t.tx(cbqs(OWNER, i)).error;
    expect(snapshot(t)).toEqual(before);
    return `${e?.name}: ${e?.message}`;
  };
  /** Rewrites the encrypted pair with `over` applied to the main record (the key stream re-derived). */
  const rewrite = (t: TestChain, over: Partial<StreamRecordV1>) => {
    const main = { ...t.chain.stream(t.streamId())!, ...over };
    writeOutOfBand(t, streamKey(main.stream_id), slot(encode(S.StreamRecordV1, main)));
    writeOutOfBand(t, streamKey(main.linked_stream_id!), slot(encode(S.StreamRecordV1, deriveKeyStream(main))));
  };

  it("§4 a receipt for another chain is refused as the RECEIPT's context", () => {
    const { t } = setup({ encrypted: true });
    expect(refusal(t, activate(t, { context: { ...t.context(), chain_id: 9n } }))).toBe("ChainInstanceMismatch: receipt context is not this chain's (§4)");
  });

  it("§9.3 generations at u64::MAX (state corruption) overflow by name, never wrap", () => {
    const enc = setup({ encrypted: true });
    rewrite(enc.t, { encryption_generation: U64_MAX });
    expect(refusal(enc.t, activate(enc.t, {}))).toBe("ArithmeticOverflow: encryption_generation overflows");

    const auth = setup({ encrypted: true });
    rewrite(auth.t, { authorization_generation: U64_MAX });
    expect(refusal(auth.t, activate(auth.t, {}, true))).toBe("ArithmeticOverflow: authorization_generation overflows");
    auth.t.ok(cbqs(OWNER, activate(auth.t, {}, false))); // without the bump nothing overflows
  });

  it("§9.3 a receipt whose provider_epoch is not the record's is refused by name, before the generation and the signature (handler called directly: the v1 codec admits epoch 0 only)", () => {
    const { t } = setup({ encrypted: true });
    const run = (receipt: ReturnType<TestChain["receipt"]>): unknown => {
      const height = t.height + 1n;
      const batch = t.store.beginBlock(height);
      const ctx: TxContext = {
        batch,
        // The payload length of a valid receipt's instruction (a nonzero epoch cannot be encoded):
        // it bounds the hash preimage the meter allows.
        meter: new Meter("ActivateKeyGeneration", encode(S.CbqsInstructionV1, { type: "ActivateKeyGeneration", args: { receipt: { ...receipt, provider_epoch: 0n }, bump_authorization_generation: false } }).length, verifyStrictReference),
        height,
        sender: OWNER,
        governance: GOV,
        registryPauseKey: pauseRecordKey(GOV, REGISTRY_ADDRESS),
        accounts: new AccountLedger(batch, OWNER, readAccount(batch, OWNER)),
        events: [],
        boundsMemo: null,
      };
      try {
        activateKeyGeneration(ctx, { receipt, bump_authorization_generation: false });
        return ctx.events.map((e) => e.topic);
      } catch (e) {
        return e instanceof CbqsError ? `${e.errorName}: ${e.message}` : e;
      }
    };
    const good = t.receipt();
    expect(run(good)).toEqual(["cbqs.stream.key_generation_activated"]);
    expect(run({ ...good, provider_epoch: 1n })).toBe("ProviderEpochStale: receipt provider_epoch 1 is not 0");
    // checked before the next-generation rule and the signature: both are wrong here too
    expect(run({ ...good, provider_epoch: 1n, encryption_generation: 5n })).toBe("ProviderEpochStale: receipt provider_epoch 1 is not 0");
    expect(run({ ...good, encryption_generation: 5n })).toBe("InvalidKeyBatch: receipt generation 5 is not the next generation 1");
  });
});
