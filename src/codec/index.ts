// Public API of the canonical CBQS codec (CIP-39 §14): `encode(codecs.X, v)`,
// `decode(codecs.X, bytes)`, `toJson`/`fromJson`, signing bytes, digests and derivations.
export { encode, decode, toJson, fromJson, type Codec, type Json, type JsonContext } from "./core.js";
export {
  DecodeError,
  EncodeError,
  JsonValueError,
  UNSUPPORTED_VERSION_CODE,
  INVALID_ENCODING_CODE,
  type DecodeErrorKind,
} from "./errors.js";
export { codecs, codecByName, CODEC_NAMES, type CodecName } from "./registry.js";
export {
  MAX_PROVIDER_ENDPOINTS,
  MAX_ENDPOINT_URI_BYTES,
  MAX_LANE_IDS_PER_GRANT,
  MAX_KEY_ENVELOPES_PER_BATCH,
  MIN_HPKE_CIPHERTEXT_BYTES,
  MAX_HPKE_CIPHERTEXT_BYTES,
  KNOWN_VERB_BITS,
} from "./schema.js";
export { MAX_CHECKPOINT_RECORDS, MAX_CBFS_REFERENCE_BYTES, DELIVERY_RESULT_SHAPES, type DeliveryResultShape, type DeliveryResultOption } from "./broker.js";
export { MAX_INLINE_MESSAGE_BYTES, MAX_KEY_ENVELOPES_PER_CHUNK, MAX_KEY_BATCH_CHUNK_BYTES } from "./requests.js";
export {
  MAX_WIRE_FRAME_BYTES,
  MAX_LANE_LIST_PAGE,
  MAX_PROOF_LANES_PER_SUBSCRIPTION,
  MAX_ERROR_MESSAGE_BYTES,
  MAX_ERROR_DETAILS_BYTES,
  leaseIssueState,
} from "./results.js";
export { MAX_SERVER_FRAMES_PER_BATCH, MAX_SERVER_FRAME_BATCH_BYTES } from "./frames.js";
export * from "./helpers.js";
export { HELPER_VECTORS_SHA256 } from "./pinned.js";
export * from "./signing.js";
export * from "./derive.js";
export * from "./schedule.js";
export type * from "./types.js";
export type * from "./wire-types.js";
