// State dumps for tooling (docs/reference/formats/state-dump.md): every committed key and value as lowercase hex,
// keys ascending, each with a decoded view named by the key prefix and the value discriminant.
// The hex is authoritative; `decoded` is for people and is ignored when a dump is loaded.
import { MAX_DUMP_ENTRIES } from "../../src/bounds.js";
import { compareBytes, fromHex, toHex } from "../../src/bytes.js";
import { formatProblem } from "../../src/json/fields.js";
import { childPath, JsonError } from "../../src/json/parse.js";
import { STATE_KEY_LENGTH, type StateStore } from "./interface.js";
import { checkStateKey, parseStateKey, type DecodedSlot, type ParsedStateKey } from "./keys.js";
import { decodeStateValue } from "./value.js";

export const DUMP_FORMAT = "cbqs-state-dump/v1";

/**
 * A dump that cannot be loaded: `path` is the JSON path, `reason` what is wrong. A JsonError, so a
 * reader that streams a dump's entries reports it against the file like any other path error.
 */
export class DumpError extends JsonError {
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
  return { ...dumpHeader(options), entries: [...dumpEntryViews(sorted, options.decodeSlot)] };
}

/**
 * The members before `entries`, in the docs/reference/formats/state-dump.md field order: format, height, state_root
 * — the short facts before the long list.
 */
export function dumpHeader(options: DumpOptions): Omit<StateDump, "entries"> {
  return {
    format: DUMP_FORMAT,
    ...(options.height === undefined ? {} : { height: options.height.toString() }),
    ...(options.stateRoot === undefined ? {} : { state_root: toHex(options.stateRoot) }),
  };
}

/** A dump of `entries`, in the order given, without decoded views: a fixture's post_state, the alloc a t8n is given. */
export function plainDump(entries: Iterable<readonly [Uint8Array, Uint8Array]>, options: { height?: bigint } = {}): StateDump {
  return { ...dumpHeader(options), entries: Array.from(entries, ([k, v]) => ({ key: toHex(k), value: toHex(v) })) };
}

/** Entries (already in ascending key order) with their decoded views, one at a time: a dump is written as it is produced. */
export function* dumpEntryViews(sorted: Iterable<readonly [Uint8Array, Uint8Array]>, decodeSlot?: SlotDecoder): Iterable<DumpEntry> {
  for (const [k, v] of sorted) yield dumpEntry(k, v, decodeSlot);
}

/** The committed state of `store` (its root included). */
export function dumpState(store: StateStore, options: Omit<DumpOptions, "stateRoot"> = {}): StateDump {
  return dumpEntries(store.entries(), { ...options, stateRoot: store.root() });
}

const DUMP_FIELDS: readonly string[] = ["format", "height", "state_root", "entries"];
const ENTRY_FIELDS: readonly string[] = ["key", "value", "decoded"];

function record(v: unknown, path: string, fields: readonly string[]): Record<string, unknown> {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new DumpError(path, "expected a JSON object");
  for (const k of Object.keys(v)) {
    if (!fields.includes(k)) throw new DumpError(childPath(path, k), `unknown field (expected one of: ${fields.join(", ")})`);
  }
  return v as Record<string, unknown>;
}

function hexField(v: unknown, path: string, length?: number): Uint8Array {
  if (typeof v !== "string") throw new DumpError(path, "expected a 0x-prefixed hex string");
  try {
    return fromHex(v, length, "value");
  } catch (err) {
    throw new DumpError(path, errorText(err).replace(/^value: /, ""));
  }
}

/**
 * One entry of a dump (or alloc): a valid 54-byte state key and a value that decodes as a state
 * value; `decoded` is a view for people and is ignored. `path` is the entry's JSON path.
 */
export function loadDumpEntry(item: unknown, path: string): [Uint8Array, Uint8Array] {
  const e = record(item, path, ENTRY_FIELDS);
  for (const k of ["key", "value"]) if (e[k] === undefined) throw new DumpError(`${path}.${k}`, "missing");
  const key = hexField(e["key"], `${path}.key`);
  try {
    checkStateKey(key);
  } catch (err) {
    throw new DumpError(`${path}.key`, errorText(err));
  }
  const value = hexField(e["value"], `${path}.value`);
  try {
    decodeStateValue(value);
  } catch (err) {
    throw new DumpError(`${path}.value`, errorText(err));
  }
  return [key, value];
}

