// Broker-side objects of CIP-39 (§8, §10, §12, §14.1, §14.2, §15): records, receipts, lane
// records, delivery result states, retention anchors and the snapshot manifest. No consensus path
// reads them, but they share the canonical codec and the §14 signing registry. Each struct
// `check` is a rule the spec states about the object alone; rules that need another artifact or
// chain state are a verifier's (docs/guides/verify-a-broker.md "Wire types").
import {
  enumeration,
  fixedBytes,
  option,
  providerEpochV1,
  struct,
  taggedUnion,
  u16,
  u64,
  varBytes,
  type Arbitrary,
  type FastCheck,
} from "./core.js";
import { Bytes32, CbqsSigningContextV1, FinalizedViewV1, Signature } from "./schema.js";
import type * as T from "./types.js";
import type * as W from "./wire-types.js";

export const Bytes24 = fixedBytes(24, "Bytes24");

const U64_MAX = (1n << 64n) - 1n;
const isZero = (b: Uint8Array): boolean => b.every((x) => x === 0);
/** A nonzero copy: arbitraries use it where the spec forbids the all-zero digest. */
export function nonzero(b: Uint8Array): Uint8Array {
  if (!isZero(b)) return b;
  const out = b.slice();
  out[out.length - 1] = 1;
  return out;
}
const ZERO32 = new Uint8Array(32);
const ZERO24 = new Uint8Array(24);

export const RecordOriginV1 = enumeration<T.RecordOriginV1>("RecordOriginV1", { Client: 1, ProviderEvent: 2 });
export const RecordKindV1 = enumeration<T.RecordKindV1>("RecordKindV1", {
  Application: 1,
  LaneCreated: 2,
  LaneClosed: 3,
  KeyBatchHeader: 4,
  KeyEnvelope: 5,
});

export const StandardRecordIdV1 = struct<T.StandardRecordIdV1>("StandardRecordIdV1", {
  provider_epoch: providerEpochV1,
  sequence: u64,
});
export const FastRecordIdV1 = struct<T.FastRecordIdV1>("FastRecordIdV1", {
  provider_epoch: providerEpochV1,
  broker_epoch: u64,
  sequence: u64,
});
/** §14.1 tagged union; §14 table: Standard = 1, Fast = 2. */
export const RecordIdV1 = taggedUnion<T.RecordIdV1>("RecordIdV1", {
  Standard: { tag: 1, kind: "struct", codec: StandardRecordIdV1 },
  Fast: { tag: 2, kind: "struct", codec: FastRecordIdV1 },
});

const LANE_EVENT_KINDS: readonly T.RecordKindV1[] = ["LaneCreated", "LaneClosed"];
const PROVIDER_KINDS: readonly T.RecordKindV1[] = ["LaneCreated", "LaneClosed", "KeyBatchHeader", "KeyEnvelope"];

/** The delivery-mechanics fields a record header and its append receipt share. */
type RecordShape = Pick<T.RecordHeaderV1, "lane_id" | "origin" | "kind" | "visible_after_ms" | "expires_at_ms" | "encryption_generation">;

/**
 * §10 (and §8, §9.3 for the provider events): a client append is `Client`/`Application`; a provider
 * event is `ProviderEvent` with a lane-event or key-batch kind, on the all-zero default lane, with
 * no application deadline; a lane event has encryption generation 0; no v1 record is delayed.
 */
