// The structural rules of the §8–§15 wire types (docs/guides/verify-a-broker.md "Wire types"): for each, a value
// breaking that one rule — written field by field past the struct's own check, so the bytes are
// otherwise canonical — is refused by decode (InvalidValue at the field), encode and fromJson,
// while its valid neighbour is accepted. Removing a rule's check makes its test fail.
import { describe, expect, it } from "vitest";
import { Writer, type Codec, type StructCodec } from "../../src/codec/core.js";
import * as C from "../../src/codec/index.js";
import { DecodeError, EncodeError, JsonValueError, codecs, decode, encode, fromJson, toJson } from "../../src/codec/index.js";
import type * as T from "../../src/codec/types.js";
import type * as W from "../../src/codec/wire-types.js";
import { context, fill } from "./samples.js";
import * as X from "./wire-samples.js";

/** The canonical bytes of a struct value, its own check skipped (its fields' checks still apply). */
function unchecked<V>(codec: Codec<V>, value: V): Uint8Array {
  const w = new Writer();
  for (const [k, c] of (codec as StructCodec<V>).fields) c.write(w, (value as Record<string, unknown>)[k], k);
  return w.finish();
}

function decodeError(codec: Codec<unknown>, bytes: Uint8Array): DecodeError {
  try {
    decode(codec, bytes);
  } catch (err) {
    if (err instanceof DecodeError) return err;
    throw err;
  }
  throw new Error("decoded");
}

/** `bad` breaks exactly the rule reported at `path`: refused by all three readers and writers. */
function refuses<V>(codec: Codec<V>, bad: V, path: string, bytes: Uint8Array = unchecked(codec, bad)): DecodeError {
  const err = decodeError(codec as Codec<unknown>, bytes);
  expect(err.kind).toBe("InvalidValue");
  expect(err.path).toBe(path);
  expect(() => encode(codec, bad)).toThrow(EncodeError);
  expect(() => fromJson(codec, JSON.parse(JSON.stringify(toJson(codec, bad))))).toThrow(JsonValueError);
  return err;
}

function accepts<V>(codec: Codec<V>, good: V): void {
  expect(decode(codec, encode(codec, good))).toEqual(good);
}

const be = (v: number | bigint, width: number): Uint8Array => {
  const out = new Uint8Array(width);
  let x = BigInt(v);
  for (let i = width - 1; i >= 0; i--, x >>= 8n) out[i] = Number(x & 0xffn);
  return out;
};
const cat = (...parts: Uint8Array[]): Uint8Array => Uint8Array.from(parts.flatMap((p) => [...p]));

describe("§10 record headers and §14.1 append receipts", () => {
  const H = codecs.RecordHeaderV1;
  const provider: T.RecordHeaderV1 = { ...X.header, lane_id: X.ZERO32, origin: "ProviderEvent", kind: "LaneClosed", expires_at_ms: 0n, encryption_generation: 0n, nonce: fill(24, 0) };

  it("a header's origin and kind go together: Client is Application, a provider event a lane-event or key-batch kind", () => {
    accepts(H, X.header);
    accepts(H, provider);
    accepts(H, { ...provider, kind: "KeyEnvelope", encryption_generation: 2n });
    refuses(H, { ...X.header, kind: "LaneCreated" }, "kind");
    refuses(H, { ...provider, kind: "Application" }, "kind");
  });

  it("no v1 record is delayed: visible_after_ms = 0", () => {
    refuses(H, { ...X.header, visible_after_ms: 5n }, "visible_after_ms");
    refuses(H, { ...provider, visible_after_ms: 1n }, "visible_after_ms");
  });

  it("a provider event sits on the default lane, has no deadline and a zero nonce; a lane event has generation 0", () => {
    refuses(H, { ...provider, lane_id: X.LANE }, "lane_id");
    refuses(H, { ...provider, expires_at_ms: 1n }, "expires_at_ms");
    refuses(H, { ...provider, encryption_generation: 1n }, "encryption_generation");
    refuses(H, { ...provider, nonce: fill(24, 1) }, "nonce");
  });

  it("an AppendReceiptV1 with origin Client, kind LaneCreated and visible_after_ms = 5 is refused", () => {
    const R = codecs.AppendReceiptV1;
    accepts(R, X.appendReceipt);
    accepts(R, X.laneEventReceipt);
    const err = refuses(R, { ...X.appendReceipt, kind: "LaneCreated", visible_after_ms: 5n }, "kind");
    expect(err.code).toBe(4000);
    refuses(R, { ...X.appendReceipt, visible_after_ms: 5n }, "visible_after_ms");
    refuses(R, { ...X.laneEventReceipt, lane_id: X.LANE }, "lane_id");
    refuses(R, { ...X.laneEventReceipt, encryption_generation: 3n }, "encryption_generation");
  });

  it("§14.1: only a lane event on a fast parent has a receipt with a FastRecordIdV1", () => {
    const R = codecs.AppendReceiptV1;
    const fastId: T.RecordIdV1 = { type: "Fast", provider_epoch: 0n, broker_epoch: 1n, sequence: 3n };
    accepts(R, { ...X.laneEventReceipt, record_id: fastId });
    refuses(R, { ...X.appendReceipt, record_id: fastId }, "record_id");
    refuses(R, { ...X.laneEventReceipt, kind: "KeyBatchHeader", record_id: fastId }, "record_id");
  });
});

