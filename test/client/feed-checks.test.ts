// Every check of the verified feed (src/client/feed.ts), each reached alone: a scripted source
// serves a real node's blocks (create-quote: blocks 1, 5 and 6; heights 2–4 have none) in pages
// as the node would, with one thing changed — a block left out inside a page, between two pages
// or before the first, a history-start block left out or another one in its place — and the feed
// refuses it with that check's own error, having yielded only the blocks before it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fromHex, toHex } from "../../src/bytes.js";
import { verifiedFeed, type FeedSource } from "../../src/client/feed.js";
import { createClient, FeedBroken, ProofInvalid, type Block, type FeedPage, type FeedQuery, type Genesis } from "../../src/client/index.js";
import { startNode, type TestNode } from "../node/helpers.js";
import { flipHex } from "./helpers.js";

let n: TestNode;
let genesis: Genesis;
let chain: Block[];
beforeAll(async () => {
  n = await startNode("fixtures/corpus/create-quote.json");
  const client = createClient(n.url);
  genesis = await client.genesis();
  chain = [await client.block(1n), await client.block(5n), await client.block(6n)];
});
afterAll(() => n.close());

const at = (h: bigint): Block => chain.find((b) => b.height === h)!;

interface Scripted extends FeedSource {
  /** What the feed asked for, in order: "page since=…" and "block …". */
  calls: string[];
}

/**
 * The pages a node holding `held` serves (docs/guides/run-a-devnet.md "Replication feed"), each passed through
 * `edit`; `start` is the history start GET /genesis declares (genesis unless given).
 */
function source(options: { held?: Block[]; edit?: (page: FeedPage) => FeedPage; start?: { height: bigint; blockHash: Uint8Array } } = {}): Scripted {
  const held = options.held ?? chain;
  const calls: string[] = [];
  return {
    calls,
    chain: () => Promise.resolve(options.start === undefined ? genesis : { ...genesis, historyStart: options.start }),
    block: (h) => {
      calls.push(`block ${h}`);
      const b = held.find((x) => x.height === h);
      return b === undefined ? Promise.reject(new Error(`no block ${h}`)) : Promise.resolve(b);
    },
    feedPage: (q: FeedQuery) => {
      const since = BigInt(q.since ?? 0) < 1n ? 1n : BigInt(q.since ?? 0);
      const until = q.until === undefined ? 2n ** 64n - 1n : BigInt(q.until);
      calls.push(`page since=${since} limit=${q.limit}${q.until === undefined ? "" : ` until=${until}`}`);
      const inRange = held.filter((b) => b.height >= since && b.height <= until);
      const items = inRange.slice(0, Number(q.limit));
      const below = held.filter((b) => b.height < since).at(-1);
      const head = held.at(-1)!;
      const page: FeedPage = {
        url: `scripted?since=${since}`,
        height: head.height,
        blockHash: head.blockHash,
        stateRoot: head.stateRoot,
        items,
        prev: below === undefined ? null : below.height,
        next: inRange[items.length]?.height ?? null,
      };
      return Promise.resolve(options.edit === undefined ? page : options.edit(page));
    },
  };
}

/** The heights the feed yielded, and the error it ended with (null: it ended normally). */
async function walk(s: FeedSource, since = 1n, until?: bigint, limit = 100): Promise<{ seen: bigint[]; error: Error | null }> {
  const seen: bigint[] = [];
  try {
    for await (const b of verifiedFeed(s, since, until, limit)) seen.push(b.height);
  } catch (err) {
    return { seen, error: err as Error };
  }
  return { seen, error: null };
}

const hex = (b: Block) => toHex(b.blockHash);

