// The reference signer (tests and the sample bundles only; nothing in the consensus path uses
// it): a broker's side of one stream in miniature. It signs grants as the stream's admin, proofs
// as holders, and every receipt, checkpoint, transition and anchor as the provider, keeping the
// chains a broker keeps — global and lane receipt tails, record sequences, group chains, the
// checkpoint chain — so what it emits is a valid bundle for `cbqs verify-broker`. It is
// deterministic: ids and nonces come from labels, times from a counter, never a clock or a
// random source. A `Fault` changes one value as it is signed (or one signature after), so the
// mutator (mutants.ts) can break exactly one rule and let every later artifact chain on the
// changed one, as a broker with that bug would.
import { bytesEqual, utf8 } from "../bytes.js";
import { encode } from "../codec/core.js";
import * as Bk from "../codec/broker.js";
import {
  cbqs_request_body_hash_v1,
  checkpointGenesis,
  delivery_result_state_digest_v1,
  groupConfigStateDigest,
  groupDeletedStateDigest,
  groupReceiptGenesis,
  initialDeliveryCycleId,
  laneEventMessageId,
  laneId,
  laneReceiptGenesis,
  leaseId,
  recordPayloadHash,
  redriveDeliveryCycleId,
  signingKeyId,
  streamReceiptGenesis,
  type DeliveryIdentityV1,
} from "../codec/derive.js";
import { fastBatchCommitment, type FastBatchRecordV1 } from "../codec/helpers.js";
import {
  appendReceiptDigest,
  brokerEpochTransitionDigest,
  checkpointReceiptDigest,
  deliveryStateReceiptDigest,
  fast_retention_anchor_signing_bytes_v1,
  grantId,
  group_retention_anchor_signing_bytes_v1,
  record_header_hash_v1,
  requestProofDigest,
  sessionProofDigest,
  snapshot_manifest_signing_bytes_v1,
  standard_retention_anchor_signing_bytes_v1,
} from "../codec/signing.js";
import type * as T from "../codec/types.js";
import type * as W from "../codec/wire-types.js";
import { ed25519PublicKeyFromSeed, ed25519Sign } from "../crypto/ed25519.js";
import { keccak256 } from "../crypto/hash.js";
import type { ArtifactOf } from "./bundle.js";
import { clientHeader } from "./check-receipts.js";
import { leaseIssueState } from "../codec/results.js";

/** A deterministic 32-byte value named by `label`. */
export const label32 = (label: string): Uint8Array => keccak256(utf8(`cbqs-broker-kit/${label}`));
export const ZERO32 = new Uint8Array(32);
const ZERO24 = new Uint8Array(24);

export const signingKey = (seed: Uint8Array): T.SigningPublicKey => ({ algorithm: "Ed25519", key: ed25519PublicKeyFromSeed(seed) });

/** The values a fault can change, by where the signer makes them. */
export type FaultTarget =
  | "grant"
  | "challenge"
  | "session-proof"
  | "opened"
  | "request"
  | "append-body"
  | "append-receipt"
  | "lane-record"
  | "group-config"
  | "delivery-receipt"
  | "lease-id"
  | "successor-cycle"
  | "transition"
  | "checkpoint"
  | "checkpoint-batch"
  | "standard-anchor"
  | "group-anchor"
  | "fast-anchor"
  | "manifest";

/** One change to the `index`-th value (0-based, in signing order) of `target`. */
export interface Fault {
  target: FaultTarget;
  index: number;
  /** After the value is signed (a signature fault), or before (the default): the signature then covers the change. */
  signed?: boolean;
  /** Changes the value in place, or returns its replacement. */
  edit(value: any): unknown;
}

export interface SignerSetup {
  context: T.CbqsSigningContextV1;
  stream: Uint8Array;
  deliveryClass: T.DeliveryClass;
  providerSeed: Uint8Array;
  adminSeed: Uint8Array;
  /** The first artifact's time (ms); each artifact advances it by a second. */
  startMs: bigint;
  fault?: Fault;
}

export interface Session {
  id: Uint8Array;
  grant: T.StreamGrantV1;
  grantId: Uint8Array;
  holderSeed: Uint8Array;
  counter: bigint;
}

export interface SignedRecord {
  id: T.RecordIdV1;
  header: T.RecordHeaderV1;
  payload: Uint8Array;
  /** Its append receipt (standard records and lane events). */
  receipt: T.AppendReceiptV1 | null;
}

