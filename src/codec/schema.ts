// Every consensus-side CIP-39 type, declared once in the spec's field order (§14: struct
// fields appear in the order listed). Each declaration is the encoder, the strict decoder,
// the JSON mapping and the fast-check arbitrary of that type.
import { ed25519PublicKeyFromSeed } from "../crypto/ed25519.js";
import { compareBytes, toHex } from "../bytes.js";
import {
  bool,
  enumeration,
  fixedBytes,
  joinPath,
  option,
  providerEpochV1,
  struct,
  taggedUnion,
  u128,
  u16,
  u32,
  u64,
  utf8String,
  varBytes,
  vec,
  versionV1,
  type Codec,
  type FastCheck,
  type Json,
} from "./core.js";
import { EncodeError, JsonValueError } from "./errors.js";
import type * as T from "./types.js";

// ---------------------------------------------------------------- bounds (docs/reference/codec.md table)

/** §18 Maximum of cbqs.max_provider_endpoints (the LIVE bound is checked at admission, §4.3). */
export const MAX_PROVIDER_ENDPOINTS = 8;
/** §4.3 / §18 cbqs.max_provider_endpoint_uri_bytes Maximum. */
export const MAX_ENDPOINT_URI_BYTES = 2_048;
/** §18 Maximum of cbqs.max_lane_ids_per_grant. */
export const MAX_LANE_IDS_PER_GRANT = 16_384;
/** §18 Maximum of cbqs.max_key_envelopes_per_batch. */
export const MAX_KEY_ENVELOPES_PER_BATCH = 65_536;
/** §9.3: the 32-byte encapsulated key plus the AEAD output of the 32-byte data key (32 + 16). */
export const MIN_HPKE_CIPHERTEXT_BYTES = 80;
/** §18 cbqs.max_key_batch_chunk_bytes: an envelope must fit one key-batch chunk (D-0030). */
export const MAX_HPKE_CIPHERTEXT_BYTES = 4_194_304;
/** §7: verb bits 0..6; unknown bits MUST be rejected. */
export const KNOWN_VERB_BITS = 0x7f;

// ---------------------------------------------------------------- fixed byte strings

export const Address = fixedBytes(20, "Address");
export const Bytes32 = fixedBytes(32, "Bytes32");
/**
 * A stream id: a Bytes32 whose JSON input may also be a stream reference the caller's
 * resolveBytes32 hook understands (a scenario's {"owner", "owner_nonce"}). Only stream-id fields
 * take references, so a reference pasted into another Bytes32 field is refused.
 */
export const StreamId = fixedBytes(32, "Bytes32", { resolvable: true });
/** Signature: raw 64 bytes (Ed25519 is the only v1 algorithm; D-0027). */
export const Signature = fixedBytes(64, "Signature");

const isZero = (b: Uint8Array): boolean => b.every((x) => x === 0);

// ---------------------------------------------------------------- algorithm-tagged keys (§4, §9.1)

const ED25519_TAG = 1;
const HPKE_X25519_SUITE_TAG = 1;

function jsonKeyObject(json: unknown, path: string, allowed: string[]): [string, string] {
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    throw new JsonValueError(path, `expected {${allowed.map((k) => `"${k}": "0x…"`).join(" | ")}}`);
  }
  const keys = Object.keys(json);
  const k = keys[0];
  if (keys.length !== 1 || k === undefined || !allowed.includes(k)) {
    throw new JsonValueError(path, `expected exactly one of ${allowed.map((a) => `"${a}"`).join(", ")}`);
  }
  const v = (json as Record<string, unknown>)[k];
  if (typeof v !== "string") throw new JsonValueError(`${path}.${k}`, "expected a 0x-hex string");
  return [k, v];
}

const Key32 = fixedBytes(32, "key");

/**
 * §9.1 SigningPublicKey: tag byte (Ed25519 = 1) || 32-byte key. A v1 decoder rejects every
 * other tag (§4). JSON {"ed25519": "0x…"}; input also {"ed25519_seed": "0x…"} (RFC 8032).
 */
