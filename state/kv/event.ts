// The chain event of CIP-39 §19 and its commonware-codec encoding (CIP-4 §5.3): what receipts,
// logs_root (state/merkle/roots.ts) and the state values that hold events (state/kv/value.ts) share.
import { utf8 } from "../../src/bytes.js";
import { CodecError, decodeByteVec, lengthSize, writeLength } from "./codec.js";

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

/**
 * commonware-codec `Encode` of an event (CIP-4 §5.3): emitter `[u8; 20]` ‖ topic as `Vec<u8>`
 * (varint length ‖ UTF-8) ‖ payload as `Vec<u8>` (varint length ‖ bytes).
 */
export function encodeEvent(event: Event): Uint8Array {
  const out = new Uint8Array(eventSize(event));
  writeEvent(out, 0, event);
  return out;
}

/**
 * Length of encodeEvent(event), after every check of the event: the size pass is where encodings
 * are validated (the write pass after it cannot fail), in the order they always were.
 */
export function eventSize(event: Event): number {
  if (event.emitter.length !== EMITTER_LENGTH) {
    throw new EncodingError(`event emitter must be ${EMITTER_LENGTH} bytes, got ${event.emitter.length}`);
  }
  const topic = utf8(event.topic).length;
  const payload = event.payload.length;
  // Almost every event has one-byte lengths; the general case checks each length fits u32.
  if (topic < 0x80 && payload < 0x80) return EMITTER_LENGTH + 1 + topic + 1 + payload;
  return guard(() => EMITTER_LENGTH + lengthSize(topic) + topic + lengthSize(payload) + payload);
}

/**
 * Writes encodeEvent(event) at `at`, once eventSize has checked it (every event of every block is
 * encoded for its leaf: in place, no parts); returns the offset after it.
 */
export function writeEvent(out: Uint8Array, at: number, event: Event): number {
  const topic = utf8(event.topic);
  out.set(event.emitter, at);
  at = writeLength(out, at + EMITTER_LENGTH, topic.length);
  out.set(topic, at);
  at = writeLength(out, at + topic.length, event.payload.length);
  out.set(event.payload, at);
  return at + event.payload.length;
}

/** The smallest encoded event: emitter, empty topic, empty payload (one length byte each). */
export const MIN_EVENT_LENGTH = EMITTER_LENGTH + 1 + 1;

/**
 * The size the gas schedule charges for an event (cellsPerEventByte, gas-vectors/SCHEDULE.md):
 * emitter, topic and payload bytes plus a fixed 8-byte allowance for the two lengths. It is a
 * schedule quantity, deliberately not the wire length, so the charge has no varint steps and did
 * not move when the encoding became commonware-codec (D-0048 "Metered event size").
 */
export function meteredEventBytes(event: Event): number {
  return EMITTER_LENGTH + 4 + utf8(event.topic).length + 4 + event.payload.length;
}

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** Decodes one event starting at `offset`; returns it and the offset after it. */
export function decodeEventAt(bytes: Uint8Array, offset: number): [Event, number] {
  if (offset + EMITTER_LENGTH > bytes.length) throw new EncodingError("truncated event emitter");
  const emitter = bytes.slice(offset, offset + EMITTER_LENGTH);
  const [topicBytes, afterTopic] = guard(() => decodeByteVec(bytes, offset + EMITTER_LENGTH, "event topic"));
  let topic: string;
  try {
    topic = STRICT_UTF8.decode(topicBytes);
  } catch {
    throw new EncodingError("event topic is not valid UTF-8");
  }
  const [payload, next] = guard(() => decodeByteVec(bytes, afterTopic, "event payload"));
  return [{ emitter, topic, payload }, next];
}

/** Runs `f`, turning a codec error into an EncodingError. */
export function guard<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof CodecError) throw new EncodingError(err.message);
    throw err;
  }
}