export interface GroupState {
  lane: Uint8Array;
  group: Uint8Array;
  tail: Uint8Array;
  nextQueueSequence: bigint;
  config: W.GroupConfigV1;
  receipts: Uint8Array[];
}

export interface Lease {
  lease: W.DeliveryLeaseV1;
  record: SignedRecord;
  group: GroupState;
}

export interface GrantOptions {
  holderSeed: Uint8Array;
  label: string;
  verbs: number;
  authorizationGeneration: bigint;
  laneScope?: T.LaneScopeV1;
  groupScope?: T.GroupScopeV1;
  notBeforeMs: bigint;
  expiresAtMs: bigint;
  maxMessageBytes?: number;
  maxLaneCreatesPerMin?: number;
}

export class BrokerSigner {
  readonly artifacts: ArtifactOf[] = [];
  private clock: bigint;
  private readonly seen = new Map<FaultTarget, number>();
  // standard and lane-event receipts
  private globalTail: Uint8Array;
  private readonly laneTails = new Map<string, Uint8Array>();
  private nextSequence = 0n;
  readonly records: SignedRecord[] = [];
  // fast
  private brokerEpoch = -1n;
  private lineageDigest: Uint8Array | null = null;
  private epochLast: T.CheckpointReceiptV1 | null = null;
  private latestCheckpoint: { receipt: T.CheckpointReceiptV1; digest: Uint8Array } | null = null;
  private pending: SignedRecord[] = [];
  readonly checkpoints: Array<{ receipt: T.CheckpointReceiptV1; digest: Uint8Array }> = [];

  constructor(readonly setup: SignerSetup) {
    this.clock = setup.startMs;
    this.globalTail = streamReceiptGenesis(setup.context, setup.stream);
  }

  get context(): T.CbqsSigningContextV1 {
    return this.setup.context;
  }

  /** The next artifact's time. */
  now(): bigint {
    const t = this.clock;
    this.clock += 1_000n;
    return t;
  }

  private emit(a: ArtifactOf): void {
    this.artifacts.push(a);
  }

  /** The fault's change, when it is for this value. */
  tamper<V>(target: FaultTarget, value: V, signed = false): V {
    const f = this.setup.fault;
    if (!signed) this.seen.set(target, (this.seen.get(target) ?? -1) + 1);
    if (f === undefined || f.target !== target || f.index !== this.seen.get(target) || (f.signed ?? false) !== signed) return value;
    const replaced = f.edit(value);
    return (replaced === undefined ? value : replaced) as V;
  }

  /** Signs `value` (its `signature` field) over `digest(value)` with `seed`, the fault applied before or after. */
  private signed<V extends { signature: Uint8Array }>(target: FaultTarget, value: V, digest: (v: V) => Uint8Array, seed: Uint8Array): V {
    const v = this.tamper(target, value);
    v.signature = ed25519Sign(seed, digest(v));
    return this.tamper(target, v, true);
  }

  // ---------------------------------------------------------------- grants and sessions (§7, §7.1)

  grant(o: GrantOptions): T.StreamGrantV1 {
    const g = this.signed(
      "grant",
      {
        context: this.context,
        stream_id: this.setup.stream,
        authorization_generation: o.authorizationGeneration,
        grant_nonce: label32(`grant/${o.label}`),
        holder_signing_key: signingKey(o.holderSeed),
        holder_hpke_key: null,
        verbs: o.verbs,
        lane_scope: o.laneScope ?? { type: "Any" },
        group_scope: o.groupScope ?? { type: "Any" },
        not_before_ms: o.notBeforeMs,
        expires_at_ms: o.expiresAtMs,
        max_message_bytes: o.maxMessageBytes ?? 1_024,
        max_append_bytes_per_sec: 1_048_576n,
        max_in_flight: 8,
        max_lane_creates_per_min: o.maxLaneCreatesPerMin ?? 16,
        signature: new Uint8Array(64),
      } satisfies T.StreamGrantV1,
      grantId,
      this.setup.adminSeed,
    );
    this.emit({ type: "StreamGrantV1", value: g });
    return g;
  }

