// Snapshots to revert to. POST /devnet/snapshot records the head block and the pool;
// POST /devnet/revert?id= rewinds the chain to that block exactly — state, blocks, indexes, the
// pool as it was — by replaying the chain's own blocks into a fresh store; every root after it
// is a fresh replay's (GET /fixture through `cbqs replay`), and a follower that had verified the
// abandoned blocks stops with its fork error. The LMDB store refuses (501).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { txHash } from "../../src/chain/envelope.js";
import { readFixture } from "../../src/harness/documents.js";
import { MAX_SNAPSHOTS } from "../../src/chain-node/chain-node.js";
import { answerOf } from "../../src/node/errors.js";
import { follow } from "../../src/follower/follower.js";
import { finish } from "../../src/steps.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";
import { LmdbChainDb } from "../../state/lmdb/chain-db.js";
import { cbqs } from "../cli/program.js";
import { address, expectedByHeight, fixtureOf, get, post, startNode, toHex, transferTx, type TestNode } from "./helpers.js";

const GENESIS = readFixture("fixtures/corpus/transfers.json").genesis.source;
const CHAIN = 7n;
const [A, B, C] = [address(0x11), address(0x22), address(0x33)];
const dir = mkdtempSync(join(tmpdir(), "cbqs-revert-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const errorCode = (r: { status: number; body: Record<string, unknown> }) => [r.status, (r.body["error"] as { code?: string } | undefined)?.code];

async function send(n: TestNode, from: Uint8Array, to: Uint8Array, amount: bigint): Promise<string> {
  const nonce = BigInt((await get(n.url, `/account/${toHex(from)}`)).body["next_nonce"] as string);
  const tx = transferTx(CHAIN, from, nonce, to, amount);
  expect((await post(n.url, "/tx", toHex(tx))).status).toBe(200);
  return toHex(txHash(tx));
}

/** The node's chain through GET /fixture, replayed by `cbqs replay`: every root, receipt and block hash from genesis. */
async function replayed(n: TestNode, name: string): Promise<{ exitCode: number; out: string; err: string }> {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, await fetch(n.url + "/fixture").then((x) => x.text()));
  return cbqs("replay", file, "--quiet");
}

describe("POST /devnet/snapshot and /devnet/revert", () => {
  it("mine, snapshot, mine more, revert, mine different blocks: the chain is the snapshot's chain plus the new blocks, and replays from genesis (GET /fixture → cbqs replay: ok)", async () => {
    const n = await startNode({ kind: "genesis", source: GENESIS });
    try {
      await send(n, A, B, 10n);
      await post(n.url, "/mine?blocks=3", "");
      const queued = await send(n, A, C, 7n); // in the pool when the snapshot is taken
      const snap = await post(n.url, "/devnet/snapshot", "");
      const at = n.node.head();
      expect(snap.body).toEqual({ height: "3", block_hash: toHex(at.block_hash), state_root: toHex(at.state_root), id: "1", pending: 1 });
      const accountsAt3 = [(await get(n.url, `/account/${toHex(A)}`)).body, (await get(n.url, `/account/${toHex(C)}`)).body];
      // The abandoned future: the queued transfer, more transfers, many blocks.
      await post(n.url, "/mine", "");
      await send(n, B, C, 1n);
      await post(n.url, "/mine?blocks=20", "");
      const abandoned = n.node.head();
      expect(abandoned.height).toBe(24n);
      const abandoned4 = toHex(n.node.db.blockByHeight(4n)!.block_hash);

      const r = await post(n.url, "/devnet/revert?id=1", "");
      expect(r.body).toEqual({
        height: "3",
        block_hash: toHex(at.block_hash),
        state_root: toHex(at.state_root),
        id: "1",
        reverted_from: { height: "24", block_hash: toHex(abandoned.block_hash) },
        pending: 1,
      });
      expect(n.node.head().height).toBe(3n);
      expect(n.node.db.blockByHeight(4n)).toBeUndefined();
      // State, indexes and pool as they were at the snapshot.
      expect([(await get(n.url, `/account/${toHex(A)}`)).body, (await get(n.url, `/account/${toHex(C)}`)).body]).toEqual(accountsAt3);
      expect((await get(n.url, `/tx/${queued}`)).body).toMatchObject({ status: "pending", position: 0 });
      expect((await get(n.url, "/replication?since=1&limit=100")).body["items"]).toHaveLength(3);
      // Different blocks from here: another transfer, another timestamp.
      await send(n, C, B, 2n);
      const mined = await post(n.url, `/mine?timestamp=${at.timestamp + 50n}`, "");
      expect(mined.body).toMatchObject({ height: "4", receipts: [{ tx_hash: queued, status: "ok" }, { status: "ok" }] });
      expect(mined.body["block_hash"]).not.toBe(abandoned4);
      await post(n.url, "/mine?blocks=5", "");
      expect(() => expectedByHeight(fixtureOf(n.node.db, n.node.config))).not.toThrow();
      const replay = await replayed(n, "reverted");
      expect(replay, replay.out).toMatchObject({ exitCode: 0, err: "" });
      expect(replay.out).toMatch(/1 ok/);
    } finally {
      await n.close();
    }
  });

  it("ids: a revert keeps its own snapshot (revert to it again) and forgets the later ones; ids are never reused; bad ids are 400/404; each snapshot and revert is logged", async () => {
    const n = await startNode({ kind: "genesis", source: GENESIS });
    try {
      expect((await post(n.url, "/devnet/snapshot", "")).body).toMatchObject({ id: "1", height: "0" });
      await post(n.url, "/mine?blocks=2", "");
      expect((await post(n.url, "/devnet/snapshot", "")).body).toMatchObject({ id: "2", height: "2" });
      await post(n.url, "/mine", "");
      expect((await post(n.url, "/devnet/revert?id=1", "")).body).toMatchObject({ id: "1", height: "0", reverted_from: { height: "3" } });
      const gone = await post(n.url, "/devnet/revert?id=2", "");
      expect(errorCode(gone)).toEqual([404, "snapshot_not_found"]);
      expect((gone.body["error"] as { message: string }).message).toMatch(/no snapshot 2: .*a revert forgets the snapshots taken after its own/);
      await post(n.url, "/mine", "");
      expect((await post(n.url, "/devnet/revert?id=1", "")).body).toMatchObject({ id: "1", height: "0", reverted_from: { height: "1" } });
      expect((await post(n.url, "/devnet/snapshot", "")).body).toMatchObject({ id: "3", height: "0" });
      expect(errorCode(await post(n.url, "/devnet/revert", ""))).toEqual([400, "missing_id"]);
      for (const q of ["id=x", "id=-1", "id=01", "id=18446744073709551616"]) expect(errorCode(await post(n.url, `/devnet/revert?${q}`, "")), q).toEqual([400, "invalid_id"]);
      expect(errorCode(await post(n.url, "/devnet/revert?id=99", ""))).toEqual([404, "snapshot_not_found"]);
      expect(errorCode(await get(n.url, "/devnet/snapshot"))).toEqual([405, "method_not_allowed"]);
      expect(n.logs.filter((l) => l["msg"] === "reverted").map((l) => [l["id"], l["height"], l["from"]])).toEqual([
        ["1", "0", "3"],
        ["1", "0", "1"],
      ]);
      expect(n.logs.filter((l) => l["msg"] === "snapshot").map((l) => [l["level"], l["id"], l["height"]])).toEqual([
        ["info", "1", "0"],
        ["info", "2", "2"],
        ["info", "3", "0"],
      ]);
    } finally {
      await n.close();
    }
  });

  it(`at most ${MAX_SNAPSHOTS} snapshots are kept: the oldest is forgotten first`, async () => {
    const n = await startNode({ kind: "genesis", source: GENESIS });
    try {
      for (let i = 0; i < MAX_SNAPSHOTS + 1; i++) n.node.snapshot();
      expect(errorCode(await post(n.url, "/devnet/revert?id=1", ""))).toEqual([404, "snapshot_not_found"]);
      expect((await post(n.url, "/devnet/revert?id=2", "")).status).toBe(200);
    } finally {
      await n.close();
    }
  });

  it("a follower that verified the abandoned blocks stops with its fork error: the node's block differs, or its head is below ours", async () => {
    for (const after of ["other blocks", "nothing"] as const) {
      const n = await startNode({ kind: "genesis", source: GENESIS });
      try {
        await post(n.url, "/mine?blocks=2", "");
        const id = (await post(n.url, "/devnet/snapshot", "")).body["id"] as string;
        await post(n.url, "/mine?blocks=8", "");
        const ours = toHex(n.node.db.blockByHeight(10n)!.block_hash);
        const db = new MemoryChainDb();
        const abort = new AbortController();
        const following = follow({ url: n.url, db, watch: true, pollMs: 10, signal: abort.signal });
        for (let i = 0; i < 1000 && (db.head()?.height ?? 0n) < 10n; i++) await new Promise((r) => setTimeout(r, 10));
        expect(db.head()!.height).toBe(10n);
        if (after === "nothing") await post(n.url, `/devnet/revert?id=${id}`, "");
        else {
          // In one turn of the event loop, so the follower's next poll sees the new chain whole.
          finish(n.node.revertSteps(BigInt(id)));
          n.node.submit(transferTx(CHAIN, A, n.node.chain.account(A).nonce, B, 1n));
          for (let i = 0; i < 12; i++) n.node.mine();
        }
        const r = await Promise.race([following, new Promise((resolve) => setTimeout(resolve, 10_000, "still following"))]);
        abort.abort();
        const theirs = after === "nothing" ? "node's head is 2" : `node's ${toHex(n.node.db.blockByHeight(10n)!.block_hash)}`;
        expect(r).toMatchObject({ status: "diverged", message: `the node's chain no longer contains our block 10 (ours ${ours}, ${theirs})` });
        expect(theirs).not.toContain(ours);
      } finally {
        await n.close();
      }
    }
  });

  it("closing the node during a long revert abandons it between two replayed blocks: the chain stays the one it had", async () => {
    const n = await startNode({ kind: "genesis", source: GENESIS });
    await post(n.url, "/mine?blocks=20000", "");
    const id = (await post(n.url, "/devnet/snapshot", "")).body["id"] as string;
    await post(n.url, "/mine", "");
    const reverting = post(n.url, `/devnet/revert?id=${id}`, "").catch((err: unknown) => err);
    await new Promise((r) => setTimeout(r, 100));
    const t = performance.now();
    await n.close();
    const answer = await reverting;
    expect(performance.now() - t).toBeLessThan(5_000);
    if (!(answer instanceof Error)) expect(errorCode(answer as { status: number; body: Record<string, unknown> })).toEqual([503, "shutting_down"]);
    expect(n.logs.filter((l) => l["msg"] === "reverted")).toEqual([]);
  });

  it("a revert under way when the node begins to stop is abandoned between two replayed blocks, saying the chain is as it was; it is", async () => {
    const n = await startNode({ kind: "genesis", source: GENESIS });
    try {
      await post(n.url, "/mine?blocks=3", "");
      const id = BigInt((await post(n.url, "/devnet/snapshot", "")).body["id"] as string);
      await post(n.url, "/mine", "");
      // The node begins to stop once the revert has replayed its first block.
      const revertSteps = n.node.revertSteps.bind(n.node);
      vi.spyOn(n.node, "revertSteps").mockImplementation(function* (snapshot) {
        const steps = revertSteps(snapshot);
        let r = steps.next();
        n.devnet.stop();
        while (r.done !== true) {
          yield r.value;
          r = steps.next();
        }
        return r.value;
      });
      const answer = await n.devnet.revert(id).then(
        () => "reverted",
        (err: unknown) => err,
      );
      expect(answerOf(answer)).toMatchObject({ status: 503, code: "shutting_down", message: "the node is stopping; the chain is as it was before this request" });
      expect(n.node.head().height).toBe(4n);
      expect(n.logs.filter((l) => l["msg"] === "reverted")).toEqual([]);
    } finally {
      await n.close();
    }
  });

  it("a node on the LMDB store (--db) refuses snapshots and reverts with 501 not_supported, saying why", async () => {
    const n = await startNode({ kind: "genesis", source: GENESIS }, { db: LmdbChainDb.open(join(dir, "lmdb")) });
    try {
      const r = await post(n.url, "/devnet/snapshot", "");
      expect(errorCode(r)).toEqual([501, "not_supported"]);
      expect((r.body["error"] as { message: string }).message).toMatch(/snapshots and reverts need the in-memory store: this node keeps its chain in a --db store \(LMDB\)/);
      expect(errorCode(await post(n.url, "/devnet/revert?id=1", ""))).toEqual([501, "not_supported"]);
    } finally {
      await n.close();
    }
  });
});