function recordShapeProblem(v: RecordShape): { field: keyof RecordShape; reason: string } | null {
  if ((v.origin === "Client") !== (v.kind === "Application")) {
    return { field: "kind", reason: `a ${v.origin} record cannot be of kind ${v.kind} (§10: Client appends are Application, provider events a lane-event or key-batch kind)` };
  }
  if (v.visible_after_ms !== 0n) return { field: "visible_after_ms", reason: "visible_after_ms is 0 for every v1 record (§10)" };
  if (v.origin === "ProviderEvent") {
    if (!isZero(v.lane_id)) return { field: "lane_id", reason: "a provider event is appended to the all-zero default lane (§8, §9.3, §10)" };
    if (v.expires_at_ms !== 0n) return { field: "expires_at_ms", reason: "a provider event has no application deadline: expires_at_ms = 0 (§9.3, §10)" };
    if (LANE_EVENT_KINDS.includes(v.kind) && v.encryption_generation !== 0n) {
      return { field: "encryption_generation", reason: "a lane event has encryption_generation 0 (§10)" };
    }
  }
  return null;
}

/** Makes an arbitrary record shape valid: the client/provider split decides every other field. */
function shapeRecord<V extends RecordShape>(v: V, pick: number): V {
  if (v.origin === "Client") return { ...v, kind: "Application", visible_after_ms: 0n };
  const kind = PROVIDER_KINDS.includes(v.kind) ? v.kind : PROVIDER_KINDS[pick % PROVIDER_KINDS.length]!;
  return {
    ...v,
    kind,
    lane_id: ZERO32.slice(),
    visible_after_ms: 0n,
    expires_at_ms: 0n,
    encryption_generation: LANE_EVENT_KINDS.includes(kind) ? 0n : v.encryption_generation,
  };
}

export const RecordHeaderV1 = struct<T.RecordHeaderV1>(
  "RecordHeaderV1",
  {
    stream_id: Bytes32,
    lane_id: Bytes32,
    origin: RecordOriginV1,
    kind: RecordKindV1,
    client_message_id: Bytes32,
    created_at_ms: u64,
    visible_after_ms: u64,
    expires_at_ms: u64,
    encryption_generation: u64,
    nonce: Bytes24,
  },
  {
    check: (h) => {
      const bad = recordShapeProblem(h);
      if (bad) return bad;
      // §9.3, §10: provider events are cleartext with a zero nonce.
      if (h.origin === "ProviderEvent" && !isZero(h.nonce)) return { field: "nonce", reason: "a provider event's nonce is zero (§9.3, §10)" };
      return null;
    },
    arbitrary: (fc, base) =>
      fc.tuple(base, fc.nat()).map(([h, pick]) => {
        const v = shapeRecord(h, pick);
        return v.origin === "ProviderEvent" ? { ...v, nonce: ZERO24.slice() } : v;
      }),
  },
);

export const AppendReceiptV1 = struct<T.AppendReceiptV1>(
  "AppendReceiptV1",
  {
    context: CbqsSigningContextV1,
    served_at: FinalizedViewV1,
    stream_id: Bytes32,
    lane_id: Bytes32,
    origin: RecordOriginV1,
    kind: RecordKindV1,
    record_id: RecordIdV1,
    client_message_id: Bytes32,
    header_hash: Bytes32,
    payload_hash: Bytes32,
    visible_after_ms: u64,
    expires_at_ms: u64,
    encryption_generation: u64,
    previous_global_receipt: Bytes32,
    previous_lane_receipt: Bytes32,
    committed_at_ms: u64,
    signature: Signature,
  },
  {
    check: (r) => {
      const bad = recordShapeProblem(r);
      if (bad) return bad;
      // §14.1: fast application appends get no append receipt; a fast record id is a lane event's.
      if (r.record_id.type === "Fast" && !LANE_EVENT_KINDS.includes(r.kind)) {
        return { field: "record_id", reason: "only a lane event on a fast stream has a receipt with a FastRecordIdV1 (§8, §14.1)" };
      }
      return null;
    },
    arbitrary: (fc, base) =>
      fc.tuple(base, fc.nat()).map(([r, pick]) => {
        if (r.record_id.type !== "Fast") return shapeRecord(r, pick);
        return shapeRecord({ ...r, origin: "ProviderEvent" as const, kind: LANE_EVENT_KINDS[pick % 2]! }, pick);
      }),
  },
);

