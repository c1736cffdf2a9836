// Retention anchors and snapshot manifests (CIP-39 §15): floors monotone per comparison key and
// anchored where the chains really were (B26), a manifest bound to a receipt published with it
// (B27). What the anchors name is checked once the whole bundle is read: a floor's predecessor is
// known only when the bundle's chain reaches past the floor.
import { bytesEqual } from "../bytes.js";
import { laneReceiptGenesis, streamReceiptGenesis } from "../codec/derive.js";
import { fast_retention_anchor_signing_bytes_v1, group_retention_anchor_signing_bytes_v1, standard_retention_anchor_signing_bytes_v1 } from "../codec/signing.js";
import { keccak256 } from "../crypto/hash.js";
import type { FastRetentionAnchorV1, GroupRetentionAnchorV1, StandardRetentionAnchorV1 } from "../codec/types.js";
import type { CbqsSnapshotManifestV1 } from "../codec/wire-types.js";
import type { Artifact } from "./bundle.js";
import { hex, short, type Checks } from "./checks.js";
import type { FastChecks } from "./check-fast.js";
import type { GroupChecks } from "./check-groups.js";
import type { ReceiptChecks } from "./check-receipts.js";

type Anchor = StandardRetentionAnchorV1 | GroupRetentionAnchorV1 | FastRetentionAnchorV1;

export class RetentionChecks {
  private readonly floors = new Map<string, { floor: bigint; line: number }>();
  private readonly standard: Array<{ a: Artifact; anchor: StandardRetentionAnchorV1 }> = [];
  private readonly groupAnchors: Array<{ a: Artifact; anchor: GroupRetentionAnchorV1 }> = [];
  private readonly fastAnchors: Array<{ a: Artifact; anchor: FastRetentionAnchorV1 }> = [];
  private readonly manifests: Array<{ a: Artifact; manifest: CbqsSnapshotManifestV1 }> = [];

  constructor(
    private readonly c: Checks,
    private readonly receipts: ReceiptChecks,
    private readonly groups: GroupChecks,
    private readonly fast: FastChecks,
  ) {}

  /** B1, B2, B3 of an anchor, and B26's monotone floor within its comparison key. */
  private common(a: Artifact, anchor: Anchor, digest: Uint8Array, key: string, floor: bigint, what: string): void {
    const c = this.c;
    c.contextOf(a, anchor.context, "anchor");
    c.streamOf(a, anchor.stream_id, "anchor.stream_id");
    const view = c.servedAt(a, anchor.served_at, "anchor");
    if (view !== undefined) c.providerSignature(a, view, digest, anchor.signature, "anchor");
    const before = this.floors.get(key);
    if (before !== undefined) {
      c.check(a, "B26", floor >= before.floor, () => `${what} ${floor} regresses ${before.floor}, the floor of the anchor on line ${before.line} with the same comparison key: portable equivocation evidence (§15)`);
    }
    if (before === undefined || floor > before.floor) this.floors.set(key, { floor, line: a.line });
  }

  standardAnchor(a: Artifact & { type: "StandardRetentionAnchorV1" }): void {
    const x = a.value;
    const digest = keccak256(standard_retention_anchor_signing_bytes_v1(x));
    this.common(a, x, digest, `standard/${x.provider_epoch}/${x.lane_id === null ? "stream" : hex(x.lane_id)}`, x.first_retained_sequence, "first_retained_sequence");
    this.receipts.startAt(x);
    this.standard.push({ a, anchor: x });
  }

  groupAnchor(a: Artifact & { type: "GroupRetentionAnchorV1" }): void {
    const x = a.value;
    const digest = keccak256(group_retention_anchor_signing_bytes_v1(x));
    this.common(a, x, digest, `group/${x.provider_epoch}/${hex(x.lane_id)}/${hex(x.group_id)}`, x.group_queue_sequence, "group_queue_sequence");
    this.groups.anchored(x);
    this.groupAnchors.push({ a, anchor: x });
  }

  fastAnchor(a: Artifact & { type: "FastRetentionAnchorV1" }): void {
    const x = a.value;
    const digest = keccak256(fast_retention_anchor_signing_bytes_v1(x));
    this.common(a, x, digest, `fast/${x.provider_epoch}/${x.broker_epoch}`, x.first_retained_sequence, "first_retained_sequence");
    this.fastAnchors.push({ a, anchor: x });
  }

  manifest(a: Artifact & { type: "CbqsSnapshotManifestV1" }): void {
    this.c.contextOf(a, a.value.context, "manifest");
    this.c.streamOf(a, a.value.stream_id, "manifest.stream_id");
    this.manifests.push({ a, manifest: a.value });
  }

  finish(): void {
    for (const s of this.standard) this.standardPredecessors(s.a, s.anchor);
    for (const f of this.fastAnchors) this.fastPredecessor(f.a, f.anchor);
    for (const g of this.groupAnchors) this.groupReceipt(g.a, g.anchor);
    for (const m of this.manifests) this.bound(m.a, m.manifest);
  }

