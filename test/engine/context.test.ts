// The typed registry reads of src/engine/context.ts on state no valid chain produces (written out
// of band): each fails closed with the error AND the reason naming what is wrong, and changes
// nothing. A name alone would let one check vanish while a later one refused the same state.
import { describe, expect, it } from "vitest";
import { toHex } from "../../src/bytes.js";
import { encode } from "../../src/codec/core.js";
import * as S from "../../src/codec/schema.js";
import type { CbqsInstructionV1 } from "../../src/codec/types.js";
import { emit, GovernanceBounds, requireChainContext, type TxContext } from "../../src/engine/context.js";
import type { Event } from "../../state/kv/event.js";
import { CbqsError, EngineDefect } from "../../src/engine/errors.js";
import { ownerCountKey, paramKey, providerKey, REGISTRY_ADDRESS, schedulesKey, singletonKey, streamKey } from "../../src/engine/layout.js";
import { pauseRecordKey } from "../../src/engine/pause.js";
import { encodeStateValue } from "../../state/kv/value.js";
import { cbqs, GOV, ix, OWNER, PROVIDER, PROVIDER2, snapshot, TestChain, writeOutOfBand } from "./harness.js";

const slot = (bytes: Uint8Array) => encodeStateValue({ kind: "StorageSlot", bytes });

function withStream(): TestChain {
  const t = new TestChain();
  t.ok(cbqs(PROVIDER, ix.registerProvider()));
  t.ok(cbqs(OWNER, ix.createStream({ initial_escrow: 1_000_000n })));
  return t;
}

/** Writes `key → value` out of band, then returns the refusal of `i` (sent by OWNER); asserts it changed nothing. */
function refusalAfter(t: TestChain, key: Uint8Array, value: Uint8Array | null, i: CbqsInstructionV1): string {
  writeOutOfBand(t, key, value);
  const before = snapshot(t);
  const e = t.tx(cbqs(OWNER, i)).error;
  expect(snapshot(t)).toEqual(before);
  return `${e?.name}: ${e?.message}`;
}

