// §14 signing registry: signing bytes = domain separator || canonical(context) ||
// canonical(listed fields after context and before signature); the signer signs their
// Keccak-256 digest. These are the sole signing-bytes functions of the emulator.
import { concatBytes, utf8 } from "../bytes.js";
import { keccak256 } from "../crypto/hash.js";
import { encode, type StructCodec } from "./core.js";
import * as B from "./broker.js";
import * as S from "./schema.js";
import type * as T from "./types.js";

const SIGNATURE_BYTES = 64;

/** Domain separators of the §14 registry rows this codec implements. */
export const SIGNING_DOMAINS = {
  PriceQuoteV1: "cbqs/price-quote/v1",
  StreamGrantV1: "cbqs/stream-grant/v1",
  SessionProofV1: "cbqs/session/v1",
  RequestProofV1: "cbqs/request/v1",
  KeyRotationBatchV1: "cbqs/key-rotation-batch/v1",
  KeyBatchReceiptV1: "cbqs/key-batch-receipt/v1",
  BrokerEpochTransitionV1: "cbqs/broker-epoch-transition/v1",
  CheckpointReceiptV1: "cbqs/checkpoint-receipt/v1",
  AppendReceiptV1: "cbqs/append-receipt/v1",
  DeliveryStateReceiptV1: "cbqs/delivery-state-receipt/v1",
  StandardRetentionAnchorV1: "cbqs/standard-retention-anchor/v1",
  GroupRetentionAnchorV1: "cbqs/group-retention-anchor/v1",
  FastRetentionAnchorV1: "cbqs/fast-retention-anchor/v1",
  CbqsSnapshotManifestV1: "cbqs/snapshot-manifest/v1",
} as const;

function signingBytesOf<V extends { context: T.CbqsSigningContextV1 }>(
  domain: string,
  codec: StructCodec<V>,
): (value: V) => Uint8Array {
  const fields = codec.fields;
  // Every registry row starts with `context` and ends with the raw 64-byte signature (§14; the
  // manifest's is `application_signature`), so the signed fields are exactly the canonical
  // encoding minus its last 64 bytes.
  const last = fields[fields.length - 1]?.[0];
  if (fields[0]?.[0] !== "context" || (last !== "signature" && last !== "application_signature")) {
    throw new Error(`${codec.name} is not a §14 signed object`);
  }
  const domainBytes = utf8(domain);
  return (value) => {
    const full = encode(codec, value);
    return concatBytes(domainBytes, full.subarray(0, full.length - SIGNATURE_BYTES));
  };
}

export const price_quote_signing_bytes_v1 = signingBytesOf(SIGNING_DOMAINS.PriceQuoteV1, S.PriceQuoteV1);
export const stream_grant_signing_bytes_v1 = signingBytesOf(SIGNING_DOMAINS.StreamGrantV1, S.StreamGrantV1);
export const session_proof_signing_bytes_v1 = signingBytesOf(SIGNING_DOMAINS.SessionProofV1, S.SessionProofV1);
export const request_proof_signing_bytes_v1 = signingBytesOf(SIGNING_DOMAINS.RequestProofV1, S.RequestProofV1);
export const key_rotation_batch_signing_bytes_v1 = signingBytesOf(
  SIGNING_DOMAINS.KeyRotationBatchV1,
  S.KeyRotationBatchV1,
);
export const key_batch_receipt_signing_bytes_v1 = signingBytesOf(
  SIGNING_DOMAINS.KeyBatchReceiptV1,
  S.KeyBatchReceiptV1,
);

/** §4.4: quote_digest = keccak256(price_quote_signing_bytes_v1(quote)); also the signed digest. */
export const quoteDigest = (q: T.PriceQuoteV1): Uint8Array => keccak256(price_quote_signing_bytes_v1(q));
/** §7: grant_id = keccak256(stream_grant_signing_bytes_v1(grant)). */
export const grantId = (g: T.StreamGrantV1): Uint8Array => keccak256(stream_grant_signing_bytes_v1(g));
/** §9.3: batch_digest = keccak256(key_rotation_batch_signing_bytes_v1(batch)). */
export const batchDigest = (b: T.KeyRotationBatchV1): Uint8Array => keccak256(key_rotation_batch_signing_bytes_v1(b));
/** §9.3/§14: the digest the provider signs for a KeyBatchReceiptV1. */
export const keyBatchReceiptDigest = (r: T.KeyBatchReceiptV1): Uint8Array =>
  keccak256(key_batch_receipt_signing_bytes_v1(r));