describe("each check of the verified feed, reached alone", () => {
  it("a node's pages as served pass: every block from since, the first linked to the block the page names below it, or to genesis", async () => {
    const all = source();
    expect(await walk(all, 1n, undefined, 1)).toEqual({ seen: [1n, 5n, 6n], error: null });
    expect(all.calls).toEqual(["page since=1 limit=1", "page since=5 limit=1", "page since=6 limit=1"]);
    const middle = source();
    expect(await walk(middle, 2n, 5n)).toEqual({ seen: [5n], error: null });
    // The block below the first page is fetched once, to link the first block to it; later pages link to the block before.
    expect(middle.calls).toEqual(["page since=2 limit=100 until=5", "block 1"]);
    const paged = source();
    expect(await walk(paged, 5n, undefined, 1)).toEqual({ seen: [5n, 6n], error: null });
    expect(paged.calls).toEqual(["page since=5 limit=1", "block 1", "page since=6 limit=1"]);
  });

  it("parent_hash: a block left out inside a page is a FeedBroken naming the block after the gap and the one before it", async () => {
    const r = await walk(source({ edit: (p) => ({ ...p, items: p.items.filter((b) => b.height !== 5n) }) }));
    expect(r.seen).toEqual([1n]);
    expect(r.error).toBeInstanceOf(FeedBroken);
    expect(r.error).toMatchObject({ height: 6n, parentHash: hex(at(5n)), previousHeight: 1n, previousHash: hex(at(1n)) });
    expect(r.error!.message).toBe(`scripted?since=1: block 6: parent_hash ${hex(at(5n))} is not the hash of block 1 (${hex(at(1n))})`);
  });

  it("parent_hash: a block left out between two pages (a next cursor past it) is a FeedBroken, though the later page names it as the block below", async () => {
    const r = await walk(source({ edit: (p) => (p.next === 5n ? { ...p, next: 6n } : p) }), 1n, undefined, 1);
    expect(r.seen).toEqual([1n]);
    expect(r.error).toBeInstanceOf(FeedBroken);
    expect(r.error).toMatchObject({ height: 6n, previousHeight: 1n, previousHash: hex(at(1n)) });
  });

  it("parent_hash: the first block of the first page is linked to genesis when nothing is below it", async () => {
    const r = await walk(source({ held: chain.slice(1), edit: (p) => ({ ...p, prev: null }) }), 1n);
    expect(r.seen).toEqual([]);
    expect(r.error).toMatchObject({ name: "FeedBroken", height: 5n, previousHeight: 0n, previousHash: toHex(genesis.blockHash) });
  });

  it("prev: a first page whose block below since is not below it (block 5 left out before the first) is refused", async () => {
    const s = source({ edit: (p) => (p.items[0]?.height === 5n ? { ...p, items: p.items.slice(1), prev: 5n } : p) });
    const r = await walk(s, 5n);
    expect(r.seen).toEqual([]);
    expect(r.error).toBeInstanceOf(ProofInvalid);
    expect(r.error).toMatchObject({ check: "prev", height: 5n, reason: "the page names block 5 as the nearest below since 5" });
    expect(s.calls).toEqual(["page since=5 limit=100"]);
  });

  it("block_hash: on a node started from a snapshot, a history-start block that is not the one GET /genesis declares is refused", async () => {
    const declared = { height: 5n, blockHash: fromHex(flipHex(hex(at(5n)))) };
    const r = await walk(source({ held: chain.slice(1), start: declared }));
    expect(r.seen).toEqual([]);
    expect(r.error).toBeInstanceOf(ProofInvalid);
    expect(r.error).toMatchObject({
      check: "block_hash",
      height: 5n,
      reason: `the history-start block is ${toHex(declared.blockHash)} (GET /genesis), the feed serves ${hex(at(5n))}`,
    });
  });

  it("history_start: on a node started from a snapshot, a first page that leaves the history-start block out is refused", async () => {
    const start = { height: 5n, blockHash: at(5n).blockHash };
    expect(await walk(source({ held: chain.slice(1), start }))).toEqual({ seen: [5n, 6n], error: null });
    const r = await walk(source({ held: chain.slice(1), start, edit: (p) => ({ ...p, items: p.items.slice(1) }) }));
    expect(r.seen).toEqual([]);
    expect(r.error).toBeInstanceOf(ProofInvalid);
    expect(r.error).toMatchObject({ check: "history_start", height: 6n, reason: "the first block is 6, not the history-start block 5 (GET /genesis), and the page names none below it" });
  });

  it("every block is checked whole before it is yielded: one altered in place is a ProofInvalid after the blocks before it", async () => {
    const r = await walk(source({ edit: (p) => ({ ...p, items: p.items.map((b) => (b.height === 5n ? { ...b, stateRoot: at(1n).stateRoot } : b)) }) }));
    expect(r.seen).toEqual([1n]);
    expect(r.error).toMatchObject({ name: "ProofInvalid", check: "block_hash", height: 5n });
  });

  it("a page with no items ends the feed, whatever cursor it names", async () => {
    const s = source({ edit: (p) => (p.items[0]?.height === 5n ? { ...p, items: [], next: 5n } : p) });
    expect(await walk(s, 1n, undefined, 1)).toEqual({ seen: [1n], error: null });
    expect(s.calls).toEqual(["page since=1 limit=1", "page since=5 limit=1"]);
  });
});
