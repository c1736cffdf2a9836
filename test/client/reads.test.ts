// The client's reads and proofs against a real `cbqs node` on 127.0.0.1:0 — every
// value compared with the node's own store or an independent replay, never with the client's
// other answers; NotFound and Gone for what the node refuses with 404 and 410.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { toJson } from "../../src/codec/core.js";
import * as S from "../../src/codec/schema.js";
import { readFixture } from "../../src/harness/documents.js";
import { REGISTRY_ADDRESS, SCHEDULES_USER_KEY, schedulesKey, streamKey } from "../../src/engine/layout.js";
import { createClient, Gone, InvalidArgument, NotFound, type Client } from "../../src/client/index.js";
import { accountKey } from "../../state/kv/keys.js";
import { decodeStateValueAs } from "../../state/kv/value.js";
import { verifyStateProof } from "../../state/qmdb/proof.js";
import { expectedByHeight, fromHex, startNode, toHex, type TestNode } from "../node/helpers.js";
import { rejection } from "./helpers.js";

const FIXTURE = "fixtures/corpus/encrypted-pair-lifecycle.json";
const fixture = readFixture(FIXTURE);
const expected = expectedByHeight(fixture);
const ALICE = "0x1111111111111111111111111111111111111111";
const NOBODY = "0x9999999999999999999999999999999999999999";

