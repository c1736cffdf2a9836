// The retention checks (src/broker-kit/check-retention.ts; CIP-39 §15) in process, on kit bundles
// signed on the synthetic chain: floors monotone within each comparison key (B26); what each
// anchor names — a standard anchor's predecessor digests, a fast anchor's checkpoint link, a
// group anchor's receipt — checked once the bundle's chain reaches its floor, and noted when it
// does not; a snapshot manifest bound to a receipt published with it (B27).
import { describe, expect, it } from "vitest";
import type { Bundle } from "../../src/broker-kit/bundle.js";
import { KIT_KEYS, type KitRun } from "../../src/broker-kit/kit.js";
import { label32, signingKey, ZERO32, type Fault, type GroupState } from "../../src/broker-kit/signer.js";
import { standard_retention_anchor_signing_bytes_v1 } from "../../src/codec/signing.js";
import { ed25519Sign } from "../../src/crypto/ed25519.js";
import { keccak256 } from "../../src/crypto/hash.js";
import { verifyBundle, type BundleReport } from "../../src/broker-kit/verify.js";
import { toHex, utf8 } from "../../src/bytes.js";
import { appendReceiptDigest } from "../../src/codec/signing.js";
import { laneId, laneReceiptGenesis, streamReceiptGenesis } from "../../src/codec/derive.js";
import type { FastRetentionAnchorV1, StandardRetentionAnchorV1 } from "../../src/codec/types.js";
import type { CbqsSnapshotManifestV1 } from "../../src/codec/wire-types.js";
import { CONTEXT, STREAMS, syntheticBundle, syntheticSource } from "./synthetic-chain.js";

const failures = (r: BundleReport): Array<[number, string, string]> => r.failures.map((f) => [f.line, f.rule, f.evidence]);
const verify = (b: Bundle): Promise<BundleReport> => verifyBundle(b, syntheticSource());
const without = (b: Bundle, ...lines: number[]): Bundle => ({ ...b, artifacts: b.artifacts.filter((a) => !lines.includes(a.line)) });
/** The standard bundle with `run` at its end (from line 42). */
const standardThen = (run: (k: KitRun) => Promise<void> | void, fault?: Fault) => syntheticBundle("standard", { extra: { at: "end", run: async (k) => void (await run(k)) }, ...(fault ? { fault } : {}) });
const fastThen = (run: (k: KitRun) => Promise<void> | void, fault?: Fault) => syntheticBundle("fast", { extra: { at: "end", run: async (k) => void (await run(k)) }, ...(fault ? { fault } : {}) });
const MANIFEST_NOTE = "snapshot manifests: application_signature and snapshot_hash are application state, not checked (§15)";

