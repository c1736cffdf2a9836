// Cowboy block roots (CIP-4 §5.2/§5.3) with this project's definitions (docs/state.md):
//   tx_root      = BMT(keccak256(tx_i))                       — §5.2
//   receipt_root = BMT(keccak256(encodeReceipt(receipt_i)))   — §5.3; no receipts → keccak256("empty_receipts")
//   logs_root    = BMT(keccak256(encodeEvent(event_j)))       — every event of the block, in block order
// All three trees use the commonware BMT (state/bmt.ts) with keccak256 as the node hasher.
import { concatBytes, u32BE, u64BE, uintBE, utf8 } from "../src/bytes.js";
import { bmtRoot } from "./bmt.js";
import { KECCAK256, keccak256 } from "../src/crypto/hash.js";

export class EncodingError extends Error {
  override name = "EncodingError";
}

/** A chain event (CIP-39 §19): emitting actor, topic name, payload bytes. */
export interface Event {
  emitter: Uint8Array; // 20 bytes
  topic: string;
  payload: Uint8Array;
}

const EMITTER_LENGTH = 20;
const U32_MAX = 0xffff_ffff;

function lengthPrefixed(what: string, bytes: Uint8Array): Uint8Array {
  if (bytes.length > U32_MAX) throw new EncodingError(`${what} longer than u32::MAX bytes`);
  return concatBytes(u32BE(bytes.length), bytes);
}

/** emitter(20) ‖ u32 BE topic length ‖ topic UTF-8 ‖ u32 BE payload length ‖ payload. */
export function encodeEvent(event: Event): Uint8Array {
  if (event.emitter.length !== EMITTER_LENGTH) {
    throw new EncodingError(`event emitter must be ${EMITTER_LENGTH} bytes, got ${event.emitter.length}`);
  }
  return concatBytes(event.emitter, lengthPrefixed("event topic", utf8(event.topic)), lengthPrefixed("event payload", event.payload));
}

/** The smallest encoded event: emitter, empty topic, empty payload. */
export const MIN_EVENT_LENGTH = EMITTER_LENGTH + 4 + 4;

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

function readU32BE(bytes: Uint8Array, offset: number): number {
  if (offset + 4 > bytes.length) throw new EncodingError("truncated length prefix");
  return ((bytes[offset]! << 24) | (bytes[offset + 1]! << 16) | (bytes[offset + 2]! << 8) | bytes[offset + 3]!) >>> 0;
}

function readLengthPrefixed(what: string, bytes: Uint8Array, offset: number): [Uint8Array, number] {
  const length = readU32BE(bytes, offset);
  const start = offset + 4;
  // Bound before allocation: the declared length must fit in what is left.
  if (length > bytes.length - start) throw new EncodingError(`${what} length ${length} exceeds remaining input`);
  return [bytes.slice(start, start + length), start + length];
}

/** Decodes one event starting at `offset`; returns it and the offset after it. */
export function decodeEventAt(bytes: Uint8Array, offset: number): [Event, number] {
  if (offset + EMITTER_LENGTH > bytes.length) throw new EncodingError("truncated event emitter");
  const emitter = bytes.slice(offset, offset + EMITTER_LENGTH);
  const [topicBytes, afterTopic] = readLengthPrefixed("event topic", bytes, offset + EMITTER_LENGTH);
  let topic: string;
  try {
    topic = STRICT_UTF8.decode(topicBytes);
  } catch {
    throw new EncodingError("event topic is not valid UTF-8");
  }
  const [payload, next] = readLengthPrefixed("event payload", bytes, afterTopic);
  return [{ emitter, topic, payload }, next];
}

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
 * status u8 (1 ok, 0 rejected) ‖ error_code u16 BE ‖ cycles u64 BE ‖ cells u64 BE ‖
 * logs_root(events)(32) ‖ u32 BE event count ‖ events (encodeEvent each).
 */
export function encodeReceipt(receipt: Receipt): Uint8Array {
  if (receipt.status === "ok" && receipt.errorCode !== 0) throw new EncodingError("ok receipt with an error code");
  if (receipt.status === "rejected" && receipt.errorCode === 0) throw new EncodingError("rejected receipt without an error code");
  return concatBytes(
    Uint8Array.of(STATUS_BYTE[receipt.status]),
    uintBE(receipt.errorCode, 2),
    u64BE(receipt.cycles),
    u64BE(receipt.cells),
    logsRoot(receipt.events),
    u32BE(receipt.events.length),
    ...receipt.events.map(encodeEvent),
  );
}

/** §5.2: tx_root over the exact transaction bytes of the block. */
export function txRoot(txs: readonly Uint8Array[]): Uint8Array {
  return bmtRoot(KECCAK256, txs.map(keccak256));
}

/** §5.3: receipt_root; a block without receipts has keccak256("empty_receipts"). */
export function receiptRoot(receipts: readonly Receipt[]): Uint8Array {
  if (receipts.length === 0) return keccak256(utf8("empty_receipts"));
  return bmtRoot(KECCAK256, receipts.map((r) => keccak256(encodeReceipt(r))));
}

/** logs_root over events in block order (transaction order, then emission order). */
export function logsRoot(events: readonly Event[]): Uint8Array {
  return bmtRoot(KECCAK256, events.map((e) => keccak256(encodeEvent(e))));
}