/** §7.1: the digest the holder signs for a SessionProofV1. */
export const sessionProofDigest = (p: T.SessionProofV1): Uint8Array => keccak256(session_proof_signing_bytes_v1(p));
/** §7.1: the digest the holder signs for a RequestProofV1. */
export const requestProofDigest = (p: T.RequestProofV1): Uint8Array => keccak256(request_proof_signing_bytes_v1(p));

// Broker-side rows of the registry (§12, §14.1, §14.2, §15).
export const broker_epoch_transition_signing_bytes_v1 = signingBytesOf(
  SIGNING_DOMAINS.BrokerEpochTransitionV1,
  B.BrokerEpochTransitionV1,
);
export const checkpoint_receipt_signing_bytes_v1 = signingBytesOf(
  SIGNING_DOMAINS.CheckpointReceiptV1,
  B.CheckpointReceiptV1,
);
export const append_receipt_signing_bytes_v1 = signingBytesOf(SIGNING_DOMAINS.AppendReceiptV1, B.AppendReceiptV1);
export const delivery_state_receipt_signing_bytes_v1 = signingBytesOf(
  SIGNING_DOMAINS.DeliveryStateReceiptV1,
  B.DeliveryStateReceiptV1,
);
export const standard_retention_anchor_signing_bytes_v1 = signingBytesOf(
  SIGNING_DOMAINS.StandardRetentionAnchorV1,
  B.StandardRetentionAnchorV1,
);
export const group_retention_anchor_signing_bytes_v1 = signingBytesOf(
  SIGNING_DOMAINS.GroupRetentionAnchorV1,
  B.GroupRetentionAnchorV1,
);
export const fast_retention_anchor_signing_bytes_v1 = signingBytesOf(
  SIGNING_DOMAINS.FastRetentionAnchorV1,
  B.FastRetentionAnchorV1,
);

/** §9.3/§14.1: the digest an append receipt is signed over (e.g. `final_append_receipt`). */
export const appendReceiptDigest = (r: T.AppendReceiptV1): Uint8Array => keccak256(append_receipt_signing_bytes_v1(r));

/** §14.1: record_header_bytes_v1 = canonical(RecordHeaderV1). */
export const record_header_bytes_v1 = (h: T.RecordHeaderV1): Uint8Array => encode(B.RecordHeaderV1, h);
/** §14.1: header_hash = keccak256("cbqs/record-header/v1" || canonical(RecordHeaderV1)). */
export const record_header_hash_v1 = (h: T.RecordHeaderV1): Uint8Array =>
  keccak256(concatBytes(utf8("cbqs/record-header/v1"), record_header_bytes_v1(h)));

/** §15/§14: the application signs keccak256 of these bytes; its key and policy are application state. */
export const snapshot_manifest_signing_bytes_v1 = signingBytesOf(SIGNING_DOMAINS.CbqsSnapshotManifestV1, B.CbqsSnapshotManifestV1);

/** §14: the digest a checkpoint receipt is signed over — `previous_checkpoint`, `checkpoint_anchor`, a fast `provider_anchor`. */
export const checkpointReceiptDigest = (r: T.CheckpointReceiptV1): Uint8Array => keccak256(checkpoint_receipt_signing_bytes_v1(r));
/** §12.1: the transition digest the first checkpoint of the replacement broker epoch links to. */
export const brokerEpochTransitionDigest = (t: T.BrokerEpochTransitionV1): Uint8Array =>
  keccak256(broker_epoch_transition_signing_bytes_v1(t));
/** §13.1: `after_group_receipt` names this digest of a delivery-state receipt. */
export const deliveryStateReceiptDigest = (r: T.DeliveryStateReceiptV1): Uint8Array =>
  keccak256(delivery_state_receipt_signing_bytes_v1(r));
