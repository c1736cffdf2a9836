// What the provider sends back (§13.2, §14.2, §12.2.1): self-verifying delivery- and group-state
// updates, the 18 response bodies, record deliveries, lane proofs and checkpoint frames, errors.
// "Receipt, header, record, lease, and delivery-state identities MUST agree exactly or decode
// fails" (§13.2): every identity and digest an object carries about itself is checked here, by the
// decoder; what needs another artifact (a signature key, the subscription's scope, the records of
// a batch) is a verifier's (docs/guides/verify-a-broker.md "Wire types").
import { bytesEqual, compareBytes, toHex } from "../bytes.js";
import {
  option,
  providerEpochV1,
  refine,
  struct,
  taggedUnion,
  u16,
  u32,
  u64,
  utf8String,
  varBytes,
  vec,
  type Arbitrary,
  type Codec,
  type FastCheck,
  type VariantDef,
} from "./core.js";
import * as B from "./broker.js";
import { nonzero } from "./broker.js";
import {
  delivery_result_state_digest_v1,
  groupConfigStateDigest,
  groupDeletedStateDigest,
  recordPayloadHash,
} from "./derive.js";
import { EncodeError } from "./errors.js";
import {
  MAX_FAST_BATCH_RECORDS,
  SPARSE_DEPTH_V1,
  SPARSE_EMPTY_V1,
  fast_lane_payload_digest_v1,
  fast_ordered_range_root_v1,
  sparseProof,
  sparseProofProblem,
  sparse_proof_root_v1,
  sparse_root_v1,
} from "./helpers.js";
import * as R from "./requests.js";
import { MAX_INLINE_MESSAGE_BYTES } from "./requests.js";
import { Bytes32, KeyBatchReceiptV1 } from "./schema.js";
import { record_header_hash_v1 } from "./signing.js";
import type * as T from "./types.js";
import type * as W from "./wire-types.js";

/** §18 codec bound cbqs.max_wire_frame_bytes: one canonical frame. */
export const MAX_WIRE_FRAME_BYTES = 5_242_880;
/** §18 Maximum of cbqs.max_lane_list_page. */
export const MAX_LANE_LIST_PAGE = 1_024;
/** §18 codec bound cbqs.max_proof_lanes_per_subscription. */
export const MAX_PROOF_LANES_PER_SUBSCRIPTION = 512;
/** §18 codec bounds of an error frame. */
export const MAX_ERROR_MESSAGE_BYTES = 2_048;
export const MAX_ERROR_DETAILS_BYTES = 16_384;

const isZero = (b: Uint8Array): boolean => b.every((x) => x === 0);
const sameRecordId = (a: T.StandardRecordIdV1 | null, b: T.StandardRecordIdV1): boolean =>
  a !== null && a.provider_epoch === b.provider_epoch && a.sequence === b.sequence;
const sameOption = (a: Uint8Array | null, b: Uint8Array | null): boolean => (a === null ? b === null : b !== null && bytesEqual(a, b));

type Problem<V> = { field: keyof V & string; reason: string } | null;

/** A digest, or the reason its preimage has no canonical encoding (a check must not throw EncodeError). */
function digestOr(compute: () => Uint8Array): Uint8Array | string {
  try {
    return compute();
  } catch (err) {
    if (err instanceof EncodeError) return `${err.path}: ${err.reason}`;
    throw err;
  }
}

// ---------------------------------------------------------------- §14.2 self-verifying updates

const GROUP_ACTIONS: readonly T.DeliveryStateActionV1[] = ["GroupCreate", "GroupUpdate", "GroupDelete"];

function deliveryUpdateProblem(u: W.DeliveryStateUpdateV1): Problem<W.DeliveryStateUpdateV1> {
  const { state: s, receipt: r } = u;
  if (r.action !== s.action) return { field: "receipt", reason: `receipt action ${r.action} differs from the state's ${s.action} (§14.2)` };
  for (const f of ["stream_id", "lane_id", "group_id"] as const) {
    if (!bytesEqual(r[f], s[f])) return { field: "receipt", reason: `receipt ${f} differs from the state's (§14.2)` };
  }
  if (!sameRecordId(r.record_id, s.record_id)) return { field: "receipt", reason: "receipt record_id differs from the state's (§14.2)" };
  if (!sameOption(r.lease_id, s.lease_id)) return { field: "receipt", reason: "receipt lease_id differs from the state's (§14.2)" };
  const digest = digestOr(() => delivery_result_state_digest_v1(r.context, s));
  if (typeof digest === "string") return { field: "state", reason: digest };
  if (!bytesEqual(digest, r.resulting_state_digest)) {
    return { field: "receipt", reason: "resulting_state_digest is not delivery_result_state_digest_v1 of the state (§14.2)" };
  }
  return null;
}

