// Grants, sessions and request proofs (CIP-39 §7, §7.1, §7.2, §13.1): B4–B14. A grant is
// checked at every view it is used at — the view its session was opened at, and the view of
// every receipt answering one of its session's requests — because §7 evaluates the grant against
// the stream record of the request's view, and §7 makes the broker revalidate a session before
// each mutation.
import { bytesEqual } from "../bytes.js";
import { grantId, requestProofDigest, sessionProofDigest } from "../codec/signing.js";
import { laneId } from "../codec/derive.js";
import type { Bytes32, GroupScopeV1, LaneScopeV1, StreamGrantV1 } from "../codec/types.js";
import type { AuthenticatedRequestV1, CbqsRequestBodyV1, SessionChallengeV1, SubscriptionScopeV1 } from "../codec/wire-types.js";
import type { Artifact } from "./bundle.js";
import type { ChainView } from "./chain-source.js";
import { hex, short, verifies, type Checks } from "./checks.js";

/** §7 verb bits. */
export const VERB = { APPEND: 0, CONSUME: 1, ACKNOWLEDGE: 2, REPLAY: 3, GROUP_ADMIN: 4, REDRIVE: 5, LANE_ADMIN: 6 } as const;
export type Verb = keyof typeof VERB;
export const verbBits = (...verbs: Verb[]): number => verbs.reduce((bits, v) => bits | (1 << VERB[v]), 0);

/** The verbs of which a request needs one (B8); null: the method needs none, or the spec names none (key batches). */
export function verbsFor(body: CbqsRequestBodyV1): Verb[] | null {
  switch (body.type) {
    case "Append":
      return ["APPEND"];
    case "CreateLane":
    case "CloseLane":
      return ["LANE_ADMIN"];
    case "ListLanes":
      return ["CONSUME", "REPLAY", "LANE_ADMIN"];
    case "CreateGroup":
    case "UpdateGroup":
    case "DeleteGroup":
      return ["GROUP_ADMIN"];
    case "OpenSubscription":
      return body.body.source.type === "StandardReplay" ? ["REPLAY"] : ["CONSUME"];
    case "Ack":
    case "Nack":
    case "Extend":
    case "Reject":
      return ["ACKNOWLEDGE"];
    case "Redrive":
      return ["REDRIVE"];
    default:
      return null; // CloseSubscription, Credit: no verb; the key-batch methods: none named (§9.3, §13.1)
  }
}

/** What a request touches that the grant's scopes must cover (B9). */
interface Touched {
  lanes: Bytes32[];
  groups: Bytes32[];
  scope?: SubscriptionScopeV1;
}

export function touchedBy(stream: Uint8Array, body: CbqsRequestBodyV1): Touched {
  switch (body.type) {
    case "Append":
      return { lanes: [body.body.lane_id], groups: [] };
    case "CreateLane":
      return { lanes: [laneId(stream, body.body.lane_nonce)], groups: [] };
    case "CloseLane":
      return { lanes: [body.body.lane_id], groups: [] };
    case "CreateGroup":
      return { lanes: [body.body.config.lane_id], groups: [body.body.config.group_id] };
    case "UpdateGroup":
    case "DeleteGroup":
    case "Redrive":
      return { lanes: [body.body.lane_id], groups: [body.body.group_id] };
    case "Ack":
    case "Nack":
    case "Extend":
    case "Reject":
      return { lanes: [body.body.lease.lane_id], groups: [body.body.lease.group_id] };
    case "OpenSubscription": {
      const s = body.body.source;
      if (s.type === "StandardGroup" || s.type === "DeadLetters") return { lanes: [s.lane_id], groups: [s.group_id] };
      return { lanes: [], groups: [], scope: s.scope };
    }
    default:
      return { lanes: [], groups: [] };
  }
}

/** The stream ids a request body names (B1). */
export function streamsOf(body: CbqsRequestBodyV1): Array<[Bytes32, string]> {
  switch (body.type) {
    case "Ack":
    case "Nack":
    case "Extend":
    case "Reject":
      return [[body.body.lease.stream_id, "body.lease.stream_id"]];
    case "BeginKeyBatch":
    case "PutKeyBatchChunk":
    case "CommitKeyBatch":
      return []; // they name the key stream, not the bundle's stream
    default:
      return [[body.body.stream_id, "body.stream_id"]];
  }
}

const laneInScope = (scope: LaneScopeV1, lane: Uint8Array): boolean =>
  scope.type === "Any" || (scope.type === "Exact" ? bytesEqual(scope.lane_id, lane) : scope.lane_ids.some((l) => bytesEqual(l, lane)));