describe("client reads against a real node", () => {
  let n: TestNode;
  let client: Client;
  beforeAll(async () => {
    n = await startNode(FIXTURE, { retainBlocks: 3 });
    client = createClient(n.url);
  });
  afterAll(() => n.close());

  it("genesis() and finalized() name the chain, the head and its view, as bigint and bytes", async () => {
    const g = await client.genesis();
    expect(toHex(g.chainInstanceId)).toBe(toHex(fixture.genesis.chain_instance_id));
    expect(toHex(g.stateRoot)).toBe(toHex(fixture.genesis.state_root));
    expect(g.height).toBe(0n);
    expect(g.chainId).toBe(fixture.genesis.config.chain_id);
    expect(g.historyStart.height).toBe(0n);
    expect(Buffer.from(g.source).equals(Buffer.from(fixture.genesis.source))).toBe(true);

    const head = n.db.head()!;
    const view = await client.finalized();
    expect(view.height).toBe(head.height);
    expect(toHex(view.blockHash)).toBe(toHex(head.block_hash));
    expect(toHex(view.stateRoot)).toBe(toHex(head.state_root));
    expect(view.view).toEqual({ chain_instance_id: fixture.genesis.chain_instance_id, height: head.height, block_hash: head.block_hash });
    const first = fixture.blocks[0]!;
    expect((await client.finalized({ block: first.block_hash })).view.height).toBe(first.height);
  });

  it("brokerState() at the head and pinned by height or block hash equals an independent replay at that height; beyond retention it is Gone", async () => {
    const head = n.db.head()!;
    const pinnedHeight = fixture.blocks.at(-2)!.height;
    for (const [height, pin] of [
      [head.height, {}],
      [pinnedHeight, { height: pinnedHeight }],
      [pinnedHeight, { block: toHex(fixture.blocks.at(-2)!.block_hash) }],
    ] as const) {
      const want = expected.get(height.toString())!;
      for (const [id, stream] of want.streams) {
        const s = await client.brokerState({ stream: id }, pin);
        expect(s.height).toBe(height);
        expect(toHex(s.blockHash)).toBe(want.block_hash);
        expect(toHex(s.stateRoot)).toBe(want.state_root);
        expect(toJson(S.StreamRecordV1, s.stream)).toEqual(stream);
        expect(s.provider === null ? null : toJson(S.ProviderRecordV1, s.provider)).toEqual(want.providers.get((stream as { provider: string }).provider) ?? null);
        expect(Object.fromEntries(Object.entries(s.bounds).map(([k, v]) => [k, v.toString()]))).toEqual(want.bounds);
        expect(s.effectiveRentHeight.toString()).toBe(want.effective_rent_height);
        const linked = (stream as { linked_stream_id: string | null; purpose: string }).linked_stream_id;
        if (linked !== null) expect(toJson(S.StreamRecordV1, (s.keyStream ?? s.mainStream)!)).toEqual(want.streams.get(linked));
      }
    }
    // Below the retained window (the head and 3 blocks before it).
    const old = fixture.blocks[0]!.height;
    const id = [...expected.get(head.height.toString())!.streams.keys()][0]!;
    const gone = await rejection(client.brokerState({ stream: id }, { height: old }));
    expect(gone).toBeInstanceOf(Gone);
    expect(gone).toMatchObject({ status: 410, code: "block_not_retained" });
    const missing = await rejection(client.brokerState({ stream: `0x${"ab".repeat(32)}` }));
    expect(missing).toBeInstanceOf(NotFound);
    expect(missing).toMatchObject({ status: 404, code: "stream_not_found" });
    // A height without a block (5 is skipped by this fixture) has nothing to pin.
    expect(await rejection(client.brokerState({ stream: id }, { height: 5n }))).toMatchObject({ name: "NotFound", code: "block_not_found" });
  });

  it("block(h) is the node's block, checked; a height without a block is NotFound; bad arguments are InvalidArgument", async () => {
    for (const b of fixture.blocks) {
      const got = await client.block(b.height);
      expect(toHex(got.blockHash)).toBe(toHex(b.block_hash));
      expect(got.transactions.map(toHex)).toEqual(b.transactions.map(toHex));
      expect(got.receipts.map((r) => [toHex(r.txHash), r.status, r.cycles])).toEqual(b.receipts.map((r) => [toHex(r.tx_hash), r.status, r.cycles]));
      expect(toHex(got.parentHash)).toBe(toHex(n.db.blockByHeight(b.height)!.parent_hash));
    }
    expect(await rejection(client.block(5n))).toBeInstanceOf(NotFound);
    expect(await rejection(client.block(-1n))).toBeInstanceOf(InvalidArgument);
    expect(await rejection(client.accountProof("0x1234"))).toBeInstanceOf(InvalidArgument);
    expect(() => createClient("ftp://x")).toThrow(InvalidArgument);
  });

  it("accountProof/storageProof return the head's verified values; an absent account is proven absent", async () => {
    const head = n.db.head()!;
    const alice = await client.accountProof(ALICE);
    const stored = decodeStateValueAs(n.db.state.read(accountKey(fromHex(ALICE)))!, "Account");
    expect(alice.account).toEqual({ nonce: stored.nonce, balance: stored.balance });
    expect(alice.height).toBe(head.height);
    expect(toHex(alice.key)).toBe(toHex(accountKey(fromHex(ALICE))));
    expect(verifyStateProof(alice.proof, head.state_root)).toEqual({ valid: true });

    const nobody = await client.accountProof(NOBODY);
    expect(nobody.value).toBeNull();
    expect(nobody.account).toBeNull();

    const schedules = await client.storageProof(REGISTRY_ADDRESS, SCHEDULES_USER_KEY);
    expect(toHex(schedules.key)).toBe(toHex(schedulesKey()));
    expect(toHex(schedules.data!)).toBe(toHex(decodeStateValueAs(n.db.state.read(schedulesKey())!, "StorageSlot").bytes));
    const actor = await client.actorProof(REGISTRY_ADDRESS);
    expect(actor.value).toBeNull(); // CBQS keeps no Actor records
  });

  it("multiProof returns one verified entry per key in the order asked; a key without a value is NotFound", async () => {
    const head = n.db.head()!;
    const streamId = [...expected.get(head.height.toString())!.streams.keys()][0]!;
    const keys = [streamKey(fromHex(streamId)), accountKey(fromHex(ALICE)), schedulesKey()];
    const multi = await client.multiProof(keys);
    expect(multi.entries.map((e) => toHex(e.key))).toEqual(keys.map(toHex));
    expect(multi.entries.map((e) => toHex(e.value))).toEqual(keys.map((k) => toHex(n.db.state.read(k)!)));
    expect(await rejection(client.multiProof([accountKey(fromHex(NOBODY))]))).toMatchObject({ name: "NotFound", code: "key_not_found" });
  });

  it("txProof/receiptProof of every transaction are its block's, verified; an unknown hash is NotFound", async () => {
    for (const b of fixture.blocks) {
      for (const [i, r] of b.receipts.entries()) {
        const tx = await client.txProof(r.tx_hash);
        expect([tx.height, tx.txIndex, toHex(tx.transaction), toHex(tx.txRoot)]).toEqual([b.height, i, toHex(b.transactions[i]!), toHex(b.tx_root)]);
        const rc = await client.receiptProof(toHex(r.tx_hash));
        expect([rc.height, rc.txIndex, rc.receipt.status, rc.receipt.cycles, toHex(rc.receiptRoot)]).toEqual([b.height, i, r.status, r.cycles, toHex(b.receipt_root)]);
      }
    }
    const unknown = await rejection(client.txProof(`0x${"ab".repeat(32)}`));
    expect(unknown).toBeInstanceOf(NotFound);
    expect(unknown).toMatchObject({ code: "tx_not_found" });
  });
});
