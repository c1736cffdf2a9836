// Reads by key — GET /account/{address} (?height= pinned, 410 beyond retention,
// ?proof=true verified against the answer's own state_root), /cbqs/stream/{id},
// /cbqs/provider/{address} (the codec's JSON mapping), /tx/{hash} (pending, included with its
// receipt and decoded events, dropped, 404). Every answer is checked against an independent
// replay of the node's chain through the engine's read views, and none is torn by blocks
// produced while it is asked.
import { describe, expect, it } from "vitest";
import { txHash } from "../../src/chain/envelope.js";
import { readFixture } from "../../src/harness/documents.js";
import { Replay } from "../../src/harness/replay.js";
import { ix } from "../../src/gas/builder.js";
import { accountKey } from "../../state/kv/keys.js";
import { verifyStateProof } from "../../state/qmdb/proof.js";
import { address, cbqsTx, expectedByHeight, fixtureOf, fromHex, get, post, startNode, toHex, transferTx } from "./helpers.js";

const FIXTURE = "fixtures/corpus/create-quote.json";
const CHAIN = 7n;
const A = address(0x11);
const B = address(0x22);

/** Accounts of `who` after every block of the node's chain, from an independent replay. */
function accountsByHeight(n: { node: { db: Parameters<typeof fixtureOf>[0]; config: Parameters<typeof fixtureOf>[1] } }, who: Uint8Array): Map<string, { nonce: string; balance: string }> {
  const fixture = fixtureOf(n.node.db, n.node.config);
  const { replay } = Replay.start(fixture);
  const at = () => {
    const a = replay.chain.account(who);
    return { nonce: a.nonce.toString(), balance: a.balance.toString() };
  };
  const out = new Map([["0", at()]]);
  fixture.blocks.forEach((b, i) => {
    replay.block(i);
    out.set(b.height.toString(), at());
  });
  return out;
}

