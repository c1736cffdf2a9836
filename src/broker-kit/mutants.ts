// The mutator: for each of the 30 rules, at least one variation of a kit bundle that breaks that
// rule and no other — a fault on one value as the reference signer signs it (later artifacts
// chain on the changed one, as they would behind a broker with that bug), or extra steps a
// broker must not take. test/broker-kit/mutants.test.ts runs each through the verifier and
// expects exactly its rule; docs/guides/verify-a-broker.md lists them per rule.
import { ed25519Sign } from "../crypto/ed25519.js";
import { appendReceiptDigest, grantId, requestProofDigest, sessionProofDigest } from "../codec/signing.js";
import type * as T from "../codec/types.js";
import type * as W from "../codec/wire-types.js";
import type { FastBatchRecordV1 } from "../codec/helpers.js";
import { verbBits } from "./check-sessions.js";
import { KIT_HEIGHTS, KIT_KEYS, KIT_START_MS, type KitBundleName, type KitVariation } from "./kit.js";
import type { RuleId } from "./rules.js";
import { label32, ZERO32 } from "./signer.js";
import { utf8 } from "../bytes.js";

export interface Mutant extends KitVariation {
  rule: RuleId;
  /** What the mutant breaks, in words (the test's name). */
  name: string;
  bundle: KitBundleName;
}

/** A key no kit role holds: what a forger signs with. */
const FORGER = KIT_KEYS.application.seed;
const ALL_BUT_APPEND = verbBits("CONSUME", "ACKNOWLEDGE", "REPLAY", "GROUP_ADMIN", "REDRIVE", "LANE_ADMIN");
const payload = (text: string): Uint8Array => utf8(text);

