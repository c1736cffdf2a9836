// Decoded views of Stream Registry (0x17) slots for dumps and diffs. Adapter: the same decoder
// exists privately in src/cli/state.ts (`registryRecords`); this file goes away once it is
// exported from a shared module (request in the harness report).
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