/** A valid update, for `action` when given: the receipt copies the state's identities and digest. */
export function deliveryStateUpdateArbitrary(fc: FastCheck, action?: T.DeliveryStateActionV1): Arbitrary<W.DeliveryStateUpdateV1> {
  const states = B.DeliveryResultStateV1.arbitrary(fc);
  const state = action === undefined ? states : states.filter((s) => s.action === action);
  return fc.tuple(state, B.DeliveryStateReceiptV1.arbitrary(fc)).map(([s, r]) => ({
    state: s,
    receipt: {
      ...r,
      action: s.action,
      stream_id: s.stream_id,
      lane_id: s.lane_id,
      group_id: s.group_id,
      record_id: s.record_id,
      lease_id: s.lease_id,
      resulting_state_digest: delivery_result_state_digest_v1(r.context, s),
    },
  }));
}

export const DeliveryStateUpdateV1 = struct<W.DeliveryStateUpdateV1>(
  "DeliveryStateUpdateV1",
  { state: B.DeliveryResultStateV1, receipt: B.DeliveryStateReceiptV1 },
  { check: deliveryUpdateProblem, arbitrary: (fc) => deliveryStateUpdateArbitrary(fc) },
);

function groupUpdateProblem(u: W.GroupStateUpdateV1): Problem<W.GroupStateUpdateV1> {
  const r = u.receipt;
  if (!GROUP_ACTIONS.includes(r.action)) return { field: "receipt", reason: `a group-state update carries a group action, not ${r.action} (§14.2)` };
  let digest: Uint8Array | string;
  if (r.action === "GroupDelete") {
    if (u.config !== null) return { field: "config", reason: "GroupDelete carries no config (§14.2)" };
    digest = digestOr(() => groupDeletedStateDigest(r.context, r.stream_id, r.lane_id, r.group_id));
  } else {
    const c = u.config;
    if (c === null) return { field: "config", reason: `${r.action} carries the resulting config (§14.2)` };
    if (!bytesEqual(c.lane_id, r.lane_id) || !bytesEqual(c.group_id, r.group_id)) {
      return { field: "config", reason: "config lane_id and group_id must equal the receipt's (§14.2)" };
    }
    digest = digestOr(() => groupConfigStateDigest(r.context, r.stream_id, c));
  }
  if (typeof digest === "string") return { field: "receipt", reason: digest };
  if (!bytesEqual(digest, r.resulting_state_digest)) {
    return { field: "receipt", reason: "resulting_state_digest is not the group state digest of this update (§14.2)" };
  }
  return null;
}

export function groupStateUpdateArbitrary(fc: FastCheck, action?: "GroupCreate" | "GroupUpdate" | "GroupDelete"): Arbitrary<W.GroupStateUpdateV1> {
  const actions = action === undefined ? GROUP_ACTIONS : [action];
  return fc
    .tuple(fc.constantFrom(...actions), R.GroupConfigV1.arbitrary(fc), B.DeliveryStateReceiptV1.arbitrary(fc))
    .map(([a, c, r]) => {
      const receipt = { ...r, action: a, record_id: null, lease_id: null };
      if (a === "GroupDelete") {
        return { config: null, receipt: { ...receipt, resulting_state_digest: groupDeletedStateDigest(r.context, r.stream_id, r.lane_id, r.group_id) } };
      }
      const config = { ...c, lane_id: r.lane_id, group_id: r.group_id };
      return { config, receipt: { ...receipt, resulting_state_digest: groupConfigStateDigest(r.context, r.stream_id, config) } };
    });
}

export const GroupStateUpdateV1 = struct<W.GroupStateUpdateV1>(
  "GroupStateUpdateV1",
  { config: option(R.GroupConfigV1), receipt: B.DeliveryStateReceiptV1 },
  { check: groupUpdateProblem, arbitrary: (fc) => groupStateUpdateArbitrary(fc) },
);

// ---------------------------------------------------------------- §13.2 session and append results

export const FastDurableWatermarkV1 = struct<W.FastDurableWatermarkV1>(
  "FastDurableWatermarkV1",
  {
    stream_id: Bytes32,
    provider_epoch: providerEpochV1,
    broker_epoch: u64,
    last_durable_sequence: option(u64),
    checkpoint_anchor: Bytes32,
  },
  {
    // §13.2: "never an unconstrained zero digest" (it is a checkpoint digest or checkpoint genesis).
    check: (m) => (isZero(m.checkpoint_anchor) ? { field: "checkpoint_anchor", reason: "checkpoint_anchor must be nonzero (§13.2)" } : null),
    arbitrary: (_fc, base) => base.map((m) => ({ ...m, checkpoint_anchor: nonzero(m.checkpoint_anchor) })),
  },
);

