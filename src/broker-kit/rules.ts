// The broker-side rules of CIP-39 a verifier can check offline, with the chain's state in hand:
// B1…B30, each with its sections, what `cbqs verify-broker` checks, and — for a rule it checks
// only in part — what it cannot check and why. docs/guides/verify-a-broker.md "The 30 rules" is this table in
// words (test/broker-kit/rules.test.ts keeps the two equal); the rules no offline verifier can
// check at all are listed after it (OFFLINE_LIMITS).

export const RULE_IDS = [
  "B1", "B2", "B3", "B4", "B5", "B6", "B7", "B8", "B9", "B10",
  "B11", "B12", "B13", "B14", "B15", "B16", "B17", "B18", "B19", "B20",
  "B21", "B22", "B23", "B24", "B25", "B26", "B27", "B28", "B29", "B30",
] as const;
export type RuleId = (typeof RULE_IDS)[number];

export interface BrokerRule {
  id: RuleId;
  /** CIP-39 sections, e.g. "§7 check 3, §9.4". */
  section: string;
  /** The rule, one line. */
  title: string;
  /** What the verifier checks. */
  check: string;
  /** What it does not check, and why (what no artifact records, or what a bundle does not carry); null when the rule is checked whole. */
  limit: string | null;
}

export const BROKER_RULES: readonly BrokerRule[] = [
  {
    id: "B1",
    section: "§4, §7 check 2",
    title: "every signed artifact carries this chain's signing context and names the bundle's stream",
    check: "`context` (version 1, `chain_id`, `chain_instance_id`) against the chain's genesis; every `stream_id`, request bodies and lease references included, against the bundle's stream",
    limit: null,
  },
  {
    id: "B2",
    section: "§3, §9.3, §14",
    title: "`served_at` is a finalized view of this chain at which the stream exists",
    check: "`served_at.chain_instance_id` = this chain's instance (the context's, when B1 holds); `block_hash` = the chain's block at `served_at.height`; the stream record exists at that block",
    limit: null,
  },
  {
    id: "B3",
    section: "§4.3, §14",
    title: "a provider receipt is signed by the provider key the stream record snapshotted at the receipt's own `served_at`",
    check: "strict Ed25519 over keccak256 of the §14 signing bytes, for append, delivery-state and checkpoint receipts, broker-epoch transitions and the three retention anchors",
    limit: null,
  },
  {
    id: "B4",
    section: "§7 check 1",
    title: "a grant is signed by the stream's admin key at the request's view",
    check: "the grant's signature under `admin_key` of the stream record at every view the grant is used at: its session's `SessionOpenedV1.served_at` and the `served_at` of every receipt answering one of its session's requests",
    limit: null,
  },
  {
    id: "B5",
    section: "§7, §7.1, §13.2",
    title: "sessions name their grant by `grant_id = keccak256(stream_grant_signing_bytes_v1(grant))`",
    check: "the challenge, the proof of possession and `SessionOpenedV1` of a session name one `grant_id`, the id of a grant in the bundle",
    limit: null,
  },
  {
    id: "B6",
    section: "§7 check 3, §9.4",
    title: "a grant carries the stream's current `authorization_generation` at the request's view",
    check: "the grant's generation = the stream record's at every view the grant is used at (as B4)",
    limit: null,
  },
  {
    id: "B7",
    section: "§7 check 4",
    title: "a grant is used only inside its time window",
    check: "`not_before_ms ≤ expires_at_ms`; `expires_at_ms − not_before_ms ≤ cbqs.max_grant_ttl_ms` (live, at the session's view); every receipt answering the grant's requests committed no earlier than `not_before_ms − cbqs.max_clock_skew_ms` (live, at the receipt's view)",
    limit: "the upper end: admission happened at the broker's clock, which no artifact records — `committed_at_ms` follows admission by a durable commit of unbounded length, so a receipt committed after `expires_at_ms` may be honest",
  },
  {
    id: "B8",
    section: "§7 check 5, §8, §13.2",
    title: "a request's method is permitted by the grant's verbs",
    check: "Append → APPEND; CreateLane, CloseLane → LANE_ADMIN; ListLanes → CONSUME, REPLAY or LANE_ADMIN; Create/Update/DeleteGroup → GROUP_ADMIN; OpenSubscription → CONSUME (StandardGroup, Fast, DeadLetters) or REPLAY (StandardReplay); Ack, Nack, Extend, Reject → ACKNOWLEDGE; Redrive → REDRIVE",
    limit: "key-batch methods (the spec names no verb for them) and Fast resumption before the live head, which needs REPLAY only when the cursor is behind the head at admission — a moment no artifact records",
  },
  {
    id: "B9",
    section: "§7.2, §11.2, §13.2",
    title: "a request stays inside the grant's lane scope and group scope",
    check: "the lane of an append, lane mutation, group mutation, lease operation or redrive is in `lane_scope`, its group in `group_scope`; a subscription's scope is a subset of `lane_scope`",
    limit: null,
  },
  {
    id: "B10",
    section: "§7 check 6, §10",
    title: "an append fits the intersection of the stream's and the grant's message-size limits",
    check: "payload bytes ≤ min(the stream's `max_message_bytes` at the receipt's view, the grant's `max_message_bytes`)",
    limit: "the other quotas of the intersection — bytes per second, in-flight leases, provider and account quotas — are measured by the broker's clock and counters, which no artifact carries",
  },
  {
    id: "B11",
    section: "§7, §18",
    title: "a grant's `max_lane_creates_per_min` does not exceed the finalized protocol bound",
    check: "against the live `cbqs.max_lane_creates_per_min` at every view the grant is used at",
    limit: "the rolling 60-second window itself: admission times are the broker's",
  },
  {
    id: "B12",
    section: "§7.1",
    title: "a session is opened only on a valid proof of possession of the grant's holder key",
    check: "`SessionProofV1` names its challenge's `session_id`, `challenge` and `grant_id`, and verifies under the grant's `holder_signing_key`; `SessionOpenedV1` follows such a proof",
    limit: null,
  },
  {
    id: "B13",
    section: "§7.1, §13.1",
    title: "every request is proven by its session's holder",
    check: "the `RequestProofV1` names an opened session and verifies under that session's holder key (the method tag and `body_hash` are the decoder's: a request breaking them does not decode)",
    limit: null,
  },
  {
    id: "B14",
    section: "§7.1",
    title: "request counters start at one and increase strictly within a session",
    check: "per session, in bundle order: the first counter is 1, each later one above the one before",
    limit: null,
  },
  {
    id: "B15",
    section: "§14.1",
    title: "the stream's global receipt chain runs from its genesis anchor",
    check: "the first append receipt's `previous_global_receipt` is `stream_receipt_genesis` (or, when a stream-wide retention anchor comes first, that anchor's `previous_global_receipt`), each later one the digest of the receipt before it; record ids strictly increase",
    limit: null,
  },
  {
    id: "B16",
    section: "§8, §14.1",
    title: "each lane's receipt chain runs from its lane genesis anchor",
    check: "per lane: the first receipt's `previous_lane_receipt` is `lane_receipt_genesis` (or a lane retention anchor's), each later one the digest of the lane's receipt before it",
    limit: null,
  },
  {
    id: "B17",
    section: "§10, §13.2, §14.1",
    title: "an append receipt describes the record that was requested, in the stream's class",
    check: "against the append body it answers: stream, lane, `client_message_id`, deadlines, generation, `header_hash` of the §10 header and `payload_hash`; a Standard stream's records carry Standard ids, a Fast stream's Fast ids",
    limit: null,
  },
  {
    id: "B18",
    section: "§9.4, §10",
    title: "an append declares the stream's encryption generation, and a zero nonce when unencrypted",
    check: "the body's `encryption_generation` = the stream record's at the receipt's view; the nonce is zero on an unencrypted stream",
    limit: null,
  },
  {
    id: "B19",
    section: "§8",
    title: "lanes: derived ids, never reused, within `max_lanes`",
    check: "a created lane's id = keccak256(\"cbqs/lane-id/v1\" ‖ stream_id ‖ lane_nonce); no lane id is created twice; open lanes plus the default lane ≤ the stream's `max_lanes` at the view; no append to a lane closed earlier in the bundle",
    limit: "lanes created before the bundle starts are unknown to it: their count and closure are checked only from the bundle's own history",
  },
  {
    id: "B20",
    section: "§11.2, §14.2",
    title: "each consumer group's receipt chain runs from its genesis and ends at its deletion",
    check: "per (stream, lane, group): the first receipt's `previous_group_receipt` is the group genesis (or a group retention anchor's receipt) and it is a GroupCreate; each later one links to the digest of the group's receipt before it; no receipt follows a GroupDelete (the tuple is never reused)",
    limit: null,
  },
  {
    id: "B21",
    section: "§13.1",
    title: "delivery-cycle and lease identifiers are the canonical derivations",
    check: "`lease_id` of every issued or extended lease from its identity, cycle, attempt and holder key id; an acked, nacked, rejected or expired lease is one issued before; a cycle is the record's initial cycle or a successor a redrive created; a redrive's `successor_cycle_id` from the group's receipt-chain tail before it",
    limit: null,
  },
  {
    id: "B22",
    section: "§13.1",
    title: "a group configuration satisfies the §13.1 inequalities at create and update",
    check: "0 < visibility_timeout ≤ max_visibility ≤ the stream's `max_visibility_ms`; 0 < max_attempts ≤ 100; 0 < max_in_flight; 0 < record_deadline_ms; dead_letter_ttl ≤ the stream's `retention_ms`; retention_pin_until ≤ committed_at_ms + retention_ms (saturating)",
    limit: "`now_ms` is the broker's clock at admission: the receipt's `committed_at_ms`, which is no earlier, stands in for it, so a pin can only be caught when it is too far even for that",
  },
  {
    id: "B23",
    section: "§12.1",
    title: "broker-epoch transitions form the start of each lineage of the checkpoint chain",
    check: "the first transition is the new stream's (no lineage, epoch 0, Clean) anchored at `checkpoint_genesis`; each later one follows the current lineage and names the latest checkpoint's digest (and, when it is of the previous lineage, its last sequence)",
    limit: "whether a Clean transition was earned — the equal watermarks recorded before shutdown — is the broker's private state",
  },
  {
    id: "B24",
    section: "§12.2, §13.2",
    title: "checkpoints chain and stay contiguous within a lineage",
    check: "a lineage's first checkpoint links to its transition's digest and starts at 0, each later one links to the checkpoint before it and starts at its last + 1, in the lineage's broker epoch; a durable watermark names the checkpoint genesis (no sequence) or a checkpoint of the bundle (its last sequence)",
    limit: null,
  },
  {
    id: "B25",
    section: "§12.2",
    title: "a checkpoint's `ordered_range_root` commits exactly the batch's records",
    check: "recomputed with the §12.2 helpers (lane partition, counts, range) from the batch's records as the bundle carries them (fast append requests and deliveries); two different records at one id are refused",
    limit: "only for batches whose records the bundle carries: a batch the bundle holds none of is noted, not checked (a batch it holds some of is refused)",
  },
  {
    id: "B26",
    section: "§15",
    title: "retention anchors are monotone per comparison key and restart the chains where they were",
    check: "floors never regress within (stream, epoch, lane?), (stream, epoch, lane, group) or (stream, epoch, broker epoch); a standard anchor's predecessor digests are those of the bundle's receipts before its floor; a fast anchor's `previous_checkpoint` is the link before the batch holding its floor; a group anchor names a receipt of the group's chain",
    limit: "that the records below a floor were really deleted, and when: deletion and the broker's clock are not observable",
  },
  {
    id: "B27",
    section: "§15",
    title: "a snapshot manifest is bound to a provider receipt published with it",
    check: "a receipt of the bundle has `provider_anchor` as its signing digest, with the manifest's context and stream; Fast: a checkpoint receipt, `covered_through` its digest; Standard: an append receipt whose record id is `covered_through` (of the manifest's lane for a lane snapshot)",
    limit: "`application_signature` (its key and policy are application state) and `snapshot_hash` (needs the snapshot bytes): content fidelity is an application trust property (§15)",
  },
  {
    id: "B28",
    section: "§7, §14",
    title: "after observing a change, the broker signs nothing from an older view",
    check: "along each chain (global receipts, each group, checkpoints), a receipt whose view is older than an earlier receipt's must see the same status, provider key, provider epoch, authorization and encryption generations",
    limit: "a change undone between the two views (e.g. Active → Suspended → Active) is seen only by comparing every height between them, which is not done",
  },
  {
    id: "B29",
    section: "§6",
    title: "no mutation while escrow is below the rent accrued at `effective_rent_height`",
    check: "for every mutation receipt (appends, lane events, group create/update/delete, redrive) on an Active record: escrow ≥ (effective_rent_height − last_settled_block) × rate_per_block, checked u128; a height below `last_settled_block` or an overflow fails closed",
    limit: null,
  },
  {
    id: "B30",
    section: "§6, §6.1",
    title: "no mutation while Suspended, terminal, or at or past the pinned grace deadline",
    check: "for every mutation receipt: the stream record at its view is Active (a Suspended record at or past its pinned `suspension_grace_deadline_block`, compared with `effective_rent_height`, is named as such)",
    limit: null,
  },
];

