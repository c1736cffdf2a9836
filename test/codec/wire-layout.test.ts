// Byte layouts, tags, signing bytes and digests of the §8–§15 wire types, each expected value
// written out by hand from the spec's text, field by field, independently of the codec.
import { describe, expect, it } from "vitest";
import { keccak_256 } from "@noble/hashes/sha3.js";
import * as C from "../../src/codec/index.js";
import { codecs, decode, encode, fromJson, toJson, type Codec } from "../../src/codec/index.js";
import { decodeCommand, encodeCommand } from "../../src/cli/codec.js";
import type * as W from "../../src/codec/wire-types.js";
import { be, context, fill, hex } from "./samples.js";
import * as X from "./wire-samples.js";

const ascii = (s: string): string => Buffer.from(s, "utf8").toString("hex");
const rep = (b: string, n: number): string => b.repeat(n);
const kh = (h: string): string => hex(keccak_256(Buffer.from(h, "hex")));
const bytesOf = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, "hex"));
const CTX = "01" + be(7, 8) + rep("c1", 32);
const VIEW = rep("c1", 32) + be(9, 8) + rep("99", 32);
const STD8 = be(0, 8) + be(8, 8); // StandardRecordIdV1 { 0, 8 }

function layout<V>(codec: Codec<V>, value: V, hand: string): void {
  expect(hex(encode(codec, value))).toBe(hand);
  expect(decode(codec, bytesOf(hand))).toEqual(value);
}

// §10 AppendRequestBodyV1 of X.appendBody.
const APPEND = rep("51", 32) + rep("1a", 32) + rep("cd", 32) + be(5, 8) + be(0, 8) + be(900, 8) + be(1, 8) + rep("4e", 24) + be(5, 4) + "0102030405";
// §11.2 GroupConfigV1 of X.groupConfig: mode Concurrent = 2, start At = 2 || StandardRecordIdV1.
const GROUP_CONFIG =
  rep("60", 32) + rep("1a", 32) + "02" + "02" + STD8 + be(30_000, 8) + be(60_000, 8) + be(8, 4) + be(5, 2) + be(600_000, 8) + be(86_400_000, 8) + be(0, 8);

describe("§8–§15 enum and union tags (1-based in declaration order where the spec gives none; D-0152)", () => {
  it("lane status, group mode and start, verification mode, subscription source and scope, snapshot scope and coverage", () => {
    const tag = (codec: Codec<any>, v: unknown): number => encode(codec, v)[0]!;
    expect(["Active", "Closed"].map((v) => tag(codecs.LaneStatusV1, v))).toEqual([1, 2]);
    expect(["StrictFifo", "Concurrent"].map((v) => tag(codecs.GroupModeV1, v))).toEqual([1, 2]);
    expect(hex(encode(codecs.GroupStartV1, { type: "Head" }))).toBe("01");
    expect(hex(encode(codecs.GroupStartV1, { type: "At", record_id: X.standardId }))).toBe("02" + STD8);
    expect(["None", "ScopedProofs", "FullStream"].map((v) => tag(codecs.VerificationModeV1, v))).toEqual([1, 2, 3]);
    expect(hex(encode(codecs.SubscriptionScopeV1, { type: "Exact", lane_id: X.LANE }))).toBe("02" + rep("1a", 32));
    const sources: W.SubscriptionSourceV1[] = [
      { type: "StandardGroup", lane_id: X.LANE, group_id: X.GROUP },
      { type: "StandardReplay", scope: { type: "Any" }, after: X.standardId },
      { type: "Fast", scope: { type: "Any" }, after: { provider_epoch: 0n, broker_epoch: 2n, sequence: 15n } },
      { type: "DeadLetters", lane_id: X.LANE, group_id: X.GROUP, after: null },
    ];
    expect(sources.map((s) => hex(encode(codecs.SubscriptionSourceV1, s)))).toEqual([
      "01" + rep("1a", 32) + rep("60", 32),
      "02" + "01" + "01" + STD8,
      "03" + "01" + "01" + be(0, 8) + be(2, 8) + be(15, 8),
      "04" + rep("1a", 32) + rep("60", 32) + "00",
    ]);
    expect(hex(encode(codecs.SnapshotScopeV1, { type: "Stream" }))).toBe("01");
    expect(hex(encode(codecs.SnapshotScopeV1, { type: "Lane", lane_id: X.LANE }))).toBe("02" + rep("1a", 32));
    expect(hex(encode(codecs.SnapshotCoverageV1, { type: "StandardRecordId", ...X.standardId }))).toBe("01" + STD8);
    expect(hex(encode(codecs.SnapshotCoverageV1, { type: "CheckpointReceiptDigest", digest: fill(32, 0xa0) }))).toBe("02" + rep("a0", 32));
  });
});