export const FastLineageV1 = struct<T.FastLineageV1>("FastLineageV1", {
  provider_epoch: providerEpochV1,
  broker_epoch: u64,
});
export const BrokerTransitionKindV1 = enumeration<T.BrokerTransitionKindV1>("BrokerTransitionKindV1", {
  Clean: 1,
  Void: 2,
});

export const BrokerEpochTransitionV1 = struct<T.BrokerEpochTransitionV1>(
  "BrokerEpochTransitionV1",
  {
    context: CbqsSigningContextV1,
    served_at: FinalizedViewV1,
    stream_id: Bytes32,
    provider_epoch: providerEpochV1,
    previous_lineage: option(FastLineageV1),
    replacement_broker_epoch: u64,
    kind: BrokerTransitionKindV1,
    last_durable_checkpoint: Bytes32,
    last_durable_sequence: option(u64),
    last_provisional_sequence: option(u64),
    created_at_ms: u64,
    signature: Signature,
  },
  {
    check: (t) => {
      // §14.1: absence is never an unconstrained zero digest; genesis anchors to checkpoint genesis.
      if (isZero(t.last_durable_checkpoint)) {
        return { field: "last_durable_checkpoint", reason: "last_durable_checkpoint is a checkpoint digest, never zero (§12.1, §14.1)" };
      }
      if (t.previous_lineage === null) {
        // §12.1: only a new stream has no predecessor, and it starts at broker epoch 0, Clean, empty.
        if (t.replacement_broker_epoch !== 0n) {
          return { field: "replacement_broker_epoch", reason: "a transition without previous_lineage starts broker epoch 0 (§12.1)" };
        }
        if (t.kind !== "Clean") return { field: "kind", reason: "a new stream's first transition is Clean (§12.1)" };
        if (t.last_durable_sequence !== null || t.last_provisional_sequence !== null) {
          return { field: "last_durable_sequence", reason: "a new stream's first transition has no watermarks (§12.1)" };
        }
      } else if (t.previous_lineage.broker_epoch + 1n !== t.replacement_broker_epoch) {
        // §12.1: every restart increments broker_epoch by one and signs one transition for it.
        return { field: "replacement_broker_epoch", reason: "replacement_broker_epoch must be previous_lineage.broker_epoch + 1 (§12.1)" };
      }
      // §12.1: Clean carries both watermarks equal, or both absent (empty genesis lineage).
      if (t.kind === "Clean" && t.last_durable_sequence !== t.last_provisional_sequence) {
        return { field: "last_provisional_sequence", reason: "a Clean transition needs equal (or both absent) watermarks (§12.1)" };
      }
      // §12: the provisional watermark is the highest record emitted, so it never trails the durable one.
      if (t.last_durable_sequence !== null && t.last_provisional_sequence !== null && t.last_provisional_sequence < t.last_durable_sequence) {
        return { field: "last_provisional_sequence", reason: "last_provisional_sequence is below last_durable_sequence (§12)" };
      }
      return null;
    },
    arbitrary: (_fc, base) =>
      base.map((t) => {
        const v = { ...t, last_durable_checkpoint: nonzero(t.last_durable_checkpoint) };
        if (v.previous_lineage === null) {
          return { ...v, replacement_broker_epoch: 0n, kind: "Clean" as const, last_durable_sequence: null, last_provisional_sequence: null };
        }
        const previous = v.previous_lineage.broker_epoch === U64_MAX ? U64_MAX - 1n : v.previous_lineage.broker_epoch;
        const w = { ...v, previous_lineage: { ...v.previous_lineage, broker_epoch: previous }, replacement_broker_epoch: previous + 1n };
        if (w.kind === "Clean") return { ...w, last_provisional_sequence: w.last_durable_sequence };
        const [d, p] = [w.last_durable_sequence, w.last_provisional_sequence];
        return d !== null && p !== null && p < d ? { ...w, last_durable_sequence: p, last_provisional_sequence: d } : w;
      }),
  },
);