/** A client append's receipt, made from any receipt by making it a Client/Application one. */
const clientReceipt = (r: T.AppendReceiptV1, id: T.RecordIdV1): T.AppendReceiptV1 => ({
  ...r,
  origin: "Client",
  kind: "Application",
  visible_after_ms: 0n,
  record_id: id,
});

export const AppendResultV1 = struct<W.AppendResultV1>(
  "AppendResultV1",
  { record_id: B.RecordIdV1, append_receipt: option(B.AppendReceiptV1), durable_watermark: option(FastDurableWatermarkV1) },
  {
    check: (a) => {
      const id = a.record_id;
      if (id.type === "Standard") {
        if (a.append_receipt === null) return { field: "append_receipt", reason: "a standard append result carries its append receipt (§13.2)" };
        if (a.durable_watermark !== null) return { field: "durable_watermark", reason: "a standard append result carries no fast watermark (§13.2)" };
        const r = a.append_receipt;
        if (r.record_id.type !== "Standard" || r.record_id.sequence !== id.sequence) {
          return { field: "append_receipt", reason: "the append receipt names another record (§13.2)" };
        }
        if (r.origin !== "Client") return { field: "append_receipt", reason: "an append's receipt is a Client record's (§10)" };
        return null;
      }
      if (a.append_receipt !== null) return { field: "append_receipt", reason: "a fast append result carries no append receipt (§13.2, §14.1)" };
      const m = a.durable_watermark;
      if (m === null) return { field: "durable_watermark", reason: "a fast append result carries the durable watermark (§13.2)" };
      if (m.provider_epoch !== id.provider_epoch || m.broker_epoch !== id.broker_epoch) {
        return { field: "durable_watermark", reason: "the watermark is for another provider/broker lineage (§13.2)" };
      }
      return null;
    },
    arbitrary: (fc, base) =>
      fc.tuple(base, B.AppendReceiptV1.arbitrary(fc), FastDurableWatermarkV1.arbitrary(fc)).map(([a, r, m]) =>
        a.record_id.type === "Standard"
          ? { record_id: a.record_id, append_receipt: clientReceipt(r, a.record_id), durable_watermark: null }
          : { record_id: a.record_id, append_receipt: null, durable_watermark: { ...m, broker_epoch: a.record_id.broker_epoch } },
      ),
  },
);

export const KeyBatchStageResultV1 = struct<W.KeyBatchStageResultV1>(
  "KeyBatchStageResultV1",
  { key_stream_id: Bytes32, batch_digest: Bytes32, total_chunks: u32, accepted_chunks: u32 },
  {
    check: (k) => {
      if (k.total_chunks === 0) return { field: "total_chunks", reason: "total_chunks > 0 (§13.2)" };
      if (k.accepted_chunks > k.total_chunks) return { field: "accepted_chunks", reason: "accepted_chunks <= total_chunks (§13.2)" };
      return null;
    },
    arbitrary: (_fc, base) =>
      base.map((k) => {
        const total = Math.max(k.total_chunks, 1);
        return { ...k, total_chunks: total, accepted_chunks: k.accepted_chunks % (total + 1) };
      }),
  },
);

const byLaneId = (a: { lane_id: Uint8Array }, b: { lane_id: Uint8Array }): number => compareBytes(a.lane_id, b.lane_id);

export const LanePageV1 = struct<W.LanePageV1>(
  "LanePageV1",
  {
    lanes: vec(B.LaneRecordV1, { maxCount: MAX_LANE_LIST_PAGE, strictlyAscending: byLaneId }),
    next_after_lane_id: option(Bytes32),
  },
  {
    // §13.2: a cursor, when present, is the page's final lane id (so an empty page has none).
    check: (p) => {
      const next = p.next_after_lane_id;
      if (next === null) return null;
      const last = p.lanes[p.lanes.length - 1];
      return last !== undefined && bytesEqual(last.lane_id, next)
        ? null
        : { field: "next_after_lane_id", reason: "next_after_lane_id equals the final returned lane id and is absent on an empty page (§13.2)" };
    },
    arbitrary: (_fc, base) =>
      base.map((p) => {
        const last = p.lanes[p.lanes.length - 1];
        return { ...p, next_after_lane_id: last === undefined || p.next_after_lane_id === null ? null : last.lane_id.slice() };
      }),
  },
);

export const SubscriptionStateV1 = struct<W.SubscriptionStateV1>("SubscriptionStateV1", { stream_id: Bytes32, subscription_id: Bytes32 });

