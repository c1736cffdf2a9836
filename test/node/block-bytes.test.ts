// Blocks and the pool bounded in bytes as well as by count (docs/guides/run-a-devnet.md "Devnet"), and every
// answer that holds a whole block bounded with them: a transaction above the envelope bound is
// refused at POST /tx, the pool refuses what it has no room for (counting transactions still
// waiting for their turn), a block takes the pool's first transactions while they fit, and the
// largest blocks the node produces stay readable through GET /block, the feed, GET /fixture and
// cbqs follow.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { encodeEnvelope, MAX_ENVELOPE_BYTES, MAX_SYSTEM_PAYLOAD_BYTES, txHash } from "../../src/chain/envelope.js";
import { readFixture } from "../../src/harness/documents.js";
import { MAX_BLOCK_BYTES, MAX_POOL_BYTES } from "../../src/chain-node/chain-node.js";
import { MAX_PAGE_BYTES } from "../../src/node/replication.js";
import { cbqs } from "../cli/program.js";
import { address, post, postFrom, startNode, toHex, waitFor } from "./helpers.js";

const GENESIS = readFixture("fixtures/corpus/transfers.json").genesis.source;
const CHAIN = 7n;
const A = address(0x11);
const dir = mkdtempSync(join(tmpdir(), "cbqs-block-bytes-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A CBQS system transaction of A whose payload is `size` bytes (not an instruction: included, rejected). */
const sized = (nonce: bigint, size: number): Uint8Array =>
  encodeEnvelope({ chain_id: CHAIN, nonce, tx: { from: A, body: { kind: "system", opcode: 218, payload: new Uint8Array(size).fill(Number(nonce % 250n) + 1) } } });

const octets = (base: string, tx: Uint8Array) => post(base, "/tx", tx, "application/octet-stream");
const error = (r: { body: Record<string, unknown> }) => r.body["error"];

describe("a block and the pool in bytes", () => {
  it("a block takes the pool's first transactions while they fit its bytes, the next waits; the pool refuses past its bytes (503 tx_pool_full); a transaction no block could take is 413 tx_too_large", async () => {
    const size = sized(0n, 300).length;
    const blockBytes = Math.floor(2.5 * size);
    const n = await startNode({ kind: "genesis", source: GENESIS }, { production: { blockBytes, poolBytes: 5 * size } });
    try {
      const big = sized(0n, 3 * size);
      const refused = await octets(n.url, big);
      expect([refused.status, error(refused)]).toEqual([413, { code: "tx_too_large", message: `a transaction envelope is at most ${blockBytes} bytes (this one has ${big.length})` }]);
      // The same bound whatever the body's form.
      expect((await post(n.url, "/tx", toHex(big))).status).toBe(413);
      for (const k of [0n, 1n, 2n, 3n, 4n]) expect((await octets(n.url, sized(k, 300))).body).toMatchObject({ pending: Number(k) + 1 });
      const full = await octets(n.url, sized(5n, 300));
      expect([full.status, error(full)]).toEqual([503, { code: "tx_pool_full", message: `the pool holds ${5 * size} bytes of transactions and takes at most ${5 * size}; mine a block first` }]);
      await post(n.url, "/mine?blocks=3", "");
      expect([1n, 2n, 3n].map((h) => n.db.blockByHeight(h)!.transactions.map((t) => t[t.length - 1]))).toEqual([[1, 2], [3, 4], [5]]);
      expect((await octets(n.url, sized(5n, 300))).status).toBe(200);
    } finally {
      await n.close();
    }
  });

  it("transactions waiting for their turn behind a batch count against the pool's bytes: one more is refused at once, those waiting are queued when the batch ends", async () => {
    const size = sized(0n, 300).length;
    const n = await startNode({ kind: "genesis", source: GENESIS }, { production: { blockBytes: 4 * size, poolBytes: 3 * size } });
    const batch = postFrom("127.0.0.1", `${n.url}/mine?blocks=100000`);
    try {
      await waitFor("the batch running", () => n.node.head().height > 0n);
      const waiting = [0n, 1n, 2n].map((k) => octets(n.url, sized(k, 300)));
      const full = await octets(n.url, sized(3n, 300));
      expect([full.status, error(full)]).toEqual([503, { code: "tx_pool_full", message: `the pool holds ${3 * size} bytes of transactions and takes at most ${3 * size}; mine a block first` }]);
      expect(n.node.pending).toBe(0);
      batch.hangUp();
      expect((await Promise.all(waiting)).map((r) => [r.status, r.body["pending"]])).toEqual([
        [200, 1],
        [200, 2],
        [200, 3],
      ]);
    } finally {
      batch.hangUp();
      await n.close();
    }
  });

  it(`the largest blocks the node produces (four envelopes of ${MAX_ENVELOPE_BYTES} bytes at most) stay readable through GET /block, the feed, the explorer's page, GET /fixture and cbqs follow`, async () => {
    const n = await startNode({ kind: "genesis", source: GENESIS });
    try {
      // The largest envelope a sender can make: a payload of the full system-payload bound.
      const txs = Array.from({ length: 17 }, (_, k) => sized(BigInt(k), MAX_SYSTEM_PAYLOAD_BYTES));
      expect(txs[0]!.length).toBeLessThanOrEqual(MAX_ENVELOPE_BYTES);
      expect(4 * txs[0]!.length).toBeLessThanOrEqual(MAX_BLOCK_BYTES);
      for (const tx of txs.slice(0, 16)) expect((await octets(n.url, tx)).status).toBe(200);
      // Sixteen fill the pool's bytes (four blocks), far below its 4,096 transactions.
      const full = await octets(n.url, txs[16]!);
      expect([full.status, error(full)]).toEqual([
        503,
        { code: "tx_pool_full", message: `the pool holds ${16 * txs[0]!.length} bytes of transactions and takes at most ${MAX_POOL_BYTES}; mine a block first` },
      ]);
      expect((await post(n.url, "/mine?blocks=4", "")).body).toMatchObject({ height: "4", txs: 16 });
      const hashes = (h: number) => txs.slice(4 * (h - 1), 4 * h).map((t) => toHex(txHash(t)));

      for (const h of [1, 2, 3, 4]) {
        const block = await fetch(`${n.url}/block/${h}`).then((r) => r.text());
        expect(block.length).toBeLessThan(10_000_000);
        const body = JSON.parse(block) as { transactions: Array<{ tx_hash: string; receipt: { status: string } }> };
        expect(body.transactions.map((t) => [t.tx_hash, t.receipt.status])).toEqual(hashes(h).map((x) => [x, "rejected"]));
      }

      // The feed: pages end by bytes (two of these blocks reach MAX_PAGE_BYTES), `next` goes on.
      const page = async (query: string) => {
        const text = await fetch(`${n.url}/replication?${query}`).then((r) => r.text());
        expect(text.length).toBeLessThan(MAX_PAGE_BYTES + 10_000_000);
        const body = JSON.parse(text) as { items: Array<{ height: string }>; next: string | null };
        return [body.items.map((i) => i.height), body.next];
      };
      expect(await page("since=1&limit=100")).toEqual([["1", "2"], "3"]);
      expect(await page("since=3&limit=100")).toEqual([["3", "4"], null]);
      // The explorer's home page asks for the latest blocks.
      expect(await page("order=desc&limit=20")).toEqual([["4", "3"], "2"]);

      // The follower verifies every block and holds the node's chain: the node's fixture is the
      // follower's export, byte for byte.
      const follower = join(dir, "follower");
      expect(await cbqs("follow", n.url, "--db", follower, "--quiet")).toMatchObject({ exitCode: 0, err: "" });
      const served = await fetch(`${n.url}/fixture?post_state=none`).then((r) => r.text());
      const exported = await cbqs("export", "--db", follower, "--post-state", "none", "--quiet");
      expect([exported.exitCode, exported.out === served, (JSON.parse(served) as { blocks: unknown[] }).blocks.length]).toEqual([0, true, 4]);
    } finally {
      await n.close();
    }
  });
});