/** §12.2: the protocol maximum of records in one checkpointed batch. */
export const MAX_CHECKPOINT_RECORDS = 65_536;

export const CheckpointReceiptV1 = struct<T.CheckpointReceiptV1>(
  "CheckpointReceiptV1",
  {
    context: CbqsSigningContextV1,
    served_at: FinalizedViewV1,
    stream_id: Bytes32,
    provider_epoch: providerEpochV1,
    broker_epoch: u64,
    first_sequence: u64,
    last_sequence: u64,
    ordered_range_root: Bytes32,
    previous_checkpoint: Bytes32,
    durable_high_water: u64,
    committed_at_ms: u64,
    signature: Signature,
  },
  {
    // §12.2: a non-empty batch of at most 65,536 records, nonzero commitments, and the durable
    // watermark at the batch's last record. Each is a property of the receipt alone.
    check: (c) => {
      if (c.first_sequence > c.last_sequence) {
        return { field: "last_sequence", reason: "last_sequence is below first_sequence: a batch is non-empty (§12.2)" };
      }
      if (c.last_sequence - c.first_sequence + 1n > BigInt(MAX_CHECKPOINT_RECORDS)) {
        return { field: "last_sequence", reason: `the batch holds more than ${MAX_CHECKPOINT_RECORDS} records (§12.2)` };
      }
      if (isZero(c.ordered_range_root)) return { field: "ordered_range_root", reason: "ordered_range_root must be nonzero (§12.2)" };
      if (isZero(c.previous_checkpoint)) return { field: "previous_checkpoint", reason: "previous_checkpoint must be nonzero (§12.2)" };
      if (c.durable_high_water !== c.last_sequence) {
        return { field: "durable_high_water", reason: "durable_high_water must equal last_sequence (§12.2)" };
      }
      return null;
    },
    arbitrary: (fc, base) =>
      fc
        .tuple(base, fc.oneof(fc.bigInt({ min: 0n, max: U64_MAX - 65_535n }), fc.constant(U64_MAX - 65_535n)), fc.integer({ min: 1, max: MAX_CHECKPOINT_RECORDS }))
        .map(([c, first, count]) => {
          const last = first + BigInt(count) - 1n;
          return {
            ...c,
            first_sequence: first,
            last_sequence: last,
            durable_high_water: last,
            ordered_range_root: nonzero(c.ordered_range_root),
            previous_checkpoint: nonzero(c.previous_checkpoint),
          };
        }),
  },
);

export const DeliveryStateActionV1 = enumeration<T.DeliveryStateActionV1>("DeliveryStateActionV1", {
  Ack: 1,
  Nack: 2,
  Extend: 3,
  Reject: 4,
  Redrive: 5,
  GroupCreate: 6,
  GroupUpdate: 7,
  GroupDelete: 8,
  LeaseIssue: 9,
  LeaseExpire: 10,
  AttemptsExhaust: 11,
  RecordExpire: 12,
});

/** §14.2: which of record_id / lease_id each action carries ("optional" = either). */
const RECEIPT_IDS: Readonly<Record<T.DeliveryStateActionV1, readonly [record: boolean, lease: boolean | "optional"]>> = {
  Ack: [true, true],
  Nack: [true, true],
  Extend: [true, true],
  Reject: [true, true],
  Redrive: [true, false],
  GroupCreate: [false, false],
  GroupUpdate: [false, false],
  GroupDelete: [false, false],
  LeaseIssue: [true, true],
  LeaseExpire: [true, true],
  AttemptsExhaust: [true, true],
  RecordExpire: [true, "optional"],
};