describe("§10, §11.2, §13.1 request bodies", () => {
  it("AppendRequestBodyV1 and GroupConfigV1 field order and widths", () => {
    layout(codecs.AppendRequestBodyV1, X.appendBody, APPEND);
    layout(codecs.GroupConfigV1, X.groupConfig, GROUP_CONFIG);
    const mutable: W.GroupMutableConfigV1 = { ...X.groupConfig };
    delete (mutable as Partial<W.GroupConfigV1>).group_id;
    delete (mutable as Partial<W.GroupConfigV1>).lane_id;
    delete (mutable as Partial<W.GroupConfigV1>).start;
    layout(codecs.GroupMutableConfigV1, mutable, "02" + be(30_000, 8) + be(60_000, 8) + be(8, 4) + be(5, 2) + be(600_000, 8) + be(86_400_000, 8) + be(0, 8));
  });

  it("CbqsRequestBodyV1 is the §7.1 u16 method tag, then the method's body", () => {
    layout(codecs.CbqsRequestBodyV1, { type: "Append", body: X.appendBody }, "0001" + APPEND);
    const credit: W.CreditRequestBodyV1 = { stream_id: X.STREAM, credit: { subscription_id: fill(32, 0x5b), records: 64, bytes: 1_048_576n } };
    layout(codecs.CbqsRequestBodyV1, { type: "Credit", body: credit }, "000d" + rep("51", 32) + rep("5b", 32) + be(64, 4) + be(1_048_576, 8));
    const redrive: W.RedriveRequestBodyV1 = { stream_id: X.STREAM, lane_id: X.LANE, group_id: X.GROUP, record_id: X.standardId, terminal_cycle_id: fill(32, 0xdc) };
    layout(codecs.CbqsRequestBodyV1, { type: "Redrive", body: redrive }, "0012" + rep("51", 32) + rep("1a", 32) + rep("60", 32) + STD8 + rep("dc", 32));
    const nack: W.NackRequestBodyV1 = { lease: X.leaseRef, retry_after_ms: 250n };
    const REF = rep("51", 32) + rep("1a", 32) + rep("60", 32) + STD8 + rep("dc", 32) + rep("1e", 32);
    layout(codecs.CbqsRequestBodyV1, { type: "Nack", body: nack }, "000f" + REF + be(250, 8));
    const list: W.ListLanesRequestBodyV1 = { stream_id: X.STREAM, after_lane_id: X.LANE, limit: 256 };
    layout(codecs.CbqsRequestBodyV1, { type: "ListLanes", body: list }, "0007" + rep("51", 32) + "01" + rep("1a", 32) + be(256, 4));
    expect(() => decode(codecs.CbqsRequestBodyV1, bytesOf("0013" + rep("51", 64)))).toThrow(/unknown CbqsRequestBodyV1 tag 19/);
    expect(() => decode(codecs.CbqsRequestBodyV1, bytesOf("0000"))).toThrow(C.DecodeError);
  });

  it("§7.1/§10: body_hash = keccak256(\"cbqs/request-body/v1\" || method_u16_be || canonical(body))", () => {
    expect(hex(C.append_request_body_hash_v1(X.appendBody))).toBe(kh(ascii("cbqs/request-body/v1") + "0001" + APPEND));
    const close: W.CloseLaneRequestBodyV1 = { stream_id: X.STREAM, lane_id: X.LANE };
    expect(hex(C.cbqs_request_body_hash_v1({ type: "CloseLane", body: close }))).toBe(kh(ascii("cbqs/request-body/v1") + "0006" + rep("51", 32) + rep("1a", 32)));
  });

  it("§13.1 AuthenticatedRequestV1 and the client frame: version 1, tag 3, request_id, proof, body", () => {
    const req = X.authenticated({ type: "Append", body: X.appendBody });
    const PROOF = CTX + rep("5e", 32) + be(1, 8) + "0001" + hex(C.append_request_body_hash_v1(X.appendBody)) + rep("66", 64);
    layout(codecs.AuthenticatedRequestV1, req, rep("7e", 32) + PROOF + "0001" + APPEND);
    layout(codecs.CbqsClientFrameV1, { type: "Request", body: req }, "01" + "03" + rep("7e", 32) + PROOF + "0001" + APPEND);
  });
});