/** CreateLane / CloseLane: the affected lane and the lane event's append receipt must tell one story (§8, §13.2). */
function laneMutationResult(name: string, status: W.LaneStatusV1, kind: T.RecordKindV1) {
  return struct<W.LaneMutationResultV1>(
    name,
    { lane: B.LaneRecordV1, receipt: B.AppendReceiptV1 },
    {
      check: ({ lane, receipt }) => {
        if (isZero(lane.lane_id)) return { field: "lane", reason: "the affected lane is a nonzero lane (§8)" };
        if (lane.status !== status) return { field: "lane", reason: `${name} returns a lane with status ${status} (§13.2)` };
        if (!bytesEqual(receipt.stream_id, lane.stream_id)) return { field: "receipt", reason: "the receipt is for another stream than the lane (§13.2)" };
        if (receipt.origin !== "ProviderEvent" || receipt.kind !== kind) {
          return { field: "receipt", reason: `the receipt is a ProviderEvent ${kind} record's (§8, §13.2)` };
        }
        return null;
      },
      arbitrary: (fc, base) =>
        fc.tuple(base, fc.boolean()).map(([v, fast]) => {
          const record_id: T.RecordIdV1 = fast
            ? { type: "Fast", provider_epoch: 0n, broker_epoch: 1n, sequence: 2n }
            : { type: "Standard", provider_epoch: 0n, sequence: 2n };
          return {
            lane: { ...v.lane, lane_id: nonzero(v.lane.lane_id), status },
            receipt: {
              ...v.receipt,
              stream_id: v.lane.stream_id,
              lane_id: new Uint8Array(32),
              origin: "ProviderEvent" as const,
              kind,
              record_id,
              visible_after_ms: 0n,
              expires_at_ms: 0n,
              encryption_generation: 0n,
            },
          };
        }),
    },
  );
}

const CreateLaneResult = laneMutationResult("CreateLaneResult", "Active", "LaneCreated");
const CloseLaneResult = laneMutationResult("CloseLaneResult", "Closed", "LaneClosed");

/** A group-state update whose receipt action is the response method's (§13.2). */
function groupResponse(action: "GroupCreate" | "GroupUpdate" | "GroupDelete"): Codec<W.GroupStateUpdateV1> {
  return refine(
    GroupStateUpdateV1,
    (u) => (u.receipt.action === action ? null : { field: "receipt", reason: `the response carries a ${action} receipt (§13.2)` }),
    (fc) => groupStateUpdateArbitrary(fc, action),
  );
}

/** A delivery-state update whose receipt action is the response method's (§13.2). */
function deliveryResponse(action: T.DeliveryStateActionV1): Codec<W.DeliveryStateUpdateV1> {
  return refine(
    DeliveryStateUpdateV1,
    (u) => (u.receipt.action === action ? null : { field: "receipt", reason: `the response carries a ${action} receipt (§13.2)` }),
    (fc) => deliveryStateUpdateArbitrary(fc, action),
  );
}

const newtype = (tag: number, codec: Codec<any>): VariantDef => ({ tag, kind: "newtype", field: "body", codec });

/** §13.2: 18 variants tagged by the §7.1 method's u16 tag. */
export const CbqsResponseBodyV1 = taggedUnion<W.CbqsResponseBodyV1>(
  "CbqsResponseBodyV1",
  {
    Append: newtype(1, AppendResultV1),
    BeginKeyBatch: newtype(2, KeyBatchStageResultV1),
    PutKeyBatchChunk: newtype(3, KeyBatchStageResultV1),
    CommitKeyBatch: newtype(4, KeyBatchReceiptV1),
    CreateLane: { tag: 5, kind: "struct", codec: CreateLaneResult },
    CloseLane: { tag: 6, kind: "struct", codec: CloseLaneResult },
    ListLanes: newtype(7, LanePageV1),
    CreateGroup: newtype(8, groupResponse("GroupCreate")),
    UpdateGroup: newtype(9, groupResponse("GroupUpdate")),
    DeleteGroup: newtype(10, groupResponse("GroupDelete")),
    OpenSubscription: newtype(11, SubscriptionStateV1),
    CloseSubscription: newtype(12, SubscriptionStateV1),
    Credit: newtype(13, R.CreditV1),
    Ack: newtype(14, deliveryResponse("Ack")),
    Nack: newtype(15, deliveryResponse("Nack")),
    Extend: newtype(16, deliveryResponse("Extend")),
    Reject: newtype(17, deliveryResponse("Reject")),
    Redrive: newtype(18, deliveryResponse("Redrive")),
  },
  2,
);

export const CbqsResponseV1 = struct<W.CbqsResponseV1>("CbqsResponseV1", { request_id: Bytes32, body: CbqsResponseBodyV1 });

// ---------------------------------------------------------------- §13.2 deliveries