export const DeliveryStateReceiptV1 = struct<T.DeliveryStateReceiptV1>(
  "DeliveryStateReceiptV1",
  {
    context: CbqsSigningContextV1,
    served_at: FinalizedViewV1,
    stream_id: Bytes32,
    lane_id: Bytes32,
    group_id: Bytes32,
    provider_epoch: providerEpochV1,
    action: DeliveryStateActionV1,
    record_id: option(StandardRecordIdV1),
    lease_id: option(Bytes32),
    resulting_state_digest: Bytes32,
    previous_group_receipt: Bytes32,
    committed_at_ms: u64,
    signature: Signature,
  },
  {
    check: (r) => {
      const [record, lease] = RECEIPT_IDS[r.action];
      if ((r.record_id !== null) !== record) {
        return { field: "record_id", reason: `record_id must be ${record ? "present" : "absent"} for ${r.action} (§14.2)` };
      }
      if (lease !== "optional" && (r.lease_id !== null) !== lease) {
        return { field: "lease_id", reason: `lease_id must be ${lease ? "present" : "absent"} for ${r.action} (§14.2)` };
      }
      return null;
    },
    arbitrary: (fc, base) =>
      fc.tuple(base, StandardRecordIdV1.arbitrary(fc), Bytes32.arbitrary(fc)).map(([r, id, lease]) => {
        const [record, leaseRule] = RECEIPT_IDS[r.action];
        const leaseId = leaseRule === "optional" ? r.lease_id : leaseRule ? lease : null;
        return { ...r, record_id: record ? id : null, lease_id: leaseId };
      }),
  },
);

export const StandardRetentionAnchorV1 = struct<T.StandardRetentionAnchorV1>(
  "StandardRetentionAnchorV1",
  {
    context: CbqsSigningContextV1,
    served_at: FinalizedViewV1,
    stream_id: Bytes32,
    provider_epoch: providerEpochV1,
    lane_id: option(Bytes32),
    first_retained_sequence: u64,
    previous_global_receipt: Bytes32,
    previous_lane_receipt: option(Bytes32),
    committed_at_ms: u64,
    signature: Signature,
  },
  {
    // §15: lane_id and previous_lane_receipt are present together or absent together.
    check: (a) =>
      (a.lane_id === null) !== (a.previous_lane_receipt === null)
        ? { field: "previous_lane_receipt", reason: "lane_id and previous_lane_receipt must be present together (§15)" }
        : null,
    arbitrary: (fc, base) =>
      fc.tuple(base, Bytes32.arbitrary(fc)).map(([a, d]) => ({
        ...a,
        previous_lane_receipt: a.lane_id === null ? null : (a.previous_lane_receipt ?? d),
      })),
  },
);

export const GroupRetentionAnchorV1 = struct<T.GroupRetentionAnchorV1>("GroupRetentionAnchorV1", {
  context: CbqsSigningContextV1,
  served_at: FinalizedViewV1,
  stream_id: Bytes32,
  provider_epoch: providerEpochV1,
  lane_id: Bytes32,
  group_id: Bytes32,
  latest_retained_receipt: Bytes32,
  group_queue_sequence: u64,
  committed_at_ms: u64,
  signature: Signature,
});

export const FastRetentionAnchorV1 = struct<T.FastRetentionAnchorV1>("FastRetentionAnchorV1", {
  context: CbqsSigningContextV1,
  served_at: FinalizedViewV1,
  stream_id: Bytes32,
  provider_epoch: providerEpochV1,
  broker_epoch: u64,
  first_retained_sequence: u64,
  previous_checkpoint: Bytes32,
  committed_at_ms: u64,
  signature: Signature,
});

// ---------------------------------------------------------------- §8 lanes

/** §8 `Active | Closed`, untagged there: 1-based in declaration order (D-0152). */
export const LaneStatusV1 = enumeration<W.LaneStatusV1>("LaneStatusV1", { Active: 1, Closed: 2 });

export const LaneRecordV1 = struct<W.LaneRecordV1>("LaneRecordV1", {
  stream_id: Bytes32,
  lane_id: Bytes32,
  status: LaneStatusV1,
  created_at_ms: u64,
  metadata_hash: Bytes32,
});

