// The consensus-side CBQS types of CIP-39, field for field and in declaration order.
// Field names are the spec's snake_case names so that the in-memory value, the
// canonical bytes (§14) and the JSON form (docs/reference/formats/scenario.md) line up 1:1.
// u8/u16/u32 are `number`; u64/u128 are `bigint`; fixed and variable byte strings are
// `Uint8Array` of the exact length.

export type Address = Uint8Array; // 20 bytes
export type Bytes32 = Uint8Array; // 32 bytes
export type Signature = Uint8Array; // 64 bytes, raw (D-0027)

// §4: algorithm-tagged keys
export interface SigningPublicKey {
  algorithm: "Ed25519"; // tag 1, 32-byte key
  key: Uint8Array;
}
export interface HpkePublicKey {
  suite: "X25519_HKDF_SHA256_CHACHA20POLY1305"; // tag 1, 32-byte key
  key: Uint8Array;
}

// §4
export interface CbqsSigningContextV1 {
  version: number; // u8, always 1
  chain_id: bigint; // u64
  chain_instance_id: Bytes32;
}
export interface FinalizedViewV1 {
  chain_instance_id: Bytes32;
  height: bigint; // u64
  block_hash: Bytes32;
}

export type DeliveryClass = "Standard" | "Fast"; // 1, 2 (§14 table)
export type StreamPurpose = "Main" | "Key"; // 1, 2 (decision)
export type StreamStatus = "Active" | "Suspended" | "Closed" | "DataExpired"; // 1..4 (decision)
export type ProviderStatus = "Active" | "Draining" | "Deregistered"; // 1..3 (§4.3)
export type ProviderEndpointTransportV1 = "WebSocketTls" | "Https"; // 1, 2 (§4.3)

// §4.3
export interface BaseRateAdmissionV1 {
  accepts_new: boolean;
  max_active_streams: bigint; // u64
  max_total_retained_bytes: bigint; // u128
  max_total_append_bytes_per_sec: bigint; // u128
  max_total_delivered_bytes_per_sec: bigint; // u128
}
export interface BaseRateReservationTotalsV1 {
  reserved_streams: bigint; // u64
  retained_bytes: bigint; // u128
  append_bytes_per_sec: bigint; // u128
  delivered_bytes_per_sec: bigint; // u128
}
export interface ProviderEndpointV1 {
  transport: ProviderEndpointTransportV1;
  uri: string; // UTF-8, at most 2,048 bytes
}
export interface ProviderRecordV1 {
  version: number; // u8, 1
  chain_instance_id: Bytes32;
  provider: Address;
  signing_key: SigningPublicKey;
  endpoints: ProviderEndpointV1[];
  quote_key: SigningPublicKey;
  base_rate_admission: BaseRateAdmissionV1;
  base_rate_reserved: BaseRateReservationTotalsV1;
  live_assigned_streams: bigint; // u64
  status: ProviderStatus;
  metadata_hash: Bytes32;
  registered_block: bigint; // u64
}

// §4.2
export interface StreamConfigV1 {
  retention_ms: bigint; // u64
  retained_bytes_limit: bigint; // u64
  max_message_bytes: number; // u32
  max_append_bytes_per_sec: bigint; // u64
  max_delivered_bytes_per_sec: bigint; // u64
  max_lanes: number; // u32
  idempotency_horizon_ms: bigint; // u64, Standard only
  default_visibility_ms: bigint; // u64, Standard only
  max_visibility_ms: bigint; // u64, Standard only
  default_max_attempts: number; // u16, Standard only
  fast_batch_max_ms: number; // u32, Fast only
  fast_batch_max_records: number; // u32, Fast only
}

// §4.1
export type PricingBasisV1 =
  | { type: "ProviderQuote"; quote_digest: Bytes32 } // tag 1
  | { type: "GovernanceBase"; schedule_version: bigint; schedule_digest: Bytes32 }; // tag 2

export interface StreamRecordV1 {
  version: number; // u8, 1
  chain_instance_id: Bytes32;
  stream_id: Bytes32;
  purpose: StreamPurpose;
  owner: Address;
  owner_nonce: bigint; // u64
  admin_key: SigningPublicKey;
  rotation_key: SigningPublicKey | null;
  delivery_class: DeliveryClass;
  encrypted: boolean;
  linked_stream_id: Bytes32 | null;
  provider: Address;
  provider_epoch: bigint; // u64, always 0 in v1
  provider_signing_key: SigningPublicKey;
  authorization_generation: bigint; // u64
  encryption_generation: bigint; // u64
  pricing_generation: bigint; // u64
  status: StreamStatus;
  config: StreamConfigV1;
  pricing_basis: PricingBasisV1;
  rate_per_block: bigint; // u128
  escrow_balance: bigint; // u128
  last_settled_block: bigint; // u64
  suspended_at_block: bigint | null; // u64
  suspension_grace_deadline_block: bigint | null; // u64
  created_at_block: bigint; // u64
}

