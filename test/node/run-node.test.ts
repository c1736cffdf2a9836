// src/node/run.ts by hand (its mutants): what a started node logs (serving, each block,
// each imported block), its mining mode and block time agreeing, interval production that waits
// its interval, a store that refuses a block stopping production once (reported, and the caller
// told, not retried as a production failure), and close(): once, idempotent, every store it holds.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { toHex } from "../../src/bytes.js";
import { ix } from "../../src/gas/builder.js";
import { devnetGenesisSource } from "../../src/harness/devnet.js";
import { readFixture } from "../../src/harness/documents.js";
import { DEFAULT_GENESIS_SOURCE } from "../../src/harness/genesis.js";
import { runNode } from "../../src/node/run.js";
import type { BlockRecord } from "../../state/chain-db/chain-db.js";
import { StoreError } from "../../state/lmdb/errors.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";
import { LmdbChainDb } from "../../state/lmdb/chain-db.js";
import { address, cbqsTx, post, startNode, transferTx } from "./helpers.js";

const TRANSFERS = readFixture("fixtures/corpus/transfers.json");

/** Resolves once `check` holds, failing after 10 s. */
async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`still waiting for ${what} after 10 s`);
}

/** A store that refuses every block once `refusing` is set, as a full disk does (a StoreError). */
class RefusingDb extends MemoryChainDb {
  refusing = false;
  attempts = 0;
  /** Refuse with a plain Error instead (a bug in the store, not its own refusal). */
  constructor(private readonly bug = false) {
    super();
  }
  override commitBlock(block: BlockRecord): void {
    if (this.refusing) {
      this.attempts++;
      const message = `block ${block.height} could not be written`;
      throw this.bug ? new Error(message) : new StoreError(message);
    }
    super.commitBlock(block);
  }
}

const base = { host: "127.0.0.1", port: 0, rateLimit: 0, proofRateLimit: 0, proofLimits: { maxExclusionOps: 4096 } };