describe("registry reads fail closed on corrupted state, naming what is wrong", () => {
  it("a stream record that is not a storage slot, does not decode, names another stream, or belongs to another chain instance", () => {
    let t = withStream();
    const id = t.streamId();
    const record = t.chain.stream(id)!;
    expect(refusalAfter(t, streamKey(id), encodeStateValue({ kind: "Account", nonce: 0n, balance: 1n }), ix.topUp(id, 5n))).toBe(
      "RegistryStateInvalid: stream record: stored value is not a storage slot",
    );
    t = withStream();
    expect(refusalAfter(t, streamKey(id), slot(Uint8Array.of(1, 2, 3)), ix.topUp(id, 5n))).toBe(`RegistryStateInvalid: stream ${toHex(id)}: stored record is malformed`);
    t = withStream();
    const other = t.streamId(OWNER, 9n);
    expect(refusalAfter(t, streamKey(other), slot(encode(S.StreamRecordV1, record)), ix.topUp(other, 5n))).toBe(
      `RegistryStateInvalid: stream record under ${toHex(other)} names another stream`,
    );
    t = withStream();
    const foreign = new Uint8Array(32).fill(9);
    expect(refusalAfter(t, streamKey(id), slot(encode(S.StreamRecordV1, { ...record, chain_instance_id: foreign })), ix.topUp(id, 5n))).toBe(
      `ChainInstanceMismatch: stream record ${toHex(id)} carries chain instance ${toHex(foreign)}, the registry's is ${toHex(t.chain.chainInstanceId)}`,
    );
  });

  it("every typed read names its record when the stored value is not a storage slot", () => {
    const notSlot = encodeStateValue({ kind: "Account", nonce: 0n, balance: 1n });
    const i = ix.createStream({ owner_nonce: 1n });
    expect(refusalAfter(withStream(), providerKey(PROVIDER), notSlot, i)).toBe("RegistryStateInvalid: provider record: stored value is not a storage slot");
    expect(refusalAfter(withStream(), singletonKey(), notSlot, i)).toBe("RegistryStateInvalid: singleton: stored value is not a storage slot");
    expect(refusalAfter(withStream(), ownerCountKey(OWNER), notSlot, i)).toBe("RegistryStateInvalid: owner stream count: stored value is not a storage slot");
  });

  it("a provider record that does not decode, names another provider, or belongs to another chain instance", () => {
    let t = withStream();
    const record = t.chain.provider(PROVIDER)!;
    expect(refusalAfter(t, providerKey(PROVIDER), slot(Uint8Array.of(1)), ix.createStream({ owner_nonce: 1n }))).toBe(
      `RegistryStateInvalid: provider ${toHex(PROVIDER)}: stored record is malformed`,
    );
    t = withStream();
    expect(refusalAfter(t, providerKey(PROVIDER2), slot(encode(S.ProviderRecordV1, record)), ix.createStream({ owner_nonce: 1n, provider: PROVIDER2 }))).toBe(
      `RegistryStateInvalid: provider record under ${toHex(PROVIDER2)} names another provider`,
    );
    t = withStream();
    const foreign = new Uint8Array(32).fill(9);
    expect(refusalAfter(t, providerKey(PROVIDER), slot(encode(S.ProviderRecordV1, { ...record, chain_instance_id: foreign })), ix.createStream({ owner_nonce: 1n }))).toBe(
      `ChainInstanceMismatch: provider record ${toHex(PROVIDER)} carries chain instance ${toHex(foreign)}, the registry's is ${toHex(t.chain.chainInstanceId)}`,
    );
  });

  it("a governance scalar that is missing, of the wrong length, or not SystemBytes", () => {
    const name = "cbqs.suspend_grace_blocks";
    const i = ix.createStream({ owner_nonce: 1n });
    expect(refusalAfter(withStream(), paramKey(name), null, i)).toBe(`RegistryStateInvalid: governance scalar ${name} is missing`);
    const malformed = `RegistryStateInvalid: governance scalar ${name} is malformed`;
    expect(refusalAfter(withStream(), paramKey(name), encodeStateValue({ kind: "SystemBytes", bytes: new Uint8Array(7) }), i)).toBe(malformed);
    expect(refusalAfter(withStream(), paramKey(name), encodeStateValue({ kind: "SystemBytes", bytes: new Uint8Array(9) }), i)).toBe(malformed);
    expect(refusalAfter(withStream(), paramKey(name), slot(new Uint8Array(8)), i)).toBe(malformed); // 9 bytes, wrong tag
    // the well-formed value is read as written
    const t = withStream();
    writeOutOfBand(t, paramKey(name), encodeStateValue({ kind: "SystemBytes", bytes: Uint8Array.of(0, 0, 0, 0, 0, 0, 1, 2) }));
    expect(t.chain.params().get(name)).toBe(258n);
  });

  it("GovernanceBounds refuses a name that is not a live scalar as an engine defect", () => {
    expect(() => new GovernanceBounds([]).get("cbqs.nope")).toThrow(EngineDefect);
    expect(() => new GovernanceBounds([]).get("cbqs.nope")).toThrow("cbqs.nope is not a live governance scalar");
  });

  it("the registry's pause record, the singleton, an owner count and the schedules", () => {
    const i = ix.createStream({ owner_nonce: 1n });
    expect(refusalAfter(withStream(), pauseRecordKey(GOV, REGISTRY_ADDRESS), null, i)).toBe("RegistryStateInvalid: registry pause-accounting record is missing");
    expect(refusalAfter(withStream(), singletonKey(), null, i)).toBe("RegistryStateInvalid: Stream Registry singleton is missing");
    const singleton = withStream();
    const good = singleton.store.read(singletonKey())!.subarray(1);
    expect(refusalAfter(singleton, singletonKey(), slot(good.subarray(0, 40)), i)).toBe("RegistryStateInvalid: Stream Registry singleton is malformed");
    const versioned = Uint8Array.from(good);
    versioned[0] = 2;
    expect(refusalAfter(withStream(), singletonKey(), slot(versioned), i)).toBe("RegistryStateInvalid: Stream Registry singleton is malformed");
    expect(refusalAfter(withStream(), ownerCountKey(OWNER), slot(new Uint8Array(7)), i)).toBe("RegistryStateInvalid: owner stream count is malformed");
    expect(refusalAfter(withStream(), schedulesKey(), slot(Uint8Array.of(1, 2)), i)).toBe("BaseRateScheduleUnavailable: the base-rate schedule record is malformed");
    expect(refusalAfter(withStream(), schedulesKey(), null, i)).toBe("BaseRateScheduleUnavailable: the base-rate schedule record is missing");
  });

  it("§4 a signed context is this chain's only at version 1 (the codec refuses any other version, so this is checked directly)", () => {
    const t = withStream();
    const registry = { chain_id: t.context().chain_id, chain_instance_id: t.chain.chainInstanceId };
    expect(() => requireChainContext(registry, t.context(), "x")).not.toThrow();
    let thrown: unknown;
    try {
      requireChainContext(registry, { ...t.context(), version: 2 as 1 }, "x");
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(CbqsError);
    expect([(thrown as CbqsError).errorName, (thrown as CbqsError).message]).toEqual(["ChainInstanceMismatch", "x context is not this chain's (§4)"]);
  });
});

describe("§19 events own their bytes", () => {
  it("emit copies the emitter and the payload: changing either buffer afterwards changes neither the event nor the registry address", () => {
    const events: Event[] = [];
    const ctx = { meter: { emitted: () => undefined }, events } as unknown as TxContext;
    const payload = new Uint8Array(32).fill(7);
    emit(ctx, "cbqs.stream.created", payload);
    payload.fill(0);
    expect(events[0]!.payload).toEqual(new Uint8Array(32).fill(7));
    events[0]!.emitter.fill(0);
    expect(REGISTRY_ADDRESS).toEqual(Uint8Array.of(...new Uint8Array(19), 0x17));
  });
});