// §4.4
export interface PriceQuoteV1 {
  context: CbqsSigningContextV1;
  provider: Address;
  owner: Address;
  stream_id: Bytes32;
  pricing_generation: bigint; // u64
  delivery_class: DeliveryClass;
  retained_bytes: bigint; // u64
  append_bytes_sec: bigint; // u64
  delivered_bytes_sec: bigint; // u64
  rate_per_block: bigint; // u128
  valid_until_block: bigint; // u64
  signing_key_id: Bytes32;
  signature: Signature;
}

// §4.5
export interface BaseRateClassV1 {
  retained_unit_bytes: bigint; // u64
  retained_unit_rate_per_block: bigint; // u128
  throughput_unit_bytes_per_sec: bigint; // u64
  throughput_unit_rate_per_block: bigint; // u128
  delivered_unit_bytes_per_sec: bigint; // u64
  delivered_unit_rate_per_block: bigint; // u128
}
export interface BaseRateScheduleV1 {
  format_version: number; // u8, 1
  schedule_version: bigint; // u64
  activates_at_block: bigint; // u64
  standard: BaseRateClassV1;
  fast: BaseRateClassV1;
}
export interface BaseRateSchedulesV1 {
  active: BaseRateScheduleV1;
  pending: BaseRateScheduleV1 | null;
}

// §9.3
export interface KeyEnvelopeV1 {
  stream_id: Bytes32;
  encryption_generation: bigint; // u64
  recipient_hpke_key: HpkePublicKey;
  hpke_ciphertext: Uint8Array; // variable
}
export interface KeyRotationBatchV1 {
  context: CbqsSigningContextV1;
  stream_id: Bytes32;
  encryption_generation: bigint; // u64
  previous_batch_digest: Bytes32;
  sorted_envelope_digests: Bytes32[];
  membership_set_digest: Bytes32;
  created_at_ms: bigint; // u64
  signature: Signature;
}
export interface KeyBatchReceiptV1 {
  context: CbqsSigningContextV1;
  served_at: FinalizedViewV1;
  key_stream_id: Bytes32;
  main_stream_id: Bytes32;
  provider_epoch: bigint; // u64, always 0
  encryption_generation: bigint; // u64
  batch_digest: Bytes32;
  envelope_count: number; // u32
  envelope_root: Bytes32;
  first_sequence: bigint; // u64
  last_sequence: bigint; // u64
  previous_global_receipt: Bytes32;
  final_append_receipt: Bytes32;
  signature: Signature;
}

// §7
export type LaneScopeV1 =
  | { type: "Any" } // 1
  | { type: "Exact"; lane_id: Bytes32 } // 2
  | { type: "Set"; lane_ids: Bytes32[] }; // 3
export type GroupScopeV1 = { type: "Any" } | { type: "Exact"; group_id: Bytes32 }; // 1, 2
export interface StreamGrantV1 {
  context: CbqsSigningContextV1;
  stream_id: Bytes32;
  authorization_generation: bigint; // u64
  grant_nonce: Bytes32;
  holder_signing_key: SigningPublicKey;
  holder_hpke_key: HpkePublicKey | null;
  verbs: number; // u16
  lane_scope: LaneScopeV1;
  group_scope: GroupScopeV1;
  not_before_ms: bigint; // u64
  expires_at_ms: bigint; // u64
  max_message_bytes: number; // u32
  max_append_bytes_per_sec: bigint; // u64
  max_in_flight: number; // u32
  max_lane_creates_per_min: number; // u32
  signature: Signature;
}

