// The session checks (CIP-39 §7, §7.1, §7.2, §13.1; the kit's rules B4–B14) in process, each rule
// reached alone: a grant, challenge, proof, opened session and signed requests built here against
// one synthetic chain view, then one value broken at a time. The verifier must refuse each broken
// artifact with its rule and evidence, accept each boundary value §7 admits, and say which verbs
// and which lanes and groups every request method needs.
import { describe, expect, it } from "vitest";
import type { Artifact, ArtifactValues } from "../../src/broker-kit/bundle.js";
import type { ChainView } from "../../src/broker-kit/chain-source.js";
import { SessionChecks, streamsOf, touchedBy, verbBits, verbsFor } from "../../src/broker-kit/check-sessions.js";
import { Checks } from "../../src/broker-kit/checks.js";
import { KIT_KEYS } from "../../src/broker-kit/kit.js";
import { label32, signingKey } from "../../src/broker-kit/signer.js";
import { laneId } from "../../src/codec/derive.js";
import { grantId, requestProofDigest, sessionProofDigest } from "../../src/codec/signing.js";
import type { CbqsSigningContextV1, FinalizedViewV1, LaneScopeV1, RequestProofV1, SessionProofV1, StreamGrantV1, StreamRecordV1 } from "../../src/codec/types.js";
import type { CbqsRequestBodyV1, SubscriptionSourceV1 } from "../../src/codec/wire-types.js";
import { ed25519Sign } from "../../src/crypto/ed25519.js";
import { toHex } from "../../src/bytes.js";

const CONTEXT: CbqsSigningContextV1 = { version: 1, chain_id: 7n, chain_instance_id: label32("instance") };
const STREAM = label32("stream");
const ADMIN = KIT_KEYS.owner.seed;
const HOLDER = KIT_KEYS.holder.seed;
const FORGER = KIT_KEYS.application.seed;
const HEIGHT = 5n;
const NOT_BEFORE = 1_000_000n;
const BOUNDS = { "cbqs.max_grant_ttl_ms": 86_400_000n, "cbqs.max_lane_creates_per_min": 256n, "cbqs.max_clock_skew_ms": 5_000n };
const LANE = label32("lane");
const GROUP = label32("group");

function chainView(height: bigint): ChainView {
  return {
    height,
    blockHash: label32(`block/${height}`),
    stream: { admin_key: signingKey(ADMIN), authorization_generation: 1n } as StreamRecordV1,
    provider: null,
    bounds: BOUNDS,
    effectiveRentHeight: 0n,
  };
}
const served = (height: bigint): FinalizedViewV1 => ({ chain_instance_id: CONTEXT.chain_instance_id, height, block_hash: label32(`block/${height}`) });

function grant(o: Partial<StreamGrantV1> = {}): StreamGrantV1 {
  const g: StreamGrantV1 = {
    context: CONTEXT,
    stream_id: STREAM,
    authorization_generation: 1n,
    grant_nonce: label32(`nonce/${JSON.stringify(o, (_k, v) => (typeof v === "bigint" ? v.toString() : v))}`),
    holder_signing_key: signingKey(HOLDER),
    holder_hpke_key: null,
    verbs: verbBits("APPEND", "CONSUME", "ACKNOWLEDGE", "REPLAY", "GROUP_ADMIN", "REDRIVE", "LANE_ADMIN"),
    lane_scope: { type: "Any" },
    group_scope: { type: "Any" },
    not_before_ms: NOT_BEFORE,
    expires_at_ms: NOT_BEFORE + 3_600_000n,
    max_message_bytes: 1_024,
    max_append_bytes_per_sec: 1_048_576n,
    max_in_flight: 8,
    max_lane_creates_per_min: 16,
    signature: new Uint8Array(64),
    ...o,
  };
  if (o.signature === undefined) g.signature = ed25519Sign(ADMIN, grantId(g));
  return g;
}