describe("§14.2 delivery-state digests and §13.1 identifiers", () => {
  it("delivery_result_state_digest_v1 over canonical(context) || canonical(DeliveryResultStateV1)", () => {
    const s = X.resultStates.Reject!;
    const STATE =
      "04" + rep("51", 32) + rep("1a", 32) + rep("60", 32) + STD8 + rep("dc", 32) + "01" + rep("1e", 32) + be(2, 2) + "00" + "00" + "00" + "00" +
      "01" + be(200, 8) + "01" + be(900, 8) + "01" + rep("00", 32) + "00" + be(3, 8);
    layout(codecs.DeliveryResultStateV1, s, STATE);
    expect(hex(C.delivery_result_state_digest_v1(context, s))).toBe(kh(ascii("cbqs/delivery-result-state/v1") + CTX + STATE));
  });

  it("group config-state and deleted-state digests", () => {
    expect(hex(C.groupConfigStateDigest(context, X.STREAM, X.groupConfig))).toBe(kh(ascii("cbqs/group-config-state/v1") + CTX + rep("51", 32) + be(0, 8) + GROUP_CONFIG));
    expect(hex(C.groupDeletedStateDigest(context, X.STREAM, X.LANE, X.GROUP))).toBe(
      kh(ascii("cbqs/group-deleted-state/v1") + CTX + rep("51", 32) + rep("1a", 32) + rep("60", 32) + be(0, 8)),
    );
  });

  it("initial and redrive delivery-cycle ids and the lease id", () => {
    const id = { stream_id: X.STREAM, lane_id: X.LANE, group_id: X.GROUP, record_id: X.standardId };
    const ID = CTX + rep("51", 32) + rep("1a", 32) + rep("60", 32) + STD8;
    expect(hex(C.initialDeliveryCycleId(context, id))).toBe(kh(ascii("cbqs/delivery-cycle-initial/v1") + ID));
    expect(hex(C.redriveDeliveryCycleId(context, id, fill(32, 0xdc), fill(32, 0x6a)))).toBe(kh(ascii("cbqs/delivery-cycle-redrive/v1") + ID + rep("dc", 32) + rep("6a", 32)));
    expect(hex(C.leaseId(context, id, fill(32, 0xdc), 3, fill(32, 0x4b)))).toBe(kh(ascii("cbqs/delivery-lease/v1") + ID + rep("dc", 32) + be(3, 2) + rep("4b", 32)));
    expect(() => C.leaseId(context, id, fill(32, 0xdc), 0, fill(32, 0x4b))).toThrow(C.EncodeError);
  });

  it("§10: a lane event's client_message_id is keccak256(canonical(LaneEventV1)), and its receipt is a ProviderEvent on lane 0", () => {
    const EVENT = rep("51", 32) + rep("1a", 32) + "01" + rep("3a", 32) + be(40, 8);
    layout(codecs.LaneEventV1, X.laneEvent, EVENT);
    layout(codecs.LaneRecordV1, X.laneRecord, rep("51", 32) + rep("1a", 32) + "01" + be(40, 8) + rep("3a", 32));
    expect(hex(C.laneEventMessageId(X.laneEvent))).toBe(kh(EVENT));
    expect(hex(C.recordPayloadHash(X.payload))).toBe(kh("0102030405"));
  });
});

