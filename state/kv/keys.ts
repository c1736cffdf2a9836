// CIP-4 §4.1/§4.2 state keys: always 54 bytes, [1-byte prefix][20-byte address][33-byte slot].
// Hash-keyed prefixes put a 32-byte keccak256 in the first 32 bytes of the 53-byte region after
// the prefix and zero-pad the rest. §4.2 (0x01–0x1D, no 0x00) is normative over Appendix B
// (D-0002).
import { concatBytes, readU64BE, toHex, u64BE, utf8 } from "../../src/bytes.js";
import { keccak256 } from "../../src/crypto/hash.js";
import { STATE_KEY_LENGTH } from "./interface.js";

export { STATE_KEY_LENGTH };

export type StateKey = Uint8Array;

export const ADDRESS_LENGTH = 20;
export const SLOT_LENGTH = 33;
const HASH_LENGTH = 32;

// §4.2 table, in order.
export const StatePrefix = {
  Account: 0x01,
  Actor: 0x02,
  ActorStorage: 0x03,
  Mailbox: 0x04,
  Timer: 0x05,
  TimerIndex: 0x06,
  DeferredTx: 0x07,
  DeferredIndex: 0x08,
  ActorEvents: 0x09,
  SystemState: 0x0a,
  ActorTimerCount: 0x0b,
  DeferredActorCount: 0x0c,
  DeferredTxBlock: 0x0d,
  PvmPerInstrGas: 0x0e,
  Code: 0x0f,
  ActorMailboxHead: 0x10,
  ActorMailboxTail: 0x11,
  ActorKvCount: 0x12,
  ActorKvBytes: 0x13,
  Library: 0x14,
  ActorLibPin: 0x15,
  TxReturnData: 0x16,
  PublishRootDedup: 0x17,
  EventSub: 0x18,
  EventSubIndex: 0x19,
  ActorTimerIds: 0x1a,
  Fairness: 0x1b,
  MailboxDeadLetter: 0x1c,
  ActorDeadLetterTail: 0x1d,
} as const;

export type StatePrefixName = keyof typeof StatePrefix;

/** How the 53 bytes after the prefix are laid out (§4.2 "Key layout" column). */
export type KeyLayout =
  | "address" // address ‖ zeros
  | "addressSlot" // address ‖ slot(33)
  | "addressIndex" // address ‖ be(u64) ‖ zeros
  | "hash" // 32-byte hash ‖ zeros
  | "height"; // be(u64) ‖ zeros

const LAYOUTS: Readonly<Record<StatePrefixName, KeyLayout>> = {
  Account: "address",
  Actor: "address",
  ActorStorage: "addressSlot",
  Mailbox: "addressIndex",
  Timer: "hash",
  TimerIndex: "hash",
  DeferredTx: "hash",
  DeferredIndex: "hash",
  ActorEvents: "address",
  SystemState: "hash",
  ActorTimerCount: "address",
  DeferredActorCount: "address",
  DeferredTxBlock: "hash",
  PvmPerInstrGas: "hash",
  Code: "hash",
  ActorMailboxHead: "address",
  ActorMailboxTail: "address",
  ActorKvCount: "address",
  ActorKvBytes: "address",
  Library: "addressSlot",
  ActorLibPin: "addressSlot",
  TxReturnData: "hash",
  PublishRootDedup: "height",
  EventSub: "hash",
  EventSubIndex: "hash",
  ActorTimerIds: "address",
  Fairness: "address",
  MailboxDeadLetter: "addressIndex",
  ActorDeadLetterTail: "address",
};

const NAME_BY_PREFIX: ReadonlyArray<StatePrefixName | undefined> = (() => {
  const names: Array<StatePrefixName | undefined> = new Array(256).fill(undefined);
  for (const name of Object.keys(StatePrefix) as StatePrefixName[]) names[StatePrefix[name]] = name;
  return names;
})();

export class StateKeyError extends Error {
  override name = "StateKeyError";
}

/** Throws unless `key` is exactly 54 bytes with a §4.2 prefix; returns the prefix name. */
export function checkStateKey(key: Uint8Array): StatePrefixName {
  if (key.length !== STATE_KEY_LENGTH) {
    throw new StateKeyError(`state key must be ${STATE_KEY_LENGTH} bytes, got ${key.length}`);
  }
  const name = NAME_BY_PREFIX[key[0]!];
  if (name === undefined) throw new StateKeyError(`unknown state key prefix 0x${key[0]!.toString(16).padStart(2, "0")}`);
  return name;
}

