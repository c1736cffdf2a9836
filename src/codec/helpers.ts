// The §12.2 canonical helpers: the ordered Merkle root, the depth-256 sparse lane map and its
// compact proofs, and the fast-batch commitments built from them (record digest, lane leaf,
// lane sub-root, lane payload digest, ordered range root). Every preimage is spelled out here
// once; docs/guides/verify-a-broker.md "Canonical helpers (§12.2)" restates them, and
// fixtures/broker/cip-39-helper-vectors-v1.json pins their outputs.
import { bytesEqual, compareBytes, toHex, utf8 } from "../bytes.js";
import { hashParts, KECCAK256, keccak256 } from "../crypto/hash.js";
import { Writer, providerEpochV1, u32, u64 } from "./core.js";
import { EncodeError } from "./errors.js";
import { FastRecordIdV1, RecordHeaderV1 } from "./broker.js";
import { Bytes32, CbqsSigningContextV1 } from "./schema.js";
import type * as T from "./types.js";
import type { LanePayloadV1 } from "./wire-types.js";

/** Depth of the lane map: one level per bit of a 32-byte `lane_id`. */
export const SPARSE_DEPTH_V1 = 256;
/** §12.2 protocol maximum of records in one fast batch (and so in one lane of it). */
export const MAX_FAST_BATCH_RECORDS = 65_536;

export const MERKLE_NODE_DOMAIN_V1 = "cbqs/merkle-node/v1";
export const SPARSE_EMPTY_DOMAIN_V1 = "cbqs/sparse-empty/v1";
export const FAST_RECORD_DOMAIN_V1 = "cbqs/fast-record/v1";
export const FAST_LANE_LEAF_DOMAIN_V1 = "cbqs/fast-lane-leaf/v1";
export const FAST_LANE_PAYLOAD_DOMAIN_V1 = "cbqs/fast-lane-payload/v1";
export const FAST_ORDERED_RANGE_DOMAIN_V1 = "cbqs/fast-ordered-range/v1";

const NODE_DOMAIN = utf8(MERKLE_NODE_DOMAIN_V1);

/** keccak256("cbqs/merkle-node/v1" || left || right): the one node hash of both tree shapes. */
export function merkle_node_v1(left: Uint8Array, right: Uint8Array): Uint8Array {
  if (left.length !== 32 || right.length !== 32) throw new EncodeError("", "merkle nodes are 32 bytes");
  // In pieces, not concatenated: the node hash is the hot loop of a 65,536-leaf root.
  return hashParts(KECCAK256, NODE_DOMAIN, left, right);
}

/**
 * EMPTY[d] for d = 0..256: EMPTY[256] = keccak256("cbqs/sparse-empty/v1") is an absent leaf,
 * EMPTY[d] = node(EMPTY[d+1], EMPTY[d+1]) an empty subtree whose root sits at depth d, so
 * EMPTY[0] is the root of an empty lane map.
 */
export const SPARSE_EMPTY_V1: readonly Uint8Array[] = (() => {
  const out: Uint8Array[] = new Array<Uint8Array>(SPARSE_DEPTH_V1 + 1);
  out[SPARSE_DEPTH_V1] = keccak256(utf8(SPARSE_EMPTY_DOMAIN_V1));
  for (let d = SPARSE_DEPTH_V1 - 1; d >= 0; d--) out[d] = merkle_node_v1(out[d + 1]!, out[d + 1]!);
  return Object.freeze(out.map((b) => b.slice()));
})();

const empty = (d: number): Uint8Array => SPARSE_EMPTY_V1[d]!.slice();

/**
 * §12.2 ordered root of a non-empty leaf list: adjacent pairs hashed left to right at each level,
 * a trailing odd node promoted unchanged (never duplicated), one leaf roots to itself. The root
 * does not commit the list's length; every consumer commits the count beside it.
 */
export function merkle_root_v1(leaves: readonly Uint8Array[]): Uint8Array {
  if (leaves.length === 0) throw new EncodeError("leaves", "merkle_root_v1 is defined for a non-empty leaf list only (§12.2)");
  leaves.forEach((l, i) => {
    if (!(l instanceof Uint8Array) || l.length !== 32) throw new EncodeError(`leaves[${i}]`, "a leaf is 32 bytes");
  });
  let level: Uint8Array[] = leaves.map((l) => l.slice());
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i + 1 < level.length; i += 2) next.push(merkle_node_v1(level[i]!, level[i + 1]!));
    if (level.length % 2 === 1) next.push(level[level.length - 1]!);
    level = next;
  }
  return level[0]!;
}