  /** Challenge, proof of possession and SessionOpened at `view` (§7.1, §13.2). */
  openSession(grant: T.StreamGrantV1, holderSeed: Uint8Array, view: T.FinalizedViewV1, label: string): Session {
    const id = label32(`session/${label}`);
    const gid = grantId(grant);
    const expires = this.clock + 3_600_000n;
    const challenge = this.tamper("challenge", {
      request_id: label32(`open/${label}`),
      context: this.context,
      served_at: view,
      stream_id: this.setup.stream,
      grant_id: gid,
      provider_epoch: 0n,
      session_id: id,
      challenge: label32(`challenge/${label}`),
      expires_at_ms: expires,
    } satisfies W.SessionChallengeV1);
    this.now();
    this.emit({ type: "SessionChallengeV1", value: challenge });
    const proof = this.signed(
      "session-proof",
      { context: this.context, stream_id: this.setup.stream, provider_epoch: 0n, grant_id: challenge.grant_id, session_id: id, challenge: challenge.challenge, signature: new Uint8Array(64) } satisfies T.SessionProofV1,
      sessionProofDigest,
      holderSeed,
    );
    this.emit({ type: "SessionProofV1", value: proof });
    const opened = this.tamper("opened", {
      request_id: label32(`complete/${label}`),
      context: this.context,
      served_at: view,
      stream_id: this.setup.stream,
      grant_id: challenge.grant_id,
      provider_epoch: 0n,
      session_id: id,
      expires_at_ms: expires,
    } satisfies W.SessionOpenedV1);
    this.now();
    this.emit({ type: "SessionOpenedV1", value: opened });
    return { id, grant, grantId: gid, holderSeed, counter: 0n };
  }

  /** An authenticated request of `session` (§7.1, §13.1); returns its request id. */
  request(session: Session, body: W.CbqsRequestBodyV1): Uint8Array {
    session.counter += 1n;
    const requestId = label32(`request/${this.artifacts.length}`);
    const proof = this.signed(
      "request",
      { context: this.context, session_id: session.id, counter: session.counter, method: body.type, body_hash: cbqs_request_body_hash_v1(body), signature: new Uint8Array(64) } satisfies T.RequestProofV1,
      requestProofDigest,
      session.holderSeed,
    );
    this.emit({ type: "AuthenticatedRequestV1", value: { request_id: requestId, proof, body } });
    return requestId;
  }

  private respond(requestId: Uint8Array, body: W.CbqsResponseBodyV1): void {
    this.emit({ type: "CbqsResponseV1", value: { request_id: requestId, body } });
  }

  // ---------------------------------------------------------------- records and append receipts (§10, §14.1)

  private nextRecordId(): T.RecordIdV1 {
    if (this.setup.deliveryClass === "Fast") {
      if (this.brokerEpoch < 0n) throw new Error("a fast stream appends only after its first broker-epoch transition");
      const last = this.pending.at(-1)?.id ?? null;
      const sequence = last !== null ? last.sequence + 1n : this.epochLast !== null ? this.epochLast.last_sequence + 1n : 0n;
      return { type: "Fast", provider_epoch: 0n, broker_epoch: this.brokerEpoch, sequence };
    }
    const sequence = this.nextSequence;
    this.nextSequence += 1n;
    return { type: "Standard", provider_epoch: 0n, sequence };
  }

  /** The provider's receipt of a record, on the global and lane chains. */
  private receiptOf(view: T.FinalizedViewV1, id: T.RecordIdV1, header: T.RecordHeaderV1, payload: Uint8Array): T.AppendReceiptV1 {
    const laneKey = Buffer.from(header.lane_id).toString("hex");
    const rc = this.signed(
      "append-receipt",
      {
        context: this.context,
        served_at: view,
        stream_id: this.setup.stream,
        lane_id: header.lane_id,
        origin: header.origin,
        kind: header.kind,
        record_id: id,
        client_message_id: header.client_message_id,
        header_hash: record_header_hash_v1(header),
        payload_hash: recordPayloadHash(payload),
        visible_after_ms: header.visible_after_ms,
        expires_at_ms: header.expires_at_ms,
        encryption_generation: header.encryption_generation,
        previous_global_receipt: this.globalTail,
        previous_lane_receipt: this.laneTails.get(laneKey) ?? laneReceiptGenesis(this.context, this.setup.stream, header.lane_id),
        committed_at_ms: this.now(),
        signature: new Uint8Array(64),
      } satisfies T.AppendReceiptV1,
      appendReceiptDigest,
      this.setup.providerSeed,
    );
    const digest = appendReceiptDigest(rc);
    this.globalTail = digest;
    this.laneTails.set(laneKey, digest);
    return rc;
  }

