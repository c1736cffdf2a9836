// Cowboy block roots (CIP-4 §5.2/§5.3) with this project's definitions (docs/spec/state.md):
//   tx_root      = BMT(keccak256(tx_i))                       — §5.2
//   receipt_root = BMT(keccak256(encodeReceipt(receipt_i)))   — §5.3; no receipts → keccak256("empty_receipts")
//   logs_root    = BMT(keccak256(encodeEvent(event_j)))       — every event of the block, in block order
// Receipts and events are written by commonware-codec's rules (§5.3; state/kv/codec.ts).
// All three trees use the commonware BMT (state/roots/bmt.ts) with keccak256 as the node hasher.
// §5.4 `/proof/tx` and `/proof/receipt`: inclusion proofs of one leaf of tx_root / receipt_root,
// checkable with nothing but the proof and the root (docs/spec/state.md §4.1).
import { echo } from "../../src/bounds.js";
import { bytesEqual, fromHex, toHex, utf8 } from "../../src/bytes.js";
import { lengthSize, writeLength } from "../kv/codec.js";
import { EncodingError, encodeEvent, eventSize, guard, writeEvent, type Event } from "../kv/event.js";
import { bmtProve, bmtRebuild, bmtRoot, bmtVerify } from "./bmt.js";
import { KECCAK256, keccak256, type Hasher } from "../../src/crypto/hash.js";

/** Outcome of one transaction. Events of a rejected transaction are empty (its effects are rolled back). */
export interface Receipt {
  status: "ok" | "rejected";
  /** u16 error code, 0 when status is "ok". */
  errorCode: number;
  cycles: bigint; // u64
  cells: bigint; // u64
  events: readonly Event[];
}

const STATUS_BYTE = { rejected: 0, ok: 1 } as const;

/**
 * commonware-codec `Encode` of a receipt (CIP-4 §5.3; D-0047 "Receipt and event
 * canonical encodings"): status u8 (1 ok, 0 rejected) ‖ error_code u16 BE ‖ cycles u64 BE ‖
 * cells u64 BE ‖ logs_root of its own events `[u8; 32]` ‖ events as `Vec<Event>` (varint count ‖
 * each event's encoding).
 */
export function encodeReceipt(receipt: Receipt): Uint8Array {
  const out = new Uint8Array(receiptSize(receipt));
  writeReceipt(out, new DataView(out.buffer), 0, receipt, logsRoot(receipt.events));
  return out;
}

const U64_LIMIT = 1n << 64n;

/** Length of encodeReceipt(receipt), after every check: its events' first, then its own fields. */
function receiptSize(receipt: Receipt): number {
  let size = RECEIPT_HEAD;
  for (const e of receipt.events) size += eventSize(e);
  if (receipt.status === "ok" && receipt.errorCode !== 0) throw new EncodingError("ok receipt with an error code");
  if (receipt.status === "rejected" && receipt.errorCode === 0) throw new EncodingError("rejected receipt without an error code");
  if (!Number.isInteger(receipt.errorCode) || receipt.errorCode < 0 || receipt.errorCode > 0xffff) {
    throw new RangeError(`value ${receipt.errorCode} does not fit in 2 bytes`);
  }
  for (const v of [receipt.cycles, receipt.cells]) if (v < 0n || v >= U64_LIMIT) throw new RangeError(`value ${v} does not fit in 8 bytes`);
  return size + guard(() => lengthSize(receipt.events.length));
}

/** Writes encodeReceipt(receipt) at `at` once receiptSize has checked it, with `ownLogsRoot` as its logs root; returns the offset after it. */
function writeReceipt(out: Uint8Array, view: DataView, at: number, receipt: Receipt, ownLogsRoot: Uint8Array): number {
  out[at] = STATUS_BYTE[receipt.status];
  view.setUint16(at + 1, receipt.errorCode);
  view.setBigUint64(at + 3, receipt.cycles);
  view.setBigUint64(at + 11, receipt.cells);
  out.set(ownLogsRoot, at + LOGS_ROOT_AT);
  at = writeLength(out, at + RECEIPT_HEAD, receipt.events.length);
  for (const e of receipt.events) at = writeEvent(out, at, e);
  return at;
}

/** status ‖ error_code ‖ cycles ‖ cells ‖ logs_root. */
const RECEIPT_HEAD = 1 + 2 + 8 + 8 + 32;
/** Where a receipt's encoding holds its own logs root. */
const LOGS_ROOT_AT = 1 + 2 + 8 + 8;

const txLeaves = (txs: readonly Uint8Array[]) => txs.map(keccak256);
/** §5.3: a receipt's leaf in receipt_root. */
export const receiptLeaf = (r: Receipt): Uint8Array => keccak256(encodeReceipt(r));
const receiptLeaves = (receipts: readonly Receipt[]) => receipts.map(receiptLeaf);
const EMPTY_RECEIPTS = "empty_receipts";

