// The reads the explorer page needs beyond the others (docs/guides/run-a-devnet.md "The explorer"), so the page
// computes nothing heavy itself: a block with its transactions decoded, a stream's history over
// the heights whose state the node retains (for its escrow chart), a stream's events found by a
// bounded scan of blocks, and a search that says what an id, hash or address names. Each is
// synchronous and built from one state, like every read (src/node/server.ts).
import { toHex } from "../bytes.js";
import { receiptJson } from "../chain/receipts.js";
import { decode } from "../codec/core.js";
import * as S from "../codec/schema.js";
import type { StreamRecordV1 } from "../codec/types.js";
import { decodeScalar } from "../engine/context.js";
import { CbqsError } from "../engine/errors.js";
import { paramKey, providerKey, streamKey } from "../engine/layout.js";
import { U64_MAX } from "../engine/math.js";
import { envelopeView } from "../harness/diff.js";
import { devAccountIndex } from "../harness/devnet.js";
import type { BlockRecord, StateReader } from "../../state/chain-db/chain-db.js";
import type { TxReceipt } from "../chain/receipts.js";
import { decodeStateValueAs } from "../../state/kv/value.js";
import { settle } from "../../instructions/settle.js";
import type { CbqsNode } from "../chain-node/chain-node.js";
import { parseDecimal } from "./decimal.js";
import { badRequest, notFound } from "./errors.js";
import { readPointJson } from "./json.js";
import { addressParam, decodedEvent } from "./lookups.js";
import { parseHash, stateOf } from "./reads.js";
import { streamEvents } from "./subscriptions.js";

/** GET /cbqs/stream/{id}/history: points per answer at most, and by default. */
export const MAX_HISTORY_POINTS = 256;
export const DEFAULT_HISTORY_POINTS = 128;
/** GET /cbqs/stream/{id}/events: blocks scanned per answer at most; events per answer by default and at most. */
export const EVENTS_SCAN_BLOCKS = 4_096;
export const DEFAULT_EVENTS_LIMIT = 50;
export const MAX_EVENTS_LIMIT = 256;
/** GET /latest: transactions and streams per answer by default and at most. */
export const DEFAULT_LATEST_LIMIT = 10;
export const MAX_LATEST_LIMIT = 50;

const heightParam = (text: string, name: string) => parseDecimal(text, { name, what: "a block height", max: U64_MAX });

/** GET /block/{height|hash}: the block, each transaction decoded with its receipt and named events. */
export function blockAnswer(node: CbqsNode, text: string): Record<string, unknown> {
  const db = node.db;
  const block = text.startsWith("0x") ? db.blockByHash(parseHash(text, "block")) : db.blockByHeight(parseDecimal(text, { name: "block", what: "a block height or a 0x block hash", max: U64_MAX }));
  if (block === undefined) throw notFound("block_not_found", `no committed block ${text}`, readPointJson(db.head()!));
  // The stored blocks either side (heights may skip: `POST /mine?height=`), for a reader paging
  // through; none below genesis or above the head (an empty range holds no block).
  const previous = db.blocks({ from: 0n, to: block.height - 1n, order: "desc", limit: 1 })[0];
  const next = db.blocks({ from: block.height + 1n, to: db.head()!.height, order: "asc", limit: 1 })[0];
  return {
    ...readPointJson(block),
    previous_height: previous === undefined ? null : previous.height.toString(),
    next_height: next === undefined ? null : next.height.toString(),
    parent_hash: toHex(block.parent_hash),
    timestamp: block.timestamp.toString(),
    tx_root: toHex(block.tx_root),
    receipt_root: toHex(block.receipt_root),
    logs_root: toHex(block.logs_root),
    effective_rent_height: block.effective_rent_height.toString(),
    transactions: block.transactions.map((raw, index) => {
      const r = block.receipts[index]!;
      return {
        index,
        tx_hash: toHex(r.tx_hash),
        // The envelope field by field, a CBQS instruction decoded to its arguments (as `cbqs diff` shows it).
        transaction: envelopeView(raw),
        receipt: receiptJson(r, node.rejectionMessage(r.tx_hash)),
        fee: feeOf(node, r).toString(),
        events: r.events.map(decodedEvent),
      };
    }),
  };
}

/** What the sender paid for a transaction: its metered cycles and cells at the genesis prices (src/engine/chain.ts chargeFee). */
function feeOf(node: CbqsNode, r: TxReceipt): bigint {
  return r.cycles * node.config.cycle_price + r.cells * node.config.cell_price;
}

/**
 * GET /latest{?limit}: the newest `limit` transactions (each decoded, with its outcome, cycles,
 * cells and fee) and the newest `limit` streams (by their cbqs.stream.created event, each as its
 * record stands at the head), found by scanning the blocks down from the head until both lists
 * are full, at most EVENTS_SCAN_BLOCKS blocks — a scan, not an index, bounded per answer.
 */
