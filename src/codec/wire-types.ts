// The broker-side wire types of CIP-39 §8, §10, §11.2, §12.2, §13 and §15 that types.ts does not
// already hold, field for field and in declaration order (the conventions of types.ts). Tagged
// unions are `{ type: <variant>, ... }`; a variant with one unnamed payload keeps it in `body`.
import type {
  AppendReceiptV1,
  BrokerEpochTransitionV1,
  Bytes32,
  CbqsSigningContextV1,
  CheckpointReceiptV1,
  DeliveryStateActionV1,
  DeliveryStateReceiptV1,
  FastRecordIdV1,
  FinalizedViewV1,
  KeyBatchReceiptV1,
  KeyEnvelopeV1,
  KeyRotationBatchV1,
  LaneScopeV1,
  RecordHeaderV1,
  RecordIdV1,
  RequestProofV1,
  SessionProofV1,
  Signature,
  StandardRecordIdV1,
  StreamGrantV1,
} from "./types.js";

// §8 lanes
export type LaneStatusV1 = "Active" | "Closed"; // 1, 2 (D-0152)
export interface LaneRecordV1 {
  stream_id: Bytes32;
  lane_id: Bytes32;
  status: LaneStatusV1;
  created_at_ms: bigint; // u64
  metadata_hash: Bytes32;
}
export interface LaneEventV1 {
  stream_id: Bytes32;
  lane_id: Bytes32;
  status: LaneStatusV1;
  metadata_hash: Bytes32;
  occurred_at_ms: bigint; // u64
}

// §10
export interface AppendRequestBodyV1 {
  stream_id: Bytes32;
  lane_id: Bytes32;
  client_message_id: Bytes32;
  client_created_at_ms: bigint; // u64
  visible_after_ms: bigint; // u64, always 0 in v1
  expires_at_ms: bigint; // u64
  encryption_generation: bigint; // u64
  nonce: Uint8Array; // Bytes24
  payload: Uint8Array; // at most 1,048,576 bytes
}

// §11.2 consumer groups
export type GroupModeV1 = "StrictFifo" | "Concurrent"; // 1, 2 (D-0152)
export type GroupStartV1 = { type: "Head" } | { type: "At"; record_id: StandardRecordIdV1 }; // 1, 2
export interface GroupConfigV1 {
  group_id: Bytes32;
  lane_id: Bytes32;
  mode: GroupModeV1;
  start: GroupStartV1;
  visibility_timeout_ms: bigint; // u64
  max_visibility_ms: bigint; // u64
  max_in_flight: number; // u32
  max_attempts: number; // u16
  record_deadline_ms: bigint; // u64
  dead_letter_ttl_ms: bigint; // u64
  retention_pin_until_ms: bigint; // u64
}
export interface GroupMutableConfigV1 {
  mode: GroupModeV1;
  visibility_timeout_ms: bigint; // u64
  max_visibility_ms: bigint; // u64
  max_in_flight: number; // u32
  max_attempts: number; // u16
  record_deadline_ms: bigint; // u64
  dead_letter_ttl_ms: bigint; // u64
  retention_pin_until_ms: bigint; // u64
}

// §13.1 request bodies
export interface BeginKeyBatchRequestBodyV1 {
  key_stream_id: Bytes32;
  batch: KeyRotationBatchV1;
  total_chunks: number; // u32
}
export interface PutKeyBatchChunkRequestBodyV1 {
  key_stream_id: Bytes32;
  batch_digest: Bytes32;
  chunk_index: number; // u32
  envelopes: KeyEnvelopeV1[];
}
export interface CommitKeyBatchRequestBodyV1 {
  key_stream_id: Bytes32;
  batch_digest: Bytes32;
}
export interface CreateLaneRequestBodyV1 {
  stream_id: Bytes32;
  lane_nonce: Bytes32;
  metadata_hash: Bytes32;
}
export interface CloseLaneRequestBodyV1 {
  stream_id: Bytes32;
  lane_id: Bytes32;
}
export interface ListLanesRequestBodyV1 {
  stream_id: Bytes32;
  after_lane_id: Bytes32 | null;
  limit: number; // u32
}
export interface CreateGroupRequestBodyV1 {
  stream_id: Bytes32;
  config: GroupConfigV1;
}
export interface UpdateGroupRequestBodyV1 {
  stream_id: Bytes32;
  lane_id: Bytes32;
  group_id: Bytes32;
  config: GroupMutableConfigV1;
}
export interface DeleteGroupRequestBodyV1 {
  stream_id: Bytes32;
  lane_id: Bytes32;
  group_id: Bytes32;
}
/** §13.2: the same shape and tags as a grant's lane scope (D-0152). */
export type SubscriptionScopeV1 = LaneScopeV1;
export type SubscriptionSourceV1 = // 1..4 (D-0152)
  | { type: "StandardGroup"; lane_id: Bytes32; group_id: Bytes32 }
  | { type: "StandardReplay"; scope: SubscriptionScopeV1; after: StandardRecordIdV1 | null }
  | { type: "Fast"; scope: SubscriptionScopeV1; after: FastRecordIdV1 | null }
  | { type: "DeadLetters"; lane_id: Bytes32; group_id: Bytes32; after: StandardRecordIdV1 | null };
