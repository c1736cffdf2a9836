// The append-receipt checks (src/broker-kit/check-receipts.ts; CIP-39 §8, §10, §14.1, §15) in
// process, on kit bundles signed on the synthetic chain with one value changed as the broker
// signs it: the global and lane chains from their genesis or a retention anchor (B15, B16), record
// ids in order, a receipt against every field of the append it answers (B17), lanes derived,
// never reused, closed to client appends and within max_lanes (B19).
import { describe, expect, it } from "vitest";
import type { Bundle } from "../../src/broker-kit/bundle.js";
import { clientHeader, compareIds } from "../../src/broker-kit/check-receipts.js";
import { KIT_KEYS, type KitVariation } from "../../src/broker-kit/kit.js";
import { label32, ZERO32 } from "../../src/broker-kit/signer.js";
import { verifyBundle, type BundleReport } from "../../src/broker-kit/verify.js";
import { toHex, utf8 } from "../../src/bytes.js";
import type { AppendReceiptV1, RecordIdV1, StandardRetentionAnchorV1 } from "../../src/codec/types.js";
import { STREAMS, syntheticBundle, syntheticSource, type Edit } from "./synthetic-chain.js";

const failures = (r: BundleReport): Array<[number, string, string]> => r.failures.map((f) => [f.line, f.rule, f.evidence]);
const verify = (b: Bundle, edit?: Edit): Promise<BundleReport> => verifyBundle(b, syntheticSource(edit));
const receiptFault = (index: number, edit: (r: AppendReceiptV1) => void): KitVariation => ({ fault: { target: "append-receipt", index, edit } });
const fast = (broker_epoch: bigint, sequence: bigint): RecordIdV1 => ({ type: "Fast", provider_epoch: 0n, broker_epoch, sequence });
const standard = (sequence: bigint): RecordIdV1 => ({ type: "Standard", provider_epoch: 0n, sequence });

describe("record ids in stream order: (broker epoch, sequence), a Standard id in epoch 0", () => {
  it("a later epoch comes after any sequence of an earlier one; within an epoch, the sequence decides", () => {
    expect(compareIds(fast(1n, 0n), fast(0n, 9n))).toBe(1);
    expect(compareIds(fast(0n, 9n), fast(1n, 0n))).toBe(-1);
    expect(compareIds(fast(2n, 4n), fast(2n, 4n))).toBe(0);
    expect(compareIds(fast(2n, 3n), fast(2n, 4n))).toBe(-1);
    expect(compareIds(fast(2n, 5n), fast(2n, 4n))).toBe(1);
    expect(compareIds(standard(4n), fast(0n, 4n))).toBe(0);
    expect(compareIds(standard(4n), fast(1n, 0n))).toBe(-1);
  });

  it("§10: a client append's header is origin Client, kind Application, created at the client's time", () => {
    const body = { stream_id: STREAMS.standard, lane_id: ZERO32, client_message_id: label32("m"), client_created_at_ms: 5n, visible_after_ms: 6n, expires_at_ms: 7n, encryption_generation: 8n, nonce: new Uint8Array(24), payload: utf8("p") };
    expect(clientHeader(body)).toEqual({ stream_id: STREAMS.standard, lane_id: ZERO32, origin: "Client", kind: "Application", client_message_id: label32("m"), created_at_ms: 5n, visible_after_ms: 6n, expires_at_ms: 7n, encryption_generation: 8n, nonce: new Uint8Array(24) });
  });
});

describe("B15, B16 (§14.1): the global and lane receipt chains", () => {
  it("the first receipt off stream_receipt_genesis, a later one off its lane's tail: each named", async () => {
    const first = await verify(await syntheticBundle("standard", receiptFault(0, (r) => void (r.previous_global_receipt = label32("elsewhere")))));
    expect(failures(first)).toEqual([
      [7, "B15", "response.body.append_receipt.previous_global_receipt is 0x8d42822a76f8205bce86c948a1adbab71a66867aa55ae56213a1e98dedbfe73b; the chain's tail is 0x683ff36d640ca6ca6bb3be12584ff949b822b9783e1011880cdce30227a9fae6 (stream_receipt_genesis)"],
    ]);
    const laneTail = await verify(await syntheticBundle("standard", receiptFault(3, (r) => void (r.previous_lane_receipt = label32("elsewhere")))));
    expect(failures(laneTail)).toEqual([
      [18, "B16", "response.body.append_receipt.previous_lane_receipt is 0x8d42822a76f8205bce86c948a1adbab71a66867aa55ae56213a1e98dedbfe73b; lane 0x0000000000000000…'s tail is 0x91d464f8b5e72287daf37170fe661fdeedcad4b288223cf5808148a152bfb157 (the digest of the lane's receipt before it)"],
    ]);
  });

  it("a record id repeated on the global chain is refused (B15)", async () => {
    const repeated = await verify(await syntheticBundle("standard", receiptFault(6, (r) => void (r.record_id = standard(5n)))));
    expect(failures(repeated)).toEqual([[37, "B15", "response.body.append_receipt.record_id Standard(5) does not come after the previous receipt's Standard(5)"]]);
  });

  it("B17: a lane event's receipt with a Standard id on a Fast stream is refused", async () => {
    const b = await syntheticBundle("fast", receiptFault(0, (r) => void (r.record_id = standard(1n))));
    expect(failures(await verify(b))).toEqual([[10, "B17", "response.body.receipt.record_id is a Standard id on a Fast stream"]]);
  });

  it("B30 names a fast lane event's receipt by its kind and (broker epoch, sequence)", async () => {
    const report = await verify(await syntheticBundle("fast"), (s) => void (s.status = "Suspended"));
    expect(failures(report)).toEqual([[10, "B30", "the LaneCreated receipt Fast(0, 1) served at height 3, where the stream is Suspended: a broker serves no mutation then (§6.1)"]]);
  });
});

