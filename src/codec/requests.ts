// The §11.2 group configuration and the §13.1 proof-bound request bodies, with the u16
// method-tagged `CbqsRequestBodyV1` whose canonical bytes feed `body_hash` (§7.1). Request-level
// validation that has its own §17 code (GroupConfigInvalid, VerificationModeIncompatible,
// ProofScopeTooWide, …) is the broker's, not the decoder's: a decode failure could not carry it.
import { compareBytes } from "../bytes.js";
import { enumeration, option, struct, taggedUnion, u16, u32, u64, varBytes, vec, type Codec, type VariantDef } from "./core.js";
import { Bytes24, FastRecordIdV1, StandardRecordIdV1 } from "./broker.js";
import { Bytes32, KeyEnvelopeV1, KeyRotationBatchV1, MAX_LANE_IDS_PER_GRANT } from "./schema.js";
import type * as T from "./types.js";
import type * as W from "./wire-types.js";

/** §10: the protocol maximum payload, the §18 Maximum of cbqs.max_inline_message_bytes. */
export const MAX_INLINE_MESSAGE_BYTES = 1_048_576;
/** §13.1/§18 codec bound cbqs.max_key_envelopes_per_chunk. */
export const MAX_KEY_ENVELOPES_PER_CHUNK = 1_024;
/** §13.1/§18 codec bound cbqs.max_key_batch_chunk_bytes: the canonical envelope bytes of one chunk. */
export const MAX_KEY_BATCH_CHUNK_BYTES = 4_194_304;

// ---------------------------------------------------------------- §10 append

export const AppendRequestBodyV1 = struct<W.AppendRequestBodyV1>(
  "AppendRequestBodyV1",
  {
    stream_id: Bytes32,
    lane_id: Bytes32,
    client_message_id: Bytes32,
    client_created_at_ms: u64,
    visible_after_ms: u64,
    expires_at_ms: u64,
    encryption_generation: u64,
    nonce: Bytes24,
    payload: varBytes("payload", 0, MAX_INLINE_MESSAGE_BYTES),
  },
  {
    // §10: "Clients MUST set visible_after_ms = 0; the broker MUST reject any other v1 value."
    check: (b) => (b.visible_after_ms === 0n ? null : { field: "visible_after_ms", reason: "visible_after_ms is 0 in v1 (§10)" }),
    arbitrary: (_fc, base) => base.map((b) => ({ ...b, visible_after_ms: 0n })),
  },
);

// ---------------------------------------------------------------- §11.2 groups

/** §11.2 `StrictFifo | Concurrent`, untagged there: 1-based in declaration order (D-0152). */
export const GroupModeV1 = enumeration<W.GroupModeV1>("GroupModeV1", { StrictFifo: 1, Concurrent: 2 });

/** §11.2 `Head | At`: At names the retained standard record id the group starts at (D-0152). */
export const GroupStartV1 = taggedUnion<W.GroupStartV1>("GroupStartV1", {
  Head: { tag: 1, kind: "unit" },
  At: { tag: 2, kind: "newtype", field: "record_id", codec: StandardRecordIdV1 },
});

export const GroupConfigV1 = struct<W.GroupConfigV1>("GroupConfigV1", {
  group_id: Bytes32,
  lane_id: Bytes32,
  mode: GroupModeV1,
  start: GroupStartV1,
  visibility_timeout_ms: u64,
  max_visibility_ms: u64,
  max_in_flight: u32,
  max_attempts: u16,
  record_deadline_ms: u64,
  dead_letter_ttl_ms: u64,
  retention_pin_until_ms: u64,
});

export const GroupMutableConfigV1 = struct<W.GroupMutableConfigV1>("GroupMutableConfigV1", {
  mode: GroupModeV1,
  visibility_timeout_ms: u64,
  max_visibility_ms: u64,
  max_in_flight: u32,
  max_attempts: u16,
  record_deadline_ms: u64,
  dead_letter_ttl_ms: u64,
  retention_pin_until_ms: u64,
});

// ---------------------------------------------------------------- §13.1 bodies

export const BeginKeyBatchRequestBodyV1 = struct<W.BeginKeyBatchRequestBodyV1>("BeginKeyBatchRequestBodyV1", {
  key_stream_id: Bytes32,
  batch: KeyRotationBatchV1,
  total_chunks: u32,
});

export const PutKeyBatchChunkRequestBodyV1 = struct<W.PutKeyBatchChunkRequestBodyV1>("PutKeyBatchChunkRequestBodyV1", {
  key_stream_id: Bytes32,
  batch_digest: Bytes32,
  chunk_index: u32,
  envelopes: vec(KeyEnvelopeV1, { maxCount: MAX_KEY_ENVELOPES_PER_CHUNK, maxBytes: MAX_KEY_BATCH_CHUNK_BYTES }),
});