export const SigningPublicKey: Codec<T.SigningPublicKey> = {
  name: "SigningPublicKey",
  minSize: 33,
  write(w, v, path) {
    if (v?.algorithm !== "Ed25519") throw new EncodeError(path, "only Ed25519 signing keys exist in v1 (§4)");
    w.byte(ED25519_TAG);
    Key32.write(w, v.key, joinPath(w, path, "key"));
  },
  read(r, path) {
    const at = r.pos;
    const tag = r.byte(path);
    if (tag !== ED25519_TAG) r.fail("InvalidTag", path, `signing algorithm tag ${tag} is not Ed25519 (1) (§4)`, at);
    return { algorithm: "Ed25519", key: r.take(32, path) };
  },
  toJson: (v) => ({ ed25519: toHex(v.key) }),
  fromJson(json, path, ctx) {
    const [k, hex] = jsonKeyObject(json, path, ["ed25519", "ed25519_seed"]);
    const bytes = Key32.fromJson(hex, `${path}.${k}`, ctx);
    return { algorithm: "Ed25519", key: k === "ed25519" ? bytes : ed25519PublicKeyFromSeed(bytes) };
  },
  arbitrary: (fc) => Key32.arbitrary(fc).map((key) => ({ algorithm: "Ed25519" as const, key })),
  jsonSchema: () => ({
    oneOf: ["ed25519", "ed25519_seed"].map((k) => ({
      type: "object",
      properties: { [k]: { type: "string", pattern: "^0x[0-9a-fA-F]{64}$" } },
      required: [k],
      additionalProperties: false,
    })),
    description: 'SigningPublicKey: {"ed25519": public key} or {"ed25519_seed": RFC 8032 seed}',
  }),
};

/** §4/§9.3 HpkePublicKey: suite tag (X25519_HKDF_SHA256_CHACHA20POLY1305 = 1) || 32 bytes. JSON {"x25519": "0x…"}. */
export const HpkePublicKey: Codec<T.HpkePublicKey> = {
  name: "HpkePublicKey",
  minSize: 33,
  write(w, v, path) {
    if (v?.suite !== "X25519_HKDF_SHA256_CHACHA20POLY1305") throw new EncodeError(path, "unknown HPKE suite");
    w.byte(HPKE_X25519_SUITE_TAG);
    Key32.write(w, v.key, joinPath(w, path, "key"));
  },
  read(r, path) {
    const at = r.pos;
    const tag = r.byte(path);
    if (tag !== HPKE_X25519_SUITE_TAG) r.fail("InvalidTag", path, `unknown HPKE suite tag ${tag}`, at);
    return { suite: "X25519_HKDF_SHA256_CHACHA20POLY1305", key: r.take(32, path) };
  },
  toJson: (v) => ({ x25519: toHex(v.key) }),
  fromJson(json, path, ctx) {
    const [k, hex] = jsonKeyObject(json, path, ["x25519"]);
    return { suite: "X25519_HKDF_SHA256_CHACHA20POLY1305", key: Key32.fromJson(hex, `${path}.${k}`, ctx) };
  },
  arbitrary: (fc) =>
    Key32.arbitrary(fc).map((key) => ({ suite: "X25519_HKDF_SHA256_CHACHA20POLY1305" as const, key })),
  jsonSchema: () => ({
    type: "object",
    properties: { x25519: { type: "string", pattern: "^0x[0-9a-fA-F]{64}$" } },
    required: ["x25519"],
    additionalProperties: false,
    description: 'HpkePublicKey: {"x25519": key}',
  }),
};

// ---------------------------------------------------------------- enums (§14 tags)

