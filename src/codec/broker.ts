// Broker-side signed objects of CIP-39 (§10, §12, §14.1, §14.2, §15). No consensus path reads
// them, but they share the canonical codec and the §14 signing registry.
import { enumeration, fixedBytes, option, providerEpochV1, struct, taggedUnion, u64 } from "./core.js";
import { Bytes32, CbqsSigningContextV1, FinalizedViewV1, Signature } from "./schema.js";
import type * as T from "./types.js";

const Bytes24 = fixedBytes(24, "Bytes24");

export const RecordOriginV1 = enumeration<T.RecordOriginV1>("RecordOriginV1", { Client: 1, ProviderEvent: 2 });
export const RecordKindV1 = enumeration<T.RecordKindV1>("RecordKindV1", {
  Application: 1,
  LaneCreated: 2,
  LaneClosed: 3,
  KeyBatchHeader: 4,
  KeyEnvelope: 5,
});

export const StandardRecordIdV1 = struct<T.StandardRecordIdV1>("StandardRecordIdV1", {
  provider_epoch: providerEpochV1,
  sequence: u64,
});
export const FastRecordIdV1 = struct<T.FastRecordIdV1>("FastRecordIdV1", {
  provider_epoch: providerEpochV1,
  broker_epoch: u64,
  sequence: u64,
});
/** §14.1 tagged union; §14 table: Standard = 1, Fast = 2. */
export const RecordIdV1 = taggedUnion<T.RecordIdV1>("RecordIdV1", {
  Standard: { tag: 1, kind: "struct", codec: StandardRecordIdV1 },
  Fast: { tag: 2, kind: "struct", codec: FastRecordIdV1 },
});

export const RecordHeaderV1 = struct<T.RecordHeaderV1>("RecordHeaderV1", {
  stream_id: Bytes32,
  lane_id: Bytes32,
  origin: RecordOriginV1,
  kind: RecordKindV1,
  client_message_id: Bytes32,
  created_at_ms: u64,
  visible_after_ms: u64,
  expires_at_ms: u64,
  encryption_generation: u64,
  nonce: Bytes24,
});

export const AppendReceiptV1 = struct<T.AppendReceiptV1>("AppendReceiptV1", {
  context: CbqsSigningContextV1,
  served_at: FinalizedViewV1,
  stream_id: Bytes32,
  lane_id: Bytes32,
  origin: RecordOriginV1,
  kind: RecordKindV1,
  record_id: RecordIdV1,
  client_message_id: Bytes32,
  header_hash: Bytes32,
  payload_hash: Bytes32,
  visible_after_ms: u64,
  expires_at_ms: u64,
  encryption_generation: u64,
  previous_global_receipt: Bytes32,
  previous_lane_receipt: Bytes32,
  committed_at_ms: u64,
  signature: Signature,
});

export const FastLineageV1 = struct<T.FastLineageV1>("FastLineageV1", {
  provider_epoch: providerEpochV1,
  broker_epoch: u64,
});
export const BrokerTransitionKindV1 = enumeration<T.BrokerTransitionKindV1>("BrokerTransitionKindV1", {
  Clean: 1,
  Void: 2,
});

export const BrokerEpochTransitionV1 = struct<T.BrokerEpochTransitionV1>(
  "BrokerEpochTransitionV1",
  {
    context: CbqsSigningContextV1,
    served_at: FinalizedViewV1,
    stream_id: Bytes32,
    provider_epoch: providerEpochV1,
    previous_lineage: option(FastLineageV1),
    replacement_broker_epoch: u64,
    kind: BrokerTransitionKindV1,
    last_durable_checkpoint: Bytes32,
    last_durable_sequence: option(u64),
    last_provisional_sequence: option(u64),
    created_at_ms: u64,
    signature: Signature,
  },
  {
    // §12.1: Clean carries both watermarks equal, or both absent (empty genesis lineage).
    check: (t) =>
      t.kind === "Clean" && t.last_durable_sequence !== t.last_provisional_sequence
        ? { field: "last_provisional_sequence", reason: "a Clean transition needs equal (or both absent) watermarks (§12.1)" }
        : null,
    arbitrary: (_fc, base) =>
      base.map((t) => (t.kind === "Clean" ? { ...t, last_provisional_sequence: t.last_durable_sequence } : t)),
  },
);

export const CheckpointReceiptV1 = struct<T.CheckpointReceiptV1>("CheckpointReceiptV1", {
  context: CbqsSigningContextV1,
  served_at: FinalizedViewV1,
  stream_id: Bytes32,
  provider_epoch: providerEpochV1,
  broker_epoch: u64,
  first_sequence: u64,
  last_sequence: u64,
  ordered_range_root: Bytes32,
  previous_checkpoint: Bytes32,
  durable_high_water: u64,
  committed_at_ms: u64,
  signature: Signature,
});