/** One bundle's artifacts fed to the session checks in order; the failures as [rule, evidence]. */
/** What a test may change in a session's challenge or opening. */
type SessionFields = { grant_id?: Uint8Array; context?: CbqsSigningContextV1; stream_id?: Uint8Array; served_at?: FinalizedViewV1 };
/** The fields a session's challenge and its opening share. */
const sessionFields = (g: StreamGrantV1, session: string, o: SessionFields) => ({
  context: o.context ?? CONTEXT,
  served_at: o.served_at ?? served(HEIGHT),
  stream_id: o.stream_id ?? STREAM,
  grant_id: o.grant_id ?? grantId(g),
  provider_epoch: 0n,
  session_id: label32(session),
  expires_at_ms: NOT_BEFORE + 60_000n,
});

class Run {
  readonly checks = new Checks(CONTEXT, STREAM, new Map([[HEIGHT, { kind: "view" as const, view: chainView(HEIGHT) }], [HEIGHT + 1n, { kind: "view" as const, view: chainView(HEIGHT + 1n) }]]), "Standard");
  readonly sessions = new SessionChecks(this.checks);
  private line = 1;

  feed<K extends "StreamGrantV1" | "SessionChallengeV1" | "SessionProofV1" | "SessionOpenedV1" | "AuthenticatedRequestV1">(type: K, value: ArtifactValues[K]): Artifact {
    const a = { line: ++this.line, type, value } as Artifact;
    if (a.type === "StreamGrantV1") this.sessions.grant(a);
    else if (a.type === "SessionChallengeV1") this.sessions.challenge(a);
    else if (a.type === "SessionProofV1") this.sessions.proof(a);
    else if (a.type === "SessionOpenedV1") this.sessions.opened(a);
    else if (a.type === "AuthenticatedRequestV1") this.sessions.request(a);
    return a;
  }

  get failures(): Array<[string, string]> {
    return this.checks.failures.map((f) => [f.rule, f.evidence]);
  }
  get rules(): string[] {
    return this.checks.failures.map((f) => f.rule);
  }

  challenge(g: StreamGrantV1, session: string, o: SessionFields = {}): void {
    this.feed("SessionChallengeV1", { request_id: label32(`open/${session}`), ...sessionFields(g, session, o), challenge: label32(`challenge/${session}`) });
  }

  proof(g: StreamGrantV1, session: string, o: { challenge?: Uint8Array; grant_id?: Uint8Array; seed?: Uint8Array; context?: CbqsSigningContextV1; stream_id?: Uint8Array } = {}): void {
    const p: SessionProofV1 = {
      context: o.context ?? CONTEXT,
      stream_id: o.stream_id ?? STREAM,
      provider_epoch: 0n,
      grant_id: o.grant_id ?? grantId(g),
      session_id: label32(session),
      challenge: o.challenge ?? label32(`challenge/${session}`),
      signature: new Uint8Array(64),
    };
    p.signature = ed25519Sign(o.seed ?? HOLDER, sessionProofDigest(p));
    this.feed("SessionProofV1", p);
  }

  opened(g: StreamGrantV1, session: string, o: SessionFields = {}): void {
    this.feed("SessionOpenedV1", { request_id: label32(`complete/${session}`), ...sessionFields(g, session, o) });
  }

  /** The grant, then a session under it opened at HEIGHT the way §7.1 says. */
  open(g: StreamGrantV1, session = "s", grantLine = true): void {
    if (grantLine) this.feed("StreamGrantV1", g);
    this.challenge(g, session);
    this.proof(g, session);
    this.opened(g, session);
  }

  request(session: string, counter: bigint, body: CbqsRequestBodyV1, o: { seed?: Uint8Array; context?: CbqsSigningContextV1 } = {}): void {
    const proof: RequestProofV1 = { context: o.context ?? CONTEXT, session_id: label32(session), counter, method: body.type, body_hash: label32("body"), signature: new Uint8Array(64) };
    proof.signature = ed25519Sign(o.seed ?? HOLDER, requestProofDigest(proof));
    this.feed("AuthenticatedRequestV1", { request_id: label32(`request/${session}/${counter}`), proof, body });
  }
}

