// What the follower's earlier tests left open (its Stryker survivors): a stop between two
// blocks of a page and during each of its waits (a poll, a retry of an unreachable node) ends it at
// once and leaves no listener behind; the waits themselves (a poll is one request per interval; a
// subscription that is up is not polled); --until at exactly the node's height or below our head;
// pages after the first (a resumed follower's, a second page of a long chain) name their items by
// their own index; a page with `next` and no items; the node's genesis read again when our head
// block is gone; the mismatches as replay reports them (no details); a failed download's file
// descriptor. A stand-in for the node forwards to a real one, rewriting what a test needs.
import { getEventListeners } from "node:events";
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fromHex } from "../../src/bytes.js";
import { genesisHash } from "../../src/chain/block.js";
import { RequestAborted } from "../../src/client/index.js";
import { chainInstanceId } from "../../src/codec/derive.js";
import { devnetGenesisSource } from "../../src/harness/devnet.js";
import { readFixture } from "../../src/harness/documents.js";
import { downloadSnapshot, follow, FollowInputError, type FollowResult, type WaitHow } from "../../src/follower/follower.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";
import { address, DOWNLOAD, post, startNode, toHex, transferTx, re, type TestNode } from "./helpers.js";

const DEVNET = { kind: "genesis", source: devnetGenesisSource(10) } as const;
const HOUR = 3_600_000;
const root = mkdtempSync(join(tmpdir(), "cbqs-follow-stops-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Resolves once `check` holds, failing after 10 s. */
async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`still waiting for ${what} after 10 s`);
}

/** The result, or "still running" when it has not come 10 s after the stop (a wait the stop did not end). */
const settled = (r: Promise<FollowResult>) => Promise.race([r, new Promise<"still running">((done) => setTimeout(done, 10_000, "still running"))]);

type Page = { height: string; items: Array<Record<string, unknown>>; next: string | null };

interface StandIn {
  url: string;
  server: Server;
  /** Requests per path (without the query): /genesis, /replication, … */
  count: Map<string, number>;
  /** Set to take the node away: every connection is reset. */
  down: { on: boolean };
}

/**
 * Forwards to the node; `page` may rewrite a replication page, `genesis` GET /genesis's answer (with
 * the how-many-th request it is) or hold it unanswered by returning "hold".
 */
async function standIn(target: string, edits: { page?: (page: Page) => void; genesis?: (g: Record<string, unknown>, nth: number) => void | "hold" } = {}): Promise<StandIn> {
  const count = new Map<string, number>();
  const down = { on: false };
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    if (down.on) {
      req.socket.destroy();
      return;
    }
    const path = req.url!.split("?")[0]!;
    const nth = (count.get(path) ?? 0) + 1;
    count.set(path, nth);
    void (async () => {
      const upstream = await fetch(target + req.url);
      let text = await upstream.text();
      if (path === "/replication" && edits.page !== undefined) {
        const page = JSON.parse(text) as Page;
        edits.page(page);
        text = JSON.stringify(page);
      } else if (path === "/genesis" && edits.genesis !== undefined) {
        const g = JSON.parse(text) as Record<string, unknown>;
        if (edits.genesis(g, nth) === "hold") {
          held.push(res);
          return;
        }
        text = JSON.stringify(g);
      }
      res.writeHead(upstream.status, { "content-type": "application/json", connection: "close" });
      res.end(text);
    })().catch(() => res.destroy());
  });
  server.on("close", () => held.forEach((r) => r.destroy()));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, count, down };
}

const closeAll = (s: StandIn) => {
  s.server.close();
  s.server.closeAllConnections();
};

/** A devnet node with `blocks` empty blocks (heights 1…blocks, one each). */
async function devnet(blocks: number, options: { maxSubscribers?: number } = {}): Promise<TestNode> {
  const n = await startNode(DEVNET, options);
  if (blocks > 0) await post(n.url, `/mine?blocks=${blocks}`, "");
  return n;
}