export const DeliveryClass = enumeration<T.DeliveryClass>("DeliveryClass", { Standard: 1, Fast: 2 });
export const StreamPurpose = enumeration<T.StreamPurpose>("StreamPurpose", { Main: 1, Key: 2 });
export const StreamStatus = enumeration<T.StreamStatus>("StreamStatus", {
  Active: 1,
  Suspended: 2,
  Closed: 3,
  DataExpired: 4,
});
export const ProviderStatus = enumeration<T.ProviderStatus>("ProviderStatus", {
  Active: 1,
  Draining: 2,
  Deregistered: 3,
});
export const ProviderEndpointTransportV1 = enumeration<T.ProviderEndpointTransportV1>("ProviderEndpointTransportV1", {
  WebSocketTls: 1,
  Https: 2,
});
/** §7.1: a canonical u16 registry. */
export const CbqsRequestMethodV1 = enumeration<T.CbqsRequestMethodV1>(
  "CbqsRequestMethodV1",
  {
    Append: 1,
    BeginKeyBatch: 2,
    PutKeyBatchChunk: 3,
    CommitKeyBatch: 4,
    CreateLane: 5,
    CloseLane: 6,
    ListLanes: 7,
    CreateGroup: 8,
    UpdateGroup: 9,
    DeleteGroup: 10,
    OpenSubscription: 11,
    CloseSubscription: 12,
    Credit: 13,
    Ack: 14,
    Nack: 15,
    Extend: 16,
    Reject: 17,
    Redrive: 18,
  },
  2,
);

// ---------------------------------------------------------------- §4 context and view

export const CbqsSigningContextV1 = struct<T.CbqsSigningContextV1>("CbqsSigningContextV1", {
  version: versionV1,
  chain_id: u64,
  chain_instance_id: Bytes32,
});

export const FinalizedViewV1 = struct<T.FinalizedViewV1>("FinalizedViewV1", {
  chain_instance_id: Bytes32,
  height: u64,
  block_hash: Bytes32,
});

// ---------------------------------------------------------------- §4.3 provider

export const BaseRateAdmissionV1 = struct<T.BaseRateAdmissionV1>("BaseRateAdmissionV1", {
  accepts_new: bool,
  max_active_streams: u64,
  max_total_retained_bytes: u128,
  max_total_append_bytes_per_sec: u128,
  max_total_delivered_bytes_per_sec: u128,
});

export const BaseRateReservationTotalsV1 = struct<T.BaseRateReservationTotalsV1>("BaseRateReservationTotalsV1", {
  reserved_streams: u64,
  retained_bytes: u128,
  append_bytes_per_sec: u128,
  delivered_bytes_per_sec: u128,
});

const SCHEME_PREFIX: Readonly<Record<T.ProviderEndpointTransportV1, string>> = {
  WebSocketTls: "wss://",
  Https: "https://",
};

/** ASCII-only lowercase, so no Unicode case mapping can forge a scheme prefix. */
function asciiLower(s: string): string {
  return s.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32));
}

/** §4.3: no ASCII control (0x00–0x1f, 0x7f) or whitespace (0x20 and 0x09–0x0d) bytes. */
function uriRawProblem(raw: Uint8Array): string | null {
  if (raw.length === 0) return "uri must be nonempty (§4.3)";
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i]!;
    if (b <= 0x20 || b === 0x7f) return `uri byte ${i} (0x${b.toString(16).padStart(2, "0")}) is an ASCII control or whitespace byte (§4.3)`;
  }
  return null;
}

