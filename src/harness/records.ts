// Decoded views of Stream Registry (actor 0x17) slots for state dumps, diffs and traces: the
// records as their canonical JSON (docs/reference/state-layout.md). The SlotDecoder that state/kv/dump.ts
// takes, kept out of state/ so the state emulator does not depend on the CIP-39 codec.
import { bytesEqual, toHex } from "../bytes.js";
import { decode, toJson } from "../codec/core.js";
import * as S from "../codec/schema.js";
import { classifyRegistryUserKey, REGISTRY_ADDRESS, singletonKey } from "../engine/layout.js";
import type { SlotDecoder } from "../../state/kv/dump.js";
import { parseStateKey, type ParsedStateKey } from "../../state/kv/keys.js";
import { decodeStateValueAs } from "../../state/kv/value.js";

export const registryRecords: SlotDecoder = (key, bytes) => {
  if (key.layout !== "addressSlot" || key.slot.hashed || !bytesEqual(key.address, REGISTRY_ADDRESS)) return undefined;
  switch (classifyRegistryUserKey(key.slot.userKey)?.kind) {
    case "stream":
      return { StreamRecordV1: toJson(S.StreamRecordV1, decode(S.StreamRecordV1, bytes)) };
    case "provider":
      return { ProviderRecordV1: toJson(S.ProviderRecordV1, decode(S.ProviderRecordV1, bytes)) };
    case "schedules":
      return { BaseRateSchedulesV1: toJson(S.BaseRateSchedulesV1, decode(S.BaseRateSchedulesV1, bytes)) };
    default:
      return undefined;
  }
};

/** What a state key holds, in words: "account 0x…", "stream 0x…", "provider 0x…", "registry singleton", … */
export function describeKey(key: Uint8Array): string {
  let parsed: ParsedStateKey;
  try {
    parsed = parseStateKey(key);
  } catch {
    return `key ${toHex(key)}`;
  }
  if (parsed.layout === "address" && parsed.prefix === "Account") return `account ${toHex(parsed.address)}`;
  if (parsed.layout === "addressSlot" && !parsed.slot.hashed && bytesEqual(parsed.address, REGISTRY_ADDRESS)) {
    const entry = classifyRegistryUserKey(parsed.slot.userKey);
    switch (entry?.kind) {
      case "stream":
        return `stream ${toHex(entry.streamId)}`;
      case "provider":
        return `provider ${toHex(entry.provider)}`;
      case "ownerCount":
        return `owner stream count ${toHex(entry.owner)}`;
      case "singleton":
        return "registry singleton";
      case "schedules":
        return "base-rate schedules";
    }
  }
  return `key ${toHex(key)}`;
}

/** `state dump` filters: the entries of the named streams, providers, accounts and owners (a union). */
export interface DumpFilter {
  streams: Uint8Array[];
  providers: Uint8Array[];
  accounts: Uint8Array[];
  owners: Uint8Array[];
}

const has = (list: readonly Uint8Array[], x: Uint8Array): boolean => list.some((y) => bytesEqual(x, y));

/**
 * Whether an entry belongs to the filter: `--stream` its StreamRecordV1; `--provider` its
 * ProviderRecordV1 and account; `--account` every key stored under the address; `--owner` its
 * streams (records whose owner it is), its stream count and its account.
 */
export function matchesFilter(key: Uint8Array, value: Uint8Array, f: DumpFilter): boolean {
  let parsed: ParsedStateKey;
  try {
    parsed = parseStateKey(key);
  } catch {
    return false;
  }
  if (parsed.layout === "address" || parsed.layout === "addressSlot" || parsed.layout === "addressIndex") {
    if (has(f.accounts, parsed.address)) return true;
    if (parsed.layout === "address" && parsed.prefix === "Account" && (has(f.providers, parsed.address) || has(f.owners, parsed.address))) return true;
  }
  if (parsed.layout !== "addressSlot" || parsed.slot.hashed || !bytesEqual(parsed.address, REGISTRY_ADDRESS)) return false;
  const entry = classifyRegistryUserKey(parsed.slot.userKey);
  switch (entry?.kind) {
    case "stream": {
      if (has(f.streams, entry.streamId)) return true;
      if (f.owners.length === 0) return false;
      try {
        return has(f.owners, decode(S.StreamRecordV1, decodeStateValueAs(value, "StorageSlot").bytes).owner);
      } catch {
        return false;
      }
    }
    case "provider":
      return has(f.providers, entry.provider);
    case "ownerCount":
      return has(f.owners, entry.owner);
    default:
      return false;
  }
}

/** The chain identity recorded in the registry singleton of a state (for stream references in filters). */
export function registryIdentity(entries: Iterable<readonly [Uint8Array, Uint8Array]>): { chainId: bigint; chainInstanceId: Uint8Array } | undefined {
  const key = singletonKey();
  for (const [k, v] of entries) {
    if (!bytesEqual(k, key)) continue;
    const bytes = decodeStateValueAs(v, "StorageSlot").bytes;
    if (bytes.length !== 41) return undefined;
    return { chainId: BigInt(`0x${Buffer.from(bytes.subarray(1, 9)).toString("hex")}`), chainInstanceId: bytes.slice(9, 41) };
  }
  return undefined;
}
