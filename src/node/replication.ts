// The replication feed (CIP-16 §3, adapted to this chain): the commit log is the sequence of
// committed blocks after genesis (genesis itself is GET /genesis). A block's height is its sort
// key; heights are unique, so the order is total and no tie-break is needed. Heights without a
// block (skipped heights) are not items.
//
//   GET /replication?since=&until=&limit=&order=
//   since, until  inclusive block heights (defaults: 0 and the highest u64)
//   limit         default 10, at most 100: larger values are clamped to 100, smaller to 1; a page
//                 also ends once its items' JSON reaches MAX_PAGE_BYTES (`next` then continues)
//   (numbers: src/node/decimal.ts, the one rule of every numeric parameter)
//   order         asc (default) or desc; anything else is 400
//   → {height, block_hash, state_root, items, prev, next}
//
// Cursors are block heights (decimal strings) or null, both always present. `next` is the first
// block beyond the page in the page's order and inside [since, until]: asc continues with
// since=next, desc with until=next, with no item repeated. `prev` is the nearest block on the
// other side of the page's start bound (asc: below since; desc: above until): asc walks back
// with until=prev&order=desc, desc walks forward with since=prev&order=asc.
import type { ChainDb } from "../../state/chain-db/chain-db.js";
import { U64_MAX } from "../engine/math.js";
import { parseDecimal, type DecimalParam } from "./decimal.js";
import { badRequest } from "./errors.js";
import { blockItemJson, JsonText, readPointJson } from "./json.js";

export const DEFAULT_LIMIT = 10;
export const MAX_LIMIT = 100;
/**
 * A page ends with the item that brings its items' JSON to this many characters (ASCII: bytes),
 * so it holds at most this plus one item: about 25 MB with the largest blocks the node produces
 * (src/node/chain-node.ts MAX_BLOCK_BYTES, about 9 MB of JSON each), never 100 of them. A page
 * still holds at least two items when there are two, so a follower that asks from its own head
 * block always gets the block after it.
 */
export const MAX_PAGE_BYTES = 16 * 1024 * 1024;

export interface FeedQuery {
  since: bigint;
  until: bigint;
  limit: number;
  order: "asc" | "desc";
}

const HEIGHT = { what: "a block height", max: U64_MAX };
const LIMIT = { name: "limit", what: "an integer", max: BigInt(MAX_LIMIT), clamp: { min: 1n } };

export function parseFeedQuery(params: ReadonlyMap<string, string>): FeedQuery {
  const number = (name: string, p: Omit<DecimalParam, "name">, fallback: bigint) => {
    const text = params.get(name);
    return text === undefined ? fallback : parseDecimal(text, { name, ...p });
  };
  // since defaults to 0, the lowest height, so an omitted bound means the same as any bound
  // below the first block: ?until=0 and ?since=0&until=0 are one (empty) range.
  const since = number("since", HEIGHT, 0n);
  const until = number("until", HEIGHT, U64_MAX);
  if (since > until) throw badRequest("invalid_range", `since ${since} is above until ${until}`);
  const limit = Number(number("limit", LIMIT, BigInt(DEFAULT_LIMIT)));
  const order = params.get("order") ?? "asc";
  if (order !== "asc" && order !== "desc") throw badRequest("invalid_order", `order must be asc or desc (got ${JSON.stringify(order)})`);
  return { since, until, limit, order };
}

/**
 * One page of the feed, read synchronously (one consistent ledger), block by block: at most
 * `limit` items, ending early with the item that brings the page to `maxBytes`.
 */
export function feedPage(db: ChainDb, q: FeedQuery, maxBytes = MAX_PAGE_BYTES): JsonText {
  const from = q.since < 1n ? 1n : q.since; // genesis is not a feed item
  const items: string[] = [];
  let size = 0;
  let next: string | null = null;
  // The next block in the page's order: one read at a time, so a page never holds more blocks than it sends.
  let cursor = q.order === "asc" ? from : q.until;
  for (;;) {
    const [b] = q.order === "asc" ? db.blocks({ from: cursor, to: q.until, order: "asc", limit: 1 }) : db.blocks({ from, to: cursor, order: "desc", limit: 1 });
    if (b === undefined) break;
    if (items.length === q.limit || size >= maxBytes) {
      next = b.height.toString();
      break;
    }
    const text = JSON.stringify(blockItemJson(b));
    items.push(text);
    size += text.length;
    if (q.order === "asc" ? b.height >= q.until : b.height <= from) break;
    cursor = q.order === "asc" ? b.height + 1n : b.height - 1n;
  }
  // The nearest block outside the page on the side it was asked from (an empty range, from > to,
  // is [] by the ChainDb contract: nothing before block 1, nothing after 2^64 − 1).
  const before =
    q.order === "asc" ? db.blocks({ from: 1n, to: from - 1n, order: "desc", limit: 1 }) : db.blocks({ from: q.until + 1n, to: U64_MAX, order: "asc", limit: 1 });
  const prev = before.length > 0 ? before[0]!.height.toString() : null;
  // The answer's text is put together from the items' texts, each serialized once.
  const point = JSON.stringify(readPointJson(db.head()!));
  return new JsonText(`${point.slice(0, -1)},"items":[${items.join(",")}],"prev":${JSON.stringify(prev)},"next":${JSON.stringify(next)}}`);
}
