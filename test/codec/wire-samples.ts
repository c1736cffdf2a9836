// Hand-built valid values of the §8–§15 broker wire types, shared by the codec tests. Digests a
// value must carry about itself are computed with the codec's functions; test/codec/wire-layout
// checks those functions against preimages written out by hand.
import * as C from "../../src/codec/index.js";
import type * as T from "../../src/codec/types.js";
import type * as W from "../../src/codec/wire-types.js";
import { context, fill, grant } from "./samples.js";

export const served: T.FinalizedViewV1 = { chain_instance_id: fill(32, 0xc1), height: 9n, block_hash: fill(32, 0x99) };
export const STREAM = fill(32, 0x51);
export const LANE = fill(32, 0x1a);
export const GROUP = fill(32, 0x60);
export const ZERO32 = fill(32, 0);

export const header: T.RecordHeaderV1 = {
  stream_id: STREAM, lane_id: LANE, origin: "Client", kind: "Application", client_message_id: fill(32, 0xcd),
  created_at_ms: 5n, visible_after_ms: 0n, expires_at_ms: 900n, encryption_generation: 1n, nonce: fill(24, 0x4e),
};
export const payload = Uint8Array.from([1, 2, 3, 4, 5]);
export const standardId: T.StandardRecordIdV1 = { provider_epoch: 0n, sequence: 8n };

/** The append receipt of `header` + `payload` at standard record 8. */
export const appendReceipt: T.AppendReceiptV1 = {
  context, served_at: served, stream_id: STREAM, lane_id: LANE, origin: "Client", kind: "Application",
  record_id: { type: "Standard", ...standardId }, client_message_id: fill(32, 0xcd),
  header_hash: C.record_header_hash_v1(header), payload_hash: C.recordPayloadHash(payload),
  visible_after_ms: 0n, expires_at_ms: 900n, encryption_generation: 1n, previous_global_receipt: fill(32, 0x01),
  previous_lane_receipt: fill(32, 0x02), committed_at_ms: 77n, signature: fill(64, 0x5e),
};

export const checkpoint: T.CheckpointReceiptV1 = {
  context, served_at: served, stream_id: STREAM, provider_epoch: 0n, broker_epoch: 2n, first_sequence: 10n,
  last_sequence: 15n, ordered_range_root: fill(32, 0x0e), previous_checkpoint: fill(32, 0x0c), durable_high_water: 15n,
  committed_at_ms: 10n, signature: fill(64, 2),
};

export const transition: T.BrokerEpochTransitionV1 = {
  context, served_at: served, stream_id: STREAM, provider_epoch: 0n, previous_lineage: { provider_epoch: 0n, broker_epoch: 1n },
  replacement_broker_epoch: 2n, kind: "Void", last_durable_checkpoint: fill(32, 0xcc), last_durable_sequence: 9n,
  last_provisional_sequence: 12n, created_at_ms: 3n, signature: fill(64, 1),
};

export const laneRecord: W.LaneRecordV1 = { stream_id: STREAM, lane_id: LANE, status: "Active", created_at_ms: 40n, metadata_hash: fill(32, 0x3a) };
export const laneEvent: W.LaneEventV1 = { stream_id: STREAM, lane_id: LANE, status: "Active", metadata_hash: fill(32, 0x3a), occurred_at_ms: 40n };

/** The lane event's append receipt: a provider event on the default lane (§8, §10). */
export const laneEventReceipt: T.AppendReceiptV1 = {
  ...appendReceipt, lane_id: ZERO32, origin: "ProviderEvent", kind: "LaneCreated", client_message_id: C.laneEventMessageId(laneEvent),
  expires_at_ms: 0n, encryption_generation: 0n, record_id: { type: "Standard", provider_epoch: 0n, sequence: 9n },
};

export const appendBody: W.AppendRequestBodyV1 = {
  stream_id: STREAM, lane_id: LANE, client_message_id: fill(32, 0xcd), client_created_at_ms: 5n, visible_after_ms: 0n,
  expires_at_ms: 900n, encryption_generation: 1n, nonce: fill(24, 0x4e), payload,
};

export const groupConfig: W.GroupConfigV1 = {
  group_id: GROUP, lane_id: LANE, mode: "Concurrent", start: { type: "At", record_id: standardId }, visibility_timeout_ms: 30_000n,
  max_visibility_ms: 60_000n, max_in_flight: 8, max_attempts: 5, record_deadline_ms: 600_000n, dead_letter_ttl_ms: 86_400_000n,
  retention_pin_until_ms: 0n,
};

export const leaseRef: W.DeliveryLeaseRefV1 = {
  stream_id: STREAM, lane_id: LANE, group_id: GROUP, record_id: standardId, delivery_cycle_id: fill(32, 0xdc), lease_id: fill(32, 0x1e),
};

export const lease: W.DeliveryLeaseV1 = {
  reference: leaseRef, attempt: 1, holder_signing_key_id: fill(32, 0x4b), group_queue_sequence: 3n, issued_at_ms: 100n, expires_at_ms: 130n,
};

const receiptBase = (action: T.DeliveryStateActionV1): T.DeliveryStateReceiptV1 => ({
  context, served_at: served, stream_id: STREAM, lane_id: LANE, group_id: GROUP, provider_epoch: 0n, action,
  record_id: null, lease_id: null, resulting_state_digest: fill(32, 0x5d), previous_group_receipt: fill(32, 0x6a),
  committed_at_ms: 9n, signature: fill(64, 0x5f),
});

