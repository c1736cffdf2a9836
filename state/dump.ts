// State dumps for tooling (docs/state.md §5): every committed key and value as lowercase hex,
// keys ascending, each with a decoded view named by the key prefix and the value discriminant.
// The hex is authoritative; `decoded` is for people and is ignored when a dump is loaded.
import { compareBytes, fromHex, toHex } from "../src/bytes.js";
import type { StateStore } from "./interface.js";
import { checkStateKey, parseStateKey, type DecodedSlot, type ParsedStateKey } from "./keys.js";
import { decodeStateValue } from "./value.js";

export const DUMP_FORMAT = "cbqs-state-dump/v1";

export class DumpError extends Error {
  override name = "DumpError";
}

export interface DumpEntry {
  key: string;
  value: string;
  decoded?: { key: unknown; value: unknown };
}

export interface StateDump {
  format: typeof DUMP_FORMAT;
  /** Last committed height (decimal), when known. */
  height?: string;
  state_root?: string;
  entries: DumpEntry[];
}

/**
 * Decodes the bytes of a StorageSlot value into a readable registry record, or returns undefined
 * when it does not know the slot (ENGINE/RUNNER supply one built on src/codec).
 */
export type SlotDecoder = (key: ParsedStateKey, bytes: Uint8Array) => unknown;

export interface DumpOptions {
  height?: bigint;
  stateRoot?: Uint8Array;
  decodeSlot?: SlotDecoder;
}

const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

function slotView(slot: DecodedSlot): unknown {
  return slot.hashed ? { key_hash: toHex(slot.keyHash) } : { user_key: toHex(slot.userKey) };
}

function keyView(parsed: ParsedStateKey): unknown {
  switch (parsed.layout) {
    case "address":
      return { prefix: parsed.prefix, address: toHex(parsed.address) };
    case "addressSlot":
      return { prefix: parsed.prefix, address: toHex(parsed.address), slot: slotView(parsed.slot) };
    case "addressIndex":
      return { prefix: parsed.prefix, address: toHex(parsed.address), index: parsed.index.toString() };
    case "hash":
      return { prefix: parsed.prefix, hash: toHex(parsed.hash) };
    case "height":
      return { prefix: parsed.prefix, height: parsed.height.toString() };
  }
}

function valueView(parsed: ParsedStateKey | undefined, bytes: Uint8Array, decodeSlot: SlotDecoder | undefined): unknown {
  const value = decodeStateValue(bytes);
  switch (value.kind) {
    case "Account":
      return { kind: value.kind, nonce: value.nonce.toString(), balance: value.balance.toString() };
    case "StorageSlot": {
      const record = parsed && decodeSlot ? decodeSlot(parsed, value.bytes) : undefined;
      return record === undefined ? { kind: value.kind, bytes: toHex(value.bytes) } : { kind: value.kind, record };
    }
    case "SystemBytes":
      return { kind: value.kind, bytes: toHex(value.bytes) };
    case "ActorEventList":
      return {
        kind: value.kind,
        events: value.events.map((e) => ({ emitter: toHex(e.emitter), topic: e.topic, payload: toHex(e.payload) })),
      };
    default:
      return { kind: value.kind, value: value.value.toString() };
  }
}

/** One entry with its decoded view; a part that does not decode shows `{ error }` instead. */
export function dumpEntry(key: Uint8Array, value: Uint8Array, decodeSlot?: SlotDecoder): DumpEntry {
  let parsed: ParsedStateKey | undefined;
  let keyDecoded: unknown;
  try {
    parsed = parseStateKey(key);
    keyDecoded = keyView(parsed);
  } catch (err) {
    keyDecoded = { error: errorText(err) };
  }
  let valueDecoded: unknown;
  try {
    valueDecoded = valueView(parsed, value, decodeSlot);
  } catch (err) {
    valueDecoded = { error: errorText(err) };
  }
  return { key: toHex(key), value: toHex(value), decoded: { key: keyDecoded, value: valueDecoded } };
}