describe("B17 (§10, §14.1): a receipt against each field of the append it answers", () => {
  // kind and visible_after_ms have no case of their own: a receipt that decodes has the kind its
  // origin allows (Application for Client) and visible_after_ms 0 (§10), as its append has.
  const at = "response.body.append_receipt";
  const cases: Array<[string, (r: AppendReceiptV1) => void, Array<[string, string]>]> = [
    ["stream_id", (r) => void (r.stream_id = STREAMS.fast), [
      ["B1", `${at}.stream_id is ${toHex(STREAMS.fast)}, not the bundle's stream ${toHex(STREAMS.econ)}`],
      ["B17", `${at}.stream_id is ${toHex(STREAMS.fast)}; the append it answers makes it ${toHex(STREAMS.econ)}`],
    ]],
    ["lane_id", (r) => void (r.lane_id = label32("another-lane")), [
      ["B16", `${at}.previous_lane_receipt is 0x6f97b22ef2a938074bfbfb94c2484e272361e3b9685aae311a79c3f90b629566; lane 0xd90564a75942b58f…'s tail is 0xb669fbc93bb5308e73e36926acedefaa66e6c4428b3f1ae61452c27b89b84220 (lane_receipt_genesis)`],
      ["B17", `${at}.lane_id is ${toHex(label32("another-lane"))}; the append it answers makes it ${toHex(ZERO32)}`],
    ]],
    ["origin", (r) => void Object.assign(r, { origin: "ProviderEvent", kind: "LaneCreated" }), [["B17", `${at}.origin is ProviderEvent; the append it answers makes it Client`]]],
    ["client_message_id", (r) => void (r.client_message_id = label32("another-message")), [
      ["B17", `${at}.client_message_id is ${toHex(label32("another-message"))}; the append it answers makes it ${toHex(label32("message/econ/1"))}`],
    ]],
    ["header_hash", (r) => void (r.header_hash = label32("another-header")), [
      ["B17", `${at}.header_hash is ${toHex(label32("another-header"))}; the append it answers makes it 0xa172bf8e35ae4b41901ff0198cebcd9f86de54048f8dc4676669508d6cbfd7d7`],
    ]],
    ["expires_at_ms", (r) => void (r.expires_at_ms = 1n), [["B17", `${at}.expires_at_ms is 1; the append it answers makes it 0`]]],
    ["encryption_generation", (r) => void (r.encryption_generation = 1n), [["B17", `${at}.encryption_generation is 1; the append it answers makes it 0`]]],
  ];
  it.each(cases)("%s changed in the receipt is refused, naming the field and both values", async (_field, edit, expected) => {
    const report = await verify(await syntheticBundle("econ", receiptFault(1, edit)));
    expect(report.failures.map((f) => [f.line, f.rule, f.evidence])).toEqual(expected.map(([rule, evidence]) => [9, rule, evidence]));
  });
});

describe("B19 (§8): lanes", () => {
  it("a lane event's receipt is not a client append: the default lane closed, a lane created after on it passes", async () => {
    const b = await syntheticBundle("standard", {
      extra: {
        at: "end",
        run: async (k) => {
          const v8 = await k.view(8n);
          k.signer.closeLane(k.sessions["s2"]!, v8, ZERO32);
          k.signer.createLane(k.sessions["s2"]!, v8, "standard/lane-2");
        },
      },
    });
    expect(failures(await verify(b))).toEqual([]);
  });

  it("max_lanes counts the open lanes and the default lane: a closed lane frees its place; a lane created again is not counted twice", async () => {
    const reopen = await syntheticBundle("standard", { extra: { at: "end", run: async (k) => void k.signer.createLane(k.sessions["s2"]!, await k.view(8n), "standard/lane-2") } });
    expect(failures(await verify(reopen, (s) => void (s.config.max_lanes = 2)))).toEqual([]);
    const twice = await syntheticBundle("standard", { extra: { at: "after-create-lane", run: async (k) => void k.signer.createLane(k.sessions["s1"]!, await k.view(3n), "standard/lane-1") } });
    expect(failures(await verify(twice, (s) => void (s.config.max_lanes = 2)))).toEqual([
      [11, "B19", "lane 0x6eee1573f000420c65e40e39e6f0dd7beba355ca34dd40190c36fef5bd1c8a74 is created a second time: closed lane ids are never reused (§8)"],
    ]);
  });

  it("a created lane whose request is not in the bundle: its id cannot be derived (no nonce), it is still counted and tracked", async () => {
    const b = await syntheticBundle("standard");
    const report = await verify({ ...b, artifacts: b.artifacts.filter((a) => a.line !== 8) });
    expect(failures(report)).toEqual([]);
    expect(report.checks.B19).toBe(7);
  });

  it("a created lane whose receipt has no view: derived and counted once, its max_lanes check skipped", async () => {
    const b = await syntheticBundle("standard", receiptFault(1, (r) => void (r.served_at = { ...r.served_at, height: 9n })));
    expect(failures(await verify(b, (s) => void (s.config.max_lanes = 1))).filter(([line]) => line === 9)).toEqual([[9, "B2", "response.body.receipt.served_at names height 9, at which this chain has no block"]]);
  });
});