describe("§12.2 checkpoint receipts and §12.1 broker-epoch transitions", () => {
  const K = codecs.CheckpointReceiptV1;

  it("first_sequence > last_sequence is refused (a batch is non-empty); first = last is one record", () => {
    accepts(K, { ...X.checkpoint, first_sequence: 15n });
    refuses(K, { ...X.checkpoint, first_sequence: 16n }, "last_sequence");
  });

  it("a batch holds at most 65,536 records, counted without overflow", () => {
    const max = { ...X.checkpoint, first_sequence: 0n, last_sequence: 65_535n, durable_high_water: 65_535n };
    accepts(K, max);
    refuses(K, { ...max, last_sequence: 65_536n, durable_high_water: 65_536n }, "last_sequence");
    const top = (1n << 64n) - 1n;
    accepts(K, { ...X.checkpoint, first_sequence: top - 65_535n, last_sequence: top, durable_high_water: top });
    refuses(K, { ...X.checkpoint, first_sequence: 0n, last_sequence: top, durable_high_water: top }, "last_sequence");
  });

  it("zero ordered_range_root and zero previous_checkpoint are refused", () => {
    refuses(K, { ...X.checkpoint, ordered_range_root: X.ZERO32 }, "ordered_range_root");
    refuses(K, { ...X.checkpoint, previous_checkpoint: X.ZERO32 }, "previous_checkpoint");
  });

  it("durable_high_water must equal last_sequence", () => {
    refuses(K, { ...X.checkpoint, durable_high_water: 14n }, "durable_high_water");
  });

  it("transitions: a nonzero checkpoint, a Clean empty genesis at epoch 0, +1 per restart, provisional >= durable", () => {
    const B = codecs.BrokerEpochTransitionV1;
    const genesis: T.BrokerEpochTransitionV1 = { ...X.transition, previous_lineage: null, replacement_broker_epoch: 0n, kind: "Clean", last_durable_sequence: null, last_provisional_sequence: null };
    accepts(B, X.transition);
    accepts(B, genesis);
    accepts(B, { ...X.transition, last_provisional_sequence: null });
    refuses(B, { ...X.transition, last_durable_checkpoint: X.ZERO32 }, "last_durable_checkpoint");
    refuses(B, { ...genesis, replacement_broker_epoch: 1n }, "replacement_broker_epoch");
    refuses(B, { ...genesis, kind: "Void" }, "kind");
    refuses(B, { ...genesis, last_durable_sequence: 0n, last_provisional_sequence: 0n }, "last_durable_sequence");
    refuses(B, { ...X.transition, replacement_broker_epoch: 3n }, "replacement_broker_epoch");
    refuses(B, { ...X.transition, kind: "Clean" }, "last_provisional_sequence");
    refuses(B, { ...X.transition, last_provisional_sequence: 8n }, "last_provisional_sequence");
    const top = (1n << 64n) - 1n;
    refuses(B, { ...X.transition, previous_lineage: { provider_epoch: 0n, broker_epoch: top }, replacement_broker_epoch: 0n }, "replacement_broker_epoch");
  });
});

describe("§13.1 request bodies", () => {
  it("§10: an append body's visible_after_ms is 0", () => {
    accepts(codecs.AppendRequestBodyV1, X.appendBody);
    refuses(codecs.AppendRequestBodyV1, { ...X.appendBody, visible_after_ms: 5n }, "visible_after_ms");
  });

  it("after_group_receipt is only for StandardGroup and DeadLetters sources", () => {
    const O = codecs.OpenSubscriptionRequestBodyV1;
    const base: W.OpenSubscriptionRequestBodyV1 = {
      stream_id: X.STREAM, subscription_id: fill(32, 0x5b), source: { type: "DeadLetters", lane_id: X.LANE, group_id: X.GROUP, after: null },
      after_group_receipt: fill(32, 0x6a), verification: "None",
    };
    accepts(O, base);
    accepts(O, { ...base, source: { type: "StandardGroup", lane_id: X.LANE, group_id: X.GROUP } });
    accepts(O, { ...base, source: { type: "Fast", scope: { type: "Any" }, after: null }, after_group_receipt: null, verification: "FullStream" });
    refuses(O, { ...base, source: { type: "Fast", scope: { type: "Any" }, after: null } }, "after_group_receipt");
    refuses(O, { ...base, source: { type: "StandardReplay", scope: { type: "Exact", lane_id: X.LANE }, after: X.standardId } }, "after_group_receipt");
  });

  it("a subscription Set scope is sorted and unique", () => {
    const S = codecs.SubscriptionScopeV1;
    accepts(S, { type: "Set", lane_ids: [fill(32, 1), fill(32, 2)] });
    const bytes = cat(Uint8Array.of(3), be(2, 4), fill(32, 2), fill(32, 1));
    expect(decodeError(S as Codec<unknown>, bytes).kind).toBe("InvalidValue");
    expect(decodeError(S as Codec<unknown>, cat(Uint8Array.of(3), be(2, 4), fill(32, 2), fill(32, 2))).kind).toBe("InvalidValue");
  });

  it("§13.1: the request's proof names its body's method and body hash", () => {
    const A = codecs.AuthenticatedRequestV1;
    const good = X.authenticated({ type: "Append", body: X.appendBody });
    accepts(A, good);
    refuses(A, { ...good, proof: { ...good.proof, method: "Ack" } }, "proof");
    refuses(A, { ...good, proof: { ...good.proof, body_hash: fill(32, 7) } }, "proof");
    refuses(A, { ...good, body: { type: "Append", body: { ...X.appendBody, payload: Uint8Array.of(9) } } }, "proof");
  });

  it("§13.2: OpenSession.stream_id equals grant.stream_id", () => {
    accepts(codecs.OpenSessionRequestV1, X.openSession);
    refuses(codecs.OpenSessionRequestV1, { ...X.openSession, stream_id: fill(32, 0x52) }, "stream_id");
  });
});

