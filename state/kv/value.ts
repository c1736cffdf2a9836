// CIP-4 §4.3 StateValue: one value-discriminant byte, then the variant's payload. The spec
// names the variants but not their discriminant values or payload layouts; ours are in
// docs/spec/state.md and D-0042. Only the variants this emulator stores are implemented;
// any other discriminant is rejected on decode.
import { concatBytes, readU64BE, u64BE, writeU64BE } from "../../src/bytes.js";
import { decodeLength, encodeLength } from "./codec.js";
import { decodeEventAt, encodeEvent, MIN_EVENT_LENGTH, type Event } from "./event.js";

export class StateValueError extends Error {
  override name = "StateValueError";
}

/** §11 MAX_ACTOR_EVENTS: decode bound of ActorEventList. */
export const MAX_ACTOR_EVENTS = 1000;

// Discriminants follow the §4.3 variant list order; 0x02, 0x03, 0x05–0x09 (Actor, Code,
// MailboxMessage, Timer, TimerList, DeferredTx, DeferredTxList) are reserved, not implemented.
export const ValueTag = {
  Account: 0x01,
  StorageSlot: 0x04,
  SystemBytes: 0x0a,
  ActorEventList: 0x0b,
  MailboxHead: 0x0c,
  MailboxTail: 0x0d,
  KvCount: 0x0e,
  KvBytes: 0x0f,
  DeadLetterTail: 0x10,
} as const;

export type ScalarKind = "MailboxHead" | "MailboxTail" | "KvCount" | "KvBytes" | "DeadLetterTail";

// §4.2: mailbox head/tail (0x10/0x11) and dead-letter tail (0x1D) are 8-byte BE u64, KV
// count/bytes (0x12/0x13) are 8-byte LE u64. The payload keeps each scalar's own byte order.
const SCALAR_LITTLE_ENDIAN: Readonly<Record<ScalarKind, boolean>> = {
  MailboxHead: false,
  MailboxTail: false,
  KvCount: true,
  KvBytes: true,
  DeadLetterTail: false,
};

export type StateValue =
  /** Appendix A says balance u128; CIP-39 §5 keeps u64 wei at the account layer (D-0003). */
  | { kind: "Account"; nonce: bigint; balance: bigint }
  | { kind: "StorageSlot"; bytes: Uint8Array }
  | { kind: "SystemBytes"; bytes: Uint8Array }
  | { kind: "ActorEventList"; events: Event[] }
  | { kind: ScalarKind; value: bigint };

export type StateValueKind = StateValue["kind"];

const U64_MAX = (1n << 64n) - 1n;
const ACCOUNT_PAYLOAD_LENGTH = 16;
const SCALAR_PAYLOAD_LENGTH = 8;

function checkU64(what: string, v: bigint): void {
  if (typeof v !== "bigint" || v < 0n || v > U64_MAX) throw new StateValueError(`${what} ${String(v)} is not a u64`);
}

function u64(what: string, v: bigint): Uint8Array {
  checkU64(what, v);
  return u64BE(v);
}

function readU64(bytes: Uint8Array, offset: number, littleEndian = false): bigint {
  return littleEndian ? readU64BE(bytes.slice(offset, offset + 8).reverse(), 0) : readU64BE(bytes, offset);
}

const tag = (kind: StateValueKind) => Uint8Array.of(ValueTag[kind]);

export function encodeStateValue(value: StateValue): Uint8Array {
  switch (value.kind) {
    case "Account": {
      // tag ‖ nonce u64 BE ‖ balance u64 BE (written in place: every transaction writes accounts)
      checkU64("account nonce", value.nonce);
      checkU64("account balance", value.balance);
      const out = new Uint8Array(1 + ACCOUNT_PAYLOAD_LENGTH);
      out[0] = ValueTag.Account;
      writeU64BE(out, 1, value.nonce);
      writeU64BE(out, 9, value.balance);
      return out;
    }
    case "StorageSlot":
    case "SystemBytes": {
      // tag ‖ raw bytes (the value's length delimits them)
      const out = new Uint8Array(1 + value.bytes.length);
      out[0] = ValueTag[value.kind];
      out.set(value.bytes, 1);
      return out;
    }
    case "ActorEventList": {
      // tag ‖ Vec<Event> (commonware-codec: varint count ‖ events)
      if (value.events.length > MAX_ACTOR_EVENTS) {
        throw new StateValueError(`ActorEventList has ${value.events.length} events, max ${MAX_ACTOR_EVENTS}`);
      }
      return concatBytes(tag("ActorEventList"), encodeLength(value.events.length), ...value.events.map(encodeEvent));
    }
    default: {
      const be = u64(value.kind, value.value);
      return concatBytes(tag(value.kind), SCALAR_LITTLE_ENDIAN[value.kind] ? be.reverse() : be);
    }
  }
}

const KIND_BY_TAG: ReadonlyMap<number, StateValueKind> = new Map(
  (Object.keys(ValueTag) as StateValueKind[]).map((k) => [ValueTag[k], k]),
);

function exactPayload(kind: StateValueKind, bytes: Uint8Array, length: number): void {
  if (bytes.length !== 1 + length) {
    throw new StateValueError(`${kind} value must be ${1 + length} bytes, got ${bytes.length}`);
  }
}

export function decodeStateValue(bytes: Uint8Array): StateValue {
  if (bytes.length === 0) throw new StateValueError("empty state value");
  const kind = KIND_BY_TAG.get(bytes[0]!);
  if (kind === undefined) throw new StateValueError(`unknown state value discriminant 0x${bytes[0]!.toString(16).padStart(2, "0")}`);
  switch (kind) {
    case "Account":
      exactPayload(kind, bytes, ACCOUNT_PAYLOAD_LENGTH);
      return { kind, nonce: readU64(bytes, 1), balance: readU64(bytes, 9) };
    case "StorageSlot":
    case "SystemBytes":
      return { kind, bytes: bytes.slice(1) };
    case "ActorEventList": {
      const [count, start] = wrap(() => decodeLength(bytes, 1, "ActorEventList count"));
      // §4.3 decode bound, checked before allocating anything for the entries.
      if (count > MAX_ACTOR_EVENTS) throw new StateValueError(`ActorEventList count ${count} exceeds ${MAX_ACTOR_EVENTS}`);
      if (count * MIN_EVENT_LENGTH > bytes.length - start) throw new StateValueError(`ActorEventList count ${count} exceeds input`);
      const events: Event[] = [];
      let offset = start;
      for (let i = 0; i < count; i++) {
        const [event, next] = wrap(() => decodeEventAt(bytes, offset));
        events.push(event);
        offset = next;
      }
      if (offset !== bytes.length) throw new StateValueError("trailing bytes after ActorEventList");
      return { kind, events };
    }
    default:
      exactPayload(kind, bytes, SCALAR_PAYLOAD_LENGTH);
      return { kind, value: readU64(bytes, 1, SCALAR_LITTLE_ENDIAN[kind]) };
  }
}

function wrap<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    throw new StateValueError(err instanceof Error ? err.message : String(err));
  }
}

/** Decodes and requires the given variant (e.g. an Account under an 0x01 key). */
export function decodeStateValueAs<K extends StateValueKind>(bytes: Uint8Array, kind: K): Extract<StateValue, { kind: K }> {
  const value = decodeStateValue(bytes);
  if (value.kind !== kind) throw new StateValueError(`expected a value of kind ${kind}, got ${value.kind}`);
  return value as Extract<StateValue, { kind: K }>;
}
