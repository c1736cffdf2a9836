// fixtures/broker/cip-39-helper-vectors-v1.json: our published vectors of the §12.2 helpers. The
// file must hash to the pinned SHA-256, and every vector must recompute from its inputs — the EMPTY
// table and the generated leaves on an independent Keccak (@noble/hashes), the rest through the
// codec's helpers. `mismatches` is the check a broker implementation can port.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesEqual, fromHex, toHex } from "../../src/bytes.js";
import * as C from "../../src/codec/index.js";
import { codecs, fromJson } from "../../src/codec/index.js";
import { HELPER_VECTORS_FORMAT, HELPER_VECTORS_PATH, LEAF_RULE } from "../../scripts/gen-helper-vectors.js";

type Doc = Record<string, any>;
const text = readFileSync(HELPER_VECTORS_PATH, "utf8");
const h = (s: string): Uint8Array => fromHex(s);
const ascii = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, "ascii"));

/** leaf[i] = keccak256("cbqs-vectors/leaf" || u32_be(i)), on @noble/hashes. */
function ruleLeaf(i: number): Uint8Array {
  const b = new Uint8Array(4);
  new DataView(b.buffer).setUint32(0, i);
  return keccak_256(Uint8Array.from([...ascii("cbqs-vectors/leaf"), ...b]));
}
// Generated once: the large vectors all take prefixes of the same leaf sequence.
const generated: Uint8Array[] = [];
function ruleLeaves(n: number): Uint8Array[] {
  for (let i = generated.length; i < n; i++) generated.push(ruleLeaf(i));
  return generated.slice(0, n);
}

/** Every vector of `doc` that does not recompute, as "section[name]: what". */
export function mismatches(doc: Doc): string[] {
  const out: string[] = [];
  const same = (where: string, got: Uint8Array, want: string): void => {
    if (toHex(got) !== want) out.push(`${where}: computed ${toHex(got)}, file ${want}`);
  };
  // EMPTY[256] = keccak256("cbqs/sparse-empty/v1"), EMPTY[d] = keccak256("cbqs/merkle-node/v1" || EMPTY[d+1] || EMPTY[d+1]).
  let e = keccak_256(ascii("cbqs/sparse-empty/v1"));
  for (let d = 256; d >= 0; d--) {
    same(`empty[${d}]`, e, doc.empty[d]);
    e = keccak_256(Uint8Array.from([...ascii("cbqs/merkle-node/v1"), ...e, ...e]));
  }
  for (const v of doc.merkle_root_v1) {
    const leaves: Uint8Array[] = v.leaves ? v.leaves.map(h) : ruleLeaves(v.count);
    if (v.leaves) v.leaves.forEach((l: string, i: number) => same(`merkle_root_v1[${v.name}].leaves[${i}]`, ruleLeaf(i), l));
    same(`merkle_root_v1[${v.name}]`, C.merkle_root_v1(leaves), v.root);
  }
  for (const v of doc.sparse_root_v1) {
    const entries = v.entries.map((x: Doc) => ({ key: h(x.key), leaf: h(x.leaf) }));
    same(`sparse_root_v1[${v.name}]`, C.sparse_root_v1(entries), v.root);
    for (const p of v.proofs) {
      const proof = { bitmap: h(p.bitmap), siblings: p.siblings.map(h) };
      same(`sparse_root_v1[${v.name}] proof at ${p.key}`, C.sparse_proof_root_v1(h(p.key), p.leaf === null ? null : h(p.leaf), proof), v.root);
      const ours = C.sparseProof(entries, h(p.key));
      if (!bytesEqual(ours.bitmap, proof.bitmap) || ours.siblings.length !== proof.siblings.length) out.push(`sparse_root_v1[${v.name}] proof at ${p.key}: another proof shape`);
    }
  }
  for (const [i, v] of doc.fast_record_digest_v1.entries()) {
    const digest = C.fast_record_digest_v1(fromJson(codecs.CbqsSigningContextV1, v.context), fromJson(codecs.FastRecordIdV1, v.record_id), fromJson(codecs.RecordHeaderV1, v.header), h(v.payload));
    same(`fast_record_digest_v1[${i}]`, digest, v.record_digest);
  }
  for (const [i, v] of doc.fast_lane_leaf_digest_v1.entries()) same(`fast_lane_leaf_digest_v1[${i}]`, C.fast_lane_leaf_digest_v1(h(v.record_digest)), v.lane_leaf_digest);
  for (const v of doc.fast_lane_sub_root_v1) same(`fast_lane_sub_root_v1[${v.name}]`, C.fast_lane_sub_root_v1(ruleLeaves(v.count)), v.lane_sub_root);
  for (const v of doc.fast_ordered_range_root_v1) {
    const payload = fromJson(codecs.LanePayloadV1, v.lane_payload);
    same(`fast_ordered_range_root_v1[${v.name}].lane_sub_root`, C.fast_lane_sub_root_v1(ruleLeaves(v.record_count)), toHex(payload.lane_sub_root));
    const leaf = C.fast_lane_payload_digest_v1(h(v.lane_id), payload);
    same(`fast_ordered_range_root_v1[${v.name}].lane_payload_digest`, leaf, v.lane_payload_digest);
    const map = C.sparse_root_v1([{ key: h(v.lane_id), leaf }]);
    same(`fast_ordered_range_root_v1[${v.name}].lane_map_root`, map, v.lane_map_root);
    const range = { context: fromJson(codecs.CbqsSigningContextV1, v.context), stream_id: h(v.stream_id), provider_epoch: BigInt(v.provider_epoch), broker_epoch: BigInt(v.broker_epoch), first_sequence: BigInt(v.first_sequence), last_sequence: BigInt(v.last_sequence) };
    same(`fast_ordered_range_root_v1[${v.name}]`, C.fast_ordered_range_root_v1(range, v.record_count, map), v.ordered_range_root);
  }
  for (const v of doc.fast_batches) {
    const range = { context: fromJson(codecs.CbqsSigningContextV1, v.context), stream_id: h(v.stream_id), provider_epoch: BigInt(v.provider_epoch), broker_epoch: BigInt(v.broker_epoch), first_sequence: BigInt(v.first_sequence) };
    const records = v.records.map((r: Doc) => ({ header: fromJson(codecs.RecordHeaderV1, r.header), payload: h(r.payload) }));
    const got = C.fastBatchCommitment(range, records);
    if (got.last_sequence.toString() !== v.last_sequence) out.push(`fast_batches[${v.name}].last_sequence`);
    got.record_digests.forEach((d, i) => same(`fast_batches[${v.name}].record_digests[${i}]`, d, v.record_digests[i]));
    if (got.lanes.length !== v.lanes.length) out.push(`fast_batches[${v.name}].lanes: ${got.lanes.length} lanes`);
    got.lanes.forEach((l, i) => {
      same(`fast_batches[${v.name}].lanes[${i}].lane_id`, l.lane_id, v.lanes[i].lane_id);
      same(`fast_batches[${v.name}].lanes[${i}].lane_sub_root`, l.payload.lane_sub_root, v.lanes[i].payload.lane_sub_root);
      same(`fast_batches[${v.name}].lanes[${i}].lane_payload_digest`, C.fast_lane_payload_digest_v1(l.lane_id, l.payload), v.lanes[i].lane_payload_digest);
    });
    same(`fast_batches[${v.name}].lane_map_root`, got.lane_map_root, v.lane_map_root);
    same(`fast_batches[${v.name}].ordered_range_root`, got.ordered_range_root, v.ordered_range_root);
  }
  return out;
}