  /** B26: a standard anchor's predecessor digests are those of the bundle's receipts just before its floor. */
  private standardPredecessors(a: Artifact, x: StandardRetentionAnchorV1): void {
    const c = this.c;
    const floor = x.first_retained_sequence;
    const standard = this.receipts.chain.filter((r) => r.receipt.record_id.type === "Standard");
    if (!standard.some((r) => r.receipt.record_id.sequence >= floor)) {
      c.note(`the anchor on line ${a.line}: the bundle holds no receipt at or above its floor ${floor}, so its predecessor digests are not checked`);
      return;
    }
    const before = standard.filter((r) => r.receipt.record_id.sequence < floor);
    const global = before.at(-1)?.digest ?? (this.receipts.fromGenesis ? streamReceiptGenesis(c.context, c.stream) : null);
    if (global !== null) {
      c.check(a, "B26", bytesEqual(x.previous_global_receipt, global), () => `anchor.previous_global_receipt is ${hex(x.previous_global_receipt)}; the global receipt before floor ${floor} is ${hex(global)}`);
    }
    if (x.lane_id === null) return;
    const lane = x.lane_id;
    // The decoder pairs lane_id with previous_lane_receipt (§15).
    const named = x.previous_lane_receipt!;
    const inLane = before.filter((r) => bytesEqual(r.receipt.lane_id, lane));
    const prev = inLane.at(-1)?.digest ?? (this.receipts.fromGenesis ? laneReceiptGenesis(c.context, c.stream, lane) : null);
    if (prev !== null) {
      c.check(a, "B26", bytesEqual(named, prev), () => `anchor.previous_lane_receipt is ${hex(named)}; lane ${short(lane)}'s receipt before floor ${floor} is ${hex(prev)}`);
    }
  }

  /** B26: a fast anchor's previous_checkpoint is the chain link before the batch holding its floor. */
  private fastPredecessor(a: Artifact, x: FastRetentionAnchorV1): void {
    const floor = x.first_retained_sequence;
    const epoch = this.fast.checkpoints.filter((k) => k.receipt.broker_epoch === x.broker_epoch);
    const holding = epoch.find((k) => k.receipt.first_sequence <= floor && floor <= k.receipt.last_sequence);
    const ending = epoch.find((k) => k.receipt.last_sequence + 1n === floor);
    const link = holding?.receipt.previous_checkpoint ?? ending?.digest ?? (floor === 0n ? this.fast.transitions.get(x.broker_epoch) : undefined);
    if (link === undefined) {
      this.c.note(`the anchor on line ${a.line}: no checkpoint of broker epoch ${x.broker_epoch} in the bundle reaches its floor ${floor}, so its previous_checkpoint is not checked`);
      return;
    }
    this.c.check(a, "B26", bytesEqual(x.previous_checkpoint, link), () => `anchor.previous_checkpoint is ${hex(x.previous_checkpoint)}; the checkpoint chain's link before sequence ${floor} of broker epoch ${x.broker_epoch} is ${hex(link)}`);
  }

  /** B26: a group anchor names a receipt of its group's chain. */
  private groupReceipt(a: Artifact, x: GroupRetentionAnchorV1): void {
    const chain = this.groups.chains.get(`${hex(x.lane_id)}/${hex(x.group_id)}`);
    if (chain === undefined || !chain.fromGenesis) return;
    this.c.check(a, "B26", chain.receipts.some((d) => bytesEqual(d, x.latest_retained_receipt)), () => `anchor.latest_retained_receipt ${hex(x.latest_retained_receipt)} is no receipt of group ${short(x.group_id)}'s chain`);
  }

  /** B27: the manifest's provider_anchor is a receipt of the bundle, bound to the manifest. */
  private bound(a: Artifact, m: CbqsSnapshotManifestV1): void {
    const c = this.c;
    const appended = this.receipts.byDigest(m.provider_anchor);
    const checkpoint = this.fast.checkpoints.find((k) => bytesEqual(k.digest, m.provider_anchor));
    const receipt = appended?.receipt ?? checkpoint?.receipt;
    c.note("snapshot manifests: application_signature and snapshot_hash are application state, not checked (§15)");
    if (!c.check(a, "B27", receipt !== undefined, () => `manifest.provider_anchor ${hex(m.provider_anchor)} is the digest of no receipt in the bundle: the receipt must be published with the manifest (§15)`) || receipt === undefined) return;
    c.check(a, "B27", bytesEqual(receipt.stream_id, m.stream_id) && receipt.context.chain_id === m.context.chain_id && bytesEqual(receipt.context.chain_instance_id, m.context.chain_instance_id), () => "the bundled receipt's context or stream_id is not the manifest's");
    if (c.deliveryClass === "Fast") {
      c.check(a, "B27", checkpoint !== undefined && m.covered_through.type === "CheckpointReceiptDigest", () =>
        `a Fast stream's snapshot covers a checkpoint receipt (§15): ${checkpoint === undefined ? "provider_anchor names an append receipt" : "covered_through is a standard record id"}`,
      );
      return;
    }
    const cov = m.covered_through;
    const standard = appended !== undefined && cov.type === "StandardRecordId";
    if (!c.check(a, "B27", standard, () => "a Standard stream's snapshot covers a standard record id and names its append receipt (§15)") || appended === undefined || cov.type !== "StandardRecordId") return;
    const id = appended.receipt.record_id;
    c.check(a, "B27", id.type === "Standard" && cov.sequence === id.sequence && cov.provider_epoch === id.provider_epoch, () =>
      `manifest.covered_through is record ${cov.sequence}; the bundled receipt (line ${appended.line}) is record ${id.sequence}`,
    );
    if (m.scope.type === "Lane") {
      const lane = m.scope.lane_id;
      c.check(a, "B27", bytesEqual(appended.receipt.lane_id, lane), () => `a snapshot of lane ${hex(lane)} is bound to a receipt of lane ${hex(appended.receipt.lane_id)}`);
    }
  }
}