export const CommitKeyBatchRequestBodyV1 = struct<W.CommitKeyBatchRequestBodyV1>("CommitKeyBatchRequestBodyV1", {
  key_stream_id: Bytes32,
  batch_digest: Bytes32,
});

export const CreateLaneRequestBodyV1 = struct<W.CreateLaneRequestBodyV1>("CreateLaneRequestBodyV1", {
  stream_id: Bytes32,
  lane_nonce: Bytes32,
  metadata_hash: Bytes32,
});

export const CloseLaneRequestBodyV1 = struct<W.CloseLaneRequestBodyV1>("CloseLaneRequestBodyV1", {
  stream_id: Bytes32,
  lane_id: Bytes32,
});

export const ListLanesRequestBodyV1 = struct<W.ListLanesRequestBodyV1>("ListLanesRequestBodyV1", {
  stream_id: Bytes32,
  after_lane_id: option(Bytes32),
  limit: u32,
});

export const CreateGroupRequestBodyV1 = struct<W.CreateGroupRequestBodyV1>("CreateGroupRequestBodyV1", {
  stream_id: Bytes32,
  config: GroupConfigV1,
});

export const UpdateGroupRequestBodyV1 = struct<W.UpdateGroupRequestBodyV1>("UpdateGroupRequestBodyV1", {
  stream_id: Bytes32,
  lane_id: Bytes32,
  group_id: Bytes32,
  config: GroupMutableConfigV1,
});

export const DeleteGroupRequestBodyV1 = struct<W.DeleteGroupRequestBodyV1>("DeleteGroupRequestBodyV1", {
  stream_id: Bytes32,
  lane_id: Bytes32,
  group_id: Bytes32,
});

/**
 * §13.2 `Any | Exact | Set`: the lane-scope tags of the §14 table, and a set sorted, unique and
 * bounded by cbqs.max_lane_ids_per_grant before allocation (D-0030).
 */
export const SubscriptionScopeV1 = taggedUnion<W.SubscriptionScopeV1>("SubscriptionScopeV1", {
  Any: { tag: 1, kind: "unit" },
  Exact: { tag: 2, kind: "newtype", field: "lane_id", codec: Bytes32 },
  Set: {
    tag: 3,
    kind: "newtype",
    field: "lane_ids",
    codec: vec(Bytes32, { maxCount: MAX_LANE_IDS_PER_GRANT, strictlyAscending: compareBytes }),
  },
});

/** §13.1, untagged there: 1-based in declaration order (D-0152). */
export const SubscriptionSourceV1 = taggedUnion<W.SubscriptionSourceV1>("SubscriptionSourceV1", {
  StandardGroup: {
    tag: 1,
    kind: "struct",
    codec: struct<{ lane_id: Uint8Array; group_id: Uint8Array }>("StandardGroupSource", { lane_id: Bytes32, group_id: Bytes32 }),
  },
  StandardReplay: {
    tag: 2,
    kind: "struct",
    codec: struct<{ scope: W.SubscriptionScopeV1; after: T.StandardRecordIdV1 | null }>("StandardReplaySource", {
      scope: SubscriptionScopeV1,
      after: option(StandardRecordIdV1),
    }),
  },
  Fast: {
    tag: 3,
    kind: "struct",
    codec: struct<{ scope: W.SubscriptionScopeV1; after: T.FastRecordIdV1 | null }>("FastSource", {
      scope: SubscriptionScopeV1,
      after: option(FastRecordIdV1),
    }),
  },
  DeadLetters: {
    tag: 4,
    kind: "struct",
    codec: struct<{ lane_id: Uint8Array; group_id: Uint8Array; after: T.StandardRecordIdV1 | null }>("DeadLettersSource", {
      lane_id: Bytes32,
      group_id: Bytes32,
      after: option(StandardRecordIdV1),
    }),
  },
});

/** §13.1: None = 1, ScopedProofs = 2, FullStream = 3. */
export const VerificationModeV1 = enumeration<W.VerificationModeV1>("VerificationModeV1", { None: 1, ScopedProofs: 2, FullStream: 3 });

const GROUP_SOURCES: readonly W.SubscriptionSourceV1["type"][] = ["StandardGroup", "DeadLetters"];

