// The reference signer (src/broker-kit/signer.ts) in the cases the kit's three scripts do not
// take: what it signs must still be a bundle the verifier accepts, with the §15 predecessors and
// the §12.1 transition fields derived as the spec says, and a script that misuses it is stopped.
import { describe, expect, it } from "vitest";
import { utf8 } from "../../src/bytes.js";
import { verbBits } from "../../src/broker-kit/check-sessions.js";
import { KIT_KEYS, KIT_START_MS, kitBundle } from "../../src/broker-kit/kit.js";
import type { BrokerSigner, Session } from "../../src/broker-kit/signer.js";
import { ZERO32 } from "../../src/broker-kit/signer.js";
import { verifyBundle, type BundleReport } from "../../src/broker-kit/verify.js";
import { laneReceiptGenesis, streamReceiptGenesis } from "../../src/codec/derive.js";
import { appendReceiptDigest, checkpointReceiptDigest } from "../../src/codec/signing.js";
import type { BrokerEpochTransitionV1, FastRetentionAnchorV1, StandardRetentionAnchorV1 } from "../../src/codec/types.js";
import { bundleOf, CONTEXT, servedAt, signerFor, STREAMS, syntheticSource } from "./synthetic-chain.js";

const failures = (r: BundleReport): Array<[number, string, string]> => r.failures.map((f) => [f.line, f.rule, f.evidence]);
const window = { notBeforeMs: KIT_START_MS - 1_000n, expiresAtMs: KIT_START_MS + 3_600_000n };

function session(s: BrokerSigner, name: "standard" | "fast"): Session {
  const grant = s.grant({ holderSeed: KIT_KEYS.holder.seed, label: `${name}/own`, verbs: verbBits("APPEND", "CONSUME", "LANE_ADMIN"), authorizationGeneration: 1n, ...window });
  return s.openSession(grant, KIT_KEYS.holder.seed, servedAt(3n), `${name}/own`);
}

const artifactsOf = <T>(s: BrokerSigner, type: string): T[] => s.artifacts.filter((a) => a.type === type).map((a) => a.value as T);

describe("the reference signer's standard retention anchors (§15): predecessors of the floor", () => {
  it("a stream floor before any record names the stream's receipt genesis; a lane floor names the lane's own last receipt below it, not another lane's", async () => {
    const s = signerFor("standard");
    const ses = session(s, "standard");
    s.standardAnchor(servedAt(3n), 0n, null);
    const r0 = s.append(ses, servedAt(3n), { lane: ZERO32, payload: utf8("r0"), label: "own/0" });
    const lane = s.createLane(ses, servedAt(3n), "own/lane");
    const r2 = s.append(ses, servedAt(4n), { lane, payload: utf8("r2"), label: "own/2" });
    const r3 = s.append(ses, servedAt(4n), { lane: ZERO32, payload: utf8("r3"), label: "own/3" });
    s.standardAnchor(servedAt(5n), r3.id.sequence + 1n, lane);
    s.standardAnchor(servedAt(5n), r0.id.sequence, lane);
    const [atZero, inLane, laneGenesis] = artifactsOf<StandardRetentionAnchorV1>(s, "StandardRetentionAnchorV1");
    expect(atZero!.previous_global_receipt).toEqual(streamReceiptGenesis(CONTEXT, STREAMS.standard));
    expect(inLane!.previous_global_receipt).toEqual(appendReceiptDigest(r3.receipt!));
    expect(inLane!.previous_lane_receipt).toEqual(appendReceiptDigest(r2.receipt!));
    expect(laneGenesis!.previous_lane_receipt).toEqual(laneReceiptGenesis(CONTEXT, STREAMS.standard, lane));
    expect(failures(await verifyBundle(bundleOf(STREAMS.standard, s.artifacts.slice(0, -1)), syntheticSource()))).toEqual([]);
  });
});