function build(prefix: StatePrefixName, ...parts: Uint8Array[]): StateKey {
  const key = new Uint8Array(STATE_KEY_LENGTH);
  key[0] = StatePrefix[prefix];
  let at = 1;
  for (const part of parts) {
    if (at + part.length > STATE_KEY_LENGTH) throw new RangeError(`offset is out of bounds`);
    key.set(part, at);
    at += part.length;
  }
  return key;
}

function checkLength(what: string, bytes: Uint8Array, length: number): Uint8Array {
  if (bytes.length !== length) throw new StateKeyError(`${what} must be ${length} bytes, got ${bytes.length}`);
  return bytes;
}

const address = (a: Uint8Array) => checkLength("address", a, ADDRESS_LENGTH);
const hash32 = (what: string, h: Uint8Array) => checkLength(what, h, HASH_LENGTH);

// ---- ActorStorage / Library / ActorLibPin slot (§4.2: "verbatim user key if ≤32 B, else
// keccak256 (HASHED flag)"). Layout (D-0040): 32 data bytes then one flag byte.
// Verbatim: data = key zero-padded, flag = key length 0..32. Hashed: data = keccak256(key),
// flag = SLOT_HASHED. Distinct user keys give distinct slots (up to keccak collisions).
export const SLOT_HASHED = 0x80;
const SLOT_DATA_LENGTH = 32;

export function encodeSlot(userKey: Uint8Array): Uint8Array {
  const slot = new Uint8Array(SLOT_LENGTH);
  if (userKey.length <= SLOT_DATA_LENGTH) {
    slot.set(userKey, 0);
    slot[SLOT_DATA_LENGTH] = userKey.length;
  } else {
    slot.set(keccak256(userKey), 0);
    slot[SLOT_DATA_LENGTH] = SLOT_HASHED;
  }
  return slot;
}

/** The user key of a verbatim slot, or the keccak256 of a hashed one. */
export type DecodedSlot = { hashed: false; userKey: Uint8Array } | { hashed: true; keyHash: Uint8Array };

export function decodeSlot(slot: Uint8Array): DecodedSlot {
  checkLength("slot", slot, SLOT_LENGTH);
  const flag = slot[SLOT_DATA_LENGTH]!;
  if (flag === SLOT_HASHED) return { hashed: true, keyHash: slot.slice(0, SLOT_DATA_LENGTH) };
  if (flag > SLOT_DATA_LENGTH) throw new StateKeyError(`invalid slot flag 0x${flag.toString(16)}`);
  if (slot.subarray(flag, SLOT_DATA_LENGTH).some((b) => b !== 0)) {
    throw new StateKeyError("verbatim slot has non-zero padding");
  }
  return { hashed: false, userKey: slot.slice(0, flag) };
}

// ---- constructors, one per §4.2 prefix --------------------------------------------------------

export const accountKey = (addr: Uint8Array) => build("Account", address(addr));
export const actorKey = (addr: Uint8Array) => build("Actor", address(addr));
export const actorStorageKey = (actor: Uint8Array, userKey: Uint8Array) =>
  build("ActorStorage", address(actor), encodeSlot(userKey));
export const mailboxKey = (addr: Uint8Array, index: bigint) => build("Mailbox", address(addr), u64BE(index));
export const timerKey = (timerId: Uint8Array) => build("Timer", keccak256(timerId));
export const timerIndexKey = (height: bigint) => build("TimerIndex", keccak256(u64BE(height)));
export const deferredTxKey = (txHash: Uint8Array) => build("DeferredTx", keccak256(hash32("tx hash", txHash)));
export const deferredIndexKey = (originHash: Uint8Array) =>
  build("DeferredIndex", keccak256(hash32("origin hash", originHash)));
export const actorEventsKey = (addr: Uint8Array) => build("ActorEvents", address(addr));
/** §4.2 SystemState: keccak256 of the key name's UTF-8 bytes (e.g. "system:cip4:rent_config", §12.5). */
export const systemStateKey = (name: string) => build("SystemState", keccak256(utf8(name)));
export const actorTimerCountKey = (addr: Uint8Array) => build("ActorTimerCount", address(addr));
export const deferredActorCountKey = (addr: Uint8Array) => build("DeferredActorCount", address(addr));
export const deferredTxBlockKey = (txHash: Uint8Array) =>
  build("DeferredTxBlock", keccak256(hash32("tx hash", txHash)));
