// The fast-stream checks (src/broker-kit/check-fast.ts; CIP-39 §12.1, §12.2, §13.2) in process,
// on the kit's fast bundle signed on the synthetic chain, or a script of the test's own: broker-
// epoch transitions from checkpoint_genesis, each restart naming the lineage, checkpoint and
// sequence it ends (B23); the checkpoint chain of each lineage and the durable watermarks (B24);
// each carried batch recomputed, a record changed or missing refused (B25).
import { describe, expect, it } from "vitest";
import type { Artifact, Bundle } from "../../src/broker-kit/bundle.js";
import { verbBits } from "../../src/broker-kit/check-sessions.js";
import { KIT_KEYS, KIT_START_MS } from "../../src/broker-kit/kit.js";
import { label32, signingKey, ZERO32, type BrokerSigner, type Fault } from "../../src/broker-kit/signer.js";
import { brokerEpochTransitionDigest, checkpointReceiptDigest } from "../../src/codec/signing.js";
import { ed25519Sign } from "../../src/crypto/ed25519.js";
import { verifyBundle, type BundleReport } from "../../src/broker-kit/verify.js";
import { toHex, utf8 } from "../../src/bytes.js";
import { checkpointGenesis } from "../../src/codec/derive.js";
import type { BrokerEpochTransitionV1, CheckpointReceiptV1 } from "../../src/codec/types.js";
import { bundleOf, CONTEXT, servedAt, signerFor, STREAMS, syntheticBundle, syntheticSource } from "./synthetic-chain.js";

const failures = (r: BundleReport): Array<[number, string, string]> => r.failures.map((f) => [f.line, f.rule, f.evidence]);
const verify = (b: Bundle): Promise<BundleReport> => verifyBundle(b, syntheticSource());
const GENESIS = toHex(checkpointGenesis(CONTEXT, STREAMS.fast));
const transitionFault = (index: number, edit: (t: BrokerEpochTransitionV1) => void): Fault => ({ target: "transition", index, edit });
const checkpointFault = (index: number, edit: (c: CheckpointReceiptV1) => void): Fault => ({ target: "checkpoint", index, edit });
const kitFast = (fault: Fault) => syntheticBundle("fast", { fault });

/** The bundle with the artifact on `line` changed (a copy). */
function at(b: Bundle, line: number, change: (value: any) => void): Bundle {
  return { ...b, artifacts: b.artifacts.map((a) => (a.line === line ? (() => { const c = structuredClone(a); change(c.value); return c; })() : a)) };
}
const without = (b: Bundle, ...lines: number[]): Bundle => ({ ...b, artifacts: b.artifacts.filter((a) => !lines.includes(a.line)) });

/** A fast script of the test's own: a session on the fast stream, `run` given the signer and it. */
function fastScript(run: (s: BrokerSigner, append: (label: string) => void) => void, fault?: Fault): Bundle {
  const s = signerFor("fast", fault);
  const grant = s.grant({ holderSeed: KIT_KEYS.holder.seed, label: "fast/own", verbs: verbBits("APPEND", "CONSUME"), authorizationGeneration: 1n, notBeforeMs: KIT_START_MS - 1_000n, expiresAtMs: KIT_START_MS + 3_600_000n });
  s.transition(servedAt(3n), "Clean");
  const session = s.openSession(grant, KIT_KEYS.holder.seed, servedAt(3n), "fast/own");
  run(s, (label) => void s.append(session, servedAt(4n), { lane: ZERO32, payload: utf8(label), label }));
  return bundleOf(STREAMS.fast, s.artifacts);
}

