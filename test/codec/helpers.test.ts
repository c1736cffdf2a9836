// The §12.2 canonical helpers against a reference written here from the spec text alone, on a
// different Keccak implementation (@noble/hashes; the codec hashes with hash-wasm).
import { describe, expect, it } from "vitest";
import * as fc from "fast-check";
import { keccak_256 } from "@noble/hashes/sha3.js";
import * as C from "../../src/codec/index.js";
import { EncodeError, codecs, encode } from "../../src/codec/index.js";
import type * as T from "../../src/codec/types.js";
import type * as W from "../../src/codec/wire-types.js";
import { context, fill } from "./samples.js";
import * as X from "./wire-samples.js";

const ascii = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, "ascii"));
const cat = (...parts: Uint8Array[]): Uint8Array => Uint8Array.from(parts.flatMap((p) => [...p]));
const k = (...parts: Uint8Array[]): Uint8Array => keccak_256(cat(...parts));
const be = (v: number | bigint, width: number): Uint8Array => {
  const out = new Uint8Array(width);
  let x = BigInt(v);
  for (let i = width - 1; i >= 0; i--, x >>= 8n) out[i] = Number(x & 0xffn);
  return out;
};
const node = (l: Uint8Array, r: Uint8Array): Uint8Array => k(ascii("cbqs/merkle-node/v1"), l, r);
const leaf = (i: number): Uint8Array => k(ascii("leaf"), be(i, 4));

// Reference EMPTY table, from the two formulas of §12.2.
const REF_EMPTY: Uint8Array[] = [];
REF_EMPTY[256] = k(ascii("cbqs/sparse-empty/v1"));
for (let d = 255; d >= 0; d--) REF_EMPTY[d] = node(REF_EMPTY[d + 1]!, REF_EMPTY[d + 1]!);

/** Reference sparse root: keys as 256-bit integers, the tree walked bit by bit from the top. */
function refSparse(entries: { key: Uint8Array; leaf: Uint8Array }[], depth = 0): Uint8Array {
  if (entries.length === 0) return REF_EMPTY[depth]!;
  if (depth === 256) return entries[0]!.leaf;
  const bit = (key: Uint8Array) => (BigInt("0x" + Buffer.from(key).toString("hex")) >> BigInt(255 - depth)) & 1n;
  return node(refSparse(entries.filter((e) => bit(e.key) === 0n), depth + 1), refSparse(entries.filter((e) => bit(e.key) === 1n), depth + 1));
}

describe("§12.2 merkle_root_v1", () => {
  it("one leaf roots to itself; two hash as a node; a trailing odd node is promoted, never duplicated", () => {
    const [a, b, c, d, e] = [0, 1, 2, 3, 4].map(leaf) as [Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array];
    expect(C.merkle_root_v1([a])).toEqual(a);
    expect(C.merkle_root_v1([a, b])).toEqual(node(a, b));
    expect(C.merkle_root_v1([a, b, c])).toEqual(node(node(a, b), c));
    expect(C.merkle_root_v1([a, b, c])).not.toEqual(node(node(a, b), node(c, c)));
    expect(C.merkle_root_v1([a, b, c, d, e])).toEqual(node(node(node(a, b), node(c, d)), e));
    expect(C.merkle_root_v1([a, b, c, d, e, a, b])).toEqual(node(node(node(a, b), node(c, d)), node(node(e, a), b)));
  });

  it("an ordered root does not commit its length: [a, b] and [node(a, b)] share a root (§12.2), which is why every consumer commits a count", () => {
    const [a, b] = [leaf(0), leaf(1)];
    expect(C.merkle_root_v1([a, b])).toEqual(C.merkle_root_v1([node(a, b)]));
  });

  it("the empty list has no root", () => {
    expect(() => C.merkle_root_v1([])).toThrow(EncodeError);
    expect(() => C.fast_lane_sub_root_v1([])).toThrow(EncodeError);
  });
});