/** A store that followed `n` up to `height`. */
async function storeAt(n: TestNode, height: bigint): Promise<MemoryChainDb> {
  const db = new MemoryChainDb();
  expect(await follow({ url: n.url, db, until: height, watch: false, pollMs: 5 })).toMatchObject({ status: "synced", height });
  return db;
}

describe("a stop ends the follower between two blocks and during every wait", () => {
  it("a stop during a block's report: that block is kept, the rest of the page is not verified", async () => {
    const n = await devnet(5);
    try {
      const abort = new AbortController();
      const db = new MemoryChainDb();
      const r = await follow({ url: n.url, db, watch: false, pollMs: 5, signal: abort.signal, onBlock: () => abort.abort() });
      expect(r).toEqual({ status: "stopped", height: 1n, blocks: 1, txs: 0 });
      expect(db.head()!.height).toBe(1n);
    } finally {
      await n.close();
    }
  });

  it("a stop before a poll's wait, or during it, ends the follower at once though the interval is an hour", async () => {
    const n = await devnet(2, { maxSubscribers: 0 });
    try {
      for (const when of ["before the wait", "during the wait"]) {
        const abort = new AbortController();
        const stop = () => (when === "before the wait" ? abort.abort() : setImmediate(() => abort.abort()));
        const r = follow({ url: n.url, db: new MemoryChainDb(), watch: true, pollMs: HOUR, signal: abort.signal, onWait: stop });
        expect(await settled(r), when).toEqual({ status: "stopped", height: 2n, blocks: 2, txs: 0 });
      }
    } finally {
      await n.close();
    }
  });

  it("polling leaves no listener on the stop signal behind: as many after thirty polls as after three", async () => {
    const n = await devnet(1, { maxSubscribers: 0 });
    try {
      const abort = new AbortController();
      const listeners: number[] = [];
      const r = follow({
        url: n.url,
        db: new MemoryChainDb(),
        watch: true,
        pollMs: 1,
        signal: abort.signal,
        onWait: () => {
          listeners.push(getEventListeners(abort.signal, "abort").length);
          if (listeners.length === 30) abort.abort();
        },
      });
      expect(await settled(r)).toMatchObject({ status: "stopped", height: 1n });
      expect(listeners[29]).toBe(listeners[2]);
    } finally {
      await n.close();
    }
  });

  it("an unreachable node is retried after the poll interval, doubled at each failure; an interval above the 30 s bound is kept; a stop ends the retry's wait", async () => {
    const n = await devnet(1, { maxSubscribers: 0 });
    try {
      for (const [pollMs, expected] of [
        [5, [5, 10, 20, 40]],
        [40_000, [40_000]],
      ] as const) {
        // The node answers GET /genesis, then nothing: the first page is retried.
        const node: StandIn = await standIn(n.url, { genesis: () => void (node.down.on = true) });
        try {
          const abort = new AbortController();
          const retries: number[] = [];
          const r = follow({
            url: node.url,
            db: new MemoryChainDb(),
            watch: true,
            pollMs,
            signal: abort.signal,
            onUnreachable: (message, retryMs) => {
              expect(message).toMatch(/^cannot reach http:\/\/127\.0\.0\.1:\d+\/replication\?since=1&limit=100: /);
              retries.push(retryMs);
              if (retries.length === expected.length) setImmediate(() => abort.abort());
            },
          });
          expect(await settled(r)).toEqual({ status: "stopped", height: 0n, blocks: 0, txs: 0 });
          expect(retries).toEqual(expected);
        } finally {
          closeAll(node);
        }
      }
    } finally {
      await n.close();
    }
  });

  it("a poll is one request per interval: with an hour's interval the feed is not read again at once", async () => {
    const n = await devnet(1, { maxSubscribers: 0 });
    const node = await standIn(n.url);
    try {
      const abort = new AbortController();
      const waits: WaitHow[] = [];
      const r = follow({ url: node.url, db: new MemoryChainDb(), watch: true, pollMs: HOUR, signal: abort.signal, onWait: (_h, _n, how) => waits.push(how) });
      await until("the first wait", () => waits.length === 1);
      // A follower that did not wait would have read the feed again many times by now.
      await new Promise((done) => setTimeout(done, 1000));
      expect(waits).toEqual([{ pollMs: HOUR }]);
      expect(node.count.get("/replication")).toBe(1);
      abort.abort();
      expect(await settled(r)).toMatchObject({ status: "stopped", height: 1n });
    } finally {
      closeAll(node);
      await n.close();
    }
  });

  it("subscribed, the follower reads the feed when an event comes, not every poll interval (however short), and not again for an event already read", async () => {
    const n = await devnet(1);
    try {
      const abort = new AbortController();
      const db = new MemoryChainDb();
      const waits: WaitHow[] = [];
      const states: string[] = [];
      const r = follow({ url: n.url, db, watch: true, pollMs: 10, signal: abort.signal, onWait: (_h, _n, how) => waits.push(how), onSubscription: (state) => states.push(state) });
      await until("the subscription", () => states.includes("up") && n.subscriptions.size === 1 && waits.length > 0);
      await post(n.url, "/mine", "");
      await until("block 2", () => db.head()?.height === 2n);
      const after = waits.length;
      // Polled every 10 ms, or woken again by the event already read, it would have waited many more times by now.
      await new Promise((done) => setTimeout(done, 1000));
      expect(waits.length - after).toBeLessThanOrEqual(1);
      expect(waits.at(-1)).toEqual({ subscribed: `${n.url}/subscribe` });
      abort.abort();
      expect(await settled(r)).toMatchObject({ status: "stopped", height: 2n });
    } finally {
      await n.close();
    }
  });

  it("a stop while the node's genesis is read again (our head block gone) is a stop", async () => {
    const n = await devnet(5);
    try {
      const db = await storeAt(n, 3n);
      const abort = new AbortController();
      const node = await standIn(n.url, {
        page: (p) => void (p.items = p.items.filter((i) => i["height"] !== "3")),
        genesis: (_g, nth) => {
          if (nth === 1) return;
          abort.abort();
          return "hold";
        },
      });
      try {
        expect(await settled(follow({ url: node.url, db, watch: false, pollMs: 5, signal: abort.signal }))).toEqual({ status: "stopped", height: 3n, blocks: 0, txs: 0 });
        expect(node.count.get("/genesis")).toBe(2);
      } finally {
        closeAll(node);
      }
    } finally {
      await n.close();
    }
  });
});