// §5 instruction arguments
export interface RegisterProviderArgsV1 {
  signing_key: SigningPublicKey;
  endpoints: ProviderEndpointV1[];
  quote_key: SigningPublicKey;
  base_rate_admission: BaseRateAdmissionV1;
  metadata_hash: Bytes32;
}
export interface UpdateProviderArgsV1 {
  endpoints: ProviderEndpointV1[] | null;
  signing_key: SigningPublicKey | null;
  quote_key: SigningPublicKey | null;
  base_rate_admission: BaseRateAdmissionV1 | null;
  metadata_hash: Bytes32 | null;
}
export interface SetProviderStatusArgsV1 {
  status: ProviderStatus;
}
export interface CreateStreamArgsV1 {
  owner_nonce: bigint; // u64
  initial_escrow: bigint; // u128
  admin_key: SigningPublicKey;
  rotation_key: SigningPublicKey | null;
  delivery_class: DeliveryClass;
  encrypted: boolean;
  provider: Address;
  config: StreamConfigV1;
  price_quote: PriceQuoteV1 | null;
}
export type RotationKeyUpdateV1 =
  | { type: "Keep" } // 0
  | { type: "Set"; key: SigningPublicKey } // 1
  | { type: "Clear" }; // 2
export interface UpdateStreamArgsV1 {
  stream_id: Bytes32;
  config: StreamConfigV1 | null;
  admin_key: SigningPublicKey | null;
  rotation_key: RotationKeyUpdateV1;
  price_quote: PriceQuoteV1 | null;
  bump_authorization_generation: boolean;
}
export interface TopUpStreamArgsV1 {
  stream_id: Bytes32;
  amount: bigint; // u128
}
export interface SettleStreamRentArgsV1 {
  stream_id: Bytes32;
}
export interface CloseStreamArgsV1 {
  stream_id: Bytes32;
}
export interface ActivateKeyGenerationArgsV1 {
  receipt: KeyBatchReceiptV1;
  bump_authorization_generation: boolean;
}

// §5: version byte 1, action tag 1..9, then the action's fields.
export type CbqsInstructionV1 =
  | { type: "RegisterProvider"; args: RegisterProviderArgsV1 } // 1
  | { type: "UpdateProvider"; args: UpdateProviderArgsV1 } // 2
  | { type: "SetProviderStatus"; args: SetProviderStatusArgsV1 } // 3
  | { type: "CreateStream"; args: CreateStreamArgsV1 } // 4
  | { type: "UpdateStream"; args: UpdateStreamArgsV1 } // 5
  | { type: "TopUpStream"; args: TopUpStreamArgsV1 } // 6
  | { type: "SettleStreamRent"; args: SettleStreamRentArgsV1 } // 7
  | { type: "CloseStream"; args: CloseStreamArgsV1 } // 8
  | { type: "ActivateKeyGeneration"; args: ActivateKeyGenerationArgsV1 }; // 9

export type InstructionName = CbqsInstructionV1["type"];

// §7.1 proof of possession
export interface SessionProofV1 {
  context: CbqsSigningContextV1;
  stream_id: Bytes32;
  provider_epoch: bigint; // u64, always 0
  grant_id: Bytes32;
  session_id: Bytes32;
  challenge: Bytes32;
  signature: Signature;
}
/** §7.1: canonical u16 registry, tags 1..18 in this order. */
export type CbqsRequestMethodV1 =
  | "Append"
  | "BeginKeyBatch"
  | "PutKeyBatchChunk"
  | "CommitKeyBatch"
  | "CreateLane"
  | "CloseLane"
  | "ListLanes"
  | "CreateGroup"
  | "UpdateGroup"
  | "DeleteGroup"
  | "OpenSubscription"
  | "CloseSubscription"
  | "Credit"
  | "Ack"
  | "Nack"
  | "Extend"
  | "Reject"
  | "Redrive";
export interface RequestProofV1 {
  context: CbqsSigningContextV1;
  session_id: Bytes32;
  counter: bigint; // u64
  method: CbqsRequestMethodV1;
  body_hash: Bytes32;
  signature: Signature;
}

// §10 record model (broker side; shares the codec)
export type RecordOriginV1 = "Client" | "ProviderEvent"; // 1, 2 (§14 table)
export type RecordKindV1 = "Application" | "LaneCreated" | "LaneClosed" | "KeyBatchHeader" | "KeyEnvelope"; // 1..5
export interface StandardRecordIdV1 {
  provider_epoch: bigint; // u64, always 0
  sequence: bigint; // u64
}
export interface FastRecordIdV1 {
  provider_epoch: bigint; // u64, always 0
  broker_epoch: bigint; // u64
  sequence: bigint; // u64
}
/** §14.1 tagged RecordIdV1: Standard = 1, Fast = 2 (§14 table). */
export type RecordIdV1 = ({ type: "Standard" } & StandardRecordIdV1) | ({ type: "Fast" } & FastRecordIdV1);
export interface RecordHeaderV1 {
  stream_id: Bytes32;
  lane_id: Bytes32;
  origin: RecordOriginV1;
  kind: RecordKindV1;
  client_message_id: Bytes32;
  created_at_ms: bigint; // u64
  visible_after_ms: bigint; // u64
  expires_at_ms: bigint; // u64
  encryption_generation: bigint; // u64
  nonce: Uint8Array; // Bytes24
}