describe("§15: a bundle that starts at retention anchors", () => {
  /** The standard bundle, a floor at 4 for the default lane, at 7 for the stream and that lane, then a new session's append of record 7. */
  const anchored = () =>
    syntheticBundle("standard", {
      extra: {
        at: "end",
        run: async (k) => {
          const v8 = await k.view(8n);
          k.signer.standardAnchor(v8, 4n, ZERO32);
          k.signer.standardAnchor(v8, 7n, null);
          k.signer.standardAnchor(v8, 7n, ZERO32);
          const s3 = k.signer.openSession(k.sessions["s2"]!.grant, KIT_KEYS.holder2.seed, v8, "standard/3");
          k.signer.append(s3, v8, { lane: ZERO32, payload: utf8("after the floor"), label: "standard/after" });
        },
      },
    });

  it("the global and lane chains restart from the anchors' predecessor digests; without the anchors the same receipt is off both chains", async () => {
    const full = await anchored();
    const anchors = full.artifacts.filter((a) => a.type === "StandardRetentionAnchorV1").slice(-2);
    const grant2 = full.artifacts.filter((a) => a.type === "StreamGrantV1")[1]!;
    const tail = full.artifacts.slice(full.artifacts.indexOf(anchors[1]!) + 1);
    const cut = { ...full, artifacts: [grant2, ...anchors, ...tail] };
    const report = await verify(cut);
    expect(failures(report)).toEqual([]);
    expect([report.checks.B15, report.checks.B16]).toEqual([1, 1]);
    expect(failures(await verify({ ...cut, artifacts: [grant2, ...tail] }))).toEqual([
      [49, "B15", "response.body.append_receipt.previous_global_receipt is 0x857c98e12249dc0901ed2851622b4998c6a4e3afdaba252fbde8317bae3ec679; the chain's tail is 0x683ff36d640ca6ca6bb3be12584ff949b822b9783e1011880cdce30227a9fae6 (stream_receipt_genesis)"],
      [49, "B16", "response.body.append_receipt.previous_lane_receipt is 0x857c98e12249dc0901ed2851622b4998c6a4e3afdaba252fbde8317bae3ec679; lane 0x0000000000000000…'s tail is 0x9ec4acd5e157a79304a0b4023318eba98218d402fd3c04628634e561f544c24b (lane_receipt_genesis)"],
    ]);
  });

  it("of several anchors before the first receipt, the chains restart at the last (the highest floor)", async () => {
    const full = await anchored();
    const anchors = full.artifacts.filter((a) => a.type === "StandardRetentionAnchorV1");
    const floors = anchors.map((a) => [a.line, (a.value as StandardRetentionAnchorV1).first_retained_sequence, (a.value as StandardRetentionAnchorV1).lane_id === null ? "stream" : "lane"]);
    expect(floors).toEqual([[34, 2n, "stream"], [40, 4n, "stream"], [42, 4n, "lane"], [43, 7n, "stream"], [44, 7n, "lane"]]);
    const grant2 = full.artifacts.filter((a) => a.type === "StreamGrantV1")[1]!;
    const tail = full.artifacts.slice(full.artifacts.indexOf(anchors[4]!) + 1);
    const report = await verify({ ...full, artifacts: [grant2, ...anchors.slice(1), ...tail] });
    expect(failures(report)).toEqual([]);
  });

  it("an anchor after receipts of its scope does not move the chain: the next receipt follows the last one", async () => {
    const b = await syntheticBundle("standard", {
      extra: {
        at: "end",
        run: async (k) => {
          const v8 = await k.view(8n);
          k.signer.standardAnchor(v8, 2n, ZERO32);
          k.signer.append(k.sessions["s2"]!, v8, { lane: ZERO32, payload: utf8("after the lane floor"), label: "standard/after" });
        },
      },
    });
    expect(failures(await verify(b))).toEqual([]);
  });
});