describe("fixtures/broker/cip-39-helper-vectors-v1.json", () => {
  it("hashes to the pinned SHA-256 (src/codec/pinned.ts)", () => {
    expect(createHash("sha256").update(readFileSync(HELPER_VECTORS_PATH)).digest("hex")).toBe(C.HELPER_VECTORS_SHA256);
  });

  it("says it is ours: format, provenance, and the conventions a broker needs to reproduce it", () => {
    const doc = JSON.parse(text) as Doc;
    expect(doc.format).toBe(HELPER_VECTORS_FORMAT);
    expect(doc.provenance).toMatch(/NOT vectors published by the CIP-39 authors/);
    expect(doc.conventions.leaf_rule).toBe(LEAF_RULE);
    expect(doc.conventions.bitmap).toMatch(/2\^d bit/);
  });

  it("covers every EMPTY constant, one and two leaves, odd counts, 65,536 leaves, sparse gaps, the extreme keys and a 256-sibling proof", () => {
    const doc = JSON.parse(text) as Doc;
    expect(doc.empty).toHaveLength(257);
    const counts = doc.merkle_root_v1.map((v: Doc) => v.count ?? v.leaves.length);
    expect(counts).toEqual(expect.arrayContaining([1, 2, 3, 5, 7, 9, 65_535, 65_536]));
    const keys = doc.sparse_root_v1.flatMap((v: Doc) => v.entries.map((e: Doc) => e.key));
    expect(keys).toContain("0x" + "ff".repeat(32));
    expect(keys).toContain("0x" + "00".repeat(32));
    expect(doc.sparse_root_v1.some((v: Doc) => v.proofs.some((p: Doc) => p.siblings.length === 256))).toBe(true);
    expect(doc.sparse_root_v1.some((v: Doc) => v.proofs.some((p: Doc) => p.leaf === null && p.siblings.length > 0))).toBe(true);
    expect(doc.fast_ordered_range_root_v1[0].record_count).toBe(65_536);
    expect(doc.fast_batches.map((b: Doc) => b.last_sequence)).toContain(((1n << 64n) - 1n).toString());
  });

  it("every vector recomputes from its inputs", () => {
    expect(mismatches(JSON.parse(text) as Doc)).toEqual([]);
  }, 60_000);

  it("a changed output is found (the check can fail)", () => {
    const doc = JSON.parse(text) as Doc;
    doc.sparse_root_v1[3].root = doc.sparse_root_v1[2].root;
    doc.fast_batches[0].lanes[1].lane_payload_digest = doc.fast_batches[0].lanes[0].lane_payload_digest;
    doc.empty[100] = doc.empty[101];
    const found = mismatches(doc);
    expect(found.some((m) => m.startsWith("empty[100]"))).toBe(true);
    expect(found.some((m) => m.startsWith("sparse_root_v1[two keys split at depth 0]"))).toBe(true);
    expect(found.some((m) => m.includes("lanes[1].lane_payload_digest"))).toBe(true);
  }, 60_000);
});

describe("docs/guides/verify-a-broker.md", () => {
  const doc = readFileSync("docs/guides/verify-a-broker.md", "utf8");

  it("states the pinned SHA-256 of the vectors", () => {
    expect(doc).toContain(C.HELPER_VECTORS_SHA256);
  });

  it("lists every broker wire type of the registry in its \"Wire types\" table", () => {
    const names = C.CODEC_NAMES.slice(C.CODEC_NAMES.indexOf("LaneStatusV1"));
    for (const n of [...names, "RecordHeaderV1", "AppendReceiptV1", "BrokerEpochTransitionV1", "CheckpointReceiptV1"]) expect(doc, n).toContain(`\`${n}\``);
  });
});
