// The node's chain (src/chain-node/chain-node.ts) driven directly, without a server: the pool's nonce
// rule, the dry runs that select a block's transactions, the u64 edges of heights and timestamps
// (the last one is produced, one more is refused by its words), what the node's owner is told of
// each block (its timings, a store refusing it, the listeners), the outcomes it remembers and a
// revert forgets, and the refusals of a start. Reviewed by hand against planted mutants.
import { describe, expect, it, vi } from "vitest";
import { txHash } from "../../src/chain/envelope.js";
import { Chain } from "../../src/engine/chain.js";
import { U64_MAX } from "../../src/engine/math.js";
import { ix } from "../../src/gas/builder.js";
import { readFixture } from "../../src/harness/documents.js";
import { CbqsNode, ImportMismatch, MAX_BLOCK_TXS, MAX_POOL_TXS, NodeInputError, type ChainListener } from "../../src/chain-node/chain-node.js";
import { answerOf } from "../../src/node/errors.js";
import { finish } from "../../src/steps.js";
import type { BlockRecord } from "../../state/chain-db/chain-db.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";
import { StoreError } from "../../state/lmdb/errors.js";
import { logsRoot, receiptRoot, txRoot } from "../../state/roots/roots.js";
import { address, cbqsTx, toHex, transferTx } from "./helpers.js";

const TRANSFERS = readFixture("fixtures/corpus/transfers.json");
const GENESIS = TRANSFERS.genesis.source;
const CHAIN = 7n;
const [A, B] = [address(0x11), address(0x22)];
const open = (db: MemoryChainDb = new MemoryChainDb()) => CbqsNode.open(db, { kind: "genesis", source: GENESIS });

/** What `fn` is refused with, as the node answers it (its domain error through the server's table): status, code, message. */
function refusal(fn: () => unknown): [number, string, string] {
  try {
    fn();
  } catch (err) {
    const answer = answerOf(err);
    if (answer !== undefined) return [answer.status, answer.code, answer.message];
    throw err;
  }
  throw new Error("not refused");
}

/** A store that refuses the next block with `refuse` while it is set (a full disk, CIP-4 §6.4). */
class RefusingDb extends MemoryChainDb {
  refuse: Error | undefined;
  override commitBlock(block: BlockRecord): void {
    if (this.refuse !== undefined) throw this.refuse;
    super.commitBlock(block);
  }
}

describe("the pool", () => {
  it("submit: a sender's next nonce counts its queued transactions; a wrong one is refused naming both; the answer is the hash and the nonce", () => {
    const n = open();
    const first = transferTx(CHAIN, A, 0n, B, 1n);
    expect(n.submit(first)).toEqual({ txHash: txHash(first), nonce: 0n });
    n.submit(transferTx(CHAIN, B, 0n, A, 1n));
    expect(refusal(() => n.submit(transferTx(CHAIN, A, 5n, B, 1n)))).toEqual([400, "invalid_nonce", "nonce 5 is not the sender's next nonce 1 (account nonce plus 1 queued)"]);
    expect([n.pendingFrom(A), n.pendingFrom(B), n.pendingFrom(address(0x33)), n.pending]).toEqual([1, 1, 0, 2]);
    n.submit(transferTx(CHAIN, A, 1n, B, 1n));
    n.mine();
    expect(refusal(() => n.submit(first))).toEqual([400, "invalid_nonce", "nonce 0 is not the sender's next nonce 2 (account nonce plus 0 queued)"]);
    expect(refusal(() => n.submit(new Uint8Array([0x00])))).toEqual([400, "invalid_transaction", expect.stringMatching(/\S/)]);
    expect(n.pending).toBe(0);
  });

  it("dropPendingFrom keeps the queue's first `index` transactions and never adds any; pooled names a queued transaction's place, 0 first", () => {
    const n = open();
    const txs = [0n, 1n, 2n].map((k) => transferTx(CHAIN, A, k, B, 1n));
    for (const tx of txs) n.submit(tx);
    expect(txs.map((tx) => n.pooled(txHash(tx))?.position)).toEqual([0, 1, 2]);
    n.dropPendingFrom(5);
    expect(n.pending).toBe(3);
    n.dropPendingFrom(1);
    expect([n.pending, n.pooled(txHash(txs[0]!))?.env.nonce, n.pooled(txHash(txs[1]!))]).toEqual([1, 0n, undefined]);
    n.dropPendingFrom(-1);
    expect(n.pending).toBe(0);
  });
});