/** Bit `d` of a key: `key[d / 8]` bit `7 - d % 8`, the most significant bit first (§12.2 descent). */
export function keyBit(key: Uint8Array, d: number): 0 | 1 {
  return ((key[d >> 3]! >> (7 - (d & 7))) & 1) as 0 | 1;
}

/**
 * Bit `d` of a proof bitmap. The bitmap is "a 256-bit big-endian bitmap whose bit d is set": bit d
 * is the 2^d bit of that integer, so it lives in byte `31 - d / 8` at mask `1 << d % 8`
 * (D-0153 "The sparse-proof bitmap numbers its bits from the least significant").
 */
export function bitmapBit(bitmap: Uint8Array, d: number): boolean {
  return ((bitmap[31 - (d >> 3)]! >> (d & 7)) & 1) === 1;
}

function setBitmapBit(bitmap: Uint8Array, d: number): void {
  bitmap[31 - (d >> 3)]! |= 1 << (d & 7);
}

/** One entry of the lane map: `lane_id -> lane_payload_digest`. */
export interface SparseEntryV1 {
  key: Uint8Array;
  leaf: Uint8Array;
}

/** The entries sorted by key (which is path order: a zero bit goes left), validated. */
function sortedEntries(entries: readonly SparseEntryV1[]): SparseEntryV1[] {
  entries.forEach((e, i) => {
    if (!(e.key instanceof Uint8Array) || e.key.length !== 32) throw new EncodeError(`entries[${i}].key`, "a key is 32 bytes");
    if (!(e.leaf instanceof Uint8Array) || e.leaf.length !== 32) throw new EncodeError(`entries[${i}].leaf`, "a leaf is 32 bytes");
    // A present leaf equal to the absent-leaf constant would make presence and absence one value.
    if (bytesEqual(e.leaf, SPARSE_EMPTY_V1[SPARSE_DEPTH_V1]!)) {
      throw new EncodeError(`entries[${i}].leaf`, "a present leaf must not equal EMPTY[256] (§12.2)");
    }
  });
  const sorted = [...entries].sort((a, b) => compareBytes(a.key, b.key));
  for (let i = 1; i < sorted.length; i++) {
    if (bytesEqual(sorted[i - 1]!.key, sorted[i]!.key)) throw new EncodeError("entries", "each key appears at most once (§12.2)");
  }
  return sorted;
}

/** First index in [lo, hi) whose key has bit d set (keys sorted, sharing bits 0..d-1). */
function splitAt(sorted: readonly SparseEntryV1[], lo: number, hi: number, d: number): number {
  let a = lo;
  let b = hi;
  while (a < b) {
    const m = (a + b) >> 1;
    if (keyBit(sorted[m]!.key, d) === 1) b = m;
    else a = m + 1;
  }
  return a;
}

/** Root of the subtree at depth d holding sorted[lo, hi), all sharing their first d bits. */
function subtreeRoot(sorted: readonly SparseEntryV1[], lo: number, hi: number, d: number): Uint8Array {
  if (lo === hi) return empty(d);
  if (d === SPARSE_DEPTH_V1) return sorted[lo]!.leaf.slice();
  const mid = splitAt(sorted, lo, hi, d);
  return merkle_node_v1(subtreeRoot(sorted, lo, mid, d + 1), subtreeRoot(sorted, mid, hi, d + 1));
}

/**
 * §12.2 sparse_root_v1: the root of the depth-256 map holding each entry's leaf at the path of its
 * key's bits, every other subtree its EMPTY constant. No entries: EMPTY[0]. Duplicate keys and a
 * leaf equal to EMPTY[256] are refused.
 */
export function sparse_root_v1(entries: readonly SparseEntryV1[]): Uint8Array {
  const sorted = sortedEntries(entries);
  return subtreeRoot(sorted, 0, sorted.length, 0);
}

/** A compact sparse proof: `bitmap` marks the depths whose sibling is not its EMPTY constant. */
export interface SparseProofV1 {
  bitmap: Uint8Array;
  siblings: Uint8Array[];
}