export const DeliveryLeaseV1 = struct<W.DeliveryLeaseV1>(
  "DeliveryLeaseV1",
  {
    reference: R.DeliveryLeaseRefV1,
    attempt: u16,
    holder_signing_key_id: Bytes32,
    group_queue_sequence: u64,
    issued_at_ms: u64,
    expires_at_ms: u64,
  },
  {
    check: (l) => {
      if (l.attempt === 0) return { field: "attempt", reason: "lease attempts are one-indexed: attempt 0 is rejected (§13.1)" };
      if (l.group_queue_sequence === 0n) return { field: "group_queue_sequence", reason: "group_queue_sequence is one-indexed (§11.2)" };
      if (l.issued_at_ms > l.expires_at_ms) return { field: "expires_at_ms", reason: "issued_at_ms <= expires_at_ms (§14.2)" };
      return null;
    },
    arbitrary: (_fc, base) =>
      base.map((l) => ({
        ...l,
        attempt: Math.max(l.attempt, 1),
        group_queue_sequence: l.group_queue_sequence === 0n ? 1n : l.group_queue_sequence,
        issued_at_ms: l.issued_at_ms < l.expires_at_ms ? l.issued_at_ms : l.expires_at_ms,
        expires_at_ms: l.issued_at_ms < l.expires_at_ms ? l.expires_at_ms : l.issued_at_ms,
      })),
  },
);

/** §13.2: the LeaseIssue result state a consumer-group delivery's lease describes. */
export function leaseIssueState(lease: W.DeliveryLeaseV1): W.DeliveryResultStateV1 {
  const ref = lease.reference;
  return {
    action: "LeaseIssue",
    stream_id: ref.stream_id,
    lane_id: ref.lane_id,
    group_id: ref.group_id,
    record_id: ref.record_id,
    delivery_cycle_id: ref.delivery_cycle_id,
    lease_id: ref.lease_id,
    attempt: lease.attempt,
    holder_signing_key_id: lease.holder_signing_key_id,
    available_at_ms: null,
    issued_at_ms: lease.issued_at_ms,
    lease_expires_at_ms: lease.expires_at_ms,
    terminal_at_ms: null,
    terminal_expires_at_ms: null,
    reason_hash: null,
    successor_cycle_id: null,
    group_queue_sequence: lease.group_queue_sequence,
  };
}

const HEADER_FIELDS_IN_RECEIPT = [
  "stream_id",
  "lane_id",
  "origin",
  "kind",
  "client_message_id",
  "visible_after_ms",
  "expires_at_ms",
  "encryption_generation",
] as const;

function standardDeliveryProblem(d: W.RecordDeliveryV1, id: T.StandardRecordIdV1): Problem<W.RecordDeliveryV1> {
  const r = d.append_receipt;
  if (r === null) return { field: "append_receipt", reason: "a standard delivery carries its append receipt (§13.2)" };
  if (d.durable_watermark !== null) return { field: "durable_watermark", reason: "a standard delivery carries no fast watermark (§13.2)" };
  if (r.record_id.type !== "Standard" || !sameRecordId(r.record_id, id)) {
    return { field: "append_receipt", reason: "the append receipt names another record (§13.2)" };
  }
  for (const f of HEADER_FIELDS_IN_RECEIPT) {
    const [a, b] = [r[f], d.header[f]];
    const same = a instanceof Uint8Array ? bytesEqual(a, b as Uint8Array) : a === b;
    if (!same) return { field: "append_receipt", reason: `receipt ${f} differs from the header's (§14.1)` };
  }
  if (!bytesEqual(r.header_hash, record_header_hash_v1(d.header))) {
    return { field: "append_receipt", reason: "header_hash is not record_header_hash_v1 of the delivered header (§14.1)" };
  }
  if (!bytesEqual(r.payload_hash, recordPayloadHash(d.payload))) {
    return { field: "append_receipt", reason: "payload_hash is not keccak256 of the delivered payload (§14.1)" };
  }
  if ((d.lease === null) !== (d.delivery_state_receipt === null)) {
    return { field: "delivery_state_receipt", reason: "a leased delivery carries its LeaseIssue receipt, and only a leased one (§13.2)" };
  }
  if (d.lease === null) return null;
  const ref = d.lease.reference;
  if (!bytesEqual(ref.stream_id, d.header.stream_id) || !bytesEqual(ref.lane_id, d.header.lane_id) || !sameRecordId(ref.record_id, id)) {
    return { field: "lease", reason: "the lease names another stream, lane or record (§13.2)" };
  }
  const dsr = d.delivery_state_receipt!;
  if (dsr.action !== "LeaseIssue") return { field: "delivery_state_receipt", reason: "a leased delivery carries a LeaseIssue receipt (§13.2)" };
  if (!bytesEqual(dsr.stream_id, ref.stream_id) || !bytesEqual(dsr.lane_id, ref.lane_id) || !bytesEqual(dsr.group_id, ref.group_id)) {
    return { field: "delivery_state_receipt", reason: "the LeaseIssue receipt names another stream, lane or group (§13.2)" };
  }
  if (!sameRecordId(dsr.record_id, ref.record_id) || !sameOption(dsr.lease_id, ref.lease_id)) {
    return { field: "delivery_state_receipt", reason: "the LeaseIssue receipt names another record or lease (§13.2)" };
  }
  const digest = digestOr(() => delivery_result_state_digest_v1(dsr.context, leaseIssueState(d.lease!)));
  if (typeof digest === "string") return { field: "lease", reason: `the lease is no LeaseIssue state: ${digest}` };
  if (!bytesEqual(digest, dsr.resulting_state_digest)) {
    return { field: "delivery_state_receipt", reason: "resulting_state_digest is not the lease's LeaseIssue state digest (§13.2)" };
  }
  return null;
}

