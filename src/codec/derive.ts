// Derived identifiers and anchors of CIP-39: keccak256 over a domain string followed by
// canonical (§14) encodings. Inputs are validated by the same codecs that encode them.
import { compareBytes, utf8 } from "../bytes.js";
import { keccak256 } from "../crypto/hash.js";
import { Writer, providerEpochV1, u16, u32, u64, type Codec } from "./core.js";
import { EncodeError } from "./errors.js";
import * as B from "./broker.js";
import * as R from "./requests.js";
import * as S from "./schema.js";
import type * as T from "./types.js";
import type * as W from "./wire-types.js";

/** A keccak256 implementation; the engine passes its meter's, so each preimage is charged (§18.1). */
export type Keccak256 = (preimage: Uint8Array) => Uint8Array;

/** keccak256(domain || canonical(part_0) || canonical(part_1) || …). */
function domainHash(domain: string, parts: [Codec<any>, unknown, string][], hash: Keccak256 = keccak256): Uint8Array {
  const w = new Writer();
  w.bytes(utf8(domain));
  for (const [codec, value, name] of parts) codec.write(w, value, name);
  return hash(w.finish());
}

/** §3: chain_instance_id = keccak256("cowboy-chain-identity-v1:" || genesis_source_bytes). */
export function chainInstanceId(genesisSourceBytes: Uint8Array): Uint8Array {
  const w = new Writer();
  w.bytes(utf8("cowboy-chain-identity-v1:"));
  w.bytes(genesisSourceBytes);
  return keccak256(w.finish());
}

/** §4.1: main stream id = keccak256("cbqs/stream-id/v1" || chain_id_u64_be || chain_instance_id || owner || owner_nonce_u64_be). */
export function streamId(
  chainId: bigint,
  chainInstance: Uint8Array,
  owner: Uint8Array,
  ownerNonce: bigint,
  hash: Keccak256 = keccak256,
): Uint8Array {
  return domainHash(
    "cbqs/stream-id/v1",
    [
      [u64, chainId, "chain_id"],
      [S.Bytes32, chainInstance, "chain_instance_id"],
      [S.Address, owner, "owner"],
      [u64, ownerNonce, "owner_nonce"],
    ],
    hash,
  );
}

/** §4.1: key_stream_id = keccak256("cbqs/key-stream-id/v1" || main_stream_id). */
export function keyStreamId(mainStreamId: Uint8Array, hash: Keccak256 = keccak256): Uint8Array {
  return domainHash("cbqs/key-stream-id/v1", [[S.Bytes32, mainStreamId, "main_stream_id"]], hash);
}

/** §8: lane_id = keccak256("cbqs/lane-id/v1" || stream_id || lane_nonce), lane_nonce: Bytes32 (§13.1). */
export function laneId(stream: Uint8Array, laneNonce: Uint8Array): Uint8Array {
  return domainHash("cbqs/lane-id/v1", [
    [S.Bytes32, stream, "stream_id"],
    [S.Bytes32, laneNonce, "lane_nonce"],
  ]);
}

/** §4.5: schedule_digest = keccak256("cbqs/base-rate-schedule/v1" || canonical(BaseRateScheduleV1)). */
export function scheduleDigest(schedule: T.BaseRateScheduleV1, hash: Keccak256 = keccak256): Uint8Array {
  return domainHash("cbqs/base-rate-schedule/v1", [[S.BaseRateScheduleV1, schedule, "schedule"]], hash);
}

/** §9.1: signing_key_id(key) = keccak256("cbqs/signing-key-id/v1" || canonical(key)). */
export function signingKeyId(key: T.SigningPublicKey, hash: Keccak256 = keccak256): Uint8Array {
  return domainHash("cbqs/signing-key-id/v1", [[S.SigningPublicKey, key, "key"]], hash);
}

/** §9.3: the recipient order key keccak256(canonical(recipient_hpke_key)). */
export function hpkeOrderKey(key: T.HpkePublicKey): Uint8Array {
  return domainHash("", [[S.HpkePublicKey, key, "recipient_hpke_key"]]);
}

/** §9.3: envelope_digest = keccak256("cbqs/key-envelope/v1" || canonical(KeyEnvelopeV1)). */
export function envelopeDigest(envelope: T.KeyEnvelopeV1): Uint8Array {
  return domainHash("cbqs/key-envelope/v1", [[S.KeyEnvelopeV1, envelope, "envelope"]]);
}

/** §9.3: key_batch_genesis = keccak256("cbqs/key-batch-genesis/v1" || canonical(context) || key_stream_id). */
export function keyBatchGenesis(context: T.CbqsSigningContextV1, keyStream: Uint8Array): Uint8Array {
  return domainHash("cbqs/key-batch-genesis/v1", [
    [S.CbqsSigningContextV1, context, "context"],
    [S.Bytes32, keyStream, "key_stream_id"],
  ]);
}

