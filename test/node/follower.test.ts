// `cbqs follow`: a follower on loopback reaches the node's height with every root and block hash
// verified by replay, resumes from its own last height, and at the first divergence prints the
// same report as `cbqs replay` and exits 1.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { fromHex } from "../../src/bytes.js";
import { genesisHash } from "../../src/chain/block.js";
import { follow, FollowInputError, NodeUnreachable } from "../../src/follower/follower.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";
import { cbqs } from "../cli/program.js";
import { post, startNode, toHex } from "./helpers.js";

const FIXTURE = "fixtures/corpus/rent-settle-suspend-expire.json";

describe("cbqs follow", () => {
  it("reaches the node's height with every block verified; resumes from its own store; --until stops there", async () => {
    const n = await startNode(FIXTURE);
    try {
      for (let i = 0; i < 3; i++) await post(n.url, "/mine", "");
      const db = new MemoryChainDb();
      const first = await follow({ url: n.url, db, until: 12n, watch: false, pollMs: 10 });
      expect(first).toMatchObject({ status: "synced", height: 12n });
      const second = await follow({ url: n.url, db, watch: false, pollMs: 10 });
      const head = n.db.head()!;
      expect(second).toMatchObject({ status: "synced", height: head.height });
      // Resumed: only the blocks above 12 were fetched and verified the second time.
      expect(first.blocks + second.blocks).toBe(n.db.blocks({ from: 1n, to: head.height, order: "asc", limit: 1000 }).length);
      expect(toHex(db.head()!.block_hash)).toBe(toHex(head.block_hash));
      for (const b of n.db.blocks({ from: 0n, to: head.height, order: "asc", limit: 1000 })) {
        expect(toHex(db.blockByHeight(b.height)!.state_root)).toBe(toHex(b.state_root));
      }
    } finally {
      await n.close();
    }
  });

  it("a store that follows another chain is refused naming both, and is left as it was", async () => {
    const ours = await startNode(FIXTURE);
    const other = await startNode("fixtures/corpus/transfers.json");
    try {
      const db = new MemoryChainDb();
      await follow({ url: ours.url, db, watch: false, pollMs: 10 });
      const head = db.head()!;
      await expect(follow({ url: other.url, db, watch: false, pollMs: 10 })).rejects.toThrow(
        new FollowInputError(`the store follows another chain (chain_instance_id ${toHex(db.genesis()!.chain_instance_id)}), not ${other.url}'s`),
      );
      expect(db.head()).toEqual(head);
    } finally {
      await ours.close();
      await other.close();
    }
  });

  it("reports every verified block with the node's height, and each wait for a height the node does not have yet", async () => {
    const n = await startNode(FIXTURE);
    try {
      const nodeHead = n.db.head()!.height;
      const db = new MemoryChainDb();
      const abort = new AbortController();
      const seen: Array<[bigint, bigint]> = [];
      const waits: Array<[bigint, bigint]> = [];
      const following = follow({
        url: n.url,
        db,
        until: nodeHead + 2n,
        watch: false,
        pollMs: 5,
        signal: abort.signal,
        onBlock: (b, nodeHeight) => seen.push([b.height, nodeHeight]),
        onWait: (head, nodeHeight) => {
          waits.push([head, nodeHeight]);
          abort.abort();
        },
      });
      expect(await following).toMatchObject({ status: "stopped", height: nodeHead });
      expect(seen.map(([h]) => h)).toEqual(n.db.blocks({ from: 1n, to: nodeHead, order: "asc", limit: 1000 }).map((b) => b.height));
      expect(seen.every(([, nodeHeight]) => nodeHeight === nodeHead)).toBe(true);
      expect(waits).toEqual([[nodeHead, nodeHead]]);
    } finally {
      await n.close();
    }
  });

  it("--until at a height without a block: synced once the node has passed it, without waiting", async () => {
    const n = await startNode(FIXTURE);
    try {
      const heights = n.db.blocks({ from: 1n, to: 1000n, order: "asc", limit: 1000 }).map((b) => b.height);
      // A height the fixture skips, below the node's head.
      const skipped = heights.map((h) => h + 1n).find((h) => !heights.includes(h) && h < heights[heights.length - 1]!)!;
      expect(skipped).toBeDefined();
      const waits: bigint[] = [];
      const r = await follow({ url: n.url, db: new MemoryChainDb(), until: skipped, watch: false, pollMs: 5, onWait: (head) => waits.push(head) });
      expect(r).toMatchObject({ status: "synced", height: heights.filter((h) => h < skipped).pop() });
      expect(waits).toEqual([]);
    } finally {
      await n.close();
    }
  });

  it("--watch waits for a node that stops answering (a restart) and goes on when it is back", async () => {
    const n = await startNode(FIXTURE);
    const proxy = await flakyProxy(n.url);
    try {
      const db = new MemoryChainDb();
      const abort = new AbortController();
      const outages: string[] = [];
      const following = follow({ url: proxy.url, db, watch: true, pollMs: 20, signal: abort.signal, onUnreachable: (m) => outages.push(m) });
      const start = n.db.head()!.height;
      for (let i = 0; i < 500 && (db.head()?.height ?? 0n) < start; i++) await new Promise((r) => setTimeout(r, 10));
      proxy.down.on = true;
      for (let i = 0; i < 500 && outages.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(outages[0]).toMatch(/^cannot reach http:\/\/127\.0\.0\.1:\d+\/replication/);
      proxy.down.on = false;
      await post(n.url, "/mine", "");
      const target = n.db.head()!.height;
      for (let i = 0; i < 500 && (db.head()?.height ?? 0n) < target; i++) await new Promise((r) => setTimeout(r, 10));
      abort.abort();
      expect(await following).toMatchObject({ status: "stopped", height: target });
    } finally {
      proxy.server.close();
      await n.close();
    }
  });

  it("--watch follows new blocks as they are produced, until stopped (the block in progress is committed)", async () => {
    const n = await startNode(FIXTURE);
    try {
      const db = new MemoryChainDb();
      const abort = new AbortController();
      const following = follow({ url: n.url, db, watch: true, pollMs: 5, signal: abort.signal });
      for (let i = 0; i < 5; i++) await post(n.url, "/mine", "");
      const target = n.db.head()!.height;
      for (let i = 0; i < 400 && (db.head()?.height ?? 0n) < target; i++) await new Promise((r) => setTimeout(r, 10));
      abort.abort();
      expect(await following).toMatchObject({ status: "stopped", height: target });
    } finally {
      await n.close();
    }
  });

  it("a node serving a block that does not replay: the CLI prints replay's MISMATCH report and exits 1", async () => {
    const n = await startNode(FIXTURE);
    const proxy = await tamperingProxy(n.url, (item) => {
      if (item["height"] === "10") (item["receipts"] as Array<Record<string, string>>)[0]!["cycles"] = "1";
    });
    try {
      const r = await cbqs("follow", proxy.url);
      expect(r.exitCode).toBe(1);
      const lines = r.out.trimEnd().split("\n");
      expect(lines[0]).toMatch(
        new RegExp(`^MISMATCH ${proxy.url.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}/replication\\?since=1&limit=100: block 10: receipts\\[0\\]\\.cycles \\(\\$\\.items\\[3\\]\\.receipts\\[0\\]\\.cycles\\): expected 1 got \\d+$`),
      );
      expect(lines.at(-1)).toMatch(/^follow: stopped at the first divergence; 3 blocks, \d+ txs? verified/);
    } finally {
      proxy.server.close();
      await n.close();
    }
  });

  it("a block that does not replay is never stored: the follower's head stays at the block before the divergence", async () => {
    const n = await startNode(FIXTURE);
    const proxy = await tamperingProxy(n.url, (item) => {
      if (item["height"] === "10") (item["receipts"] as Array<Record<string, string>>)[0]!["cycles"] = "1";
    });
    try {
      const db = new MemoryChainDb();
      const r = await follow({ url: proxy.url, db, watch: false, pollMs: 10 });
      expect(r).toMatchObject({ status: "mismatch", mismatch: { height: 10n, path: "$.items[3].receipts[0].cycles" }, blocks: 3 });
      expect(db.blockByHeight(10n)).toBeUndefined();
      const below = n.db.blocks({ from: 0n, to: 9n, order: "desc", limit: 1 })[0]!;
      expect(toHex(db.head()!.block_hash)).toBe(toHex(below.block_hash));
      db.close();
    } finally {
      proxy.server.close();
      await n.close();
    }
  });

  it("each check of a served block is reached alone: its height above ours, its parent, its transactions", async () => {
    const n = await startNode(FIXTURE);
    const cases: Array<[string, (item: Record<string, unknown>) => void, (r: Promise<unknown>, url: string) => Promise<void>]> = [
      [
        "a first block at height 0",
        (item) => {
          if (item["height"] === "1") item["height"] = "0";
        },
        async (r, url) => {
          await expect(r).rejects.toThrow(new FollowInputError(`${url}/replication?since=1&limit=100: block 0: $.items[0].height: not above the verified 0`));
        },
      ],
      [
        "another parent",
        (item) => {
          if (item["height"] === "10") item["parent_hash"] = `0x${"11".repeat(32)}`;
        },
        async (r) => {
          await expect(r).resolves.toMatchObject({ status: "mismatch", mismatch: { height: 10n, path: "$.items[3].parent_hash", field: "parent_hash", expected: `0x${"11".repeat(32)}` }, blocks: 3 });
        },
      ],
      [
        "a transaction that is no envelope",
        (item) => {
          if (item["height"] === "10") (item["transactions"] as string[])[0] = "0x00";
        },
        async (r, url) => {
          await expect(r).rejects.toThrow(
            new FollowInputError(`${url}/replication?since=1&limit=100: block 10: $.items[3].transactions[0]: invalid transaction envelope: NonCanonical at offset 0: envelope: expected CBOR major type 5, got 0`),
          );
        },
      ],
    ];
    try {
      for (const [, edit, expectation] of cases) {
        const proxy = await tamperingProxy(n.url, edit);
        try {
          await expectation(follow({ url: proxy.url, db: new MemoryChainDb(), watch: false, pollMs: 10 }), proxy.url);
        } finally {
          proxy.server.close();
        }
      }
    } finally {
      await n.close();
    }
  });

  it("a node declaring another genesis timestamp, with a block hash consistent with it, is a genesis block_hash mismatch (the header is built from the source's timestamp)", async () => {
    const n = await startNode(FIXTURE);
    const proxy = await tamperingProxy(n.url, () => {}, (g) => {
      const timestamp = BigInt(g["timestamp"] as string) + 1n;
      const hash = toHex(genesisHash(fromHex(g["chain_instance_id"] as string), timestamp, fromHex(g["state_root"] as string)));
      g["timestamp"] = timestamp.toString();
      g["block_hash"] = hash;
      (g["view"] as Record<string, unknown>)["block_hash"] = hash;
      (g["history_start"] as Record<string, unknown>)["block_hash"] = hash;
    });
    try {
      const db = new MemoryChainDb();
      const r = await follow({ url: proxy.url, db, watch: false, pollMs: 10 });
      expect(r).toMatchObject({ status: "mismatch", source: `${proxy.url}/genesis`, mismatch: { height: 0n, path: "$.block_hash", field: "genesis block_hash", actual: toHex(n.db.genesis()!.block.block_hash) } });
      expect(db.genesis()).toBeUndefined();
    } finally {
      proxy.server.close();
      await n.close();
    }
  });

  it("a divergence at the twelfth item of a page is named by its own index ($.items[11], two digits)", async () => {
    const n = await startNode(FIXTURE);
    try {
      await post(n.url, "/mine?blocks=12", "");
      const twelfth = n.db.blocks({ from: 1n, to: 2n ** 64n - 1n, order: "asc", limit: 12 })[11]!;
      const proxy = await tamperingProxy(n.url, (item) => {
        if (item["height"] === twelfth.height.toString()) item["effective_rent_height"] = (twelfth.effective_rent_height + 1n).toString();
      });
      try {
        const r = await follow({ url: proxy.url, db: new MemoryChainDb(), watch: false, pollMs: 10 });
        expect(r).toMatchObject({ status: "mismatch", mismatch: { height: twelfth.height, path: "$.items[11].effective_rent_height" }, blocks: 11 });
      } finally {
        proxy.server.close();
      }
    } finally {
      await n.close();
    }
  });

  it("its errors carry their names (logs and the CLI's lines show them)", () => {
    expect(new FollowInputError("x").name).toBe("FollowInputError");
    expect(new NodeUnreachable("x").name).toBe("NodeUnreachable");
  });

  it("an unreachable node or a non-feed answer is exit 2, one line", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((r) => closed.close(r));
    const r = await cbqs("follow", `http://127.0.0.1:${port}`);
    expect(r.exitCode).toBe(2);
    expect(r.err).toBe(`cbqs: error: cannot reach http://127.0.0.1:${port}/genesis: ECONNREFUSED\n`);

    expect((await cbqs("follow", "ftp://x")).err).toMatch(/must be an http\(s\) URL/);
  });
});