/** §5.2: tx_root over the exact transaction bytes of the block. */
export function txRoot(txs: readonly Uint8Array[]): Uint8Array {
  return bmtRoot(KECCAK256, txLeaves(txs));
}

/** §5.3: receipt_root; a block without receipts has keccak256("empty_receipts"). */
export function receiptRoot(receipts: readonly Receipt[]): Uint8Array {
  if (receipts.length === 0) return keccak256(utf8(EMPTY_RECEIPTS));
  return bmtRoot(KECCAK256, receiptLeaves(receipts));
}

/** logs_root over events in block order (transaction order, then emission order). */
export function logsRoot(events: readonly Event[]): Uint8Array {
  return bmtRoot(KECCAK256, events.map((e) => keccak256(encodeEvent(e))));
}

export interface BlockRoots {
  tx_root: Uint8Array;
  receipt_root: Uint8Array;
  logs_root: Uint8Array;
}

/**
 * The three roots of a block at once, each transaction, event and receipt hashed exactly once:
 * an event's leaf serves both its receipt's own logs root and the block's logs_root, and the
 * transaction leaves are the caller's tx hashes (keccak256 of the transaction bytes). Equal to
 * txRoot / receiptRoot / logsRoot computed separately; `hasher` is keccak256 except in the
 * benchmark, which counts the hashing. Two halves: the encodings (rootsJob), then the hashing
 * (rootsOfJob) — a pipelined replay runs the second on another thread.
 */
export function blockRoots(txHashes: readonly Uint8Array[], receipts: readonly Receipt[], hasher: Hasher = KECCAK256): BlockRoots {
  return rootsOfJob(rootsJob(txHashes, receipts), 0, hasher);
}

const ZERO_ROOT = new Uint8Array(32);

/**
 * Everything blockRoots hashes, in one buffer: u32 tx count, the tx hashes (32 bytes each); u32
 * receipt count, then per receipt: u32 event count, each event encoding's length (u32), u32
 * encoding length, and the receipt's encoding with its own logs root left zero (its events are
 * the encoding's last bytes). Integers big-endian.
 */
export function rootsJob(txHashes: readonly Uint8Array[], receipts: readonly Receipt[]): Uint8Array {
  let size = 4 + 32 * txHashes.length + 4;
  for (const receipt of receipts) size += 4 + 4 * receipt.events.length + 4 + receiptSize(receipt);
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  view.setUint32(0, txHashes.length);
  let at = 4;
  for (const h of txHashes) {
    if (h.length !== 32) throw new EncodingError(`tx hash of ${h.length} bytes`);
    out.set(h, at);
    at += 32;
  }
  view.setUint32(at, receipts.length);
  at += 4;
  for (const receipt of receipts) {
    view.setUint32(at, receipt.events.length);
    at += 4;
    for (const e of receipt.events) {
      view.setUint32(at, eventSize(e));
      at += 4;
    }
    const end = writeReceipt(out, view, at + 4, receipt, ZERO_ROOT);
    view.setUint32(at, end - (at + 4));
    at = end;
  }
  return out;
}

/** The roots of a rootsJob at `offset` in `job` (whose receipt encodings get their logs roots written in). */
export function rootsOfJob(job: Uint8Array, offset: number, hasher: Hasher = KECCAK256): BlockRoots {
  const view = new DataView(job.buffer, job.byteOffset, job.byteLength);
  const txCount = view.getUint32(offset);
  let at = offset + 4;
  const txHashes = new Array<Uint8Array>(txCount);
  for (let i = 0; i < txCount; i++, at += 32) txHashes[i] = job.subarray(at, at + 32);
  const receiptCount = view.getUint32(at);
  at += 4;
  const blockEvents: Uint8Array[] = [];
  const leaves = new Array<Uint8Array>(receiptCount);
  for (let r = 0; r < receiptCount; r++) {
    const eventCount = view.getUint32(at);
    const lengths = at + 4;
    at = lengths + 4 * eventCount;
    const length = view.getUint32(at);
    const encoding = job.subarray(at + 4, at + 4 + length);
    at += 4 + length;
    let eventsLength = 0;
    for (let e = 0; e < eventCount; e++) eventsLength += view.getUint32(lengths + 4 * e);
    let eventAt = length - eventsLength;
    const own = new Array<Uint8Array>(eventCount);
    for (let e = 0; e < eventCount; e++) {
      const n = view.getUint32(lengths + 4 * e);
      own[e] = hasher.hash(encoding.subarray(eventAt, eventAt + n));
      blockEvents.push(own[e]!);
      eventAt += n;
    }
    encoding.set(bmtRoot(hasher, own), LOGS_ROOT_AT);
    leaves[r] = hasher.hash(encoding);
  }
  return {
    tx_root: bmtRoot(hasher, txHashes),
    receipt_root: receiptCount === 0 ? hasher.hash(utf8(EMPTY_RECEIPTS)) : bmtRoot(hasher, leaves),
    logs_root: bmtRoot(hasher, blockEvents),
  };
}