export const LaneEventV1 = struct<W.LaneEventV1>("LaneEventV1", {
  stream_id: Bytes32,
  lane_id: Bytes32,
  status: LaneStatusV1,
  metadata_hash: Bytes32,
  occurred_at_ms: u64,
});

// ---------------------------------------------------------------- §14.2 delivery result state

export type DeliveryResultOption =
  | "lease_id"
  | "holder_signing_key_id"
  | "available_at_ms"
  | "issued_at_ms"
  | "lease_expires_at_ms"
  | "terminal_at_ms"
  | "terminal_expires_at_ms"
  | "reason_hash"
  | "successor_cycle_id";

const RESULT_OPTIONS: readonly DeliveryResultOption[] = [
  "lease_id",
  "holder_signing_key_id",
  "available_at_ms",
  "issued_at_ms",
  "lease_expires_at_ms",
  "terminal_at_ms",
  "terminal_expires_at_ms",
  "reason_hash",
  "successor_cycle_id",
];

/** One allowed option combination: `required` present, `optional` either, every other option absent. */
export interface DeliveryResultShape {
  required: readonly DeliveryResultOption[];
  optional?: readonly DeliveryResultOption[];
}

/**
 * §14.2 "Required result fields", one row per record-state action (Nack has its two outcomes,
 * RecordExpire its optional lease). Group actions have no record result state.
 */
export const DELIVERY_RESULT_SHAPES: Readonly<Partial<Record<T.DeliveryStateActionV1, readonly DeliveryResultShape[]>>> = {
  Ack: [{ required: ["lease_id", "terminal_at_ms"] }],
  Nack: [{ required: ["lease_id", "available_at_ms"] }, { required: ["lease_id", "terminal_at_ms", "terminal_expires_at_ms"] }],
  Extend: [{ required: ["lease_id", "holder_signing_key_id", "issued_at_ms", "lease_expires_at_ms"] }],
  Reject: [{ required: ["lease_id", "terminal_at_ms", "terminal_expires_at_ms", "reason_hash"] }],
  Redrive: [{ required: ["available_at_ms", "successor_cycle_id"] }],
  LeaseIssue: [{ required: ["lease_id", "holder_signing_key_id", "issued_at_ms", "lease_expires_at_ms"] }],
  LeaseExpire: [{ required: ["lease_id", "lease_expires_at_ms", "available_at_ms"] }],
  AttemptsExhaust: [{ required: ["lease_id", "lease_expires_at_ms", "terminal_at_ms", "terminal_expires_at_ms"] }],
  RecordExpire: [{ required: ["terminal_at_ms"], optional: ["lease_id"] }],
};

const fitsShape = (s: W.DeliveryResultStateV1, shape: DeliveryResultShape): boolean =>
  RESULT_OPTIONS.every((f) => (s[f] !== null) === shape.required.includes(f) || (shape.optional ?? []).includes(f));