function deliveryProblem(d: W.RecordDeliveryV1): Problem<W.RecordDeliveryV1> {
  // §10: an application payload is bounded by the protocol maximum; key-stream records carry signed objects.
  if (d.header.kind === "Application" && d.payload.length > MAX_INLINE_MESSAGE_BYTES) {
    return { field: "payload", reason: `an Application payload is at most ${MAX_INLINE_MESSAGE_BYTES} bytes (§10, §18)` };
  }
  const id = d.record_id;
  if (id.type === "Standard") return standardDeliveryProblem(d, id);
  if (d.append_receipt !== null) return { field: "append_receipt", reason: "a fast delivery carries no append receipt (§13.2)" };
  if (d.lease !== null) return { field: "lease", reason: "a fast delivery carries no lease (§12, §13.2)" };
  if (d.delivery_state_receipt !== null) return { field: "delivery_state_receipt", reason: "a fast delivery carries no delivery-state receipt (§13.2)" };
  const m = d.durable_watermark;
  if (m === null) return { field: "durable_watermark", reason: "a fast delivery carries the durable watermark (§13.2)" };
  if (!bytesEqual(m.stream_id, d.header.stream_id) || m.provider_epoch !== id.provider_epoch || m.broker_epoch !== id.broker_epoch) {
    return { field: "durable_watermark", reason: "the watermark is for another stream or provider/broker lineage (§13.2)" };
  }
  return null;
}

/** A consistent delivery: fast, standard replay, or consumer-group with its lease and LeaseIssue receipt. */
function deliveryArbitrary(fc: FastCheck, base: Arbitrary<W.RecordDeliveryV1>): Arbitrary<W.RecordDeliveryV1> {
  return fc
    .tuple(base, B.AppendReceiptV1.arbitrary(fc), DeliveryLeaseV1.arbitrary(fc), B.DeliveryStateReceiptV1.arbitrary(fc), FastDurableWatermarkV1.arbitrary(fc), fc.boolean())
    .map(([d, receipt, lease, dsr, mark, leased]): W.RecordDeliveryV1 => {
      const h = d.header;
      if (d.record_id.type === "Fast") {
        return { ...d, append_receipt: null, lease: null, delivery_state_receipt: null, durable_watermark: { ...mark, stream_id: h.stream_id, broker_epoch: d.record_id.broker_epoch } };
      }
      const id = d.record_id;
      const append_receipt: T.AppendReceiptV1 = {
        ...receipt,
        stream_id: h.stream_id,
        lane_id: h.lane_id,
        origin: h.origin,
        kind: h.kind,
        client_message_id: h.client_message_id,
        visible_after_ms: h.visible_after_ms,
        expires_at_ms: h.expires_at_ms,
        encryption_generation: h.encryption_generation,
        record_id: id,
        header_hash: record_header_hash_v1(h),
        payload_hash: recordPayloadHash(d.payload),
      };
      if (!leased) return { ...d, append_receipt, lease: null, delivery_state_receipt: null, durable_watermark: null };
      const ref = { ...lease.reference, stream_id: nonzero(h.stream_id), lane_id: h.lane_id, group_id: nonzero(lease.reference.group_id), record_id: { provider_epoch: 0n, sequence: id.sequence }, delivery_cycle_id: nonzero(lease.reference.delivery_cycle_id), lease_id: nonzero(lease.reference.lease_id) };
      const header = { ...h, stream_id: ref.stream_id };
      const fullLease = { ...lease, reference: ref, holder_signing_key_id: nonzero(lease.holder_signing_key_id) };
      const state = leaseIssueState(fullLease);
      return {
        ...d,
        header,
        append_receipt: { ...append_receipt, stream_id: ref.stream_id, header_hash: record_header_hash_v1(header) },
        lease: fullLease,
        delivery_state_receipt: {
          ...dsr,
          action: "LeaseIssue",
          stream_id: ref.stream_id,
          lane_id: ref.lane_id,
          group_id: ref.group_id,
          record_id: ref.record_id,
          lease_id: ref.lease_id,
          resulting_state_digest: delivery_result_state_digest_v1(dsr.context, state),
        },
        durable_watermark: null,
      };
    });
}