describe("§14.2 delivery result states", () => {
  const D = codecs.DeliveryResultStateV1;

  it("every §14.2 row has a valid sample, and each option outside its row is refused", () => {
    for (const s of Object.values(X.resultStates)) accepts(D, s);
    refuses(D, { ...X.resultStates.Ack!, available_at_ms: 1n }, "available_at_ms");
    refuses(D, { ...X.resultStates.Ack!, terminal_at_ms: null }, "terminal_at_ms");
    refuses(D, { ...X.resultStates.Redrive!, lease_id: fill(32, 1) }, "lease_id");
    refuses(D, { ...X.resultStates.Reject!, reason_hash: null }, "reason_hash");
    refuses(D, { ...X.resultStates.Extend!, holder_signing_key_id: null }, "holder_signing_key_id");
    refuses(D, { ...X.resultStates.RecordExpire!, terminal_expires_at_ms: 900n }, "terminal_expires_at_ms");
  });

  it("Nack is a retry (available_at_ms) or an exhaustion (terminal_at_ms + terminal_expires_at_ms), never a mix", () => {
    refuses(D, { ...X.resultStates.NackRetry!, terminal_at_ms: 200n }, "terminal_at_ms");
    refuses(D, { ...X.resultStates.NackExhausted!, terminal_expires_at_ms: null }, "available_at_ms");
  });

  it("group actions have no record result state", () => {
    refuses(D, { ...X.resultStates.RecordExpire!, action: "GroupCreate" }, "action");
  });

  it("attempt: nonzero with a lease, zero for Redrive, and for RecordExpire exactly when a lease is present", () => {
    refuses(D, { ...X.resultStates.Ack!, attempt: 0 }, "attempt");
    refuses(D, { ...X.resultStates.Redrive!, attempt: 1 }, "attempt");
    refuses(D, { ...X.resultStates.RecordExpire!, attempt: 1 }, "attempt");
    refuses(D, { ...X.resultStates.RecordExpireLeased!, attempt: 0 }, "attempt");
  });

  it("nonzero ids and a nonzero group_queue_sequence; lane_id may be the default lane", () => {
    accepts(D, { ...X.resultStates.Ack!, lane_id: X.ZERO32 });
    refuses(D, { ...X.resultStates.Ack!, group_queue_sequence: 0n }, "group_queue_sequence");
    for (const f of ["stream_id", "group_id", "delivery_cycle_id", "lease_id"] as const) refuses(D, { ...X.resultStates.Ack!, [f]: X.ZERO32 }, f);
    refuses(D, { ...X.resultStates.Extend!, holder_signing_key_id: X.ZERO32 }, "holder_signing_key_id");
    refuses(D, { ...X.resultStates.Redrive!, successor_cycle_id: X.ZERO32 }, "successor_cycle_id");
  });

  it("the §14.2 inequalities", () => {
    refuses(D, { ...X.resultStates.Extend!, issued_at_ms: 161n }, "lease_expires_at_ms");
    refuses(D, { ...X.resultStates.LeaseExpire!, available_at_ms: 129n }, "available_at_ms");
    refuses(D, { ...X.resultStates.Reject!, terminal_expires_at_ms: 199n }, "terminal_expires_at_ms");
    refuses(D, { ...X.resultStates.AttemptsExhaust!, terminal_at_ms: 129n }, "terminal_at_ms");
  });

  it("delivery_result_state_digest_v1 encodes only what the table admits", () => {
    expect(() => C.delivery_result_state_digest_v1(context, { ...X.resultStates.Ack!, attempt: 0 })).toThrow(EncodeError);
  });
});

describe("§14.2 self-verifying updates", () => {
  const U = codecs.DeliveryStateUpdateV1;
  const ack = X.deliveryUpdate(X.resultStates.Ack!);

  it("a delivery-state update's receipt repeats the state's action and identities and digests it", () => {
    for (const s of Object.values(X.resultStates)) accepts(U, X.deliveryUpdate(s));
    refuses(U, { ...ack, receipt: { ...ack.receipt, action: "Reject" } }, "receipt");
    refuses(U, { ...ack, receipt: { ...ack.receipt, group_id: fill(32, 0x61) } }, "receipt");
    refuses(U, { ...ack, receipt: { ...ack.receipt, lane_id: X.ZERO32 } }, "receipt");
    refuses(U, { ...ack, receipt: { ...ack.receipt, record_id: { provider_epoch: 0n, sequence: 9n } } }, "receipt");
    refuses(U, { ...ack, receipt: { ...ack.receipt, lease_id: fill(32, 0x1f) } }, "receipt");
    refuses(U, { ...ack, receipt: { ...ack.receipt, resulting_state_digest: fill(32, 0x5d) } }, "receipt");
    refuses(U, { ...ack, state: { ...ack.state, terminal_at_ms: 201n } }, "receipt");
  });

  it("a group-state update carries a group action, the config exactly for create/update, and its state digest", () => {
    const G = codecs.GroupStateUpdateV1;
    for (const a of ["GroupCreate", "GroupUpdate", "GroupDelete"] as const) accepts(G, X.groupUpdate(a));
    const create = X.groupUpdate("GroupCreate");
    const del = X.groupUpdate("GroupDelete");
    refuses(G, { config: null, receipt: create.receipt }, "config");
    refuses(G, { ...del, config: X.groupConfig }, "config");
    refuses(G, { ...create, config: { ...X.groupConfig, lane_id: X.ZERO32 } }, "config");
    refuses(G, { ...create, config: { ...X.groupConfig, max_attempts: 6 } }, "receipt");
    refuses(G, { ...del, receipt: { ...del.receipt, resulting_state_digest: create.receipt.resulting_state_digest } }, "receipt");
    refuses(G, { config: null, receipt: { ...X.deliveryUpdate(X.resultStates.Redrive!).receipt } }, "receipt");
  });
});