describe("GET /account, /cbqs/stream, /cbqs/provider", () => {
  it("each at the head and pinned with ?height= (a skipped height reads the block below it) or ?block=, as an independent replay has them", async () => {
    const n = await startNode(FIXTURE);
    try {
      const expected = expectedByHeight(fixtureOf(n.node.db, n.node.config));
      const accounts = accountsByHeight(n, A);
      // Heights 2–4 have no block: they read block 1.
      for (const [h, block] of [["0", "0"], ["1", "1"], ["3", "1"], ["5", "5"], ["6", "6"], [undefined, "6"]] as const) {
        const q = h === undefined ? "" : `?height=${h}`;
        const e = expected.get(block)!;
        const account = await get(n.url, `/account/${toHex(A)}${q}`);
        const hash = toHex(n.node.db.blockByHeight(BigInt(block))!.block_hash);
        expect(account.body, q).toMatchObject({ height: block, block_hash: hash, state_root: e.state_root, address: toHex(A), ...accounts.get(block) });
        // pending and next_nonce describe the pool now: at the head only.
        expect("next_nonce" in account.body, q).toBe(block === "6");
        for (const [id, stream] of e.streams) {
          expect((await get(n.url, `/cbqs/stream/${id}${q}`)).body, q).toEqual({ height: block, block_hash: hash, state_root: e.state_root, stream });
        }
        for (const [provider, record] of e.providers) {
          expect((await get(n.url, `/cbqs/provider/${provider}${q}`)).body, q).toEqual({ height: block, block_hash: hash, state_root: e.state_root, provider: record });
        }
        const pinned = await get(n.url, `/account/${toHex(A)}?block=${hash}`);
        expect(pinned.body).toMatchObject({ height: block, ...accounts.get(block) });
      }
      // A stream named the CLI's way (CIP-39 §4.1), percent-encoded into the path.
      const [id, stream] = [...expected.get("6")!.streams][0]!;
      const { owner, owner_nonce } = stream as { owner: string; owner_nonce: string };
      expect((await get(n.url, `/cbqs/stream/${encodeURIComponent(`owner:${owner}/nonce:${owner_nonce}`)}`)).body["stream"]).toEqual(expected.get("6")!.streams.get(id));
      // An account never written reads 0 and 0, as the engine reads it.
      expect((await get(n.url, `/account/${toHex(address(0x77))}`)).body).toMatchObject({ nonce: "0", balance: "0", pending: 0, next_nonce: "0" });
    } finally {
      await n.close();
    }
  });

  it("pending and next_nonce count the sender's queued transactions; ?proof=true adds the account's state proof, which verifies against the answer's state_root", async () => {
    const n = await startNode(FIXTURE);
    try {
      const before = (await get(n.url, `/account/${toHex(A)}`)).body;
      const nonce = BigInt(before["nonce"] as string);
      for (const k of [0n, 1n]) expect((await post(n.url, "/tx", toHex(transferTx(CHAIN, A, nonce + k, B, 3n)))).status).toBe(200);
      expect((await get(n.url, `/account/${toHex(A)}`)).body).toMatchObject({ nonce: nonce.toString(), pending: 2, next_nonce: (nonce + 2n).toString() });
      await post(n.url, "/mine", "");
      const proven = (await get(n.url, `/account/${toHex(A)}?proof=true`)).body;
      expect(proven).toMatchObject({ nonce: (nonce + 2n).toString(), pending: 0 });
      expect(verifyStateProof(proven["proof"] as never, fromHex(proven["state_root"] as string))).toMatchObject({ valid: true });
      expect((proven["proof"] as { key: string }).key).toBe(toHex(accountKey(A)));
      // The same proof GET /proof/account serves.
      expect((await get(n.url, `/proof/account/${toHex(A)}`)).body["proof"]).toEqual(proven["proof"]);
      const plain = await get(n.url, `/account/${toHex(A)}?proof=false`);
      expect(plain.status).toBe(200);
      expect(plain.body).toMatchObject({ nonce: (nonce + 2n).toString() });
      expect(plain.body["proof"]).toBeUndefined();
    } finally {
      await n.close();
    }
  });

  it("refusals: 410 beyond --retain-blocks, 404 above the head or for an absent record (naming the block), 400 for malformed input", async () => {
    const n = await startNode({ kind: "genesis", source: readFixture("fixtures/corpus/transfers.json").genesis.source }, { retainBlocks: 2 });
    try {
      for (let i = 0; i < 5; i++) await post(n.url, "/mine", "");
      const code = async (path: string) => {
        const r = await get(n.url, path);
        return [r.status, (r.body["error"] as { code: string } | undefined)?.code];
      };
      const head = (await get(n.url, "/cbqs/finalized-view")).body;
      expect(await code(`/account/${toHex(A)}?height=2`)).toEqual([410, "block_not_retained"]);
      expect((await get(n.url, `/account/${toHex(A)}?height=2`)).body).toMatchObject({ height: "5", block_hash: head["block_hash"] });
      expect(await code(`/account/${toHex(A)}?height=3`)).toEqual([200, undefined]);
      expect(await code(`/cbqs/provider/${toHex(B)}?height=1`)).toEqual([410, "block_not_retained"]);
      expect(await code(`/account/${toHex(A)}?height=6`)).toEqual([404, "block_not_found"]);
      expect(await code(`/account/${toHex(A)}?block=0x${"ab".repeat(32)}`)).toEqual([404, "block_not_found"]);
      const absent = await get(n.url, `/cbqs/stream/0x${"ab".repeat(32)}`);
      expect([absent.status, absent.body]).toEqual([404, { error: { code: "stream_not_found", message: `no stream 0x${"ab".repeat(32)} at height 5` }, height: "5", block_hash: head["block_hash"], state_root: head["state_root"] }]);
      expect(await code(`/cbqs/provider/${toHex(B)}`)).toEqual([404, "provider_not_found"]);
      const cases: Array<[string, string]> = [
        [`/account/0x1234`, "invalid_address"],
        [`/account/${toHex(A)}?height=01`, "invalid_height"],
        [`/account/${toHex(A)}?height=-1`, "invalid_height"],
        [`/account/${toHex(A)}?height=18446744073709551616`, "invalid_height"],
        [`/account/${toHex(A)}?height=1&block=${head["block_hash"]}`, "invalid_query"],
        [`/account/${toHex(A)}?proof=yes`, "invalid_proof"],
        [`/account/${toHex(A)}?height=4&proof=true`, "invalid_proof"],
        [`/account/${toHex(A)}?owner=x`, "unknown_parameter"],
        [`/cbqs/stream/0x12`, "invalid_stream"],
        [`/cbqs/stream/owner:nobody`, "invalid_stream"],
        [`/cbqs/stream/%zz`, "invalid_stream"],
        [`/cbqs/provider/dev0`, "invalid_address"],
        [`/tx/0x12`, "invalid_tx_hash"],
      ];
      for (const [path, c] of cases) expect(await code(path), path).toEqual([400, c]);
      expect((await get(n.url, `/account/${toHex(A)}?height=01`)).body["error"]).toEqual({
        code: "invalid_height",
        message: 'height must be a block height: decimal digits without sign or leading zeros (got "01")',
      });
      // The proof at the head is still served with ?height= naming the head.
      expect(await code(`/account/${toHex(A)}?height=5&proof=true`)).toEqual([200, undefined]);
    } finally {
      await n.close();
    }
  });

  it("answers are never torn: while blocks that each move A's balance are produced, every answer's balance is the one of the block it names", async () => {
    const n = await startNode({ kind: "genesis", source: readFixture("fixtures/corpus/transfers.json").genesis.source });
    try {
      const start = BigInt((await get(n.url, `/account/${toHex(A)}`)).body["balance"] as string);
      const answers: Array<Record<string, unknown>> = [];
      const reading = (async () => {
        for (let i = 0; i < 150; i++) answers.push((await get(n.url, `/account/${toHex(A)}`)).body);
      })();
      for (let k = 0n; k < 30n; k++) {
        await post(n.url, "/tx", toHex(transferTx(CHAIN, A, k, B, 1n + k)));
        await post(n.url, "/mine", "");
      }
      await reading;
      // Block h holds A's transfer of h: after it, A has paid 1 + 2 + … + h.
      for (const a of answers) {
        const h = BigInt(a["height"] as string);
        expect(BigInt(a["balance"] as string), `height ${h}`).toBe(start - (h * (h + 1n)) / 2n);
        expect(a["nonce"]).toBe(h.toString());
        expect(a["block_hash"]).toBe(toHex(n.node.db.blockByHeight(h)!.block_hash));
      }
      expect(new Set(answers.map((a) => a["height"])).size).toBeGreaterThan(1);
    } finally {
      await n.close();
    }
  });
});