const URI_CHARS: readonly string[] = [..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~:/?#[]@!$&'()*+,;=%", "é", "€", "😀"];

const EndpointUri = utf8String("uri", {
  maxBytes: MAX_ENDPOINT_URI_BYTES,
  checkRaw: uriRawProblem,
  // Scheme-less tails; ProviderEndpointV1's arbitrary prepends the transport's scheme.
  arbitrary: (fc) => fc.string({ unit: fc.constantFrom(...URI_CHARS), minLength: 1, maxLength: 40 }),
});

export const ProviderEndpointV1 = struct<T.ProviderEndpointV1>(
  "ProviderEndpointV1",
  { transport: ProviderEndpointTransportV1, uri: EndpointUri },
  {
    // §4.3: the scheme matches the transport (ASCII-case-insensitively, as admission rule 2 compares).
    check: (e) => {
      const prefix = SCHEME_PREFIX[e.transport];
      return asciiLower(e.uri.slice(0, prefix.length)) === prefix
        ? null
        : { field: "uri", reason: `uri scheme must be ${prefix} for transport ${e.transport} (§4.3)` };
    },
    arbitrary: (fc, base) =>
      base.chain((e) =>
        fc
          .constantFrom(SCHEME_PREFIX[e.transport], SCHEME_PREFIX[e.transport].toUpperCase())
          .map((scheme) => ({ transport: e.transport, uri: scheme + e.uri })),
      ),
  },
);

const Endpoints = vec(ProviderEndpointV1, { maxCount: MAX_PROVIDER_ENDPOINTS });

export const ProviderRecordV1 = struct<T.ProviderRecordV1>("ProviderRecordV1", {
  version: versionV1,
  chain_instance_id: Bytes32,
  provider: Address,
  signing_key: SigningPublicKey,
  endpoints: Endpoints,
  quote_key: SigningPublicKey,
  base_rate_admission: BaseRateAdmissionV1,
  base_rate_reserved: BaseRateReservationTotalsV1,
  live_assigned_streams: u64,
  status: ProviderStatus,
  metadata_hash: Bytes32,
  registered_block: u64,
});

// ---------------------------------------------------------------- §4.1, §4.2 streams

export const StreamConfigV1 = struct<T.StreamConfigV1>("StreamConfigV1", {
  retention_ms: u64,
  retained_bytes_limit: u64,
  max_message_bytes: u32,
  max_append_bytes_per_sec: u64,
  max_delivered_bytes_per_sec: u64,
  max_lanes: u32,
  idempotency_horizon_ms: u64,
  default_visibility_ms: u64,
  max_visibility_ms: u64,
  default_max_attempts: u16,
  fast_batch_max_ms: u32,
  fast_batch_max_records: u32,
});

export const PricingBasisV1 = taggedUnion<T.PricingBasisV1>("PricingBasisV1", {
  ProviderQuote: {
    tag: 1,
    kind: "struct",
    codec: struct<{ quote_digest: Uint8Array }>("ProviderQuote", { quote_digest: Bytes32 }),
  },
  GovernanceBase: {
    tag: 2,
    kind: "struct",
    codec: struct<{ schedule_version: bigint; schedule_digest: Uint8Array }>("GovernanceBase", {
      schedule_version: u64,
      schedule_digest: Bytes32,
    }),
  },
});

export const StreamRecordV1 = struct<T.StreamRecordV1>("StreamRecordV1", {
  version: versionV1,
  chain_instance_id: Bytes32,
  stream_id: StreamId,
  purpose: StreamPurpose,
  owner: Address,
  owner_nonce: u64,
  admin_key: SigningPublicKey,
  rotation_key: option(SigningPublicKey),
  delivery_class: DeliveryClass,
  encrypted: bool,
  linked_stream_id: option(StreamId),
  provider: Address,
  provider_epoch: providerEpochV1,
  provider_signing_key: SigningPublicKey,
  authorization_generation: u64,
  encryption_generation: u64,
  pricing_generation: u64,
  status: StreamStatus,
  config: StreamConfigV1,
  pricing_basis: PricingBasisV1,
  rate_per_block: u128,
  escrow_balance: u128,
  last_settled_block: u64,
  suspended_at_block: option(u64),
  suspension_grace_deadline_block: option(u64),
  created_at_block: u64,
});

// ---------------------------------------------------------------- §4.4 quote

export const PriceQuoteV1 = struct<T.PriceQuoteV1>("PriceQuoteV1", {
  context: CbqsSigningContextV1,
  provider: Address,
  owner: Address,
  stream_id: StreamId,
  pricing_generation: u64,
  delivery_class: DeliveryClass,
  retained_bytes: u64,
  append_bytes_sec: u64,
  delivered_bytes_sec: u64,
  rate_per_block: u128,
  valid_until_block: u64,
  signing_key_id: Bytes32,
  signature: Signature,
});

// ---------------------------------------------------------------- §4.5 schedule

export const BaseRateClassV1 = struct<T.BaseRateClassV1>("BaseRateClassV1", {
  retained_unit_bytes: u64,
  retained_unit_rate_per_block: u128,
  throughput_unit_bytes_per_sec: u64,
  throughput_unit_rate_per_block: u128,
  delivered_unit_bytes_per_sec: u64,
  delivered_unit_rate_per_block: u128,
});

export const BaseRateScheduleV1 = struct<T.BaseRateScheduleV1>("BaseRateScheduleV1", {
  format_version: versionV1,
  schedule_version: u64,
  activates_at_block: u64,
  standard: BaseRateClassV1,
  fast: BaseRateClassV1,
});

export const BaseRateSchedulesV1 = struct<T.BaseRateSchedulesV1>("BaseRateSchedulesV1", {
  active: BaseRateScheduleV1,
  pending: option(BaseRateScheduleV1),
});

// ---------------------------------------------------------------- §9.3 key rotation

export const KeyEnvelopeV1 = struct<T.KeyEnvelopeV1>("KeyEnvelopeV1", {
  stream_id: StreamId,
  encryption_generation: u64,
  recipient_hpke_key: HpkePublicKey,
  hpke_ciphertext: varBytes("hpke_ciphertext", MIN_HPKE_CIPHERTEXT_BYTES, MAX_HPKE_CIPHERTEXT_BYTES),
});

export const KeyRotationBatchV1 = struct<T.KeyRotationBatchV1>("KeyRotationBatchV1", {
  context: CbqsSigningContextV1,
  stream_id: StreamId,
  encryption_generation: u64,
  previous_batch_digest: Bytes32,
  sorted_envelope_digests: vec(Bytes32, { maxCount: MAX_KEY_ENVELOPES_PER_BATCH }),
  membership_set_digest: Bytes32,
  created_at_ms: u64,
  signature: Signature,
});

const U64_MAX = (1n << 64n) - 1n;

export const KeyBatchReceiptV1 = struct<T.KeyBatchReceiptV1>(
  "KeyBatchReceiptV1",
  {
    context: CbqsSigningContextV1,
    served_at: FinalizedViewV1,
    key_stream_id: StreamId,
    main_stream_id: StreamId,
    provider_epoch: providerEpochV1,
    encryption_generation: u64,
    batch_digest: Bytes32,
    envelope_count: u32,
    envelope_root: Bytes32,
    first_sequence: u64,
    last_sequence: u64,
    previous_global_receipt: Bytes32,
    final_append_receipt: Bytes32,
    signature: Signature,
  },
  {
    // §9.3: a structurally impossible receipt is a decode error.
    check: (v) => {
      if (v.envelope_count === 0) return { field: "envelope_count", reason: "envelope_count must be nonzero (§9.3)" };
      if (v.envelope_count > MAX_KEY_ENVELOPES_PER_BATCH) {
        return { field: "envelope_count", reason: `envelope_count exceeds ${MAX_KEY_ENVELOPES_PER_BATCH} (§9.3, §18)` };
      }
      if (isZero(v.batch_digest)) return { field: "batch_digest", reason: "batch_digest must be nonzero (§9.3)" };
      if (isZero(v.envelope_root)) return { field: "envelope_root", reason: "envelope_root must be nonzero (§9.3)" };
      // Checked: first_sequence + envelope_count must itself be a u64 and equal last_sequence.
      const expected = v.first_sequence + BigInt(v.envelope_count);
      if (expected > U64_MAX) return { field: "first_sequence", reason: "first_sequence + envelope_count overflows u64 (§9.3)" };
      if (v.last_sequence !== expected) {
        return { field: "last_sequence", reason: "last_sequence must equal first_sequence + envelope_count (§9.3)" };
      }
      return null;
    },
    arbitrary: (fc, base) =>
      fc
        .tuple(base, fc.integer({ min: 1, max: MAX_KEY_ENVELOPES_PER_BATCH }), fc.bigInt({ min: 0n, max: U64_MAX - 65_536n }))
        .map(([v, count, first]) => ({
          ...v,
          envelope_count: count,
          batch_digest: nonzero(v.batch_digest),
          envelope_root: nonzero(v.envelope_root),
          first_sequence: first,
          last_sequence: first + BigInt(count),
        })),
  },
);

function nonzero(b: Uint8Array): Uint8Array {
  if (!isZero(b)) return b;
  const out = b.slice();
  out[31] = 1;
  return out;
}

// ---------------------------------------------------------------- §7 grants and proofs

export const LaneScopeV1 = taggedUnion<T.LaneScopeV1>("LaneScopeV1", {
  Any: { tag: 1, kind: "unit" },
  Exact: { tag: 2, kind: "newtype", field: "lane_id", codec: Bytes32 },
  // §7.2: the listed, sorted, unique lane ids, bounded by cbqs.max_lane_ids_per_grant.
  Set: {
    tag: 3,
    kind: "newtype",
    field: "lane_ids",
    codec: vec(Bytes32, { maxCount: MAX_LANE_IDS_PER_GRANT, strictlyAscending: compareBytes }),
  },
});

export const GroupScopeV1 = taggedUnion<T.GroupScopeV1>("GroupScopeV1", {
  Any: { tag: 1, kind: "unit" },
  Exact: { tag: 2, kind: "newtype", field: "group_id", codec: Bytes32 },
});

export const StreamGrantV1 = struct<T.StreamGrantV1>(
  "StreamGrantV1",
  {
    context: CbqsSigningContextV1,
    stream_id: StreamId,
    authorization_generation: u64,
    grant_nonce: Bytes32,
    holder_signing_key: SigningPublicKey,
    holder_hpke_key: option(HpkePublicKey),
    verbs: u16,
    lane_scope: LaneScopeV1,
    group_scope: GroupScopeV1,
    not_before_ms: u64,
    expires_at_ms: u64,
    max_message_bytes: u32,
    max_append_bytes_per_sec: u64,
    max_in_flight: u32,
    max_lane_creates_per_min: u32,
    signature: Signature,
  },
  {
    check: (g) =>
      (g.verbs & ~KNOWN_VERB_BITS) === 0 ? null : { field: "verbs", reason: "unknown verb bits (§7: bits 0..6 only)" },
    arbitrary: (fc, base) => base.map((g) => ({ ...g, verbs: g.verbs & KNOWN_VERB_BITS })),
  },
);

export const SessionProofV1 = struct<T.SessionProofV1>("SessionProofV1", {
  context: CbqsSigningContextV1,
  stream_id: StreamId,
  provider_epoch: providerEpochV1,
  grant_id: Bytes32,
  session_id: Bytes32,
  challenge: Bytes32,
  signature: Signature,
});

export const RequestProofV1 = struct<T.RequestProofV1>("RequestProofV1", {
  context: CbqsSigningContextV1,
  session_id: Bytes32,
  counter: u64,
  method: CbqsRequestMethodV1,
  body_hash: Bytes32,
  signature: Signature,
});

// ---------------------------------------------------------------- §5 instructions

export const RegisterProviderArgsV1 = struct<T.RegisterProviderArgsV1>("RegisterProviderArgsV1", {
  signing_key: SigningPublicKey,
  endpoints: Endpoints,
  quote_key: SigningPublicKey,
  base_rate_admission: BaseRateAdmissionV1,
  metadata_hash: Bytes32,
});

export const UpdateProviderArgsV1 = struct<T.UpdateProviderArgsV1>("UpdateProviderArgsV1", {
  endpoints: option(Endpoints),
  signing_key: option(SigningPublicKey),
  quote_key: option(SigningPublicKey),
  base_rate_admission: option(BaseRateAdmissionV1),
  metadata_hash: option(Bytes32),
});

export const SetProviderStatusArgsV1 = struct<T.SetProviderStatusArgsV1>("SetProviderStatusArgsV1", {
  status: ProviderStatus,
});

export const CreateStreamArgsV1 = struct<T.CreateStreamArgsV1>("CreateStreamArgsV1", {
  owner_nonce: u64,
  initial_escrow: u128,
  admin_key: SigningPublicKey,
  rotation_key: option(SigningPublicKey),
  delivery_class: DeliveryClass,
  encrypted: bool,
  provider: Address,
  config: StreamConfigV1,
  price_quote: option(PriceQuoteV1),
});

/** §5/§14: deliberately 0-based — Keep = 0, Set = 1 || SigningPublicKey, Clear = 2. */
export const RotationKeyUpdateV1 = taggedUnion<T.RotationKeyUpdateV1>("RotationKeyUpdateV1", {
  Keep: { tag: 0, kind: "unit" },
  Set: { tag: 1, kind: "newtype", field: "key", codec: SigningPublicKey },
  Clear: { tag: 2, kind: "unit" },
});

export const UpdateStreamArgsV1 = struct<T.UpdateStreamArgsV1>("UpdateStreamArgsV1", {
  stream_id: StreamId,
  config: option(StreamConfigV1),
  admin_key: option(SigningPublicKey),
  rotation_key: RotationKeyUpdateV1,
  price_quote: option(PriceQuoteV1),
  bump_authorization_generation: bool,
});

export const TopUpStreamArgsV1 = struct<T.TopUpStreamArgsV1>("TopUpStreamArgsV1", {
  stream_id: StreamId,
  amount: u128,
});

export const SettleStreamRentArgsV1 = struct<T.SettleStreamRentArgsV1>("SettleStreamRentArgsV1", {
  stream_id: StreamId,
});

export const CloseStreamArgsV1 = struct<T.CloseStreamArgsV1>("CloseStreamArgsV1", {
  stream_id: StreamId,
});

export const ActivateKeyGenerationArgsV1 = struct<T.ActivateKeyGenerationArgsV1>("ActivateKeyGenerationArgsV1", {
  receipt: KeyBatchReceiptV1,
  bump_authorization_generation: bool,
});

const InstructionAction = taggedUnion<T.CbqsInstructionV1>("CbqsInstructionV1", {
  RegisterProvider: { tag: 1, kind: "newtype", field: "args", codec: RegisterProviderArgsV1 },
  UpdateProvider: { tag: 2, kind: "newtype", field: "args", codec: UpdateProviderArgsV1 },
  SetProviderStatus: { tag: 3, kind: "newtype", field: "args", codec: SetProviderStatusArgsV1 },
  CreateStream: { tag: 4, kind: "newtype", field: "args", codec: CreateStreamArgsV1 },
  UpdateStream: { tag: 5, kind: "newtype", field: "args", codec: UpdateStreamArgsV1 },
  TopUpStream: { tag: 6, kind: "newtype", field: "args", codec: TopUpStreamArgsV1 },
  SettleStreamRent: { tag: 7, kind: "newtype", field: "args", codec: SettleStreamRentArgsV1 },
  CloseStream: { tag: 8, kind: "newtype", field: "args", codec: CloseStreamArgsV1 },
  ActivateKeyGeneration: { tag: 9, kind: "newtype", field: "args", codec: ActivateKeyGenerationArgsV1 },
});

/** §5: the v1 version byte, then the one-byte action tag, then the action's fields. JSON {"<Name>": <Args>}. */
export const CbqsInstructionV1: Codec<T.CbqsInstructionV1> = {
  name: "CbqsInstructionV1",
  minSize: 2,
  write(w, v, path) {
    versionV1.write(w, 1, joinPath(w, path, "version"));
    InstructionAction.write(w, v, path);
  },
  read(r, path) {
    versionV1.read(r, joinPath(r, path, "version"));
    return InstructionAction.read(r, path);
  },
  toJson: (v): Json => InstructionAction.toJson(v),
  fromJson: (j, path, ctx) => InstructionAction.fromJson(j, path, ctx),
  arbitrary: (fc: FastCheck) => InstructionAction.arbitrary(fc),
  jsonSchema: (defs) => InstructionAction.jsonSchema(defs),
};