describe("B23 (§12.1): broker-epoch transitions", () => {
  it("the bundle's first transition names no previous lineage: a bundle from a later lineage's transition is refused", async () => {
    const b = without(await syntheticBundle("fast"), 2);
    expect(failures(await verify(b)).filter(([line]) => line === 26)).toEqual([
      [26, "B23", "the bundle's first transition follows lineage 0: a fast bundle starts at the stream's first transition, whose checkpoint chain starts at checkpoint_genesis"],
      [26, "B23", `transition.last_durable_checkpoint is 0x32bbe5ee10396514d8d0c976f238cf17d979aa6d37f356d7d23998f2844b4f85; a new stream's transition names checkpoint_genesis ${GENESIS}`],
    ]);
  });

  it("a restart names the current lineage: none, or another epoch, is refused", async () => {
    const none = await kitFast(transitionFault(1, (t) => void Object.assign(t, { previous_lineage: null, replacement_broker_epoch: 0n, kind: "Clean", last_durable_sequence: null, last_provisional_sequence: null })));
    expect(failures(await verify(none)).filter(([line]) => line === 26)).toEqual([
      [26, "B23", "transition.previous_lineage names broker epoch none; the current lineage is epoch 0"],
      [26, "B23", "transition.last_durable_sequence is absent; the prior lineage's last checkpoint ends at 4"],
    ]);
    const other = await kitFast(transitionFault(1, (t) => void Object.assign(t, { previous_lineage: { provider_epoch: 0n, broker_epoch: 1n }, replacement_broker_epoch: 2n })));
    expect(failures(await verify(other))).toEqual([[26, "B23", "transition.previous_lineage names broker epoch 1; the current lineage is epoch 0"]]);
  });

  it("a restart names the prior lineage's last durable sequence: another, or absent, is refused", async () => {
    const other = await kitFast(transitionFault(1, (t) => void Object.assign(t, { last_durable_sequence: 9n, last_provisional_sequence: 9n })));
    expect(failures(await verify(other))).toEqual([[26, "B23", "transition.last_durable_sequence is 9; the prior lineage's last checkpoint ends at 4"]]);
    const absent = await kitFast(transitionFault(1, (t) => void (t.last_durable_sequence = null)));
    expect(failures(await verify(absent))).toEqual([[26, "B23", "transition.last_durable_sequence is absent; the prior lineage's last checkpoint ends at 4"]]);
  });

  it("a restart before any checkpoint names checkpoint_genesis and no durable sequence", async () => {
    const clean = fastScript((s, append) => {
      append("0");
      s.transition(servedAt(5n), "Void");
    });
    expect(failures(await verify(clean))).toEqual([]);
    const named = fastScript((s) => s.transition(servedAt(5n), "Void"), transitionFault(1, (t) => void (t.last_durable_checkpoint = label32("no-checkpoint"))));
    expect(failures(await verify(named))).toEqual([[7, "B23", `transition.last_durable_checkpoint is ${toHex(label32("no-checkpoint"))}; the latest checkpoint is ${GENESIS} (checkpoint_genesis)`]]);
    const sequence = fastScript((s) => s.transition(servedAt(5n), "Void"), transitionFault(1, (t) => void (t.last_durable_sequence = 0n)));
    expect(failures(await verify(sequence))).toEqual([[7, "B23", "transition.last_durable_sequence is 0; the prior lineage's last checkpoint ends at (none: absent)"]]);
  });
});