describe("§13.2 results", () => {
  it("a fast watermark's checkpoint_anchor is never zero", () => {
    accepts(codecs.FastDurableWatermarkV1, X.watermark);
    refuses(codecs.FastDurableWatermarkV1, { ...X.watermark, checkpoint_anchor: X.ZERO32 }, "checkpoint_anchor");
  });

  it("a standard append result carries its Client receipt and no watermark; a fast one the watermark of its lineage only", () => {
    const A = codecs.AppendResultV1;
    const std: W.AppendResultV1 = { record_id: X.appendReceipt.record_id, append_receipt: X.appendReceipt, durable_watermark: null };
    const fast: W.AppendResultV1 = { record_id: { type: "Fast", provider_epoch: 0n, broker_epoch: 2n, sequence: 4n }, append_receipt: null, durable_watermark: X.watermark };
    accepts(A, std);
    accepts(A, fast);
    refuses(A, { ...std, append_receipt: null }, "append_receipt");
    refuses(A, { ...std, durable_watermark: X.watermark }, "durable_watermark");
    refuses(A, { ...std, record_id: { type: "Standard", provider_epoch: 0n, sequence: 9n } }, "append_receipt");
    refuses(A, { ...std, record_id: X.laneEventReceipt.record_id, append_receipt: X.laneEventReceipt }, "append_receipt");
    refuses(A, { ...fast, append_receipt: X.laneEventReceipt }, "append_receipt");
    refuses(A, { ...fast, durable_watermark: null }, "durable_watermark");
    refuses(A, { ...fast, durable_watermark: { ...X.watermark, broker_epoch: 3n } }, "durable_watermark");
  });

  it("a staged key-batch result: total_chunks > 0 and accepted_chunks <= total_chunks", () => {
    const K = codecs.KeyBatchStageResultV1;
    const good = { key_stream_id: fill(32, 0x52), batch_digest: fill(32, 0xbd), total_chunks: 3, accepted_chunks: 3 };
    accepts(K, good);
    refuses(K, { ...good, total_chunks: 0, accepted_chunks: 0 }, "total_chunks");
    refuses(K, { ...good, accepted_chunks: 4 }, "accepted_chunks");
  });

  it("a lane page is strictly sorted by lane_id, and its cursor is the final lane id", () => {
    const P = codecs.LanePageV1;
    const lanes = [X.laneRecord, { ...X.laneRecord, lane_id: fill(32, 0x2b) }];
    accepts(P, { lanes, next_after_lane_id: fill(32, 0x2b) });
    accepts(P, { lanes: [], next_after_lane_id: null });
    refuses(P, { lanes, next_after_lane_id: X.LANE }, "next_after_lane_id");
    refuses(P, { lanes: [], next_after_lane_id: X.LANE }, "next_after_lane_id");
    const unsorted = cat(be(2, 4), encode(codecs.LaneRecordV1, lanes[1]!), encode(codecs.LaneRecordV1, lanes[0]!), Uint8Array.of(0));
    expect(decodeError(P as Codec<unknown>, unsorted)).toMatchObject({ kind: "InvalidValue", path: "lanes[1]" });
  });

  it("CreateLane/CloseLane: a nonzero lane with the method's status, and its stream's ProviderEvent receipt of the matching kind", () => {
    const R = codecs.CbqsResponseBodyV1;
    const create: W.CbqsResponseBodyV1 = { type: "CreateLane", lane: X.laneRecord, receipt: X.laneEventReceipt };
    const close: W.CbqsResponseBodyV1 = { type: "CloseLane", lane: { ...X.laneRecord, status: "Closed" }, receipt: { ...X.laneEventReceipt, kind: "LaneClosed" } };
    accepts(R, create);
    accepts(R, close);
    const raw = (tag: number, lane: W.LaneRecordV1, receipt: T.AppendReceiptV1) => cat(be(tag, 2), encode(codecs.LaneRecordV1, lane), encode(codecs.AppendReceiptV1, receipt));
    const bad: [number, W.LaneRecordV1, T.AppendReceiptV1, string][] = [
      [5, { ...X.laneRecord, lane_id: X.ZERO32 }, X.laneEventReceipt, "lane"],
      [5, { ...X.laneRecord, status: "Closed" }, X.laneEventReceipt, "lane"],
      [5, X.laneRecord, { ...X.laneEventReceipt, stream_id: fill(32, 0x52) }, "receipt"],
      [5, X.laneRecord, { ...X.laneEventReceipt, kind: "LaneClosed" }, "receipt"],
      [6, { ...X.laneRecord, status: "Closed" }, X.laneEventReceipt, "receipt"],
      [5, X.laneRecord, X.appendReceipt, "receipt"],
    ];
    for (const [tag, lane, receipt, path] of bad) {
      expect(decodeError(R as Codec<unknown>, raw(tag, lane, receipt))).toMatchObject({ kind: "InvalidValue", path });
      expect(() => encode(R, { type: tag === 5 ? "CreateLane" : "CloseLane", lane, receipt })).toThrow(EncodeError);
    }
  });

  it("group and delivery-state responses carry the receipt action of their method", () => {
    const R = codecs.CbqsResponseBodyV1;
    accepts(R, { type: "UpdateGroup", body: X.groupUpdate("GroupUpdate") });
    accepts(R, { type: "Nack", body: X.deliveryUpdate(X.resultStates.NackRetry!) });
    const wrongGroup = cat(be(8, 2), encode(codecs.GroupStateUpdateV1, X.groupUpdate("GroupUpdate")));
    expect(decodeError(R as Codec<unknown>, wrongGroup)).toMatchObject({ kind: "InvalidValue", path: "body.receipt" });
    const wrongDelivery = cat(be(14, 2), encode(codecs.DeliveryStateUpdateV1, X.deliveryUpdate(X.resultStates.NackRetry!)));
    expect(decodeError(R as Codec<unknown>, wrongDelivery)).toMatchObject({ kind: "InvalidValue", path: "body.receipt" });
    expect(() => encode(R, { type: "Ack", body: X.deliveryUpdate(X.resultStates.Reject!) })).toThrow(EncodeError);
    expect(() => fromJson(R, { Redrive: toJson(codecs.DeliveryStateUpdateV1, X.deliveryUpdate(X.resultStates.Ack!)) })).toThrow(JsonValueError);
  });
});