/**
 * A dump's entries in two byte pools — keys (54 bytes each) and values, with value offsets — not
 * as 2 × N small byte arrays: a 1.25 M-entry alloc is ~90 MB here instead of ~700 MB. Iterating
 * yields views into the pools.
 */
export class DumpEntries implements Iterable<[Uint8Array, Uint8Array]> {
  private keys: Uint8Array = new Uint8Array(54 * 1024);
  private values: Uint8Array = new Uint8Array(64 * 1024);
  private ends: Uint32Array = new Uint32Array(1024);
  private count = 0;
  private valueBytes = 0;

  get length(): number {
    return this.count;
  }

  push(key: Uint8Array, value: Uint8Array): void {
    if (key.length !== STATE_KEY_LENGTH) throw new RangeError(`state key must be ${STATE_KEY_LENGTH} bytes`);
    if (this.count === this.ends.length) {
      this.ends = grow(this.ends, this.count * 2);
      this.keys = grow(this.keys, this.count * 2 * STATE_KEY_LENGTH);
    }
    if (this.valueBytes + value.length > this.values.length) this.values = grow(this.values, Math.max(this.values.length * 2, this.valueBytes + value.length));
    this.keys.set(key, this.count * STATE_KEY_LENGTH);
    this.values.set(value, this.valueBytes);
    this.valueBytes += value.length;
    this.ends[this.count++] = this.valueBytes;
  }

  key(i: number): Uint8Array {
    return this.keys.subarray(i * STATE_KEY_LENGTH, (i + 1) * STATE_KEY_LENGTH);
  }

  value(i: number): Uint8Array {
    return this.values.subarray(i === 0 ? 0 : this.ends[i - 1]!, this.ends[i]!);
  }

  *[Symbol.iterator](): Iterator<[Uint8Array, Uint8Array]> {
    for (let i = 0; i < this.count; i++) yield [this.key(i), this.value(i)];
  }

  /** Puts the entries in ascending key order (a no-op for a sorted dump); returns them. */
  sortByKey(): this {
    let sorted = true;
    for (let i = 1; i < this.count && sorted; i++) sorted = compareBytes(this.key(i - 1), this.key(i)) < 0;
    if (sorted) return this;
    const order = Array.from({ length: this.count }, (_, i) => i).sort((a, b) => compareBytes(this.key(a), this.key(b)));
    const from = { keys: this.keys, values: this.values, ends: this.ends };
    const start = (i: number) => (i === 0 ? 0 : from.ends[i - 1]!);
    this.keys = new Uint8Array(from.keys.length);
    this.values = new Uint8Array(from.values.length);
    this.ends = new Uint32Array(from.ends.length);
    const n = this.count;
    this.count = 0;
    this.valueBytes = 0;
    for (const i of order.slice(0, n)) this.push(from.keys.subarray(i * STATE_KEY_LENGTH, (i + 1) * STATE_KEY_LENGTH), from.values.subarray(start(i), from.ends[i]!));
    return this;
  }
}

function grow<T extends Uint8Array | Uint32Array>(a: T, length: number): T {
  const next = (a instanceof Uint8Array ? new Uint8Array(length) : new Uint32Array(length)) as T;
  next.set(a);
  return next;
}

/**
 * Loads a dump (or an alloc file in the same format, `decoded` omitted) at JSON path `path`
 * into entries sorted by key; keys must be unique. Unknown fields are refused. When the entries
 * were already taken one at a time while reading (dumpEntryCollector), pass them as `streamed`:
 * the document's own `entries` array is then empty.
 */