/**
 * The proof at `key` in the map of `entries` (presence when `key` is an entry's, absence
 * otherwise), with its leaf (null when absent). Ours: the spec defines the proof's shape and
 * its verification, and this is the one proof of that shape for a map.
 */
export function sparseProof(entries: readonly SparseEntryV1[], key: Uint8Array): SparseProofV1 & { leaf: Uint8Array | null } {
  if (!(key instanceof Uint8Array) || key.length !== 32) throw new EncodeError("key", "a key is 32 bytes");
  const sorted = sortedEntries(entries);
  const bitmap = new Uint8Array(32);
  const siblings: Uint8Array[] = [];
  let lo = 0;
  let hi = sorted.length;
  for (let d = 0; d < SPARSE_DEPTH_V1 && lo < hi; d++) {
    const mid = splitAt(sorted, lo, hi, d);
    const [onPath, off] = keyBit(key, d) === 0 ? [[lo, mid], [mid, hi]] : [[mid, hi], [lo, mid]];
    if (off[0]! < off[1]!) {
      setBitmapBit(bitmap, d);
      siblings.push(subtreeRoot(sorted, off[0]!, off[1]!, d + 1));
    }
    [lo, hi] = onPath as [number, number];
  }
  const found = lo < hi ? sorted[lo]!.leaf.slice() : null;
  return { bitmap, siblings, leaf: found };
}

/** Number of set bits of a bitmap: the sibling count a proof must carry. */
export function bitmapPopcount(bitmap: Uint8Array): number {
  let n = 0;
  for (const b of bitmap) for (let v = b; v !== 0; v &= v - 1) n++;
  return n;
}

/**
 * Why a proof has no canonical form, or null: the sibling count differs from the bitmap's set
 * bits, or a supplied sibling equals the EMPTY constant of its depth (§12.2, §13.2).
 */
export function sparseProofProblem(proof: SparseProofV1): { field: "bitmap" | "siblings"; index?: number; reason: string } | null {
  if (!(proof.bitmap instanceof Uint8Array) || proof.bitmap.length !== 32) return { field: "bitmap", reason: "bitmap is 32 bytes" };
  if (proof.siblings.length !== bitmapPopcount(proof.bitmap)) {
    return { field: "siblings", reason: `${proof.siblings.length} siblings for ${bitmapPopcount(proof.bitmap)} set bitmap bits (§13.2)` };
  }
  let i = 0;
  for (let d = 0; d < SPARSE_DEPTH_V1; d++) {
    if (!bitmapBit(proof.bitmap, d)) continue;
    if (bytesEqual(proof.siblings[i]!, SPARSE_EMPTY_V1[d + 1]!)) {
      return { field: "siblings", index: i, reason: `sibling at depth ${d} equals EMPTY[${d + 1}] (§12.2)` };
    }
    i++;
  }
  return null;
}

/**
 * §12.2 sparse_proof_root_v1: the root a proof folds to at `key`, from `leaf` (a presence
 * proof's payload digest) or EMPTY[256] when `leaf` is null (absence). Folding is driven by the
 * queried key alone, so a proof accepted at `key` states something about `key` only. A proof
 * without a canonical form is refused, never folded.
 */
export function sparse_proof_root_v1(key: Uint8Array, leaf: Uint8Array | null, proof: SparseProofV1): Uint8Array {
  if (!(key instanceof Uint8Array) || key.length !== 32) throw new EncodeError("key", "a key is 32 bytes");
  const bad = sparseProofProblem(proof);
  if (bad) throw new EncodeError(bad.index === undefined ? bad.field : `${bad.field}[${bad.index}]`, bad.reason);
  if (leaf !== null && bytesEqual(leaf, SPARSE_EMPTY_V1[SPARSE_DEPTH_V1]!)) {
    throw new EncodeError("leaf", "a present leaf must not equal EMPTY[256] (§12.2)");
  }
  let node = leaf === null ? empty(SPARSE_DEPTH_V1) : leaf.slice();
  let next = proof.siblings.length - 1;
  for (let d = SPARSE_DEPTH_V1 - 1; d >= 0; d--) {
    const sibling = bitmapBit(proof.bitmap, d) ? proof.siblings[next--]! : SPARSE_EMPTY_V1[d + 1]!;
    node = keyBit(key, d) === 0 ? merkle_node_v1(node, sibling) : merkle_node_v1(sibling, node);
  }
  return node;
}