const groupInScope = (scope: GroupScopeV1, group: Uint8Array): boolean => scope.type === "Any" || bytesEqual(scope.group_id, group);
function scopeWithin(sub: SubscriptionScopeV1, grant: LaneScopeV1): boolean {
  if (sub.type === "Any") return grant.type === "Any";
  if (sub.type === "Exact") return laneInScope(grant, sub.lane_id);
  return sub.lane_ids.every((l) => laneInScope(grant, l));
}

interface GrantEntry {
  grant: StreamGrantV1;
  id: Uint8Array;
  line: number;
  /** Heights at which the grant was already checked (once per view). */
  checkedAt: Set<bigint>;
}

export interface Session {
  id: Uint8Array;
  grant: GrantEntry | null;
  lastCounter: bigint;
  /** The view it was opened at (the fallback view of requests whose answers carry none). */
  view: ChainView | undefined;
}

export interface RequestEntry {
  artifact: Artifact;
  request: AuthenticatedRequestV1;
  session: Session | null;
}

export class SessionChecks {
  private readonly grants = new Map<string, GrantEntry>();
  private readonly challenges = new Map<string, SessionChallengeV1>();
  /** The session ids a proof of possession was given for (its faults are reported on its own line). */
  private readonly proven = new Set<string>();
  private readonly sessions = new Map<string, Session>();
  readonly requests = new Map<string, RequestEntry>();

  constructor(private readonly c: Checks) {}

  grant(a: Artifact & { type: "StreamGrantV1" }): void {
    const g = a.value;
    this.c.contextOf(a, g.context, "grant");
    this.c.streamOf(a, g.stream_id, "grant.stream_id");
    const id = grantId(g);
    if (!this.grants.has(hex(id))) this.grants.set(hex(id), { grant: g, id, line: a.line, checkedAt: new Set() });
    this.c.check(a, "B7", g.not_before_ms <= g.expires_at_ms, () => `not_before_ms ${g.not_before_ms} is after expires_at_ms ${g.expires_at_ms}: no moment admits the grant`);
  }

  /** B5: `grantId` names a grant of the bundle. */
  private named(a: Artifact, grantIdValue: Uint8Array, where: string): GrantEntry | null {
    const entry = this.grants.get(hex(grantIdValue)) ?? null;
    this.c.check(a, "B5", entry !== null, () => `${where}.grant_id ${hex(grantIdValue)} is the id of no grant in the bundle (grant_id = keccak256(stream_grant_signing_bytes_v1(grant)))`);
    return entry;
  }

  challenge(a: Artifact & { type: "SessionChallengeV1" }): void {
    const ch = a.value;
    this.c.contextOf(a, ch.context, "challenge");
    this.c.streamOf(a, ch.stream_id, "challenge.stream_id");
    this.c.servedAt(a, ch.served_at, "challenge");
    this.named(a, ch.grant_id, "challenge");
    this.challenges.set(hex(ch.session_id), ch);
  }

  proof(a: Artifact & { type: "SessionProofV1" }): void {
    const p = a.value;
    this.c.contextOf(a, p.context, "proof");
    this.c.streamOf(a, p.stream_id, "proof.stream_id");
    const grant = this.named(a, p.grant_id, "proof");
    const ch = this.challenges.get(hex(p.session_id));
    if (ch === undefined) this.c.check(a, "B12", false, () => `proof.session_id ${hex(p.session_id)} names no challenge earlier in the bundle`);
    else {
      this.c.check(a, "B12", bytesEqual(p.challenge, ch.challenge), () => `proof.challenge ${short(p.challenge)} is not the session's challenge ${short(ch.challenge)}`);
      this.c.check(a, "B12", bytesEqual(p.grant_id, ch.grant_id), () => `proof.grant_id ${short(p.grant_id)} is not the challenge's ${short(ch.grant_id)}`);
    }
    if (grant !== null) {
      this.c.check(a, "B12", verifies(grant.grant.holder_signing_key, sessionProofDigest(p), p.signature), () => `proof.signature does not verify under the grant's holder_signing_key ${hex(grant.grant.holder_signing_key.key)}`);
    }
    this.proven.add(hex(p.session_id));
  }