describe("B26 (§15): floors monotone within each comparison key", () => {
  it("an equal floor passes; a lower one regresses the highest, named by its first anchor's line", async () => {
    const b = await standardThen(async (k) => {
      const v8 = await k.view(8n);
      k.signer.standardAnchor(v8, 4n, null);
      k.signer.standardAnchor(v8, 3n, null);
    });
    expect(failures(await verify(b))).toEqual([[43, "B26", "first_retained_sequence 3 regresses 4, the floor of the anchor on line 40 with the same comparison key: portable equivocation evidence (§15)"]]);
  });

  it("a group's floor regressing is named by its group_queue_sequence, a fast floor's by its first_retained_sequence", async () => {
    const group = await standardThen(async (k) => {
      const g = k.groups["G"]!;
      k.signer.groupAnchor(await k.view(8n), { ...g, nextQueueSequence: 1n }, g.receipts[0]!);
    });
    expect(failures(await verify(group))).toEqual([[42, "B26", "group_queue_sequence 0 regresses 3, the floor of the anchor on line 35 with the same comparison key: portable equivocation evidence (§15)"]]);
    const fast = await fastThen(async (k) => void k.signer.fastAnchor(await k.view(7n), 0n, 0n));
    expect(failures(await verify(fast))).toEqual([[36, "B26", "first_retained_sequence 0 regresses 3, the floor of the anchor on line 34 with the same comparison key: portable equivocation evidence (§15)"]]);
  });

  it("each group's floor is its own key: another group's lower floor is no regression", async () => {
    const b = await standardThen(async (k) => {
      const v8 = await k.view(8n);
      const g2 = k.signer.createGroup(k.sessions["s2"]!, v8, ZERO32, "standard/g2", { type: "Head" });
      k.signer.groupAnchor(v8, g2, g2.receipts[0]!);
    });
    expect(failures(await verify(b))).toEqual([]);
  });

  it("a lane's floor, a group's and a broker epoch's are keys of their own: a lower floor there is no regression", async () => {
    const lane = await standardThen(async (k) => void k.signer.standardAnchor(await k.view(8n), 1n, ZERO32));
    expect(failures(await verify(lane))).toEqual([]);
    const epoch = await fastThen(async (k) => void k.signer.fastAnchor(await k.view(7n), 1n, 0n));
    expect(failures(await verify(epoch))).toEqual([]);
  });

  it("anchors name this chain's context, the bundle's stream and a view of it, and carry the provider's signature", async () => {
    const context = await syntheticBundle("standard", { fault: { target: "standard-anchor", index: 0, edit: (x: StandardRetentionAnchorV1) => void (x.context = { ...x.context, chain_id: 8n }) } });
    expect(failures(await verify(context))).toEqual([[34, "B1", "anchor.context: chain_id is 8; this chain's is 7"]]);
    const forged = await syntheticBundle("standard", {
      fault: { target: "standard-anchor", index: 0, signed: true, edit: (x: StandardRetentionAnchorV1) => void (x.signature = ed25519Sign(KIT_KEYS.application.seed, keccak256(standard_retention_anchor_signing_bytes_v1(x)))) },
    });
    expect(failures(await verify(forged))).toEqual([[34, "B3", `anchor.signature does not verify under the stream's provider_signing_key ${toHex(signingKey(KIT_KEYS.provider.seed).key)} at height 8`]]);
    const b = await syntheticBundle("standard", { fault: { target: "standard-anchor", index: 0, edit: (x: StandardRetentionAnchorV1) => void (x.stream_id = STREAMS.fast) } });
    expect(failures(await verify(b)).filter(([line]) => line === 34)).toEqual([[34, "B1", `anchor.stream_id is ${toHex(STREAMS.fast)}, not the bundle's stream ${toHex(STREAMS.standard)}`]]);
    const far = await syntheticBundle("standard", { fault: { target: "standard-anchor", index: 0, edit: (x: StandardRetentionAnchorV1) => void (x.served_at = { ...x.served_at, height: 9n }) } });
    expect(failures(await verify(far))).toEqual([[34, "B2", "anchor.served_at names height 9, at which this chain has no block"]]);
  });
});