// ---------------------------------------------------------------- fast-batch commitments

function digestOf(domain: string, write: (w: Writer) => void): Uint8Array {
  const w = new Writer();
  w.bytes(utf8(domain));
  write(w);
  return keccak256(w.finish());
}

/**
 * §12.2 fast_record_digest_v1 = keccak256("cbqs/fast-record/v1" || canonical(context) ||
 * canonical(FastRecordIdV1) || canonical(RecordHeaderV1) || keccak256(payload)).
 */
export function fast_record_digest_v1(
  context: T.CbqsSigningContextV1,
  recordId: T.FastRecordIdV1,
  header: T.RecordHeaderV1,
  payload: Uint8Array,
): Uint8Array {
  if (!(payload instanceof Uint8Array)) throw new EncodeError("payload", "payload must be bytes");
  return digestOf(FAST_RECORD_DOMAIN_V1, (w) => {
    CbqsSigningContextV1.write(w, context, "context");
    FastRecordIdV1.write(w, recordId, "record_id");
    RecordHeaderV1.write(w, header, "header");
    w.bytes(keccak256(payload));
  });
}

/** §12.2 lane_leaf_digest = keccak256("cbqs/fast-lane-leaf/v1" || record_digest). */
export function fast_lane_leaf_digest_v1(recordDigest: Uint8Array): Uint8Array {
  return digestOf(FAST_LANE_LEAF_DOMAIN_V1, (w) => Bytes32.write(w, recordDigest, "record_digest"));
}

/** §12.2 lane_sub_root = merkle_root_v1(lane_leaf_digest of each of the lane's records, ascending sequence). */
export function fast_lane_sub_root_v1(recordDigests: readonly Uint8Array[]): Uint8Array {
  if (recordDigests.length === 0) throw new EncodeError("record_digests", "a lane in a batch has at least one record (§12.2)");
  return merkle_root_v1(recordDigests.map(fast_lane_leaf_digest_v1));
}

/**
 * §12.2 lane_payload_digest = keccak256("cbqs/fast-lane-payload/v1" || lane_id || lane_sub_root ||
 * lane_record_count_u32_be || lane_first_sequence_u64_be || lane_last_sequence_u64_be). `laneId`
 * is the key being proven, never one read from the payload material.
 */
export function fast_lane_payload_digest_v1(laneId: Uint8Array, payload: LanePayloadV1): Uint8Array {
  return digestOf(FAST_LANE_PAYLOAD_DOMAIN_V1, (w) => {
    Bytes32.write(w, laneId, "lane_id");
    Bytes32.write(w, payload.lane_sub_root, "lane_sub_root");
    u32.write(w, payload.lane_record_count, "lane_record_count");
    u64.write(w, payload.lane_first_sequence, "lane_first_sequence");
    u64.write(w, payload.lane_last_sequence, "lane_last_sequence");
  });
}

/** The range fields of a checkpoint receipt that the ordered range root commits. */
export type FastRangeV1 = Pick<
  T.CheckpointReceiptV1,
  "context" | "stream_id" | "provider_epoch" | "broker_epoch" | "first_sequence" | "last_sequence"
>;

/**
 * Why `record_count` cannot be the count of `first..=last`, or null: it is 1..=65,536 and equals
 * last - first + 1, computed without overflow (§12.2).
 */
export function recordCountProblem(first: bigint, last: bigint, recordCount: number): string | null {
  if (!Number.isInteger(recordCount) || recordCount < 1 || recordCount > MAX_FAST_BATCH_RECORDS) {
    return `record_count ${recordCount} is outside 1..=${MAX_FAST_BATCH_RECORDS} (§12.2)`;
  }
  if (last < first || last - first + 1n !== BigInt(recordCount)) {
    return `record_count ${recordCount} is not last_sequence - first_sequence + 1 (§12.2)`;
  }
  return null;
}

/**
 * §12.2 fast_ordered_range_root_v1 = keccak256("cbqs/fast-ordered-range/v1" || canonical(context)
 * || stream_id || provider_epoch_u64_be || broker_epoch_u64_be || first_sequence_u64_be ||
 * last_sequence_u64_be || record_count_u32_be || lane_map_root).
 */