describe("§13.2 record deliveries", () => {
  const D = codecs.RecordDeliveryV1;
  const replay: W.RecordDeliveryV1 = { ...X.groupDelivery, lease: null, delivery_state_receipt: null };

  it("a lease: attempt >= 1, group_queue_sequence >= 1, issued_at_ms <= expires_at_ms", () => {
    const L = codecs.DeliveryLeaseV1;
    accepts(L, X.lease);
    refuses(L, { ...X.lease, attempt: 0 }, "attempt");
    refuses(L, { ...X.lease, group_queue_sequence: 0n }, "group_queue_sequence");
    refuses(L, { ...X.lease, issued_at_ms: 131n }, "expires_at_ms");
  });

  it("a standard delivery: its matching append receipt (identities, header_hash, payload_hash), no watermark", () => {
    accepts(D, X.groupDelivery);
    accepts(D, replay);
    refuses(D, { ...replay, append_receipt: null }, "append_receipt");
    refuses(D, { ...replay, durable_watermark: X.watermark }, "durable_watermark");
    refuses(D, { ...replay, record_id: { type: "Standard", provider_epoch: 0n, sequence: 9n } }, "append_receipt");
    refuses(D, { ...replay, header: { ...X.header, lane_id: fill(32, 0x2b) } }, "append_receipt");
    refuses(D, { ...replay, header: { ...X.header, created_at_ms: 6n } }, "append_receipt");
    refuses(D, { ...replay, header: { ...X.header, nonce: fill(24, 0x4f) } }, "append_receipt");
    refuses(D, { ...replay, payload: Uint8Array.of(1, 2, 3, 4, 6) }, "append_receipt");
  });

  it("a leased delivery carries the matching LeaseIssue receipt whose digest is the lease's LeaseIssue state", () => {
    const dsr = X.groupDelivery.delivery_state_receipt!;
    refuses(D, { ...X.groupDelivery, delivery_state_receipt: null }, "delivery_state_receipt");
    refuses(D, { ...replay, delivery_state_receipt: dsr }, "delivery_state_receipt");
    refuses(D, { ...X.groupDelivery, lease: { ...X.lease, reference: { ...X.leaseRef, lane_id: X.ZERO32 } } }, "lease");
    refuses(D, { ...X.groupDelivery, delivery_state_receipt: { ...dsr, action: "Extend" } }, "delivery_state_receipt");
    refuses(D, { ...X.groupDelivery, delivery_state_receipt: { ...dsr, group_id: fill(32, 0x61) } }, "delivery_state_receipt");
    refuses(D, { ...X.groupDelivery, delivery_state_receipt: { ...dsr, lease_id: fill(32, 0x1f) } }, "delivery_state_receipt");
    refuses(D, { ...X.groupDelivery, lease: { ...X.lease, expires_at_ms: 131n } }, "delivery_state_receipt");
    refuses(D, { ...X.groupDelivery, lease: { ...X.lease, holder_signing_key_id: X.ZERO32 } }, "lease");
  });

  it("a fast delivery carries only the watermark of its stream and lineage", () => {
    accepts(D, X.fastDelivery);
    refuses(D, { ...X.fastDelivery, append_receipt: X.laneEventReceipt }, "append_receipt");
    refuses(D, { ...X.fastDelivery, lease: X.lease }, "lease");
    refuses(D, { ...X.fastDelivery, delivery_state_receipt: X.groupDelivery.delivery_state_receipt }, "delivery_state_receipt");
    refuses(D, { ...X.fastDelivery, durable_watermark: null }, "durable_watermark");
    refuses(D, { ...X.fastDelivery, durable_watermark: { ...X.watermark, broker_epoch: 1n } }, "durable_watermark");
    refuses(D, { ...X.fastDelivery, durable_watermark: { ...X.watermark, stream_id: fill(32, 0x52) } }, "durable_watermark");
  });

  it("§10: an Application payload above 1,048,576 bytes is refused; a key-stream record's may be larger", () => {
    const big = new Uint8Array(1_048_577);
    refuses(D, { ...X.fastDelivery, payload: big }, "payload");
    const keyHeader: T.RecordHeaderV1 = { ...X.header, lane_id: X.ZERO32, origin: "ProviderEvent", kind: "KeyBatchHeader", expires_at_ms: 0n, nonce: fill(24, 0) };
    const bytes = encode(D, { ...X.fastDelivery, header: keyHeader, payload: big });
    expect(Buffer.from(encode(D, decode(D, bytes))).equals(bytes)).toBe(true);
  });
});

