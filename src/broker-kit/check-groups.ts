// Consumer groups and delivery state (CIP-39 §11.2, §13.1, §14.2): each group's receipt chain
// from its genesis to its deletion (B20), the canonical cycle and lease ids (B21), the group
// configuration inequalities (B22). The self-verifying digests (resulting_state_digest) are the
// decoder's: an update whose state does not reproduce its receipt's digest does not decode.
import { bytesEqual } from "../bytes.js";
import { deliveryStateReceiptDigest } from "../codec/signing.js";
import { groupReceiptGenesis, initialDeliveryCycleId, leaseId, redriveDeliveryCycleId, type DeliveryIdentityV1 } from "../codec/derive.js";
import type { DeliveryStateActionV1, DeliveryStateReceiptV1, GroupRetentionAnchorV1 } from "../codec/types.js";
import type { DeliveryResultStateV1, GroupConfigV1 } from "../codec/wire-types.js";
import type { Artifact } from "./bundle.js";
import type { ChainView } from "./chain-source.js";
import { hex, short, type Checks } from "./checks.js";
import { checkEconomics, type ViewCursor } from "./check-views.js";

/** §18 Maximum of cbqs.standard.max_attempts: the §13.1 ceiling of a group's max_attempts. */
export const MAX_ATTEMPTS_CEILING = 100;
const MUTATIONS: ReadonlySet<DeliveryStateActionV1> = new Set(["GroupCreate", "GroupUpdate", "GroupDelete", "Redrive"]);

interface GroupChain {
  tail: Uint8Array;
  /** The line of its GroupDelete, once deleted. */
  deletedAt: number | null;
  /** The chain starts at the group genesis in this bundle (not at a retention anchor). */
  fromGenesis: boolean;
  receipts: Uint8Array[];
}

const identityKey = (id: DeliveryIdentityV1): string => `${hex(id.lane_id)}/${hex(id.group_id)}/${id.record_id.sequence}`;

export class GroupChecks {
  private readonly seen = new Map<string, ChainView | undefined>();
  readonly chains = new Map<string, GroupChain>();
  /**
   * A group anchor seen before its group's first receipt: the chain starts at the receipt it
   * names. Of several such anchors the last counts: floors only rise (B26), and the bundle's
   * receipts start at the highest.
   */
  private readonly startAt = new Map<string, Uint8Array>();
  /** Issued leases by id: what a later ack, nack, reject or expiry must name. */
  private readonly leases = new Map<string, { identity: string; cycle: Uint8Array; attempt: number }>();
  /** Successor cycles created by redrives, per record identity. */
  private readonly successors = new Map<string, Uint8Array[]>();

  constructor(
    private readonly c: Checks,
    private readonly cursor: ViewCursor,
  ) {}

  anchored(anchor: GroupRetentionAnchorV1): void {
    const key = `${hex(anchor.lane_id)}/${hex(anchor.group_id)}`;
    // Read only for a group with no receipt yet: an anchor after its first receipt changes nothing.
    this.startAt.set(key, anchor.latest_retained_receipt);
  }

  /** Every check of one delivery-state receipt (once), with its state or group config when carried. */
  receipt(a: Artifact, rc: DeliveryStateReceiptV1, where: string, carried: { state?: DeliveryResultStateV1; config?: GroupConfigV1 | null }): ChainView | undefined {
    const digest = deliveryStateReceiptDigest(rc);
    const dkey = hex(digest);
    if (this.seen.has(dkey)) return this.seen.get(dkey);
    const c = this.c;
    c.contextOf(a, rc.context, where);
    c.streamOf(a, rc.stream_id, `${where}.stream_id`);
    const view = c.servedAt(a, rc.served_at, where);
    this.seen.set(dkey, view);
    if (view !== undefined) c.providerSignature(a, view, digest, rc.signature, where);

    const key = `${hex(rc.lane_id)}/${hex(rc.group_id)}`;
    const chain = this.chains.get(key);
    const group = `group ${short(rc.group_id)} on lane ${short(rc.lane_id)}`;
    if (chain === undefined) {
      const anchor = this.startAt.get(key);
      const fromAnchor = anchor !== undefined && bytesEqual(anchor, digest);
      if (fromAnchor) {
        c.check(a, "B20", true, () => "");
      } else {
        const genesis = groupReceiptGenesis(c.context, c.stream, rc.lane_id, rc.group_id);
        c.check(a, "B20", bytesEqual(rc.previous_group_receipt, genesis), () => `${where}.previous_group_receipt is ${hex(rc.previous_group_receipt)}; ${group} starts at its group genesis ${hex(genesis)}`);
        c.check(a, "B20", rc.action === "GroupCreate", () => `${where}: ${group}'s first receipt is a ${rc.action}, not its GroupCreate`);
      }
      this.chains.set(key, { tail: digest, deletedAt: rc.action === "GroupDelete" ? a.line : null, fromGenesis: !fromAnchor, receipts: [digest] });
    } else {
      c.check(a, "B20", chain.deletedAt === null, () => `${where}: a ${rc.action} of ${group} after its GroupDelete on line ${chain.deletedAt}: the (stream, lane, group) tuple is never reused (§11.2)`);
      c.check(a, "B20", bytesEqual(rc.previous_group_receipt, chain.tail), () => `${where}.previous_group_receipt is ${hex(rc.previous_group_receipt)}; ${group}'s tail is ${hex(chain.tail)}`);
      chain.tail = digest;
      chain.receipts.push(digest);
      if (rc.action === "GroupDelete" && chain.deletedAt === null) chain.deletedAt = a.line;
    }
    if (view !== undefined) {
      this.cursor.see(a, `group ${short(rc.group_id)}`, view);
      if (MUTATIONS.has(rc.action)) checkEconomics(c, a, view, `the ${rc.action} receipt`);
      if (carried.config) this.config(a, carried.config, view, rc.committed_at_ms, where);
    }
    if (carried.state !== undefined) this.ids(a, rc, carried.state, where, this.chains.get(key)!.fromGenesis);
    return view;
  }