describe("GET /tx/{hash}", () => {
  it("pending (its place in the pool), then included: block height and hash, index, sender, receipt with its message, and the receipt's events decoded (§19)", async () => {
    const n = await startNode(FIXTURE);
    try {
      const stream = [...expectedByHeight(fixtureOf(n.node.db, n.node.config)).get("6")!.streams.keys()][0]!;
      const nonce = BigInt((await get(n.url, `/account/${toHex(A)}`)).body["nonce"] as string);
      const topUp = cbqsTx(CHAIN, A, nonce, ix.topUp(fromHex(stream), 5n));
      const zero = cbqsTx(CHAIN, A, nonce + 1n, ix.topUp(fromHex(stream), 0n)); // rejected: InvalidAmount
      for (const tx of [topUp, zero]) expect((await post(n.url, "/tx", toHex(tx))).status).toBe(200);
      const pending = (await get(n.url, `/tx/${toHex(txHash(zero))}`)).body;
      expect(pending).toMatchObject({ height: "6", tx_hash: toHex(txHash(zero)), status: "pending", position: 1, from: toHex(A), nonce: (nonce + 1n).toString(), kind: "system" });
      const mined = (await post(n.url, "/mine", "")).body;
      const receipt = (mined["receipts"] as Array<{ events: Array<{ topic: string; payload: string }> }>)[0]!;
      // A top-up of 5 does not cover the stream: topped_up, then its status edge (§19), each naming the stream.
      expect(receipt.events.map((e) => e.topic)).toEqual(["cbqs.stream.topped_up", "cbqs.stream.suspended"]);
      const included = (await get(n.url, `/tx/${toHex(txHash(topUp))}`)).body;
      expect(included).toEqual({
        height: "7",
        block_hash: mined["block_hash"],
        state_root: mined["state_root"],
        tx_hash: toHex(txHash(topUp)),
        status: "included",
        index: 0,
        from: toHex(A),
        nonce: nonce.toString(),
        kind: "system",
        receipt: (mined["receipts"] as unknown[])[0],
        events: receipt.events.map((e) => ({ emitter: "0x0000000000000000000000000000000000000017", topic: e.topic, payload: stream, stream_id: stream })),
      });
      const rejected = (await get(n.url, `/tx/${toHex(txHash(zero))}`)).body;
      expect(rejected).toMatchObject({ status: "included", index: 1, receipt: { status: "rejected", error: { name: "InvalidAmount", message: expect.any(String) } }, events: [] });
      expect(rejected["receipt"]).toEqual((mined["receipts"] as unknown[])[1]);
      // Providers' events name the provider.
      const registered = (await get(n.url, `/tx/${toHex(txHash(n.node.db.blockByHeight(1n)!.transactions[0]!))}`)).body;
      expect((registered["events"] as Array<Record<string, string>>)[0]).toMatchObject({ topic: "cbqs.provider.registered", provider: expect.stringMatching(/^0x[0-9a-f]{40}$/) });
      const unknown = await get(n.url, `/tx/0x${"cd".repeat(32)}`);
      expect([unknown.status, (unknown.body["error"] as { code: string }).code, unknown.body["height"]]).toEqual([404, "tx_not_found", "7"]);
    } finally {
      await n.close();
    }
  });

  it("a transaction left out of a block is `dropped`, with the block it was left out of and the reason", async () => {
    const n = await startNode({ kind: "genesis", source: readFixture("fixtures/corpus/fee-insufficient-balance.json").genesis.source });
    try {
      const poor = cbqsTx(CHAIN, address(0x33), 0n, ix.registerProvider());
      expect((await post(n.url, "/tx", toHex(poor))).status).toBe(200);
      await post(n.url, "/mine", "");
      expect((await get(n.url, `/tx/${toHex(txHash(poor))}`)).body).toMatchObject({
        height: "1",
        status: "dropped",
        dropped_at: "1",
        reason: `${toHex(address(0x33))} holds 0, less than the fee at the reservation 570 of RegisterProvider`,
      });
    } finally {
      await n.close();
    }
  });
});