export function dumpEntries(entries: Iterable<readonly [Uint8Array, Uint8Array]>, options: DumpOptions = {}): StateDump {
  const sorted = [...entries].sort((a, b) => compareBytes(a[0], b[0]));
  // Field order: format, height, state_root, entries — the short facts before the long list.
  return {
    format: DUMP_FORMAT,
    ...(options.height === undefined ? {} : { height: options.height.toString() }),
    ...(options.stateRoot === undefined ? {} : { state_root: toHex(options.stateRoot) }),
    entries: sorted.map(([k, v]) => dumpEntry(k, v, options.decodeSlot)),
  };
}

/** The committed state of `store` (its root included). */
export function dumpState(store: StateStore, options: Omit<DumpOptions, "stateRoot"> = {}): StateDump {
  return dumpEntries(store.entries(), { ...options, stateRoot: store.root() });
}

/**
 * Parses a dump (or an alloc file in the same format, `decoded` omitted) into entries sorted by
 * key. Keys must be valid 54-byte state keys and unique.
 */
export function loadDump(json: unknown): Array<[Uint8Array, Uint8Array]> {
  if (typeof json !== "object" || json === null || (json as { format?: unknown }).format !== DUMP_FORMAT) {
    throw new DumpError(`not a state dump: expected "format": "${DUMP_FORMAT}"`);
  }
  const list = (json as { entries?: unknown }).entries;
  if (!Array.isArray(list)) throw new DumpError("state dump: \"entries\" must be an array");
  const entries = list.map((item, i): [Uint8Array, Uint8Array] => {
    const { key, value } = (item ?? {}) as { key?: unknown; value?: unknown };
    if (typeof key !== "string" || typeof value !== "string") {
      throw new DumpError(`state dump entry ${i}: "key" and "value" must be hex strings`);
    }
    try {
      const k = fromHex(key, undefined, `entry ${i} key`);
      checkStateKey(k);
      return [k, fromHex(value, undefined, `entry ${i} value`)];
    } catch (err) {
      throw new DumpError(`state dump entry ${i}: ${errorText(err)}`);
    }
  });
  entries.sort((a, b) => compareBytes(a[0], b[0]));
  for (let i = 1; i < entries.length; i++) {
    if (compareBytes(entries[i - 1]![0], entries[i]![0]) === 0) throw new DumpError(`state dump: duplicate key ${toHex(entries[i]![0])}`);
  }
  return entries;
}

export interface DumpDiff {
  added: DumpEntry[];
  removed: DumpEntry[];
  changed: Array<{ key: string; before: DumpEntry; after: DumpEntry }>;
}

/** Keys only in `b` (added), only in `a` (removed), or in both with different values (changed). */
export function diffDumps(
  a: ReadonlyArray<readonly [Uint8Array, Uint8Array]>,
  b: ReadonlyArray<readonly [Uint8Array, Uint8Array]>,
  decodeSlot?: SlotDecoder,
): DumpDiff {
  const diff: DumpDiff = { added: [], removed: [], changed: [] };
  const sortedA = [...a].sort((x, y) => compareBytes(x[0], y[0]));
  const sortedB = [...b].sort((x, y) => compareBytes(x[0], y[0]));
  let i = 0;
  let j = 0;
  while (i < sortedA.length || j < sortedB.length) {
    const ea = sortedA[i];
    const eb = sortedB[j];
    const order = ea === undefined ? 1 : eb === undefined ? -1 : compareBytes(ea[0], eb[0]);
    if (order < 0) {
      diff.removed.push(dumpEntry(ea![0], ea![1], decodeSlot));
      i++;
    } else if (order > 0) {
      diff.added.push(dumpEntry(eb![0], eb![1], decodeSlot));
      j++;
    } else {
      if (compareBytes(ea![1], eb![1]) !== 0) {
        diff.changed.push({ key: toHex(ea![0]), before: dumpEntry(ea![0], ea![1], decodeSlot), after: dumpEntry(eb![0], eb![1], decodeSlot) });
      }
      i++;
      j++;
    }
  }
  return diff;
}

export const diffIsEmpty = (d: DumpDiff): boolean => d.added.length + d.removed.length + d.changed.length === 0;