// Request bodies: only what the session checks read (type, stream and the lanes and groups named).
const body = (type: string, b: object): CbqsRequestBodyV1 => ({ type, body: { stream_id: STREAM, ...b } }) as unknown as CbqsRequestBodyV1;
const lease = { stream_id: STREAM, lane_id: LANE, group_id: GROUP };
const BODIES: Record<string, CbqsRequestBodyV1> = {
  Append: body("Append", { lane_id: LANE }),
  CreateLane: body("CreateLane", { lane_nonce: label32("nonce") }),
  CloseLane: body("CloseLane", { lane_id: LANE }),
  ListLanes: body("ListLanes", {}),
  CreateGroup: body("CreateGroup", { config: { lane_id: LANE, group_id: GROUP } }),
  UpdateGroup: body("UpdateGroup", { lane_id: LANE, group_id: GROUP }),
  DeleteGroup: body("DeleteGroup", { lane_id: LANE, group_id: GROUP }),
  Redrive: body("Redrive", { lane_id: LANE, group_id: GROUP }),
  Ack: { type: "Ack", body: { lease } } as unknown as CbqsRequestBodyV1,
  Nack: { type: "Nack", body: { lease } } as unknown as CbqsRequestBodyV1,
  Extend: { type: "Extend", body: { lease } } as unknown as CbqsRequestBodyV1,
  Reject: { type: "Reject", body: { lease } } as unknown as CbqsRequestBodyV1,
  CloseSubscription: body("CloseSubscription", {}),
  Credit: body("Credit", {}),
};
const subscribe = (source: SubscriptionSourceV1): CbqsRequestBodyV1 => body("OpenSubscription", { source });
const anyScope: LaneScopeV1 = { type: "Any" };

describe("what each request method needs of its grant (§7 verbs, §7.2 scopes)", () => {
  it("verbsFor names the verb bits §7 assigns each method, one of which the grant must hold (B8)", () => {
    const table = Object.fromEntries(Object.entries(BODIES).map(([k, b]) => [k, verbsFor(b)]));
    expect(table).toEqual({
      Append: ["APPEND"],
      CreateLane: ["LANE_ADMIN"],
      CloseLane: ["LANE_ADMIN"],
      ListLanes: ["CONSUME", "REPLAY", "LANE_ADMIN"],
      CreateGroup: ["GROUP_ADMIN"],
      UpdateGroup: ["GROUP_ADMIN"],
      DeleteGroup: ["GROUP_ADMIN"],
      Redrive: ["REDRIVE"],
      Ack: ["ACKNOWLEDGE"],
      Nack: ["ACKNOWLEDGE"],
      Extend: ["ACKNOWLEDGE"],
      Reject: ["ACKNOWLEDGE"],
      CloseSubscription: null,
      Credit: null,
    });
    expect(verbsFor(subscribe({ type: "StandardReplay", scope: anyScope, after: null }))).toEqual(["REPLAY"]);
    expect(verbsFor(subscribe({ type: "StandardGroup", lane_id: LANE, group_id: GROUP }))).toEqual(["CONSUME"]);
    expect(verbsFor(subscribe({ type: "Fast", scope: anyScope, after: null }))).toEqual(["CONSUME"]);
    expect(verbsFor(subscribe({ type: "DeadLetters", lane_id: LANE, group_id: GROUP, after: null }))).toEqual(["CONSUME"]);
  });

  it("touchedBy names the lanes and groups the grant's scopes must cover (B9): a created lane by its derived id", () => {
    const table = Object.fromEntries(Object.entries(BODIES).map(([k, b]) => [k, touchedBy(STREAM, b)]));
    const laneGroup = { lanes: [LANE], groups: [GROUP] };
    expect(table).toEqual({
      Append: { lanes: [LANE], groups: [] },
      CreateLane: { lanes: [laneId(STREAM, label32("nonce"))], groups: [] },
      CloseLane: { lanes: [LANE], groups: [] },
      ListLanes: { lanes: [], groups: [] },
      CreateGroup: laneGroup,
      UpdateGroup: laneGroup,
      DeleteGroup: laneGroup,
      Redrive: laneGroup,
      Ack: laneGroup,
      Nack: laneGroup,
      Extend: laneGroup,
      Reject: laneGroup,
      CloseSubscription: { lanes: [], groups: [] },
      Credit: { lanes: [], groups: [] },
    });
    expect(touchedBy(STREAM, subscribe({ type: "StandardGroup", lane_id: LANE, group_id: GROUP }))).toEqual(laneGroup);
    expect(touchedBy(STREAM, subscribe({ type: "DeadLetters", lane_id: LANE, group_id: GROUP, after: null }))).toEqual(laneGroup);
    const scope: LaneScopeV1 = { type: "Exact", lane_id: LANE };
    expect(touchedBy(STREAM, subscribe({ type: "StandardReplay", scope, after: null }))).toEqual({ lanes: [], groups: [], scope });
    expect(touchedBy(STREAM, subscribe({ type: "Fast", scope, after: null }))).toEqual({ lanes: [], groups: [], scope });
  });

  it("streamsOf names the stream id fields a request must carry the bundle's stream in (B1); key batches name the key stream", () => {
    const other = label32("other");
    expect(streamsOf(BODIES.Append!)).toEqual([[STREAM, "body.stream_id"]]);
    for (const t of ["Ack", "Nack", "Extend", "Reject"]) expect(streamsOf({ type: t, body: { lease: { ...lease, stream_id: other } } } as unknown as CbqsRequestBodyV1)).toEqual([[other, "body.lease.stream_id"]]);
    for (const t of ["BeginKeyBatch", "PutKeyBatchChunk", "CommitKeyBatch"]) expect(streamsOf(body(t, { stream_id: other }))).toEqual([]);
  });
});

