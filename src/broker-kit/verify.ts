// `cbqs verify-broker`'s verifier: a bundle of one stream's broker artifacts against the chain.
// First every height the bundle names (served_at) is read from the chain source — one broker-
// state read of one block each — then the artifacts are walked in bundle order, each rule's
// state kept by its part (sessions, receipts, groups, fast, retention), and the checks that need
// the whole bundle (range roots, anchors' predecessors, manifests) run at the end.
import { leaseIssueState } from "../codec/results.js";
import type { DeliveryClass } from "../codec/types.js";
import type { CbqsResponseV1 } from "../codec/wire-types.js";
import type { Artifact, Bundle } from "./bundle.js";
import type { ChainSource, ViewRead } from "./chain-source.js";
import { Checks, hex, servedHeights, type Failure } from "./checks.js";
import { FastChecks } from "./check-fast.js";
import { GroupChecks } from "./check-groups.js";
import { clientHeader, ReceiptChecks } from "./check-receipts.js";
import { RetentionChecks } from "./check-retention.js";
import { SessionChecks, type RequestEntry } from "./check-sessions.js";
import { ViewCursor } from "./check-views.js";
import type { ChainView } from "./chain-source.js";
import { RULE_IDS, type RuleId } from "./rules.js";

export interface BundleReport {
  stream: Uint8Array;
  deliveryClass: DeliveryClass | null;
  artifacts: number;
  failures: Failure[];
  /** How many checks each rule ran (0: nothing in the bundle exercised it). */
  checks: Record<RuleId, number>;
  notes: string[];
}

/** Chain reads in flight at once (a node's broker-state and header reads). */
const READS_IN_FLIGHT = 4;

async function readViews(source: ChainSource, stream: Uint8Array, heights: readonly bigint[]): Promise<Map<bigint, ViewRead>> {
  const views = new Map<bigint, ViewRead>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < heights.length) {
      const h = heights[next++]!;
      views.set(h, await source.at(stream, h));
    }
  };
  await Promise.all(Array.from({ length: Math.min(READS_IN_FLIGHT, heights.length) }, worker));
  return views;
}

export async function verifyBundle(bundle: Bundle, source: ChainSource): Promise<BundleReport> {
  const heights = new Set<bigint>();
  for (const a of bundle.artifacts) servedHeights(a.value, heights);
  const views = await readViews(source, bundle.streamId, [...heights].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)));
  const any = [...views.values()].find((r): r is { kind: "view"; view: ChainView } => r.kind === "view");
  const c = new Checks(source.context, bundle.streamId, views, any?.view.stream.delivery_class ?? null);
  const verifier = new BundleVerifier(c);
  for (const a of bundle.artifacts) verifier.artifact(a);
  verifier.finish();
  const checks = Object.fromEntries(RULE_IDS.map((id) => [id, c.counts.get(id) ?? 0])) as Record<RuleId, number>;
  return { stream: bundle.streamId, deliveryClass: c.deliveryClass, artifacts: bundle.artifacts.length, failures: c.failures, checks, notes: c.notes };
}

class BundleVerifier {
  private readonly cursor: ViewCursor;
  private readonly sessions: SessionChecks;
  private readonly receipts: ReceiptChecks;
  private readonly groups: GroupChecks;
  private readonly fast: FastChecks;
  private readonly retention: RetentionChecks;

  constructor(private readonly c: Checks) {
    this.cursor = new ViewCursor(c);
    this.sessions = new SessionChecks(c);
    this.receipts = new ReceiptChecks(c, this.cursor);
    this.groups = new GroupChecks(c, this.cursor);
    this.fast = new FastChecks(c, this.cursor);
    this.retention = new RetentionChecks(c, this.receipts, this.groups, this.fast);
  }

  artifact(a: Artifact): void {
    switch (a.type) {
      case "StreamGrantV1":
        return this.sessions.grant(a);
      case "SessionChallengeV1":
        return this.sessions.challenge(a);
      case "SessionProofV1":
        return this.sessions.proof(a);
      case "SessionOpenedV1":
        return this.sessions.opened(a);
      case "AuthenticatedRequestV1":
        return this.sessions.request(a);
      case "CbqsResponseV1":
        return this.response(a, a.value);
      case "RecordDeliveryV1":
        return this.delivery(a);
      case "AppendReceiptV1":
        this.receipts.receipt(a, a.value, "receipt");
        return;
      case "DeliveryStateUpdateV1":
        this.groups.receipt(a, a.value.receipt, "receipt", { state: a.value.state });
        return;
      case "GroupStateUpdateV1":
        this.groups.receipt(a, a.value.receipt, "receipt", { config: a.value.config });
        return;
      case "BrokerEpochTransitionV1":
        return this.fast.transition(a, a.value);
      case "CheckpointReceiptV1":
        return this.fast.checkpoint(a, a.value);
      case "StandardRetentionAnchorV1":
        return this.retention.standardAnchor(a);
      case "GroupRetentionAnchorV1":
        return this.retention.groupAnchor(a);
      case "FastRetentionAnchorV1":
        return this.retention.fastAnchor(a);
      case "CbqsSnapshotManifestV1":
        return this.retention.manifest(a);
    }
  }