describe("--until at the node's height, or below our head", () => {
  it("--until at exactly the node's height is synced without a wait", async () => {
    const n = await devnet(3);
    try {
      const abort = new AbortController();
      const waits: bigint[] = [];
      const r = await follow({ url: n.url, db: new MemoryChainDb(), until: 3n, watch: false, pollMs: 5, signal: abort.signal, onWait: (h) => (waits.push(h), abort.abort()) });
      expect(r).toEqual({ status: "synced", height: 3n, blocks: 3, txs: 0 });
      expect(waits).toEqual([]);
    } finally {
      await n.close();
    }
  });

  it("without a stop signal, --until above the node's height is waited for by polling until the node reaches it", async () => {
    const n = await devnet(2, { maxSubscribers: 0 });
    try {
      const waits: bigint[] = [];
      const r = follow({ url: n.url, db: new MemoryChainDb(), until: 3n, watch: false, pollMs: 5, onWait: (_h, nodeHeight) => void (waits.push(nodeHeight) === 1 && post(n.url, "/mine", "")) });
      expect(await settled(r)).toEqual({ status: "synced", height: 3n, blocks: 3, txs: 0 });
      expect(waits[0]).toBe(2n);
    } finally {
      await n.close();
    }
  });

  it("--until below our head asks for our head block alone, and is synced at our head", async () => {
    const n = await devnet(5);
    const node = await standIn(n.url);
    try {
      const db = await storeAt(n, 4n);
      expect(await follow({ url: node.url, db, until: 2n, watch: false, pollMs: 5 })).toEqual({ status: "synced", height: 4n, blocks: 0, txs: 0 });
      expect(node.count.get("/replication")).toBe(1);
    } finally {
      closeAll(node);
      await n.close();
    }
  });
});