export const MUTANTS: readonly Mutant[] = [
  // §4, §14: context, view, provider key
  { rule: "B1", bundle: "standard", name: "an append receipt signed under another chain_id", fault: { target: "append-receipt", index: 6, edit: (r: T.AppendReceiptV1) => void (r.context = { ...r.context, chain_id: r.context.chain_id + 1n }) } },
  { rule: "B2", bundle: "standard", name: "an append receipt whose served_at names another block hash", fault: { target: "append-receipt", index: 6, edit: (r: T.AppendReceiptV1) => void (r.served_at = { ...r.served_at, block_hash: label32("not-a-block") }) } },
  { rule: "B2", bundle: "standard", name: "an append receipt served at a height with no block", fault: { target: "append-receipt", index: 6, edit: (r: T.AppendReceiptV1) => void (r.served_at = { ...r.served_at, height: 9n }) } },
  {
    rule: "B2",
    bundle: "standard",
    name: "an append receipt served at a block before the stream existed",
    extra: { at: "end", run: async (k) => void k.signer.append(k.sessions["s2"]!, await k.view(KIT_HEIGHTS.provider), { lane: ZERO32, payload: payload("too early"), label: "standard/early" }) },
  },
  { rule: "B3", bundle: "standard", name: "an append receipt signed by a key other than the stream's provider key", fault: { target: "append-receipt", index: 6, signed: true, edit: (r: T.AppendReceiptV1) => void (r.signature = ed25519Sign(FORGER, appendReceiptDigest(r))) } },
  // §7 grants
  { rule: "B4", bundle: "standard", name: "a grant signed by a key other than the stream's admin key", fault: { target: "grant", index: 0, signed: true, edit: (g: T.StreamGrantV1) => void (g.signature = ed25519Sign(FORGER, grantId(g))) } },
  { rule: "B5", bundle: "standard", name: "a session naming a grant id no grant of the bundle has", fault: { target: "challenge", index: 0, edit: (c: W.SessionChallengeV1) => void (c.grant_id = label32("no-such-grant")) } },
  { rule: "B6", bundle: "standard", name: "a grant carrying an authorization_generation the stream does not have at its views", fault: { target: "grant", index: 0, edit: (g: T.StreamGrantV1) => void (g.authorization_generation = 2n) } },
  { rule: "B7", bundle: "standard", name: "receipts committed before the grant's not_before_ms (less the clock skew)", fault: { target: "grant", index: 0, edit: (g: T.StreamGrantV1) => void (g.not_before_ms = KIT_START_MS + 3_000_000n) } },
  { rule: "B7", bundle: "standard", name: "a grant valid for longer than cbqs.max_grant_ttl_ms", fault: { target: "grant", index: 0, edit: (g: T.StreamGrantV1) => void (g.expires_at_ms = g.not_before_ms + 86_400_001n) } },
  { rule: "B8", bundle: "standard", name: "appends under a grant without the APPEND verb", fault: { target: "grant", index: 0, edit: (g: T.StreamGrantV1) => void (g.verbs = ALL_BUT_APPEND) } },
  { rule: "B9", bundle: "standard", name: "requests on lanes outside the grant's lane scope", fault: { target: "grant", index: 0, edit: (g: T.StreamGrantV1) => void (g.lane_scope = { type: "Exact", lane_id: label32("another-lane") }) } },
  { rule: "B9", bundle: "standard", name: "group requests outside the grant's group scope", fault: { target: "grant", index: 0, edit: (g: T.StreamGrantV1) => void (g.group_scope = { type: "Exact", group_id: label32("another-group") }) } },
  { rule: "B10", bundle: "standard", name: "appends larger than the grant's max_message_bytes", fault: { target: "grant", index: 0, edit: (g: T.StreamGrantV1) => void (g.max_message_bytes = 4) } },
  { rule: "B11", bundle: "standard", name: "a grant allowing more lane creations a minute than cbqs.max_lane_creates_per_min", fault: { target: "grant", index: 0, edit: (g: T.StreamGrantV1) => void (g.max_lane_creates_per_min = 257) } },
  // §7.1 sessions and requests
  { rule: "B12", bundle: "standard", name: "a proof of possession signed by a key other than the grant's holder key", fault: { target: "session-proof", index: 0, signed: true, edit: (p: T.SessionProofV1) => void (p.signature = ed25519Sign(FORGER, sessionProofDigest(p))) } },
  { rule: "B12", bundle: "standard", name: "a proof of possession of another challenge", fault: { target: "session-proof", index: 0, edit: (p: T.SessionProofV1) => void (p.challenge = label32("another-challenge")) } },
  { rule: "B13", bundle: "standard", name: "a request proof signed by a key other than the session's holder key", fault: { target: "request", index: 2, signed: true, edit: (p: T.RequestProofV1) => void (p.signature = ed25519Sign(FORGER, requestProofDigest(p))) } },
  { rule: "B14", bundle: "standard", name: "a request counter repeated within a session", fault: { target: "request", index: 2, edit: (p: T.RequestProofV1) => void (p.counter = 2n) } },
  // §14.1 receipt chains, §10 records, §8 lanes
  { rule: "B15", bundle: "standard", name: "an append receipt off the stream's global receipt chain", fault: { target: "append-receipt", index: 2, edit: (r: T.AppendReceiptV1) => void (r.previous_global_receipt = label32("elsewhere")) } },
  { rule: "B16", bundle: "standard", name: "an append receipt off its lane's receipt chain", fault: { target: "append-receipt", index: 2, edit: (r: T.AppendReceiptV1) => void (r.previous_lane_receipt = label32("elsewhere")) } },
  { rule: "B17", bundle: "standard", name: "an append receipt whose payload_hash is not the appended payload's", fault: { target: "append-receipt", index: 6, edit: (r: T.AppendReceiptV1) => void (r.payload_hash = label32("another-payload")) } },
  { rule: "B18", bundle: "standard", name: "an append declaring encryption generation 1 on a stream at generation 0", fault: { target: "append-body", index: 4, edit: (b: W.AppendRequestBodyV1) => void (b.encryption_generation = 1n) } },
  { rule: "B18", bundle: "standard", name: "an append with a nonzero nonce on an unencrypted stream", fault: { target: "append-body", index: 4, edit: (b: W.AppendRequestBodyV1) => void (b.nonce = new Uint8Array(24).fill(1)) } },
  { rule: "B19", bundle: "standard", name: "a created lane whose id is not derived from its nonce", fault: { target: "lane-record", index: 0, edit: (l: W.LaneRecordV1) => void (l.lane_id = label32("underived-lane")) } },
  {
    rule: "B19",
    bundle: "standard",
    name: "a lane id created a second time after it was closed",
    extra: { at: "end", run: async (k) => void k.signer.createLane(k.sessions["s2"]!, await k.view(8n), "standard/lane-1") },
  },
  {
    rule: "B19",
    bundle: "standard",
    name: "more open lanes than the stream's max_lanes",
    extra: {
      at: "after-create-lane",
      run: async (k) => {
        const v3 = await k.view(3n);
        for (const label of ["extra-a", "extra-b", "extra-c"]) k.signer.createLane(k.sessions["s1"]!, v3, `standard/${label}`);
      },
    },
  },
  // §11.2, §13.1, §14.2 groups
  { rule: "B20", bundle: "standard", name: "a delivery-state receipt off its group's receipt chain", fault: { target: "delivery-receipt", index: 2, edit: (r: T.DeliveryStateReceiptV1) => void (r.previous_group_receipt = label32("elsewhere")) } },
  {
    rule: "B20",
    bundle: "standard",
    name: "a group created again after its deletion (the tuple reused)",
    extra: { at: "end", run: async (k) => void k.signer.createGroup(k.sessions["s2"]!, await k.view(8n), ZERO32, "standard/g", { type: "Head" }, k.groups["G"]) },
  },
  { rule: "B21", bundle: "standard", name: "a lease id that is not the §13.1 derivation", fault: { target: "lease-id", index: 0, edit: () => label32("a-lease") } },
  { rule: "B21", bundle: "standard", name: "a redrive's successor cycle that is not the §13.1 derivation", fault: { target: "successor-cycle", index: 0, edit: () => label32("a-cycle") } },
  { rule: "B22", bundle: "standard", name: "a group whose max_visibility_ms exceeds the stream's", fault: { target: "group-config", index: 0, edit: (g: W.GroupConfigV1) => void (g.max_visibility_ms = 120_000n) } },
  // §12 fast
  { rule: "B23", bundle: "fast", name: "the stream's first transition not anchored at checkpoint_genesis", fault: { target: "transition", index: 0, edit: (t: T.BrokerEpochTransitionV1) => void (t.last_durable_checkpoint = label32("no-checkpoint")) } },
  { rule: "B23", bundle: "fast", name: "a restart naming a checkpoint other than the latest", fault: { target: "transition", index: 1, edit: (t: T.BrokerEpochTransitionV1) => void (t.last_durable_checkpoint = label32("no-checkpoint")) } },
  { rule: "B24", bundle: "fast", name: "a checkpoint off the checkpoint chain", fault: { target: "checkpoint", index: 1, edit: (c: T.CheckpointReceiptV1) => void (c.previous_checkpoint = label32("elsewhere")) } },
  {
    rule: "B24",
    bundle: "fast",
    name: "a gap between two checkpoints of one lineage",
    fault: { target: "checkpoint-batch", index: 1, edit: (b: { first: bigint; records: FastBatchRecordV1[] }) => ({ first: b.first + 1n, records: b.records.slice(1) }) },
  },
  { rule: "B25", bundle: "fast", name: "a checkpoint whose ordered_range_root is not its batch's", fault: { target: "checkpoint", index: 0, edit: (c: T.CheckpointReceiptV1) => void (c.ordered_range_root = label32("another-root")) } },
  {
    rule: "B25",
    bundle: "fast",
    name: "two different records delivered at one fast record id",
    extra: {
      at: "before-restart",
      run: async (k) => {
        const f0 = k.records["f0"]!;
        k.signer.deliverFast({ ...f0, payload: payload("fast 0, rewritten") }, "fast/full");
      },
    },
  },
  // §15 retention and snapshots
  { rule: "B26", bundle: "standard", name: "a stream-wide retention floor that regresses", fault: { target: "standard-anchor", index: 1, edit: (a: T.StandardRetentionAnchorV1) => void (a.first_retained_sequence = 1n) } },
  { rule: "B26", bundle: "standard", name: "a retention anchor whose predecessor is not the receipt before its floor", fault: { target: "standard-anchor", index: 0, edit: (a: T.StandardRetentionAnchorV1) => void (a.previous_global_receipt = label32("elsewhere")) } },
  { rule: "B26", bundle: "standard", name: "a group anchor naming no receipt of its group", fault: { target: "group-anchor", index: 0, edit: (a: T.GroupRetentionAnchorV1) => void (a.latest_retained_receipt = label32("elsewhere")) } },
  { rule: "B26", bundle: "fast", name: "a fast anchor whose previous_checkpoint is not the link before its floor", fault: { target: "fast-anchor", index: 0, edit: (a: T.FastRetentionAnchorV1) => void (a.previous_checkpoint = label32("elsewhere")) } },
  { rule: "B27", bundle: "standard", name: "a snapshot manifest covering a record its bundled receipt is not for", fault: { target: "manifest", index: 0, edit: (m: W.CbqsSnapshotManifestV1) => void (m.covered_through = { type: "StandardRecordId", provider_epoch: 0n, sequence: 6n }) } },
  { rule: "B27", bundle: "standard", name: "a snapshot manifest whose receipt is not in the bundle", fault: { target: "manifest", index: 0, edit: (m: W.CbqsSnapshotManifestV1) => void (m.provider_anchor = label32("unpublished")) } },
  {
    rule: "B27",
    bundle: "fast",
    name: "a Fast snapshot manifest bound to an append receipt, not a checkpoint",
    extra: {
      at: "end",
      run: async (k) => {
        const laneEvent = k.signer.records.find((r) => r.receipt !== null)!;
        const digest = appendReceiptDigest(laneEvent.receipt!);
        k.signer.manifest(KIT_KEYS.application.seed, { scope: { type: "Stream" }, coverage: { type: "CheckpointReceiptDigest", digest }, anchor: digest, snapshot: payload("a snapshot"), label: "fast/lane-event" });
      },
    },
  },
  // §7, §14 the view cursor; §6, §6.1 economic availability
  {
    rule: "B28",
    bundle: "standard",
    name: "a receipt from a view older than an authorization change the broker had observed",
    extra: { at: "end", run: async (k) => void k.signer.append(k.sessions["s1"]!, await k.view(5n), { lane: ZERO32, payload: payload("late"), label: "standard/late" }) },
  },
  {
    rule: "B29",
    bundle: "econ",
    name: "an append at a height where the Active stream's escrow is below the accrued rent",
    extra: { at: "end", run: async (k) => void k.signer.append(k.sessions["s1"]!, await k.view(KIT_HEIGHTS.unfunded), { lane: ZERO32, payload: payload("unfunded"), label: "econ/unfunded" }) },
  },
  {
    rule: "B30",
    bundle: "econ",
    name: "an append while the stream is Suspended, inside its grace window",
    extra: { at: "end", run: async (k) => void k.signer.append(k.sessions["s1"]!, await k.view(KIT_HEIGHTS.settle), { lane: ZERO32, payload: payload("suspended"), label: "econ/suspended" }) },
  },
  {
    rule: "B30",
    bundle: "econ",
    name: "an append at the stream's pinned grace deadline",
    extra: { at: "end", run: async (k) => void k.signer.append(k.sessions["s1"]!, await k.view(KIT_HEIGHTS.pastGrace), { lane: ZERO32, payload: payload("past grace"), label: "econ/past-grace" }) },
  },
];