export function latestAnswer(node: CbqsNode, params: ReadonlyMap<string, string>): Record<string, unknown> {
  const db = node.db;
  const head = db.head()!;
  const limit = params.has("limit") ? Number(parseDecimal(params.get("limit")!, { name: "limit", what: "a number of items", max: BigInt(MAX_LATEST_LIMIT), clamp: { min: 1n } })) : DEFAULT_LATEST_LIMIT;
  const state = db.stateAt(head.height)!;
  const transactions: Array<Record<string, unknown>> = [];
  const streams: Array<Record<string, unknown>> = [];
  // Pages of blocks, newest first: a chain of empty blocks is scanned without holding 4,096 blocks
  // at once. EVENTS_SCAN_BLOCKS is a whole number of pages.
  const PAGE = 64;
  let scanned = 0;
  let top: bigint | null = head.height;
  while (top !== null && scanned < EVENTS_SCAN_BLOCKS && (transactions.length < limit || streams.length < limit)) {
    const blocks = db.blocks({ from: 0n, to: top, order: "desc", limit: PAGE });
    for (const b of blocks) {
      for (let i = b.transactions.length - 1; i >= 0; i--) {
        const r = b.receipts[i]!;
        if (transactions.length < limit) {
          transactions.push({
            height: b.height.toString(),
            index: i,
            tx_hash: toHex(r.tx_hash),
            transaction: envelopeView(b.transactions[i]!),
            status: r.status,
            error: r.error === null ? null : r.error.name,
            cycles: r.cycles.toString(),
            cells: r.cells.toString(),
            fee: feeOf(node, r).toString(),
          });
        }
        for (const e of r.events) {
          if (streams.length >= limit || e.topic !== "cbqs.stream.created") continue;
          // The event's payload is the stream id, and a created stream's record stays in the state
          // (closing one keeps it): every stream of the head's chain is read at the head.
          const record = streamAt(state, e.payload)!;
          streams.push({
            stream_id: toHex(e.payload),
            created_at: b.height.toString(),
            tx_hash: toHex(r.tx_hash),
            status: record.status,
            owner: toHex(record.owner),
            provider: toHex(record.provider),
            escrow_balance: record.escrow_balance.toString(),
            rate_per_block: record.rate_per_block.toString(),
          });
        }
      }
    }
    scanned += blocks.length;
    const last = blocks[blocks.length - 1];
    // Below genesis the range is empty: the next page has no block and the scan ends.
    top = last === undefined ? null : last.height - 1n;
  }
  return { ...readPointJson(head), transactions, streams };
}

function streamAt(state: StateReader, id: Uint8Array): StreamRecordV1 | undefined {
  const bytes = state.read(streamKey(id));
  return bytes === undefined ? undefined : decode(S.StreamRecordV1, decodeStateValueAs(bytes, "StorageSlot").bytes);
}

/**
 * The escrow a §6.1 settlement at the block's effective rent height would leave: what the stream
 * can still spend, which falls block by block while the recorded escrow changes only when a
 * transaction settles. A closed or expired stream settles nothing: its recorded escrow.
 */
function settledEscrow(record: StreamRecordV1, block: BlockRecord, state: StateReader): string | null {
  if (record.status !== "Active" && record.status !== "Suspended") return record.escrow_balance.toString();
  try {
    const grace = decodeScalar(state.read(paramKey("cbqs.suspend_grace_blocks")), "cbqs.suspend_grace_blocks");
    return settle(record, block.effective_rent_height, grace).record.escrow_balance.toString();
  } catch (err) {
    // A record the engine itself would refuse to settle (RegistryStateInvalid): no figure to show.
    if (err instanceof CbqsError) return null;
    throw err;
  }
}

/**
 * GET /cbqs/stream/{id}/history{?from,to,points}: the stream at up to `points` blocks spread
 * evenly over [from, to] (default: the retained window, the head and the --retain-blocks heights
 * below it), each read from that block's state — so the range must lie within the retained state
 * (410 block_not_retained below it). A height without a block reads the block below it; points are
 * per block, in ascending order, without repeats.
 */
export function historyAnswer(node: CbqsNode, id: Uint8Array, params: ReadonlyMap<string, string>): Record<string, unknown> {
  const db = node.db;
  const head = db.head()!;
  const to = params.has("to") ? heightParam(params.get("to")!, "to") : head.height;
  if (to > head.height) throw notFound("block_not_found", `to ${to} is above the head, block ${head.height}`, readPointJson(head));
  const windowStart = head.height > BigInt(db.retainBlocks) ? head.height - BigInt(db.retainBlocks) : 0n;
  const start = node.historyStart().height;
  const from = params.has("from") ? heightParam(params.get("from")!, "from") : windowStart > start ? windowStart : start;
  if (from > to) throw badRequest("invalid_range", `from ${from} is above to ${to}`);
  const points = params.has("points") ? Number(parseDecimal(params.get("points")!, { name: "points", what: "a number of points", max: BigInt(MAX_HISTORY_POINTS), clamp: { min: 2n } })) : DEFAULT_HISTORY_POINTS;
  const span = to - from;
  const n = span + 1n < BigInt(points) ? Number(span) + 1 : points;
  const seen = new Set<bigint>();
  const out: Array<Record<string, unknown>> = [];
  for (let i = 0; i < n; i++) {
    const h = n === 1 ? to : from + (span * BigInt(i)) / BigInt(n - 1);
    const block = db.blocks({ from: 0n, to: h, order: "desc", limit: 1 })[0];
    if (block === undefined || seen.has(block.height)) continue;
    seen.add(block.height);
    // The lowest point is read first: a range below the retained window is refused before any work.
    const { state } = stateOf(db, block);
    const record = streamAt(state, id);
    out.push(
      record === undefined
        ? { height: block.height.toString(), status: null }
        : {
            height: block.height.toString(),
            status: record.status,
            escrow_balance: record.escrow_balance.toString(),
            settled_escrow: settledEscrow(record, block, state),
            last_settled_block: record.last_settled_block.toString(),
            rate_per_block: record.rate_per_block.toString(),
          },
    );
  }
  return { ...readPointJson(head), stream_id: toHex(id), from: from.toString(), to: to.toString(), points: out };
}