describe("the dry runs that select a block's transactions", () => {
  it("an exclusion after a dropped transaction that executed waits for the next run (its verdict might change); the dropped list keeps block order", () => {
    // cycle_price 1: 0x22…22 holds 600, less than its CreateStream's fee at the reservation; its
    // transfer (nonce 1) executes in the first run and is dropped (nonce 0 skipped); 0x35…35
    // holds nothing, so its RegisterProvider is excluded in every run, but only the second run's
    // exclusion is final: three runs, not two.
    const n = CbqsNode.open(new MemoryChainDb(), { kind: "genesis", source: readFixture("fixtures/corpus/fee-insufficient-balance.json").genesis.source });
    const [p, q] = [address(0x22), address(0x35)];
    const txs = [cbqsTx(CHAIN, p, 0n, ix.createStream({ initial_escrow: 1n })), transferTx(CHAIN, p, 1n, address(0x44), 1n), cbqsTx(CHAIN, q, 0n, ix.registerProvider())];
    for (const tx of txs) n.submit(tx);
    const resume = vi.spyOn(Chain, "resume");
    let mined: ReturnType<CbqsNode["mine"]>;
    try {
      mined = n.mine();
      expect(resume).toHaveBeenCalledTimes(3);
    } finally {
      resume.mockRestore();
    }
    expect(mined.block.transactions).toEqual([]);
    expect(mined.dropped.map((d) => [d.tx_hash, d.reason.replace(/ \d+ of \w+$/, " …")])).toEqual([
      [toHex(txHash(txs[0]!)), `${toHex(p)} holds 600, less than the fee at the reservation …`],
      [toHex(txHash(txs[1]!)), "nonce 1 is not the sender's account nonce 0"],
      [toHex(txHash(txs[2]!)), `${toHex(q)} holds 0, less than the fee at the reservation …`],
    ]);
  });
});

describe("a batch of blocks", () => {
  it("a stop is checked between blocks, never before the first; busy lists only the blocks that included or dropped a transaction", () => {
    const n = open();
    const stopped = finish(n.mineSteps(5, undefined, undefined, () => true));
    expect([stopped.blocks, stopped.first.height, stopped.last.height]).toEqual([1, 1n, 1n]);
    let calls = 0;
    const two = finish(n.mineSteps(5, undefined, undefined, () => ++calls > 1));
    expect([two.blocks, two.first.height, two.last.height]).toEqual([2, 2n, 3n]);
    n.submit(transferTx(CHAIN, A, 0n, B, 1n));
    const batch = finish(n.mineSteps(3));
    expect([batch.blocks, batch.txs, batch.busy.map((m) => m.block.height)]).toEqual([3, 1, [4n]]);
  });
});