export const RecordDeliveryV1 = struct<W.RecordDeliveryV1>(
  "RecordDeliveryV1",
  {
    subscription_id: Bytes32,
    record_id: B.RecordIdV1,
    header: B.RecordHeaderV1,
    // Key-stream records carry whole signed batches and envelopes: the frame bound governs them.
    payload: varBytes("payload", 0, MAX_WIRE_FRAME_BYTES),
    append_receipt: option(B.AppendReceiptV1),
    lease: option(DeliveryLeaseV1),
    delivery_state_receipt: option(B.DeliveryStateReceiptV1),
    durable_watermark: option(FastDurableWatermarkV1),
  },
  { check: deliveryProblem, arbitrary: deliveryArbitrary },
);

// ---------------------------------------------------------------- §12.2.1 lane proofs and checkpoint frames

export const LanePayloadV1 = struct<W.LanePayloadV1>(
  "LanePayloadV1",
  { lane_sub_root: Bytes32, lane_record_count: u32, lane_first_sequence: u64, lane_last_sequence: u64 },
  {
    // A lane holds count records at strictly increasing sequences between its first and last.
    check: (p) => {
      if (p.lane_record_count === 0 || p.lane_record_count > MAX_FAST_BATCH_RECORDS) {
        return { field: "lane_record_count", reason: `a present lane holds 1..=${MAX_FAST_BATCH_RECORDS} records (§12.2)` };
      }
      if (p.lane_first_sequence > p.lane_last_sequence) return { field: "lane_last_sequence", reason: "lane_last_sequence is below lane_first_sequence (§12.2.1)" };
      const span = p.lane_last_sequence - p.lane_first_sequence + 1n;
      if ((p.lane_record_count === 1) !== (span === 1n) || BigInt(p.lane_record_count) > span) {
        return { field: "lane_record_count", reason: "lane_record_count strictly increasing sequences cannot start and end there (§12.2.1)" };
      }
      return null;
    },
    arbitrary: (fc, base) =>
      fc.tuple(base, fc.integer({ min: 0, max: 3 })).map(([p, extra]) => {
        const [a, b] = p.lane_first_sequence <= p.lane_last_sequence ? [p.lane_first_sequence, p.lane_last_sequence] : [p.lane_last_sequence, p.lane_first_sequence];
        const span = b - a + 1n;
        const count = span === 1n ? 1 : Number(BigInt(2 + extra) < span ? BigInt(2 + extra) : span);
        return { ...p, lane_first_sequence: a, lane_last_sequence: b, lane_record_count: count };
      }),
  },
);

function laneProofProblem(p: W.LaneProofV1): Problem<W.LaneProofV1> {
  const bad = sparseProofProblem(p);
  if (bad) return { field: bad.field, reason: bad.reason };
  if (p.payload !== null && bytesEqual(fast_lane_payload_digest_v1(p.lane_id, p.payload), SPARSE_EMPTY_V1[SPARSE_DEPTH_V1]!)) {
    return { field: "payload", reason: "a present leaf must not equal EMPTY[256] (§12.2)" };
  }
  return null;
}

/** A lane map of a few lanes and a proof at `key` in it, present or absent. */
function proofIn(entries: { lane_id: Uint8Array; payload: W.LanePayloadV1 }[], key: Uint8Array): W.LaneProofV1 {
  const map = entries.map((e) => ({ key: e.lane_id, leaf: fast_lane_payload_digest_v1(e.lane_id, e.payload) }));
  const proof = sparseProof(map, key);
  const own = entries.find((e) => bytesEqual(e.lane_id, key));
  return { lane_id: key.slice(), payload: own === undefined ? null : own.payload, bitmap: proof.bitmap, siblings: proof.siblings };
}

const laneEntries = (fc: FastCheck) =>
  fc.uniqueArray(fc.record({ lane_id: Bytes32.arbitrary(fc), payload: LanePayloadV1.arbitrary(fc) }), {
    maxLength: 4,
    selector: (e) => toHex(e.lane_id),
  });

export const LaneProofV1 = struct<W.LaneProofV1>(
  "LaneProofV1",
  {
    lane_id: Bytes32,
    payload: option(LanePayloadV1),
    bitmap: Bytes32,
    siblings: vec(Bytes32, { maxCount: SPARSE_DEPTH_V1 }),
  },
  {
    check: laneProofProblem,
    arbitrary: (fc) =>
      fc.tuple(laneEntries(fc), Bytes32.arbitrary(fc), fc.nat()).map(([entries, other, pick]) =>
        proofIn(entries, entries.length > 0 && pick % 2 === 0 ? entries[pick % entries.length]!.lane_id : other),
      ),
  },
);