export type VerificationModeV1 = "None" | "ScopedProofs" | "FullStream"; // 1..3 (§13.1)
export interface OpenSubscriptionRequestBodyV1 {
  stream_id: Bytes32;
  subscription_id: Bytes32;
  source: SubscriptionSourceV1;
  after_group_receipt: Bytes32 | null;
  verification: VerificationModeV1;
}
export interface CloseSubscriptionRequestBodyV1 {
  stream_id: Bytes32;
  subscription_id: Bytes32;
}
export interface CreditV1 {
  subscription_id: Bytes32;
  records: number; // u32
  bytes: bigint; // u64
}
export interface CreditRequestBodyV1 {
  stream_id: Bytes32;
  credit: CreditV1;
}
export interface DeliveryLeaseRefV1 {
  stream_id: Bytes32;
  lane_id: Bytes32;
  group_id: Bytes32;
  record_id: StandardRecordIdV1;
  delivery_cycle_id: Bytes32;
  lease_id: Bytes32;
}
export interface AckRequestBodyV1 {
  lease: DeliveryLeaseRefV1;
}
export interface NackRequestBodyV1 {
  lease: DeliveryLeaseRefV1;
  retry_after_ms: bigint; // u64
}
export interface ExtendRequestBodyV1 {
  lease: DeliveryLeaseRefV1;
  extend_by_ms: bigint; // u64
}
export interface RejectRequestBodyV1 {
  lease: DeliveryLeaseRefV1;
  reason_hash: Bytes32;
}
export interface RedriveRequestBodyV1 {
  stream_id: Bytes32;
  lane_id: Bytes32;
  group_id: Bytes32;
  record_id: StandardRecordIdV1;
  terminal_cycle_id: Bytes32;
}
/** §13.1: the u16 method tag of §7.1, then the method's body. */
export type CbqsRequestBodyV1 =
  | { type: "Append"; body: AppendRequestBodyV1 }
  | { type: "BeginKeyBatch"; body: BeginKeyBatchRequestBodyV1 }
  | { type: "PutKeyBatchChunk"; body: PutKeyBatchChunkRequestBodyV1 }
  | { type: "CommitKeyBatch"; body: CommitKeyBatchRequestBodyV1 }
  | { type: "CreateLane"; body: CreateLaneRequestBodyV1 }
  | { type: "CloseLane"; body: CloseLaneRequestBodyV1 }
  | { type: "ListLanes"; body: ListLanesRequestBodyV1 }
  | { type: "CreateGroup"; body: CreateGroupRequestBodyV1 }
  | { type: "UpdateGroup"; body: UpdateGroupRequestBodyV1 }
  | { type: "DeleteGroup"; body: DeleteGroupRequestBodyV1 }
  | { type: "OpenSubscription"; body: OpenSubscriptionRequestBodyV1 }
  | { type: "CloseSubscription"; body: CloseSubscriptionRequestBodyV1 }
  | { type: "Credit"; body: CreditRequestBodyV1 }
  | { type: "Ack"; body: AckRequestBodyV1 }
  | { type: "Nack"; body: NackRequestBodyV1 }
  | { type: "Extend"; body: ExtendRequestBodyV1 }
  | { type: "Reject"; body: RejectRequestBodyV1 }
  | { type: "Redrive"; body: RedriveRequestBodyV1 };