describe("--until reached by our own head", () => {
  it("a node whose pages name a head below the blocks they hold: synced once our head is at --until, not waiting for the node to pass it", async () => {
    const n = await devnet(3);
    const node = await standIn(n.url, { page: (p) => void (p.height = "2") });
    try {
      const abort = new AbortController();
      const waits: bigint[] = [];
      const r = follow({ url: node.url, db: new MemoryChainDb(), until: 3n, watch: false, pollMs: 5, signal: abort.signal, onWait: (h) => void (waits.push(h) > 1 && abort.abort()) });
      expect(await settled(r)).toEqual({ status: "synced", height: 3n, blocks: 3, txs: 0 });
      expect(waits).toEqual([3n]);
    } finally {
      closeAll(node);
      await n.close();
    }
  });
});

describe("pages after the first", () => {
  it("a chain that fits one page is read with one request; a longer one page after page, without a wait; a second page names its items by their own index", async () => {
    const n = await devnet(105);
    try {
      for (const blocks of [5n, 105n]) {
        const node = await standIn(n.url);
        try {
          const waits: bigint[] = [];
          const r = await follow({ url: node.url, db: new MemoryChainDb(), until: blocks, watch: false, pollMs: 5, onWait: (h) => waits.push(h) });
          expect(r).toEqual({ status: "synced", height: blocks, blocks: Number(blocks), txs: 0 });
          expect([node.count.get("/replication"), waits]).toEqual([blocks > 100n ? 2 : 1, []]);
        } finally {
          closeAll(node);
        }
      }
      // The second page starts at block 100 (ours by then): block 103 is its item 3.
      const node = await standIn(n.url, {
        page: (p) => p.items.forEach((i) => i["height"] === "103" && (i["effective_rent_height"] = String(BigInt(i["effective_rent_height"] as string) + 1n))),
      });
      try {
        const r = await follow({ url: node.url, db: new MemoryChainDb(), watch: false, pollMs: 5 });
        expect(r).toMatchObject({ status: "mismatch", source: `${node.url}/replication?since=100&limit=100`, mismatch: { height: 103n, path: "$.items[3].effective_rent_height", field: "effective_rent_height" }, blocks: 102 });
      } finally {
        closeAll(node);
      }
    } finally {
      await n.close();
    }
  });

  it("a resumed follower's page starts with its head block: a wrong parent or a transaction that is no envelope is named by the item's index in the page", async () => {
    // Block 5 holds a transfer (the transfers fixture's genesis funds 0x11…).
    const n = await startNode({ kind: "genesis", source: readFixture("fixtures/corpus/transfers.json").genesis.source });
    try {
      await post(n.url, "/mine?blocks=4", "");
      expect((await post(n.url, "/tx", toHex(transferTx(7n, address(0x11), 0n, address(0x22), 1n)))).status).toBe(200);
      await post(n.url, "/mine?blocks=2", "");
      expect(n.db.blockByHeight(5n)!.transactions).toHaveLength(1);
      const parent = `0x${"11".repeat(32)}`;
      const cases: Array<[(i: Record<string, unknown>) => void, (r: Promise<FollowResult>, url: string) => Promise<void>]> = [
        [
          (i) => void (i["height"] === "5" && (i["parent_hash"] = parent)),
          async (r, url) =>
            expect(await r).toEqual({
              status: "mismatch",
              source: `${url}/replication?since=3&limit=100`,
              mismatch: { height: 5n, path: "$.items[2].parent_hash", field: "parent_hash", expected: parent, actual: toHex(n.db.blockByHeight(4n)!.block_hash), details: [] },
              blocks: 1,
              txs: 0,
            }),
        ],
        [
          (i) => void (i["height"] === "5" && ((i["transactions"] as string[])[0] = "0x00")),
          async (r, url) =>
            expect(r).rejects.toThrow(
              new FollowInputError(`${url}/replication?since=3&limit=100: block 5: $.items[2].transactions[0]: invalid transaction envelope: NonCanonical at offset 0: envelope: expected CBOR major type 5, got 0`),
            ),
        ],
      ];
      for (const [edit, expectation] of cases) {
        const node = await standIn(n.url, { page: (p) => p.items.forEach(edit) });
        try {
          await expectation(follow({ url: node.url, db: await storeAt(n, 3n), watch: false, pollMs: 5 }), node.url);
        } finally {
          closeAll(node);
        }
      }
    } finally {
      await n.close();
    }
  });

  it("a page with `next` but no items ends the range as any last page does (it is not asked for again)", async () => {
    const n = await devnet(3);
    try {
      const db = await storeAt(n, 3n);
      const abort = new AbortController();
      const node = await standIn(n.url, {
        page: (p) => {
          p.next = "4";
          if (node.count.get("/replication")! >= 5) abort.abort();
        },
      });
      try {
        expect(await follow({ url: node.url, db, watch: false, pollMs: 5, signal: abort.signal })).toEqual({ status: "synced", height: 3n, blocks: 0, txs: 0 });
      } finally {
        closeAll(node);
      }
    } finally {
      await n.close();
    }
  });
});

