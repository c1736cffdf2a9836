// The devnet: POST /tx (hex, JSON string or binary CBOR; envelope, chain id and nonce checked),
// POST /mine (next height, or skipping to ?height=), block production every --block-time seconds,
// a fresh chain from --genesis, and a restart continuing from the store. Produced blocks are
// ordinary chain blocks: the follower's replay checks of the feed would catch any difference.
import { describe, expect, it, vi } from "vitest";
import { keccak256 } from "../../src/crypto/hash.js";
import { accountKey } from "../../state/kv/keys.js";
import { decodeStateValueAs } from "../../state/kv/value.js";
import { readFixture } from "../../src/harness/documents.js";
import { CbqsNode } from "../../src/chain-node/chain-node.js";
import { PLATFORM_ADDRESS, REGISTRY_ADDRESS, ZERO_ADDRESS } from "../../src/engine/layout.js";
import { Chain } from "../../src/engine/chain.js";
import { ix } from "../../src/gas/builder.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";
import { expectedByHeight, fixtureOf, get, post, startNode, toHex, transferTx, address, cbqsTx } from "./helpers.js";

const GENESIS = readFixture("fixtures/corpus/transfers.json").genesis.source;
const CHAIN = 7n;
const A = address(0x11);

describe("cbqs node: devnet", () => {
  it("POST /tx names every accepted body form when it refuses one; malformed JSON is invalid_json", async () => {
    const n = await startNode({ kind: "genesis", source: GENESIS });
    try {
      const bad = await post(n.url, "/tx", "not hex");
      expect(bad.body).toMatchObject({ error: { code: "invalid_transaction" } });
      expect((bad.body["error"] as { message: string }).message).toMatch(/JSON string.*"envelope".*application\/cbor or application\/octet-stream/);
      expect((await post(n.url, "/tx", "{\"envelope\": ")).body).toMatchObject({ error: { code: "invalid_json" } });
      expect((await post(n.url, "/tx", JSON.stringify({ tx: "0x00" }))).body).toMatchObject({ error: { code: "invalid_transaction" } });
    } finally {
      await n.close();
    }
  });

  it("POST /tx takes hex, a JSON string, cbqs tx --json's object or binary CBOR; POST /mine includes them in order with their receipts", async () => {
    const n = await startNode({ kind: "genesis", source: GENESIS });
    try {
      expect(n.node.head().height).toBe(0n);
      const txs = [0n, 1n, 2n, 3n].map((nonce) => transferTx(CHAIN, A, nonce, address(0x22), 5n + nonce));
      const sent = [
        await post(n.url, "/tx", toHex(txs[0]!)),
        await post(n.url, "/tx", JSON.stringify(toHex(txs[1]!)), "application/json"),
        await post(n.url, "/tx", txs[2]!, "application/cbor"),
        await post(n.url, "/tx", JSON.stringify({ envelope: toHex(txs[3]!), tx_hash: "0x00" }), "application/json"),
      ];
      for (const [i, r] of sent.entries()) {
        expect(r.status, JSON.stringify(r.body)).toBe(200);
        expect(r.body).toMatchObject({ height: "0", nonce: String(i), pending: i + 1 });
      }
      const mined = await post(n.url, "/mine", "");
      expect(mined.body).toMatchObject({ height: "1", dropped: [] });
      const receipts = mined.body["receipts"] as Array<{ tx_hash: string; status: string }>;
      expect(receipts.map((r) => r.tx_hash)).toEqual(sent.map((s) => s.body["tx_hash"]));
      expect(receipts.every((r) => r.status === "ok")).toBe(true);
      // Empty block; then a skip to height 10 (the heights between have no block).
      expect((await post(n.url, "/mine", "")).body["height"]).toBe("2");
      expect((await post(n.url, "/mine?height=10", "")).body["height"]).toBe("10");
      expect(n.db.blockByHeight(5n)).toBeUndefined();
      expect((await post(n.url, "/mine?height=10", "")).body).toMatchObject({ error: { code: "invalid_height" } });
      // Blocks produced on request are in the node's log like the timer's (docs/guides/run-a-devnet.md "Running it").
      expect(n.logs.filter((l) => l["msg"] === "block").map((l) => [l["height"], l["txs"]])).toEqual([["1", sent.length], ["2", 0], ["10", 0]]);
      // The produced chain replays with every root and block hash matching (an independent engine run).
      expect(() => expectedByHeight(fixtureOf(n.db, n.node.config))).not.toThrow();
      // Timestamps: genesis timestamp + height × block_time_seconds (deterministic).
      const g = n.node.config;
      expect(n.db.blockByHeight(10n)!.timestamp).toBe(g.timestamp + 10n * g.block_time_seconds);
    } finally {
      await n.close();
    }
  });

  it("POST /tx refuses bad bytes, another chain's envelope and a wrong nonce with 400 and a code", async () => {
    const n = await startNode({ kind: "genesis", source: GENESIS });
    try {
      const cases: Array<[string | Uint8Array, string, string]> = [
        ["hello", "text/plain", "invalid_transaction"],
        ["0x00", "text/plain", "invalid_transaction"],
        [toHex(transferTx(8n, A, 0n, A, 1n)), "text/plain", "invalid_transaction"],
        [toHex(transferTx(CHAIN, A, 1n, A, 1n)), "text/plain", "invalid_nonce"],
        [new Uint8Array([0xa7, 0x00]), "application/cbor", "invalid_transaction"],
        ["[1]", "application/json", "invalid_transaction"],
      ];
      for (const [body, type, code] of cases) {
        const r = await post(n.url, "/tx", body, type);
        expect([r.status, (r.body["error"] as { code: string }).code], String(body).slice(0, 40)).toEqual([400, code]);
      }
      expect(n.node.pending).toBe(0);
    } finally {
      await n.close();
    }
  });

  it("after a rejected transaction the sender's next nonce is accepted by POST /tx and mined: A gets a rejected receipt, B an ok one", async () => {
    const n = await startNode("fixtures/corpus/create-base-schedule.json");
    try {
      const stream = [...expectedByHeight(fixtureOf(n.db, n.node.config)).get("3")!.streams.keys()][0]!;
      const nonce = accountNonce(n.node, A);
      // TopUpStream with amount 0 is rejected (InvalidAmount): it is included and uses its nonce.
      const a = cbqsTx(CHAIN, A, nonce, { type: "TopUpStream", args: { stream_id: Uint8Array.from(Buffer.from(stream.slice(2), "hex")), amount: 0n } });
      const b = transferTx(CHAIN, A, nonce + 1n, address(0x22), 1n);
      for (const tx of [a, b]) expect((await post(n.url, "/tx", toHex(tx))).status).toBe(200);
      const mined = (await post(n.url, "/mine", "")).body;
      const receipts = mined["receipts"] as Array<{ tx_hash: string; status: string; error: { name: string; message?: string } | null }>;
      expect(receipts.map((r) => [r.tx_hash, r.status])).toEqual([
        [toHex(keccakOf(a)), "rejected"],
        [toHex(keccakOf(b)), "ok"],
      ]);
      expect(receipts[0]!.error).toMatchObject({ name: "InvalidAmount" });
      expect(receipts[0]!.error!.message).toBeTruthy();
      expect(mined["dropped"]).toEqual([]);
      expect(accountNonce(n.node, A)).toBe(nonce + 2n);
      // The rejected envelope's nonce is used: sending it again is refused.
      expect((await post(n.url, "/tx", toHex(a))).body).toMatchObject({ error: { code: "invalid_nonce" } });
      expect(() => expectedByHeight(fixtureOf(n.db, n.node.config))).not.toThrow();
    } finally {
      await n.close();
    }
  });

  it("POST /tx refuses a keyless sender (custody 0x…17, 0x…18, the zero address) with 400 not_includable; nothing is queued", async () => {
    const n = await startNode("fixtures/corpus/create-base-schedule.json");
    try {
      for (const keyless of [REGISTRY_ADDRESS, PLATFORM_ADDRESS, ZERO_ADDRESS]) {
        const r = await post(n.url, "/tx", toHex(transferTx(CHAIN, keyless, 0n, A, 1n)));
        expect(r.status).toBe(400);
        expect(r.body).toEqual({ error: { code: "not_includable", message: `${toHex(keyless)} is a keyless system account and cannot send transactions` } });
      }
      expect(n.node.pending).toBe(0);
    } finally {
      await n.close();
    }
  });

  it("transactions excluded for an unpayable reservation fee are all dropped with their reasons in one mining, in two dry runs; the rest are mined", async () => {
    // cycle_price 1: a RegisterProvider's fee at the reservation is 570 here; U1 and U2 hold nothing.
    const n = await startNode({ kind: "genesis", source: readFixture("fixtures/corpus/fee-insufficient-balance.json").genesis.source });
    try {
      const [rich, u1, u2] = [address(0x11), address(0x33), address(0x34)];
      const u1a = cbqsTx(CHAIN, u1, 0n, ix.registerProvider());
      const u1b = cbqsTx(CHAIN, u1, 1n, ix.setProviderStatus("Draining")); // excluded as well, and its nonce 1 is skipped
      const u2a = cbqsTx(CHAIN, u2, 0n, ix.registerProvider());
      const r1 = transferTx(CHAIN, rich, 0n, address(0x22), 5n);
      const r2 = transferTx(CHAIN, rich, 1n, address(0x22), 6n);
      for (const tx of [u1a, r1, u1b, u2a, r2]) expect((await post(n.url, "/tx", toHex(tx))).status).toBe(200);
      const resume = vi.spyOn(Chain, "resume");
      let mined: Record<string, unknown>;
      try {
        mined = (await post(n.url, "/mine", "")).body;
        expect(resume).toHaveBeenCalledTimes(2);
      } finally {
        resume.mockRestore();
      }
      expect((mined["receipts"] as Array<{ tx_hash: string; status: string }>).map((r) => [r.tx_hash, r.status])).toEqual([
        [toHex(keccakOf(r1)), "ok"],
        [toHex(keccakOf(r2)), "ok"],
      ]);
      const reservation = (who: Uint8Array) => `${toHex(who)} holds 0, less than the fee at the reservation 570 of RegisterProvider`;
      expect(mined["dropped"]).toEqual([
        { tx_hash: toHex(keccakOf(u1a)), reason: reservation(u1) },
        { tx_hash: toHex(keccakOf(u1b)), reason: "nonce 1 is not the sender's account nonce 0" },
        { tx_hash: toHex(keccakOf(u2a)), reason: reservation(u2) },
      ]);
      expect(n.node.pending).toBe(0);
      expect([accountNonce(n.node, u1), accountNonce(n.node, u2), accountNonce(n.node, rich)]).toEqual([0n, 0n, 2n]);
      expect(() => expectedByHeight(fixtureOf(n.db, n.node.config))).not.toThrow();
    } finally {
      await n.close();
    }
  });

  it("a dropped transaction that funded a later sender in the dry run is caught by one more run: that sender is dropped too", async () => {
    const n = await startNode({ kind: "genesis", source: readFixture("fixtures/corpus/fee-insufficient-balance.json").genesis.source });
    try {
      // P holds 600: its CreateStream is excluded (its fee at the reservation is more), so its
      // transfer of 600 to U (accepted in the first run) is dropped, and U, funded only by it,
      // cannot pay RegisterProvider's 570 after all.
      const [p, u] = [address(0x22), address(0x35)];
      const create = cbqsTx(CHAIN, p, 0n, ix.createStream({ initial_escrow: 1n }));
      const fund = transferTx(CHAIN, p, 1n, u, 600n);
      const register = cbqsTx(CHAIN, u, 0n, ix.registerProvider());
      for (const tx of [create, fund, register]) expect((await post(n.url, "/tx", toHex(tx))).status).toBe(200);
      const resume = vi.spyOn(Chain, "resume");
      let mined: Record<string, unknown>;
      try {
        mined = (await post(n.url, "/mine", "")).body;
        expect(resume).toHaveBeenCalledTimes(3);
      } finally {
        resume.mockRestore();
      }
      expect(mined["receipts"]).toEqual([]);
      expect((mined["dropped"] as Array<{ tx_hash: string; reason: string }>).map((d) => [d.tx_hash, d.reason.replace(/\d+ of \w+$/, "…")])).toEqual([
        [toHex(keccakOf(create)), `${toHex(p)} holds 600, less than the fee at the reservation …`],
        [toHex(keccakOf(fund)), "nonce 1 is not the sender's account nonce 0"],
        [toHex(keccakOf(register)), `${toHex(u)} holds 0, less than the fee at the reservation …`],
      ]);
      expect([accountNonce(n.node, p), accountNonce(n.node, u)]).toEqual([0n, 0n]);
    } finally {
      await n.close();
    }
  });

  it("--block-time produces blocks on its own; closing stops production", async () => {
    const n = await startNode({ kind: "genesis", source: GENESIS }, { blockTime: 0.02 });
    for (let i = 0; i < 500 && n.node.head().height < 3n; i++) await new Promise((r) => setTimeout(r, 10));
    const height = n.node.head().height;
    await n.close();
    expect(height).toBeGreaterThanOrEqual(3n);
    expect(() => n.db.head()).toThrow(/closed/);
  });

  it("--block-time: a block that cannot be produced is logged and retried at every tick; the node keeps serving", async () => {
    const n = await startNode({ kind: "genesis", source: GENESIS }, { blockTime: 0.02 });
    try {
      // The last height whose timestamp fits in a u64: every later block's timestamp overflows.
      const g = n.node.config;
      const last = ((1n << 64n) - 1n - g.timestamp) / g.block_time_seconds;
      expect((await post(n.url, `/mine?height=${last}`, "")).body["height"]).toBe(last.toString());
      for (let i = 0; i < 500 && n.logs.filter((l) => l["msg"] === "block production failed").length < 2; i++) await new Promise((r) => setTimeout(r, 10));
      const failures = n.logs.filter((l) => l["msg"] === "block production failed");
      expect(failures.length).toBeGreaterThanOrEqual(2);
      expect(String(failures[0]!["error"])).toMatch(/exceeds u64/);
      expect(n.node.head().height).toBe(last);
      expect((await get(n.url, "/cbqs/finalized-view")).body["height"]).toBe(last.toString());
    } finally {
      await n.close();
    }
  });

  it("a restart on the same store continues the chain; a different genesis is refused", () => {
    const db = new MemoryChainDb();
    const first = CbqsNode.open(db, { kind: "genesis", source: GENESIS });
    first.mine();
    first.mine();
    const again = CbqsNode.open(db, { kind: "store" });
    expect(again.head().height).toBe(2n);
    expect(again.mine().block.height).toBe(3n);
    expect(CbqsNode.open(db, { kind: "genesis", source: GENESIS }).head().height).toBe(3n);
    const other = readFixture("fixtures/corpus/create-quote.json").genesis.source;
    expect(() => CbqsNode.open(db, { kind: "genesis", source: other })).toThrow(/the store holds another chain/);
    expect(() => CbqsNode.open(new MemoryChainDb(), { kind: "store" })).toThrow(/the store is empty/);
  });

  it("a restart with the same fixture keeps the stored blocks and imports the rest", () => {
    const fixture = readFixture("fixtures/corpus/pause-accounting.json");
    const db = new MemoryChainDb();
    const partial = { ...fixture, blocks: fixture.blocks.slice(0, 4) };
    CbqsNode.open(db, { kind: "fixture", fixture: partial });
    expect(db.head()!.height).toBe(fixture.blocks[3]!.height);
    const node = CbqsNode.open(db, { kind: "fixture", fixture });
    expect(toHex(node.head().block_hash)).toBe(toHex(fixture.blocks.at(-1)!.block_hash));
  });
});

const keccakOf = (b: Uint8Array) => keccak256(b);

function accountNonce(node: CbqsNode, a: Uint8Array): bigint {
  const bytes = node.db.state.read(accountKey(a));
  return bytes === undefined ? 0n : decodeStateValueAs(bytes, "Account").nonce;
}