  /** A client append of `payload` to `lane` (§10): request, then the standard receipt or the fast provisional answer. */
  append(session: Session, view: T.FinalizedViewV1, o: { lane: Uint8Array; payload: Uint8Array; label: string; expiresAtMs?: bigint; generation?: bigint }): SignedRecord {
    const body = this.tamper("append-body", {
      stream_id: this.setup.stream,
      lane_id: o.lane,
      client_message_id: label32(`message/${o.label}`),
      client_created_at_ms: this.clock,
      visible_after_ms: 0n,
      expires_at_ms: o.expiresAtMs ?? 0n,
      encryption_generation: o.generation ?? 0n,
      nonce: ZERO24,
      payload: o.payload,
    } satisfies W.AppendRequestBodyV1);
    const requestId = this.request(session, { type: "Append", body });
    const header = clientHeader(body);
    const id = this.nextRecordId();
    if (id.type === "Fast") {
      const record: SignedRecord = { id, header, payload: body.payload, receipt: null };
      this.pending.push(record);
      this.now();
      this.respond(requestId, { type: "Append", body: { record_id: id, append_receipt: null, durable_watermark: this.watermark() } });
      this.records.push(record);
      return record;
    }
    const receipt = this.receiptOf(view, id, header, body.payload);
    const record: SignedRecord = { id, header, payload: body.payload, receipt };
    this.records.push(record);
    this.respond(requestId, { type: "Append", body: { record_id: id, append_receipt: receipt, durable_watermark: null } });
    return record;
  }

  /** CreateLane or CloseLane: the provider's lane event on the default lane and its receipt (§8). */
  private laneEvent(session: Session, view: T.FinalizedViewV1, status: W.LaneStatusV1, lane: Uint8Array, request: W.CbqsRequestBodyV1, metadata: Uint8Array): Uint8Array {
    const requestId = this.request(session, request);
    const at = this.now();
    const event: W.LaneEventV1 = { stream_id: this.setup.stream, lane_id: lane, status, metadata_hash: metadata, occurred_at_ms: at };
    const payload = encode(Bk.LaneEventV1, event);
    const header: T.RecordHeaderV1 = {
      stream_id: this.setup.stream,
      lane_id: ZERO32,
      origin: "ProviderEvent",
      kind: status === "Active" ? "LaneCreated" : "LaneClosed",
      client_message_id: laneEventMessageId(event),
      created_at_ms: at,
      visible_after_ms: 0n,
      expires_at_ms: 0n,
      encryption_generation: 0n,
      nonce: ZERO24,
    };
    const id = this.nextRecordId();
    const receipt = this.receiptOf(view, id, header, payload);
    const record: SignedRecord = { id, header, payload, receipt };
    this.records.push(record);
    if (id.type === "Fast") this.pending.push(record);
    const laneRecord = this.tamper("lane-record", { stream_id: this.setup.stream, lane_id: lane, status, created_at_ms: at, metadata_hash: metadata } satisfies W.LaneRecordV1);
    this.respond(requestId, { type: status === "Active" ? "CreateLane" : "CloseLane", lane: laneRecord, receipt });
    return laneRecord.lane_id;
  }

  createLane(session: Session, view: T.FinalizedViewV1, nonceLabel: string): Uint8Array {
    const nonce = label32(`lane/${nonceLabel}`);
    const metadata = label32(`lane-metadata/${nonceLabel}`);
    const body: W.CreateLaneRequestBodyV1 = { stream_id: this.setup.stream, lane_nonce: nonce, metadata_hash: metadata };
    return this.laneEvent(session, view, "Active", laneId(this.setup.stream, nonce), { type: "CreateLane", body }, metadata);
  }

  closeLane(session: Session, view: T.FinalizedViewV1, lane: Uint8Array): void {
    this.laneEvent(session, view, "Closed", lane, { type: "CloseLane", body: { stream_id: this.setup.stream, lane_id: lane } }, ZERO32);
  }

  // ---------------------------------------------------------------- groups and delivery state (§11.2, §13.1, §14.2)

