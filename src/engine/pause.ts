// CIP-12 emergency-pause accounting for the Stream Registry (CIP-39 Security Considerations →
// Denial of service): a cumulative record keyed "system:gov:pause-accounting:" || actor under
// the governance actor, holding completed_pause_blocks and an optional active
// [paused_at_block, expires_at_block) interval. Coverage is derived at READ time because
// expiry is lazy.
import { concatBytes, readU64BE, u64BE, utf8 } from "../bytes.js";
import type { Address } from "../codec/types.js";
import { actorStorageKey } from "../../state/kv/keys.js";
import { reject } from "./errors.js";
import { addU64, subU64 } from "./math.js";

export interface PauseInterval {
  paused_at_block: bigint;
  expires_at_block: bigint;
}

export interface PauseRecord {
  completed_pause_blocks: bigint;
  active: PauseInterval | null;
}

export const NEVER_PAUSED: Readonly<PauseRecord> = { completed_pause_blocks: 0n, active: null };

const KEY_PREFIX = "system:gov:pause-accounting:";

/** ActorStorage(governance actor, "system:gov:pause-accounting:" || actor). */
export function pauseRecordKey(governance: Address, actor: Address): Uint8Array {
  return actorStorageKey(governance, concatBytes(utf8(KEY_PREFIX), actor));
}

/** completed u64 BE ‖ 0x00, or completed u64 BE ‖ 0x01 ‖ paused_at u64 BE ‖ expires_at u64 BE. */
export function encodePauseRecord(record: PauseRecord): Uint8Array {
  const completed = u64BE(record.completed_pause_blocks);
  if (record.active === null) return concatBytes(completed, Uint8Array.of(0));
  return concatBytes(completed, Uint8Array.of(1), u64BE(record.active.paused_at_block), u64BE(record.active.expires_at_block));
}

const readU64 = readU64BE;

/** Decodes a stored pause record; anything malformed fails closed. */
export function decodePauseRecord(bytes: Uint8Array): PauseRecord {
  if (bytes.length === 9 && bytes[8] === 0) return { completed_pause_blocks: readU64(bytes, 0), active: null };
  if (bytes.length === 25 && bytes[8] === 1) {
    const active = { paused_at_block: readU64(bytes, 9), expires_at_block: readU64(bytes, 17) };
    if (active.expires_at_block > active.paused_at_block) return { completed_pause_blocks: readU64(bytes, 0), active };
  }
  return reject("RegistryStateInvalid", "malformed pause-accounting record");
}

/** coverage(H) = completed + active.map(|a| min(H, a.expires) − a.paused_at).unwrap_or(0), checked. */
export function coverage(record: PauseRecord, height: bigint): bigint {
  if (record.active === null) return record.completed_pause_blocks;
  const end = height < record.active.expires_at_block ? height : record.active.expires_at_block;
  const activeBlocks = subU64(end, record.active.paused_at_block, "pause coverage");
  return addU64(record.completed_pause_blocks, activeBlocks, "pause coverage");
}

/** effective_rent_height(H) = H − coverage(H), checked (fails closed). */
export function effectiveRentHeight(record: PauseRecord, height: bigint): bigint {
  return subU64(height, coverage(record, height), "effective rent height");
}

/** The breaker covers the actor at physical height H exactly while H is inside the active interval. */
export function isPaused(record: PauseRecord, height: bigint): boolean {
  const a = record.active;
  return a !== null && height >= a.paused_at_block && height < a.expires_at_block;
}

/** Folds an auto-expired interval into completed_pause_blocks (no-op otherwise). */
function foldExpired(record: PauseRecord, height: bigint): PauseRecord {
  if (record.active === null || height < record.active.expires_at_block) return record;
  return { completed_pause_blocks: coverage(record, height), active: null };
}

/** Pause{actor, blocks}: folds an auto-expired prior interval and starts [H, H + blocks). */
export function applyPause(record: PauseRecord, height: bigint, blocks: bigint): PauseRecord {
  if (blocks < 1n) reject("InvalidGovernanceAction", "Pause blocks must be at least 1");
  const folded = foldExpired(record, height);
  if (folded.active !== null) reject("InvalidGovernanceAction", "actor is already paused; use ExtendPause");
  return {
    completed_pause_blocks: folded.completed_pause_blocks,
    active: { paused_at_block: height, expires_at_block: addU64(height, blocks, "pause expiry") },
  };
}

/** ExtendPause{actor, blocks}: refreshes the expiry of the running interval to H + blocks. */
export function applyExtendPause(record: PauseRecord, height: bigint, blocks: bigint): PauseRecord {
  if (!isPaused(record, height)) reject("InvalidGovernanceAction", "actor is not paused");
  const expires = addU64(height, blocks, "pause expiry");
  if (expires <= record.active!.expires_at_block) {
    reject("InvalidGovernanceAction", "ExtendPause must move the expiry later");
  }
  return { completed_pause_blocks: record.completed_pause_blocks, active: { paused_at_block: record.active!.paused_at_block, expires_at_block: expires } };
}

/** Unpause{actor}: folds elapsed coverage, capped at expiry, instead of erasing it. */
export function applyUnpause(record: PauseRecord, height: bigint): PauseRecord {
  if (record.active === null) reject("InvalidGovernanceAction", "actor has no pause interval to end");
  return { completed_pause_blocks: coverage(record, height), active: null };
}
