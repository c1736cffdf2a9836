// Broker-side objects sharing the codec (§10, §12, §14.1, §14.2, §15) and their §14 signing rows.
import { describe, expect, it } from "vitest";
import { keccak_256 } from "@noble/hashes/sha3.js";
import * as C from "../../src/codec/index.js";
import { DecodeError, EncodeError, codecs, decode, encode } from "../../src/codec/index.js";
import type * as T from "../../src/codec/types.js";
import * as S from "./samples.js";

const { be, fill } = S;
const h = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const ascii = (s: string): string => Buffer.from(s, "ascii").toString("hex");
const kh = (hex: string): string => h(keccak_256(Buffer.from(hex, "hex")));
const CTX = "01" + be(7, 8) + "c1".repeat(32);
const VIEW = "c1".repeat(32) + be(9, 8) + "99".repeat(32);
const served = S.receipt.served_at;

const header: T.RecordHeaderV1 = {
  stream_id: fill(32, 0x51), lane_id: fill(32, 0), origin: "ProviderEvent", kind: "KeyEnvelope",
  client_message_id: fill(32, 0xcd), created_at_ms: 5n, visible_after_ms: 0n, expires_at_ms: 0n,
  encryption_generation: 2n, nonce: fill(24, 0),
};

// A lane event on a fast parent: the one record whose append receipt carries a FastRecordIdV1 (§8, §14.1).
const append: T.AppendReceiptV1 = {
  context: S.context, served_at: served, stream_id: fill(32, 0x51), lane_id: fill(32, 0), origin: "ProviderEvent",
  kind: "LaneCreated", record_id: { type: "Fast", provider_epoch: 0n, broker_epoch: 3n, sequence: 4n },
  client_message_id: fill(32, 0xcd), header_hash: fill(32, 0x4e), payload_hash: fill(32, 0x9a),
  visible_after_ms: 0n, expires_at_ms: 0n, encryption_generation: 0n, previous_global_receipt: fill(32, 0x01),
  previous_lane_receipt: fill(32, 0x02), committed_at_ms: 77n, signature: fill(64, 0x5e),
};

const delivery = (action: T.DeliveryStateActionV1, record: boolean, lease: boolean): T.DeliveryStateReceiptV1 => ({
  context: S.context, served_at: served, stream_id: fill(32, 0x51), lane_id: fill(32, 0), group_id: fill(32, 0x60),
  provider_epoch: 0n, action, record_id: record ? { provider_epoch: 0n, sequence: 8n } : null,
  lease_id: lease ? fill(32, 0x1e) : null, resulting_state_digest: fill(32, 0x5d), previous_group_receipt: fill(32, 0x6a),
  committed_at_ms: 9n, signature: fill(64, 0x5f),
});