describe("heights and timestamps at the u64 edge", () => {
  it("the last u64 height is produced (a batch may end on it); a batch passing it, or a block above it, is refused whole by its words", () => {
    const n = open();
    const t = n.config.timestamp;
    expect(refusal(() => n.mine(U64_MAX + 1n, t))).toEqual([400, "invalid_height", `height ${U64_MAX + 1n} is not above the head 0 (and a u64)`]);
    expect(refusal(() => finish(n.mineSteps(3, U64_MAX - 1n, t)))).toEqual([400, "invalid_blocks", `3 blocks from height ${U64_MAX - 1n} would pass the last u64 height`]);
    expect(n.head().height).toBe(0n);
    const batch = finish(n.mineSteps(2, U64_MAX - 1n, t));
    expect([batch.first.height, batch.last.height, batch.blocks, batch.last.timestamp]).toEqual([U64_MAX - 1n, U64_MAX, 2, t + n.config.block_time_seconds]);
    expect(refusal(() => n.mine())).toEqual([400, "invalid_height", `height ${U64_MAX + 1n} is not above the head ${U64_MAX} (and a u64)`]);
  });

  it("a block whose timestamp is exactly the last u64 is produced; the next one is refused, naming its height", () => {
    const n = open();
    const bt = n.config.block_time_seconds;
    n.mine(undefined, U64_MAX - 2n * bt);
    // A batch is checked whole before its first block: its last timestamp would pass u64.
    expect(refusal(() => finish(n.mineSteps(3)))).toEqual([400, "invalid_blocks", "the timestamp of height 4 would exceed u64"]);
    expect(n.head().height).toBe(1n);
    const batch = finish(n.mineSteps(2));
    expect([batch.last.height, batch.last.timestamp]).toEqual([3n, U64_MAX]);
    expect(refusal(() => n.mine())).toEqual([400, "invalid_height", "the timestamp of height 4 exceeds u64"]);
    expect(refusal(() => n.mine(undefined, U64_MAX - 1n))).toEqual([400, "invalid_timestamp", `timestamp ${U64_MAX - 1n} is before the head's ${U64_MAX} (block 3): block timestamps never run backwards`]);
    expect(n.mine(undefined, U64_MAX).block.timestamp).toBe(U64_MAX);
  });
});

describe("an empty block", () => {
  it("needs no dry run: an empty pool's block resumes no throwaway chain, a pool's block one per dry run", () => {
    const n = open();
    const resume = vi.spyOn(Chain, "resume");
    try {
      n.mine();
      expect(resume).not.toHaveBeenCalled();
      n.submit(transferTx(CHAIN, A, 0n, B, 1n));
      n.mine();
      expect(resume).toHaveBeenCalledTimes(1);
    } finally {
      resume.mockRestore();
    }
  });

  it("has the roots of no transactions, its own copies: changing one record's roots changes no other block's", () => {
    const n = open();
    const first = n.mine().block;
    const empty = [txRoot([]), receiptRoot([]), logsRoot([])].map(toHex);
    expect([first.tx_root, first.receipt_root, first.logs_root].map(toHex)).toEqual(empty);
    for (const root of [first.tx_root, first.receipt_root, first.logs_root]) root.fill(0xee);
    const second = n.mine().block;
    expect([second.tx_root, second.receipt_root, second.logs_root].map(toHex)).toEqual(empty);
  });
});

describe("what the node's owner is told of each produced block", () => {
  it("onBlockTimed: each block's apply and commit milliseconds, never negative, together within the time the calls took", () => {
    const n = open();
    const timed: Array<[number, number]> = [];
    n.onBlockTimed = (apply, commit) => timed.push([apply, commit]);
    n.submit(transferTx(CHAIN, A, 0n, B, 1n));
    const before = performance.now();
    n.mine();
    finish(n.mineSteps(2));
    const elapsed = performance.now() - before;
    expect(timed).toHaveLength(3);
    for (const [apply, commit] of timed) {
      expect(apply).toBeGreaterThanOrEqual(0);
      expect(commit).toBeGreaterThanOrEqual(0);
      expect(apply + commit).toBeLessThanOrEqual(elapsed);
    }
  });

  it("a store refusing a block, with a StoreError or any other error, is told to onStoreFailed and stops production: no block after it, by name (the ChainDb contract: a staged block never committed leaves the store refusing writes)", () => {
    for (const refuse of [new Error("a bug"), new StoreError("MDB_MAP_FULL: the map is full")]) {
      const db = new RefusingDb();
      const n = open(db);
      const failed: Error[] = [];
      const blocks: bigint[] = [];
      n.onStoreFailed = (err) => failed.push(err);
      n.listen({ block: (b) => blocks.push(b.height), rewound: () => undefined });
      db.refuse = refuse;
      expect(() => n.mine()).toThrow(refuse);
      expect([failed, n.head().height, blocks]).toEqual([[refuse], 0n, []]);
      // Even once the store would take it, the node produces nothing more: the block was executed and staged.
      db.refuse = undefined;
      expect(refusal(() => n.mine())).toEqual([503, "store_failed", `block production has stopped: the store refused block 1 (${refuse.message}); restart the node`]);
      expect(refusal(() => finish(n.mineSteps(2)))).toEqual([503, "store_failed", `block production has stopped: the store refused block 1 (${refuse.message}); restart the node`]);
      expect([failed.length, n.head().height, blocks]).toEqual([1, 0n, []]);
    }
  });

  it("listeners: every committed block and every rewind, until their removal", () => {
    const n = open();
    const told: string[] = [];
    const listener: ChainListener = { block: (b) => told.push(`block ${b.height}`), rewound: (head, from) => told.push(`rewound ${from.height} → ${head.height}`) };
    const remove = n.listen(listener);
    const { id } = n.snapshot();
    n.mine();
    finish(n.mineSteps(2));
    finish(n.revertSteps(id));
    expect(told).toEqual(["block 1", "block 2", "block 3", "rewound 3 → 0"]);
    remove();
    n.mine();
    finish(n.revertSteps(id));
    expect(told).toHaveLength(4);
  });
});

