// the check order is consensus — when a transaction fails two checks, the first one in
// docs/reference/errors.md's order picks the error code in its receipt. Each test builds inputs failing two
// (or more) checks at once and asserts both the engine's answer and that docs/reference/errors.md documents
// the winner first (stepOf), so neither the engine nor the document can drift alone.
import { describe, expect, it } from "vitest";
import { encode } from "../../src/codec/core.js";
import * as S from "../../src/codec/schema.js";
import type { CbqsInstructionV1, KeyBatchReceiptV1 } from "../../src/codec/types.js";
import type { TxOutcome } from "../../src/engine/chain.js";
import { ERRORS } from "../../src/engine/errors.js";
import { providerKey, REGISTRY_ADDRESS } from "../../src/engine/layout.js";
import { U64_MAX } from "../../src/engine/math.js";
import { encodeStateValue } from "../../state/kv/value.js";
import { stepOf } from "./error-doc.js";
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
  seed,
  standardConfig,
  STANDARD_ONE_UNIT_RATE,
  TestChain,
  writeOutOfBand,
} from "./harness.js";

const R = STANDARD_ONE_UNIT_RATE;
/** Canonically encodable, refused by §4.3 admission (a loopback host). */
const BAD_ENDPOINTS = [{ transport: "Https" as const, uri: "https://127.0.0.1" }];
const registerWith = (endpoints: typeof BAD_ENDPOINTS): CbqsInstructionV1 => {
  const r = ix.registerProvider();
  return r.type === "RegisterProvider" ? { ...r, args: { ...r.args, endpoints } } : r;
};
const foreign = (t: TestChain) => ({ ...t.context(), chain_id: 99n });

/** Provider registered at 1, stream (nonce 0) created at 2 with `escrow` (paid through 2 + escrow / R), grace 10. */
function setup(escrow = 1000n * R, over: Parameters<typeof ix.createStream>[0] = {}) {
  const t = new TestChain(genesisConfig({ "cbqs.suspend_grace_blocks": 10n }));
  t.ok(cbqs(PROVIDER, ix.registerProvider()));
  t.ok(cbqs(OWNER, ix.createStream({ initial_escrow: escrow, ...over })));
  return { t, id: t.streamId() };
}

/** A stream materialized Suspended at 5 (deadline 15) by a settlement at 8. */
function suspended(over: Parameters<typeof ix.createStream>[0] = {}) {
  const s = setup(3n * R, over);
  s.t.ok(cbqs(OTHER, ix.settle(s.id)), 8n);
  expect(s.t.chain.stream(s.id)!.status).toBe("Suspended");
  return s;
}

/** The errors of docs/reference/errors.md's shared "load the named stream" step, listed under StreamNotFound. */
const LOAD = new Set(["StreamNotFound", "KeyStreamNotIndependent", "StreamNotActive"]);
const documented = (instruction: string, [name, about]: [string, string?]): number =>
  LOAD.has(name) ? stepOf(instruction, "StreamNotFound", "load") : stepOf(instruction, name, about);

/**
 * `o` failed with `winner` (by name and code), and docs/reference/errors.md lists the winner's check
 * (`about`: words of its check text) before each loser's.
 */
function wins(o: TxOutcome, instruction: string, winner: [string, string?], ...losers: Array<[string, string?]>): void {
  expect(o.status).toBe("rejected");
  expect(o.error!.name).toBe(winner[0]);
  expect(o.error!.code).toBe(ERRORS[winner[0] as keyof typeof ERRORS].code);
  for (const loser of losers) {
    expect(documented(instruction, winner), `${winner[0]} documented before ${loser[0]}`).toBeLessThan(documented(instruction, loser));
  }
}

const activate = (receipt: KeyBatchReceiptV1): CbqsInstructionV1 => ix.activate(receipt);