describe("§12.2.1 lane proofs and checkpoint frames", () => {
  const P = codecs.LanePayloadV1;
  const payload: W.LanePayloadV1 = { lane_sub_root: fill(32, 0x5b), lane_record_count: 2, lane_first_sequence: 11n, lane_last_sequence: 14n };

  it("a lane payload: 1..=65,536 records at strictly increasing sequences from first to last", () => {
    accepts(P, payload);
    accepts(P, { ...payload, lane_record_count: 1, lane_last_sequence: 11n });
    accepts(P, { ...payload, lane_record_count: 4 });
    refuses(P, { ...payload, lane_record_count: 0 }, "lane_record_count");
    refuses(P, { ...payload, lane_record_count: 65_537, lane_last_sequence: 100_000n }, "lane_record_count");
    refuses(P, { ...payload, lane_first_sequence: 15n }, "lane_last_sequence");
    refuses(P, { ...payload, lane_record_count: 1 }, "lane_record_count");
    refuses(P, { ...payload, lane_last_sequence: 11n }, "lane_record_count");
    refuses(P, { ...payload, lane_record_count: 5 }, "lane_record_count");
  });

  // A batch of three lanes; the scope proves two of them and one absent lane.
  const lanes = [fill(32, 0x10), fill(32, 0x80), fill(32, 0xf0)];
  const payloads = lanes.map((_, i): W.LanePayloadV1 => ({ lane_sub_root: fill(32, 0x20 + i), lane_record_count: 2, lane_first_sequence: 10n + BigInt(i), lane_last_sequence: 13n + BigInt(i) }));
  const entries = lanes.map((k, i) => ({ key: k, leaf: C.fast_lane_payload_digest_v1(k, payloads[i]!) }));
  const root = C.sparse_root_v1(entries);
  const receipt: T.CheckpointReceiptV1 = { ...X.checkpoint, ordered_range_root: C.fast_ordered_range_root_v1(X.checkpoint, 6, root) };
  const proof = (key: Uint8Array): W.LaneProofV1 => {
    const p = C.sparseProof(entries, key);
    const i = lanes.findIndex((k) => Buffer.compare(k, key) === 0);
    return { lane_id: key, payload: i < 0 ? null : payloads[i]!, bitmap: p.bitmap, siblings: p.siblings };
  };
  const frame: W.CheckpointFrameV1 = { subscription_id: fill(32, 0x5b), receipt, lanes: [proof(lanes[0]!), proof(fill(32, 0x81)), proof(lanes[2]!)] };

  it("a lane proof carries exactly one sibling per set bitmap bit, none equal to its depth's EMPTY constant", () => {
    const L = codecs.LaneProofV1;
    const p = proof(lanes[1]!);
    accepts(L, p);
    refuses(L, { ...p, siblings: p.siblings.slice(1) }, "siblings");
    refuses(L, { ...p, siblings: [...p.siblings, fill(32, 1)] }, "siblings");
    // Depth 0 is bit 0 of the big-endian bitmap (its last byte's lowest bit): claim an EMPTY[1] sibling there.
    const bitmap = p.bitmap.slice();
    expect(bitmap[31]! & 1).toBe(1);
    const withEmpty = { ...p, siblings: [C.SPARSE_EMPTY_V1[1]!, ...p.siblings.slice(1)] };
    refuses(L, withEmpty, "siblings");
    expect(() => C.sparse_proof_root_v1(lanes[1]!, C.SPARSE_EMPTY_V1[256]!, p)).toThrow(EncodeError);
  });

  it("a checkpoint frame's proofs are sorted, fold to one lane map root, and that root reproduces the signed ordered_range_root", () => {
    const F = codecs.CheckpointFrameV1;
    accepts(F, frame);
    accepts(F, { ...frame, lanes: [] });
    refuses(F, { ...frame, receipt: { ...receipt, ordered_range_root: fill(32, 0x0e) } }, "lanes");
    refuses(F, { ...frame, receipt: { ...receipt, broker_epoch: 3n } }, "lanes");
    // A proof from another map folds elsewhere.
    const other = C.sparseProof(entries.slice(0, 2), lanes[0]!);
    refuses(F, { ...frame, lanes: [{ ...frame.lanes[0]!, bitmap: other.bitmap, siblings: other.siblings }, ...frame.lanes.slice(1)] }, "lanes");
    // The first proof is sound, so only the agreement of all proofs refuses a later stray one.
    const stray = C.sparseProof(entries.slice(1), lanes[2]!);
    refuses(F, { ...frame, lanes: [...frame.lanes.slice(0, 2), { ...frame.lanes[2]!, bitmap: stray.bitmap, siblings: stray.siblings }] }, "lanes");
    // A present lane claimed absent (a withheld lane) folds to another root.
    refuses(F, { ...frame, lanes: [{ ...frame.lanes[0]!, payload: null }, ...frame.lanes.slice(1)] }, "lanes");
    refuses(F, { ...frame, lanes: [{ ...frame.lanes[0]!, payload: { ...payloads[0]!, lane_record_count: 3 } }, ...frame.lanes.slice(1)] }, "lanes");
    // A payload outside the receipt's range, in a map the receipt really commits: only the range rule refuses it.
    const early = [{ ...payloads[0]!, lane_first_sequence: 9n }, payloads[1]!, payloads[2]!];
    const earlyEntries = lanes.map((k, i) => ({ key: k, leaf: C.fast_lane_payload_digest_v1(k, early[i]!) }));
    const earlyReceipt = { ...X.checkpoint, ordered_range_root: C.fast_ordered_range_root_v1(X.checkpoint, 6, C.sparse_root_v1(earlyEntries)) };
    const earlyProof = C.sparseProof(earlyEntries, lanes[0]!);
    refuses(F, { ...frame, receipt: earlyReceipt, lanes: [{ lane_id: lanes[0]!, payload: early[0]!, bitmap: earlyProof.bitmap, siblings: earlyProof.siblings }] }, "lanes");
    const inRange = C.sparseProof(earlyEntries, lanes[2]!);
    accepts(F, { ...frame, receipt: earlyReceipt, lanes: [{ lane_id: lanes[2]!, payload: payloads[2]!, bitmap: inRange.bitmap, siblings: inRange.siblings }] });
    const reversed = cat(unchecked(F, { ...frame, lanes: [] }).subarray(0, -4), be(2, 4), encode(codecs.LaneProofV1, frame.lanes[2]!), encode(codecs.LaneProofV1, frame.lanes[0]!));
    expect(decodeError(F as Codec<unknown>, reversed)).toMatchObject({ kind: "InvalidValue", path: "lanes[1]" });
  });
});

describe("§15 snapshot manifest", () => {
  it("provider_anchor is nonzero, and a checkpoint-covered snapshot's covered_through is provider_anchor", () => {
    const M = codecs.CbqsSnapshotManifestV1;
    accepts(M, X.manifest);
    accepts(M, { ...X.manifest, scope: { type: "Stream" }, covered_through: { type: "StandardRecordId", ...X.standardId } });
    refuses(M, { ...X.manifest, provider_anchor: X.ZERO32, covered_through: { type: "CheckpointReceiptDigest", digest: X.ZERO32 } }, "provider_anchor");
    refuses(M, { ...X.manifest, covered_through: { type: "CheckpointReceiptDigest", digest: fill(32, 0xa1) } }, "covered_through");
  });
});

describe("§13.2 frames", () => {
  const frame: W.CbqsServerFrameV1 = { type: "Error", body: X.errorFrame };

  it("a frame is version 1, a one-byte tag and the body; other versions are UnsupportedVersion (3937), unknown tags InvalidTag", () => {
    const bytes = encode(codecs.CbqsServerFrameV1, frame);
    expect([...bytes.subarray(0, 2)]).toEqual([1, 7]);
    expect(bytes.subarray(2)).toEqual(encode(codecs.CbqsErrorV1, X.errorFrame));
    const v2 = bytes.slice();
    v2[0] = 2;
    expect(decodeError(codecs.CbqsServerFrameV1 as Codec<unknown>, v2)).toMatchObject({ kind: "UnsupportedVersion", code: 3937 });
    const tag10 = bytes.slice();
    tag10[1] = 10;
    expect(decodeError(codecs.CbqsServerFrameV1 as Codec<unknown>, tag10)).toMatchObject({ kind: "InvalidTag", offset: 1 });
    expect(decodeError(codecs.CbqsServerFrameV1 as Codec<unknown>, cat(bytes, Uint8Array.of(0))).kind).toBe("TrailingBytes");
    const client = encode(codecs.CbqsClientFrameV1, { type: "OpenSession", body: X.openSession });
    expect([...client.subarray(0, 2)]).toEqual([1, 1]);
    client[1] = 4;
    expect(decodeError(codecs.CbqsClientFrameV1 as Codec<unknown>, client).kind).toBe("InvalidTag");
  });

  it("an error keeps an unknown code, and its message must be UTF-8", () => {
    const E = codecs.CbqsErrorV1;
    accepts(E, { ...X.errorFrame, code: 65_535 });
    const bytes = encode(E, { ...X.errorFrame, message: "ab" });
    const at = bytes.length - 4 - 2 - 2;
    bytes[at] = 0xff;
    expect(decodeError(E as Codec<unknown>, bytes)).toMatchObject({ kind: "InvalidValue", path: "message" });
  });
});