describe("the node's genesis read again when our head block is gone", () => {
  it("no block at our height is a divergence; a genesis that no longer verifies, or a history now starting above us, is exit 2's refusal", async () => {
    const n = await devnet(5);
    try {
      const ours = toHex(n.db.blockByHeight(3n)!.block_hash);
      const cases: Array<[((g: Record<string, unknown>) => void) | undefined, (r: Promise<FollowResult>, url: string) => Promise<void>]> = [
        [
          undefined,
          async (r, url) =>
            expect(await r).toEqual({
              status: "diverged",
              source: `${url}/replication?since=3&limit=100`,
              message: `the node's chain no longer contains our block 3 (ours ${ours}, the node has no block 3)`,
              blocks: 0,
              txs: 0,
            }),
        ],
        // A history starting at our own height holds our block: its absence is a divergence.
        [(g) => void ((g["history_start"] as Record<string, unknown>)["height"] = "3"), async (r) => expect(await r).toMatchObject({ status: "diverged" })],
        [
          (g) => void ((g["history_start"] as Record<string, unknown>)["height"] = "4"),
          async (r, url) => expect(r).rejects.toThrow(new FollowInputError(`${url}/genesis: the node's history starts at 4: start from its snapshot (cbqs follow --snapshot <file|url> --db <dir>)`)),
        ],
        [
          (g) => void (g["chain_instance_id"] = `0x${"22".repeat(32)}`),
          async (r, url) => expect(r).rejects.toThrow(new FollowInputError(`${url}/genesis: the node's genesis no longer verifies (chain_instance_id)`)),
        ],
      ];
      for (const [edit, expectation] of cases) {
        const node = await standIn(n.url, {
          page: (p) => void (p.items = p.items.filter((i) => i["height"] !== "3")),
          genesis: (g, nth) => void (nth > 1 && edit?.(g)),
        });
        try {
          await expectation(follow({ url: node.url, db: await storeAt(n, 3n), watch: false, pollMs: 5 }), node.url);
          expect(node.count.get("/genesis")).toBe(2);
        } finally {
          closeAll(node);
        }
      }
    } finally {
      await n.close();
    }
  });
});