export const pvmPerInstrGasKey = (txHash: Uint8Array) => build("PvmPerInstrGas", hash32("tx hash", txHash));
/** §4.2 Code: content-addressed by code_hash[..32]. */
export const codeKey = (codeHash: Uint8Array) => build("Code", hash32("code hash", codeHash));
export const actorMailboxHeadKey = (addr: Uint8Array) => build("ActorMailboxHead", address(addr));
export const actorMailboxTailKey = (addr: Uint8Array) => build("ActorMailboxTail", address(addr));
export const actorKvCountKey = (addr: Uint8Array) => build("ActorKvCount", address(addr));
export const actorKvBytesKey = (addr: Uint8Array) => build("ActorKvBytes", address(addr));
export const libraryKey = (publisher: Uint8Array, userKey: Uint8Array) =>
  build("Library", address(publisher), encodeSlot(userKey));
export const actorLibPinKey = (actor: Uint8Array, userKey: Uint8Array) =>
  build("ActorLibPin", address(actor), encodeSlot(userKey));
export const txReturnDataKey = (txHash: Uint8Array) => build("TxReturnData", hash32("tx hash", txHash));
export const publishRootDedupKey = (height: bigint) => build("PublishRootDedup", u64BE(height));
export const eventSubKey = (subId: Uint8Array) => build("EventSub", keccak256(subId));
/** §4.2 EventSubIndex: keccak256(emitter ‖ topic), topic as UTF-8 bytes. */
export const eventSubIndexKey = (emitter: Uint8Array, topic: string) =>
  build("EventSubIndex", keccak256(concatBytes(address(emitter), utf8(topic))));
export const actorTimerIdsKey = (addr: Uint8Array) => build("ActorTimerIds", address(addr));
export const fairnessKey = (addr: Uint8Array) => build("Fairness", address(addr));
export const mailboxDeadLetterKey = (addr: Uint8Array, seq: bigint) =>
  build("MailboxDeadLetter", address(addr), u64BE(seq));
export const actorDeadLetterTailKey = (addr: Uint8Array) => build("ActorDeadLetterTail", address(addr));

// ---- parser ---------------------------------------------------------------------------------

export type ParsedStateKey =
  | { prefix: StatePrefixName; layout: "address"; address: Uint8Array }
  | { prefix: StatePrefixName; layout: "addressSlot"; address: Uint8Array; slot: DecodedSlot }
  | { prefix: StatePrefixName; layout: "addressIndex"; address: Uint8Array; index: bigint }
  | { prefix: StatePrefixName; layout: "hash"; hash: Uint8Array }
  | { prefix: StatePrefixName; layout: "height"; height: bigint };


function requireZeros(key: Uint8Array, from: number): void {
  for (let i = from; i < STATE_KEY_LENGTH; i++) {
    if (key[i] !== 0) throw new StateKeyError(`state key ${toHex(key)}: non-zero padding at byte ${i}`);
  }
}

/** Names the prefix and splits the layout; rejects wrong lengths, unknown prefixes, bad padding. */
export function parseStateKey(key: Uint8Array): ParsedStateKey {
  const prefix = checkStateKey(key);
  const layout = LAYOUTS[prefix];
  const addr = () => key.slice(1, 1 + ADDRESS_LENGTH);
  switch (layout) {
    case "address":
      requireZeros(key, 1 + ADDRESS_LENGTH);
      return { prefix, layout, address: addr() };
    case "addressSlot":
      return { prefix, layout, address: addr(), slot: decodeSlot(key.subarray(1 + ADDRESS_LENGTH)) };
    case "addressIndex":
      requireZeros(key, 1 + ADDRESS_LENGTH + 8);
      return { prefix, layout, address: addr(), index: readU64BE(key, 1 + ADDRESS_LENGTH) };
    case "hash":
      requireZeros(key, 1 + HASH_LENGTH);
      return { prefix, layout, hash: key.slice(1, 1 + HASH_LENGTH) };
    case "height":
      requireZeros(key, 1 + 8);
      return { prefix, layout, height: readU64BE(key, 1) };
  }
}
