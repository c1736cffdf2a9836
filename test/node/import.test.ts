// `cbqs node --fixture`: importing a chain executes every block through the engine exactly as
// `cbqs replay` does — every root, receipt and block hash the node commits is the fixture's — and
// a fixture block that does not verify stops the node with replay's report (exit 1).
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { toHex } from "../../src/bytes.js";
import { genesisHash, headerHash } from "../../src/chain/block.js";
import { readFixture } from "../../src/harness/documents.js";
import { CbqsNode, ImportMismatch } from "../../src/chain-node/chain-node.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";
import { LmdbChainDb } from "../../state/lmdb/chain-db.js";
import { cbqs } from "../cli/program.js";
import { corpusFiles, readDoc } from "../harness/helpers.js";
import { get, startNode } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "cbqs-node-import-"));

describe("cbqs node --fixture: import verifies like replay", () => {
  it("every corpus fixture: genesis and every block's roots, effective_rent_height, receipts and block hash are the fixture's", () => {
    for (const file of corpusFiles()) {
      const fixture = readFixture(file);
      const db = new MemoryChainDb();
      CbqsNode.open(db, { kind: "fixture", fixture });
      const g = db.genesis()!;
      expect(toHex(g.chain_instance_id), file).toBe(toHex(fixture.genesis.chain_instance_id));
      expect(toHex(g.block.state_root), file).toBe(toHex(fixture.genesis.state_root));
      expect(db.head()!.height, file).toBe(fixture.blocks[fixture.blocks.length - 1]!.height);
      let parent = g.block.block_hash;
      for (const b of fixture.blocks) {
        const r = db.blockByHeight(b.height)!;
        const hex = (x: Uint8Array) => toHex(x);
        expect([r.state_root, r.tx_root, r.receipt_root, r.logs_root, r.block_hash].map(hex), `${file} block ${b.height}`).toEqual(
          [b.state_root, b.tx_root, b.receipt_root, b.logs_root, b.block_hash].map(hex),
        );
        expect(r.effective_rent_height).toBe(b.effective_rent_height);
        expect(r.receipts).toEqual(b.receipts);
        expect(r.transactions).toEqual(b.transactions);
        expect(hex(r.parent_hash)).toBe(hex(parent));
        parent = r.block_hash;
      }
      db.close();
    }
  });

  it("a tampered block stops the import at that block with the replay mismatch; nothing after it is committed", () => {
    const fixture = readFixture("fixtures/corpus/create-quote.json");
    fixture.blocks[1]!.receipts[0]!.cycles += 1n;
    const db = new MemoryChainDb();
    let thrown: unknown;
    try {
      CbqsNode.open(db, { kind: "fixture", fixture });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ImportMismatch);
    expect((thrown as ImportMismatch).mismatch).toMatchObject({ height: 5n, path: "$.blocks[1].receipts[0].cycles" });
    expect(db.head()!.height).toBe(1n);
  });

  it("the CLI prints replay's MISMATCH report and exits 1 before serving anything", async () => {
    const doc = readDoc("fixtures/corpus/create-quote.json");
    doc.blocks[2]!["state_root"] = "0x" + "00".repeat(32);
    const file = join(dir, "tampered.json");
    writeFileSync(file, JSON.stringify(doc));
    const r = await cbqs("node", "--fixture", file, "--port", "0", "--quiet");
    expect(r.exitCode).toBe(1);
    expect(r.out).toMatch(new RegExp(`^MISMATCH ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: block 6: state_root \\(\\$\\.blocks\\[2\\]\\.state_root\\): expected 0x0{64} got 0x[0-9a-f]{64}\\n`));
    expect(r.out).not.toMatch(/listening on/);
  });

  it("node --db --fixture refuses to start (exit 1, the mismatch line) when a stored block differs from the fixture's; the store is untouched", async () => {
    const store = join(dir, "i21-store");
    expect((await cbqs("replay", "fixtures/corpus/create-quote.json", "--db", store, "--to-height", "5", "--quiet")).exitCode).toBe(0);
    const doc = readDoc("fixtures/corpus/create-quote.json");
    doc.blocks[0]!["state_root"] = "0x" + "ee".repeat(32); // its block_hash left as it was
    const file = join(dir, "i21-tampered.json");
    writeFileSync(file, JSON.stringify(doc));
    const before = readFileSync(join(store, "data.mdb"));
    const r = await cbqs("node", "--db", store, "--fixture", file, "--port", "0", "--quiet");
    expect(r.exitCode).toBe(1);
    expect(r.out).toMatch(new RegExp(`^MISMATCH ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: block 1: state_root \\(\\$\\.blocks\\[0\\]\\.state_root\\): expected 0x(ee){32} got 0x[0-9a-f]{64}\\n`));
    expect(r.out).not.toMatch(/listening on/);
    expect(readFileSync(join(store, "data.mdb")).equals(before)).toBe(true);
    // In-process, the same: ImportMismatch at block 1, nothing imported above the store's head.
    const db = LmdbChainDb.open(store);
    try {
      const fixture = readFixture(file);
      expect(() => CbqsNode.open(db, { kind: "fixture", fixture })).toThrow(ImportMismatch);
      expect(db.head()!.height).toBe(5n);
    } finally {
      db.close();
    }
  });

  it("node --db --fixture on a snapshot store refuses a forged fixture holding only block 1 (another state_root, a recomputed block_hash): it cannot reach the snapshot's block", async () => {
    const FIXTURE = "fixtures/corpus/create-quote.json"; // blocks 1, 5, 6
    const source = join(dir, "i21-snap-source");
    const snap = join(dir, "i21-h5.cbqs");
    const store = join(dir, "i21-snap-store");
    expect((await cbqs("replay", FIXTURE, "--db", source, "--to-height", "5", "--quiet")).exitCode).toBe(0);
    expect((await cbqs("snapshot", "export", "--db", source, "-o", snap)).exitCode).toBe(0);
    expect((await cbqs("snapshot", "import", snap, "--db", store)).exitCode).toBe(0);
    const fixture = readFixture(FIXTURE);
    const g = fixture.genesis;
    const b1 = fixture.blocks[0]!;
    const forgedRoot = new Uint8Array(32).fill(0xee);
    const doc = readDoc(FIXTURE);
    doc.blocks = doc.blocks.slice(0, 1);
    doc.blocks[0]!["state_root"] = toHex(forgedRoot);
    doc.blocks[0]!["block_hash"] = toHex(headerHash(g.chain_instance_id, b1.height, b1.timestamp, genesisHash(g.chain_instance_id, g.config.timestamp, g.state_root), forgedRoot, b1));
    const file = join(dir, "i21-snap-forged.json");
    writeFileSync(file, JSON.stringify(doc));
    const before = readFileSync(join(store, "data.mdb"));
    const r = await cbqs("node", "--db", store, "--fixture", file, "--port", "0", "--quiet");
    expect(r.exitCode).toBe(1);
    expect(r.out).toMatch(/^MISMATCH [^\n]*: block 5: block \(\$\.blocks\): expected no block at height 5 \(the fixture ends at block 1\)/);
    expect(r.out).not.toMatch(/listening on/);
    expect(readFileSync(join(store, "data.mdb")).equals(before)).toBe(true);
  });

  it("a node opening a store kept with a larger --retain-blocks prunes the older undo rows, logs it, and serves the window's pinned reads", async () => {
    const LONG = "fixtures/corpus/rent-settle-suspend-expire.json"; // 9 blocks
    const fixture = readFixture(LONG);
    const heights = fixture.blocks.map((b) => b.height);
    const store = join(dir, "i21-retain");
    expect((await cbqs("replay", LONG, "--db", store, "--retain-blocks", "8", "--quiet")).exitCode).toBe(0);
    const n = await startNode({ kind: "fixture", fixture }, { db: LmdbChainDb.open(store, { retainBlocks: 2 }) });
    try {
      expect(n.logs).toContainEqual({ level: "info", msg: "pruned undo rows", from: String(heights[1]), to: String(heights[6]), blocks: 6, retain_blocks: 2 });
      // A pinned read of the lowest retained block is served (any stream: the state is read first); the block below it is refused.
      const pinned = (b: number) => get(n.url, `/cbqs/broker-state?stream=0x${"00".repeat(32)}&block=${toHex(fixture.blocks[b]!.block_hash)}`);
      expect((await pinned(6)).status).not.toBe(410);
      expect((await pinned(5)).body["error"]).toMatchObject({ code: "block_not_retained" });
      expect(n.db.stateAt(heights[6]!)).toBeDefined();
    } finally {
      await n.close();
    }
    const db = LmdbChainDb.open(store);
    try {
      expect([...db.env.table("undokeys").getKeys()].map((k) => Buffer.from(k).readBigUInt64BE(0))).toEqual(heights.slice(7));
    } finally {
      db.close();
    }
  });
});
