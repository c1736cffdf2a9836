// The devnet's write queue on its own (src/chain-node/devnet.ts, docs/guides/run-a-devnet.md
// "Devnet", "Mining and time"): transactions waiting behind a long write are counted against the
// pool's room, and uncounted once each; a write whose client goes is taken out of the queue or ends
// after the block in progress; mining is counted per client and freed as requests end. A long
// batch holds the queue while a test acts: every call below it is made before the batch's next
// turn of the event loop, and the batch is then ended by its client going.
import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { readFixture } from "../../src/harness/documents.js";
import { CbqsNode, DEFAULT_PRODUCTION, MAX_POOL_TXS } from "../../src/chain-node/chain-node.js";
import { clientShare, DEFAULT_MINE_QUEUE, DEFAULT_MINING_LIMITS, Devnet, MAX_MINE_BLOCKS, WriteCancelled } from "../../src/chain-node/devnet.js";
import { PoolFull, TooManyMineRequests } from "../../src/chain-node/errors.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";
import { address, transferTx } from "../node/helpers.js";

const GENESIS = readFixture("fixtures/corpus/transfers.json").genesis.source;
const CHAIN = 7n;
const A = address(0x11);
const tx = (nonce: bigint) => transferTx(CHAIN, A, nonce, address(0x22), 1n);

function devnet(): { devnet: Devnet; node: CbqsNode; logs: Array<Record<string, unknown>> } {
  const node = CbqsNode.open(new MemoryChainDb(), { kind: "genesis", source: GENESIS });
  const logs: Array<Record<string, unknown>> = [];
  return { devnet: new Devnet(node, "manual", (e) => logs.push(e)), node, logs };
}

/** A batch of the most blocks one client may ask for, from client "holder": it holds the queue until `end()`. */
function holdQueue(d: Devnet): { end: () => Promise<void> } {
  const gone = new AbortController();
  const batch = d.mine({ blocks: MAX_MINE_BLOCKS }, { client: "holder", gone: gone.signal });
  return {
    end: async () => {
      gone.abort();
      await expect(batch).rejects.toBeInstanceOf(WriteCancelled);
    },
  };
}

/** Aborts `gone` as the node produces its `n`th block (a batch's blocks are not told to onMined). */
function abortAtBlock(node: CbqsNode, n: number, gone: AbortController): void {
  let produced = 0;
  node.onBlockTimed = () => {
    if (++produced === n) gone.abort();
  };
}

/** How `p` has settled by the next turn of the event loop: its value, its error, or "waiting". */
const settledNow = <T>(p: Promise<T>): Promise<T | unknown> => Promise.race([p.then((v) => v, (e: unknown) => e), nextTurn().then(() => "waiting")]);

const cancelled = { name: "WriteCancelled", message: "the client went away" };

describe("transactions waiting for their turn count against the pool's room (POST /tx)", () => {
  it("by bytes: one that would not fit with those queued ahead is refused at once (tx_pool_full), not when its turn comes; each is uncounted once, so the room is whole again after they are mined", async () => {
    const { devnet: d, node } = devnet();
    node.production = { ...DEFAULT_PRODUCTION, poolBytes: 2 * tx(0n).length };
    // Sent while nothing runs: into the pool at once, then mined.
    expect(await d.submit(tx(0n))).toMatchObject({ nonce: 0n, pending: 1 });
    await d.mine({});
    expect(node.pending).toBe(0);
    const hold = holdQueue(d);
    const queued = [d.submit(tx(1n)), d.submit(tx(2n))];
    const third = d.submit(tx(3n));
    expect(await settledNow(third)).toBeInstanceOf(PoolFull);
    expect(d.idle).toBe(false);
    await hold.end();
    expect((await Promise.all(queued)).map((s) => [s.nonce, s.pending])).toEqual([
      [1n, 1],
      [2n, 2],
    ]);
    await d.mine({});
    // Nothing is waiting any more: the pool takes two again.
    expect(await d.submit(tx(3n))).toMatchObject({ nonce: 3n, pending: 1 });
    expect(await d.submit(tx(4n))).toMatchObject({ nonce: 4n, pending: 2 });
  });

  it(`by number: ${MAX_POOL_TXS} may wait, one more is refused at once; once they have had their turn, the count is back to none`, async () => {
    const { devnet: d, node } = devnet();
    const hold = holdQueue(d);
    // The same envelope again and again: the first goes into the pool, the others are refused at their turn (nonce).
    const queued = Array.from({ length: MAX_POOL_TXS }, () => d.submit(tx(0n)));
    const refused = await settledNow(d.submit(tx(0n)));
    expect(refused).toBeInstanceOf(PoolFull);
    expect((refused as Error).message).toBe(`the pool holds ${MAX_POOL_TXS} transactions; mine a block first`);
    await hold.end();
    const outcomes = await Promise.allSettled(queued);
    expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(1);
    expect(node.pending).toBe(1);
    expect(await d.submit(tx(1n))).toMatchObject({ nonce: 1n, pending: 2 });
  });
});

