// Hand-built valid values shared by the codec tests.
import type * as T from "../../src/codec/types.js";
import { genesisBaseRateSchedule } from "../../src/codec/index.js";

export const fill = (n: number, byte: number): Uint8Array => new Uint8Array(n).fill(byte);
export const hex = (b: Uint8Array): string => Buffer.from(b).toString("hex");
export const be = (v: bigint | number, width: number): string => BigInt(v).toString(16).padStart(width * 2, "0");

export const context: T.CbqsSigningContextV1 = { version: 1, chain_id: 7n, chain_instance_id: fill(32, 0xc1) };
export const edKey = (b: number): T.SigningPublicKey => ({ algorithm: "Ed25519", key: fill(32, b) });
export const hpkeKey = (b: number): T.HpkePublicKey => ({ suite: "X25519_HKDF_SHA256_CHACHA20POLY1305", key: fill(32, b) });

export const config: T.StreamConfigV1 = {
  retention_ms: 604_800_000n,
  retained_bytes_limit: 1_073_741_824n,
  max_message_bytes: 262_144,
  max_append_bytes_per_sec: 1_048_576n,
  max_delivered_bytes_per_sec: 1_048_576n,
  max_lanes: 16,
  idempotency_horizon_ms: 86_400_000n,
  default_visibility_ms: 30_000n,
  max_visibility_ms: 900_000n,
  default_max_attempts: 10,
  fast_batch_max_ms: 0,
  fast_batch_max_records: 0,
};

export const streamRecord: T.StreamRecordV1 = {
  version: 1,
  chain_instance_id: fill(32, 0xc1),
  stream_id: fill(32, 0x51),
  purpose: "Main",
  owner: fill(20, 0x11),
  owner_nonce: 3n,
  admin_key: edKey(0xa1),
  rotation_key: null,
  delivery_class: "Standard",
  encrypted: false,
  linked_stream_id: null,
  provider: fill(20, 0x22),
  provider_epoch: 0n,
  provider_signing_key: edKey(0xb1),
  authorization_generation: 1n,
  encryption_generation: 0n,
  pricing_generation: 1n,
  status: "Active",
  config,
  pricing_basis: { type: "GovernanceBase", schedule_version: 1n, schedule_digest: fill(32, 0xd1) },
  rate_per_block: 80_000n,
  escrow_balance: 1_000_000n,
  last_settled_block: 5n,
  suspended_at_block: null,
  suspension_grace_deadline_block: null,
  created_at_block: 5n,
};

export const admission: T.BaseRateAdmissionV1 = {
  accepts_new: true,
  max_active_streams: 100n,
  max_total_retained_bytes: 1n << 40n,
  max_total_append_bytes_per_sec: 1n << 30n,
  max_total_delivered_bytes_per_sec: 1n << 30n,
};

export const endpoint = (uri: string, transport: T.ProviderEndpointTransportV1 = "Https"): T.ProviderEndpointV1 => ({
  transport,
  uri,
});

export const providerRecord: T.ProviderRecordV1 = {
  version: 1,
  chain_instance_id: fill(32, 0xc1),
  provider: fill(20, 0x22),
  signing_key: edKey(0xb1),
  endpoints: [endpoint("wss://cbqs.example/stream", "WebSocketTls"), endpoint("https://provider.example")],
  quote_key: edKey(0xb2),
  base_rate_admission: admission,
  base_rate_reserved: { reserved_streams: 0n, retained_bytes: 0n, append_bytes_per_sec: 0n, delivered_bytes_per_sec: 0n },
  live_assigned_streams: 0n,
  status: "Active",
  metadata_hash: fill(32, 0xee),
  registered_block: 1n,
};

export const receipt: T.KeyBatchReceiptV1 = {
  context,
  served_at: { chain_instance_id: fill(32, 0xc1), height: 9n, block_hash: fill(32, 0x99) },
  key_stream_id: fill(32, 0x52),
  main_stream_id: fill(32, 0x51),
  provider_epoch: 0n,
  encryption_generation: 2n,
  batch_digest: fill(32, 0xbd),
  envelope_count: 3,
  envelope_root: fill(32, 0xe0),
  first_sequence: 10n,
  last_sequence: 13n,
  previous_global_receipt: fill(32, 0x0a),
  final_append_receipt: fill(32, 0x0f),
  signature: fill(64, 0x5a),
};

export const quote: T.PriceQuoteV1 = {
  context,
  provider: fill(20, 0x22),
  owner: fill(20, 0x11),
  stream_id: fill(32, 0x51),
  pricing_generation: 1n,
  delivery_class: "Fast",
  retained_bytes: 1_073_741_824n,
  append_bytes_sec: 1_048_576n,
  delivered_bytes_sec: 1_048_576n,
  rate_per_block: 90_000n,
  valid_until_block: 100n,
  signing_key_id: fill(32, 0x1d),
  signature: fill(64, 0x5b),
};

export const grant: T.StreamGrantV1 = {
  context,
  stream_id: fill(32, 0x51),
  authorization_generation: 1n,
  grant_nonce: fill(32, 0x6e),
  holder_signing_key: edKey(0xc2),
  holder_hpke_key: hpkeKey(0xc3),
  verbs: 0b0000011,
  lane_scope: { type: "Set", lane_ids: [fill(32, 0x01), fill(32, 0x02)] },
  group_scope: { type: "Any" },
  not_before_ms: 1_000n,
  expires_at_ms: 2_000n,
  max_message_bytes: 1024,
  max_append_bytes_per_sec: 4096n,
  max_in_flight: 8,
  max_lane_creates_per_min: 4,
  signature: fill(64, 0x5c),
};

export const batch: T.KeyRotationBatchV1 = {
  context,
  stream_id: fill(32, 0x52),
  encryption_generation: 2n,
  previous_batch_digest: fill(32, 0x0b),
  sorted_envelope_digests: [fill(32, 0x31), fill(32, 0x32)],
  membership_set_digest: fill(32, 0x3d),
  created_at_ms: 123_456n,
  signature: fill(64, 0x5d),
};

export const schedule = genesisBaseRateSchedule();