export interface AuthenticatedRequestV1 {
  request_id: Bytes32;
  proof: RequestProofV1;
  body: CbqsRequestBodyV1;
}

// §14.2 delivery state
export interface DeliveryResultStateV1 {
  action: DeliveryStateActionV1;
  stream_id: Bytes32;
  lane_id: Bytes32;
  group_id: Bytes32;
  record_id: StandardRecordIdV1;
  delivery_cycle_id: Bytes32;
  lease_id: Bytes32 | null;
  attempt: number; // u16
  holder_signing_key_id: Bytes32 | null;
  available_at_ms: bigint | null; // u64
  issued_at_ms: bigint | null; // u64
  lease_expires_at_ms: bigint | null; // u64
  terminal_at_ms: bigint | null; // u64
  terminal_expires_at_ms: bigint | null; // u64
  reason_hash: Bytes32 | null;
  successor_cycle_id: Bytes32 | null;
  group_queue_sequence: bigint; // u64
}
export interface DeliveryStateUpdateV1 {
  state: DeliveryResultStateV1;
  receipt: DeliveryStateReceiptV1;
}
export interface GroupStateUpdateV1 {
  config: GroupConfigV1 | null;
  receipt: DeliveryStateReceiptV1;
}

// §13.2 sessions, responses, deliveries, checkpoints, errors
export interface OpenSessionRequestV1 {
  request_id: Bytes32;
  stream_id: Bytes32;
  grant: StreamGrantV1;
}
export interface CompleteSessionRequestV1 {
  request_id: Bytes32;
  proof: SessionProofV1;
}
export type CbqsClientFrameV1 =
  | { type: "OpenSession"; body: OpenSessionRequestV1 }
  | { type: "CompleteSession"; body: CompleteSessionRequestV1 }
  | { type: "Request"; body: AuthenticatedRequestV1 };
export interface SessionChallengeV1 {
  request_id: Bytes32;
  context: CbqsSigningContextV1;
  served_at: FinalizedViewV1;
  stream_id: Bytes32;
  grant_id: Bytes32;
  provider_epoch: bigint; // u64, always 0
  session_id: Bytes32;
  challenge: Bytes32;
  expires_at_ms: bigint; // u64
}
export interface SessionOpenedV1 {
  request_id: Bytes32;
  context: CbqsSigningContextV1;
  served_at: FinalizedViewV1;
  stream_id: Bytes32;
  grant_id: Bytes32;
  provider_epoch: bigint; // u64, always 0
  session_id: Bytes32;
  expires_at_ms: bigint; // u64
}
export interface FastDurableWatermarkV1 {
  stream_id: Bytes32;
  provider_epoch: bigint; // u64, always 0
  broker_epoch: bigint; // u64
  last_durable_sequence: bigint | null; // u64
  checkpoint_anchor: Bytes32;
}
export interface AppendResultV1 {
  record_id: RecordIdV1;
  append_receipt: AppendReceiptV1 | null;
  durable_watermark: FastDurableWatermarkV1 | null;
}
export interface KeyBatchStageResultV1 {
  key_stream_id: Bytes32;
  batch_digest: Bytes32;
  total_chunks: number; // u32
  accepted_chunks: number; // u32
}
export interface LanePageV1 {
  lanes: LaneRecordV1[];
  next_after_lane_id: Bytes32 | null;
}
export interface SubscriptionStateV1 {
  stream_id: Bytes32;
  subscription_id: Bytes32;
}
/** The `(LaneRecordV1, AppendReceiptV1)` payload of the CreateLane and CloseLane responses. */
export interface LaneMutationResultV1 {
  lane: LaneRecordV1;
  receipt: AppendReceiptV1;
}
/** §13.2: 18 variants whose u16 tags are the §7.1 method tags. */
export type CbqsResponseBodyV1 =
  | { type: "Append"; body: AppendResultV1 }
  | { type: "BeginKeyBatch"; body: KeyBatchStageResultV1 }
  | { type: "PutKeyBatchChunk"; body: KeyBatchStageResultV1 }
  | { type: "CommitKeyBatch"; body: KeyBatchReceiptV1 }
  | ({ type: "CreateLane" } & LaneMutationResultV1)
  | ({ type: "CloseLane" } & LaneMutationResultV1)
  | { type: "ListLanes"; body: LanePageV1 }
  | { type: "CreateGroup"; body: GroupStateUpdateV1 }
  | { type: "UpdateGroup"; body: GroupStateUpdateV1 }
  | { type: "DeleteGroup"; body: GroupStateUpdateV1 }
  | { type: "OpenSubscription"; body: SubscriptionStateV1 }
  | { type: "CloseSubscription"; body: SubscriptionStateV1 }
  | { type: "Credit"; body: CreditV1 }
  | { type: "Ack"; body: DeliveryStateUpdateV1 }
  | { type: "Nack"; body: DeliveryStateUpdateV1 }
  | { type: "Extend"; body: DeliveryStateUpdateV1 }
  | { type: "Reject"; body: DeliveryStateUpdateV1 }
  | { type: "Redrive"; body: DeliveryStateUpdateV1 };