  private deliveryReceipt(view: T.FinalizedViewV1, g: GroupState, action: T.DeliveryStateActionV1, record: T.StandardRecordIdV1 | null, lease: Uint8Array | null, resulting: Uint8Array): T.DeliveryStateReceiptV1 {
    const rc = this.signed(
      "delivery-receipt",
      {
        context: this.context,
        served_at: view,
        stream_id: this.setup.stream,
        lane_id: g.lane,
        group_id: g.group,
        provider_epoch: 0n,
        action,
        record_id: record,
        lease_id: lease,
        resulting_state_digest: resulting,
        previous_group_receipt: g.tail,
        committed_at_ms: this.now(),
        signature: new Uint8Array(64),
      } satisfies T.DeliveryStateReceiptV1,
      deliveryStateReceiptDigest,
      this.setup.providerSeed,
    );
    g.tail = deliveryStateReceiptDigest(rc);
    g.receipts.push(g.tail);
    return rc;
  }

  /** The default configuration of a kit group: within every §13.1 inequality for the kit's streams. */
  groupConfig(lane: Uint8Array, group: Uint8Array, start: W.GroupStartV1): W.GroupConfigV1 {
    return {
      group_id: group,
      lane_id: lane,
      mode: "Concurrent",
      start,
      visibility_timeout_ms: 30_000n,
      max_visibility_ms: 60_000n,
      max_in_flight: 8,
      max_attempts: 5,
      record_deadline_ms: 600_000n,
      dead_letter_ttl_ms: 3_600_000n,
      retention_pin_until_ms: 0n,
    };
  }

  createGroup(session: Session, view: T.FinalizedViewV1, lane: Uint8Array, label: string, start: W.GroupStartV1, existing?: GroupState): GroupState {
    const group = label32(`group/${label}`);
    const config = this.tamper("group-config", this.groupConfig(lane, group, start));
    const requestId = this.request(session, { type: "CreateGroup", body: { stream_id: this.setup.stream, config } });
    const g: GroupState = existing ?? { lane, group, tail: groupReceiptGenesis(this.context, this.setup.stream, lane, group), nextQueueSequence: 1n, config, receipts: [] };
    g.config = config;
    const receipt = this.deliveryReceipt(view, g, "GroupCreate", null, null, groupConfigStateDigest(this.context, this.setup.stream, config));
    this.respond(requestId, { type: "CreateGroup", body: { config, receipt } });
    return g;
  }

  updateGroup(session: Session, view: T.FinalizedViewV1, g: GroupState, change: Partial<W.GroupMutableConfigV1>): void {
    const { group_id, lane_id, start, ...mutable } = { ...g.config, ...change };
    const config: W.GroupConfigV1 = this.tamper("group-config", { group_id, lane_id, start, ...mutable });
    const requestId = this.request(session, { type: "UpdateGroup", body: { stream_id: this.setup.stream, lane_id, group_id, config: { ...mutable, mode: config.mode } } });
    g.config = config;
    const receipt = this.deliveryReceipt(view, g, "GroupUpdate", null, null, groupConfigStateDigest(this.context, this.setup.stream, config));
    this.respond(requestId, { type: "UpdateGroup", body: { config, receipt } });
  }

  deleteGroup(session: Session, view: T.FinalizedViewV1, g: GroupState): void {
    const requestId = this.request(session, { type: "DeleteGroup", body: { stream_id: this.setup.stream, lane_id: g.lane, group_id: g.group } });
    const receipt = this.deliveryReceipt(view, g, "GroupDelete", null, null, groupDeletedStateDigest(this.context, this.setup.stream, g.lane, g.group));
    this.respond(requestId, { type: "DeleteGroup", body: { config: null, receipt } });
  }

  private identity(g: GroupState, record: SignedRecord): DeliveryIdentityV1 & { record_id: T.StandardRecordIdV1 } {
    return { stream_id: this.setup.stream, lane_id: g.lane, group_id: g.group, record_id: { provider_epoch: 0n, sequence: record.id.sequence } };
  }