describe("§18 bounds, checked before allocation: a length one past its bound with nothing behind it is BoundExceeded, not Truncated", () => {
  /** `prefix` then a u32 length/count of `n` and no bytes after it. */
  const over = (codec: Codec<unknown>, prefix: Uint8Array, n: number, path: string): void => {
    expect(decodeError(codec, cat(prefix, be(n, 4)))).toMatchObject({ kind: "BoundExceeded", path, offset: prefix.length });
    expect(decodeError(codec, cat(prefix, be(n - 1, 4))).kind).toBe("Truncated");
  };
  const empty = (codec: Codec<unknown>, value: unknown): Uint8Array => {
    const b = encode(codec, value);
    return b.subarray(0, b.length - 4);
  };

  it("append payload <= 1,048,576; delivery payload <= 5,242,880", () => {
    over(codecs.AppendRequestBodyV1 as Codec<unknown>, empty(codecs.AppendRequestBodyV1 as Codec<unknown>, { ...X.appendBody, payload: new Uint8Array(0) }), 1_048_577, "payload");
    const d = encode(codecs.RecordDeliveryV1, { ...X.fastDelivery, payload: new Uint8Array(0) });
    const at = 32 + 25 + encode(codecs.RecordHeaderV1, X.header).length;
    over(codecs.RecordDeliveryV1 as Codec<unknown>, d.subarray(0, at), 5_242_881, "payload");
  });

  it("a key-batch chunk: <= 1,024 envelopes, and <= 4,194,304 canonical envelope bytes in all", () => {
    const P = codecs.PutKeyBatchChunkRequestBodyV1;
    const head = cat(fill(32, 0x52), fill(32, 0xbd), be(0, 4));
    over(P as Codec<unknown>, head, 1_025, "envelopes");
    const env = (n: number): T.KeyEnvelopeV1 => ({ stream_id: fill(32, 0x52), encryption_generation: 2n, recipient_hpke_key: { suite: "X25519_HKDF_SHA256_CHACHA20POLY1305", key: fill(32, 3) }, hpke_ciphertext: new Uint8Array(n) });
    const overhead = encode(codecs.KeyEnvelopeV1, env(80)).length - 80;
    const half = 2_097_152 - overhead;
    const fits = { key_stream_id: fill(32, 0x52), batch_digest: fill(32, 0xbd), chunk_index: 0, envelopes: [env(half), env(half)] };
    expect(encode(P, fits).length).toBe(68 + 4 + 4_194_304);
    expect(Buffer.from(encode(P, decode(P, encode(P, fits)))).equals(encode(P, fits))).toBe(true);
    const tooMuch = { ...fits, envelopes: [env(half), env(half + 1)] };
    const raw = cat(head, be(2, 4), encode(codecs.KeyEnvelopeV1, env(half)), encode(codecs.KeyEnvelopeV1, env(half + 1)));
    expect(decodeError(P as Codec<unknown>, raw)).toMatchObject({ kind: "BoundExceeded", path: "envelopes[1]" });
    expect(() => encode(P, tooMuch)).toThrow(EncodeError);
  });

  it("lane pages <= 1,024 lanes; proofs <= 256 siblings; checkpoint frames <= 512 lanes; scope sets <= 16,384 ids", () => {
    over(codecs.LanePageV1 as Codec<unknown>, new Uint8Array(0), 1_025, "lanes");
    over(codecs.LaneProofV1 as Codec<unknown>, cat(fill(32, 1), Uint8Array.of(0), fill(32, 0)), 257, "siblings");
    over(codecs.CheckpointFrameV1 as Codec<unknown>, cat(fill(32, 0x5b), encode(codecs.CheckpointReceiptV1, X.checkpoint)), 513, "lanes");
    over(codecs.SubscriptionScopeV1 as Codec<unknown>, Uint8Array.of(3), 16_385, "lane_ids");
  });

  it("error message <= 2,048 bytes, details <= 16,384 bytes; cbfs_reference 1..=2,048 bytes", () => {
    over(codecs.CbqsErrorV1 as Codec<unknown>, Uint8Array.of(0, 0, 0x0f, 0x4d), 2_049, "message");
    over(codecs.CbqsErrorV1 as Codec<unknown>, cat(Uint8Array.of(0, 0, 0x0f, 0x4d), be(0, 4)), 16_385, "details");
    const m = encode(codecs.CbqsSnapshotManifestV1, X.manifest);
    const at = 41 + 32 + 33 + 32;
    over(codecs.CbqsSnapshotManifestV1 as Codec<unknown>, m.subarray(0, at), 2_049, "cbfs_reference");
    expect(() => encode(codecs.CbqsSnapshotManifestV1, { ...X.manifest, cbfs_reference: new Uint8Array(0) })).toThrow(EncodeError);
  });

  it("a long-poll batch: <= 256 frames, each <= 5,242,880 bytes and exactly as long as its frame; empty is a timeout", () => {
    const B = codecs.CbqsServerFrameBatchV1 as Codec<unknown>;
    expect(encode(B, { frames: [] })).toEqual(be(0, 4));
    over(B, new Uint8Array(0), 257, "frames");
    expect(decodeError(B, cat(be(1, 4), be(5_242_881, 4), Uint8Array.of(1, 7)))).toMatchObject({ kind: "BoundExceeded", path: "frames[0]", offset: 4 });
    const one = encode(codecs.CbqsServerFrameV1, { type: "Error", body: X.errorFrame });
    const batch = cat(be(1, 4), be(one.length, 4), one);
    expect(decode(B, batch)).toEqual({ frames: [{ type: "Error", body: X.errorFrame }] });
    expect(encode(B, { frames: [{ type: "Error", body: X.errorFrame }] })).toEqual(batch);
    expect(decodeError(B, cat(be(1, 4), be(one.length + 1, 4), one, Uint8Array.of(0)))).toMatchObject({ kind: "InvalidValue", path: "frames[0]" });
    expect(decodeError(B, cat(be(1, 4), be(one.length - 1, 4), one)).kind).toBe("Truncated");
  });

  it("a frame is at most 5,242,880 bytes: a larger one is BoundExceeded, read no further than the bound", () => {
    const keyHeader: T.RecordHeaderV1 = { ...X.header, lane_id: X.ZERO32, origin: "ProviderEvent", kind: "KeyEnvelope", expires_at_ms: 0n, nonce: fill(24, 0) };
    const delivery = (n: number): W.CbqsServerFrameV1 => ({ type: "Delivery", body: { ...X.fastDelivery, header: keyHeader, payload: new Uint8Array(n) } });
    const base = encode(codecs.CbqsServerFrameV1, delivery(0)).length;
    const fits = encode(codecs.CbqsServerFrameV1, delivery(5_242_880 - base));
    expect(fits.length).toBe(5_242_880);
    expect(Buffer.from(encode(codecs.CbqsServerFrameV1, decode(codecs.CbqsServerFrameV1, fits))).equals(fits)).toBe(true);
    expect(() => encode(codecs.CbqsServerFrameV1, delivery(5_242_881 - base))).toThrow(EncodeError);
    const tooBig = unchecked(codecs.RecordDeliveryV1, delivery(5_242_881 - base).body as W.RecordDeliveryV1);
    expect(decodeError(codecs.CbqsServerFrameV1 as Codec<unknown>, cat(Uint8Array.of(1, 4), tooBig))).toMatchObject({ kind: "BoundExceeded", offset: 0 });
  });

  it("every prefix of a valid encoding of every new type is refused with a DecodeError", () => {
    const samples: [Codec<unknown>, unknown][] = [
      [codecs.AuthenticatedRequestV1, X.authenticated({ type: "Append", body: X.appendBody })],
      [codecs.RecordDeliveryV1, X.groupDelivery],
      [codecs.DeliveryStateUpdateV1, X.deliveryUpdate(X.resultStates.AttemptsExhaust!)],
      [codecs.GroupStateUpdateV1, X.groupUpdate("GroupCreate")],
      [codecs.CbqsSnapshotManifestV1, X.manifest],
      [codecs.CbqsServerFrameBatchV1, { frames: [{ type: "SessionChallenge", body: X.sessionChallenge }, { type: "Error", body: X.errorFrame }] }],
    ];
    for (const [codec, value] of samples) {
      const bytes = encode(codec, value);
      for (let n = 0; n < bytes.length; n++) expect(() => decode(codec, bytes.subarray(0, n))).toThrow(DecodeError);
    }
  });
});

