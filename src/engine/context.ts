// Everything one CBQS handler executes against, and the typed registry reads and writes it
// performs. Each read here is one metered state read (§18.1); handlers call them top to
// bottom in their canonical plan order (docs/reference/state-layout.md).
import { bytesEqual, readU64BE, toHex, u64BE } from "../bytes.js";
import { decode, encode, type Codec } from "../codec/core.js";
import * as S from "../codec/schema.js";
import type {
  Address,
  BaseRateSchedulesV1,
  Bytes32,
  CbqsSigningContextV1,
  ProviderRecordV1,
  StreamRecordV1,
} from "../codec/types.js";
import type { BlockBatch } from "../../state/kv/interface.js";
import type { Event } from "../../state/kv/event.js";
import { encodeStateValue, ValueTag } from "../../state/kv/value.js";
import type { AccountLedger } from "./accounts.js";
import type { BoundsMemo } from "./bounds-memo.js";
import { EngineDefect, reject } from "./errors.js";
import {
  ownerCountKey,
  LIVE_SCALAR_READ_KEYS,
  providerKey,
  REGISTRY_ADDRESS,
  schedulesKey,
  singletonKey,
  streamKey,
} from "./layout.js";
import type { Meter } from "./meter.js";
import { decodePauseRecord, effectiveRentHeight, type PauseRecord } from "./pause.js";

export interface TxContext {
  readonly batch: BlockBatch;
  readonly meter: Meter;
  /** Physical block height of the executing block. */
  readonly height: bigint;
  readonly sender: Address;
  /** The CIP-12 governance actor (holds the pause-accounting records). */
  readonly governance: Address;
  /** pauseRecordKey(governance, 0x17): the registry's pause record. */
  readonly registryPauseKey: Uint8Array;
  readonly accounts: AccountLedger;
  readonly events: Event[];
  /** The chain's fast path for readGovernanceBounds (src/engine/bounds-memo.ts), or null: decode every time. */
  readonly boundsMemo: BoundsMemo | null;
}

// ---- raw slot values ------------------------------------------------------------------------

/** A slot's payload as a view of the batch's value: callers decode it (decoding copies) and never modify it. */
function readSlot(ctx: TxContext, key: Uint8Array, what: string): Uint8Array | undefined {
  const bytes = ctx.batch.getView(key);
  if (bytes === undefined) return undefined;
  // A StorageSlot value is its tag then the raw bytes.
  if (bytes[0] !== ValueTag.StorageSlot) return reject("RegistryStateInvalid", `${what}: stored value is not a storage slot`);
  return bytes.subarray(1);
}

function writeSlot(ctx: TxContext, key: Uint8Array, bytes: Uint8Array): void {
  ctx.batch.put(key, encodeStateValue({ kind: "StorageSlot", bytes }));
}

/** `what` and `id` name the record in the rejection (built only then: records are read on every instruction). */
function decodeStored<T>(codec: Codec<T>, bytes: Uint8Array, what: string, id: Uint8Array): T {
  try {
    return decode(codec, bytes);
  } catch {
    return reject("RegistryStateInvalid", `${what} ${toHex(id)}: stored record is malformed`);
  }
}

// ---- governance bounds (§18.1: the 25 live scalars, one read each) ---------------------------

/** Position of each live scalar in §18.1 order. */
const SCALAR_INDEX: ReadonlyMap<string, number> = new Map(LIVE_SCALAR_READ_KEYS.map(([name], i) => [name, i]));

export class GovernanceBounds {
  /** `values` in §18.1 order (LIVE_SCALARS). */
  constructor(private readonly values: readonly bigint[]) {}
  get(name: string): bigint {
    const i = SCALAR_INDEX.get(name);
    if (i === undefined) throw new EngineDefect(`${name} is not a live governance scalar`);
    return this.values[i]!;
  }
}