  /** A consumer-group delivery of `record` with its lease and LeaseIssue receipt (§11.2, §13.2, §14.2). */
  deliverLease(view: T.FinalizedViewV1, g: GroupState, record: SignedRecord, holderSeed: Uint8Array, o: { cycle?: Uint8Array; attempt?: number; subscription: string }): Lease {
    const identity = this.identity(g, record);
    const cycle = o.cycle ?? initialDeliveryCycleId(this.context, identity);
    const attempt = o.attempt ?? 1;
    const holder = signingKeyId(signingKey(holderSeed));
    const id = this.tamper("lease-id", leaseId(this.context, identity, cycle, attempt, holder));
    const issued = this.clock;
    const lease: W.DeliveryLeaseV1 = {
      reference: { stream_id: this.setup.stream, lane_id: g.lane, group_id: g.group, record_id: identity.record_id, delivery_cycle_id: cycle, lease_id: id },
      attempt,
      holder_signing_key_id: holder,
      group_queue_sequence: g.nextQueueSequence,
      issued_at_ms: issued,
      expires_at_ms: issued + g.config.visibility_timeout_ms,
    };
    g.nextQueueSequence += 1n;
    const state = leaseIssueState(lease);
    const receipt = this.deliveryReceipt(view, g, "LeaseIssue", identity.record_id, id, delivery_result_state_digest_v1(this.context, state));
    this.emit({
      type: "RecordDeliveryV1",
      value: { subscription_id: label32(`subscription/${o.subscription}`), record_id: record.id, header: record.header, payload: record.payload, append_receipt: record.receipt, lease, delivery_state_receipt: receipt, durable_watermark: null },
    });
    return { lease, record, group: g };
  }

  private leaseRef(l: Lease): W.DeliveryLeaseRefV1 {
    return l.lease.reference;
  }

  private leaseState(l: Lease, action: "Ack" | "Reject", at: bigint, reason: Uint8Array | null): W.DeliveryResultStateV1 {
    const ref = l.lease.reference;
    return {
      action,
      stream_id: ref.stream_id,
      lane_id: ref.lane_id,
      group_id: ref.group_id,
      record_id: ref.record_id,
      delivery_cycle_id: ref.delivery_cycle_id,
      lease_id: ref.lease_id,
      attempt: l.lease.attempt,
      holder_signing_key_id: null,
      available_at_ms: null,
      issued_at_ms: null,
      lease_expires_at_ms: null,
      terminal_at_ms: at,
      terminal_expires_at_ms: action === "Reject" ? at + l.group.config.dead_letter_ttl_ms : null,
      reason_hash: reason,
      successor_cycle_id: null,
      group_queue_sequence: l.lease.group_queue_sequence,
    };
  }

  ack(session: Session, view: T.FinalizedViewV1, l: Lease): void {
    const requestId = this.request(session, { type: "Ack", body: { lease: this.leaseRef(l) } });
    const state = this.leaseState(l, "Ack", this.clock, null);
    const receipt = this.deliveryReceipt(view, l.group, "Ack", state.record_id, state.lease_id, delivery_result_state_digest_v1(this.context, state));
    this.respond(requestId, { type: "Ack", body: { state, receipt } });
  }

  reject(session: Session, view: T.FinalizedViewV1, l: Lease, reason: string): void {
    const reasonHash = label32(`reason/${reason}`);
    const requestId = this.request(session, { type: "Reject", body: { lease: this.leaseRef(l), reason_hash: reasonHash } });
    const state = this.leaseState(l, "Reject", this.clock, reasonHash);
    const receipt = this.deliveryReceipt(view, l.group, "Reject", state.record_id, state.lease_id, delivery_result_state_digest_v1(this.context, state));
    this.respond(requestId, { type: "Reject", body: { state, receipt } });
  }

  /** Redrive of a dead-lettered cycle: a successor cycle at the group's tail (§11.2, §13.1). Returns the successor. */
  redrive(session: Session, view: T.FinalizedViewV1, l: Lease): Uint8Array {
    const g = l.group;
    const identity = this.identity(g, l.record);
    const terminal = l.lease.reference.delivery_cycle_id;
    const requestId = this.request(session, { type: "Redrive", body: { stream_id: this.setup.stream, lane_id: g.lane, group_id: g.group, record_id: identity.record_id, terminal_cycle_id: terminal } });
    const successor = this.tamper("successor-cycle", redriveDeliveryCycleId(this.context, identity, terminal, g.tail));
    const state: W.DeliveryResultStateV1 = {
      action: "Redrive",
      ...identity,
      delivery_cycle_id: terminal,
      lease_id: null,
      attempt: 0,
      holder_signing_key_id: null,
      available_at_ms: this.clock,
      issued_at_ms: null,
      lease_expires_at_ms: null,
      terminal_at_ms: null,
      terminal_expires_at_ms: null,
      reason_hash: null,
      successor_cycle_id: successor,
      group_queue_sequence: g.nextQueueSequence,
    };
    g.nextQueueSequence += 1n;
    const receipt = this.deliveryReceipt(view, g, "Redrive", identity.record_id, null, delivery_result_state_digest_v1(this.context, state));
    this.respond(requestId, { type: "Redrive", body: { state, receipt } });
    return successor;
  }