describe("the check order picks the error code (docs/reference/errors.md)", () => {
  it("dispatch check order: opcode, then the 0x17 breaker, then decode (CIP-39 §3, §17, Denial of service)", () => {
    const t = new TestChain();
    t.ok(gov({ type: "Pause", actor: REGISTRY_ADDRESS, blocks: 10n }));
    const garbage = new Uint8Array([7, 1, 2]); // version 7: UnsupportedVersion once decoded
    const D = "Every system transaction";
    wins(t.tx({ from: OWNER, body: { kind: "system", opcode: 217, payload: garbage } }), D, ["UnknownOpcode"], ["RegistryPaused"], ["UnsupportedVersion"]);
    wins(t.tx({ from: OWNER, body: { kind: "system", opcode: 218, payload: garbage } }), D, ["RegistryPaused"], ["UnsupportedVersion"], ["InvalidEncoding"]);
    const unpaused = new TestChain();
    wins(unpaused.tx({ from: OWNER, body: { kind: "system", opcode: 218, payload: garbage } }), D, ["UnsupportedVersion"], ["InvalidEncoding"]);
  });

  it("RegisterProvider check order: ProviderAlreadyRegistered before EndpointRejected (CIP-39 §4.3, §5, §17)", () => {
    const t = new TestChain();
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    wins(t.tx(cbqs(PROVIDER, registerWith(BAD_ENDPOINTS))), "RegisterProvider", ["ProviderAlreadyRegistered"], ["EndpointRejected"]);
    expect(t.tx(cbqs(PROVIDER2, registerWith(BAD_ENDPOINTS))).error!.name).toBe("EndpointRejected");
  });

  it("UpdateProvider check order: NoOpRejected, ProviderNotFound, EndpointRejected, CapBelowReservation (CIP-39 §4.3, §5, §17)", () => {
    const { t } = setup(); // a governance-base stream: PROVIDER holds a reservation
    const none = { endpoints: null, signing_key: null, quote_key: null, base_rate_admission: null, metadata_hash: null };
    const I = "UpdateProvider";
    wins(t.tx(cbqs(OTHER, { type: "UpdateProvider", args: none })), I, ["NoOpRejected"], ["ProviderNotFound"]);
    const both = { ...none, endpoints: BAD_ENDPOINTS, base_rate_admission: { ...OPEN_ADMISSION, max_active_streams: 0n } };
    wins(t.tx(cbqs(OTHER, { type: "UpdateProvider", args: both })), I, ["ProviderNotFound"], ["EndpointRejected"], ["CapBelowReservation"]);
    wins(t.tx(cbqs(PROVIDER, { type: "UpdateProvider", args: both })), I, ["EndpointRejected"], ["CapBelowReservation"]);
    expect(t.tx(cbqs(PROVIDER, { type: "UpdateProvider", args: { ...both, endpoints: null } })).error!.name).toBe("CapBelowReservation");
  });

  it("SetProviderStatus check order: ProviderNotFound, NoOpRejected before ProviderHasLiveStreams (CIP-39 §4.3, §19, §17)", () => {
    const { t } = setup();
    const I = "SetProviderStatus";
    wins(t.tx(cbqs(OTHER, ix.setProviderStatus("Deregistered"))), I, ["ProviderNotFound"], ["ProviderHasLiveStreams"]);
    // State corruption: Deregistered while a live stream still assigns it. Asking for Deregistered
    // again fails both the same-status rule and the live-streams rule.
    const record = t.chain.provider(PROVIDER)!;
    writeOutOfBand(t, providerKey(PROVIDER), encodeStateValue({ kind: "StorageSlot", bytes: encode(S.ProviderRecordV1, { ...record, status: "Deregistered" }) }));
    wins(t.tx(cbqs(PROVIDER, ix.setProviderStatus("Deregistered"))), I, ["NoOpRejected"], ["ProviderHasLiveStreams"]);
  });

  it("CreateStream check order: quote context, provider, config, nonce, owner limit, pricing, balance (CIP-39 §4, §4.2, §4.4, §4.5, §5, §17)", () => {
    const t = new TestChain(genesisConfig({ "cbqs.max_streams_per_owner": 1n }));
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    const I = "CreateStream";
    const badConfig = standardConfig({ max_lanes: 0 });
    const badQuote = (over = {}) => ({ ...t.quote({ context: foreign(t) }), ...over });
    // §4: the quote's context is refused before anything else about the request.
    wins(t.tx(cbqs(OWNER, ix.createStream({ provider: PROVIDER2, config: badConfig, price_quote: badQuote() }))), I, ["ChainInstanceMismatch"], ["ProviderNotFound"], ["InvalidStreamConfig"]);
    wins(t.tx(cbqs(OWNER, ix.createStream({ provider: PROVIDER2, config: badConfig }))), I, ["ProviderNotFound"], ["InvalidStreamConfig"]);
    t.ok(cbqs(OWNER, ix.createStream({ initial_escrow: 10n * R })));
    // nonce 0 is used and the owner is at its limit of 1: the config, then the nonce, then the limit.
    wins(t.tx(cbqs(OWNER, ix.createStream({ config: badConfig }))), I, ["InvalidStreamConfig"], ["OwnerNonceUsed"], ["OwnerStreamLimit"]);
    wins(t.tx(cbqs(OWNER, ix.createStream({}))), I, ["OwnerNonceUsed"], ["OwnerStreamLimit"]);
    wins(t.tx(cbqs(OWNER, ix.createStream({ owner_nonce: 1n, initial_escrow: U64_MAX + 1n }))), I, ["OwnerStreamLimit"], ["InsufficientBalance"]);
    // Draining provider and a bad config.
    t.ok(cbqs(PROVIDER, ix.setProviderStatus("Draining")));
    wins(t.tx(cbqs(OTHER, ix.createStream({ config: badConfig }))), I, ["ProviderNotActive"], ["InvalidStreamConfig"]);
    t.ok(cbqs(PROVIDER, ix.setProviderStatus("Active")));
    // Pricing before balance: an invalid quote with an escrow no balance covers.
    const otherStream = t.streamId(OTHER);
    const quote = { ...t.quote({ stream_id: otherStream, owner: OTHER, rate_per_block: 1n }) };
    wins(t.tx(cbqs(OTHER, ix.createStream({ price_quote: quote, initial_escrow: U64_MAX + 1n }))), I, ["PricingBasisInvalid", "quoted"], ["InsufficientBalance"]);
    // Governance base: the reservation (accepts_new) is checked before the all-zero derivation.
    t.ok(cbqs(PROVIDER, { type: "UpdateProvider", args: { endpoints: null, signing_key: null, quote_key: null, base_rate_admission: { ...OPEN_ADMISSION, accepts_new: false }, metadata_hash: null } }));
    const zero = standardConfig({ retained_bytes_limit: 0n, max_append_bytes_per_sec: 0n, max_delivered_bytes_per_sec: 0n });
    wins(t.tx(cbqs(OTHER, ix.createStream({ config: zero }))), I, ["BaseRateNotAccepted"], ["PricingBasisInvalid", "all three"]);
  });

  it("UpdateStream check order: no-op, quote context, load, authorization BEFORE the Active-only gate, config, quote (CIP-39 §4, §5, §6.1, §17)", () => {
    const I = "UpdateStream";
    // The pair: a non-owner updating a Suspended stream is Unauthorized, not StreamSuspended.
    const s = suspended();
    wins(s.t.tx(cbqs(OTHER, ix.updateStream(s.id, { bump_authorization_generation: true }))), I, ["Unauthorized"], ["StreamSuspended"]);
    expect(s.t.tx(cbqs(OWNER, ix.updateStream(s.id, { bump_authorization_generation: true }))).error!.name).toBe("StreamSuspended");
    // The gate before config validation and the quote rule.
    const badConfig = standardConfig({ max_lanes: 0 });
    wins(s.t.tx(cbqs(OWNER, ix.updateStream(s.id, { config: badConfig, price_quote: s.t.quote() }))), I, ["StreamSuspended"], ["InvalidStreamConfig"], ["PricingBasisInvalid", "no priced capacity"]);
    // §4: a foreign quote context before loading and authorizing.
    wins(s.t.tx(cbqs(OTHER, ix.updateStream(s.t.streamId(OTHER, 9n), { price_quote: s.t.quote({ context: foreign(s.t) }) }))), I, ["ChainInstanceMismatch"], ["StreamNotFound"], ["Unauthorized"]);
    // The exact no-op rule before anything about the stream.
    wins(s.t.tx(cbqs(OTHER, ix.updateStream(s.t.streamId(OTHER, 9n)))), I, ["NoOpRejected"], ["StreamNotFound"], ["Unauthorized"]);
    // On an Active stream: config before the quote rule.
    const a = setup();
    wins(a.t.tx(cbqs(OWNER, ix.updateStream(a.id, { config: standardConfig({ max_lanes: 0 }), price_quote: a.t.quote() }))), I, ["InvalidStreamConfig"], ["PricingBasisInvalid", "no priced capacity"]);
    // Terminal (load) before authorization.
    a.t.ok(cbqs(OWNER, ix.close(a.id)));
    wins(a.t.tx(cbqs(OTHER, ix.updateStream(a.id, { bump_authorization_generation: true }))), I, ["StreamNotActive"], ["Unauthorized"]);
  });

  it("TopUpStream check order: amount, load, authorization, then the grace deadline, then the payer's balance (CIP-39 §6.1, §17)", () => {
    const I = "TopUpStream";
    const s = suspended(); // deadline 15
    s.t.ok(cbqs(PROVIDER, ix.setProviderStatus("Draining")));
    s.t.height = 20n - 1n; // next block 20: past the deadline
    // amount 0, a non-owner payer with a Draining provider, past the deadline: the amount first.
    wins(s.t.tx(cbqs(OTHER, ix.topUp(s.id, 0n))), I, ["InvalidAmount"], ["StreamNotFound"], ["Unauthorized"], ["GraceDeadlinePassed"]);
    wins(s.t.tx(cbqs(OTHER, ix.topUp(s.id, U64_MAX + 1n))), I, ["Unauthorized"], ["GraceDeadlinePassed"], ["InsufficientBalance"]);
    wins(s.t.tx(cbqs(OWNER, ix.topUp(s.id, U64_MAX + 1n))), I, ["GraceDeadlinePassed"], ["InsufficientBalance"]);
    // Terminal (load) before authorization.
    s.t.ok(cbqs(OWNER, ix.close(s.id)));
    wins(s.t.tx(cbqs(OTHER, ix.topUp(s.id, 1n))), I, ["StreamNotActive"], ["Unauthorized"]);
  });

  it("SettleStreamRent check order: load (key stream before terminal), expiry before the no-op rule (CIP-39 §5, §6.1, §17)", () => {
    const I = "SettleStreamRent";
    const s = suspended({ encrypted: true }); // deadline 15
    // At 12 nothing is payable: the record would be byte-identical.
    expect(s.t.tx(cbqs(OTHER, ix.settle(s.id)), 12n).error!.name).toBe("NoOpRejected");
    // At 15 it is still byte-identical under `settle`, but expiry comes first: DataExpired, not a no-op.
    const o = s.t.tx(cbqs(OTHER, ix.settle(s.id)), 15n);
    expect(o.status).toBe("ok");
    expect(s.t.chain.stream(s.id)!.status).toBe("DataExpired");
    expect(stepOf(I, "RegistryStateInvalid", "expiry path")).toBeLessThan(stepOf(I, "NoOpRejected"));
    // The key stream of an expired pair: named directly, that is refused before its terminal status.
    const k = s.t.tx(cbqs(OTHER, ix.settle(s.t.keyStreamId())));
    expect(k.error!.name).toBe("KeyStreamNotIndependent");
    expect(s.t.chain.stream(s.t.keyStreamId())!.status).toBe("DataExpired");
    expect(s.t.tx(cbqs(OTHER, ix.settle(s.id))).error!.name).toBe("StreamNotActive");
  });

  it("CloseStream check order: load before authorization; authorization, never the grace deadline (CIP-39 §5, §6.1, §17)", () => {
    const I = "CloseStream";
    const s = suspended({ encrypted: true }); // deadline 15
    s.t.height = 30n; // far past the deadline
    wins(s.t.tx(cbqs(OTHER, ix.close(s.t.keyStreamId()))), I, ["KeyStreamNotIndependent"], ["Unauthorized"]);
    expect(s.t.tx(cbqs(OTHER, ix.close(s.id))).error!.name).toBe("Unauthorized");
    s.t.ok(cbqs(OWNER, ix.close(s.id))); // past the deadline: a close, never an expiry
    expect(s.t.chain.stream(s.id)!.status).toBe("Closed");
    wins(s.t.tx(cbqs(OTHER, ix.close(s.id))), I, ["StreamNotActive"], ["Unauthorized"]);
  });

  it("ActivateKeyGeneration check order: contexts, load, encryption, authorization, the Active-only gate, then the receipt; a stale generation is InvalidKeyBatch (CIP-39 §4, §6.1, §9.3, §17)", () => {
    const I = "ActivateKeyGeneration";
    const s = suspended({ encrypted: true });
    const t = s.t;
    // The pair again: a non-owner on a Suspended stream is Unauthorized.
    wins(t.tx(cbqs(OTHER, activate(t.receipt({ encryption_generation: 0n })))), I, ["Unauthorized"], ["StreamSuspended"], ["InvalidKeyBatch", "generation"]);
    wins(t.tx(cbqs(OWNER, activate(t.receipt({ encryption_generation: 0n })))), I, ["StreamSuspended"], ["InvalidKeyBatch", "generation"]);
    wins(t.tx(cbqs(OTHER, activate(t.receipt({ context: foreign(t), main_stream_id: t.streamId(OWNER, 9n) })))), I, ["ChainInstanceMismatch", "context"], ["StreamNotFound"], ["Unauthorized"]);
    const served = { chain_instance_id: new Uint8Array(32), height: 1n, block_hash: new Uint8Array(32) };
    wins(t.tx(cbqs(OTHER, activate(t.receipt({ served_at: served })))), I, ["ChainInstanceMismatch", "served_at"], ["Unauthorized"], ["StreamSuspended"]);
    // Unencrypted stream and a non-owner: the encryption check first.
    const plain = setup();
    wins(plain.t.tx(cbqs(OTHER, activate(plain.t.receipt()))), I, ["StreamNotEncrypted"], ["Unauthorized"]);
    // On an Active encrypted stream, the receipt checks in order.
    const a = setup(1000n * R, { encrypted: true });
    const u = a.t;
    const late = { chain_instance_id: u.chain.chainInstanceId, height: u.height + 1n, block_hash: new Uint8Array(32) };
    const first = u.tx(cbqs(OWNER, activate(u.receipt({ served_at: late, key_stream_id: a.id, encryption_generation: 0n }, seed(9)))));
    wins(first, I, ["InvalidKeyBatch", "served_at"], ["InvalidKeyBatch", "key_stream_id"], ["InvalidKeyBatch", "generation"], ["InvalidKeyBatch", "signature"]);
    expect(first.error!.message).toMatch(/^served_at.height/);
    const second = u.tx(cbqs(OWNER, activate(u.receipt({ key_stream_id: a.id, encryption_generation: 0n }, seed(9)))));
    wins(second, I, ["InvalidKeyBatch", "key_stream_id"], ["InvalidKeyBatch", "generation"]);
    expect(second.error!.message).toMatch(/key_stream_id/);
    // A stale generation (0: the current one, already active) with a wrong signer: the generation
    // check answers, and §17's EncryptionGenerationStale (3905) is not an engine code.
    const stale = u.tx(cbqs(OWNER, activate(u.receipt({ encryption_generation: 0n }, seed(9)))));
    wins(stale, I, ["InvalidKeyBatch", "generation"], ["InvalidKeyBatch", "signature"]);
    expect(stale.error!.message).toBe("receipt generation 0 is not the next generation 1");
    expect(stale.error!.code).toBe(3924);
    expect(Object.values(ERRORS).map((e) => e.code)).not.toContain(3905);
    u.ok(cbqs(OWNER, activate(u.receipt())));
    const replay = u.tx(cbqs(OWNER, activate(u.receipt())));
    expect([replay.error!.name, replay.error!.message]).toEqual(["InvalidKeyBatch", "receipt generation 1 is not the next generation 2"]);
  });
});