describe("the outcomes GET /tx remembers beyond the chain", () => {
  const FEES = readFixture("fixtures/corpus/fee-insufficient-balance.json").genesis.source;
  /** A sender holding nothing: its RegisterProvider is dropped (it cannot pay the fee at the reservation). */
  const poor = (i: number) => Uint8Array.from({ length: 20 }, (_, j) => (j < 4 ? (i >> (8 * j)) & 0xff : 0x5a));
  /** REMEMBERED_TXS (not exported): outcomes remembered of each kind. */
  const REMEMBERED = 4_096;
  const mineAll = (n: CbqsNode) => {
    while (n.pending > 0) n.mine();
  };

  it(`only rejections are remembered: ${REMEMBERED} accepted transactions later, the first rejection's message is still there`, () => {
    const n = CbqsNode.open(new MemoryChainDb(), { kind: "genesis", source: FEES });
    const rejected = cbqsTx(CHAIN, A, 0n, ix.setProviderStatus("Draining"));
    n.submit(rejected);
    n.mine();
    const message = n.rejectionMessage(txHash(rejected));
    expect(message).toMatch(/\S/);
    for (let k = 1n; k <= BigInt(REMEMBERED); k++) n.submit(transferTx(CHAIN, A, k, B, 1n));
    mineAll(n);
    expect(n.chain.account(A).nonce).toBe(BigInt(REMEMBERED) + 1n);
    // At most MAX_BLOCK_TXS of the pool per block, in arrival order.
    expect([2n, 3n, 4n, 5n].map((h) => n.db.blockByHeight(h)!.transactions.length)).toEqual(Array(4).fill(MAX_BLOCK_TXS));
    expect(n.head().height).toBe(5n);
    expect(n.rejectionMessage(txHash(rejected))).toBe(message);
  });

  it(`the last ${REMEMBERED} dropped transactions are remembered, the oldest forgotten first; one dropped again is remembered anew, forgetting nothing`, () => {
    const n = CbqsNode.open(new MemoryChainDb(), { kind: "genesis", source: FEES });
    const txs = Array.from({ length: REMEMBERED + 1 }, (_, i) => cbqsTx(CHAIN, poor(i), 0n, ix.registerProvider()));
    const [oldest, again, next, last] = [txs[0]!, txs[1]!, txs[2]!, txs[REMEMBERED]!].map((tx) => txHash(tx));
    // The pool holds MAX_POOL_TXS (= REMEMBERED): the last one goes in after the others are dropped.
    expect(MAX_POOL_TXS).toBe(REMEMBERED);
    for (const tx of txs.slice(0, REMEMBERED)) n.submit(tx);
    mineAll(n);
    expect(n.head().height).toBe(BigInt(REMEMBERED / MAX_BLOCK_TXS));
    expect([n.droppedTx(oldest!), n.droppedTx(txHash(txs[REMEMBERED - 1]!))]).toEqual([expect.objectContaining({ height: 1n }), expect.objectContaining({ height: n.head().height })]);
    // Its nonce was never used: the same envelope is taken again, and dropped again.
    n.submit(txs[1]!);
    const h = n.mine().block.height;
    expect([n.droppedTx(again!)?.height, n.droppedTx(oldest!)?.height]).toEqual([h, 1n]);
    n.submit(txs[REMEMBERED]!);
    n.mine();
    expect([n.droppedTx(oldest!), n.droppedTx(next!)?.height, n.droppedTx(again!)?.height, n.droppedTx(last!)?.height]).toEqual([undefined, 1n, h, h + 1n]);
  });
});

