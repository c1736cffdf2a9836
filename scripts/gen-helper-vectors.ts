// Writes fixtures/broker/cip-39-helper-vectors-v1.json: inputs and outputs of the §12.2 canonical
// helpers (every EMPTY constant, ordered roots of 1 to 65,536 leaves, sparse maps with gaps, the
// extreme keys and a path with a sibling at every depth, fast-record digests, lane payloads and
// ordered range roots, whole batches). These vectors are OURS — computed by this implementation
// from the spec's definitions, not published by the CIP-39 authors — and their SHA-256 is pinned in
// src/codec/pinned.ts, so changing them is a deliberate, reviewed event. test/codec/helper-vectors
// recomputes every vector and fails when this output, the file or the pin disagree:
//
//   npm run build && node dist/scripts/gen-helper-vectors.js
import { writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { toHex, u32BE, utf8 } from "../src/bytes.js";
import {
  SPARSE_EMPTY_V1,
  codecs,
  fastBatchCommitment,
  fast_lane_leaf_digest_v1,
  fast_lane_payload_digest_v1,
  fast_lane_sub_root_v1,
  fast_ordered_range_root_v1,
  fast_record_digest_v1,
  merkle_root_v1,
  sparseProof,
  sparse_root_v1,
  toJson,
  type FastBatchRecordV1,
  type SparseEntryV1,
} from "../src/codec/index.js";
import type { CbqsSigningContextV1, RecordHeaderV1 } from "../src/codec/types.js";
import type { LanePayloadV1 } from "../src/codec/wire-types.js";
import { keccak256 } from "../src/crypto/hash.js";
import { checkScriptArgs } from "./script-args.js";

export const HELPER_VECTORS_PATH = "fixtures/broker/cip-39-helper-vectors-v1.json";
export const HELPER_VECTORS_FORMAT = "cbqs-emulator/cip-39-helper-vectors/v1";

/** The generated leaves of the large vectors: leaf[i] = keccak256("cbqs-vectors/leaf" || u32_be(i)). */
export const LEAF_RULE = 'leaf[i] = keccak256("cbqs-vectors/leaf" || u32_be(i))';
export function ruleLeaf(i: number): Uint8Array {
  return keccak256(new Uint8Array([...utf8("cbqs-vectors/leaf"), ...u32BE(i)]));
}

const U64_MAX = (1n << 64n) - 1n;
const fill = (n: number, b: number): Uint8Array => new Uint8Array(n).fill(b);
const hexes = (xs: readonly Uint8Array[]): string[] => xs.map(toHex);
const key = (first: number, rest = 0, last = rest): Uint8Array => {
  const k = fill(32, rest);
  k[0] = first;
  k[31] = last;
  return k;
};

const CONTEXT: CbqsSigningContextV1 = { version: 1, chain_id: 7n, chain_instance_id: fill(32, 0xc1) };
const STREAM = fill(32, 0x51);

function merkleVectors() {
  const small = [1, 2, 3, 4, 5, 7, 8, 9].map((n) => {
    const leaves = Array.from({ length: n }, (_, i) => ruleLeaf(i));
    return { name: `${n} leaf${n === 1 ? "" : "s"}`, leaves: hexes(leaves), root: toHex(merkle_root_v1(leaves)) };
  });
  const large = [65_535, 65_536].map((n) => {
    const leaves = Array.from({ length: n }, (_, i) => ruleLeaf(i));
    return { name: `${n} leaves by the leaf rule`, leaf_rule: LEAF_RULE, count: n, root: toHex(merkle_root_v1(leaves)) };
  });
  return [...small, ...large];
}

/** A map, its root, and the proofs at `proofKeys` (default: every entry's key) and `extraKeys`. */
function sparseVector(name: string, entries: SparseEntryV1[], extraKeys: Uint8Array[], proofKeys = entries.map((e) => e.key)) {
  const proofs = [...proofKeys, ...extraKeys].map((k) => {
    const p = sparseProof(entries, k);
    return { key: toHex(k), leaf: p.leaf === null ? null : toHex(p.leaf), bitmap: toHex(p.bitmap), siblings: hexes(p.siblings) };
  });
  return { name, entries: entries.map((e) => ({ key: toHex(e.key), leaf: toHex(e.leaf) })), root: toHex(sparse_root_v1(entries)), proofs };
}

function sparseVectors() {
  const leaf = (i: number) => ruleLeaf(1_000 + i);
  const minKey = fill(32, 0x00);
  const maxKey = fill(32, 0xff);
  const lastBit = key(0x77, 0x77, 0x76);
  const pathKey = fill(32, 0x5a);
  // A sibling at every depth: for each d, a key sharing pathKey's first d bits and differing at bit d.
  const neighbours = Array.from({ length: 256 }, (_, d) => {
    const n = pathKey.slice();
    n[d >> 3]! ^= 0x80 >> (d & 7);
    return { key: n, leaf: leaf(10 + d) };
  });
  return [
    sparseVector("empty map (root EMPTY[0])", [], [minKey, maxKey]),
    sparseVector("one leaf at the minimum key", [{ key: minKey, leaf: leaf(0) }], [maxKey]),
    sparseVector("one leaf at the maximum key 0xff…ff", [{ key: maxKey, leaf: leaf(1) }], [minKey, key(0xff, 0xff, 0xfe)]),
    sparseVector("two keys split at depth 0", [{ key: minKey, leaf: leaf(2) }, { key: key(0x80, 0), leaf: leaf(3) }], [key(0x40, 0)]),
    sparseVector("two keys split at depth 255", [{ key: key(0x77, 0x77, 0x77), leaf: leaf(4) }, { key: lastBit, leaf: leaf(5) }], [key(0x77, 0x77, 0x75)]),
    sparseVector(
      "sparse gaps: four keys across the key space",
      [
        { key: minKey, leaf: leaf(6) },
        { key: key(0x7f, 0xff), leaf: leaf(7) },
        { key: key(0x80, 0x00), leaf: leaf(8) },
        { key: maxKey, leaf: leaf(9) },
      ],
      [key(0x40, 0), key(0xc0, 0), key(0x7f, 0xff, 0xfe)],
    ),
    sparseVector("a sibling at every depth along one path (256-sibling proof)", [...neighbours, { key: pathKey, leaf: leaf(300) }], [key(0x5a, 0x5a, 0x5b)], [pathKey, neighbours[255]!.key]),
  ];
}

const header = (lane: Uint8Array, i: number): RecordHeaderV1 => ({
  stream_id: STREAM,
  lane_id: lane,
  origin: "Client",
  kind: "Application",
  client_message_id: ruleLeaf(2_000 + i),
  created_at_ms: 1_700_000_000_000n + BigInt(i),
  visible_after_ms: 0n,
  expires_at_ms: 0n,
  encryption_generation: 1n,
  nonce: fill(24, i),
});

function batchVector(name: string, brokerEpoch: bigint, first: bigint, records: FastBatchRecordV1[]) {
  const range = { context: CONTEXT, stream_id: STREAM, provider_epoch: 0n, broker_epoch: brokerEpoch, first_sequence: first };
  const out = fastBatchCommitment(range, records);
  return {
    name,
    context: toJson(codecs.CbqsSigningContextV1, CONTEXT),
    stream_id: toHex(STREAM),
    provider_epoch: "0",
    broker_epoch: brokerEpoch.toString(),
    first_sequence: first.toString(),
    last_sequence: out.last_sequence.toString(),
    records: records.map((r) => ({ header: toJson(codecs.RecordHeaderV1, r.header), payload: toHex(r.payload) })),
    record_digests: hexes(out.record_digests),
    lanes: out.lanes.map((l) => ({
      lane_id: toHex(l.lane_id),
      payload: toJson(codecs.LanePayloadV1, l.payload),
      lane_payload_digest: toHex(fast_lane_payload_digest_v1(l.lane_id, l.payload)),
    })),
    lane_map_root: toHex(out.lane_map_root),
    ordered_range_root: toHex(out.ordered_range_root),
  };
}

function fastVectors() {
  const A = fill(32, 0x0a);
  const B = fill(32, 0x0b);
  const Z = fill(32, 0x00);
  const interleaved = [A, B, A, Z, B, A].map((lane, i) => ({ header: header(lane, i), payload: new Uint8Array([i, i + 1]) }));
  const lanes = [
    batchVector("interleaved lanes (gaps inside a lane), sequences 10..=15", 2n, 10n, interleaved),
    batchVector("one record, broker epoch 0, sequence 0, empty payload", 0n, 0n, [{ header: header(Z, 7), payload: new Uint8Array(0) }]),
    batchVector("ends at the largest u64 sequence", U64_MAX, U64_MAX - 2n, [A, Z, A].map((lane, i) => ({ header: header(lane, 10 + i), payload: new Uint8Array([0xff]) }))),
  ];
  // The protocol maximum: one lane holding all 65,536 records of a batch, by the leaf rule.
  const digests = Array.from({ length: 65_536 }, (_, i) => ruleLeaf(i));
  const payload: LanePayloadV1 = { lane_sub_root: fast_lane_sub_root_v1(digests), lane_record_count: 65_536, lane_first_sequence: 0n, lane_last_sequence: 65_535n };
  const mapRoot = sparse_root_v1([{ key: A, leaf: fast_lane_payload_digest_v1(A, payload) }]);
  const range = { context: CONTEXT, stream_id: STREAM, provider_epoch: 0n, broker_epoch: 1n, first_sequence: 0n, last_sequence: 65_535n };
  return {
    fast_record_digest_v1: interleaved.slice(0, 2).map((r, i) => ({
      context: toJson(codecs.CbqsSigningContextV1, CONTEXT),
      record_id: toJson(codecs.FastRecordIdV1, { provider_epoch: 0n, broker_epoch: 2n, sequence: 10n + BigInt(i) }),
      header: toJson(codecs.RecordHeaderV1, r.header),
      payload: toHex(r.payload),
      record_digest: toHex(fast_record_digest_v1(CONTEXT, { provider_epoch: 0n, broker_epoch: 2n, sequence: 10n + BigInt(i) }, r.header, r.payload)),
    })),
    fast_lane_leaf_digest_v1: [0, 1].map((i) => ({ record_digest: toHex(ruleLeaf(i)), lane_leaf_digest: toHex(fast_lane_leaf_digest_v1(ruleLeaf(i))) })),
    fast_lane_sub_root_v1: [1, 2, 3, 65_536].map((n) => ({
      name: `${n} record digest${n === 1 ? "" : "s"} by the leaf rule`,
      leaf_rule: LEAF_RULE,
      count: n,
      lane_sub_root: toHex(fast_lane_sub_root_v1(digests.slice(0, n))),
    })),
    fast_ordered_range_root_v1: [
      {
        name: "65,536 records in one lane (the protocol maximum)",
        context: toJson(codecs.CbqsSigningContextV1, CONTEXT),
        stream_id: toHex(STREAM),
        provider_epoch: "0",
        broker_epoch: "1",
        first_sequence: "0",
        last_sequence: "65535",
        record_count: 65_536,
        lane_id: toHex(A),
        lane_payload: toJson(codecs.LanePayloadV1, payload),
        lane_payload_digest: toHex(fast_lane_payload_digest_v1(A, payload)),
        lane_map_root: toHex(mapRoot),
        ordered_range_root: toHex(fast_ordered_range_root_v1(range, 65_536, mapRoot)),
      },
    ],
    fast_batches: lanes,
  };
}

/** The vectors document. */
export function helperVectors() {
  return {
    format: HELPER_VECTORS_FORMAT,
    provenance:
      "Computed by cbqs-emulator (this repository) from the CIP-39 §12.2 definitions. These are NOT vectors published by the CIP-39 authors: " +
      "they record what this implementation computes, and their SHA-256 is pinned (src/codec/pinned.ts) so that any change to them is deliberate and reviewed. " +
      "docs/broker.md \"Canonical helpers (§12.2)\" states the definitions and the reading of every point the spec leaves open.",
    conventions: {
      hashing: "keccak256 (Ethereum Keccak-256); every value is 0x-hex; integers in JSON objects are decimal strings; canonical encodings are CIP-39 §14",
      node: 'node(l, r) = keccak256("cbqs/merkle-node/v1" || l || r)',
      empty: 'EMPTY[256] = keccak256("cbqs/sparse-empty/v1"); EMPTY[d] = node(EMPTY[d+1], EMPTY[d+1]); "empty"[d] below is EMPTY[d]',
      merkle_root_v1: "pairs left to right per level; a trailing odd node is promoted unchanged; one leaf is its own root; no root for zero leaves",
      sparse_key_bit: "bit d of a key is key[d / 8] bit 7 - (d % 8) (most significant first); 0 descends left",
      sparse_leaf: "a present key's leaf is stored as given (in a batch: its lane_payload_digest); an absent key's leaf is EMPTY[256]",
      bitmap: "bit d of the 256-bit big-endian bitmap is its 2^d bit: byte 31 - d / 8, mask 1 << (d % 8); set when the sibling at depth d differs from EMPTY[d+1]",
      siblings: "the siblings of set bitmap bits, in increasing depth d",
      leaf_rule: LEAF_RULE,
    },
    empty: hexes(SPARSE_EMPTY_V1),
    merkle_root_v1: merkleVectors(),
    sparse_root_v1: sparseVectors(),
    ...fastVectors(),
  };
}

export function helperVectorsText(): string {
  return JSON.stringify(helperVectors(), null, 2) + "\n";
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  checkScriptArgs(process.argv.slice(2), `usage: gen-helper-vectors (no options): writes ${HELPER_VECTORS_PATH}`, []);
  writeFileSync(HELPER_VECTORS_PATH, helperVectorsText());
  process.stderr.write(`wrote ${HELPER_VECTORS_PATH}\n`);
}