describe("§14 signing rows and §13.2 frames", () => {
  it("§15: snapshot_manifest_signing_bytes_v1 excludes application_signature", () => {
    const hand =
      ascii("cbqs/snapshot-manifest/v1") + CTX + rep("51", 32) + "02" + rep("1a", 32) + rep("5a", 32) + be(17, 4) + ascii("cbfs://vol/snap/1") +
      "02" + rep("a0", 32) + be(1, 8) + rep("a0", 32);
    expect(hex(C.snapshot_manifest_signing_bytes_v1(X.manifest))).toBe(hand);
    expect(hex(encode(codecs.CbqsSnapshotManifestV1, X.manifest))).toBe(hand.slice(ascii("cbqs/snapshot-manifest/v1").length) + rep("77", 64));
    expect(C.SIGNING_DOMAINS.CbqsSnapshotManifestV1).toBe("cbqs/snapshot-manifest/v1");
  });

  it("the digests receipts link by: checkpoint receipt, broker-epoch transition, delivery-state receipt", () => {
    expect(hex(C.checkpointReceiptDigest(X.checkpoint))).toBe(kh(hex(C.checkpoint_receipt_signing_bytes_v1(X.checkpoint))));
    expect(hex(C.brokerEpochTransitionDigest(X.transition))).toBe(kh(hex(C.broker_epoch_transition_signing_bytes_v1(X.transition))));
    const r = X.groupUpdate("GroupDelete").receipt;
    expect(hex(C.deliveryStateReceiptDigest(r))).toBe(kh(hex(C.delivery_state_receipt_signing_bytes_v1(r))));
  });

  it("server frames: version 1, the one-byte frame tag, the body; a response body's tag is the u16 method tag", () => {
    layout(codecs.CbqsServerFrameV1, { type: "SessionChallenge", body: X.sessionChallenge },
      "0101" + rep("7e", 32) + CTX + VIEW + rep("51", 32) + rep("9a", 32) + be(0, 8) + rep("5e", 32) + rep("c4", 32) + be(1_000, 8));
    const ERR = "01" + rep("7e", 32) + "00" + be(3917, 2) + be(14, 4) + ascii("cursor too old") + be(2, 4) + "0909";
    layout(codecs.CbqsServerFrameV1, { type: "Error", body: X.errorFrame }, "0107" + ERR);
    const credit = { subscription_id: fill(32, 0x5b), records: 1, bytes: 2n };
    layout(codecs.CbqsServerFrameV1, { type: "Response", body: { request_id: fill(32, 0x7e), body: { type: "Credit", body: credit } } },
      "0103" + rep("7e", 32) + "000d" + rep("5b", 32) + be(1, 4) + be(2, 8));
    const page: W.LanePageV1 = { lanes: [X.laneRecord], next_after_lane_id: X.LANE };
    layout(codecs.CbqsResponseBodyV1, { type: "ListLanes", body: page }, "0007" + be(1, 4) + hex(encode(codecs.LaneRecordV1, X.laneRecord)) + "01" + rep("1a", 32));
    layout(codecs.CbqsResponseBodyV1, { type: "CreateLane", lane: X.laneRecord, receipt: X.laneEventReceipt },
      "0005" + hex(encode(codecs.LaneRecordV1, X.laneRecord)) + hex(encode(codecs.AppendReceiptV1, X.laneEventReceipt)));
  });

  it("the long-poll batch: u32 frame_count, then u32 frame_byte_length || frame for each", () => {
    const f1 = hex(encode(codecs.CbqsServerFrameV1, { type: "Error", body: X.errorFrame }));
    const f2 = hex(encode(codecs.CbqsServerFrameV1, { type: "DeliveryState", body: X.deliveryUpdate(X.resultStates.LeaseExpire!) }));
    layout(codecs.CbqsServerFrameBatchV1, {
      frames: [{ type: "Error", body: X.errorFrame }, { type: "DeliveryState", body: X.deliveryUpdate(X.resultStates.LeaseExpire!) }],
    }, be(2, 4) + be(f1.length / 2, 4) + f1 + be(f2.length / 2, 4) + f2);
  });

  it("JSON: a response's lane result is {\"CreateLane\": {\"lane\", \"receipt\"}}; frames are {\"<Variant>\": body}", () => {
    const json = toJson(codecs.CbqsResponseBodyV1, { type: "CreateLane", lane: X.laneRecord, receipt: X.laneEventReceipt }) as Record<string, Record<string, unknown>>;
    expect(Object.keys(json)).toEqual(["CreateLane"]);
    expect(Object.keys(json["CreateLane"]!)).toEqual(["lane", "receipt"]);
    const frame = toJson(codecs.CbqsServerFrameV1, { type: "Error", body: X.errorFrame });
    expect(frame).toEqual({ Error: { request_id: "0x" + rep("7e", 32), subscription_id: null, code: "3917", message: "cursor too old", details: "0x0909" } });
    expect(fromJson(codecs.CbqsServerFrameV1, frame)).toEqual({ type: "Error", body: X.errorFrame });
  });

  it("the CLI encodes and decodes the new types by name", () => {
    const json = JSON.stringify(toJson(codecs.CbqsServerFrameV1, { type: "Error", body: X.errorFrame }));
    const h = encodeCommand("CbqsServerFrameV1", json, false);
    expect(h).toBe("0x" + hex(encode(codecs.CbqsServerFrameV1, { type: "Error", body: X.errorFrame })));
    expect(JSON.parse(decodeCommand("CbqsServerFrameV1", h, false))).toEqual(JSON.parse(json));
    expect(() => decodeCommand("CheckpointReceiptV1", "0x" + hex(encode(codecs.CheckpointReceiptV1, X.checkpoint)).replace(be(15, 8) + rep("0e", 32), be(9, 8) + rep("0e", 32)), false)).toThrow(/last_sequence/);
  });
});