describe("B1: every session artifact carries this chain's context and the bundle's stream, and the failure names the field", () => {
  const otherContext = { ...CONTEXT, chain_id: 8n };
  const other = label32("other-stream");
  it("grant, challenge, proof, opened and request each name their own field", () => {
    const g = grant();
    const run = new Run();
    run.feed("StreamGrantV1", grant({ context: otherContext }));
    run.feed("StreamGrantV1", grant({ stream_id: other }));
    run.feed("StreamGrantV1", g);
    run.challenge(g, "s", { context: otherContext });
    run.challenge(g, "s", { stream_id: other });
    run.proof(g, "s", { context: otherContext });
    run.proof(g, "s", { stream_id: other });
    run.opened(g, "s", { context: otherContext });
    run.opened(g, "s", { stream_id: other });
    run.request("s", 1n, BODIES.Append!, { context: otherContext });
    run.request("s", 2n, { ...BODIES.Append!, body: { ...BODIES.Append!.body, stream_id: other } } as CbqsRequestBodyV1);
    run.request("s", 3n, { type: "Ack", body: { lease: { ...lease, stream_id: other } } } as unknown as CbqsRequestBodyV1);
    expect(run.failures.map(([rule, e]) => `${rule} ${e.replace(/ .*/, "")}`)).toEqual([
      "B1 grant.context:",
      "B1 grant.stream_id",
      "B1 challenge.context:",
      "B1 challenge.stream_id",
      "B1 proof.context:",
      "B1 proof.stream_id",
      "B1 opened.context:",
      "B1 opened.stream_id",
      "B1 proof.context:",
      "B1 body.stream_id",
      "B1 body.lease.stream_id",
    ]);
  });

  it("B2: a challenge and an opened session served at another chain instance name their served_at", () => {
    const g = grant();
    const run = new Run();
    run.feed("StreamGrantV1", g);
    const elsewhere = { ...served(HEIGHT), chain_instance_id: label32("elsewhere") };
    run.challenge(g, "s", { served_at: elsewhere });
    run.proof(g, "s");
    run.opened(g, "s", { served_at: elsewhere });
    expect(run.failures.map(([rule, e]) => `${rule} ${e.replace(/ .*/, "")}`)).toEqual(["B2 challenge.served_at.chain_instance_id", "B2 opened.served_at.chain_instance_id"]);
  });
});

describe("the correct session passes every check", () => {
  it("a grant, its session and requests of every method with counters 1, 2, 3, … break no rule", () => {
    const run = new Run();
    run.open(grant());
    let counter = 0n;
    for (const b of Object.values(BODIES)) run.request("s", ++counter, b);
    run.request("s", ++counter, subscribe({ type: "StandardReplay", scope: { type: "Set", lane_ids: [LANE, label32("lane-2")] }, after: null }));
    expect(run.failures).toEqual([]);
    for (const rule of ["B1", "B2", "B4", "B5", "B6", "B7", "B8", "B9", "B11", "B12", "B13", "B14"]) expect(run.checks.counts.get(rule as never) ?? 0).toBeGreaterThan(0);
  });
});