/** The §14.2 table and inequalities; `delivery_result_state_digest_v1` encodes only what passes. */
function deliveryResultProblem(s: W.DeliveryResultStateV1): { field: keyof W.DeliveryResultStateV1; reason: string } | null {
  const shapes = DELIVERY_RESULT_SHAPES[s.action];
  if (!shapes) return { field: "action", reason: `${s.action} is a group action and has no record result state (§14.2)` };
  if (!shapes.some((shape) => fitsShape(s, shape))) {
    const shape = shapes[0]!;
    const field = RESULT_OPTIONS.find((f) => (s[f] !== null) !== shape.required.includes(f) && !(shape.optional ?? []).includes(f))!;
    return { field, reason: `${field} must be ${s[field] === null ? "present" : "absent"} for ${s.action} (§14.2 required result fields)` };
  }
  // Attempts are one-indexed; a redrive names a new cycle whose first lease is still to come.
  const wantsAttempt = s.action === "Redrive" ? false : s.action === "RecordExpire" ? s.lease_id !== null : true;
  if ((s.attempt !== 0) !== wantsAttempt) {
    return { field: "attempt", reason: `attempt must be ${wantsAttempt ? "nonzero" : "zero"} for ${s.action}${s.action === "RecordExpire" ? (wantsAttempt ? " with a lease" : " without a lease") : ""} (§14.2)` };
  }
  if (s.group_queue_sequence === 0n) return { field: "group_queue_sequence", reason: "group_queue_sequence is one-indexed: nonzero (§11.2, §14.2)" };
  for (const f of ["stream_id", "group_id", "delivery_cycle_id", "lease_id", "holder_signing_key_id", "successor_cycle_id"] as const) {
    const v = s[f];
    if (v !== null && isZero(v)) return { field: f, reason: `${f} must be nonzero (§14.2)` };
  }
  if (s.issued_at_ms !== null && s.lease_expires_at_ms !== null && s.issued_at_ms > s.lease_expires_at_ms) {
    return { field: "lease_expires_at_ms", reason: "issued_at_ms <= lease_expires_at_ms (§14.2)" };
  }
  if (s.action === "LeaseExpire" && s.available_at_ms! < s.lease_expires_at_ms!) {
    return { field: "available_at_ms", reason: "a LeaseExpire's available_at_ms >= lease_expires_at_ms (§14.2)" };
  }
  if (s.terminal_expires_at_ms !== null && s.terminal_at_ms! > s.terminal_expires_at_ms) {
    return { field: "terminal_expires_at_ms", reason: "terminal_at_ms <= terminal_expires_at_ms for a dead-letter state (§14.2)" };
  }
  if (s.action === "AttemptsExhaust" && s.terminal_at_ms! < s.lease_expires_at_ms!) {
    return { field: "terminal_at_ms", reason: "exhaustion cannot precede the last lease expiry (§14.2)" };
  }
  return null;
}

/** A valid state for `action` built from arbitrary material, the times sorted so every inequality holds. */
function deliveryResultArbitrary(fc: FastCheck, base: Arbitrary<W.DeliveryResultStateV1>): Arbitrary<W.DeliveryResultStateV1> {
  const actions = Object.keys(DELIVERY_RESULT_SHAPES) as T.DeliveryStateActionV1[];
  return fc
    .tuple(base, fc.constantFrom(...actions), fc.nat(), fc.array(fc.bigInt({ min: 0n, max: U64_MAX }), { minLength: 4, maxLength: 4 }), fc.integer({ min: 1, max: 0xffff }), fc.boolean())
    .map(([b, action, pick, times, attempt, leased]) => {
      const shapes = DELIVERY_RESULT_SHAPES[action]!;
      const shape = shapes[pick % shapes.length]!;
      const present = new Set<DeliveryResultOption>([...shape.required, ...(action === "RecordExpire" && leased ? (["lease_id"] as const) : [])]);
      const [t0, t1, t2, t3] = [...times].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)) as [bigint, bigint, bigint, bigint];
      // issued <= lease expiry <= available / terminal <= terminal expiry: every §14.2 inequality at once.
      const value: Record<DeliveryResultOption, unknown> = {
        lease_id: nonzero(b.lease_id ?? b.delivery_cycle_id),
        holder_signing_key_id: nonzero(b.holder_signing_key_id ?? b.group_id),
        available_at_ms: t2,
        issued_at_ms: t0,
        lease_expires_at_ms: t1,
        terminal_at_ms: t2,
        terminal_expires_at_ms: t3,
        reason_hash: b.reason_hash ?? b.stream_id,
        successor_cycle_id: nonzero(b.successor_cycle_id ?? b.delivery_cycle_id),
      };
      const options = Object.fromEntries(RESULT_OPTIONS.map((f) => [f, present.has(f) ? value[f] : null]));
      const wantsAttempt = action === "Redrive" ? false : action === "RecordExpire" ? present.has("lease_id") : true;
      return {
        ...b,
        ...options,
        action,
        stream_id: nonzero(b.stream_id),
        group_id: nonzero(b.group_id),
        delivery_cycle_id: nonzero(b.delivery_cycle_id),
        attempt: wantsAttempt ? attempt : 0,
        group_queue_sequence: b.group_queue_sequence === 0n ? 1n : b.group_queue_sequence,
      } as W.DeliveryResultStateV1;
    });
}