/** A forwarding proxy that can be taken down (every connection reset) and brought back: a node restart. */
async function flakyProxy(target: string): Promise<{ url: string; server: Server; down: { on: boolean } }> {
  const down = { on: false };
  const server = createServer((req, res) => {
    if (down.on) {
      req.socket.destroy();
      return;
    }
    void (async () => {
      const upstream = await fetch(target + req.url);
      const text = await upstream.text();
      res.writeHead(upstream.status, { "content-type": "application/json", connection: "close" });
      res.end(text);
    })();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, down };
}

/** Forwards to the node, rewriting replication items with `edit` (and GET /genesis's answer with `editGenesis`). */
async function tamperingProxy(target: string, edit: (item: Record<string, unknown>) => void, editGenesis?: (genesis: Record<string, unknown>) => void): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    void (async () => {
      const upstream = await fetch(target + req.url);
      let text = await upstream.text();
      if (req.url!.startsWith("/replication")) {
        const page = JSON.parse(text) as { items: Array<Record<string, unknown>> };
        page.items.forEach(edit);
        text = JSON.stringify(page);
      } else if (req.url === "/genesis" && editGenesis !== undefined) {
        const genesis = JSON.parse(text) as Record<string, unknown>;
        editGenesis(genesis);
        text = JSON.stringify(genesis);
      }
      res.writeHead(upstream.status, { "content-type": "application/json" });
      res.end(text);
    })();
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}