/**
 * §9.3: membership_set_digest = keccak256("cbqs/membership-set/v1" || member_count_u32 ||
 * each key's struct encoding, no per-element prefix). The members must already be in strictly
 * ascending order of their order key; unsorted or duplicate members are rejected.
 */
export function membershipSetDigest(members: readonly T.HpkePublicKey[]): Uint8Array {
  const orderKeys = members.map(hpkeOrderKey);
  for (let i = 1; i < orderKeys.length; i++) {
    if (compareBytes(orderKeys[i - 1]!, orderKeys[i]!) >= 0) {
      throw new EncodeError(`members[${i}]`, "members must be strictly ascending by keccak256(canonical(key)) (§9.3)");
    }
  }
  return domainHash("cbqs/membership-set/v1", [
    [u32, members.length, "member_count"],
    ...members.map((m, i): [Codec<any>, unknown, string] => [S.HpkePublicKey, m, `members[${i}]`]),
  ]);
}

/** §9.3: envelope_root over the ordered envelope digests (explicit u32 count, no vector prefix). */
export function envelopeRoot(
  context: T.CbqsSigningContextV1,
  keyStream: Uint8Array,
  encryptionGeneration: bigint,
  batchDigest: Uint8Array,
  orderedEnvelopeDigests: readonly Uint8Array[],
): Uint8Array {
  return domainHash("cbqs/envelope-root/v1", [
    [S.CbqsSigningContextV1, context, "context"],
    [S.Bytes32, keyStream, "key_stream_id"],
    [u64, encryptionGeneration, "encryption_generation"],
    [S.Bytes32, batchDigest, "batch_digest"],
    [u32, orderedEnvelopeDigests.length, "envelope_count"],
    ...orderedEnvelopeDigests.map((d, i): [Codec<any>, unknown, string] => [S.Bytes32, d, `envelope_digests[${i}]`]),
  ]);
}

/** §9.3: batch_context_digest, the pre-envelope batch identity bound into HPKE associated data. */
export function batchContextDigest(
  context: T.CbqsSigningContextV1,
  stream: Uint8Array,
  encryptionGeneration: bigint,
  previousBatchDigest: Uint8Array,
  membershipDigest: Uint8Array,
  createdAtMs: bigint,
): Uint8Array {
  return domainHash("cbqs/key-batch-context/v1", [
    [S.CbqsSigningContextV1, context, "context"],
    [S.Bytes32, stream, "stream_id"],
    [u64, encryptionGeneration, "encryption_generation"],
    [S.Bytes32, previousBatchDigest, "previous_batch_digest"],
    [S.Bytes32, membershipDigest, "membership_set_digest"],
    [u64, createdAtMs, "created_at_ms"],
  ]);
}

// §14.1 empty-history anchors. provider_epoch is always 0 in v1 (§4).

export function streamReceiptGenesis(context: T.CbqsSigningContextV1, stream: Uint8Array): Uint8Array {
  return domainHash("cbqs/stream-genesis/v1", [
    [S.CbqsSigningContextV1, context, "context"],
    [S.Bytes32, stream, "stream_id"],
    [u64, 0n, "provider_epoch"],
  ]);
}

export function laneReceiptGenesis(context: T.CbqsSigningContextV1, stream: Uint8Array, lane: Uint8Array): Uint8Array {
  return domainHash("cbqs/lane-genesis/v1", [
    [S.CbqsSigningContextV1, context, "context"],
    [S.Bytes32, stream, "stream_id"],
    [S.Bytes32, lane, "lane_id"],
    [u64, 0n, "provider_epoch"],
  ]);
}

export function checkpointGenesis(context: T.CbqsSigningContextV1, stream: Uint8Array): Uint8Array {
  return domainHash("cbqs/checkpoint-genesis/v1", [
    [S.CbqsSigningContextV1, context, "context"],
    [S.Bytes32, stream, "stream_id"],
    [u64, 0n, "provider_epoch"],
  ]);
}

/** §14.2: the first previous_group_receipt of a consumer group. */
export function groupReceiptGenesis(
  context: T.CbqsSigningContextV1,
  stream: Uint8Array,
  lane: Uint8Array,
  group: Uint8Array,
): Uint8Array {
  return domainHash("cbqs/group-genesis/v1", [
    [S.CbqsSigningContextV1, context, "context"],
    [S.Bytes32, stream, "stream_id"],
    [S.Bytes32, lane, "lane_id"],
    [S.Bytes32, group, "group_id"],
    [u64, 0n, "provider_epoch"],
  ]);
}

// ---------------------------------------------------------------- broker-side digests (§7.1, §10, §13.1, §14)

/**
 * §7.1/§13.1 cbqs_request_body_hash_v1 = keccak256("cbqs/request-body/v1" || method_u16_be ||
 * canonical(method_specific_body)), which is the domain followed by canonical(CbqsRequestBodyV1).
 */
export function cbqs_request_body_hash_v1(body: W.CbqsRequestBodyV1): Uint8Array {
  return domainHash("cbqs/request-body/v1", [[R.CbqsRequestBodyV1, body, "body"]]);
}