  finish(): void {
    this.fast.finish();
    this.retention.finish();
  }

  /**
   * A response: its receipts, and — when the bundle holds the request it answers — the grant of
   * that request's session at the receipt's view (B4, B6, B7, B11), the append's size (B10),
   * generation and nonce (B18), and the receipt against the append (B17).
   */
  private response(a: Artifact, resp: CbqsResponseV1): void {
    const req = this.sessions.requests.get(hex(resp.request_id));
    if (req === undefined) this.c.note(`the response on line ${a.line} answers no request in the bundle: its receipts are checked, the grant behind it is not`);
    const body = resp.body;
    let view: ChainView | undefined;
    let committedAt: bigint | undefined;
    switch (body.type) {
      case "Append": {
        const result = body.body;
        const append = req?.request.body.type === "Append" ? req.request.body.body : undefined;
        if (this.c.deliveryClass !== null) {
          this.c.check(a, "B17", result.record_id.type === this.c.deliveryClass, () => `the append's record id is a ${result.record_id.type} id on a ${this.c.deliveryClass} stream`);
        }
        if (result.append_receipt !== null) {
          view = this.receipts.receipt(a, result.append_receipt, "response.body.append_receipt");
          committedAt = result.append_receipt.committed_at_ms;
          if (append !== undefined) this.receipts.answers(a, result.append_receipt, append, "response.body.append_receipt");
        }
        if (result.durable_watermark !== null) this.fast.watermark(a, result.durable_watermark, "response.body.durable_watermark");
        if (append !== undefined && result.record_id.type === "Fast") {
          this.fast.record(a, result.record_id, clientHeader(append), append.payload);
          // A fast append has no receipt: its grant is judged at the view its session was opened at.
          view ??= req?.session?.view;
        }
        if (append !== undefined && view !== undefined) this.appendAtView(a, req!, append.payload.length, append.encryption_generation, append.nonce, view);
        break;
      }
      case "CreateLane":
      case "CloseLane": {
        view = this.receipts.receipt(a, body.receipt, "response.body.receipt");
        committedAt = body.receipt.committed_at_ms;
        if (body.type === "CreateLane") {
          const nonce = req?.request.body.type === "CreateLane" ? req.request.body.body.lane_nonce : null;
          this.receipts.laneCreated(a, body.lane, nonce, view);
        } else {
          this.receipts.laneClosed(a, body.lane);
        }
        break;
      }
      case "CreateGroup":
      case "UpdateGroup":
      case "DeleteGroup":
        view = this.groups.receipt(a, body.body.receipt, "response.body.receipt", { config: body.body.config });
        committedAt = body.body.receipt.committed_at_ms;
        break;
      case "Ack":
      case "Nack":
      case "Extend":
      case "Reject":
      case "Redrive":
        view = this.groups.receipt(a, body.body.receipt, "response.body.receipt", { state: body.body.state });
        committedAt = body.body.receipt.committed_at_ms;
        break;
      default:
        break; // no receipt: ListLanes, subscriptions, credit, key-batch staging
    }
    const grant = req?.session?.grant;
    if (grant && view !== undefined) this.sessions.use(a, grant, view, committedAt);
  }

  /** B10, B18: an append's size, generation and nonce against the stream (and grant) at `view`. */
  private appendAtView(a: Artifact, req: RequestEntry, size: number, generation: bigint, nonce: Uint8Array, view: ChainView): void {
    const s = view.stream;
    const grant = req.session?.grant?.grant;
    const limit = grant === undefined ? s.config.max_message_bytes : Math.min(s.config.max_message_bytes, grant.max_message_bytes);
    this.c.check(a, "B10", size <= limit, () => `the append's payload is ${size} bytes, above min(the stream's max_message_bytes ${s.config.max_message_bytes} at height ${view.height}${grant === undefined ? "" : `, the grant's ${grant.max_message_bytes}`})`);
    this.c.check(a, "B18", generation === s.encryption_generation, () => `the append declares encryption_generation ${generation}; the stream's at height ${view.height} is ${s.encryption_generation}`);
    if (!s.encrypted) this.c.check(a, "B18", nonce.every((b) => b === 0), () => "the append carries a nonzero nonce on an unencrypted stream (§10: zero for unencrypted streams)");
  }

  private delivery(a: Artifact & { type: "RecordDeliveryV1" }): void {
    const d = a.value;
    this.c.streamOf(a, d.header.stream_id, "delivery.header.stream_id");
    if (d.append_receipt !== null) this.receipts.receipt(a, d.append_receipt, "delivery.append_receipt");
    if (d.delivery_state_receipt !== null && d.lease !== null) {
      // The decoder has checked that the receipt is the lease's LeaseIssue state (§13.2).
      this.groups.receipt(a, d.delivery_state_receipt, "delivery.delivery_state_receipt", { state: leaseIssueState(d.lease) });
    }
    if (d.durable_watermark !== null) this.fast.watermark(a, d.durable_watermark, "delivery.durable_watermark");
    if (d.record_id.type === "Fast") this.fast.record(a, d.record_id, d.header, d.payload);
  }
}