describe("B24 (§12.1, §12.2): the checkpoint chain", () => {
  it("a checkpoint with no transition before it in the bundle is refused", async () => {
    const b = without(await syntheticBundle("fast"), 2);
    const none = "a checkpoint with no broker-epoch transition before it in the bundle (§12.1: a lineage starts with its transition)";
    expect(failures(await verify(b)).filter(([line]) => line < 26)).toEqual([[16, "B24", none], [23, "B24", none]]);
  });

  it("a checkpoint of another broker epoch than the current lineage's is refused", async () => {
    const b = await kitFast(checkpointFault(0, (c) => void (c.broker_epoch = 1n)));
    expect(failures(await verify(b))).toEqual([
      [16, "B24", "checkpoint.broker_epoch is 1; the current lineage is epoch 0"],
      [16, "B25", "the bundle carries only part of the batch 0..=2: records 2 are missing (§12.2: a missing record is rejected before the root)"],
    ]);
  });

  it("a lineage's first checkpoint links to its transition and starts at sequence 0", async () => {
    const link = await kitFast(checkpointFault(0, (c) => void (c.previous_checkpoint = label32("elsewhere"))));
    expect(failures(await verify(link))).toEqual([
      [16, "B24", `checkpoint.previous_checkpoint is ${toHex(label32("elsewhere"))}; the lineage's first checkpoint links to its transition 0x9098905e2bff174c4a2b4188f152ed7df11d89640dd690f5e3cf60a83600deff`],
    ]);
    const late = await syntheticBundle("fast", { fault: { target: "checkpoint-batch", index: 0, edit: (b: { first: bigint; records: unknown[] }) => ({ first: b.first + 1n, records: b.records.slice(1) }) } });
    expect(failures(await verify(late))).toEqual([[16, "B24", "checkpoint.first_sequence is 1; a broker epoch's first checkpoint starts at 0"]]);
  });
});

describe("B24 (§13.2): durable watermarks", () => {
  it("a watermark names the bundle's stream", async () => {
    const b = at(await syntheticBundle("fast"), 8, (v) => void (v.body.body.durable_watermark.stream_id = STREAMS.standard));
    expect(failures(await verify(b))).toEqual([[8, "B1", `response.body.durable_watermark.stream_id is ${toHex(STREAMS.standard)}, not the bundle's stream ${toHex(STREAMS.fast)}`]]);
  });

  it("a watermark's anchor is checkpoint_genesis or an earlier checkpoint of the bundle, with that checkpoint's last sequence", async () => {
    const b = await syntheticBundle("fast");
    const unknown = at(b, 18, (v) => void (v.body.body.durable_watermark.checkpoint_anchor = label32("elsewhere")));
    expect(failures(await verify(unknown))).toEqual([
      [18, "B24", `response.body.durable_watermark.checkpoint_anchor ${toHex(label32("elsewhere"))} is neither checkpoint_genesis nor a checkpoint earlier in the bundle`],
    ]);
    const sequence = at(b, 18, (v) => void (v.body.body.durable_watermark.last_durable_sequence = 1n));
    expect(failures(await verify(sequence))).toEqual([[18, "B24", "response.body.durable_watermark.last_durable_sequence is 1; its checkpoint (line 16) ends at 2"]]);
    const absent = at(b, 18, (v) => void (v.body.body.durable_watermark.last_durable_sequence = null));
    expect(failures(await verify(absent))).toEqual([[18, "B24", "response.body.durable_watermark.last_durable_sequence is absent; its checkpoint (line 16) ends at 2"]]);
  });
});

