// The node's chain (src/chain-node/chain-node.ts) in process: how it refuses a store it cannot serve,
// a pool that is full, and the devnet snapshots it cannot take or find — each by its words.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readFixture } from "../../src/harness/documents.js";
import { CbqsNode, MAX_POOL_TXS, NodeInputError } from "../../src/chain-node/chain-node.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";
import { LmdbChainDb } from "../../state/lmdb/chain-db.js";
import { address, post, startNode, toHex, transferTx } from "./helpers.js";

const root = mkdtempSync(join(tmpdir(), "cbqs-chain-node-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const TRANSFERS = readFixture("fixtures/corpus/transfers.json");

describe("the node's chain refuses by name", () => {
  it("an empty store started as a store, and a store holding another chain", () => {
    expect(() => CbqsNode.open(new MemoryChainDb(), { kind: "store" })).toThrow(new NodeInputError("the store is empty: start a chain with --genesis <file> or --fixture <file>"));
    const db = new MemoryChainDb();
    CbqsNode.open(db, { kind: "fixture", fixture: readFixture("fixtures/corpus/create-quote.json") });
    const held = toHex(db.genesis()!.chain_instance_id);
    const message = `the store holds another chain (chain_instance_id ${held}); use its genesis or another store`;
    expect(() => CbqsNode.open(db, { kind: "fixture", fixture: TRANSFERS })).toThrow(new NodeInputError(message));
    expect(() => CbqsNode.open(db, { kind: "genesis", source: TRANSFERS.genesis.source })).toThrow(new NodeInputError(message));
  });

  it(`a pool of ${MAX_POOL_TXS} transactions takes no more until a block is mined`, async () => {
    const n = await startNode({ kind: "genesis", source: TRANSFERS.genesis.source });
    try {
      const chainId = TRANSFERS.genesis.config.chain_id;
      // Distinct senders: each transaction is its sender's next nonce.
      for (let i = 0; i < MAX_POOL_TXS; i++) n.node.submit(transferTx(chainId, Uint8Array.from({ length: 20 }, (_, j) => (j < 4 ? (i >> (8 * j)) & 0xff : 0x5a)), 0n, address(2), 1n));
      const full = await post(n.url, "/tx", toHex(transferTx(chainId, address(9), 0n, address(2), 1n)));
      expect([full.status, full.body["error"]]).toEqual([503, { code: "tx_pool_full", message: `the pool holds ${MAX_POOL_TXS} transactions; mine a block first` }]);
    } finally {
      await n.close();
    }
  });

  it("devnet snapshots: none on a --db store (501), an unknown id (404)", async () => {
    const lmdb = await startNode({ kind: "genesis", source: TRANSFERS.genesis.source }, { db: LmdbChainDb.open(join(root, "db")) });
    try {
      const r = await post(lmdb.url, "/devnet/snapshot", "");
      expect(r.status).toBe(501);
      expect(r.body["error"]).toMatchObject({ code: "not_supported" });
      expect((r.body["error"] as { message: string }).message).toMatch(/^snapshots and reverts need the in-memory store: this node keeps its chain in a --db store \(LMDB\), whose committed blocks are never rewound; /);
    } finally {
      await lmdb.close();
    }
    const memory = await startNode({ kind: "genesis", source: TRANSFERS.genesis.source });
    try {
      const r = await post(memory.url, "/devnet/revert?id=99", "");
      expect(r.status).toBe(404);
      expect(r.body["error"]).toMatchObject({ code: "snapshot_not_found" });
      expect((r.body["error"] as { message: string }).message).toMatch(/^no snapshot 99: ids come from POST \/devnet\/snapshot; a revert forgets the snapshots taken after its own, and only the last \d+ are kept$/);
    } finally {
      await memory.close();
    }
  });
});
