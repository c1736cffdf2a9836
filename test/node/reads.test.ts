// CIP-39 §3 reads served by `cbqs node`: FinalizedViewV1, the atomic broker-state response (every
// part checked against the engine's own read views at the answer's height), block-hash-pinned
// reads and the refusal of a pinned read the node can no longer serve, §4.5 active schedule, and
// broker-state while the emergency-pause breaker covers the registry (Denial of service).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decode, toJson } from "../../src/codec/core.js";
import { scheduleDigest } from "../../src/codec/derive.js";
import * as S from "../../src/codec/schema.js";
import { readFixture } from "../../src/harness/documents.js";
import { REGISTRY_ADDRESS, schedulesKey } from "../../src/engine/layout.js";
import { decodeStateValueAs } from "../../state/kv/value.js";
import { BrokerStateCache } from "../../src/node/reads.js";
import { cbqsTx, expectedByHeight, fixtureOf, get, govTx, post, startNode, toHex, type TestNode } from "./helpers.js";

const FIXTURE = "fixtures/corpus/encrypted-pair-lifecycle.json";
const fixture = readFixture(FIXTURE);
const expected = expectedByHeight(fixture);

describe("cbqs node: CIP-39 §3 reads", () => {
  let n: TestNode;
  beforeAll(async () => {
    n = await startNode(FIXTURE, { retainBlocks: 3 });
  });
  afterAll(() => n.close());

  it("§3 FinalizedViewV1 names the chain instance, height and block hash in one read", async () => {
    const head = n.db.head()!;
    const r = await get(n.url, "/cbqs/finalized-view");
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      height: head.height.toString(),
      block_hash: toHex(head.block_hash),
      state_root: toHex(head.state_root),
      view: { chain_instance_id: toHex(fixture.genesis.chain_instance_id), height: head.height.toString(), block_hash: toHex(head.block_hash) },
    });
    const first = fixture.blocks[0]!;
    const pinned = await get(n.url, `/cbqs/finalized-view?block=${toHex(first.block_hash)}`);
    expect(pinned.body["view"]).toMatchObject({ height: first.height.toString(), block_hash: toHex(first.block_hash) });
  });

  it("§3 broker-state: view, stream and its linked stream, provider, §4.5 schedule, bounds and effective_rent_height from one height", async () => {
    const head = n.db.head()!;
    const want = expected.get(head.height.toString())!;
    for (const [id, stream] of want.streams) {
      const r = await get(n.url, `/cbqs/broker-state?stream=${id}`);
      expect(r.status, id).toBe(200);
      const record = stream as { provider: string; linked_stream_id: string | null; purpose: string };
      expect(r.body["height"]).toBe(head.height.toString());
      expect(r.body["block_hash"]).toBe(want.block_hash);
      expect(r.body["state_root"]).toBe(want.state_root);
      expect(r.body["view"]).toEqual({ chain_instance_id: toHex(fixture.genesis.chain_instance_id), height: head.height.toString(), block_hash: want.block_hash });
      expect(r.body["stream"]).toEqual(stream);
      expect(r.body["provider"]).toEqual(want.providers.get(record.provider));
      expect(r.body["bounds"]).toEqual(want.bounds);
      expect(r.body["effective_rent_height"]).toBe(want.effective_rent_height);
      if (record.linked_stream_id !== null) {
        expect(r.body[record.purpose === "Main" ? "key_stream" : "main_stream"]).toEqual(want.streams.get(record.linked_stream_id));
      }
    }
    expect([...want.streams.values()].some((s) => (s as { linked_stream_id: unknown }).linked_stream_id !== null)).toBe(true);
    // The same answer by the stream-key forms of the CLI (CIP-39 §4.1 derivation at this chain).
    const [id, stream] = [...want.streams].find(([, s]) => (s as { purpose: string }).purpose === "Main")!;
    const main = stream as { owner: string; owner_nonce: string; linked_stream_id: string | null };
    const byOwner = await get(n.url, `/cbqs/broker-state?stream=${encodeURIComponent(`owner:${main.owner}/nonce:${main.owner_nonce}`)}`);
    expect(byOwner.body).toEqual((await get(n.url, `/cbqs/broker-state?stream=${id}`)).body);
    if (main.linked_stream_id !== null) {
      const byKeyOf = await get(n.url, `/cbqs/broker-state?stream=${encodeURIComponent(`key_stream_of:owner:${main.owner}/nonce:${main.owner_nonce}`)}`);
      expect((byKeyOf.body["stream"] as { stream_id: string }).stream_id).toBe(main.linked_stream_id);
    }
  });

  it("§4.5 the schedule is the stored container's active_at(H) with its keccak digest", async () => {
    const [id] = expected.get(n.db.head()!.height.toString())!.streams.keys();
    const r = await get(n.url, `/cbqs/broker-state?stream=${id}`);
    const stored = decode(S.BaseRateSchedulesV1, decodeStateValueAs(n.db.state.read(schedulesKey())!, "StorageSlot").bytes);
    expect(r.body["schedule"]).toEqual({ active: toJson(S.BaseRateScheduleV1, stored.active), schedule_digest: toHex(scheduleDigest(stored.active)) });
  });

  it("§3 pinned reads: every retained block answers its own state; an older one is refused (410), never answered from newer state", async () => {
    const blocks = n.db.blocks({ from: 0n, to: 1000n, order: "desc", limit: 100 });
    const someStream = [...expected.get(n.db.head()!.height.toString())!.streams.keys()][0]!;
    blocks.forEach((b, i) => expect(n.db.stateAt(b.height) !== undefined, `height ${b.height}`).toBe(i <= 3));
    for (const [i, b] of blocks.entries()) {
      const want = expected.get(b.height.toString())!;
      const r = await get(n.url, `/cbqs/broker-state?stream=${someStream}&block=${toHex(b.block_hash)}`);
      if (i > 3) {
        expect(r.status, `height ${b.height}`).toBe(410);
        expect((r.body["error"] as { code: string }).code).toBe("block_not_retained");
        expect(r.body["stream"]).toBeUndefined();
        continue;
      }
      if (!want.streams.has(someStream)) {
        expect(r.status).toBe(404);
        expect(r.body).toMatchObject({ error: { code: "stream_not_found" }, height: b.height.toString(), block_hash: want.block_hash });
        continue;
      }
      expect(r.status, `height ${b.height}`).toBe(200);
      expect(r.body).toMatchObject({ height: b.height.toString(), block_hash: want.block_hash, state_root: want.state_root, effective_rent_height: want.effective_rent_height });
      expect(r.body["stream"]).toEqual(want.streams.get(someStream));
    }
  });

  it("bad and unknown inputs: 400 with a code, 404 for an unknown stream or block", async () => {
    const cases: Array<[string, number, string]> = [
      ["/cbqs/broker-state", 400, "missing_stream"],
      ["/cbqs/broker-state?stream=0x12", 400, "invalid_stream"],
      [`/cbqs/broker-state?stream=${"0x" + "zz".repeat(32)}`, 400, "invalid_stream"],
      [`/cbqs/broker-state?stream=${"0x" + "00".repeat(32)}`, 404, "stream_not_found"],
      ["/cbqs/broker-state?stream=owner:0x11/nonce:1", 400, "invalid_stream"],
      [`/cbqs/finalized-view?block=${"0x" + "11".repeat(32)}`, 404, "block_not_found"],
      ["/cbqs/finalized-view?blok=1", 400, "unknown_parameter"],
      ["/cbqs/finalized-view?block=1&block=2", 400, "duplicate_parameter"],
      ["/cbqs/finalized-view?block=%zz", 400, "invalid_query"],
    ];
    for (const [path, status, code] of cases) {
      const r = await get(n.url, path);
      expect([r.status, (r.body["error"] as { code: string }).code], path).toEqual([status, code]);
      expect(Object.keys(r.body["error"] as object)).toEqual(["code", "message"]);
    }
  });
});