/**
 * GET /cbqs/stream/{id}/events{?until,limit}: the stream's events, newest first, found by scanning
 * the blocks down from `until` (default the head): whole blocks until at least `limit` events are
 * found, at most EVENTS_SCAN_BLOCKS blocks per answer. `next` is the `until` that continues the
 * scan, null once it has reached the first block the node holds.
 */
export function eventsAnswer(node: CbqsNode, id: Uint8Array, params: ReadonlyMap<string, string>): Record<string, unknown> {
  const db = node.db;
  const head = db.head()!;
  const until = params.has("until") ? heightParam(params.get("until")!, "until") : head.height;
  const limit = params.has("limit") ? Number(parseDecimal(params.get("limit")!, { name: "limit", what: "a number of events", max: BigInt(MAX_EVENTS_LIMIT), clamp: { min: 1n } })) : DEFAULT_EVENTS_LIMIT;
  const blocks = db.blocks({ from: 0n, to: until, order: "desc", limit: EVENTS_SCAN_BLOCKS });
  const events: Array<Record<string, unknown>> = [];
  let next: string | null = null;
  for (const [i, b] of blocks.entries()) {
    for (const e of streamEvents(b, id)) events.push({ height: b.height.toString(), ...e });
    const last = i === blocks.length - 1;
    if (events.length >= limit || last) {
      // Every store holds genesis (a snapshot-started one too): a scan that ran out of blocks ends there.
      next = b.height === 0n ? null : (b.height - 1n).toString();
      break;
    }
  }
  return { ...readPointJson(head), stream_id: toHex(id), until: until.toString(), events, next };
}

/**
 * GET /search?q=: what `q` names, at the head — a block height; a transaction, block or stream id
 * (32 bytes, tried in that order; a stream also in the CLI's key forms); a provider or else an
 * account (an address or a dev account's name). 404 not_found when nothing has it.
 */
export function searchAnswer(node: CbqsNode, q: string | undefined, streamId: (text: string) => string | undefined): Record<string, unknown> {
  if (q === undefined || q.trim() === "") throw badRequest("missing_q", "search needs ?q=<a block height, a 0x hash or id, an address or a dev account name>");
  const text = q.trim();
  const db = node.db;
  const head = db.head()!;
  const at = readPointJson(head);
  const found = (kind: string, id: string) => ({ ...at, kind, id });
  if (/^[0-9]+$/.test(text)) {
    const h = heightParam(text, "q");
    if (db.blockByHeight(h) !== undefined) return found("block", h.toString());
    throw notFound("not_found", `no block at height ${h}`, at);
  }
  const state = db.stateAt(head.height)!;
  if (/^0x[0-9a-fA-F]{40}$/.test(text) || devAccountIndex(text) !== undefined) {
    const address = addressParam(node, text);
    const kind = state.read(providerKey(address)) !== undefined ? "provider" : "account";
    return found(kind, toHex(address));
  }
  if (/^0x[0-9a-fA-F]{64}$/.test(text)) {
    const hash = parseHash(text.toLowerCase(), "q");
    if (db.txLocation(hash) !== undefined || node.pooled(hash) !== undefined || node.droppedTx(hash) !== undefined) return found("tx", toHex(hash));
    const block = db.blockByHash(hash);
    if (block !== undefined) return found("block", block.height.toString());
    if (streamAt(state, hash) !== undefined) return found("stream", toHex(hash));
    throw notFound("not_found", `no transaction, block or stream (at height ${head.height}) has id ${text}`, at);
  }
  if (/^(owner:|key_stream_of:)/.test(text)) {
    const id = parseHash(streamId(text)!, "q");
    if (streamAt(state, id) !== undefined) return found("stream", toHex(id));
    throw notFound("not_found", `no stream ${text} at height ${head.height}`, at);
  }
  throw badRequest("invalid_q", `q must be a block height, a 0x 32-byte hash or id, a 0x 20-byte address, a dev account name or a stream key (owner:0x<addr>/nonce:<n>) (got ${JSON.stringify(text.slice(0, 80))})`);
}