export const OpenSubscriptionRequestBodyV1 = struct<W.OpenSubscriptionRequestBodyV1>(
  "OpenSubscriptionRequestBodyV1",
  {
    stream_id: Bytes32,
    subscription_id: Bytes32,
    source: SubscriptionSourceV1,
    after_group_receipt: option(Bytes32),
    verification: VerificationModeV1,
  },
  {
    // §13.1: "Other subscription sources MUST set it absent" — no §17 code, so the decoder's.
    check: (b) =>
      b.after_group_receipt !== null && !GROUP_SOURCES.includes(b.source.type)
        ? { field: "after_group_receipt", reason: `after_group_receipt is absent for a ${b.source.type} source (§13.1)` }
        : null,
    arbitrary: (_fc, base) => base.map((b) => (GROUP_SOURCES.includes(b.source.type) ? b : { ...b, after_group_receipt: null })),
  },
);

export const CloseSubscriptionRequestBodyV1 = struct<W.CloseSubscriptionRequestBodyV1>("CloseSubscriptionRequestBodyV1", {
  stream_id: Bytes32,
  subscription_id: Bytes32,
});

export const CreditV1 = struct<W.CreditV1>("CreditV1", {
  subscription_id: Bytes32,
  records: u32,
  bytes: u64,
});

export const CreditRequestBodyV1 = struct<W.CreditRequestBodyV1>("CreditRequestBodyV1", {
  stream_id: Bytes32,
  credit: CreditV1,
});

export const DeliveryLeaseRefV1 = struct<W.DeliveryLeaseRefV1>("DeliveryLeaseRefV1", {
  stream_id: Bytes32,
  lane_id: Bytes32,
  group_id: Bytes32,
  record_id: StandardRecordIdV1,
  delivery_cycle_id: Bytes32,
  lease_id: Bytes32,
});

export const AckRequestBodyV1 = struct<W.AckRequestBodyV1>("AckRequestBodyV1", { lease: DeliveryLeaseRefV1 });
export const NackRequestBodyV1 = struct<W.NackRequestBodyV1>("NackRequestBodyV1", { lease: DeliveryLeaseRefV1, retry_after_ms: u64 });
export const ExtendRequestBodyV1 = struct<W.ExtendRequestBodyV1>("ExtendRequestBodyV1", { lease: DeliveryLeaseRefV1, extend_by_ms: u64 });
export const RejectRequestBodyV1 = struct<W.RejectRequestBodyV1>("RejectRequestBodyV1", { lease: DeliveryLeaseRefV1, reason_hash: Bytes32 });

export const RedriveRequestBodyV1 = struct<W.RedriveRequestBodyV1>("RedriveRequestBodyV1", {
  stream_id: Bytes32,
  lane_id: Bytes32,
  group_id: Bytes32,
  record_id: StandardRecordIdV1,
  terminal_cycle_id: Bytes32,
});

/** Each §7.1 method with its tag and its one canonical body type. */
export const REQUEST_BODIES = {
  Append: [1, AppendRequestBodyV1],
  BeginKeyBatch: [2, BeginKeyBatchRequestBodyV1],
  PutKeyBatchChunk: [3, PutKeyBatchChunkRequestBodyV1],
  CommitKeyBatch: [4, CommitKeyBatchRequestBodyV1],
  CreateLane: [5, CreateLaneRequestBodyV1],
  CloseLane: [6, CloseLaneRequestBodyV1],
  ListLanes: [7, ListLanesRequestBodyV1],
  CreateGroup: [8, CreateGroupRequestBodyV1],
  UpdateGroup: [9, UpdateGroupRequestBodyV1],
  DeleteGroup: [10, DeleteGroupRequestBodyV1],
  OpenSubscription: [11, OpenSubscriptionRequestBodyV1],
  CloseSubscription: [12, CloseSubscriptionRequestBodyV1],
  Credit: [13, CreditRequestBodyV1],
  Ack: [14, AckRequestBodyV1],
  Nack: [15, NackRequestBodyV1],
  Extend: [16, ExtendRequestBodyV1],
  Reject: [17, RejectRequestBodyV1],
  Redrive: [18, RedriveRequestBodyV1],
} as const satisfies Record<W.CbqsRequestBodyV1["type"], readonly [number, Codec<any>]>;

/** §13.1: the method's u16 tag (§7.1), then its body; JSON `{"<Method>": body}`. */
export const CbqsRequestBodyV1 = taggedUnion<W.CbqsRequestBodyV1>(
  "CbqsRequestBodyV1",
  Object.fromEntries(
    Object.entries(REQUEST_BODIES).map(([method, [tag, codec]]) => [method, { tag, kind: "newtype", field: "body", codec }]),
  ) as unknown as Record<W.CbqsRequestBodyV1["type"], VariantDef>,
  2,
);