describe("rules left to a verifier or the broker decode (D-0149)", () => {
  it("§13.1 group-config inequalities (GroupConfigInvalid, 3939) are the broker's", () => {
    accepts(codecs.GroupConfigV1, { ...X.groupConfig, max_attempts: 0, max_in_flight: 0, visibility_timeout_ms: 0n, record_deadline_ms: 0n });
    accepts(codecs.GroupConfigV1, { ...X.groupConfig, visibility_timeout_ms: 90_000n, max_visibility_ms: 60_000n, max_attempts: 101 });
  });

  it("§13.1 verification mode against source and scope (3943) and proof-scope width (3945) are the broker's", () => {
    const O = codecs.OpenSubscriptionRequestBodyV1;
    accepts(O, { stream_id: X.STREAM, subscription_id: fill(32, 1), source: { type: "StandardGroup", lane_id: X.LANE, group_id: X.GROUP }, after_group_receipt: null, verification: "ScopedProofs" });
    accepts(O, { stream_id: X.STREAM, subscription_id: fill(32, 1), source: { type: "Fast", scope: { type: "Any" }, after: null }, after_group_receipt: null, verification: "ScopedProofs" });
    const wide = Array.from({ length: 513 }, (_, i) => { const k = fill(32, 0); k[0] = i >> 8; k[1] = i & 0xff; return k; });
    accepts(O, { stream_id: X.STREAM, subscription_id: fill(32, 1), source: { type: "Fast", scope: { type: "Set", lane_ids: wide }, after: null }, after_group_receipt: null, verification: "ScopedProofs" });
    accepts(codecs.BeginKeyBatchRequestBodyV1, { key_stream_id: fill(32, 0x52), batch: { context, stream_id: fill(32, 0x52), encryption_generation: 1n, previous_batch_digest: fill(32, 1), sorted_envelope_digests: [], membership_set_digest: fill(32, 2), created_at_ms: 0n, signature: fill(64, 3) }, total_chunks: 0 });
  });

  it("served_at.chain_instance_id against context.chain_instance_id (§13.2, §14) is a verifier's, as for KeyBatchReceiptV1 (§9.3)", () => {
    const other = { ...X.served, chain_instance_id: fill(32, 0xc2) };
    accepts(codecs.SessionChallengeV1, { ...X.sessionChallenge, served_at: other });
    accepts(codecs.AppendReceiptV1, { ...X.appendReceipt, served_at: other });
    accepts(codecs.CheckpointReceiptV1, { ...X.checkpoint, served_at: other });
  });

  it("§8/§14.1: a lane event's receipt on a fast parent carries a FastRecordIdV1, so CreateLane accepts one (the \"standard\" of §13.2 read as ordinary)", () => {
    accepts(codecs.CbqsResponseBodyV1, { type: "CreateLane", lane: X.laneRecord, receipt: { ...X.laneEventReceipt, record_id: { type: "Fast", provider_epoch: 0n, broker_epoch: 4n, sequence: 0n } } });
  });

  it("a watermark's last_durable_sequence against checkpoint genesis needs the stream's context: a verifier's", () => {
    accepts(codecs.FastDurableWatermarkV1, { ...X.watermark, last_durable_sequence: null });
  });
});