describe("§12.2 sparse_root_v1 and its proofs", () => {
  it("EMPTY[256] = keccak256(\"cbqs/sparse-empty/v1\"), EMPTY[d] = node(EMPTY[d+1], EMPTY[d+1]); an empty map roots to EMPTY[0]", () => {
    expect(C.SPARSE_EMPTY_V1).toHaveLength(257);
    C.SPARSE_EMPTY_V1.forEach((e, d) => expect(e, `EMPTY[${d}]`).toEqual(REF_EMPTY[d]));
    expect(C.sparse_root_v1([])).toEqual(REF_EMPTY[0]);
  });

  it("one leaf folds with EMPTY siblings along its key's bits, most significant first", () => {
    const key = fill(32, 0);
    key[0] = 0b1000_0000; // bit 0 set: the leaf is right at depth 0
    key[31] = 0b0000_0001; // bit 255 set: right at the last level
    let acc = fill(32, 0xab);
    for (let d = 255; d >= 0; d--) {
      const bit = (key[d >> 3]! >> (7 - (d & 7))) & 1;
      acc = bit === 0 ? node(acc, REF_EMPTY[d + 1]!) : node(REF_EMPTY[d + 1]!, acc);
    }
    expect(C.sparse_root_v1([{ key, leaf: fill(32, 0xab) }])).toEqual(acc);
  });

  it("any map: the root equals the reference, and every key's proof (present or absent) folds back to it", () => {
    const entry = fc.record({ key: fc.uint8Array({ minLength: 32, maxLength: 32 }), leaf: fc.uint8Array({ minLength: 32, maxLength: 32 }) });
    fc.assert(
      fc.property(fc.uniqueArray(entry, { maxLength: 6, selector: (e) => Buffer.from(e.key).toString("hex") }), fc.uint8Array({ minLength: 32, maxLength: 32 }), (entries, other) => {
        const root = C.sparse_root_v1(entries);
        expect(root).toEqual(refSparse(entries));
        for (const key of [...entries.map((e) => e.key), other]) {
          const p = C.sparseProof(entries, key);
          expect(C.sparseProofProblem(p)).toBeNull();
          expect(C.sparse_proof_root_v1(key, p.leaf, p)).toEqual(root);
        }
      }),
      { numRuns: 40 },
    );
  });

  it("keys differing only in the last bit: the sibling at depth 255; a proof's bitmap bit d is the 2^d bit of the big-endian bitmap", () => {
    const a = fill(32, 0x77);
    const b = a.slice();
    b[31] = 0x77 ^ 1;
    const entries = [{ key: a, leaf: fill(32, 1) }, { key: b, leaf: fill(32, 2) }];
    const p = C.sparseProof(entries, a);
    const bitmap = fill(32, 0);
    bitmap[0] = 0x80; // 2^255
    expect(p.bitmap).toEqual(bitmap);
    expect(p.siblings).toEqual([fill(32, 2)]);
    const q = C.sparseProof([{ key: fill(32, 0x80), leaf: fill(32, 3) }], fill(32, 0));
    const bit0 = fill(32, 0);
    bit0[31] = 0x01; // 2^0: the sibling at depth 0
    expect(q.bitmap).toEqual(bit0);
    expect(q.leaf).toBeNull();
  });

  it("absence: a proof is driven by the queried key, so the same bytes verify at two absent keys whose paths meet only empty siblings", () => {
    const entries = [{ key: fill(32, 0xff), leaf: fill(32, 5) }];
    const p1 = C.sparseProof(entries, fill(32, 0x00));
    const p2 = C.sparseProof(entries, fill(32, 0x01));
    expect(p1).toEqual(p2);
    expect(C.sparse_proof_root_v1(fill(32, 0x01), null, p1)).toEqual(C.sparse_root_v1(entries));
  });

  it("refuses what has no canonical form: duplicate keys, a present leaf equal to EMPTY[256], a default sibling, a wrong sibling count", () => {
    expect(() => C.sparse_root_v1([{ key: fill(32, 1), leaf: fill(32, 2) }, { key: fill(32, 1), leaf: fill(32, 3) }])).toThrow(EncodeError);
    expect(() => C.sparse_root_v1([{ key: fill(32, 1), leaf: REF_EMPTY[256]! }])).toThrow(EncodeError);
    const bitmap = fill(32, 0);
    bitmap[31] = 1;
    expect(() => C.sparse_proof_root_v1(fill(32, 0), null, { bitmap, siblings: [REF_EMPTY[1]!] })).toThrow(/EMPTY\[1\]/);
    expect(() => C.sparse_proof_root_v1(fill(32, 0), null, { bitmap, siblings: [] })).toThrow(EncodeError);
    expect(() => C.sparse_proof_root_v1(fill(32, 0), REF_EMPTY[256]!, { bitmap: fill(32, 0), siblings: [] })).toThrow(EncodeError);
  });

  it("§12.2.1/§13.2: a map can place a non-empty sibling at every depth, and that LaneProofV1 is 8,313 bytes; 512 of them are 4,256,256 bytes, inside 5,242,880 with a checkpoint frame's receipt", () => {
    const key = fill(32, 0x5a);
    const neighbours = Array.from({ length: 256 }, (_, d) => {
      const n = key.slice();
      n[d >> 3]! ^= 0x80 >> (d & 7);
      return { key: n, leaf: k(be(d, 2)) };
    });
    const payload: W.LanePayloadV1 = { lane_sub_root: fill(32, 0x5b), lane_record_count: 65_536, lane_first_sequence: 0n, lane_last_sequence: 65_535n };
    const entries = [...neighbours, { key, leaf: C.fast_lane_payload_digest_v1(key, payload) }];
    const p = C.sparseProof(entries, key);
    expect(p.siblings).toHaveLength(256);
    expect(p.bitmap).toEqual(fill(32, 0xff));
    const proof: W.LaneProofV1 = { lane_id: key, payload, bitmap: p.bitmap, siblings: p.siblings };
    const bytes = encode(codecs.LaneProofV1, proof);
    expect(bytes.length).toBe(8_313);
    expect(C.decode(codecs.LaneProofV1, bytes)).toEqual(proof);
    expect(C.sparse_proof_root_v1(key, C.fast_lane_payload_digest_v1(key, payload), p)).toEqual(C.sparse_root_v1(entries));
    expect(512 * bytes.length).toBe(4_256_256);
    const frameWithout = encode(codecs.CbqsServerFrameV1, { type: "Checkpoint", body: { subscription_id: fill(32, 1), receipt: X.checkpoint, lanes: [] } }).length;
    expect(frameWithout + 512 * bytes.length).toBeLessThanOrEqual(C.MAX_WIRE_FRAME_BYTES);
    expect(C.MAX_PROOF_LANES_PER_SUBSCRIPTION).toBe(512);
  });
});