/** Broker rules no offline verifier can check: they need the broker's clock, private state or the network at the moment of service. */
export const OFFLINE_LIMITS: readonly { section: string; rule: string; why: string }[] = [
  { section: "§7", rule: "fail closed when the finalized view is older than `cbqs.max_chain_staleness_blocks`", why: "needs the chain's head at the moment of service, which no artifact records" },
  { section: "§11.1", rule: "idempotent append: the dedupe horizon, `IdempotencyConflict`, `IdempotencyExpired`", why: "needs the broker's dedupe table and `received_at_ms`" },
  { section: "§11.2, §13.2", rule: "credit, in-flight limits, lease expiry timing, backpressure, deficit round robin", why: "needs the broker's counters and clock" },
  { section: "§12", rule: "committing a fast batch when `fast_batch_max_ms` or `fast_batch_max_records` is reached", why: "batch timing is the broker's clock; a verifier checks only the immutable 65,536 bound (§12.2)" },
  { section: "§13.2", rule: "long-poll: one request in flight, bounded undelivered controls", why: "transport behaviour, not an artifact" },
  { section: "§14.3", rule: "atomic commit sets", why: "durability is observable only through the broker's store" },
  { section: "§15", rule: "retention applies only after every group reached a terminal state or its pin", why: "needs every group's delivery state at pruning time" },
];

export const RULES_BY_ID: ReadonlyMap<RuleId, BrokerRule> = new Map(BROKER_RULES.map((r) => [r.id, r]));

export function ruleOf(id: RuleId): BrokerRule {
  return RULES_BY_ID.get(id)!;
}