describe("genesis mismatches as replay reports them", () => {
  it("a chain instance that is not the source's fingerprint: the node's value expected, ours actual, no details; nothing stored", async () => {
    const n = await devnet(0);
    const other = `0x${"22".repeat(32)}`;
    const node = await standIn(n.url, { genesis: (g) => void (g["chain_instance_id"] = other) });
    try {
      const db = new MemoryChainDb();
      expect(await follow({ url: node.url, db, watch: false, pollMs: 5 })).toEqual({
        status: "mismatch",
        source: `${node.url}/genesis`,
        mismatch: { height: 0n, path: "$.genesis.chain_instance_id", field: "chain_instance_id", expected: other, actual: toHex(n.node.chainInstanceId), details: [] },
        blocks: 0,
        txs: 0,
      });
      expect(db.genesis()).toBeUndefined();
    } finally {
      closeAll(node);
      await n.close();
    }
  });
});

describe("the follower's own genesis header", () => {
  it("a node declaring another genesis timestamp (its block hash consistent with it): the node's hash expected, ours actual, no details", async () => {
    const n = await devnet(0);
    let declared = "";
    const node = await standIn(n.url, {
      genesis: (g) => {
        const timestamp = BigInt(g["timestamp"] as string) + 1n;
        declared = toHex(genesisHash(fromHex(g["chain_instance_id"] as string), timestamp, fromHex(g["state_root"] as string)));
        g["timestamp"] = timestamp.toString();
        for (const o of [g, g["view"], g["history_start"]] as Array<Record<string, unknown>>) o["block_hash"] = declared;
      },
    });
    try {
      expect(await follow({ url: node.url, db: new MemoryChainDb(), watch: false, pollMs: 5 })).toEqual({
        status: "mismatch",
        source: `${node.url}/genesis`,
        mismatch: { height: 0n, path: "$.block_hash", field: "genesis block_hash", expected: declared, actual: toHex(n.db.genesis()!.block.block_hash), details: [] },
        blocks: 0,
        txs: 0,
      });
    } finally {
      closeAll(node);
      await n.close();
    }
  });
});

describe("a failed snapshot download closes its file", () => {
  it("after an answer other than 200 no descriptor of this process names the removed file", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(404, { connection: "close" });
      res.end("no such snapshot");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const stem = join(root, "download");
      await expect(downloadSnapshot(`http://127.0.0.1:${(server.address() as AddressInfo).port}/s.cbqs`, stem, DOWNLOAD)).rejects.toThrow(FollowInputError);
      const open = readdirSync("/proc/self/fd").flatMap((fd) => {
        try {
          return [readlinkSync(`/proc/self/fd/${fd}`)];
        } catch {
          return []; // closed meanwhile (the listing's own descriptor)
        }
      });
      expect(open.filter((target) => target.startsWith(stem))).toEqual([]);
    } finally {
      server.close();
    }
  });
});