describe("runNode's logs", () => {
  it("serving names the URL, chain instance, height and mining mode (a fixture's genesis is neither the default nor a devnet's); each block its height, transactions and dropped transactions; each imported block its height", async () => {
    const n = await startNode({ kind: "fixture", fixture: TRANSFERS });
    try {
      const head = n.node.head().height;
      expect(n.logs.find((l) => l["msg"] === "serving")).toEqual({ level: "info", msg: "serving", url: n.url, chain_instance_id: toHex(n.node.chainInstanceId), height: head.toString(), mining: "manual" });
      expect(n.logs.filter((l) => l["msg"] === "imported")).toEqual(TRANSFERS.blocks.map((b) => ({ level: "debug", msg: "imported", height: b.height.toString(), txs: b.transactions.length })));
    } finally {
      await n.close();
    }
    const g = await startNode({ kind: "genesis", source: TRANSFERS.genesis.source });
    try {
      expect((await post(g.url, "/tx", toHex(transferTx(7n, address(0x11), 0n, address(0x22), 1n)))).status).toBe(200);
      await post(g.url, "/mine", "");
      await post(g.url, "/mine", "");
      expect(g.logs.filter((l) => l["msg"] === "block")).toEqual([
        { level: "info", msg: "block", height: "1", txs: 1, dropped: 0 },
        { level: "info", msg: "block", height: "2", txs: 0, dropped: 0 },
      ]);
    } finally {
      await g.close();
    }
    // 0x33…33 holds nothing: its transaction is dropped from the block (mining.test.ts's case).
    const d = await startNode({ kind: "genesis", source: readFixture("fixtures/corpus/fee-insufficient-balance.json").genesis.source });
    try {
      expect((await post(d.url, "/tx", toHex(cbqsTx(7n, address(0x33), 0n, ix.registerProvider())))).status).toBe(200);
      await post(d.url, "/mine", "");
      expect(d.logs.filter((l) => l["msg"] === "block")).toEqual([{ level: "info", msg: "block", height: "1", txs: 0, dropped: 1 }]);
    } finally {
      await d.close();
    }
  });

  it("the default genesis is named as such", async () => {
    const n = await startNode({ kind: "genesis", source: DEFAULT_GENESIS_SOURCE });
    try {
      expect(n.logs.find((l) => l["msg"] === "serving")).toEqual({ level: "info", msg: "serving", url: n.url, chain_instance_id: toHex(n.node.chainInstanceId), height: "0", genesis: "default", mining: "manual" });
    } finally {
      await n.close();
    }
  });

  it("a batch of blocks is one log line, with its heights, blocks and transactions", async () => {
    const n = await startNode({ kind: "genesis", source: devnetGenesisSource(1) });
    try {
      expect((await post(n.url, "/mine?blocks=3", "")).status).toBe(200);
      expect(n.logs.filter((l) => l["msg"] === "blocks")).toEqual([{ level: "info", msg: "blocks", from: "1", to: "3", blocks: 3, txs: 0 }]);
    } finally {
      await n.close();
    }
  });

  it("a store kept with a larger --retain-blocks has its undo rows below the window pruned at start, logged with the heights", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cbqs-run-node-"));
    try {
      const wide = LmdbChainDb.open(dir, { retainBlocks: 10 });
      const first = await runNode(wide, { kind: "genesis", source: devnetGenesisSource(1) }, { ...base, blockTime: 0, log: () => undefined });
      for (let i = 0; i < 5; i++) first.node.mine();
      await first.close();
      const narrow = LmdbChainDb.open(dir, { retainBlocks: 2 });
      const logs: Array<Record<string, unknown>> = [];
      const second = await runNode(narrow, { kind: "store" }, { ...base, blockTime: 0, log: (e) => logs.push(e) });
      await second.close();
      expect(logs.filter((l) => l["msg"] === "pruned undo rows")).toEqual([{ level: "info", msg: "pruned undo rows", from: "1", to: "3", blocks: 3, retain_blocks: 2 }]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("a devnet genesis is named with its dev accounts", async () => {
    const n = await startNode({ kind: "genesis", source: devnetGenesisSource(3) });
    try {
      expect(n.logs.find((l) => l["msg"] === "serving")).toEqual({ level: "info", msg: "serving", url: n.url, chain_instance_id: toHex(n.node.chainInstanceId), height: "0", genesis: "devnet", dev_accounts: 3, mining: "manual" });
    } finally {
      await n.close();
    }
  });
});

describe("runNode's mining", () => {
  it("a mining mode that disagrees with the block time is refused (the CLI never passes one)", async () => {
    for (const [mining, blockTime] of [
      ["interval", 0],
      ["manual", 5],
      ["auto", 1],
    ] as const) {
      const db = new MemoryChainDb();
      try {
        await expect(runNode(db, { kind: "genesis", source: devnetGenesisSource(1) }, { ...base, blockTime, mining, log: () => {} })).rejects.toThrow(
          new Error(`internal: mining ${mining} with a block time of ${blockTime} s`),
        );
      } finally {
        db.close();
      }
    }
  });

  it("interval mining waits its block time: none within a second of an hour's", async () => {
    const n = await startNode({ kind: "genesis", source: devnetGenesisSource(1) }, { blockTime: 3600 });
    try {
      await new Promise((done) => setTimeout(done, 1000));
      expect(n.node.head().height).toBe(0n);
      expect(n.logs.find((l) => l["msg"] === "serving")).toMatchObject({ mining: "interval" });
    } finally {
      await n.close();
    }
  });

  it("a block that cannot be produced is logged with its stack (where it failed), as level error", async () => {
    const n = await startNode({ kind: "genesis", source: devnetGenesisSource(1) }, { blockTime: 0.02 });
    try {
      // The last height whose timestamp fits in a u64: every later block's timestamp overflows (devnet.test.ts's case).
      const g = n.node.config;
      expect((await post(n.url, `/mine?height=${((1n << 64n) - 1n - g.timestamp) / g.block_time_seconds}`, "")).status).toBe(200);
      await until("a failure", () => n.logs.some((l) => l["msg"] === "block production failed"));
      const failure = n.logs.find((l) => l["msg"] === "block production failed")!;
      expect(failure["level"]).toBe("error");
      expect(String(failure["error"])).toMatch(/^InvalidHeight: .*exceeds u64.*\n\s+at /);
    } finally {
      await n.close();
    }
  });

  for (const [told, bug] of [
    [true, false],
    [false, false],
    [true, true],
  ] as const) {
    it(`a store that refuses a produced block${bug ? " with an error other than a StoreError (a bug)" : ""} stops interval production once: logged${bug ? " with its stack" : ""}, ${told ? "the caller told" : "no caller to tell"}, never retried nor logged as a production failure`, async () => {
      const db = new RefusingDb(bug);
      const logs: Array<Record<string, unknown>> = [];
      const fatal: Error[] = [];
      const n = await runNode(db, { kind: "genesis", source: devnetGenesisSource(1) }, { ...base, blockTime: 0.02, log: (e) => logs.push(e), ...(told ? { onFatal: (err: Error) => fatal.push(err) } : {}) });
      try {
        await until("a block", () => n.node.head().height > 0n);
        db.refusing = true;
        await until("the refusal", () => logs.some((l) => l["level"] === "error"));
        const mine = vi.spyOn(n.node, "mine");
        // Fifty intervals: production would have tried again by now — its timer is stopped, not only refused.
        await new Promise((done) => setTimeout(done, 1000));
        expect([db.attempts, mine.mock.calls.length]).toEqual([1, 0]);
        const message = `block ${n.node.head().height + 1n} could not be written`;
        expect(logs.filter((l) => l["level"] === "error")).toEqual([{ level: "error", msg: "the store refused a block; stopping", error: bug ? expect.stringMatching(new RegExp(`^Error: ${message}\\n\\s+at `)) : message }]);
        expect(fatal.map((e) => e.message)).toEqual(told ? [`block ${n.node.head().height + 1n} could not be written`] : []);
      } finally {
        await n.close();
      }
    });
  }
});

describe("closing a node", () => {
  it("closing an interval-mining node stops its timer: no block is attempted on the closed store afterwards", async () => {
    const n = await startNode({ kind: "genesis", source: devnetGenesisSource(1) }, { blockTime: 0.02 });
    await until("a block", () => n.node.head().height > 0n);
    await n.close();
    const logged = n.logs.length;
    // Twenty-five intervals: a timer left running would have tried (and failed) by now.
    await new Promise((done) => setTimeout(done, 500));
    expect(n.logs.slice(logged)).toEqual([]);
  });

  it("close() twice is one close: the server stops answering, and both the first store and the one a revert put in its place are closed", async () => {
    const db = new MemoryChainDb();
    const n = await startNode({ kind: "genesis", source: devnetGenesisSource(1) }, { db });
    await post(n.url, "/mine", "");
    const snap = String((await post(n.url, "/devnet/snapshot", "")).body["id"]);
    await post(n.url, "/mine", "");
    expect((await post(n.url, `/devnet/revert?id=${snap}`, "")).status).toBe(200);
    const current = n.node.db;
    expect(current).not.toBe(db);
    const first = n.close();
    const second = n.close();
    expect(second).toBe(first);
    await expect(Promise.all([first, second])).resolves.toEqual([undefined, undefined]);
    await expect(fetch(`${n.url}/genesis`)).rejects.toThrow();
    expect(() => db.checkCommitted()).toThrow("the ChainDb is closed");
    expect(() => (current as MemoryChainDb).checkCommitted()).toThrow("the ChainDb is closed");
  });
});