export function decodeScalar(bytes: Uint8Array | undefined, name: string): bigint {
  if (bytes === undefined) return reject("RegistryStateInvalid", `governance scalar ${name} is missing`);
  // A SystemBytes value (tag 0x0A) of exactly 8 payload bytes, read in place.
  if (bytes.length !== 9 || bytes[0] !== ValueTag.SystemBytes) return reject("RegistryStateInvalid", `governance scalar ${name} is malformed`);
  return readU64BE(bytes, 1);
}

export const encodeScalar = (value: bigint): Uint8Array => encodeStateValue({ kind: "SystemBytes", bytes: u64BE(value) });

export function readGovernanceBounds(ctx: TxContext): GovernanceBounds {
  // Every scalar is read (metered) on either path; the memo only skips decoding bytes it has seen last.
  const views = new Array<Uint8Array | undefined>(LIVE_SCALAR_READ_KEYS.length);
  for (let i = 0; i < views.length; i++) views[i] = ctx.batch.getView(LIVE_SCALAR_READ_KEYS[i]![1]);
  if (ctx.boundsMemo !== null) return ctx.boundsMemo.bounds(views);
  return new GovernanceBounds(views.map((bytes, i) => decodeScalar(bytes, LIVE_SCALAR_READ_KEYS[i]![0])));
}

// ---- pause accounting (Security Considerations → Denial of service) ---------------------------

/** The registry's pause record; the genesis writes it, so absence is invalid state. */
export function readRegistryPause(ctx: TxContext): PauseRecord {
  const bytes = readSlot(ctx, ctx.registryPauseKey, "pause record");
  if (bytes === undefined) return reject("RegistryStateInvalid", "registry pause-accounting record is missing");
  return decodePauseRecord(bytes);
}

/** §6.1: H = physical − coverage(physical), checked. */
export function rentHeight(ctx: TxContext, pause: PauseRecord): bigint {
  return effectiveRentHeight(pause, ctx.height);
}

// ---- singleton (§3, §4.1) -------------------------------------------------------------------

export interface Singleton {
  chain_id: bigint;
  chain_instance_id: Bytes32;
}

export const SINGLETON_VERSION = 1;

export function encodeSingleton(s: Singleton): Uint8Array {
  const out = new Uint8Array(41);
  out[0] = SINGLETON_VERSION;
  out.set(u64BE(s.chain_id), 1);
  out.set(s.chain_instance_id, 9);
  return out;
}

export function decodeSingleton(bytes: Uint8Array | undefined): Singleton {
  if (bytes === undefined) return reject("RegistryStateInvalid", "Stream Registry singleton is missing");
  if (bytes.length !== 41 || bytes[0] !== SINGLETON_VERSION) return reject("RegistryStateInvalid", "Stream Registry singleton is malformed");
  return { chain_id: readU64BE(bytes, 1), chain_instance_id: bytes.slice(9, 41) };
}

export function readSingleton(ctx: TxContext): Singleton {
  return decodeSingleton(readSlot(ctx, singletonKey(), "singleton"));
}

/**
 * §4: a signed object's context must be exactly the executing chain's (version 1, chain id,
 * chain instance), checked before authorization or any mutation.
 */
export function requireChainContext(s: Singleton, context: CbqsSigningContextV1, what: string): void {
  if (context.version !== 1 || context.chain_id !== s.chain_id || !bytesEqual(context.chain_instance_id, s.chain_instance_id)) {
    reject("ChainInstanceMismatch", `${what} context is not this chain's (§4)`);
  }
}

function requireSameInstance(s: Singleton, carried: Bytes32, what: string, id: Uint8Array): void {
  if (!bytesEqual(carried, s.chain_instance_id)) {
    reject("ChainInstanceMismatch", `${what} ${toHex(id)} carries chain instance ${toHex(carried)}, the registry's is ${toHex(s.chain_instance_id)}`);
  }
}

// ---- provider records (§4.3) ------------------------------------------------------------------