describe("§12.2 fast-batch commitments", () => {
  const fastId: T.FastRecordIdV1 = { provider_epoch: 0n, broker_epoch: 2n, sequence: 10n };
  const CTX = encode(codecs.CbqsSigningContextV1, context);

  it("fast_record_digest_v1 = keccak256(\"cbqs/fast-record/v1\" || context || FastRecordIdV1 || RecordHeaderV1 || keccak256(payload))", () => {
    const hand = k(ascii("cbqs/fast-record/v1"), CTX, be(0, 8), be(2, 8), be(10, 8), encode(codecs.RecordHeaderV1, X.header), keccak_256(X.payload));
    expect(C.fast_record_digest_v1(context, fastId, X.header, X.payload)).toEqual(hand);
  });

  it("lane leaf, lane payload digest and ordered range root, byte for byte", () => {
    const rd = fill(32, 0x3c);
    expect(C.fast_lane_leaf_digest_v1(rd)).toEqual(k(ascii("cbqs/fast-lane-leaf/v1"), rd));
    expect(C.fast_lane_sub_root_v1([rd])).toEqual(k(ascii("cbqs/fast-lane-leaf/v1"), rd));
    const p: W.LanePayloadV1 = { lane_sub_root: fill(32, 0x5b), lane_record_count: 3, lane_first_sequence: 10n, lane_last_sequence: 14n };
    expect(C.fast_lane_payload_digest_v1(X.LANE, p)).toEqual(k(ascii("cbqs/fast-lane-payload/v1"), X.LANE, fill(32, 0x5b), be(3, 4), be(10, 8), be(14, 8)));
    expect(C.fast_ordered_range_root_v1(X.checkpoint, 6, fill(32, 0x4d))).toEqual(
      k(ascii("cbqs/fast-ordered-range/v1"), CTX, X.STREAM, be(0, 8), be(2, 8), be(10, 8), be(15, 8), be(6, 4), fill(32, 0x4d)),
    );
  });

  it("record_count is 1..=65,536 and last - first + 1, without overflow", () => {
    const top = (1n << 64n) - 1n;
    expect(() => C.fast_ordered_range_root_v1(X.checkpoint, 5, fill(32, 1))).toThrow(EncodeError);
    expect(() => C.fast_ordered_range_root_v1({ ...X.checkpoint, first_sequence: 16n }, 0, fill(32, 1))).toThrow(EncodeError);
    expect(() => C.fast_ordered_range_root_v1({ ...X.checkpoint, first_sequence: 0n, last_sequence: 65_536n }, 65_537, fill(32, 1))).toThrow(EncodeError);
    expect(C.fast_ordered_range_root_v1({ ...X.checkpoint, first_sequence: top - 65_535n, last_sequence: top }, 65_536, fill(32, 1))).toHaveLength(32);
    expect(C.recordCountProblem(0n, top, 0)).not.toBeNull();
  });

  it("a batch of interleaved lanes: each lane's records in sequence order (gaps inside a lane), one map, one range root", () => {
    const A = fill(32, 0x0a), B = fill(32, 0x0b), Z = fill(32, 0);
    const lanesInOrder = [A, B, A, Z, B, A];
    const records = lanesInOrder.map((lane, i) => ({
      header: { ...X.header, lane_id: lane, client_message_id: fill(32, i + 1) },
      payload: Uint8Array.of(i),
    }));
    const out = C.fastBatchCommitment({ context, stream_id: X.STREAM, provider_epoch: 0n, broker_epoch: 2n, first_sequence: 10n }, records);
    expect(out.last_sequence).toBe(15n);
    const rd = records.map((r, i) => C.fast_record_digest_v1(context, { provider_epoch: 0n, broker_epoch: 2n, sequence: 10n + BigInt(i) }, r.header, r.payload));
    expect(out.record_digests).toEqual(rd);
    const lf = (d: Uint8Array) => k(ascii("cbqs/fast-lane-leaf/v1"), d);
    const expected = [
      { lane_id: Z, payload: { lane_sub_root: lf(rd[3]!), lane_record_count: 1, lane_first_sequence: 13n, lane_last_sequence: 13n } },
      { lane_id: A, payload: { lane_sub_root: node(node(lf(rd[0]!), lf(rd[2]!)), lf(rd[5]!)), lane_record_count: 3, lane_first_sequence: 10n, lane_last_sequence: 15n } },
      { lane_id: B, payload: { lane_sub_root: node(lf(rd[1]!), lf(rd[4]!)), lane_record_count: 2, lane_first_sequence: 11n, lane_last_sequence: 14n } },
    ];
    expect(out.lanes).toEqual(expected);
    const map = refSparse(expected.map((l) => ({ key: l.lane_id, leaf: C.fast_lane_payload_digest_v1(l.lane_id, l.payload) })));
    expect(out.lane_map_root).toEqual(map);
    expect(out.ordered_range_root).toEqual(C.fast_ordered_range_root_v1({ ...X.checkpoint, last_sequence: 15n }, 6, map));
    expect(() => C.fastBatchCommitment({ context, stream_id: fill(32, 0x52), provider_epoch: 0n, broker_epoch: 2n, first_sequence: 10n }, records)).toThrow(EncodeError);
  });
});