describe("B4–B7, B11: the grant at the views it is used at (§7)", () => {
  it("B4: a grant signed by another key than the stream's admin key, reported once per view with the grant's first line", () => {
    const g = grant({ signature: new Uint8Array(64) });
    g.signature = ed25519Sign(FORGER, grantId(g));
    const run = new Run();
    run.feed("StreamGrantV1", g); // line 2
    run.feed("StreamGrantV1", g); // the same grant again: its first line stays the one named
    run.open(g, "s1", false);
    run.open(g, "s2", false); // the same view: not checked again
    expect(run.failures).toEqual([["B4", `the grant on line 2 does not verify under the stream's admin_key ${toHex(signingKey(ADMIN).key)} at height 5`]]);
    run.opened(g, "s1", { served_at: served(HEIGHT + 1n) }); // another view: checked there
    expect(run.rules).toEqual(["B4", "B4"]);
  });

  it("B6: a grant whose authorization_generation is not the stream's", () => {
    const run = new Run();
    run.open(grant({ authorization_generation: 2n }));
    expect(run.failures).toEqual([["B6", "the grant on line 2 carries authorization_generation 2; the stream's at height 5 is 1"]]);
  });

  it("B7: not_before_ms equal to expires_at_ms admits one moment; one past it admits none", () => {
    const run = new Run();
    run.feed("StreamGrantV1", grant({ expires_at_ms: NOT_BEFORE }));
    expect(run.failures).toEqual([]);
    run.feed("StreamGrantV1", grant({ expires_at_ms: NOT_BEFORE - 1n }));
    expect(run.failures).toEqual([["B7", `not_before_ms ${NOT_BEFORE} is after expires_at_ms ${NOT_BEFORE - 1n}: no moment admits the grant`]]);
  });

  it("B7: a grant valid for exactly cbqs.max_grant_ttl_ms passes, one millisecond more fails", () => {
    const ttl = BOUNDS["cbqs.max_grant_ttl_ms"];
    const ok = new Run();
    ok.open(grant({ expires_at_ms: NOT_BEFORE + ttl }));
    expect(ok.failures).toEqual([]);
    const over = new Run();
    over.open(grant({ expires_at_ms: NOT_BEFORE + ttl + 1n }));
    expect(over.failures).toEqual([["B7", `the grant on line 2 is valid for ${ttl + 1n} ms, above cbqs.max_grant_ttl_ms ${ttl} at height 5`]]);
  });

  it("B7: a receipt committed exactly cbqs.max_clock_skew_ms before not_before_ms is admitted, one millisecond earlier is not", () => {
    const skew = BOUNDS["cbqs.max_clock_skew_ms"];
    const g = grant();
    const run = new Run();
    const a = run.feed("StreamGrantV1", g);
    const entry = { grant: g, id: grantId(g), line: a.line, checkedAt: new Set<bigint>() };
    run.sessions.use(a, entry, chainView(HEIGHT), NOT_BEFORE - skew);
    expect(run.failures).toEqual([]);
    run.sessions.use(a, entry, chainView(HEIGHT), NOT_BEFORE - skew - 1n);
    expect(run.failures).toEqual([["B7", `committed at ${NOT_BEFORE - skew - 1n} ms, before the grant's not_before_ms ${NOT_BEFORE} less cbqs.max_clock_skew_ms ${skew}: admitted before the grant's window`]]);
  });

  it("B11: max_lane_creates_per_min equal to cbqs.max_lane_creates_per_min passes, one above fails", () => {
    const ok = new Run();
    ok.open(grant({ max_lane_creates_per_min: 256 }));
    expect(ok.failures).toEqual([]);
    const over = new Run();
    over.open(grant({ max_lane_creates_per_min: 257 }));
    expect(over.failures).toEqual([["B11", "the grant on line 2 allows 257 lane creations a minute, above cbqs.max_lane_creates_per_min 256 at height 5"]]);
  });
});