  // ---------------------------------------------------------------- retention and snapshots (§15)

  /** The provider's floor for the stream (lane null) or one lane, with the predecessor digests of the records it prunes. */
  standardAnchor(view: T.FinalizedViewV1, floor: bigint, lane: Uint8Array | null): T.StandardRetentionAnchorV1 {
    const before = this.records.filter((r) => r.receipt !== null && r.id.sequence < floor);
    const inLane = lane === null ? [] : before.filter((r) => bytesEqual(r.header.lane_id, lane));
    const a = this.signed(
      "standard-anchor",
      {
        context: this.context,
        served_at: view,
        stream_id: this.setup.stream,
        provider_epoch: 0n,
        lane_id: lane,
        first_retained_sequence: floor,
        previous_global_receipt: before.length === 0 ? streamReceiptGenesis(this.context, this.setup.stream) : appendReceiptDigest(before.at(-1)!.receipt!),
        previous_lane_receipt: lane === null ? null : inLane.length === 0 ? laneReceiptGenesis(this.context, this.setup.stream, lane) : appendReceiptDigest(inLane.at(-1)!.receipt!),
        committed_at_ms: this.now(),
        signature: new Uint8Array(64),
      } satisfies T.StandardRetentionAnchorV1,
      (x) => keccak256(standard_retention_anchor_signing_bytes_v1(x)),
      this.setup.providerSeed,
    );
    this.emit({ type: "StandardRetentionAnchorV1", value: a });
    return a;
  }

  groupAnchor(view: T.FinalizedViewV1, g: GroupState, retained: Uint8Array): void {
    const a = this.signed(
      "group-anchor",
      {
        context: this.context,
        served_at: view,
        stream_id: this.setup.stream,
        provider_epoch: 0n,
        lane_id: g.lane,
        group_id: g.group,
        latest_retained_receipt: retained,
        group_queue_sequence: g.nextQueueSequence - 1n,
        committed_at_ms: this.now(),
        signature: new Uint8Array(64),
      } satisfies T.GroupRetentionAnchorV1,
      (x) => keccak256(group_retention_anchor_signing_bytes_v1(x)),
      this.setup.providerSeed,
    );
    this.emit({ type: "GroupRetentionAnchorV1", value: a });
  }

  /** A fast floor in `epoch`: the checkpoint-chain link before the batch holding it. */
  fastAnchor(view: T.FinalizedViewV1, epoch: bigint, floor: bigint): void {
    const inEpoch = this.checkpoints.filter((k) => k.receipt.broker_epoch === epoch);
    const holding = inEpoch.find((k) => k.receipt.first_sequence <= floor && floor <= k.receipt.last_sequence);
    const ending = inEpoch.find((k) => k.receipt.last_sequence + 1n === floor);
    const link = holding?.receipt.previous_checkpoint ?? ending?.digest;
    if (link === undefined) throw new Error(`no checkpoint of broker epoch ${epoch} reaches floor ${floor}`);
    const a = this.signed(
      "fast-anchor",
      {
        context: this.context,
        served_at: view,
        stream_id: this.setup.stream,
        provider_epoch: 0n,
        broker_epoch: epoch,
        first_retained_sequence: floor,
        previous_checkpoint: link,
        committed_at_ms: this.now(),
        signature: new Uint8Array(64),
      } satisfies T.FastRetentionAnchorV1,
      (x) => keccak256(fast_retention_anchor_signing_bytes_v1(x)),
      this.setup.providerSeed,
    );
    this.emit({ type: "FastRetentionAnchorV1", value: a });
  }

  /** A snapshot manifest signed by the application's key, bound to `anchor` (§15). */
  manifest(appSeed: Uint8Array, o: { scope: W.SnapshotScopeV1; coverage: W.SnapshotCoverageV1; anchor: Uint8Array; snapshot: Uint8Array; label: string }): void {
    const m: W.CbqsSnapshotManifestV1 = this.tamper("manifest", {
      context: this.context,
      stream_id: this.setup.stream,
      scope: o.scope,
      snapshot_hash: keccak256(o.snapshot),
      cbfs_reference: utf8(`cbfs://kit/${o.label}`),
      covered_through: o.coverage,
      encryption_generation: 0n,
      provider_anchor: o.anchor,
      application_signature: new Uint8Array(64),
    } satisfies W.CbqsSnapshotManifestV1);
    m.application_signature = ed25519Sign(appSeed, keccak256(snapshot_manifest_signing_bytes_v1(m)));
    this.emit({ type: "CbqsSnapshotManifestV1", value: m });
  }