describe("a write whose client goes away (POST /mine, POST /devnet/revert)", () => {
  it("already gone: nothing runs, not even the one block of a plain POST /mine; it ends WriteCancelled", async () => {
    const { devnet: d, node } = devnet();
    const gone = AbortSignal.abort();
    await expect(d.mine({}, { client: "c", gone })).rejects.toMatchObject(cancelled);
    await expect(d.mine({ blocks: 3 }, { client: "c", gone })).rejects.toBeInstanceOf(WriteCancelled);
    expect(node.head().height).toBe(0n);
    expect(d.queuedBlocks).toBe(0);
  });

  it("gone while it waits: taken out of the queue, it never runs", async () => {
    const { devnet: d, node, logs } = devnet();
    const hold = holdQueue(d);
    const gone = new AbortController();
    const waiting = d.mine({ height: 1_000_000n }, { client: "c", gone: gone.signal });
    gone.abort();
    await expect(waiting).rejects.toMatchObject(cancelled);
    await hold.end();
    expect(node.head().height).toBeLessThan(1_000_000n);
    expect(d.idle).toBe(true);
    expect(logs.filter((l) => l["msg"] === "blocks")).toHaveLength(1); // the holder's batch only
  });

  it("gone while its batch runs: it ends after the block in progress, logged with the blocks it made and why it stopped, and only then answers WriteCancelled", async () => {
    const { devnet: d, node, logs } = devnet();
    const gone = new AbortController();
    abortAtBlock(node, 2, gone);
    await expect(d.mine({ blocks: 5 }, { client: "c", gone: gone.signal })).rejects.toMatchObject(cancelled);
    expect(logs).toEqual([{ level: "info", msg: "blocks", from: "1", to: "2", blocks: 2, txs: 0, cancelled: "the client went away" }]);
    expect(node.head().height).toBe(2n);
    expect(d.idle).toBe(true);
  });

  it("gone after its batch's last block: the batch is whole, answered and logged without a cancellation", async () => {
    const { devnet: d, node, logs } = devnet();
    const gone = new AbortController();
    abortAtBlock(node, 3, gone);
    const mined = await d.mine({ blocks: 3 }, { client: "c", gone: gone.signal });
    expect("batch" in mined && mined.batch.blocks).toBe(3);
    expect(logs).toEqual([{ level: "info", msg: "blocks", from: "1", to: "3", blocks: 3, txs: 0 }]);
  });
});

describe("mining counted per client while it waits or runs", () => {
  it(`a client's share is a quarter of the node's bound, at least 1: by default ${MAX_MINE_BLOCKS} blocks, one full batch`, () => {
    expect(DEFAULT_MINING_LIMITS).toEqual({ queueBlocks: DEFAULT_MINE_QUEUE, clientBlocks: MAX_MINE_BLOCKS });
    expect([clientShare(400_000), clientShare(8), clientShare(7), clientShare(3)]).toEqual([100_000, 2, 1, 1]);
  });

  it("a request that ends frees exactly its blocks while the client's others stay counted; a client with none left is forgotten", async () => {
    const { devnet: d } = devnet();
    const hold = holdQueue(d);
    const first = d.mine({ blocks: 10 }, { client: "a" });
    const secondGone = new AbortController();
    const second = d.mine({ blocks: 50_000 }, { client: "a", gone: secondGone.signal });
    await hold.end();
    expect(await first).toMatchObject({ batch: { blocks: 10 } });
    // "a" still has its 50,000 waiting: 50,001 more pass its 100,000, 50,000 do not.
    await expect(d.mine({ blocks: 50_001 }, { client: "a" })).rejects.toBeInstanceOf(TooManyMineRequests);
    const thirdGone = new AbortController();
    const third = d.mine({ blocks: 50_000 }, { client: "a", gone: thirdGone.signal });
    expect(d.queuedBlocks).toBe(100_000);
    secondGone.abort();
    thirdGone.abort();
    await expect(second).rejects.toBeInstanceOf(WriteCancelled);
    await expect(third).rejects.toBeInstanceOf(WriteCancelled);
    expect(d.queuedBlocks).toBe(0);
    expect(d["miningBy"].size).toBe(0);
  });
});

describe("snapshots and reverts", () => {
  it("a revert is logged at info with the snapshot's id, the height it rewound to and the one it left", async () => {
    const { devnet: d, logs } = devnet();
    const snap = await d.snapshot();
    await d.mine({ blocks: 2 });
    expect(await d.revert(snap.id)).toMatchObject({ id: snap.id, block: { height: 0n } });
    expect(logs.filter((l) => l["msg"] === "reverted")).toEqual([{ level: "info", msg: "reverted", id: snap.id.toString(), height: "0", from: "2" }]);
  });
});