// §14.1
export interface AppendReceiptV1 {
  context: CbqsSigningContextV1;
  served_at: FinalizedViewV1;
  stream_id: Bytes32;
  lane_id: Bytes32;
  origin: RecordOriginV1;
  kind: RecordKindV1;
  record_id: RecordIdV1;
  client_message_id: Bytes32;
  header_hash: Bytes32;
  payload_hash: Bytes32;
  visible_after_ms: bigint; // u64
  expires_at_ms: bigint; // u64
  encryption_generation: bigint; // u64
  previous_global_receipt: Bytes32;
  previous_lane_receipt: Bytes32;
  committed_at_ms: bigint; // u64
  signature: Signature;
}

// §12.1
export interface FastLineageV1 {
  provider_epoch: bigint; // u64, always 0
  broker_epoch: bigint; // u64
}
export type BrokerTransitionKindV1 = "Clean" | "Void"; // 1, 2 (§14 table)
export interface BrokerEpochTransitionV1 {
  context: CbqsSigningContextV1;
  served_at: FinalizedViewV1;
  stream_id: Bytes32;
  provider_epoch: bigint; // u64, always 0
  previous_lineage: FastLineageV1 | null;
  replacement_broker_epoch: bigint; // u64
  kind: BrokerTransitionKindV1;
  last_durable_checkpoint: Bytes32;
  last_durable_sequence: bigint | null; // u64
  last_provisional_sequence: bigint | null; // u64
  created_at_ms: bigint; // u64
  signature: Signature;
}

// §12.2
export interface CheckpointReceiptV1 {
  context: CbqsSigningContextV1;
  served_at: FinalizedViewV1;
  stream_id: Bytes32;
  provider_epoch: bigint; // u64, always 0
  broker_epoch: bigint; // u64
  first_sequence: bigint; // u64
  last_sequence: bigint; // u64
  ordered_range_root: Bytes32;
  previous_checkpoint: Bytes32;
  durable_high_water: bigint; // u64
  committed_at_ms: bigint; // u64
  signature: Signature;
}

// §14.2
export type DeliveryStateActionV1 =
  | "Ack"
  | "Nack"
  | "Extend"
  | "Reject"
  | "Redrive"
  | "GroupCreate"
  | "GroupUpdate"
  | "GroupDelete"
  | "LeaseIssue"
  | "LeaseExpire"
  | "AttemptsExhaust"
  | "RecordExpire"; // 1..12 (§14 table)
export interface DeliveryStateReceiptV1 {
  context: CbqsSigningContextV1;
  served_at: FinalizedViewV1;
  stream_id: Bytes32;
  lane_id: Bytes32;
  group_id: Bytes32;
  provider_epoch: bigint; // u64, always 0
  action: DeliveryStateActionV1;
  record_id: StandardRecordIdV1 | null;
  lease_id: Bytes32 | null;
  resulting_state_digest: Bytes32;
  previous_group_receipt: Bytes32;
  committed_at_ms: bigint; // u64
  signature: Signature;
}

// §15 retention anchors
export interface StandardRetentionAnchorV1 {
  context: CbqsSigningContextV1;
  served_at: FinalizedViewV1;
  stream_id: Bytes32;
  provider_epoch: bigint; // u64, always 0
  lane_id: Bytes32 | null;
  first_retained_sequence: bigint; // u64
  previous_global_receipt: Bytes32;
  previous_lane_receipt: Bytes32 | null;
  committed_at_ms: bigint; // u64
  signature: Signature;
}
export interface GroupRetentionAnchorV1 {
  context: CbqsSigningContextV1;
  served_at: FinalizedViewV1;
  stream_id: Bytes32;
  provider_epoch: bigint; // u64, always 0
  lane_id: Bytes32;
  group_id: Bytes32;
  latest_retained_receipt: Bytes32;
  group_queue_sequence: bigint; // u64
  committed_at_ms: bigint; // u64
  signature: Signature;
}
export interface FastRetentionAnchorV1 {
  context: CbqsSigningContextV1;
  served_at: FinalizedViewV1;
  stream_id: Bytes32;
  provider_epoch: bigint; // u64, always 0
  broker_epoch: bigint; // u64
  first_retained_sequence: bigint; // u64
  previous_checkpoint: Bytes32;
  committed_at_ms: bigint; // u64
  signature: Signature;
}