describe("the follower's last Stryker survivors", () => {
  it("a genesis source that is consistent with the declared fingerprint and hash but is no genesis is exit 2's refusal naming GET /genesis", async () => {
    const n = await devnet(0);
    const node = await standIn(n.url, {
      genesis: (g) => {
        const source = new TextEncoder().encode('{"not":"a genesis"}');
        const id = chainInstanceId(source);
        const hash = toHex(genesisHash(id, BigInt(g["timestamp"] as string), fromHex(g["state_root"] as string)));
        g["source"] = toHex(source);
        g["chain_instance_id"] = toHex(id);
        (g["view"] as Record<string, unknown>)["chain_instance_id"] = toHex(id);
        for (const o of [g, g["view"], g["history_start"]] as Array<Record<string, unknown>>) o["block_hash"] = hash;
      },
    });
    try {
      const db = new MemoryChainDb();
      await expect(follow({ url: node.url, db, watch: false, pollMs: 5 })).rejects.toThrow(new RegExp(`^${re(node.url)}/genesis: the node's genesis source is invalid: .+`));
      expect(db.genesis()).toBeUndefined();
    } finally {
      closeAll(node);
      await n.close();
    }
  });

  it("a store resumed below the node's history start is refused before any page, though the node still serves our head block; at the start itself it follows", async () => {
    const n = await devnet(5);
    try {
      for (const [start, expected] of [
        ["4", "refused"],
        ["3", "synced"],
      ] as const) {
        const node = await standIn(n.url, { genesis: (g) => void ((g["history_start"] as Record<string, unknown>)["height"] = start) });
        try {
          const r = follow({ url: node.url, db: await storeAt(n, 3n), watch: false, pollMs: 5 });
          if (expected === "refused") {
            await expect(r).rejects.toThrow(new FollowInputError(`${node.url}/genesis: the node's history starts at 4: start from its snapshot (cbqs follow --snapshot <file|url> --db <dir>)`));
            expect(node.count.get("/replication")).toBeUndefined();
          } else expect(await r).toEqual({ status: "synced", height: 5n, blocks: 2, txs: 0 });
        } finally {
          closeAll(node);
        }
      }
    } finally {
      await n.close();
    }
  });

  it("without --watch or --until, a last page naming a head above the blocks it holds is not 'synced': the follower waits for the node's blocks", async () => {
    const n = await devnet(3, { maxSubscribers: 0 });
    const node = await standIn(n.url, { page: (p) => void (p.height = "5") });
    try {
      const abort = new AbortController();
      const waits: Array<[bigint, bigint]> = [];
      const r = follow({ url: node.url, db: new MemoryChainDb(), watch: false, pollMs: 5, signal: abort.signal, onWait: (h, nodeHeight) => (waits.push([h, nodeHeight]), abort.abort()) });
      expect(await settled(r)).toEqual({ status: "stopped", height: 3n, blocks: 3, txs: 0 });
      expect(waits).toEqual([[3n, 5n]]);
    } finally {
      closeAll(node);
      await n.close();
    }
  });

  it("a follower that returns (synced at --until) has closed its subscription to the node's events", async () => {
    const n = await devnet(2);
    try {
      let mined = false;
      const r = follow({
        url: n.url,
        db: new MemoryChainDb(),
        until: 3n,
        watch: false,
        pollMs: 20,
        onWait: () => {
          if (mined) return;
          mined = true;
          void until("the follower's subscription", () => n.subscriptions.size === 1).then(() => post(n.url, "/mine", ""));
        },
      });
      expect(await settled(r)).toEqual({ status: "synced", height: 3n, blocks: 3, txs: 0 });
      await until("the subscription closed", () => n.subscriptions.size === 0);
    } finally {
      await n.close();
    }
  });

  it("an answer that is no genesis is exit 2's FollowInputError; a download stopped by its signal is the client's RequestAborted (a stop, not bad input)", async () => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "application/json", connection: "close" });
      res.end("not json");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await expect(follow({ url, db: new MemoryChainDb(), watch: false, pollMs: 5 })).rejects.toThrow(FollowInputError);
      const stopped = downloadSnapshot(`${url}/s.cbqs`, join(root, "aborted"), DOWNLOAD, AbortSignal.abort());
      await expect(stopped).rejects.toThrow(RequestAborted);
      await expect(stopped).rejects.not.toThrow(FollowInputError);
      expect(readdirSync(root).filter((f) => f.startsWith("aborted"))).toEqual([]);
    } finally {
      server.close();
    }
  });

  it("a download whose file someone else removed meanwhile still reports the node's answer (its removal is forced)", async () => {
    const stem = join(root, "taken-away");
    const server = createServer((_req, res) => {
      rmSync(`${stem}.cbqs`);
      res.writeHead(404, { connection: "close" });
      res.end("no such snapshot");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/s.cbqs`;
      await expect(downloadSnapshot(url, stem, DOWNLOAD)).rejects.toThrow(new FollowInputError(`${url}: HTTP 404, not a snapshot file`));
    } finally {
      server.close();
    }
  });
});