  opened(a: Artifact & { type: "SessionOpenedV1" }): void {
    const o = a.value;
    this.c.contextOf(a, o.context, "opened");
    this.c.streamOf(a, o.stream_id, "opened.stream_id");
    const view = this.c.servedAt(a, o.served_at, "opened");
    const grant = this.named(a, o.grant_id, "opened");
    const ch = this.challenges.get(hex(o.session_id));
    if (ch !== undefined) this.c.check(a, "B5", bytesEqual(ch.grant_id, o.grant_id), () => `opened.grant_id ${short(o.grant_id)} is not its challenge's ${short(ch.grant_id)}`);
    this.c.check(a, "B12", this.proven.has(hex(o.session_id)), () => `session ${short(o.session_id)} is opened with no proof of possession before it`);
    this.sessions.set(hex(o.session_id), { id: o.session_id, grant, lastCounter: 0n, view });
    if (grant !== null && view !== undefined) {
      const ttl = view.bounds["cbqs.max_grant_ttl_ms"];
      const window = grant.grant.expires_at_ms - grant.grant.not_before_ms;
      if (ttl !== undefined) this.c.check(a, "B7", window <= ttl, () => `the grant on line ${grant.line} is valid for ${window} ms, above cbqs.max_grant_ttl_ms ${ttl} at height ${view.height}`);
      this.use(a, grant, view);
    }
  }

  /**
   * B4, B6, B11: the grant against the stream record at `view` (once per view); B7: a receipt
   * committed at `committedAt` was admitted no earlier.
   */
  use(a: Artifact, entry: GrantEntry, view: ChainView, committedAt?: bigint): void {
    const g = entry.grant;
    if (!entry.checkedAt.has(view.height)) {
      entry.checkedAt.add(view.height);
      const s = view.stream;
      this.c.check(a, "B4", verifies(s.admin_key, entry.id, g.signature), () => `the grant on line ${entry.line} does not verify under the stream's admin_key ${hex(s.admin_key.key)} at height ${view.height}`);
      this.c.check(a, "B6", g.authorization_generation === s.authorization_generation, () => `the grant on line ${entry.line} carries authorization_generation ${g.authorization_generation}; the stream's at height ${view.height} is ${s.authorization_generation}`);
      const bound = view.bounds["cbqs.max_lane_creates_per_min"];
      if (bound !== undefined) this.c.check(a, "B11", BigInt(g.max_lane_creates_per_min) <= bound, () => `the grant on line ${entry.line} allows ${g.max_lane_creates_per_min} lane creations a minute, above cbqs.max_lane_creates_per_min ${bound} at height ${view.height}`);
    }
    const skew = view.bounds["cbqs.max_clock_skew_ms"];
    if (committedAt !== undefined && skew !== undefined) {
      this.c.check(a, "B7", committedAt + skew >= g.not_before_ms, () => `committed at ${committedAt} ms, before the grant's not_before_ms ${g.not_before_ms} less cbqs.max_clock_skew_ms ${skew}: admitted before the grant's window`);
    }
  }

  request(a: Artifact & { type: "AuthenticatedRequestV1" }): void {
    const r = a.value;
    const p = r.proof;
    this.c.contextOf(a, p.context, "proof");
    for (const [id, where] of streamsOf(r.body)) this.c.streamOf(a, id, where);
    const session = this.sessions.get(hex(p.session_id)) ?? null;
    this.requests.set(hex(r.request_id), { artifact: a, request: r, session });
    if (!this.c.check(a, "B13", session !== null, () => `proof.session_id ${hex(p.session_id)} names no session opened earlier in the bundle`) || session === null) return;
    const g = session.grant?.grant;
    if (g !== undefined) {
      this.c.check(a, "B13", verifies(g.holder_signing_key, requestProofDigest(p), p.signature), () => `proof.signature does not verify under the session's holder key ${hex(g.holder_signing_key.key)}`);
    }
    const first = session.lastCounter === 0n;
    this.c.check(a, "B14", first ? p.counter === 1n : p.counter > session.lastCounter, () =>
      first ? `the session's first request has counter ${p.counter}; counters start at one` : `counter ${p.counter} does not increase on the session's last ${session.lastCounter}`,
    );
    if (p.counter > session.lastCounter) session.lastCounter = p.counter;
    if (g === undefined) return;
    const verbs = verbsFor(r.body);
    if (verbs !== null) {
      this.c.check(a, "B8", verbs.some((v) => (g.verbs & (1 << VERB[v])) !== 0), () => `the ${r.body.type} request needs ${verbs.join(" or ")}; the grant's verbs are 0b${g.verbs.toString(2)}`);
    }
    const t = touchedBy(this.c.stream, r.body);
    for (const lane of t.lanes) this.c.check(a, "B9", laneInScope(g.lane_scope, lane), () => `lane ${hex(lane)} is outside the grant's lane_scope (${g.lane_scope.type})`);
    for (const group of t.groups) this.c.check(a, "B9", groupInScope(g.group_scope, group), () => `group ${hex(group)} is outside the grant's group_scope (${g.group_scope.type})`);
    if (t.scope !== undefined) this.c.check(a, "B9", scopeWithin(t.scope, g.lane_scope), () => `the subscription's ${t.scope!.type} scope is not within the grant's ${g.lane_scope.type} lane_scope`);
  }
}
