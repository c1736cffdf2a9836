// feed() pages the replication feed one page at a time and links every block to the one
// before it. A proxy serves one node's pages with a block of another history of the same genesis
// spliced in (each block valid on its own): the break is a FeedBroken naming both heights and
// hashes. A block altered in place no longer hashes to its block_hash: ProofInvalid.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CbqsNode } from "../../src/chain-node/chain-node.js";
import { exportSnapshot } from "../../src/store-tools/snapshot.js";
import { LmdbChainDb } from "../../state/lmdb/chain-db.js";
import { cbqs } from "../cli/program.js";
import { createClient, FeedBroken, ProofInvalid, type Block } from "../../src/client/index.js";
import { readFixture } from "../../src/harness/documents.js";
import { address, post, startNode, toHex, transferTx, type TestNode } from "../node/helpers.js";
import { flipHex, proxy, rejection, type TestServer } from "./helpers.js";

const GENESIS = readFixture("fixtures/corpus/transfers.json").genesis.source;
type Obj = Record<string, unknown>;

/** A devnet from GENESIS: `transfers` transfers in block 1, then empty blocks up to `blocks`. */
async function devnet(blocks: number, transfers: number): Promise<TestNode> {
  const n = await startNode({ kind: "genesis", source: GENESIS });
  for (let i = 0; i < transfers; i++) await post(n.url, "/tx", toHex(transferTx(7n, address(0x11), BigInt(i), address(0x22), 1n)));
  for (let i = 0; i < blocks; i++) await post(n.url, "/mine", "");
  return n;
}

async function collect(feed: AsyncIterable<Block>): Promise<Block[]> {
  const out: Block[] = [];
  for await (const b of feed) out.push(b);
  return out;
}

describe("the verified feed", () => {
  let a: TestNode;
  let b: TestNode;
  const servers: TestServer[] = [];
  beforeAll(async () => {
    [a, b] = await Promise.all([devnet(7, 2), devnet(7, 0)]);
  });
  afterAll(async () => {
    for (const s of servers) await s.close();
    await Promise.all([a.close(), b.close()]);
  });

  async function via(edit: (path: string, body: Obj) => Obj | undefined = () => undefined): Promise<TestServer> {
    const p = await proxy(a.url, edit);
    servers.push(p);
    return p;
  }

  it("every block from since to the head, in order, one page held at a time; until stops there", async () => {
    const p = await via();
    const client = createClient(p.url);
    const feed = client.feed({ pageSize: 2 });
    const first = await feed.next();
    expect((first.value as Block).height).toBe(1n);
    // Lazily: the first block came from the first page alone (and genesis, the first parent).
    expect(p.requests).toEqual(["/genesis", "/replication?since=1&limit=2"]);
    const rest = await collect(feed);
    const all = [first.value as Block, ...rest];
    expect(all.map((x) => x.height)).toEqual([1n, 2n, 3n, 4n, 5n, 6n, 7n]);
    for (const x of all) expect(toHex(x.blockHash)).toBe(toHex(a.db.blockByHeight(x.height)!.block_hash));
    expect(p.requests.filter((r) => r.startsWith("/replication"))).toEqual(["/replication?since=1&limit=2", "/replication?since=3&limit=2", "/replication?since=5&limit=2", "/replication?since=7&limit=2"]);
    // From the middle: the first block's parent is the block the page's prev cursor names.
    expect((await collect(client.feed({ since: 3, until: 5n }))).map((x) => x.height)).toEqual([3n, 4n, 5n]);
  });

  it("a block of another history spliced into the feed is a FeedBroken naming both heights and hashes", async () => {
    const spliced = (await (await fetch(`${b.url}/replication?since=2&until=2`)).json()) as { items: Obj[] };
    const p = await via((path, body) => {
      if (!path.startsWith("/replication")) return undefined;
      body["items"] = (body["items"] as Obj[]).map((item) => (item["height"] === "2" ? spliced.items[0]! : item));
      return body;
    });
    const client = createClient(p.url);
    const err = await rejection(collect(client.feed()));
    expect(err).toBeInstanceOf(FeedBroken);
    const ours1 = toHex(a.db.blockByHeight(1n)!.block_hash);
    const theirs1 = toHex(b.db.blockByHeight(1n)!.block_hash);
    expect(ours1).not.toBe(theirs1);
    expect(err).toMatchObject({ height: 2n, parentHash: theirs1, previousHeight: 1n, previousHash: ours1 });
    expect(err.message).toBe(`${p.url}/replication?since=1&limit=100: block 2: parent_hash ${theirs1} is not the hash of block 1 (${ours1})`);
    // The same block first on a page: its parent is the block below the page (prev), fetched and checked.
    expect(await rejection(collect(client.feed({ since: 2 })))).toMatchObject({ name: "FeedBroken", height: 2n, previousHeight: 1n, previousHash: ours1 });
  });

  it("a block altered in place (one byte of its state_root) is a ProofInvalid, never yielded", async () => {
    const p = await via((path, body) => {
      if (!path.startsWith("/replication")) return undefined;
      for (const item of body["items"] as Obj[]) if (item["height"] === "4") item["state_root"] = flipHex(item["state_root"] as string);
      return body;
    });
    const seen: bigint[] = [];
    const err = await rejection(
      (async () => {
        for await (const x of createClient(p.url).feed()) seen.push(x.height);
      })(),
    );
    expect(err).toBeInstanceOf(ProofInvalid);
    expect(err).toMatchObject({ check: "block_hash", height: 4n });
    expect(seen).toEqual([1n, 2n, 3n]);
  });

  it("a receipt altered in place no longer gives the block's receipt_root", async () => {
    const p = await via((path, body) => {
      if (!path.startsWith("/replication")) return undefined;
      for (const item of body["items"] as Obj[]) if (item["height"] === "1") ((item["receipts"] as Obj[])[0]!)["cycles"] = "1";
      return body;
    });
    expect(await rejection(collect(createClient(p.url).feed()))).toMatchObject({ name: "ProofInvalid", check: "receipt_root", height: 1n });
  });

  it("on a node started from a snapshot the feed starts at the history-start block, whose hash must be the one GET /genesis declares", async () => {
    const root = mkdtempSync(join(tmpdir(), "cbqs-client-feed-"));
    const full = LmdbChainDb.open(join(root, "full"));
    CbqsNode.open(full, { kind: "fixture", fixture: readFixture("fixtures/corpus/create-quote.json") });
    const start = exportSnapshot(full, join(root, "snap.cbqs"));
    full.close();
    expect((await cbqs("snapshot", "import", join(root, "snap.cbqs"), "--db", join(root, "from-snapshot"))).exitCode).toBe(0);
    const node = await startNode({ kind: "store" }, { db: LmdbChainDb.open(join(root, "from-snapshot")) });
    try {
      await post(node.url, "/mine", "");
      await post(node.url, "/mine", "");
      expect((await collect(createClient(node.url).feed())).map((x) => x.height)).toEqual([start.height, start.height + 1n, start.height + 2n]);
      const p = await proxy(node.url, (path, body) => {
        if (path !== "/genesis") return undefined;
        const h = body["history_start"] as Obj;
        h["block_hash"] = flipHex(h["block_hash"] as string);
        return body;
      });
      servers.push(p);
      expect(await rejection(collect(createClient(p.url).feed()))).toMatchObject({ name: "ProofInvalid", check: "block_hash", height: start.height, message: expect.stringMatching(/history-start block/) });
    } finally {
      await node.close();
      rmSync(root, { recursive: true, force: true });
    }
  });
});
