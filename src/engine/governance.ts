// Governance transactions (CIP-12 as CIP-39 uses it): live-scalar writes (§18, §6.1 sum guard)
// and pause accounting (Security Considerations → Denial of service). Valid only from the
// genesis-configured governance account.
import type { Address } from "../codec/types.js";
import type { GovAction } from "./inputs.js";
import { LIVE_SCALARS, paramRow } from "../params.js";
import type { BlockBatch } from "../../state/kv/interface.js";
import { decodeStateValueAs, encodeStateValue } from "../../state/kv/value.js";
import { decodeScalar, encodeScalar } from "./context.js";
import { reject } from "./errors.js";
import { paramKey } from "./layout.js";
import {
  applyExtendPause,
  applyPause,
  applyUnpause,
  decodePauseRecord,
  encodePauseRecord,
  NEVER_PAUSED,
  pauseRecordKey,
  type PauseRecord,
} from "./pause.js";

/** Rows where zero is meaningful: a zero-length grace window (§6.1) and a 0 bps share (§6.1). */
const ZERO_ALLOWED: ReadonlySet<string> = new Set(["cbqs.suspend_grace_blocks", "cbqs.rent.provider_bps", "cbqs.rent.platform_bps"]);

export function paramMinimum(name: string): bigint {
  return ZERO_ALLOWED.has(name) ? 0n : 1n;
}

/** Why a live-scalar value is out of bounds, or null when it is valid. */
export function liveScalarProblem(name: string, value: bigint): string | null {
  const row = paramRow(name);
  if (row === undefined || !LIVE_SCALARS.includes(name)) return `${name} is not one of the 25 live governance scalars`;
  const min = paramMinimum(name);
  if (value < min || value > row.maximum) return `${name} = ${value} is outside [${min}, ${row.maximum}] (§18)`;
  return null;
}

/** §6.1: provider_bps + platform_bps = 10000 must hold after any parameter write. */
export function bpsSumProblem(provider: bigint, platform: bigint): string | null {
  return provider + platform === 10_000n ? null : `cbqs.rent.provider_bps + cbqs.rent.platform_bps = ${provider + platform}, must be 10000 (§6.1)`;
}

/** Reads a pause record through `get` (a batch, or committed state); absent means never paused. */
export function readPauseRecord(get: (key: Uint8Array) => Uint8Array | undefined, governance: Address, actor: Address): PauseRecord {
  return readPauseRecordAt(get, pauseRecordKey(governance, actor));
}

/** readPauseRecord with the record's key already derived (pauseRecordKey). */
export function readPauseRecordAt(get: (key: Uint8Array) => Uint8Array | undefined, key: Uint8Array): PauseRecord {
  const bytes = get(key);
  if (bytes === undefined) return NEVER_PAUSED;
  let raw: Uint8Array;
  try {
    raw = decodeStateValueAs(bytes, "StorageSlot").bytes;
  } catch {
    return reject("RegistryStateInvalid", "pause-accounting record is not a storage slot");
  }
  return decodePauseRecord(raw);
}

export function writePauseRecord(batch: BlockBatch, governance: Address, actor: Address, record: PauseRecord): void {
  batch.put(pauseRecordKey(governance, actor), encodeStateValue({ kind: "StorageSlot", bytes: encodePauseRecord(record) }));
}

function writeParams(batch: BlockBatch, values: ReadonlyArray<{ name: string; value: bigint }>): void {
  const names = new Set<string>();
  for (const { name, value } of values) {
    const problem = liveScalarProblem(name, value);
    if (problem !== null) reject("InvalidGovernanceAction", problem);
    if (names.has(name)) reject("InvalidGovernanceAction", `${name} is written twice in one proposal`);
    names.add(name);
  }
  const resulting = (name: string): bigint =>
    values.find((v) => v.name === name)?.value ?? decodeScalar(batch.get(paramKey(name)), name);
  const problem = bpsSumProblem(resulting("cbqs.rent.provider_bps"), resulting("cbqs.rent.platform_bps"));
  if (problem !== null) reject("InvalidGovernanceAction", problem);
  for (const { name, value } of values) batch.put(paramKey(name), encodeScalar(value));
}

/** Applies one governance action at physical height `height` (the caller checked the sender). */
export function applyGovAction(batch: BlockBatch, governance: Address, height: bigint, action: GovAction): void {
  switch (action.type) {
    case "SetParam":
      return writeParams(batch, [{ name: action.name, value: action.value }]);
    case "SetParams":
      if (action.values.length === 0) reject("InvalidGovernanceAction", "SetParams writes nothing");
      return writeParams(batch, action.values);
    case "Pause":
      return writePauseRecord(batch, governance, action.actor, applyPause(readPauseRecord((k) => batch.get(k), governance, action.actor), height, action.blocks));
    case "ExtendPause":
      return writePauseRecord(
        batch,
        governance,
        action.actor,
        applyExtendPause(readPauseRecord((k) => batch.get(k), governance, action.actor), height, action.blocks),
      );
    case "Unpause":
      return writePauseRecord(batch, governance, action.actor, applyUnpause(readPauseRecord((k) => batch.get(k), governance, action.actor), height));
  }
}