describe("B26 (§15): a standard anchor's predecessor digests", () => {
  it("a floor above every receipt of the bundle is noted, not checked; at the highest receipt it is checked", async () => {
    const above = await standardThen(async (k) => void k.signer.standardAnchor(await k.view(8n), 7n, null));
    const report = await verify(above);
    expect(failures(report)).toEqual([]);
    expect(report.notes).toEqual(["the anchor on line 42: the bundle holds no receipt at or above its floor 7, so its predecessor digests are not checked", MANIFEST_NOTE]);
    const at = await standardThen(async (k) => void k.signer.standardAnchor(await k.view(8n), 6n, null), { target: "standard-anchor", index: 2, edit: (x: StandardRetentionAnchorV1) => void (x.previous_global_receipt = label32("elsewhere")) });
    expect(failures(await verify(at))).toEqual([
      [42, "B26", `anchor.previous_global_receipt is ${toHex(label32("elsewhere"))}; the global receipt before floor 6 is 0x7c12f5766bb407eaac61942aa28c32f804f18aed5a475aa682bce6103b60fc05`],
    ]);
  });

  it("a floor of 0 names stream_receipt_genesis", async () => {
    const fault: Fault = { target: "standard-anchor", index: 2, edit: (x: StandardRetentionAnchorV1) => void (x.previous_global_receipt = label32("elsewhere")) };
    const b = await standardThen(async (k) => void k.signer.standardAnchor(await k.view(8n), 0n, null), fault);
    // Without the kit's own floors (lines 34, 40), which 0 would regress.
    expect(failures(await verify(without(b, 34, 40)))).toEqual([
      [42, "B26", `anchor.previous_global_receipt is ${toHex(label32("elsewhere"))}; the global receipt before floor 0 is ${toHex(streamReceiptGenesis(CONTEXT, STREAMS.standard))}`],
    ]);
  });

  it("only Standard record ids are a standard anchor's predecessors: on a fast stream its floor is noted", async () => {
    // The fast stream's lane event on line 10 has a receipt, at Fast(0, 1): not a standard record.
    const report = await verify(await fastThen(async (k) => void k.signer.standardAnchor(await k.view(7n), 1n, null)));
    expect(failures(report)).toEqual([]);
    expect(report.notes).toEqual(["the anchor on line 36: the bundle holds no receipt at or above its floor 1, so its predecessor digests are not checked", MANIFEST_NOTE]);
  });

  it("a lane anchor names the lane's receipt before its floor, or the lane's genesis", async () => {
    const fault = (index: number): Fault => ({ target: "standard-anchor", index, edit: (x: StandardRetentionAnchorV1) => void (x.previous_lane_receipt = label32("elsewhere")) });
    const run = async (k: KitRun) => {
      const v8 = await k.view(8n);
      k.signer.standardAnchor(v8, 2n, ZERO32);
      k.signer.standardAnchor(v8, 2n, k.lanes["L1"]!);
    };
    expect(failures(await verify(await standardThen(run)))).toEqual([]);
    expect(failures(await verify(await standardThen(run, fault(2))))).toEqual([
      [42, "B26", `anchor.previous_lane_receipt is ${toHex(label32("elsewhere"))}; lane 0x0000000000000000…'s receipt before floor 2 is 0x91d464f8b5e72287daf37170fe661fdeedcad4b288223cf5808148a152bfb157`],
    ]);
    expect(failures(await verify(await standardThen(run, fault(3))))).toEqual([
      [43, "B26", `anchor.previous_lane_receipt is ${toHex(label32("elsewhere"))}; lane 0x6eee1573f000420c…'s receipt before floor 2 is ${toHex(laneReceiptGenesis(CONTEXT, STREAMS.standard, laneId(STREAMS.standard, label32("lane/standard/lane-1"))))}`],
    ]);
  });
});

