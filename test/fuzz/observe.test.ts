// What each transaction saw of the registry (src/fuzz/observe.ts), driven by hand through a
// TouchStore's batch the way the engine drives it (a checkpoint per transaction): a stream record
// as first found and as last written, the pause record and the provider rent share at their first
// read, nothing outside a transaction, nothing of other actors' storage.
import { describe, expect, it } from "vitest";
import { fromHex } from "../../src/bytes.js";
import { paramKey, PLATFORM_ADDRESS, providerKey, REGISTRY_ADDRESS, singletonKey, streamKey } from "../../src/engine/layout.js";
import { pauseRecordKey } from "../../src/engine/pause.js";
import { TouchStore } from "../../src/fuzz/observe.js";
import { GOV } from "../../src/fuzz/world.js";
import { actorStorageKey } from "../../state/kv/keys.js";
import { MemoryStateStore } from "../../state/store/store.js";

const STREAM = streamKey(new Uint8Array(32).fill(7));
const OTHER_STREAM = streamKey(new Uint8Array(32).fill(9));
const GOVERNANCE = fromHex(GOV);
const PAUSE = pauseRecordKey(GOVERNANCE, REGISTRY_ADDRESS);
const BPS = paramKey("cbqs.rent.provider_bps");
const OTHER_PARAM = paramKey("cbqs.rent.grace_period_blocks");
const v = (...bytes: number[]) => Uint8Array.from(bytes);
const id = (key: Uint8Array) => Buffer.from(key).toString("latin1");

function store(): TouchStore {
  return new TouchStore(
    MemoryStateStore.fromEntries([
      [STREAM, v(1)],
      [PAUSE, v(2)],
      [BPS, v(3)],
      [OTHER_PARAM, v(12)],
      [actorStorageKey(PLATFORM_ADDRESS, new Uint8Array(32).fill(7)), v(4)],
    ]),
    GOVERNANCE,
  );
}

describe("TouchStore (src/fuzz/observe.ts)", () => {
  it("a stream record: before as the transaction first found it, after as it last wrote it; a read after a write changes neither", () => {
    const s = store();
    const batch = s.beginBlock(1n);
    const t = batch.checkpoint();
    batch.get(STREAM);
    batch.put(STREAM, v(5));
    batch.get(STREAM);
    batch.put(STREAM, v(6));
    batch.get(STREAM);
    batch.put(OTHER_STREAM, v(8)); // written before any read: absent before
    batch.release(t);
    const t2 = batch.checkpoint();
    batch.get(STREAM); // only read: after is before
    batch.rollback(t2);
    const t3 = batch.checkpoint();
    batch.put(STREAM, v(11)); // written before any read: before is what the write replaced
    batch.release(t3);
    const touches = s.take();
    expect(touches).toHaveLength(3);
    expect([...touches[0]!.streams]).toEqual([
      [id(STREAM), { before: v(1), after: v(6) }],
      [id(OTHER_STREAM), { before: undefined, after: v(8) }],
    ]);
    expect([...touches[1]!.streams]).toEqual([[id(STREAM), { before: v(6), after: v(6) }]]);
    expect([...touches[2]!.streams]).toEqual([[id(STREAM), { before: v(6), after: v(11) }]]);
    expect(s.take()).toEqual([]);
  });

  it("the pause record and the provider rent share at their first read; other actors' storage and accesses between transactions are not seen", () => {
    const s = store();
    const batch = s.beginBlock(1n);
    batch.get(STREAM); // between transactions (block-level work)
    const t = batch.checkpoint();
    batch.get(actorStorageKey(PLATFORM_ADDRESS, new Uint8Array(32).fill(7)));
    batch.get(OTHER_PARAM);
    batch.get(PAUSE);
    batch.put(PAUSE, v(9));
    batch.get(PAUSE);
    batch.get(BPS);
    batch.put(BPS, v(10));
    batch.get(BPS);
    batch.release(t);
    batch.get(STREAM);
    const t2 = batch.checkpoint();
    batch.release(t2);
    expect(s.take()).toEqual([
      { streams: new Map(), pause: v(2), providerBps: v(3) },
      { streams: new Map(), pause: undefined, providerBps: undefined },
    ]);
  });

  it("each block's touches are its own, also when a block is begun again before they were taken", () => {
    const s = store();
    const first = s.beginBlock(1n);
    first.release(first.checkpoint());
    const again = s.beginBlock(1n);
    const t = again.checkpoint();
    again.get(PAUSE);
    again.release(t);
    expect(s.take()).toEqual([{ streams: new Map(), pause: v(2), providerBps: undefined }]);
  });

  it("the registry's other records (its singleton, a provider) are no stream records, read or written", () => {
    const s = store();
    const batch = s.beginBlock(1n);
    const t = batch.checkpoint();
    batch.get(singletonKey());
    batch.put(singletonKey(), v(13));
    batch.put(providerKey(new Uint8Array(20).fill(5)), v(14));
    batch.get(STREAM);
    batch.release(t);
    const [touch] = s.take();
    expect([...touch!.streams.keys()]).toEqual([id(STREAM)]);
  });
});