export const DeliveryResultStateV1 = struct<W.DeliveryResultStateV1>(
  "DeliveryResultStateV1",
  {
    action: DeliveryStateActionV1,
    stream_id: Bytes32,
    lane_id: Bytes32,
    group_id: Bytes32,
    record_id: StandardRecordIdV1,
    delivery_cycle_id: Bytes32,
    lease_id: option(Bytes32),
    attempt: u16,
    holder_signing_key_id: option(Bytes32),
    available_at_ms: option(u64),
    issued_at_ms: option(u64),
    lease_expires_at_ms: option(u64),
    terminal_at_ms: option(u64),
    terminal_expires_at_ms: option(u64),
    reason_hash: option(Bytes32),
    successor_cycle_id: option(Bytes32),
    group_queue_sequence: u64,
  },
  { check: deliveryResultProblem, arbitrary: deliveryResultArbitrary },
);

// ---------------------------------------------------------------- §15 snapshot manifest

/** §14 table: Stream = 1, Lane = 2; a lane snapshot names its lane (D-0152). */
export const SnapshotScopeV1 = taggedUnion<W.SnapshotScopeV1>("SnapshotScopeV1", {
  Stream: { tag: 1, kind: "unit" },
  Lane: { tag: 2, kind: "newtype", field: "lane_id", codec: Bytes32 },
});

/** §14 table: StandardRecordId = 1, CheckpointReceiptDigest = 2. */
export const SnapshotCoverageV1 = taggedUnion<W.SnapshotCoverageV1>("SnapshotCoverageV1", {
  StandardRecordId: { tag: 1, kind: "struct", codec: StandardRecordIdV1 },
  CheckpointReceiptDigest: { tag: 2, kind: "newtype", field: "digest", codec: Bytes32 },
});

/** The bound on `cbfs_reference`, which §15 leaves open (D-0156). */
export const MAX_CBFS_REFERENCE_BYTES = 2_048;

export const CbqsSnapshotManifestV1 = struct<W.CbqsSnapshotManifestV1>(
  "CbqsSnapshotManifestV1",
  {
    context: CbqsSigningContextV1,
    stream_id: Bytes32,
    scope: SnapshotScopeV1,
    snapshot_hash: Bytes32,
    cbfs_reference: varBytes("cbfs_reference", 1, MAX_CBFS_REFERENCE_BYTES),
    covered_through: SnapshotCoverageV1,
    encryption_generation: u64,
    provider_anchor: Bytes32,
    application_signature: Signature,
  },
  {
    check: (m) => {
      if (isZero(m.provider_anchor)) return { field: "provider_anchor", reason: "provider_anchor must be nonzero (§15)" };
      // §15: a fast snapshot's coverage is the bound checkpoint receipt's digest, which is provider_anchor.
      if (m.covered_through.type === "CheckpointReceiptDigest" && !m.covered_through.digest.every((b, i) => b === m.provider_anchor[i])) {
        return { field: "covered_through", reason: "a checkpoint-covered snapshot's covered_through equals provider_anchor (§15)" };
      }
      return null;
    },
    arbitrary: (_fc, base) =>
      base.map((m) => {
        const anchor = nonzero(m.provider_anchor);
        return { ...m, provider_anchor: anchor, covered_through: m.covered_through.type === "CheckpointReceiptDigest" ? { type: "CheckpointReceiptDigest" as const, digest: anchor.slice() } : m.covered_through };
      }),
  },
);
