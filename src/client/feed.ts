// The verified replication feed: pages in ascending order, one held at a time; every block checked
// whole (verify.ts) and linked to the block before it by its parent_hash. The first block's parent
// is anchored too: the block the page's `prev` cursor names, genesis when there is none, or — on a
// node whose history starts at a snapshot (docs/guides/run-a-devnet.md "history_start") — the history-start
// block itself, whose hash must be the one GET /genesis declares (its parent is not held).
import { bytesEqual, toHex } from "../bytes.js";
import { FeedBroken, ProofInvalid } from "./errors.js";
import type { Block, FeedPage, FeedQuery, Genesis } from "./types.js";
import { verifyBlock } from "./verify.js";

export interface FeedSource {
  chain(): Promise<Genesis>;
  feedPage(query: FeedQuery): Promise<FeedPage>;
  block(height: bigint): Promise<Block>;
}

/** The block a first item must name as its parent; null when its parent is not held (a history start). */
type Link = { height: bigint; hash: Uint8Array } | null;

async function anchor(source: FeedSource, page: FeedPage, chain: Genesis, since: bigint): Promise<Link> {
  if (page.prev !== null) {
    // The block below since: one at or above it would leave the blocks from since to it out unseen.
    if (page.prev >= since) throw new ProofInvalid(page.url, "prev", `the page names block ${page.prev} as the nearest below since ${since}`, page.prev);
    const b = await source.block(page.prev);
    return { height: b.height, hash: b.blockHash };
  }
  const start = chain.historyStart;
  if (start.height === 0n) return { height: 0n, hash: chain.blockHash };
  // Nothing below the page on a node whose history starts at a snapshot: the first block must be
  // the history-start block itself (its parent is not held), or blocks from it on go unseen.
  const first = page.items[0];
  if (first === undefined) return null;
  if (first.height !== start.height) {
    throw new ProofInvalid(page.url, "history_start", `the first block is ${first.height}, not the history-start block ${start.height} (GET /genesis), and the page names none below it`, first.height);
  }
  if (!bytesEqual(first.blockHash, start.blockHash)) {
    throw new ProofInvalid(page.url, "block_hash", `the history-start block is ${toHex(start.blockHash)} (GET /genesis), the feed serves ${toHex(first.blockHash)}`, first.height);
  }
  return null;
}

export async function* verifiedFeed(source: FeedSource, since: bigint, until: bigint | undefined, limit: number): AsyncGenerator<Block, void, undefined> {
  const chain = await source.chain();
  let previous: Link | undefined;
  for (let from = since; ; ) {
    const page = await source.feedPage({ since: from, limit, ...(until === undefined ? {} : { until }) });
    previous ??= await anchor(source, page, chain, since);
    for (const block of page.items) {
      verifyBlock(page.url, block, chain.chainInstanceId);
      if (previous !== null && !bytesEqual(block.parentHash, previous.hash)) {
        throw new FeedBroken(page.url, block.height, toHex(block.parentHash), previous.height, toHex(previous.hash));
      }
      previous = { height: block.height, hash: block.blockHash };
      yield block;
    }
    if (page.next === null || page.items.length === 0) return;
    from = page.next;
  }
}
