import { describe, expect, it } from "vitest";
import { encode, toJson } from "../../../src/codec/core.js";
import * as S from "../../../src/codec/schema.js";
import { genesisBaseRateSchedules } from "../../../src/codec/schedule.js";
import { REGISTRY_ADDRESS, ownerCountKey, providerKey, schedulesKey, singletonKey, streamKey } from "../../../src/engine/layout.js";
import { registryRecords } from "../../../src/harness/records.js";
import { diffDumps, dumpEntry } from "../../../state/kv/dump.js";
import { actorStorageKey, parseStateKey } from "../../../state/kv/keys.js";
import { encodeStateValue } from "../../../state/kv/value.js";
import { toHex, u64BE } from "../../../src/bytes.js";
import { providerRecord, streamRecord } from "../../codec/samples.js";

const slotValue = (bytes: Uint8Array) => encodeStateValue({ kind: "StorageSlot", bytes });
const decodeAt = (key: Uint8Array, bytes: Uint8Array) => registryRecords(parseStateKey(key), bytes);
type RecordJson = { [name: string]: { [field: string]: unknown } };

describe("cbqs state diff: registry slot decoder (docs/reference/formats/state-dump.md, docs/reference/state-layout.md)", () => {
  it("CIP-39 §4.2: a stream_id slot of actor 0x17 decodes as StreamRecordV1 canonical JSON", () => {
    const record = decodeAt(streamKey(streamRecord.stream_id), encode(S.StreamRecordV1, streamRecord)) as RecordJson;
    expect(record).toEqual({ StreamRecordV1: toJson(S.StreamRecordV1, streamRecord) });
    expect(record.StreamRecordV1!).toMatchObject({ owner_nonce: "3", escrow_balance: "1000000", status: "Active" });
  });

  it("CIP-39 §4.3: a provider slot (\"P\" ‖ address) decodes as ProviderRecordV1 canonical JSON", () => {
    const record = decodeAt(providerKey(providerRecord.provider), encode(S.ProviderRecordV1, providerRecord)) as RecordJson;
    expect(record).toEqual({ ProviderRecordV1: toJson(S.ProviderRecordV1, providerRecord) });
    expect(record.ProviderRecordV1!).toMatchObject({ registered_block: "1", status: "Active" });
    expect(record.ProviderRecordV1!.endpoints).toHaveLength(2);
  });

  it("CIP-39 §4.5: the base-rate-schedules slot decodes as BaseRateSchedulesV1", () => {
    const schedules = genesisBaseRateSchedules();
    expect(decodeAt(schedulesKey(), encode(S.BaseRateSchedulesV1, schedules))).toEqual({
      BaseRateSchedulesV1: toJson(S.BaseRateSchedulesV1, schedules),
    });
  });

  it("docs/reference/formats/state-dump.md: slots the decoder does not know stay hex (owner count, singleton, other actors)", () => {
    const other = new Uint8Array(20).fill(0x42);
    expect(decodeAt(ownerCountKey(streamRecord.owner), u64BE(1n))).toBeUndefined();
    expect(decodeAt(singletonKey(), Uint8Array.of(1))).toBeUndefined();
    expect(decodeAt(actorStorageKey(other, streamRecord.stream_id), encode(S.StreamRecordV1, streamRecord))).toBeUndefined();
    expect(decodeAt(actorStorageKey(REGISTRY_ADDRESS, new Uint8Array(40)), Uint8Array.of(1))).toBeUndefined();
    const entry = dumpEntry(ownerCountKey(streamRecord.owner), slotValue(u64BE(1n)), registryRecords);
    expect(entry.decoded!.value).toEqual({ kind: "StorageSlot", bytes: toHex(u64BE(1n)) });
  });

  it("docs/reference/formats/state-dump.md: diff shows a changed stream record decoded before and after; a corrupt record shows an error", () => {
    const key = streamKey(streamRecord.stream_id);
    const before = slotValue(encode(S.StreamRecordV1, streamRecord));
    const after = slotValue(encode(S.StreamRecordV1, { ...streamRecord, escrow_balance: 999n }));
    const diff = diffDumps([[key, before]], [[key, after]], registryRecords);
    expect(diff.added).toEqual([]);
    expect(diff.removed).toEqual([]);
    expect(diff.changed).toHaveLength(1);
    const [change] = diff.changed;
    const escrow = (v: unknown) => ((v as { record: RecordJson }).record.StreamRecordV1!.escrow_balance);
    expect([escrow(change!.before.decoded!.value), escrow(change!.after.decoded!.value)]).toEqual(["1000000", "999"]);

    const corrupt = slotValue(encode(S.StreamRecordV1, streamRecord).subarray(0, 10));
    const entry = dumpEntry(key, corrupt, registryRecords);
    expect(entry.value).toBe(toHex(corrupt));
    expect(entry.decoded!.value).toMatchObject({ error: expect.any(String) });
  });
});