describe("broker objects", () => {
  it("§14: record origin, record kind and record id tags follow the §14 table", () => {
    expect(["Client", "ProviderEvent"].map((v) => encode(codecs.RecordOriginV1, v)[0])).toEqual([1, 2]);
    expect(["Application", "LaneCreated", "LaneClosed", "KeyBatchHeader", "KeyEnvelope"].map((v) => encode(codecs.RecordKindV1, v)[0])).toEqual([1, 2, 3, 4, 5]);
    expect(h(encode(codecs.RecordIdV1, { type: "Standard", provider_epoch: 0n, sequence: 6n }))).toBe("01" + be(0, 8) + be(6, 8));
    expect(h(encode(codecs.RecordIdV1, { type: "Fast", provider_epoch: 0n, broker_epoch: 3n, sequence: 4n }))).toBe("02" + be(0, 8) + be(3, 8) + be(4, 8));
    expect(["Clean", "Void"].map((v) => encode(codecs.BrokerTransitionKindV1, v)[0])).toEqual([1, 2]);
    expect(encode(codecs.DeliveryStateActionV1, "RecordExpire")[0]).toBe(12);
  });

  it("§14.1: record_header_hash_v1 = keccak256(\"cbqs/record-header/v1\" || canonical(RecordHeaderV1))", () => {
    const hand = "51".repeat(32) + "00".repeat(32) + "02" + "05" + "cd".repeat(32) + be(5, 8) + be(0, 8) + be(0, 8) + be(2, 8) + "00".repeat(24);
    expect(h(C.record_header_bytes_v1(header))).toBe(hand);
    expect(h(C.record_header_hash_v1(header))).toBe(kh(ascii("cbqs/record-header/v1") + hand));
  });

  it("§14.1/§14: append_receipt_signing_bytes_v1 and its digest", () => {
    const hand =
      ascii("cbqs/append-receipt/v1") + CTX + VIEW + "51".repeat(32) + "00".repeat(32) + "02" + "02" +
      "02" + be(0, 8) + be(3, 8) + be(4, 8) + "cd".repeat(32) + "4e".repeat(32) + "9a".repeat(32) +
      be(0, 8) + be(0, 8) + be(0, 8) + "01".repeat(32) + "02".repeat(32) + be(77, 8);
    expect(h(C.append_receipt_signing_bytes_v1(append))).toBe(hand);
    expect(h(C.appendReceiptDigest(append))).toBe(kh(hand));
  });

  it("§4: provider_epoch inside a record id is zero in v1", () => {
    const bytes = encode(codecs.AppendReceiptV1, append);
    const at = 41 + 72 + 64 + 2 + 1;
    bytes[at + 7] = 1;
    const err = (() => { try { decode(codecs.AppendReceiptV1, bytes); } catch (e) { return e as DecodeError; } })();
    expect(err).toBeInstanceOf(DecodeError);
    expect(err!.path).toBe("record_id.provider_epoch");
    expect(err!.offset).toBe(at);
  });

  it("§12.1/§14: broker_epoch_transition_signing_bytes_v1; a Clean transition needs equal watermarks", () => {
    const t: T.BrokerEpochTransitionV1 = {
      context: S.context, served_at: served, stream_id: fill(32, 0x51), provider_epoch: 0n, previous_lineage: null,
      replacement_broker_epoch: 0n, kind: "Clean", last_durable_checkpoint: fill(32, 0xcc), last_durable_sequence: null,
      last_provisional_sequence: null, created_at_ms: 3n, signature: fill(64, 1),
    };
    const hand = ascii("cbqs/broker-epoch-transition/v1") + CTX + VIEW + "51".repeat(32) + be(0, 8) + "00" + be(0, 8) + "01" + "cc".repeat(32) + "00" + "00" + be(3, 8);
    expect(h(C.broker_epoch_transition_signing_bytes_v1(t))).toBe(hand);
    const restart = { ...t, previous_lineage: { provider_epoch: 0n, broker_epoch: 0n }, replacement_broker_epoch: 1n };
    expect(() => encode(codecs.BrokerEpochTransitionV1, { ...restart, last_durable_sequence: 5n })).toThrow(EncodeError);
    const voided = { ...restart, kind: "Void" as const, last_durable_sequence: 5n };
    expect(decode(codecs.BrokerEpochTransitionV1, encode(codecs.BrokerEpochTransitionV1, voided))).toEqual(voided);
  });

  it("§12.2/§14: checkpoint_receipt_signing_bytes_v1", () => {
    const c: T.CheckpointReceiptV1 = {
      context: S.context, served_at: served, stream_id: fill(32, 0x51), provider_epoch: 0n, broker_epoch: 1n,
      first_sequence: 0n, last_sequence: 9n, ordered_range_root: fill(32, 0x0e), previous_checkpoint: fill(32, 0x0c),
      durable_high_water: 9n, committed_at_ms: 10n, signature: fill(64, 2),
    };
    expect(h(C.checkpoint_receipt_signing_bytes_v1(c))).toBe(
      ascii("cbqs/checkpoint-receipt/v1") + CTX + VIEW + "51".repeat(32) + be(0, 8) + be(1, 8) + be(0, 8) + be(9, 8) + "0e".repeat(32) + "0c".repeat(32) + be(9, 8) + be(10, 8),
    );
  });

  it("§14.2: delivery-state receipts carry record_id / lease_id exactly as their action requires", () => {
    const ok: [T.DeliveryStateActionV1, boolean, boolean][] = [
      ["Ack", true, true], ["Redrive", true, false], ["GroupCreate", false, false], ["GroupDelete", false, false],
      ["LeaseIssue", true, true], ["RecordExpire", true, false], ["RecordExpire", true, true],
    ];
    for (const [a, r, l] of ok) expect(decode(codecs.DeliveryStateReceiptV1, encode(codecs.DeliveryStateReceiptV1, delivery(a, r, l))).action).toBe(a);
    const bad: [T.DeliveryStateActionV1, boolean, boolean][] = [
      ["Ack", true, false], ["Nack", false, true], ["Redrive", true, true], ["GroupUpdate", true, false], ["RecordExpire", false, false],
    ];
    for (const [a, r, l] of bad) expect(() => encode(codecs.DeliveryStateReceiptV1, delivery(a, r, l))).toThrow(EncodeError);
    const hand =
      ascii("cbqs/delivery-state-receipt/v1") + CTX + VIEW + "51".repeat(32) + "00".repeat(32) + "60".repeat(32) + be(0, 8) +
      "03" + "01" + be(0, 8) + be(8, 8) + "01" + "1e".repeat(32) + "5d".repeat(32) + "6a".repeat(32) + be(9, 8);
    expect(h(C.delivery_state_receipt_signing_bytes_v1(delivery("Extend", true, true)))).toBe(hand);
  });

  it("§15: retention anchors; a standard anchor's lane_id and previous_lane_receipt go together", () => {
    const a: T.StandardRetentionAnchorV1 = {
      context: S.context, served_at: served, stream_id: fill(32, 0x51), provider_epoch: 0n, lane_id: fill(32, 0x1a),
      first_retained_sequence: 100n, previous_global_receipt: fill(32, 0x61), previous_lane_receipt: fill(32, 0x62),
      committed_at_ms: 5n, signature: fill(64, 3),
    };
    expect(h(C.standard_retention_anchor_signing_bytes_v1(a))).toBe(
      ascii("cbqs/standard-retention-anchor/v1") + CTX + VIEW + "51".repeat(32) + be(0, 8) + "01" + "1a".repeat(32) + be(100, 8) + "61".repeat(32) + "01" + "62".repeat(32) + be(5, 8),
    );
    expect(() => encode(codecs.StandardRetentionAnchorV1, { ...a, previous_lane_receipt: null })).toThrow(EncodeError);
    const g: T.GroupRetentionAnchorV1 = {
      context: S.context, served_at: served, stream_id: fill(32, 0x51), provider_epoch: 0n, lane_id: fill(32, 0),
      group_id: fill(32, 0x60), latest_retained_receipt: fill(32, 0x63), group_queue_sequence: 4n, committed_at_ms: 6n, signature: fill(64, 4),
    };
    expect(h(C.group_retention_anchor_signing_bytes_v1(g))).toBe(
      ascii("cbqs/group-retention-anchor/v1") + CTX + VIEW + "51".repeat(32) + be(0, 8) + "00".repeat(32) + "60".repeat(32) + "63".repeat(32) + be(4, 8) + be(6, 8),
    );
    const f: T.FastRetentionAnchorV1 = {
      context: S.context, served_at: served, stream_id: fill(32, 0x51), provider_epoch: 0n, broker_epoch: 2n,
      first_retained_sequence: 7n, previous_checkpoint: fill(32, 0x64), committed_at_ms: 8n, signature: fill(64, 5),
    };
    expect(h(C.fast_retention_anchor_signing_bytes_v1(f))).toBe(
      ascii("cbqs/fast-retention-anchor/v1") + CTX + VIEW + "51".repeat(32) + be(0, 8) + be(2, 8) + be(7, 8) + "64".repeat(32) + be(8, 8),
    );
  });

  it("§14.2: group_genesis = keccak256(\"cbqs/group-genesis/v1\" || context || stream_id || lane_id || group_id || provider_epoch)", () => {
    expect(h(C.groupReceiptGenesis(S.context, fill(32, 0x51), fill(32, 0), fill(32, 0x60)))).toBe(
      kh(ascii("cbqs/group-genesis/v1") + CTX + "51".repeat(32) + "00".repeat(32) + "60".repeat(32) + be(0, 8)),
    );
  });
});