export function loadDump(json: unknown, path = "$", streamed?: DumpEntries): DumpEntries {
  if (typeof json !== "object" || json === null || Array.isArray(json) || (json as { format?: unknown }).format !== DUMP_FORMAT) {
    throw new DumpError(`${path}.format`, formatProblem((json as { format?: unknown } | null)?.format, [DUMP_FORMAT]));
  }
  const d = record(json, path, DUMP_FIELDS);
  if (d["height"] !== undefined && (typeof d["height"] !== "string" || !/^(0|[1-9][0-9]{0,19})$/.test(d["height"]) || BigInt(d["height"]) >> 64n !== 0n)) {
    throw new DumpError(`${path}.height`, "expected a u64 as a decimal string");
  }
  if (d["state_root"] !== undefined) hexField(d["state_root"], `${path}.state_root`, 32);
  const list = d["entries"];
  if (!Array.isArray(list)) throw new DumpError(`${path}.entries`, "expected a JSON array");
  const entries = streamed ?? new DumpEntries();
  if (entries.length + list.length > MAX_DUMP_ENTRIES) throw new DumpError(`${path}.entries`, `more than ${MAX_DUMP_ENTRIES} entries`);
  list.forEach((item, i) => entries.push(...loadDumpEntry(item, `${path}.entries[${i}]`)));
  entries.sortByKey();
  for (let i = 1; i < entries.length; i++) {
    if (compareBytes(entries.key(i - 1), entries.key(i)) === 0) throw new DumpError(`${path}.entries`, `duplicate key ${toHex(entries.key(i))}`);
  }
  return entries;
}

/** A streaming reader's collector for `$.entries`: loads each entry as it is read, within the entry bound. */
export function dumpEntryCollector(path = "$"): { entries: DumpEntries; take: (item: unknown, index: number) => true } {
  const entries = new DumpEntries();
  return {
    entries,
    take: (item, index) => {
      if (index >= MAX_DUMP_ENTRIES) throw new DumpError(`${path}.entries`, `more than ${MAX_DUMP_ENTRIES} entries`);
      entries.push(...loadDumpEntry(item, `${path}.entries[${index}]`));
      return true;
    },
  };
}

export interface DumpDiff {
  added: DumpEntry[];
  removed: DumpEntry[];
  changed: Array<{ key: string; before: DumpEntry; after: DumpEntry }>;
}

/** Keys only in `b` (added), only in `a` (removed), or in both with different values (changed). */
export function diffDumps(
  a: Iterable<readonly [Uint8Array, Uint8Array]>,
  b: Iterable<readonly [Uint8Array, Uint8Array]>,
  decodeSlot?: SlotDecoder,
): DumpDiff {
  const diff: DumpDiff = { added: [], removed: [], changed: [] };
  // A loaded dump is sorted already and walked in place (two 1.25 M-entry dumps are not copied
  // into 2 × N entry arrays); anything else is sorted first.
  const ascending = (e: Iterable<readonly [Uint8Array, Uint8Array]>) => (e instanceof DumpEntries ? e : [...e].sort((x, y) => compareBytes(x[0], y[0])));
  const itA = ascending(a)[Symbol.iterator]();
  const itB = ascending(b)[Symbol.iterator]();
  let ea = itA.next();
  let eb = itB.next();
  while (ea.done !== true || eb.done !== true) {
    const order = ea.done === true ? 1 : eb.done === true ? -1 : compareBytes(ea.value[0], eb.value[0]);
    if (order < 0) {
      const [k, v] = ea.value!;
      diff.removed.push(dumpEntry(k, v, decodeSlot));
      ea = itA.next();
    } else if (order > 0) {
      const [k, v] = eb.value!;
      diff.added.push(dumpEntry(k, v, decodeSlot));
      eb = itB.next();
    } else {
      const [ka, va] = ea.value!;
      const [kb, vb] = eb.value!;
      if (compareBytes(va, vb) !== 0) diff.changed.push({ key: toHex(ka), before: dumpEntry(ka, va, decodeSlot), after: dumpEntry(kb, vb, decodeSlot) });
      ea = itA.next();
      eb = itB.next();
    }
  }
  return diff;
}

export const diffIsEmpty = (d: DumpDiff): boolean => d.added.length + d.removed.length + d.changed.length === 0;
