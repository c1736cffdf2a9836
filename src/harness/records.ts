// Decoded views of Stream Registry (actor 0x17) slots for state dumps, diffs and traces: the
// records as their canonical JSON (docs/state-layout.md). The SlotDecoder that state/dump.ts
// takes, kept out of state/ so the state emulator does not depend on the CIP-39 codec.
import { bytesEqual } from "../bytes.js";
import { decode, toJson } from "../codec/core.js";
import * as S from "../codec/schema.js";
import { classifyRegistryUserKey, REGISTRY_ADDRESS } from "../engine/layout.js";
import type { SlotDecoder } from "../../state/dump.js";

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