/**
 * §5.4 inclusion proof of leaf `leafIndex` of a keccak BMT (tx_root or receipt_root): the leaf
 * hash (keccak256 of the transaction bytes or of the receipt encoding), commonware's BMT proof
 * (leaf count, siblings from the leaf level up) and the root it proves against.
 */
export interface InclusionProof {
  leafIndex: number;
  leafCount: number;
  leafHash: Uint8Array;
  siblings: Uint8Array[];
  root: Uint8Array;
}

/** The JSON form (docs/spec/state.md §4.1): hex `0x…` digests, u32 integers as JSON numbers. */
export interface InclusionProofJson {
  leaf_index: number;
  leaf_count: number;
  leaf_hash: string;
  siblings: string[];
  root: string;
}

function prove(leaves: readonly Uint8Array[], index: number): InclusionProof {
  const { leafCount, siblings } = bmtProve(KECCAK256, leaves, index);
  return { leafIndex: index, leafCount, leafHash: leaves[index]!, siblings, root: bmtRoot(KECCAK256, leaves) };
}

/** §5.4 `/proof/tx`: proof that `txs[index]` is in the block's tx_root. */
export function proveTx(txs: readonly Uint8Array[], index: number): InclusionProof {
  return prove(txLeaves(txs), index);
}

/** §5.4 `/proof/receipt`: proof that `receipts[index]` is in the block's receipt_root. */
export function proveReceipt(receipts: readonly Receipt[], index: number): InclusionProof {
  return prove(receiptLeaves(receipts), index);
}

/** True when `proof` shows its leaf hash at its index under `root` (the trusted tx/receipt root). */
export function verifyInclusionProof(proof: InclusionProof, root: Uint8Array): boolean {
  const { leafIndex, leafCount, leafHash, siblings } = proof;
  return bytesEqual(proof.root, root) && bmtVerify(KECCAK256, leafHash, leafIndex, { leafCount, siblings }, root);
}

/** The root the proof's leaf and siblings rebuild, or null when they are not a path of its tree. */
export function rebuiltInclusionRoot(proof: InclusionProof): Uint8Array | null {
  return bmtRebuild(KECCAK256, proof.leafHash, proof.leafIndex, { leafCount: proof.leafCount, siblings: proof.siblings });
}

export function inclusionProofToJson(proof: InclusionProof): InclusionProofJson {
  return {
    leaf_index: proof.leafIndex,
    leaf_count: proof.leafCount,
    leaf_hash: toHex(proof.leafHash),
    siblings: proof.siblings.map(toHex),
    root: toHex(proof.root),
  };
}

const U32_MAX = 0xffff_ffff;
const PROOF_FIELDS = ["leaf_index", "leaf_count", "leaf_hash", "siblings", "root"] as const;
/** A u32 leaf count gives a tree at most 32 levels deep, so at most 32 siblings. */
const MAX_SIBLINGS = 32;

function jsonU32(json: Record<string, unknown>, field: string): number {
  const n = json[field];
  if (typeof n !== "number" || !Number.isInteger(n) || n < 0 || n > U32_MAX) {
    throw new EncodingError(`inclusion proof: "${field}" must be an integer in 0..2^32-1`);
  }
  return n;
}

/**
 * Reads the JSON form. Throws EncodingError when the input is not an inclusion proof at all
 * (missing or unknown fields, wrong types, digests not 32 bytes, more than 32 siblings); a
 * well-formed proof that does not verify is for `verifyInclusionProof` to reject.
 */
export function parseInclusionProof(json: unknown): InclusionProof {
  if (typeof json !== "object" || json === null || Array.isArray(json)) throw new EncodingError("inclusion proof must be a JSON object");
  const obj = json as Record<string, unknown>;
  for (const field of Object.keys(obj)) {
    if (!(PROOF_FIELDS as readonly string[]).includes(field)) throw new EncodingError(`inclusion proof: unknown field ${JSON.stringify(echo(field))}`);
  }
  const digest = (value: unknown, what: string) => {
    try {
      return fromHex(value as string, 32, what);
    } catch (err) {
      throw new EncodingError(`inclusion proof: ${(err as Error).message}`);
    }
  };
  const siblings = obj.siblings;
  // Bound before allocation.
  if (!Array.isArray(siblings) || siblings.length > MAX_SIBLINGS) {
    throw new EncodingError(`inclusion proof: "siblings" must be an array of at most ${MAX_SIBLINGS} digests`);
  }
  return {
    leafIndex: jsonU32(obj, "leaf_index"),
    leafCount: jsonU32(obj, "leaf_count"),
    leafHash: digest(obj.leaf_hash, '"leaf_hash"'),
    siblings: siblings.map((s, i) => digest(s, `siblings[${i}]`)),
    root: digest(obj.root, '"root"'),
  };
}