export const DeliveryStateActionV1 = enumeration<T.DeliveryStateActionV1>("DeliveryStateActionV1", {
  Ack: 1,
  Nack: 2,
  Extend: 3,
  Reject: 4,
  Redrive: 5,
  GroupCreate: 6,
  GroupUpdate: 7,
  GroupDelete: 8,
  LeaseIssue: 9,
  LeaseExpire: 10,
  AttemptsExhaust: 11,
  RecordExpire: 12,
});

/** §14.2: which of record_id / lease_id each action carries ("optional" = either). */
const RECEIPT_IDS: Record<T.DeliveryStateActionV1, [record: boolean, lease: boolean | "optional"]> = {
  Ack: [true, true],
  Nack: [true, true],
  Extend: [true, true],
  Reject: [true, true],
  Redrive: [true, false],
  GroupCreate: [false, false],
  GroupUpdate: [false, false],
  GroupDelete: [false, false],
  LeaseIssue: [true, true],
  LeaseExpire: [true, true],
  AttemptsExhaust: [true, true],
  RecordExpire: [true, "optional"],
};

export const DeliveryStateReceiptV1 = struct<T.DeliveryStateReceiptV1>(
  "DeliveryStateReceiptV1",
  {
    context: CbqsSigningContextV1,
    served_at: FinalizedViewV1,
    stream_id: Bytes32,
    lane_id: Bytes32,
    group_id: Bytes32,
    provider_epoch: providerEpochV1,
    action: DeliveryStateActionV1,
    record_id: option(StandardRecordIdV1),
    lease_id: option(Bytes32),
    resulting_state_digest: Bytes32,
    previous_group_receipt: Bytes32,
    committed_at_ms: u64,
    signature: Signature,
  },
  {
    check: (r) => {
      const [record, lease] = RECEIPT_IDS[r.action];
      if ((r.record_id !== null) !== record) {
        return { field: "record_id", reason: `record_id must be ${record ? "present" : "absent"} for ${r.action} (§14.2)` };
      }
      if (lease !== "optional" && (r.lease_id !== null) !== lease) {
        return { field: "lease_id", reason: `lease_id must be ${lease ? "present" : "absent"} for ${r.action} (§14.2)` };
      }
      return null;
    },
    arbitrary: (fc, base) =>
      fc.tuple(base, StandardRecordIdV1.arbitrary(fc), Bytes32.arbitrary(fc)).map(([r, id, lease]) => {
        const [record, leaseRule] = RECEIPT_IDS[r.action];
        const leaseId = leaseRule === "optional" ? r.lease_id : leaseRule ? lease : null;
        return { ...r, record_id: record ? id : null, lease_id: leaseId };
      }),
  },
);

export const StandardRetentionAnchorV1 = struct<T.StandardRetentionAnchorV1>(
  "StandardRetentionAnchorV1",
  {
    context: CbqsSigningContextV1,
    served_at: FinalizedViewV1,
    stream_id: Bytes32,
    provider_epoch: providerEpochV1,
    lane_id: option(Bytes32),
    first_retained_sequence: u64,
    previous_global_receipt: Bytes32,
    previous_lane_receipt: option(Bytes32),
    committed_at_ms: u64,
    signature: Signature,
  },
  {
    // §15: lane_id and previous_lane_receipt are present together or absent together.
    check: (a) =>
      (a.lane_id === null) !== (a.previous_lane_receipt === null)
        ? { field: "previous_lane_receipt", reason: "lane_id and previous_lane_receipt must be present together (§15)" }
        : null,
    arbitrary: (fc, base) =>
      fc.tuple(base, Bytes32.arbitrary(fc)).map(([a, d]) => ({
        ...a,
        previous_lane_receipt: a.lane_id === null ? null : (a.previous_lane_receipt ?? d),
      })),
  },
);

export const GroupRetentionAnchorV1 = struct<T.GroupRetentionAnchorV1>("GroupRetentionAnchorV1", {
  context: CbqsSigningContextV1,
  served_at: FinalizedViewV1,
  stream_id: Bytes32,
  provider_epoch: providerEpochV1,
  lane_id: Bytes32,
  group_id: Bytes32,
  latest_retained_receipt: Bytes32,
  group_queue_sequence: u64,
  committed_at_ms: u64,
  signature: Signature,
});

export const FastRetentionAnchorV1 = struct<T.FastRetentionAnchorV1>("FastRetentionAnchorV1", {
  context: CbqsSigningContextV1,
  served_at: FinalizedViewV1,
  stream_id: Bytes32,
  provider_epoch: providerEpochV1,
  broker_epoch: u64,
  first_retained_sequence: u64,
  previous_checkpoint: Bytes32,
  committed_at_ms: u64,
  signature: Signature,
});
