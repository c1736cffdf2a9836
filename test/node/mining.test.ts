// Block and time control — --mining auto (a block per transaction), POST
// /mine?blocks=N (a batch: the same chain as N single blocks, bounded, refused whole), POST
// /mine?timestamp=T (never before the head's; later blocks continue from it), and the devnet's
// writes applied one at a time in arrival order while reads are answered during a batch.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { txHash } from "../../src/chain/envelope.js";
import { readFixture } from "../../src/harness/documents.js";
import { ix } from "../../src/gas/builder.js";
import { answerOf } from "../../src/node/errors.js";
import { DEFAULT_MINE_QUEUE, MAX_CLIENT_MINE_REQUESTS, MAX_MINE_BLOCKS } from "../../src/chain-node/devnet.js";
import { cbqs } from "../cli/program.js";
import { address, cbqsTx, expectedByHeight, fixtureOf, get, lanAddress, noRemoteClient, post, postFrom, startNode, toHex, transferTx, waitFor } from "./helpers.js";

const GENESIS = readFixture("fixtures/corpus/transfers.json").genesis.source;
const CHAIN = 7n;
const A = address(0x11);
const B = address(0x22);
const dir = mkdtempSync(join(tmpdir(), "cbqs-mining-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const errorCode = (r: { status: number; body: Record<string, unknown> }) => [r.status, (r.body["error"] as { code?: string } | undefined)?.code];

describe("--mining", () => {
  it("auto: every accepted transaction is mined at once in its own block, and POST /tx answers with that block", async () => {
    const n = await startNode({ kind: "genesis", source: GENESIS }, { mining: "auto" });
    try {
      for (const k of [0n, 1n, 2n]) {
        const tx = transferTx(CHAIN, A, k, B, 1n);
        const r = await post(n.url, "/tx", toHex(tx));
        expect(r.status).toBe(200);
        const height = (k + 1n).toString();
        expect(r.body).toMatchObject({ height, tx_hash: toHex(txHash(tx)), nonce: k.toString(), pending: 0, mining: "auto", mined: { height, receipts: [{ tx_hash: toHex(txHash(tx)), status: "ok" }], dropped: [] } });
        expect((await get(n.url, `/tx/${toHex(txHash(tx))}`)).body).toMatchObject({ status: "included", height, index: 0 });
      }
      // A refused transaction produces no block.
      expect(errorCode(await post(n.url, "/tx", toHex(transferTx(CHAIN, A, 9n, B, 1n))))).toEqual([400, "invalid_nonce"]);
      expect(n.node.head().height).toBe(3n);
      // POST /mine still produces blocks on request.
      expect((await post(n.url, "/mine", "")).body["height"]).toBe("4");
      expect(n.logs.find((l) => l["msg"] === "serving")).toMatchObject({ mining: "auto" });
    } finally {
      await n.close();
    }
  });

  it("manual (the default without --block-time): POST /tx only queues", async () => {
    const n = await startNode({ kind: "genesis", source: GENESIS });
    try {
      expect((await post(n.url, "/tx", toHex(transferTx(CHAIN, A, 0n, B, 1n)))).body).toMatchObject({ height: "0", pending: 1, mining: "manual" });
      expect(n.node.head().height).toBe(0n);
      expect(n.logs.find((l) => l["msg"] === "serving")).toMatchObject({ mining: "manual" });
    } finally {
      await n.close();
    }
  });
});

describe("POST /mine?blocks=N and ?timestamp=T", () => {
  it("blocks=N produces the chain N single POST /mine produce, block for block; the answer names the range and lists every receipt with its height", async () => {
    const batch = await startNode({ kind: "genesis", source: GENESIS });
    const single = await startNode({ kind: "genesis", source: GENESIS });
    try {
      for (const n of [batch, single]) for (const k of [0n, 1n]) await post(n.url, "/tx", toHex(transferTx(CHAIN, A, k, B, 2n)));
      const r = await post(batch.url, "/mine?blocks=40", "");
      for (let i = 0; i < 40; i++) await post(single.url, "/mine", "");
      expect(r.status).toBe(200);
      const head = single.node.head();
      expect(r.body).toEqual({
        height: "40",
        block_hash: toHex(head.block_hash),
        state_root: toHex(head.state_root),
        timestamp: head.timestamp.toString(),
        effective_rent_height: head.effective_rent_height.toString(),
        first: { height: "1", block_hash: toHex(single.node.db.blockByHeight(1n)!.block_hash), timestamp: single.node.db.blockByHeight(1n)!.timestamp.toString() },
        blocks: 40,
        txs: 2,
        receipts: single.node.db.blockByHeight(1n)!.receipts.map((x) => expect.objectContaining({ height: "1", tx_hash: toHex(x.tx_hash), status: "ok" })),
        dropped: [],
      });
      for (const h of [1n, 2n, 39n, 40n]) expect(toHex(batch.node.db.blockByHeight(h)!.block_hash)).toBe(toHex(single.node.db.blockByHeight(h)!.block_hash));
      // One log line for the batch, not forty.
      expect(batch.logs.filter((l) => l["msg"] === "blocks")).toEqual([expect.objectContaining({ from: "1", to: "40", blocks: 40, txs: 2 })]);
      expect(batch.logs.filter((l) => l["msg"] === "block")).toEqual([]);
      // With ?height=: the first block there, the others after it.
      expect((await post(batch.url, "/mine?blocks=3&height=100", "")).body).toMatchObject({ height: "102", first: { height: "100" }, blocks: 3 });
      expect(batch.node.db.blockByHeight(101n)).toBeDefined();
      expect(() => expectedByHeight(fixtureOf(batch.node.db, batch.node.config))).not.toThrow();
    } finally {
      await batch.close();
      await single.close();
    }
  });

  it("a batch's answer lists each rejected transaction's receipt with the engine's message and each dropped transaction with its reason, both with the height of their block", async () => {
    // cycle_price 1: 0x11…11 pays the fee of a SetProviderStatus it may not make; 0x33…33 holds nothing, so its RegisterProvider is dropped.
    const n = await startNode({ kind: "genesis", source: readFixture("fixtures/corpus/fee-insufficient-balance.json").genesis.source });
    try {
      const rejected = cbqsTx(CHAIN, A, 0n, ix.setProviderStatus("Draining"));
      const dropped = cbqsTx(CHAIN, address(0x33), 0n, ix.registerProvider());
      for (const tx of [rejected, dropped]) expect((await post(n.url, "/tx", toHex(tx))).status).toBe(200);
      const batch = (await post(n.url, "/mine?blocks=2", "")).body;
      const receipt = (await get(n.url, `/tx/${toHex(txHash(rejected))}`)).body["receipt"] as { status: string; error: { message: string } };
      expect([receipt.status, receipt.error.message]).toEqual(["rejected", expect.stringMatching(/\S/)]);
      expect([batch["receipts"], batch["dropped"]]).toEqual([
        [{ height: "1", ...receipt }],
        [{ height: "1", tx_hash: toHex(txHash(dropped)), reason: `${toHex(address(0x33))} holds 0, less than the fee at the reservation 570 of RegisterProvider` }],
      ]);
    } finally {
      await n.close();
    }
  });

  it(`bounds: blocks from 1 to ${MAX_MINE_BLOCKS}; a batch that would pass the last u64 height or timestamp is refused whole, before its first block`, async () => {
    const n = await startNode({ kind: "genesis", source: GENESIS });
    try {
      for (const q of ["blocks=0", "blocks=100001", "blocks=-1", "blocks=1e3", "blocks=", "blocks=01"]) expect(errorCode(await post(n.url, `/mine?${q}`, "")), q).toEqual([400, "invalid_blocks"]);
      for (const q of ["timestamp=x", "timestamp=18446744073709551616"]) expect(errorCode(await post(n.url, `/mine?${q}`, "")), q).toEqual([400, "invalid_timestamp"]);
      const g = n.node.config;
      const lastTime = ((1n << 64n) - 1n - g.timestamp) / g.block_time_seconds;
      const r = await post(n.url, `/mine?height=${lastTime - 1n}&blocks=3`, "");
      expect(errorCode(r)).toEqual([400, "invalid_blocks"]);
      expect((r.body["error"] as { message: string }).message).toMatch(/the timestamp of height \d+ would exceed u64/);
      expect(errorCode(await post(n.url, `/mine?height=18446744073709551614&blocks=3&timestamp=${g.timestamp}`, ""))).toEqual([400, "invalid_blocks"]);
      expect(n.node.head().height).toBe(0n);
      expect((await post(n.url, `/mine?height=${lastTime - 1n}&blocks=2`, "")).body).toMatchObject({ blocks: 2, height: lastTime.toString() });
    } finally {
      await n.close();
    }
  });

  it("timestamp=T: at least the head's (equal is fine), then later blocks continue from it by block_time_seconds; the chain replays (cbqs replay of GET /fixture)", async () => {
    const n = await startNode({ kind: "genesis", source: GENESIS });
    try {
      const g = n.node.config;
      expect((await post(n.url, "/mine", "")).body["timestamp"]).toBe((g.timestamp + g.block_time_seconds).toString());
      const head = n.node.head().timestamp;
      const before = await post(n.url, `/mine?timestamp=${head - 1n}`, "");
      expect(errorCode(before)).toEqual([400, "invalid_timestamp"]);
      expect((before.body["error"] as { message: string }).message).toBe(`timestamp ${head - 1n} is before the head's ${head} (block 1): block timestamps never run backwards`);
      expect((await post(n.url, `/mine?timestamp=${head}`, "")).body).toMatchObject({ height: "2", timestamp: head.toString() });
      const warp = head + 86_400n;
      expect((await post(n.url, `/mine?timestamp=${warp}`, "")).body).toMatchObject({ height: "3", timestamp: warp.toString() });
      expect((await post(n.url, "/mine", "")).body).toMatchObject({ height: "4", timestamp: (warp + g.block_time_seconds).toString() });
      // A skipped height counts its block times too.
      expect((await post(n.url, "/mine?height=7", "")).body).toMatchObject({ timestamp: (warp + 4n * g.block_time_seconds).toString() });
      const batch = await post(n.url, `/mine?blocks=3&timestamp=${warp + 1000n}`, "");
      expect(batch.body).toMatchObject({ first: { height: "8", timestamp: (warp + 1000n).toString() }, height: "10", timestamp: (warp + 1000n + 2n * g.block_time_seconds).toString() });
      const fixture = await fetch(n.url + "/fixture").then((x) => x.text());
      const file = join(dir, "timestamps.json");
      writeFileSync(file, fixture);
      expect(await cbqs("replay", file, "--quiet")).toMatchObject({ exitCode: 0, err: "" });
    } finally {
      await n.close();
    }
  });

  it("a batch turns the event loop: reads are answered from the blocks produced so far, and a transaction sent meanwhile waits for the batch and goes into the block after it", async () => {
    const n = await startNode({ kind: "genesis", source: GENESIS });
    try {
      const batch = post(n.url, "/mine?blocks=3000", "");
      const seen: bigint[] = [];
      while (n.node.head().height === 0n) await new Promise((r) => setTimeout(r, 1));
      seen.push(BigInt((await get(n.url, "/cbqs/finalized-view")).body["height"] as string));
      const sent = post(n.url, "/tx", toHex(transferTx(CHAIN, A, 0n, B, 1n)));
      const done = await batch;
      expect(done.body).toMatchObject({ blocks: 3000, txs: 0, height: "3000" });
      expect(seen[0]).toBeGreaterThan(0n);
      expect(seen[0]).toBeLessThan(3000n);
      // Answered after the batch: its read point is the batch's last block; it was not in the batch.
      expect((await sent).body).toMatchObject({ height: "3000", pending: 1 });
      expect((await post(n.url, "/mine", "")).body).toMatchObject({ height: "3001", receipts: [{ status: "ok" }] });
    } finally {
      await n.close();
    }
  });

  it("--block-time: a tick passes while a devnet write runs (a batch's blocks are its own, consecutive); after any write ends, answered or refused, the timer produces blocks again", async () => {
    const n = await startNode({ kind: "genesis", source: GENESIS }, { blockTime: 0.02 });
    const grows = async (): Promise<void> => {
      const h = n.node.head().height;
      for (let i = 0; i < 1000 && n.node.head().height <= h; i++) await new Promise((r) => setTimeout(r, 10));
      expect(n.node.head().height).toBeGreaterThan(h);
    };
    try {
      const batch = (await post(n.url, "/mine?blocks=3000", "")).body;
      const [first, last] = [BigInt((batch["first"] as { height: string }).height), BigInt(batch["height"] as string)];
      expect([batch["blocks"], last - first + 1n]).toEqual([3000, 3000n]);
      // The timer's blocks (logged one by one, a batch's are not) are all outside the batch's range.
      expect(n.logs.filter((l) => l["msg"] === "block" && BigInt(l["height"] as string) >= first && BigInt(l["height"] as string) <= last)).toEqual([]);
      await grows();
      expect(errorCode(await post(n.url, "/devnet/revert?id=99", ""))).toEqual([404, "snapshot_not_found"]);
      await grows();
    } finally {
      await n.close();
    }
  });

  it("a write queued behind a batch when the node begins to stop is refused (503 shutting_down) and never runs", async () => {
    const n = await startNode({ kind: "genesis", source: GENESIS });
    try {
      const batch = n.devnet.mine({ blocks: MAX_MINE_BLOCKS });
      const queued = n.devnet.mine({}).then(
        () => "mined",
        (err: unknown) => err,
      );
      while (n.node.head().height < 10n) await new Promise((r) => setTimeout(r, 1));
      n.devnet.stop();
      const done = await batch;
      expect(answerOf(await queued)).toMatchObject({ status: 503, code: "shutting_down", message: "the node is stopping" });
      expect("batch" in done && n.node.head().height === done.batch.last.height).toBe(true);
    } finally {
      await n.close();
    }
  });

  it("closing the node during a batch stops it after the block in progress", async () => {
    const n = await startNode({ kind: "genesis", source: GENESIS });
    const batch = post(n.url, `/mine?blocks=${MAX_MINE_BLOCKS}`, "").catch((err: unknown) => err);
    while (n.node.head().height < 10n) await new Promise((r) => setTimeout(r, 1));
    const t = performance.now();
    await n.close();
    await batch;
    expect(performance.now() - t).toBeLessThan(5_000);
    expect(n.logs.find((l) => l["msg"] === "blocks")).toMatchObject({ from: "1" });
    expect(Number(n.logs.find((l) => l["msg"] === "blocks")!["blocks"])).toBeLessThan(MAX_MINE_BLOCKS);
  });
});

describe("POST /mine: bounded per client and in all, and tied to its client", () => {
  it("batches whose clients hang up stop: six of 20,000 blocks end far below 120,000 blocks, none queued is run, and the node mines on", async (ctx) => {
    const lan = lanAddress();
    if (lan === undefined) return noRemoteClient(ctx);
    const n = await startNode({ kind: "genesis", source: GENESIS });
    try {
      // Two clients, three requests each (each client under its bounds), as a page or script that gives up on its requests.
      const sent = ["127.0.0.1", lan, "127.0.0.2", lan, "127.0.0.3", lan].map((from) => postFrom(from, `${n.url}/mine?blocks=20000`));
      await waitFor("the six requests admitted and the first batch running", () => n.devnet.queuedBlocks === 120_000 && n.node.head().height > 0n);
      for (const s of sent) s.hangUp();
      await waitFor("the devnet idle", () => n.devnet.idle);
      const height = n.node.head().height;
      expect(height).toBeLessThan(20_000n);
      expect(n.devnet.queuedBlocks).toBe(0);
      for (const s of sent) expect(await s.answer).toBe("hung up");
      // The running batch stopped after the block in progress; the five waiting never ran.
      expect(n.logs.filter((l) => l["msg"] === "blocks")).toEqual([{ level: "info", msg: "blocks", from: "1", to: height.toString(), blocks: Number(height), txs: 0, cancelled: "the client went away" }]);
      expect(n.logs.filter((l) => l["level"] === "error")).toEqual([]);
      expect((await post(n.url, "/mine?blocks=2", "")).body).toMatchObject({ height: (height + 2n).toString(), blocks: 2 });
    } finally {
      await n.close();
    }
  });

  it(`one client — every loopback address one — holds at most its --client-mine-queue blocks of mining (429 too_many_mine_requests), the node at most its --mine-queue (503 mine_queue_full); both free up as requests end`, async (ctx) => {
    const lan = lanAddress();
    if (lan === undefined) return noRemoteClient(ctx);
    // Two clients fill the node: its bound is two clients' (the default is four's: DEFAULT_MINE_QUEUE).
    expect(DEFAULT_MINE_QUEUE).toBe(4 * MAX_MINE_BLOCKS);
    const queue = 2 * MAX_MINE_BLOCKS;
    const n = await startNode({ kind: "genesis", source: GENESIS }, { mineQueue: queue, clientMineQueue: MAX_MINE_BLOCKS });
    const sent: Array<ReturnType<typeof postFrom>> = [];
    try {
      const a = postFrom("127.0.0.1", `${n.url}/mine?blocks=${MAX_MINE_BLOCKS}`);
      sent.push(a);
      await waitFor("A's batch running", () => n.node.head().height > 0n);
      const again = await postFrom("127.0.0.2", `${n.url}/mine`).answer;
      expect(again).toEqual({
        status: 429,
        retryAfter: "1",
        body: {
          error: {
            code: "too_many_mine_requests",
            message: `one client may have at most ${MAX_CLIENT_MINE_REQUESTS} mining requests and ${MAX_MINE_BLOCKS} blocks waiting or being produced (--client-mine-queue); it has 1 for ${MAX_MINE_BLOCKS} blocks`,
          },
        },
      });
      // Another client takes the rest of the node's bound; then anyone is refused, whoever it is.
      sent.push(postFrom(lan, `${n.url}/mine?blocks=${MAX_MINE_BLOCKS}`));
      await waitFor("two full batches admitted", () => n.devnet.queuedBlocks === queue);
      for (const from of ["127.0.0.3", lan]) {
        expect(await postFrom(from, `${n.url}/mine`).answer).toEqual({
          status: 503,
          retryAfter: "5",
          body: { error: { code: "mine_queue_full", message: `the node has ${queue} blocks waiting or being produced and takes at most ${queue} (--mine-queue)` } },
        });
      }
      for (const s of sent) s.hangUp();
      await waitFor("the devnet idle", () => n.devnet.idle);
      expect(n.devnet.queuedBlocks).toBe(0);
      const height = n.node.head().height;
      expect(height).toBeLessThan(BigInt(MAX_MINE_BLOCKS));
      expect(await postFrom(lan, `${n.url}/mine`).answer).toMatchObject({ status: 200, body: { height: (height + 1n).toString() } });
      expect(await postFrom("127.0.0.2", `${n.url}/mine`).answer).toMatchObject({ status: 200, body: { height: (height + 2n).toString() } });
    } finally {
      for (const s of sent) s.hangUp();
      await n.close();
    }
  });

  it(`one client has at most ${MAX_CLIENT_MINE_REQUESTS} mining requests waiting or running, however small; each waiting one is answered with its block once the work ahead of it ends`, async (ctx) => {
    const lan = lanAddress();
    if (lan === undefined) return noRemoteClient(ctx);
    const n = await startNode({ kind: "genesis", source: GENESIS });
    const long = postFrom(lan, `${n.url}/mine?blocks=${MAX_MINE_BLOCKS}`);
    try {
      await waitFor("another client's batch running", () => n.node.head().height > 0n);
      const small = Array.from({ length: MAX_CLIENT_MINE_REQUESTS }, (_, i) => postFrom(`127.0.0.${1 + (i % 2)}`, `${n.url}/mine`));
      await waitFor("the small requests admitted", () => n.devnet.queuedBlocks === MAX_MINE_BLOCKS + MAX_CLIENT_MINE_REQUESTS);
      expect(await postFrom("127.0.0.2", `${n.url}/mine`).answer).toMatchObject({ status: 429, body: { error: { code: "too_many_mine_requests" } } });
      long.hangUp();
      const heights = (await Promise.all(small.map((s) => s.answer))).map((r) => (r === "hung up" ? r : Number(r.body["height"])));
      const first = Number(n.node.head().height) - MAX_CLIENT_MINE_REQUESTS + 1;
      expect(heights.sort((x, y) => Number(x) - Number(y))).toEqual(Array.from({ length: MAX_CLIENT_MINE_REQUESTS }, (_, i) => first + i));
    } finally {
      long.hangUp();
      await n.close();
    }
  });

  it("a node's --client-mine-queue is also the largest batch it takes (400 invalid_blocks above)", async () => {
    const n = await startNode({ kind: "genesis", source: GENESIS }, { mineQueue: 200, clientMineQueue: 50 });
    try {
      const r = await post(n.url, "/mine?blocks=51", "");
      expect([r.status, r.body["error"]]).toEqual([400, { code: "invalid_blocks", message: "blocks must be from 1 to 50 (this node's --client-mine-queue)" }]);
      expect((await post(n.url, "/mine?blocks=50", "")).body).toMatchObject({ height: "50", blocks: 50 });
    } finally {
      await n.close();
    }
  });

  it(`a revert counts as one of its client's ${MAX_CLIENT_MINE_REQUESTS} requests while it waits: one client cannot queue reverts without bound`, async (ctx) => {
    const lan = lanAddress();
    if (lan === undefined) return noRemoteClient(ctx);
    const n = await startNode({ kind: "genesis", source: GENESIS });
    const long = postFrom(lan, `${n.url}/mine?blocks=${MAX_MINE_BLOCKS}`);
    const reverts: Array<ReturnType<typeof postFrom>> = [];
    try {
      const id = (await post(n.url, "/devnet/snapshot", "")).body["id"] as string;
      await waitFor("another client's batch running", () => n.node.head().height > 0n);
      for (let i = 0; i < MAX_CLIENT_MINE_REQUESTS; i++) reverts.push(postFrom("127.0.0.2", `${n.url}/devnet/revert?id=${id}`));
      // Reverts count no blocks: the client's requests are what waits, all sixteen of them.
      expect(await postFrom("127.0.0.2", `${n.url}/mine`).answer).toMatchObject({ status: 429, body: { error: { code: "too_many_mine_requests", message: expect.stringContaining(`it has ${MAX_CLIENT_MINE_REQUESTS} for 0 blocks`) } } });
      expect(await postFrom("127.0.0.2", `${n.url}/devnet/revert?id=${id}`).answer).toMatchObject({ status: 429, body: { error: { code: "too_many_mine_requests" } } });
    } finally {
      for (const r of [long, ...reverts]) r.hangUp();
      await n.close();
    }
  });

  it("a revert whose client hangs up while it replays is abandoned: the chain is the one before it", async () => {
    const n = await startNode({ kind: "genesis", source: GENESIS });
    try {
      // A revert replays the chain through its snapshot's block: 5,000 blocks of work.
      await post(n.url, "/mine?blocks=5000", "");
      const id = (await post(n.url, "/devnet/snapshot", "")).body["id"] as string;
      await post(n.url, "/mine", "");
      const head = n.node.head();
      const revert = postFrom("127.0.0.2", `${n.url}/devnet/revert?id=${id}`);
      await waitFor("the revert running", () => !n.devnet.idle);
      revert.hangUp();
      await waitFor("the devnet idle", () => n.devnet.idle);
      expect(await revert.answer).toBe("hung up");
      expect(n.node.head()).toBe(head);
      expect(n.logs.filter((l) => l["msg"] === "reverted")).toEqual([]);
      expect((await post(n.url, "/mine", "")).body).toMatchObject({ height: "5002" });
    } finally {
      await n.close();
    }
  });
});