describe("a revert", () => {
  it("forgets what the rewound chain decided: a rejection message and a dropped transaction are no longer remembered", () => {
    // cycle_price 1: 0x11…11 pays the fee of a SetProviderStatus it may not make (rejected); 0x33…33 holds nothing (dropped).
    const n = CbqsNode.open(new MemoryChainDb(), { kind: "genesis", source: readFixture("fixtures/corpus/fee-insufficient-balance.json").genesis.source });
    const { id } = n.snapshot();
    const rejected = cbqsTx(CHAIN, A, 0n, ix.setProviderStatus("Draining"));
    const dropped = cbqsTx(CHAIN, address(0x33), 0n, ix.registerProvider());
    n.submit(rejected);
    n.submit(dropped);
    const mined = n.mine();
    expect(mined.messages).toHaveLength(1);
    expect(n.rejectionMessage(txHash(rejected))).toBe(mined.messages[0]);
    expect(n.rejectionMessage(txHash(rejected))).toMatch(/\S/);
    expect(n.droppedTx(txHash(dropped))).toEqual({ height: 1n, reason: `${"0x" + "33".repeat(20)} holds 0, less than the fee at the reservation 570 of RegisterProvider` });
    finish(n.revertSteps(id));
    expect([n.rejectionMessage(txHash(rejected)), n.droppedTx(txHash(dropped)), n.pending]).toEqual([undefined, undefined, 0]);
  });

  it("keeps the store's --retain-blocks", () => {
    const n = open(new MemoryChainDb(3));
    const { id } = n.snapshot();
    const before = n.db;
    n.mine();
    finish(n.revertSteps(id));
    expect(n.db).not.toBe(before);
    expect(n.db.retainBlocks).toBe(3);
  });
});