describe("B26 (§15): a fast anchor's checkpoint link", () => {
  it("a floor just past a checkpoint links to that checkpoint", async () => {
    const fault: Fault = { target: "fast-anchor", index: 1, edit: (x: FastRetentionAnchorV1) => void (x.previous_checkpoint = label32("elsewhere")) };
    const ok = await fastThen(async (k) => void k.signer.fastAnchor(await k.view(7n), 0n, 5n));
    expect(failures(await verify(ok))).toEqual([]);
    expect(failures(await verify(await fastThen(async (k) => void k.signer.fastAnchor(await k.view(7n), 0n, 5n), fault)))).toEqual([
      [36, "B26", `anchor.previous_checkpoint is ${toHex(label32("elsewhere"))}; the checkpoint chain's link before sequence 5 of broker epoch 0 is 0x32bbe5ee10396514d8d0c976f238cf17d979aa6d37f356d7d23998f2844b4f85`],
    ]);
  });

  it("a floor at a batch's last sequence links to the link before that batch", async () => {
    const report = await verify(await fastThen(async (k) => void k.signer.fastAnchor(await k.view(7n), 0n, 4n)));
    expect(failures(report)).toEqual([]);
    expect(report.notes).toEqual([MANIFEST_NOTE]);
    expect(report.checks.B26).toBe(3);
  });

  it("a floor at a batch's first sequence links to that batch's previous_checkpoint, even off the chain (B24 alone refuses that)", async () => {
    const b = await syntheticBundle("fast", { fault: { target: "checkpoint", index: 1, edit: (c: { previous_checkpoint: Uint8Array }) => void (c.previous_checkpoint = label32("elsewhere")) } });
    expect(failures(await verify(b)).map(([line, rule]) => [line, rule])).toEqual([[23, "B24"]]);
  });

  it("a floor just past a batch that ends below the next batch's start links to the batch it follows, not the next one's previous_checkpoint", async () => {
    // The second checkpoint moved to start at 4 and linked elsewhere (B24 and B25 refuse it); the kit's floor 3 follows the first.
    const b = await syntheticBundle("fast", { fault: { target: "checkpoint", index: 1, edit: (c: { previous_checkpoint: Uint8Array; first_sequence: bigint }) => void Object.assign(c, { previous_checkpoint: label32("elsewhere"), first_sequence: 4n }) } });
    expect(failures(await verify(b)).map(([line, rule]) => [line, rule])).toEqual([[23, "B24"], [23, "B24"], [23, "B25"]]);
  });

  it("a floor of 0 with no checkpoint of its epoch in the bundle links to the epoch's transition", async () => {
    const b = await fastThen(async (k) => void k.signer.fastAnchor(await k.view(7n), 1n, 0n));
    // Without the epoch's checkpoint (line 33) and the manifest bound to it (35).
    expect(failures(await verify(without(b, 33, 35)))).toEqual([]);
    const wrong = await fastThen(async (k) => void k.signer.fastAnchor(await k.view(7n), 1n, 0n), { target: "fast-anchor", index: 1, edit: (x: FastRetentionAnchorV1) => void (x.previous_checkpoint = label32("elsewhere")) });
    expect(failures(await verify(without(wrong, 33, 35)))).toEqual([
      [36, "B26", `anchor.previous_checkpoint is ${toHex(label32("elsewhere"))}; the checkpoint chain's link before sequence 0 of broker epoch 1 is 0x4c51047208a43f7766f6164abd91760792081e31ff0a1d6b0cf0ba104e0ff70b`],
    ]);
  });

  it("a floor no checkpoint of the bundle reaches is noted, not checked", async () => {
    const b = await fastThen(async (k) => void k.signer.fastAnchor(await k.view(7n), 1n, 0n), { target: "fast-anchor", index: 1, edit: (x: FastRetentionAnchorV1) => void (x.first_retained_sequence = 9n) });
    const report = await verify(b);
    expect(failures(report)).toEqual([]);
    expect(report.notes).toEqual(["the anchor on line 36: no checkpoint of broker epoch 1 in the bundle reaches its floor 9, so its previous_checkpoint is not checked", MANIFEST_NOTE]);
  });
});

describe("B26 (§15): a group anchor's receipt", () => {
  it("an anchor of a group the bundle holds no receipt of is not checked", async () => {
    const b = await standardThen(async (k) => {
      const g: GroupState = { ...k.groups["G"]!, group: label32("group/another") };
      k.signer.groupAnchor(await k.view(8n), g, label32("elsewhere"));
    });
    expect(failures(await verify(b))).toEqual([]);
  });
});