describe("B25 (§12.2): each carried batch recomputed", () => {
  it("a record carried twice with another header is refused", async () => {
    const b = at(await syntheticBundle("fast"), 13, (v) => void (v.header.expires_at_ms = 1n));
    expect(failures(await verify(b))).toEqual([[13, "B25", "two different records at fast id (0, 0): this one and line 8's"]]);
  });

  it("checkpoints whose records the bundle does not carry are noted, not checked", async () => {
    const b = await syntheticBundle("fast");
    const records = b.artifacts.filter((a) => a.type === "RecordDeliveryV1" || a.type === "AuthenticatedRequestV1" || (a.type === "CbqsResponseV1" && a.value.body.type === "Append")).map((a) => a.line);
    const report = await verify(without(b, ...records));
    expect(failures(report)).toEqual([]);
    expect(report.notes).toEqual([
      "the response on line 10 answers no request in the bundle: its receipts are checked, the grant behind it is not",
      "the checkpoint on line 16 (epoch 0, 0..=2): the bundle carries none of its records, so its ordered_range_root is not recomputed",
      "the checkpoint on line 23 (epoch 0, 3..=4): the bundle carries none of its records, so its ordered_range_root is not recomputed",
      "the checkpoint on line 33 (epoch 1, 0..=1): the bundle carries none of its records, so its ordered_range_root is not recomputed",
      "snapshot manifests: application_signature and snapshot_hash are application state, not checked (§15)",
    ]);
  });

  it("a batch carried in part is refused, naming up to eight missing records", async () => {
    const ten = fastScript((s, append) => {
      for (let i = 0; i < 10; i++) append(`r${i}`);
      s.checkpoint(servedAt(4n), "fast/own");
    });
    const responses: Artifact[] = ten.artifacts.filter((a) => a.type === "CbqsResponseV1" || a.type === "RecordDeliveryV1");
    const keep = (n: number) => ({ ...ten, artifacts: ten.artifacts.filter((a) => !responses.includes(a) || responses.indexOf(a) < n) });
    const missing = (list: string) => [[37, "B25", `the bundle carries only part of the batch 0..=9: records ${list} are missing (§12.2: a missing record is rejected before the root)`]];
    expect(failures(await verify(keep(2)))).toEqual(missing("2, 3, 4, 5, 6, 7, 8, 9"));
    expect(failures(await verify(keep(1)))).toEqual(missing("1, 2, 3, 4, 5, 6, 7, 8, …"));
  });

  it("a batch with a record of another stream has no commitment, and is refused so", async () => {
    const b = at(without(await syntheticBundle("fast"), 8), 13, (v) => void (v.header.stream_id = STREAMS.standard));
    expect(failures(await verify(b))).toEqual([
      [13, "B1", `delivery.header.stream_id is ${toHex(STREAMS.standard)}, not the bundle's stream ${toHex(STREAMS.fast)}`],
      [16, "B25", "the batch 0..=2 has no commitment: cannot encode records[0].header.stream_id: a batch's records belong to its stream"],
    ]);
  });
});

describe("B2: a transition or checkpoint served at no block", () => {
  it("is refused under B2 alone, its signature and view-cursor checks skipped", async () => {
    const nowhere = <T extends { served_at: { height: bigint } }>(v: T) => void (v.served_at = { ...v.served_at, height: 9n });
    const t = await kitFast(transitionFault(0, nowhere));
    expect(failures(await verify(t))).toEqual([[2, "B2", "transition.served_at names height 9, at which this chain has no block"]]);
    const c = await kitFast(checkpointFault(2, nowhere));
    expect(failures(await verify(c)).filter(([line]) => line === 33)).toEqual([[33, "B2", "checkpoint.served_at names height 9, at which this chain has no block"]]);
  });
});

describe("B1, B3: a transition's and a checkpoint's context, stream and signature, each named", () => {
  const provider = toHex(signingKey(KIT_KEYS.provider.seed).key);
  it.each([
    ["transition", 0, 2, "3"],
    ["checkpoint", 0, 16, "3"],
  ] as const)("%s", async (target, index, line, height) => {
    const other = (edit: (v: any) => void, signed = false) => kitFast({ target, index, signed, edit });
    // (A checkpoint's context and stream also enter its batch's root: B25 follows, not asserted here.)
    expect(failures(await verify(await other((v) => void (v.context = { ...v.context, chain_id: 8n })))).filter(([, rule]) => rule === "B1")).toEqual([[line, "B1", `${target}.context: chain_id is 8; this chain's is 7`]]);
    expect(failures(await verify(await other((v) => void (v.stream_id = STREAMS.standard)))).filter(([, rule]) => rule === "B1")).toEqual([
      [line, "B1", `${target}.stream_id is ${toHex(STREAMS.standard)}, not the bundle's stream ${toHex(STREAMS.fast)}`],
    ]);
    const digest = target === "transition" ? brokerEpochTransitionDigest : checkpointReceiptDigest;
    const forged = await other((v) => void (v.signature = ed25519Sign(KIT_KEYS.application.seed, digest(v))), true);
    expect(failures(await verify(forged))).toEqual([[line, "B3", `${target}.signature does not verify under the stream's provider_signing_key ${provider} at height ${height}`]]);
  });
});