export function fast_ordered_range_root_v1(range: FastRangeV1, recordCount: number, laneMapRoot: Uint8Array): Uint8Array {
  const bad = recordCountProblem(range.first_sequence, range.last_sequence, recordCount);
  if (bad) throw new EncodeError("record_count", bad);
  return digestOf(FAST_ORDERED_RANGE_DOMAIN_V1, (w) => {
    CbqsSigningContextV1.write(w, range.context, "context");
    Bytes32.write(w, range.stream_id, "stream_id");
    providerEpochV1.write(w, range.provider_epoch, "provider_epoch");
    u64.write(w, range.broker_epoch, "broker_epoch");
    u64.write(w, range.first_sequence, "first_sequence");
    u64.write(w, range.last_sequence, "last_sequence");
    u32.write(w, recordCount, "record_count");
    Bytes32.write(w, laneMapRoot, "lane_map_root");
  });
}

/** One record of a durable fast batch, in global sequence order. */
export interface FastBatchRecordV1 {
  header: T.RecordHeaderV1;
  payload: Uint8Array;
}

/** The full-stream recomputation of one batch (`fastBatchCommitment`). */
export interface FastBatchCommitmentV1 {
  last_sequence: bigint;
  record_digests: Uint8Array[];
  /** Each lane of the batch with its payload, ascending by lane_id. */
  lanes: { lane_id: Uint8Array; payload: LanePayloadV1 }[];
  lane_map_root: Uint8Array;
  ordered_range_root: Uint8Array;
}

/**
 * Ours: everything a `FullStream` verifier recomputes for one complete batch whose first record
 * sits at `range.first_sequence` — the records partitioned by their own header's `lane_id`, each
 * lane's payload, the lane map and the ordered range root. The sum and union rules of §12.2 hold by
 * construction: every record lands in exactly one lane, and the range is the records' own.
 */
export function fastBatchCommitment(
  range: Omit<FastRangeV1, "last_sequence">,
  records: readonly FastBatchRecordV1[],
): FastBatchCommitmentV1 {
  if (records.length === 0 || records.length > MAX_FAST_BATCH_RECORDS) {
    throw new EncodeError("records", `a batch holds 1..=${MAX_FAST_BATCH_RECORDS} records (§12.2)`);
  }
  const last = range.first_sequence + BigInt(records.length - 1);
  if (last > (1n << 64n) - 1n) throw new EncodeError("records", "the batch runs past the largest u64 sequence");
  const byLane = new Map<string, { lane_id: Uint8Array; digests: Uint8Array[]; first: bigint; last: bigint }>();
  const recordDigests = records.map((rec, i) => {
    if (!bytesEqual(rec.header.stream_id, range.stream_id)) {
      throw new EncodeError(`records[${i}].header.stream_id`, "a batch's records belong to its stream");
    }
    const sequence = range.first_sequence + BigInt(i);
    const id: T.FastRecordIdV1 = { provider_epoch: range.provider_epoch, broker_epoch: range.broker_epoch, sequence };
    const digest = fast_record_digest_v1(range.context, id, rec.header, rec.payload);
    const key = toHex(rec.header.lane_id);
    const lane = byLane.get(key) ?? { lane_id: rec.header.lane_id.slice(), digests: [], first: sequence, last: sequence };
    lane.digests.push(digest);
    lane.last = sequence;
    byLane.set(key, lane);
    return digest;
  });
  const lanes = [...byLane.values()]
    .sort((a, b) => compareBytes(a.lane_id, b.lane_id))
    .map((l) => ({
      lane_id: l.lane_id,
      payload: {
        lane_sub_root: fast_lane_sub_root_v1(l.digests),
        lane_record_count: l.digests.length,
        lane_first_sequence: l.first,
        lane_last_sequence: l.last,
      },
    }));
  const laneMapRoot = sparse_root_v1(lanes.map((l) => ({ key: l.lane_id, leaf: fast_lane_payload_digest_v1(l.lane_id, l.payload) })));
  return {
    last_sequence: last,
    record_digests: recordDigests,
    lanes,
    lane_map_root: laneMapRoot,
    ordered_range_root: fast_ordered_range_root_v1({ ...range, last_sequence: last }, records.length, laneMapRoot),
  };
}