describe("B27 (§15): a manifest bound to a receipt published with it", () => {
  const manifestFault = (edit: (m: CbqsSnapshotManifestV1) => void): Fault => ({ target: "manifest", index: 0, edit });
  it("the bound receipt's chain and stream are the manifest's: each differing is refused", async () => {
    const cases: Array<[(m: CbqsSnapshotManifestV1) => void, string]> = [
      [(m) => void (m.stream_id = STREAMS.fast), `manifest.stream_id is ${toHex(STREAMS.fast)}, not the bundle's stream ${toHex(STREAMS.standard)}`],
      [(m) => void (m.context = { ...m.context, chain_id: 8n }), "manifest.context: chain_id is 8; this chain's is 7"],
      [(m) => void (m.context = { ...m.context, chain_instance_id: label32("another-instance") }), `manifest.context: chain_instance_id is ${toHex(label32("another-instance"))}; this chain's is ${toHex(CONTEXT.chain_instance_id)}`],
    ];
    for (const [edit, b1] of cases) {
      expect(failures(await verify(await syntheticBundle("standard", { fault: manifestFault(edit) })))).toEqual([
        [41, "B1", b1],
        [41, "B27", "the bundled receipt's context or stream_id is not the manifest's"],
      ]);
    }
  });

  it("a Standard stream's snapshot covers a standard record id: a checkpoint digest is refused", async () => {
    const digest = await syntheticBundle("standard", { fault: manifestFault((m) => void (m.covered_through = { type: "CheckpointReceiptDigest", digest: m.provider_anchor })) });
    expect(failures(await verify(digest))).toEqual([[41, "B27", "a Standard stream's snapshot covers a standard record id and names its append receipt (§15)"]]);
  });

  it("a Fast stream's snapshot covers a checkpoint: a standard record id is refused", async () => {
    const b = await syntheticBundle("fast", { fault: manifestFault((m) => void (m.covered_through = { type: "StandardRecordId", provider_epoch: 0n, sequence: 1n })) });
    expect(failures(await verify(b))).toEqual([[35, "B27", "a Fast stream's snapshot covers a checkpoint receipt (§15): covered_through is a standard record id"]]);
  });

  it("a lane snapshot is bound to a receipt of its lane", async () => {
    const lane = (id: (k: KitRun) => Uint8Array) =>
      standardThen((k) => {
        const r5 = k.records["r5"]!;
        k.signer.manifest(KIT_KEYS.application.seed, { scope: { type: "Lane", lane_id: id(k) }, coverage: { type: "StandardRecordId", provider_epoch: 0n, sequence: r5.id.sequence }, anchor: appendReceiptDigest(r5.receipt!), snapshot: utf8("lane state"), label: "standard/lane" });
      });
    expect(failures(await verify(await lane(() => ZERO32)))).toEqual([]);
    expect(failures(await verify(await lane((k) => k.lanes["L1"]!)))).toEqual([
      [42, "B27", `a snapshot of lane ${toHex(laneId(STREAMS.standard, label32("lane/standard/lane-1")))} is bound to a receipt of lane ${toHex(ZERO32)}`],
    ]);
  });
});

describe("B27 (§15) with the stream's class unknown (no view of it): a manifest is judged as a Standard stream's", () => {
  const unknownClass = () => {
    const base = syntheticSource();
    return { ...base, at: async (stream: Uint8Array, height: bigint) => ({ kind: "no-stream" as const, blockHash: ((await base.at(stream, height)) as { view: { blockHash: Uint8Array } }).view.blockHash }) };
  };
  const b27 = async (b: Bundle) => (await verifyBundle(b, unknownClass())).failures.filter((f) => f.rule === "B27").map((f) => [f.line, f.evidence]);

  it("a standard record id covered, bound to a checkpoint, is refused", async () => {
    const b = await syntheticBundle("fast", { fault: { target: "manifest", index: 0, edit: (m: CbqsSnapshotManifestV1) => void (m.covered_through = { type: "StandardRecordId", provider_epoch: 0n, sequence: 1n }) } });
    expect(await b27(b)).toEqual([[35, "a Standard stream's snapshot covers a standard record id and names its append receipt (§15)"]]);
  });

  it("a standard record id covered, bound to a receipt of a fast record id, is refused", async () => {
    const b = await fastThen((k) => {
      const laneEvent = k.signer.records.find((r) => r.receipt !== null)!;
      k.signer.manifest(KIT_KEYS.application.seed, { scope: { type: "Stream" }, coverage: { type: "StandardRecordId", provider_epoch: 0n, sequence: laneEvent.id.sequence }, anchor: appendReceiptDigest(laneEvent.receipt!), snapshot: utf8("a snapshot"), label: "fast/lane-event" });
    });
    expect(await b27(b)).toEqual([
      [35, "a Standard stream's snapshot covers a standard record id and names its append receipt (§15)"],
      [36, "manifest.covered_through is record 1; the bundled receipt (line 10) is record 1"],
    ]);
  });
});