describe("the reference signer's fast lineages (§12.1) and fast anchors (§15)", () => {
  it("a fast stream appends only after its first broker-epoch transition", () => {
    const s = signerFor("fast");
    const ses = session(s, "fast");
    expect(() => s.append(ses, servedAt(3n), { lane: ZERO32, payload: utf8("early"), label: "own/early" })).toThrow("a fast stream appends only after its first broker-epoch transition");
  });

  it("a Clean restart's last provisional sequence is its last durable one, even with records pending; a Void restart's is the last pending", () => {
    const s = signerFor("fast");
    s.transition(servedAt(3n), "Clean");
    const ses = session(s, "fast");
    const append = (label: string) => s.append(ses, servedAt(4n), { lane: ZERO32, payload: utf8(label), label });
    append("own/0");
    append("own/1");
    s.checkpoint(servedAt(4n), "own/cp");
    append("own/2");
    s.transition(servedAt(5n), "Clean");
    append("own/3");
    s.transition(servedAt(5n), "Void");
    const [, clean, voided] = artifactsOf<BrokerEpochTransitionV1>(s, "BrokerEpochTransitionV1");
    expect([clean!.kind, clean!.last_durable_sequence, clean!.last_provisional_sequence]).toEqual(["Clean", 1n, 1n]);
    expect([voided!.kind, voided!.last_durable_sequence, voided!.last_provisional_sequence]).toEqual(["Void", null, 0n]);
  });

  it("a fast floor is anchored in its own epoch: at a batch's last sequence, just past the last batch, and never below the epoch's first", async () => {
    const s = signerFor("fast");
    s.transition(servedAt(3n), "Clean");
    const ses = session(s, "fast");
    const append = () => s.append(ses, servedAt(4n), { lane: ZERO32, payload: utf8("x"), label: `own/${s.artifacts.length}` });
    append();
    append();
    const c0 = s.checkpoint(servedAt(4n), "own/a");
    append();
    const c1 = s.checkpoint(servedAt(4n), "own/b");
    s.transition(servedAt(5n), "Clean");
    append();
    const d0 = s.checkpoint(servedAt(5n), "own/c");
    s.fastAnchor(servedAt(5n), 0n, c0.last_sequence);
    s.fastAnchor(servedAt(5n), 0n, c1.last_sequence + 1n);
    s.fastAnchor(servedAt(5n), 1n, d0.first_sequence);
    const anchors = artifactsOf<FastRetentionAnchorV1>(s, "FastRetentionAnchorV1");
    expect(anchors.map((a) => [a.broker_epoch, a.first_retained_sequence])).toEqual([
      [0n, c0.last_sequence],
      [0n, c1.last_sequence + 1n],
      [1n, d0.first_sequence],
    ]);
    expect(anchors[0]!.previous_checkpoint).toEqual(c0.previous_checkpoint);
    expect(anchors[1]!.previous_checkpoint).toEqual(checkpointReceiptDigest(c1));
    expect(anchors[2]!.previous_checkpoint).toEqual(d0.previous_checkpoint);
    expect(failures(await verifyBundle(bundleOf(STREAMS.fast, s.artifacts), syntheticSource()))).toEqual([]);
    expect(() => s.fastAnchor(servedAt(5n), 1n, d0.last_sequence + 5n)).toThrow(`no checkpoint of broker epoch 1 reaches floor ${d0.last_sequence + 5n}`);
  });
});

describe("the kit's scripts need the kit chain", () => {
  it("a chain without the kit's blocks is refused, naming the first height missing and the source", async () => {
    const empty = { name: "an empty chain", context: CONTEXT, at: async () => ({ kind: "no-block" as const }) };
    await expect(kitBundle({ source: empty, streams: STREAMS }, "standard")).rejects.toThrow("the kit chain has no block at height 3: is an empty chain the kit chain?");
  });

  it("a script reads each height it serves at from the chain once, extra steps included (a node source answers over the network)", async () => {
    const source = syntheticSource();
    await kitBundle({ source, streams: STREAMS }, "standard", { extra: { at: "end", run: async (k) => void (await k.view(8n), await k.view(3n), await k.view(20n)) } });
    expect(source.reads).toEqual([3n, 4n, 5n, 7n, 8n, 20n]);
  });
});