  /** B21: the state's cycle and lease ids are the §13.1 derivations. */
  private ids(a: Artifact, rc: DeliveryStateReceiptV1, state: DeliveryResultStateV1, where: string, known: boolean): void {
    const c = this.c;
    const identity: DeliveryIdentityV1 = { stream_id: state.stream_id, lane_id: state.lane_id, group_id: state.group_id, record_id: state.record_id };
    const ikey = identityKey(identity);
    const successors = this.successors.get(ikey) ?? [];
    const initial = initialDeliveryCycleId(c.context, identity);
    const cycleKnown = bytesEqual(state.delivery_cycle_id, initial) || successors.some((s) => bytesEqual(s, state.delivery_cycle_id));
    if (known) c.check(a, "B21", cycleKnown, () => `${where}: delivery_cycle_id ${hex(state.delivery_cycle_id)} is neither record ${state.record_id.sequence}'s initial cycle ${hex(initial)} nor a successor a redrive created`);
    // Only a Redrive carries a successor cycle (§14.2 required result fields; the decoder's shapes).
    if (state.successor_cycle_id !== null) {
      const successor = redriveDeliveryCycleId(c.context, identity, state.delivery_cycle_id, rc.previous_group_receipt);
      c.check(a, "B21", bytesEqual(state.successor_cycle_id, successor), () => `${where}: successor_cycle_id is ${hex(state.successor_cycle_id!)}; the redrive derivation from the group's tail ${short(rc.previous_group_receipt)} is ${hex(successor)}`);
      this.successors.set(ikey, [...successors, state.successor_cycle_id]);
    }
    if (state.lease_id === null) return;
    if (state.holder_signing_key_id !== null) {
      const expected = leaseId(c.context, identity, state.delivery_cycle_id, state.attempt, state.holder_signing_key_id);
      c.check(a, "B21", bytesEqual(state.lease_id, expected), () => `${where}: lease_id is ${hex(state.lease_id!)}; the §13.1 derivation for attempt ${state.attempt} and holder ${short(state.holder_signing_key_id!)} is ${hex(expected)}`);
      this.leases.set(hex(state.lease_id), { identity: ikey, cycle: state.delivery_cycle_id, attempt: state.attempt });
    } else if (known) {
      const issued = this.leases.get(hex(state.lease_id));
      c.check(a, "B21", issued !== undefined && issued.identity === ikey && bytesEqual(issued.cycle, state.delivery_cycle_id) && issued.attempt === state.attempt, () =>
        `${where}: lease_id ${hex(state.lease_id!)} is no lease issued earlier for record ${state.record_id.sequence}, this cycle and attempt ${state.attempt}`,
      );
    }
  }

  /** B22: the §13.1 inequalities against the stream's configuration at the receipt's view. */
  private config(a: Artifact, g: GroupConfigV1, view: ChainView, committedAt: bigint, where: string): void {
    const s = view.stream.config;
    // §13.1 bounds the pin by committed_at_ms + retention_ms saturated at u64::MAX; a u64 pin
    // compares the same against the exact (bigint) sum.
    const rules: Array<[boolean, string]> = [
      [g.visibility_timeout_ms > 0n, "visibility_timeout_ms is 0"],
      [g.visibility_timeout_ms <= g.max_visibility_ms, `visibility_timeout_ms ${g.visibility_timeout_ms} exceeds max_visibility_ms ${g.max_visibility_ms}`],
      [g.max_visibility_ms <= s.max_visibility_ms, `max_visibility_ms ${g.max_visibility_ms} exceeds the stream's max_visibility_ms ${s.max_visibility_ms} at height ${view.height}`],
      [g.max_attempts > 0 && g.max_attempts <= MAX_ATTEMPTS_CEILING, `max_attempts ${g.max_attempts} is outside 1..=${MAX_ATTEMPTS_CEILING}`],
      [g.max_in_flight > 0, "max_in_flight is 0"],
      [g.record_deadline_ms > 0n, "record_deadline_ms is 0"],
      [g.dead_letter_ttl_ms <= s.retention_ms, `dead_letter_ttl_ms ${g.dead_letter_ttl_ms} exceeds the stream's retention_ms ${s.retention_ms}`],
      [g.retention_pin_until_ms <= committedAt + s.retention_ms, `retention_pin_until_ms ${g.retention_pin_until_ms} is beyond committed_at_ms ${committedAt} + retention_ms ${s.retention_ms}`],
    ];
    const broken = rules.find(([ok]) => !ok);
    this.c.check(a, "B22", broken === undefined, () => `${where}: the group configuration breaks §13.1: ${broken![1]}`);
  }
}
