// Where every piece of engine state lives (docs/reference/state-layout.md is the prose version).
// Registry records live under the Stream Registry actor 0x17 (CIP-4 ActorStorage 0x03) with
// user keys short enough (≤ 32 bytes) to be stored verbatim, so a dump names every record:
//   "registry"             → singleton: version u8 (1) ‖ chain_id u64 BE ‖ chain_instance_id (41 bytes)
//   "base-rate-schedules"  → canonical BaseRateSchedulesV1 (162 bytes, §4.5)
//   "P" ‖ provider (21 B)  → canonical ProviderRecordV1
//   "O" ‖ owner (21 B)     → owner's live (non-terminal) main-stream count, u64 BE
//   stream_id (32 B)       → canonical StreamRecordV1 (main and key streams; never deleted)
// Governance scalars are SystemState 0x0A keys keccak256(name) holding u64 BE; accounts are
// Account 0x01 keys; the pause record is in pause.ts.
import { bytesEqual, concatBytes, utf8 } from "../bytes.js";
import type { Address, Bytes32 } from "../codec/types.js";
import { LIVE_SCALARS } from "../params.js";
import { accountKey, actorStorageKey, systemStateKey } from "../../state/kv/keys.js";

function systemActor(lastByte: number): Address {
  const a = new Uint8Array(20);
  a[19] = lastByte;
  return a;
}

/** §3: the Stream Registry system actor; its account is the escrow custody account (§5). */
export const REGISTRY_ADDRESS = systemActor(0x17);
/** §6.1: the Platform Fee Account. */
export const PLATFORM_ADDRESS = systemActor(0x18);
/** §6: the creation charge is burned by crediting the zero address. */
export const ZERO_ADDRESS = new Uint8Array(20);

export const SINGLETON_USER_KEY = utf8("registry");
export const SCHEDULES_USER_KEY = utf8("base-rate-schedules");
const PROVIDER_TAG = utf8("P");
const OWNER_COUNT_TAG = utf8("O");

// Constant keys are derived once (keccak256 of a parameter name is a large share of replay
// time otherwise); every getter hands out a fresh copy so no caller can alter the cached key.
const SINGLETON_KEY = actorStorageKey(REGISTRY_ADDRESS, SINGLETON_USER_KEY);
const SCHEDULES_KEY = actorStorageKey(REGISTRY_ADDRESS, SCHEDULES_USER_KEY);
const LIVE_SCALAR_KEYS: ReadonlyMap<string, Uint8Array> = new Map(LIVE_SCALARS.map((name) => [name, systemStateKey(name)]));

export const singletonKey = (): Uint8Array => SINGLETON_KEY.slice();
export const schedulesKey = (): Uint8Array => SCHEDULES_KEY.slice();
export const providerKey = (provider: Address): Uint8Array =>
  actorStorageKey(REGISTRY_ADDRESS, concatBytes(PROVIDER_TAG, provider));
export const ownerCountKey = (owner: Address): Uint8Array =>
  actorStorageKey(REGISTRY_ADDRESS, concatBytes(OWNER_COUNT_TAG, owner));
export const streamKey = (streamId: Bytes32): Uint8Array => actorStorageKey(REGISTRY_ADDRESS, streamId);
/** Only the §18 live scalars are cached: governance actions may name arbitrary parameters. */
export const paramKey = (name: string): Uint8Array => LIVE_SCALAR_KEYS.get(name)?.slice() ?? systemStateKey(name);
/**
 * The cached keys of the 25 live scalars in §18.1 order, shared, not copied: only for passing
 * straight to a batch read (which never modifies or keeps the caller's key).
 */
export const LIVE_SCALAR_READ_KEYS: readonly (readonly [string, Uint8Array])[] = [...LIVE_SCALAR_KEYS];
export { accountKey };

/** What a registry user key (the verbatim slot of an 0x17 ActorStorage key) names. */
export type RegistryEntry =
  | { kind: "singleton" }
  | { kind: "schedules" }
  | { kind: "provider"; provider: Address }
  | { kind: "ownerCount"; owner: Address }
  | { kind: "stream"; streamId: Bytes32 };

export function classifyRegistryUserKey(userKey: Uint8Array): RegistryEntry | undefined {
  if (userKey.length === 32) return { kind: "stream", streamId: userKey };
  if (userKey.length === 21 && userKey[0] === PROVIDER_TAG[0]) return { kind: "provider", provider: userKey.slice(1) };
  if (userKey.length === 21 && userKey[0] === OWNER_COUNT_TAG[0]) return { kind: "ownerCount", owner: userKey.slice(1) };
  // Compared as bytes: a text decode would map other byte strings (a BOM prefix, invalid UTF-8
  // replaced by U+FFFD) onto the same name.
  if (bytesEqual(userKey, SINGLETON_USER_KEY)) return { kind: "singleton" };
  if (bytesEqual(userKey, SCHEDULES_USER_KEY)) return { kind: "schedules" };
  return undefined;
}