/** A state with every option absent: each action's sample sets exactly the options its §14.2 row lists. */
const bare = (action: T.DeliveryStateActionV1): W.DeliveryResultStateV1 => ({
  action, stream_id: STREAM, lane_id: LANE, group_id: GROUP, record_id: standardId, delivery_cycle_id: fill(32, 0xdc),
  lease_id: null, attempt: 0, holder_signing_key_id: null, available_at_ms: null, issued_at_ms: null, lease_expires_at_ms: null,
  terminal_at_ms: null, terminal_expires_at_ms: null, reason_hash: null, successor_cycle_id: null, group_queue_sequence: 3n,
});

const L = { lease_id: fill(32, 0x1e), attempt: 2 };
export const resultStates: Record<string, W.DeliveryResultStateV1> = {
  Ack: { ...bare("Ack"), ...L, terminal_at_ms: 200n },
  NackRetry: { ...bare("Nack"), ...L, available_at_ms: 300n },
  NackExhausted: { ...bare("Nack"), ...L, terminal_at_ms: 200n, terminal_expires_at_ms: 900n },
  Extend: { ...bare("Extend"), ...L, holder_signing_key_id: fill(32, 0x4b), issued_at_ms: 100n, lease_expires_at_ms: 160n },
  Reject: { ...bare("Reject"), ...L, terminal_at_ms: 200n, terminal_expires_at_ms: 900n, reason_hash: ZERO32 },
  Redrive: { ...bare("Redrive"), available_at_ms: 250n, successor_cycle_id: fill(32, 0xdd), group_queue_sequence: 9n },
  LeaseIssue: { ...bare("LeaseIssue"), ...L, holder_signing_key_id: fill(32, 0x4b), issued_at_ms: 100n, lease_expires_at_ms: 130n },
  LeaseExpire: { ...bare("LeaseExpire"), ...L, lease_expires_at_ms: 130n, available_at_ms: 130n },
  AttemptsExhaust: { ...bare("AttemptsExhaust"), ...L, lease_expires_at_ms: 130n, terminal_at_ms: 130n, terminal_expires_at_ms: 900n },
  RecordExpire: { ...bare("RecordExpire"), terminal_at_ms: 500n },
  RecordExpireLeased: { ...bare("RecordExpire"), ...L, terminal_at_ms: 500n },
};

/** The self-verifying update of a state: the receipt repeats its identities and digests it. */
export function deliveryUpdate(state: W.DeliveryResultStateV1): W.DeliveryStateUpdateV1 {
  return {
    state,
    receipt: {
      ...receiptBase(state.action), record_id: state.record_id, lease_id: state.lease_id,
      resulting_state_digest: C.delivery_result_state_digest_v1(context, state),
    },
  };
}

export function groupUpdate(action: "GroupCreate" | "GroupUpdate" | "GroupDelete"): W.GroupStateUpdateV1 {
  if (action === "GroupDelete") {
    return { config: null, receipt: { ...receiptBase(action), resulting_state_digest: C.groupDeletedStateDigest(context, STREAM, LANE, GROUP) } };
  }
  return { config: groupConfig, receipt: { ...receiptBase(action), resulting_state_digest: C.groupConfigStateDigest(context, STREAM, groupConfig) } };
}

export const watermark: W.FastDurableWatermarkV1 = {
  stream_id: STREAM, provider_epoch: 0n, broker_epoch: 2n, last_durable_sequence: 15n, checkpoint_anchor: fill(32, 0xa0),
};

/** A consumer-group delivery of `header` + `payload` with its lease and LeaseIssue receipt. */
export const groupDelivery: W.RecordDeliveryV1 = {
  subscription_id: fill(32, 0x5b), record_id: { type: "Standard", ...standardId }, header, payload, append_receipt: appendReceipt,
  lease, delivery_state_receipt: {
    ...receiptBase("LeaseIssue"), record_id: standardId, lease_id: leaseRef.lease_id,
    resulting_state_digest: C.delivery_result_state_digest_v1(context, C.leaseIssueState(lease)),
  },
  durable_watermark: null,
};

export const fastDelivery: W.RecordDeliveryV1 = {
  subscription_id: fill(32, 0x5b), record_id: { type: "Fast", provider_epoch: 0n, broker_epoch: 2n, sequence: 12n }, header, payload,
  append_receipt: null, lease: null, delivery_state_receipt: null, durable_watermark: watermark,
};

export const errorFrame: W.CbqsErrorV1 = { request_id: fill(32, 0x7e), subscription_id: null, code: 3917, message: "cursor too old", details: Uint8Array.from([9, 9]) };

export const sessionChallenge: W.SessionChallengeV1 = {
  request_id: fill(32, 0x7e), context, served_at: served, stream_id: STREAM, grant_id: fill(32, 0x9a), provider_epoch: 0n,
  session_id: fill(32, 0x5e), challenge: fill(32, 0xc4), expires_at_ms: 1_000n,
};

export const openSession: W.OpenSessionRequestV1 = { request_id: fill(32, 0x7e), stream_id: grant.stream_id, grant };

/** An authenticated request whose proof names its body's method and hash. */
export function authenticated(body: W.CbqsRequestBodyV1): W.AuthenticatedRequestV1 {
  return {
    request_id: fill(32, 0x7e),
    proof: { context, session_id: fill(32, 0x5e), counter: 1n, method: body.type, body_hash: C.cbqs_request_body_hash_v1(body), signature: fill(64, 0x66) },
    body,
  };
}

export const manifest: W.CbqsSnapshotManifestV1 = {
  context, stream_id: STREAM, scope: { type: "Lane", lane_id: LANE }, snapshot_hash: fill(32, 0x5a), cbfs_reference: Uint8Array.from(Buffer.from("cbfs://vol/snap/1")),
  covered_through: { type: "CheckpointReceiptDigest", digest: fill(32, 0xa0) }, encryption_generation: 1n, provider_anchor: fill(32, 0xa0),
  application_signature: fill(64, 0x77),
};