function checkpointFrameProblem(f: W.CheckpointFrameV1): Problem<W.CheckpointFrameV1> {
  const r = f.receipt;
  for (const p of f.lanes) {
    if (p.payload === null) continue;
    if (p.payload.lane_first_sequence < r.first_sequence || p.payload.lane_last_sequence > r.last_sequence) {
      return { field: "lanes", reason: "a lane's sequences lie outside the receipt's range (§12.2.1)" };
    }
  }
  if (f.lanes.length === 0) return null;
  // §12.2.1: every proof folds to one candidate map root, and that root must reproduce the signed
  // ordered_range_root together with the receipt's own range fields.
  const roots = f.lanes.map((p) => sparse_proof_root_v1(p.lane_id, p.payload === null ? null : fast_lane_payload_digest_v1(p.lane_id, p.payload), p));
  if (!roots.every((root) => bytesEqual(root, roots[0]!))) return { field: "lanes", reason: "the lane proofs fold to different lane map roots (§12.2.1)" };
  const count = Number(r.last_sequence - r.first_sequence + 1n);
  if (!bytesEqual(fast_ordered_range_root_v1(r, count, roots[0]!), r.ordered_range_root)) {
    return { field: "lanes", reason: "the lane map root of the proofs does not reproduce the receipt's ordered_range_root (§12.2.1)" };
  }
  return null;
}

/** A frame whose receipt commits a real lane map, with proofs for a scope of present and absent lanes. */
function checkpointFrameArbitrary(fc: FastCheck, base: Arbitrary<W.CheckpointFrameV1>): Arbitrary<W.CheckpointFrameV1> {
  return fc
    .tuple(base, laneEntries(fc), fc.uniqueArray(Bytes32.arbitrary(fc), { maxLength: 2, selector: (k) => toHex(k) }), fc.nat(), fc.boolean())
    .map(([f, entries, absent, pick, fullStream]) => {
      const r = f.receipt;
      const span = r.last_sequence - r.first_sequence + 1n;
      // Each lane's payload moved into the receipt's range: its offsets are taken modulo the span.
      const placed = entries.map((e) => {
        const a = r.first_sequence + ((e.payload.lane_first_sequence - 0n) % span);
        const width = e.payload.lane_last_sequence - e.payload.lane_first_sequence;
        const b = a + (width % (r.last_sequence - a + 1n));
        const count = a === b ? 1 : 2;
        return { lane_id: e.lane_id, payload: { ...e.payload, lane_first_sequence: a, lane_last_sequence: b, lane_record_count: count } };
      });
      const map = placed.map((e) => ({ key: e.lane_id, leaf: fast_lane_payload_digest_v1(e.lane_id, e.payload) }));
      const receipt = { ...r, ordered_range_root: fast_ordered_range_root_v1(r, Number(span), sparse_root_v1(map)) };
      if (fullStream) return { ...f, receipt, lanes: [] };
      const scope = [...placed.filter((_, i) => (pick >> i) % 2 === 0).map((e) => e.lane_id), ...absent.filter((k) => !placed.some((e) => bytesEqual(e.lane_id, k)))];
      const lanes = scope.sort(compareBytes).map((k) => proofIn(placed, k));
      return { ...f, receipt, lanes };
    });
}

export const CheckpointFrameV1 = struct<W.CheckpointFrameV1>(
  "CheckpointFrameV1",
  {
    subscription_id: Bytes32,
    receipt: B.CheckpointReceiptV1,
    lanes: vec(LaneProofV1, { maxCount: MAX_PROOF_LANES_PER_SUBSCRIPTION, strictlyAscending: byLaneId }),
  },
  { check: checkpointFrameProblem, arbitrary: checkpointFrameArbitrary },
);

// ---------------------------------------------------------------- §13.2 errors

const MESSAGE_CHARS: readonly string[] = [..."abcdefghijklmnopqrstuvwxyz ABC0123456789.,:;-_()", "é", "€", "😀", "\n"];

export const CbqsErrorV1 = struct<W.CbqsErrorV1>("CbqsErrorV1", {
  request_id: option(Bytes32),
  subscription_id: option(Bytes32),
  code: u16,
  message: utf8String("message", {
    maxBytes: MAX_ERROR_MESSAGE_BYTES,
    arbitrary: (fc) => fc.string({ unit: fc.constantFrom(...MESSAGE_CHARS), maxLength: 40 }),
  }),
  details: varBytes("details", 0, MAX_ERROR_DETAILS_BYTES),
});