describe("a start's refusals and imports", () => {
  it("a genesis the node cannot start from names the path in the file, or the engine's reason", () => {
    const json = JSON.parse(new TextDecoder().decode(GENESIS)) as Record<string, unknown>;
    const source = (o: Record<string, unknown>) => new TextEncoder().encode(JSON.stringify(o));
    const { timestamp: _, ...untimed } = json;
    expect(() => CbqsNode.open(new MemoryChainDb(), { kind: "genesis", source: source(untimed) })).toThrow(new NodeInputError("invalid genesis: $.timestamp: missing"));
    const overflowing = { ...json, accounts: { [`0x${"44".repeat(20)}`]: { balance: U64_MAX.toString() }, [`0x${"45".repeat(20)}`]: { balance: "1" } } };
    expect(() => CbqsNode.open(new MemoryChainDb(), { kind: "genesis", source: source(overflowing) })).toThrow(new NodeInputError("invalid genesis: accounts: total balance exceeds u64"));
  });

  it("a fixture genesis or block that differs is an ImportMismatch (a block's names the block and field); a block that does not decode is a NodeInputError naming its path", () => {
    const f = readFixture("fixtures/corpus/pause-accounting.json");
    const b1 = f.blocks[1]!;
    const differing = { ...f, blocks: [f.blocks[0]!, { ...b1, state_root: new Uint8Array(32) }] };
    expect(() => CbqsNode.open(new MemoryChainDb(), { kind: "fixture", fixture: differing })).toThrow(ImportMismatch);
    expect(() => CbqsNode.open(new MemoryChainDb(), { kind: "fixture", fixture: differing })).toThrow(new RegExp(`^block ${b1.height}: state_root differs$`));
    const otherGenesis = { ...f, genesis: { ...f.genesis, state_root: new Uint8Array(32) } };
    expect(() => CbqsNode.open(new MemoryChainDb(), { kind: "fixture", fixture: otherGenesis })).toThrow(ImportMismatch);
    const undecodable = { ...f, blocks: [f.blocks[0]!, { ...b1, transactions: [new Uint8Array([0x00])] }] };
    expect(() => CbqsNode.open(new MemoryChainDb(), { kind: "fixture", fixture: undecodable })).toThrow(NodeInputError);
    expect(() => CbqsNode.open(new MemoryChainDb(), { kind: "fixture", fixture: undecodable })).toThrow(new RegExp(`^block ${b1.height} \\$\\.blocks\\[1\\]\\.transactions\\[0\\]: `));
  });

  it("onBlock is told every block imported from a fixture, and on a restart only those above the store's head", () => {
    const f = readFixture("fixtures/corpus/pause-accounting.json");
    const db = new MemoryChainDb();
    const seen: bigint[] = [];
    CbqsNode.open(db, { kind: "fixture", fixture: { ...f, blocks: f.blocks.slice(0, 2) } }, (b) => seen.push(b.height));
    expect(seen).toEqual(f.blocks.slice(0, 2).map((b) => b.height));
    seen.length = 0;
    CbqsNode.open(db, { kind: "fixture", fixture: f }, (b) => seen.push(b.height));
    expect(seen).toEqual(f.blocks.slice(2).map((b) => b.height));
  });
});

describe("chain-node.ts' last Stryker survivors", () => {
  // Two seconds a block: a product and a quotient of the block time differ.
  const slow = () => CbqsNode.open(new MemoryChainDb(), { kind: "genesis", source: new TextEncoder().encode(new TextDecoder().decode(GENESIS).replace('"block_time_seconds":"1"', '"block_time_seconds":"2"')) });

  it("a block mined at a later height is timestamped block_time_seconds per height after its parent", () => {
    const n = slow();
    const genesis = n.head().timestamp;
    expect(n.mine(5n).block.timestamp).toBe(genesis + 10n);
    expect(n.mine().block.timestamp).toBe(genesis + 12n);
  });

  it("a batch whose last block's timestamp would pass u64 is refused before its first block", () => {
    const n = slow();
    // Three blocks from U64_MAX − 3: the third would be at U64_MAX + 1.
    expect(refusal(() => finish(n.mineSteps(3, undefined, U64_MAX - 3n)))).toEqual([400, "invalid_blocks", "the timestamp of height 3 would exceed u64"]);
    expect(n.head().height).toBe(0n);
    expect(finish(n.mineSteps(3, undefined, U64_MAX - 4n)).last.timestamp).toBe(U64_MAX);
  });

  it("a batch lists a block that only dropped a transaction among its busy blocks", () => {
    // cycle_price 1: 0x33…33 holds nothing, so its RegisterProvider is dropped at mining.
    const n = CbqsNode.open(new MemoryChainDb(), { kind: "genesis", source: readFixture("fixtures/corpus/fee-insufficient-balance.json").genesis.source });
    n.submit(cbqsTx(7n, address(0x33), 0n, ix.registerProvider()));
    const batch = finish(n.mineSteps(2));
    expect(batch.busy.map((m) => [m.block.height, m.block.transactions.length, m.dropped.length])).toEqual([[1n, 0, 1]]);
  });

  it("its errors carry their names (the CLI's one-line errors and the node's logs show them)", () => {
    expect(new NodeInputError("m").name).toBe("NodeInputError");
    expect(new ImportMismatch({ height: 1n, path: "$", field: "f", expected: "a", actual: "b", details: [] }).name).toBe("ImportMismatch");
  });
});