export interface CbqsResponseV1 {
  request_id: Bytes32;
  body: CbqsResponseBodyV1;
}
export interface DeliveryLeaseV1 {
  reference: DeliveryLeaseRefV1;
  attempt: number; // u16
  holder_signing_key_id: Bytes32;
  group_queue_sequence: bigint; // u64
  issued_at_ms: bigint; // u64
  expires_at_ms: bigint; // u64
}
export interface RecordDeliveryV1 {
  subscription_id: Bytes32;
  record_id: RecordIdV1;
  header: RecordHeaderV1;
  payload: Uint8Array;
  append_receipt: AppendReceiptV1 | null;
  lease: DeliveryLeaseV1 | null;
  delivery_state_receipt: DeliveryStateReceiptV1 | null;
  durable_watermark: FastDurableWatermarkV1 | null;
}
export interface LanePayloadV1 {
  lane_sub_root: Bytes32;
  lane_record_count: number; // u32
  lane_first_sequence: bigint; // u64
  lane_last_sequence: bigint; // u64
}
export interface LaneProofV1 {
  lane_id: Bytes32;
  payload: LanePayloadV1 | null;
  bitmap: Bytes32;
  siblings: Bytes32[];
}
export interface CheckpointFrameV1 {
  subscription_id: Bytes32;
  receipt: CheckpointReceiptV1;
  lanes: LaneProofV1[];
}
export interface CbqsErrorV1 {
  request_id: Bytes32 | null;
  subscription_id: Bytes32 | null;
  code: number; // u16; unknown codes are kept
  message: string; // UTF-8, at most 2,048 bytes
  details: Uint8Array; // at most 16,384 bytes
}
export type CbqsServerFrameV1 =
  | { type: "SessionChallenge"; body: SessionChallengeV1 }
  | { type: "SessionOpened"; body: SessionOpenedV1 }
  | { type: "Response"; body: CbqsResponseV1 }
  | { type: "Delivery"; body: RecordDeliveryV1 }
  | { type: "Checkpoint"; body: CheckpointFrameV1 }
  | { type: "BrokerEpochTransition"; body: BrokerEpochTransitionV1 }
  | { type: "Error"; body: CbqsErrorV1 }
  | { type: "DeliveryState"; body: DeliveryStateUpdateV1 }
  | { type: "GroupState"; body: GroupStateUpdateV1 };
export interface CbqsServerFrameBatchV1 {
  frames: CbqsServerFrameV1[];
}

// §15 snapshot manifest
export type SnapshotScopeV1 = { type: "Stream" } | { type: "Lane"; lane_id: Bytes32 }; // 1, 2 (§14 table)
export type SnapshotCoverageV1 = // 1, 2 (§14 table)
  | ({ type: "StandardRecordId" } & StandardRecordIdV1)
  | { type: "CheckpointReceiptDigest"; digest: Bytes32 };
export interface CbqsSnapshotManifestV1 {
  context: CbqsSigningContextV1;
  stream_id: Bytes32;
  scope: SnapshotScopeV1;
  snapshot_hash: Bytes32;
  cbfs_reference: Uint8Array;
  covered_through: SnapshotCoverageV1;
  encryption_generation: bigint; // u64
  provider_anchor: Bytes32;
  application_signature: Signature;
}