export function readProvider(ctx: TxContext, s: Singleton, provider: Address): ProviderRecordV1 | null {
  const bytes = readSlot(ctx, providerKey(provider), "provider record");
  if (bytes === undefined) return null;
  const record = decodeStored(S.ProviderRecordV1, bytes, "provider", provider);
  requireSameInstance(s, record.chain_instance_id, "provider record", provider);
  if (!bytesEqual(record.provider, provider)) reject("RegistryStateInvalid", `provider record under ${toHex(provider)} names another provider`);
  return record;
}

export function writeProvider(ctx: TxContext, record: ProviderRecordV1): void {
  writeSlot(ctx, providerKey(record.provider), encode(S.ProviderRecordV1, record));
}

// ---- stream records (§4.1) --------------------------------------------------------------------

export function readStream(ctx: TxContext, s: Singleton, id: Bytes32): StreamRecordV1 | null {
  const bytes = readSlot(ctx, streamKey(id), "stream record");
  if (bytes === undefined) return null;
  const record = decodeStored(S.StreamRecordV1, bytes, "stream", id);
  requireSameInstance(s, record.chain_instance_id, "stream record", id);
  if (!bytesEqual(record.stream_id, id)) reject("RegistryStateInvalid", `stream record under ${toHex(id)} names another stream`);
  return record;
}

export function writeStream(ctx: TxContext, record: StreamRecordV1): void {
  writeSlot(ctx, streamKey(record.stream_id), encode(S.StreamRecordV1, record));
}

export const encodeStreamRecord = (record: StreamRecordV1): Uint8Array => encode(S.StreamRecordV1, record);

// ---- owner live-stream counts ----------------------------------------------------------------

export function readOwnerCount(ctx: TxContext, owner: Address): bigint {
  const bytes = readSlot(ctx, ownerCountKey(owner), "owner stream count");
  if (bytes === undefined) return 0n;
  if (bytes.length !== 8) return reject("RegistryStateInvalid", "owner stream count is malformed");
  return readU64BE(bytes, 0);
}

/** Zero is stored as absence (one state for "no live streams"). */
export function writeOwnerCount(ctx: TxContext, owner: Address, count: bigint): void {
  if (count === 0n) ctx.batch.delete(ownerCountKey(owner));
  else writeSlot(ctx, ownerCountKey(owner), u64BE(count));
}

// ---- base-rate schedules (§4.5) -------------------------------------------------------------

export function readSchedules(ctx: TxContext): BaseRateSchedulesV1 {
  const bytes = readSlot(ctx, schedulesKey(), "base-rate schedules");
  if (bytes === undefined) return reject("BaseRateScheduleUnavailable", "the base-rate schedule record is missing");
  try {
    return decode(S.BaseRateSchedulesV1, bytes);
  } catch {
    return reject("BaseRateScheduleUnavailable", "the base-rate schedule record is malformed");
  }
}

// ---- events (§19) ---------------------------------------------------------------------------

export type Topic =
  | "cbqs.provider.registered"
  | "cbqs.provider.updated"
  | "cbqs.provider.status_changed"
  | "cbqs.stream.created"
  | "cbqs.stream.updated"
  | "cbqs.stream.topped_up"
  | "cbqs.stream.rent_settled"
  | "cbqs.stream.suspended"
  | "cbqs.stream.reactivated"
  | "cbqs.stream.key_generation_activated"
  | "cbqs.stream.closed"
  | "cbqs.stream.data_expired";

export function emit(ctx: TxContext, topic: Topic, payload: Uint8Array): void {
  const event: Event = { emitter: REGISTRY_ADDRESS.slice(), topic, payload: payload.slice() };
  ctx.meter.emitted(event);
  ctx.events.push(event);
}

/** §19: at most one NET status edge, after the primary event. */
export function emitStatusEdge(ctx: TxContext, before: StreamRecordV1["status"], after: StreamRecordV1["status"], streamId: Bytes32): void {
  if (before === "Active" && after === "Suspended") emit(ctx, "cbqs.stream.suspended", streamId);
  else if (before === "Suspended" && after === "Active") emit(ctx, "cbqs.stream.reactivated", streamId);
}