describe("B5, B12: a session opens on a grant of the bundle with a proof of possession (§7.1)", () => {
  it("B5: a challenge and an opened session naming no grant of the bundle, and an opened session naming another grant than its challenge", () => {
    const g = grant();
    const h = grant({ verbs: verbBits("APPEND") });
    const run = new Run();
    run.feed("StreamGrantV1", g);
    run.feed("StreamGrantV1", h);
    run.challenge(g, "s", { grant_id: label32("no-grant") });
    expect(run.failures).toEqual([["B5", `challenge.grant_id ${toHex(label32("no-grant"))} is the id of no grant in the bundle (grant_id = keccak256(stream_grant_signing_bytes_v1(grant)))`]]);
    const s = new Run();
    s.feed("StreamGrantV1", g);
    s.feed("StreamGrantV1", h);
    s.challenge(g, "s");
    s.proof(g, "s");
    s.opened(h, "s");
    expect(s.rules).toEqual(["B5"]);
    expect(s.failures[0]![1]).toMatch(/^opened\.grant_id 0x[0-9a-f]{16}… is not its challenge's 0x[0-9a-f]{16}…$/);
    const unnamed = new Run();
    unnamed.feed("StreamGrantV1", g);
    unnamed.challenge(g, "s");
    unnamed.proof(g, "s", { grant_id: label32("no-grant") });
    unnamed.opened(g, "s", { grant_id: label32("no-grant") });
    const noGrant = `${toHex(label32("no-grant"))} is the id of no grant in the bundle`;
    expect(unnamed.failures.filter(([rule]) => rule === "B5").map(([, e]) => e.replace(/ \(grant_id = .*/, "").replace(/ 0x[0-9a-f]{16}….*/, ""))).toEqual([`proof.grant_id ${noGrant}`, `opened.grant_id ${noGrant}`, "opened.grant_id"]);
  });

  it("B12: a proof naming no challenge, another challenge, another grant than its challenge, or signed by another key", () => {
    const g = grant();
    const h = grant({ verbs: verbBits("APPEND") });
    const run = new Run();
    run.feed("StreamGrantV1", g);
    run.feed("StreamGrantV1", h);
    run.proof(g, "none");
    run.challenge(g, "s");
    run.proof(g, "s", { challenge: label32("another-challenge") });
    run.proof(g, "s", { grant_id: grantId(h) });
    run.proof(g, "s", { seed: FORGER });
    expect(run.failures.map(([rule, e]) => `${rule} ${e.replace(/ 0x.*/, "")}`)).toEqual([
      "B12 proof.session_id",
      "B12 proof.challenge",
      "B12 proof.grant_id",
      "B12 proof.signature does not verify under the grant's holder_signing_key",
    ]);
    expect(run.failures[0]![1]).toBe(`proof.session_id ${toHex(label32("none"))} names no challenge earlier in the bundle`);
    expect(run.failures[2]![1]).toMatch(/^proof\.grant_id 0x[0-9a-f]{16}… is not the challenge's 0x[0-9a-f]{16}…$/);
  });

  it("B12: a session opened with no proof of possession before it", () => {
    const g = grant();
    const run = new Run();
    run.feed("StreamGrantV1", g);
    run.challenge(g, "s");
    run.opened(g, "s");
    expect(run.rules).toEqual(["B12"]);
    expect(run.failures[0]![1]).toMatch(/^session 0x[0-9a-f]{16}… is opened with no proof of possession before it$/);
  });
});

describe("B13, B14: requests of an opened session, signed by its holder, counters strictly increasing from one (§7.1, §13.1)", () => {
  it("B13: a request naming no opened session, and one signed by another key than the holder's", () => {
    const run = new Run();
    run.open(grant());
    run.request("unopened", 1n, BODIES.Append!);
    run.request("s", 1n, BODIES.Append!, { seed: FORGER });
    expect(run.failures.map(([rule, e]) => `${rule} ${e.replace(/ 0x.*/, "")}`)).toEqual([
      "B13 proof.session_id",
      "B13 proof.signature does not verify under the session's holder key",
    ]);
    expect(run.failures[0]![1]).toBe(`proof.session_id ${toHex(label32("unopened"))} names no session opened earlier in the bundle`);
  });

  it("B14: a first request with counter 2 fails; counters 1, 3 pass; a lower counter fails and does not lower the next one's floor", () => {
    const first = new Run();
    first.open(grant());
    first.request("s", 2n, BODIES.Append!);
    expect(first.failures).toEqual([["B14", "the session's first request has counter 2; counters start at one"]]);
    const run = new Run();
    run.open(grant());
    run.request("s", 1n, BODIES.Append!);
    run.request("s", 3n, BODIES.Append!);
    expect(run.failures).toEqual([]);
    run.request("s", 2n, BODIES.Append!);
    run.request("s", 3n, BODIES.Append!);
    expect(run.failures).toEqual([
      ["B14", "counter 2 does not increase on the session's last 3"],
      ["B14", "counter 3 does not increase on the session's last 3"],
    ]);
  });
});

describe("B8, B9: the request's verb and scope within its grant (§7, §7.2)", () => {
  it("B8: one of a method's verbs suffices; a grant with none of them fails naming them all", () => {
    for (const verb of ["CONSUME", "REPLAY", "LANE_ADMIN"] as const) {
      const run = new Run();
      run.open(grant({ verbs: verbBits(verb) }));
      run.request("s", 1n, BODIES.ListLanes!);
      expect(run.failures).toEqual([]);
    }
    const run = new Run();
    run.open(grant({ verbs: verbBits("APPEND", "ACKNOWLEDGE", "GROUP_ADMIN", "REDRIVE") }));
    run.request("s", 1n, BODIES.ListLanes!);
    run.request("s", 2n, subscribe({ type: "StandardReplay", scope: anyScope, after: null }));
    expect(run.failures).toEqual([
      ["B8", "the ListLanes request needs CONSUME or REPLAY or LANE_ADMIN; the grant's verbs are 0b110101"],
      ["B8", "the OpenSubscription request needs REPLAY; the grant's verbs are 0b110101"],
    ]);
  });

  it("B9: a lane in a Set scope passes, a lane outside it fails; a group outside an Exact group scope fails", () => {
    const lane2 = label32("lane-2");
    const run = new Run();
    run.open(grant({ lane_scope: { type: "Set", lane_ids: [lane2, LANE] }, group_scope: { type: "Exact", group_id: GROUP } }));
    run.request("s", 1n, BODIES.Append!);
    run.request("s", 2n, BODIES.Ack!);
    expect(run.failures).toEqual([]);
    run.request("s", 3n, body("Append", { lane_id: label32("lane-3") }));
    run.request("s", 4n, body("UpdateGroup", { lane_id: LANE, group_id: label32("group-2") }));
    expect(run.failures).toEqual([
      ["B9", `lane ${toHex(label32("lane-3"))} is outside the grant's lane_scope (Set)`],
      ["B9", `group ${toHex(label32("group-2"))} is outside the grant's group_scope (Exact)`],
    ]);
  });

  it("B9: a subscription's scope must lie within the grant's lane scope: Any only under Any, a Set only when every lane is covered", () => {
    const lane2 = label32("lane-2");
    const replay = (scope: LaneScopeV1) => subscribe({ type: "StandardReplay", scope, after: null });
    const run = new Run();
    run.open(grant({ lane_scope: { type: "Set", lane_ids: [lane2, LANE] } })); // ascending, as the codec requires
    run.request("s", 1n, replay({ type: "Set", lane_ids: [lane2, LANE] }));
    run.request("s", 2n, replay({ type: "Exact", lane_id: lane2 }));
    run.request("s", 3n, subscribe({ type: "StandardGroup", lane_id: LANE, group_id: GROUP }));
    expect(run.failures).toEqual([]);
    run.request("s", 4n, replay({ type: "Set", lane_ids: [LANE, label32("lane-3")] }));
    run.request("s", 5n, replay(anyScope));
    run.request("s", 6n, subscribe({ type: "DeadLetters", lane_id: label32("lane-3"), group_id: GROUP, after: null }));
    expect(run.failures).toEqual([
      ["B9", "the subscription's Set scope is not within the grant's Set lane_scope"],
      ["B9", "the subscription's Any scope is not within the grant's Set lane_scope"],
      ["B9", `lane ${toHex(label32("lane-3"))} is outside the grant's lane_scope (Set)`],
    ]);
    const any = new Run();
    any.open(grant());
    any.request("s", 1n, replay(anyScope));
    expect(any.failures).toEqual([]);
  });
});