describe("cbqs node: broker-state while the registry is paused (Denial of service)", () => {
  it("reads stay available while the breaker covers 0x17, with effective_rent_height frozen; CBQS instructions are rejected", async () => {
    const n = await startNode("fixtures/corpus/create-base-schedule.json");
    try {
      const config = n.node.config;
      const gov = config.governance;
      const streamId = toHex(firstStream(n));
      const pause = govTx(config.chain_id, gov, 0n, { type: "Pause", actor: REGISTRY_ADDRESS, blocks: 10n });
      const sent = await post(n.url, "/tx", toHex(pause));
      expect(sent.status, JSON.stringify([sent.body, n.logs])).toBe(200);
      const pausedAt = (await post(n.url, "/mine", "")).body;
      expect((pausedAt["receipts"] as Array<{ status: string }>)[0]!.status).toBe("ok");
      const erh = (await get(n.url, `/cbqs/broker-state?stream=${streamId}`)).body["effective_rent_height"];
      const topUp = cbqsTx(config.chain_id, new Uint8Array(20).fill(0x11), accountNonce(n, 0x11), { type: "TopUpStream", args: { stream_id: firstStream(n), amount: 1n } });
      expect((await post(n.url, "/tx", toHex(topUp))).status).toBe(200);
      const mined = (await post(n.url, "/mine", "")).body;
      expect((mined["receipts"] as Array<{ error: { name: string } | null }>)[0]!.error?.name).toBe("RegistryPaused");
      const during = await get(n.url, `/cbqs/broker-state?stream=${streamId}`);
      expect(during.status).toBe(200);
      expect(during.body["height"]).toBe(mined["height"]);
      expect(during.body["effective_rent_height"]).toBe(erh);
      expect(during.body["stream"]).toBeDefined();
    } finally {
      await n.close();
    }
  });
});