/** §10 append_request_body_hash_v1: the request-body hash under method `Append` = 1. */
export function append_request_body_hash_v1(body: W.AppendRequestBodyV1): Uint8Array {
  return cbqs_request_body_hash_v1({ type: "Append", body });
}

/** §14.1 `payload_hash`, which §14.1 leaves unnamed: keccak256 of the payload bytes (D-0156). */
export function recordPayloadHash(payload: Uint8Array): Uint8Array {
  return keccak256(payload);
}

/** §10: a lane event's synthetic client_message_id = keccak256(canonical(LaneEventV1)). */
export function laneEventMessageId(event: W.LaneEventV1): Uint8Array {
  return domainHash("", [[B.LaneEventV1, event, "event"]]);
}

/**
 * §14.2 delivery_result_state_digest_v1 = keccak256("cbqs/delivery-result-state/v1" ||
 * canonical(context) || canonical(DeliveryResultStateV1)); a state off the §14.2 table is refused.
 */
export function delivery_result_state_digest_v1(context: T.CbqsSigningContextV1, state: W.DeliveryResultStateV1): Uint8Array {
  return domainHash("cbqs/delivery-result-state/v1", [
    [S.CbqsSigningContextV1, context, "context"],
    [B.DeliveryResultStateV1, state, "state"],
  ]);
}

/** §14.2 resulting_state_digest of GroupCreate / GroupUpdate (provider_epoch 0 in v1). */
export function groupConfigStateDigest(context: T.CbqsSigningContextV1, stream: Uint8Array, config: W.GroupConfigV1): Uint8Array {
  return domainHash("cbqs/group-config-state/v1", [
    [S.CbqsSigningContextV1, context, "context"],
    [S.Bytes32, stream, "stream_id"],
    [providerEpochV1, 0n, "provider_epoch"],
    [R.GroupConfigV1, config, "config"],
  ]);
}

/** §14.2 resulting_state_digest of GroupDelete. */
export function groupDeletedStateDigest(context: T.CbqsSigningContextV1, stream: Uint8Array, lane: Uint8Array, group: Uint8Array): Uint8Array {
  return domainHash("cbqs/group-deleted-state/v1", [
    [S.CbqsSigningContextV1, context, "context"],
    [S.Bytes32, stream, "stream_id"],
    [S.Bytes32, lane, "lane_id"],
    [S.Bytes32, group, "group_id"],
    [providerEpochV1, 0n, "provider_epoch"],
  ]);
}

/** The (stream, lane, group, record) identity every delivery-cycle and lease id starts with. */
export interface DeliveryIdentityV1 {
  stream_id: Uint8Array;
  lane_id: Uint8Array;
  group_id: Uint8Array;
  record_id: T.StandardRecordIdV1;
}

function identityParts(context: T.CbqsSigningContextV1, id: DeliveryIdentityV1): [Codec<any>, unknown, string][] {
  return [
    [S.CbqsSigningContextV1, context, "context"],
    [S.Bytes32, id.stream_id, "stream_id"],
    [S.Bytes32, id.lane_id, "lane_id"],
    [S.Bytes32, id.group_id, "group_id"],
    [B.StandardRecordIdV1, id.record_id, "record_id"],
  ];
}

/** §13.1 initial_delivery_cycle_id: the first cycle of one record in one group. */
export function initialDeliveryCycleId(context: T.CbqsSigningContextV1, id: DeliveryIdentityV1): Uint8Array {
  return domainHash("cbqs/delivery-cycle-initial/v1", identityParts(context, id));
}

/** §13.1 redrive_delivery_cycle_id: the one successor cycle of a redriven terminal cycle. */
export function redriveDeliveryCycleId(
  context: T.CbqsSigningContextV1,
  id: DeliveryIdentityV1,
  terminalCycleId: Uint8Array,
  previousGroupReceipt: Uint8Array,
): Uint8Array {
  return domainHash("cbqs/delivery-cycle-redrive/v1", [
    ...identityParts(context, id),
    [S.Bytes32, terminalCycleId, "terminal_cycle_id"],
    [S.Bytes32, previousGroupReceipt, "previous_group_receipt"],
  ]);
}

/** §13.1 lease_id of one attempt; attempts are one-indexed, so attempt 0 has no id. */
export function leaseId(
  context: T.CbqsSigningContextV1,
  id: DeliveryIdentityV1,
  deliveryCycleId: Uint8Array,
  attempt: number,
  holderSigningKeyId: Uint8Array,
): Uint8Array {
  if (attempt === 0) throw new EncodeError("attempt", "lease attempts are one-indexed: attempt 0 has no lease (§13.1)");
  return domainHash("cbqs/delivery-lease/v1", [
    ...identityParts(context, id),
    [S.Bytes32, deliveryCycleId, "delivery_cycle_id"],
    [u16, attempt, "attempt"],
    [S.Bytes32, holderSigningKeyId, "holder_signing_key_id"],
  ]);
}