  // ---------------------------------------------------------------- fast lineages and checkpoints (§12)

  /** The current durable watermark of the lineage (§13.2). */
  private watermark(): W.FastDurableWatermarkV1 {
    const cp = this.latestCheckpoint;
    return {
      stream_id: this.setup.stream,
      provider_epoch: 0n,
      broker_epoch: this.brokerEpoch,
      last_durable_sequence: cp === null ? null : cp.receipt.last_sequence,
      checkpoint_anchor: cp === null ? checkpointGenesis(this.context, this.setup.stream) : cp.digest,
    };
  }

  /** A broker-epoch transition: the stream's first (epoch 0, Clean), or a restart (§12.1). Pending records are void. */
  transition(view: T.FinalizedViewV1, kind: T.BrokerTransitionKindV1): void {
    const first = this.brokerEpoch < 0n;
    const durable = this.epochLast?.last_sequence ?? null;
    const provisional = this.pending.at(-1)?.id.sequence ?? durable;
    const t = this.signed(
      "transition",
      {
        context: this.context,
        served_at: view,
        stream_id: this.setup.stream,
        provider_epoch: 0n,
        previous_lineage: first ? null : { provider_epoch: 0n, broker_epoch: this.brokerEpoch },
        replacement_broker_epoch: this.brokerEpoch + 1n,
        kind,
        last_durable_checkpoint: this.latestCheckpoint?.digest ?? checkpointGenesis(this.context, this.setup.stream),
        last_durable_sequence: first ? null : durable,
        last_provisional_sequence: first ? null : kind === "Clean" ? durable : provisional,
        created_at_ms: this.now(),
        signature: new Uint8Array(64),
      } satisfies T.BrokerEpochTransitionV1,
      brokerEpochTransitionDigest,
      this.setup.providerSeed,
    );
    this.emit({ type: "BrokerEpochTransitionV1", value: t });
    this.brokerEpoch = t.replacement_broker_epoch;
    this.lineageDigest = brokerEpochTransitionDigest(t);
    this.epochLast = null;
    this.pending = [];
  }

  /** A fast delivery of `record` with the lineage's durable watermark (§13.2). */
  deliverFast(record: SignedRecord, subscription: string): void {
    this.emit({
      type: "RecordDeliveryV1",
      value: { subscription_id: label32(`subscription/${subscription}`), record_id: record.id, header: record.header, payload: record.payload, append_receipt: null, lease: null, delivery_state_receipt: null, durable_watermark: this.watermark() },
    });
  }

  /** Delivers the pending batch to a full-stream subscriber, then commits it under a checkpoint (§12.2, §12.2.1). */
  checkpoint(view: T.FinalizedViewV1, subscription: string): T.CheckpointReceiptV1 {
    for (const r of this.pending) this.deliverFast(r, subscription);
    const batch = this.tamper("checkpoint-batch", { first: this.pending[0]!.id.sequence, records: this.pending as FastBatchRecordV1[] });
    const range = { context: this.context, stream_id: this.setup.stream, provider_epoch: 0n, broker_epoch: this.brokerEpoch, first_sequence: batch.first };
    const commitment = fastBatchCommitment(range, batch.records);
    const cp = this.signed(
      "checkpoint",
      {
        ...range,
        served_at: view,
        last_sequence: commitment.last_sequence,
        ordered_range_root: commitment.ordered_range_root,
        previous_checkpoint: this.epochLast === null ? this.lineageDigest! : checkpointReceiptDigest(this.epochLast),
        durable_high_water: commitment.last_sequence,
        committed_at_ms: this.now(),
        signature: new Uint8Array(64),
      } satisfies T.CheckpointReceiptV1,
      checkpointReceiptDigest,
      this.setup.providerSeed,
    );
    this.emit({ type: "CheckpointReceiptV1", value: cp });
    const digest = checkpointReceiptDigest(cp);
    this.epochLast = cp;
    this.latestCheckpoint = { receipt: cp, digest };
    this.checkpoints.push({ receipt: cp, digest });
    this.pending = [];
    return cp;
  }
}