function firstStream(n: TestNode): Uint8Array {
  const want = expectedByHeight(fixtureOf(n.db, n.node.config));
  const [id] = want.get(n.db.head()!.height.toString())!.streams.keys();
  return Uint8Array.from(Buffer.from(id!.slice(2), "hex"));
}

function accountNonce(n: TestNode, byte: number): bigint {
  const r = n.db.state.read(new Uint8Array([1, ...new Uint8Array(20).fill(byte), ...new Uint8Array(33)]));
  return r === undefined ? 0n : decodeStateValueAs(r, "Account").nonce;
}

describe("cbqs node: pinned broker-state reads", () => {
  const SCHEDULE = "fixtures/corpus/create-base-schedule.json";
  const want = expectedByHeight(readFixture(SCHEDULE));

  it("a pinned broker-state answer reads the provider record from the pinned block's state, not the head's (CIP-39 §3 atomic response)", async () => {
    const n = await startNode(SCHEDULE, { retainBlocks: 8 });
    try {
      const head = n.db.head()!;
      let differs = 0;
      for (const b of n.db.blocks({ from: 1n, to: head.height, order: "asc", limit: 100 })) {
        const at = want.get(b.height.toString())!;
        for (const [id, stream] of at.streams) {
          const provider = (stream as { provider: string }).provider;
          const r = await get(n.url, `/cbqs/broker-state?stream=${id}&block=${toHex(b.block_hash)}`);
          expect(r.status, `height ${b.height}`).toBe(200);
          expect(r.body["provider"], `height ${b.height} stream ${id}`).toEqual(at.providers.get(provider));
          if (JSON.stringify(at.providers.get(provider)) !== JSON.stringify(want.get(head.height.toString())!.providers.get(provider))) differs++;
        }
      }
      expect(differs).toBeGreaterThan(0); // some pinned block's provider record is not the head's
    } finally {
      await n.close();
    }
  });

  it("the retention check comes before the answer cache: a pinned block answered once is refused (410) after it left the window (CIP-39 §3)", async () => {
    const n = await startNode(SCHEDULE, { retainBlocks: 1 });
    try {
      const pinned = n.db.head()!;
      const [id] = want.get(pinned.height.toString())!.streams.keys();
      const path = `/cbqs/broker-state?stream=${id}&block=${toHex(pinned.block_hash)}`;
      expect((await get(n.url, path)).status).toBe(200); // answered, and cached
      await post(n.url, "/mine", "");
      expect((await get(n.url, path)).status).toBe(200); // one block above it: still retained
      await post(n.url, "/mine", "");
      expect(n.db.stateAt(pinned.height)).toBeUndefined();
      const r = await get(n.url, path);
      expect(r.status).toBe(410);
      expect(r.body["error"]).toMatchObject({ code: "block_not_retained" });
      expect(r.body["stream"]).toBeUndefined();
    } finally {
      await n.close();
    }
  });
});

describe("the broker-state cache is bounded", () => {
  it("holds at most 1,024 answers and 16 blocks' parts, forgetting the oldest first", () => {
    const cache = new BrokerStateCache();
    for (const [recent, size] of [[cache.answers, 1_024], [cache.parts, 16]] as const) {
      let made = 0;
      const fetch = (key: string) => recent.get(key, () => (made++, { key }) as never);
      for (let i = 0; i < size; i++) fetch(`k${i}`);
      expect(made).toBe(size);
      fetch("k0"); // still held: the table is full, not over
      expect(made).toBe(size);
      fetch(`k${size}`); // one more: k0, the oldest, goes
      fetch("k1");
      expect(made).toBe(size + 1);
      fetch("k0");
      expect(made).toBe(size + 2);
    }
  });
});
