// Before `cbqs replay --db` resumes or `cbqs node --db --fixture` continues a stored chain, every
// block the store holds that the fixture also has must be the fixture's block, field by field:
// the header fields, the block hash, every transaction's bytes and every receipt. A block hash
// alone is not enough: the fixture's block_hash is a claim like its state_root, and a fixture
// whose state_root (or a receipt, or a transaction) was changed but whose block_hash was not
// would otherwise be "verified" by a store that never executed it. The first difference is a
// replay mismatch (block, field, expected = the fixture's value, got = the store's); nothing is
// executed or written. The comparison streams the store in pages (one decoded page at a time).
import { bytesEqual, toHex } from "../bytes.js";
import { genesisHash, headerHash } from "../chain/block.js";
import { txHash } from "../chain/envelope.js";
import { committedReceipt } from "../chain/receipts.js";
import type { Fixture, FixtureBlock } from "../harness/fixture.js";
import { count } from "../format.js";
import { differs, mismatchOf, receiptsMismatch, type Mismatch } from "../harness/replay.js";
import { U64_MAX } from "../engine/math.js";
import { GAS_VECTORS_SHA256 } from "../gas/pinned.js";
import type { BlockRecord, ChainDb } from "../../state/chain-db/chain-db.js";
import { blockRoots } from "../../state/roots/roots.js";

/** The store holds another chain (another genesis source): unusable input, exit 2, nothing touched. */
export class StoredChainError extends Error {
  override name = "StoredChainError";
}

export interface StoredComparison {
  /** The first difference between a stored block and the fixture's (null: none). */
  mismatch: Mismatch | null;
  /** Stored blocks compared with the fixture's (genesis not counted), and the heights they span. */
  compared: number;
  first: bigint | null;
  last: bigint | null;
  /** Index of the first fixture block above the store's head (fixture.blocks.length: none). */
  next: number;
  /**
   * The store's lowest block above genesis when it starts at an imported snapshot: it holds no
   * block below it. The fixture's blocks below it (`belowSnapshot` of them, within the heights
   * compared) are checked against the hash chain that ends at that block instead: each one's
   * roots against its transactions and receipts, its block hash against its header fields.
   */
  snapshotBase: bigint | null;
  belowSnapshot: number;
  /** The store holds blocks above the fixture's last block, through its head: not compared (the fixture has none). */
  beyond: { from: bigint; head: bigint } | null;
}

/** Stored blocks decoded at a time. */
const PAGE = 1_000;

/** How a mismatch found against the store says where the other value comes from. */
const NOTHING_DONE = "(the value the store holds for this block: nothing was executed, the store is unchanged)";

/**
 * Compares the stored chain with `fixture` through `upTo` (default: the store's head); throws
 * StoredChainError when the store holds another chain. `db` must hold a genesis.
 */
export function compareStoredChain(fixture: Fixture, db: ChainDb, upTo?: bigint): StoredComparison {
  const genesis = db.genesis()!;
  const g = fixture.genesis;
  if (!bytesEqual(genesis.source, g.source)) {
    throw new StoredChainError(`the store holds another chain (chain_instance_id ${toHex(genesis.chain_instance_id)}, the fixture's is ${toHex(g.chain_instance_id)})`);
  }
  const head = db.head()!.height;
  const fixtureLast = fixture.blocks.length === 0 ? 0n : fixture.blocks[fixture.blocks.length - 1]!.height;
  const after = fixture.blocks.findIndex((b) => b.height > head);
  // Only an imported snapshot's block lacks its parent in the store (every commit extends the head).
  const lowest = db.blocks({ from: 1n, to: head, order: "asc", limit: 1 })[0];
  const snapshotBase = lowest !== undefined && !bytesEqual(lowest.parent_hash, genesis.block.block_hash) ? lowest.height : null;
  // The stored blocks above the fixture's last one, from the lowest the store actually holds there
  // (heights may be skipped, and a snapshot store holds nothing below its snapshot).
  const beyondFrom = head > fixtureLast ? db.blocks({ from: fixtureLast + 1n, to: head, order: "asc", limit: 1 })[0]!.height : null;
  const out: StoredComparison = {
    mismatch: null,
    compared: 0,
    first: null,
    last: null,
    next: after === -1 ? fixture.blocks.length : after,
    snapshotBase,
    belowSnapshot: 0,
    beyond: beyondFrom === null ? null : { from: beyondFrom, head },
  };
  const genesisMismatch =
    differs(0n, "$.genesis.chain_instance_id", "chain_instance_id", g.chain_instance_id, genesis.chain_instance_id) ??
    differs(0n, "$.genesis.state_root", "genesis state_root", g.state_root, genesis.block.state_root);
  if (genesisMismatch !== null) return { ...out, mismatch: withNote(genesisMismatch) };

  let through = [head, upTo ?? head, fixtureLast].reduce((a, b) => (b < a ? b : a));
  // Fixture blocks below a snapshot are checked only against each other (their hash chain); the
  // chain binds them to the store only if it reaches the snapshot's block and that block is
  // compared with the store's. So the comparison always runs through the snapshot's block (even
  // above --to-height or the fixture's end); a fixture without that block cannot be verified.
  const first = fixture.blocks[0];
  // (through < snapshotBase makes the first fixture block, at or below through, one below the snapshot.)
  if (snapshotBase !== null && first !== undefined && first.height <= through && through < snapshotBase) {
    if (fixtureLast < snapshotBase) {
      const m = mismatchOf(snapshotBase, "$.blocks", "block", `no block at height ${snapshotBase} (the fixture ends at block ${fixtureLast})`, `the snapshot's block (block_hash ${toHex(lowest!.block_hash)})`);
      m.details.push(
        `(the store starts at a snapshot of block ${snapshotBase} and holds no block below it: the fixture's blocks below it can be bound to the store only through the hash chain that ends at its block ${snapshotBase}, which it does not hold, so they cannot be verified)`,
      );
      return { ...out, mismatch: withNote(m) };
    }
    through = snapshotBase;
  }
  const pages = storedBlocks(db, through);
  let stored = pages.next().value;
  for (let i = 0; i < fixture.blocks.length && fixture.blocks[i]!.height <= through; i++) {
    const f = fixture.blocks[i]!;
    const parent =
      i === 0
        ? { path: "$.genesis (its block hash)", hash: genesisHash(g.chain_instance_id, g.config.timestamp, g.state_root) }
        : { path: `$.blocks[${i - 1}].block_hash`, hash: fixture.blocks[i - 1]!.block_hash };
    let m: Mismatch | null;
    if (out.snapshotBase !== null && f.height < out.snapshotBase) {
      m = chainedBlock(g.chain_instance_id, f, `$.blocks[${i}]`, parent.hash, out.snapshotBase);
      out.belowSnapshot++;
    } else if (stored !== undefined && stored.height < f.height) {
      m = mismatchOf(stored.height, "$.blocks", "block", `no block at height ${stored.height} (the fixture skips it)`, `a stored block (block_hash ${toHex(stored.block_hash)})`);
    } else if (stored === undefined || stored.height > f.height) {
      m = mismatchOf(f.height, `$.blocks[${i}]`, "block", `a block at height ${f.height}`, "no stored block at that height");
    } else {
      m = compareBlock(f, `$.blocks[${i}]`, parent, stored);
      out.compared++;
      out.first ??= f.height;
      out.last = f.height;
      stored = pages.next().value;
    }
    if (m !== null) return { ...out, mismatch: withNote(m) };
  }
  if (stored !== undefined) {
    // A stored block above the fixture's last block compared is one the fixture skips.
    return { ...out, mismatch: withNote(mismatchOf(stored.height, "$.blocks", "block", `no block at height ${stored.height} (the fixture skips it)`, `a stored block (block_hash ${toHex(stored.block_hash)})`)) };
  }
  return out;
}

/** The stored blocks from height 1 through `through`, ascending, a page at a time. */
export function* storedBlocks(db: ChainDb, through: bigint): Generator<BlockRecord, void> {
  for (let from = 1n; from <= through; ) {
    const page = db.blocks({ from, to: through, order: "asc", limit: PAGE });
    yield* page;
    if (page.length < PAGE) return;
    from = page[page.length - 1]!.height + 1n;
  }
}

/** The first field in which the stored block differs from fixture block `f` (its expected parent: `parent`). */
function compareBlock(f: FixtureBlock, path: string, parent: { path: string; hash: Uint8Array }, s: BlockRecord): Mismatch | null {
  const h = f.height;
  const num = (p: string, field: string, e: bigint, a: bigint) => (e === a ? null : mismatchOf(h, `${path}${p}`, field, e.toString(), a.toString()));
  const m =
    num(".timestamp", "timestamp", f.timestamp, s.timestamp) ??
    differs(h, parent.path, "parent_hash", parent.hash, s.parent_hash) ??
    num(".transactions", "transactions.length", BigInt(f.transactions.length), BigInt(s.transactions.length));
  if (m !== null) return m;
  for (let k = 0; k < f.transactions.length; k++) {
    const t = differs(h, `${path}.transactions[${k}]`, `transactions[${k}]`, f.transactions[k]!, s.transactions[k]!);
    if (t !== null) return t;
  }
  return (
    num(".receipts", "receipts.length", BigInt(f.receipts.length), BigInt(s.receipts.length)) ??
    receiptsMismatch(h, path, f.receipts, s.receipts) ??
    differs(h, `${path}.state_root`, "state_root", f.state_root, s.state_root) ??
    differs(h, `${path}.tx_root`, "tx_root", f.tx_root, s.tx_root) ??
    differs(h, `${path}.receipt_root`, "receipt_root", f.receipt_root, s.receipt_root) ??
    differs(h, `${path}.logs_root`, "logs_root", f.logs_root, s.logs_root) ??
    num(".effective_rent_height", "effective_rent_height", f.effective_rent_height, s.effective_rent_height) ??
    // Not stored: the fixture's claim is checked against this build's gas vectors, as replay does.
    (f.gas_vectors_sha256 === GAS_VECTORS_SHA256 ? null : mismatchOf(h, `${path}.gas_vectors_sha256`, "gas_vectors_sha256", f.gas_vectors_sha256, GAS_VECTORS_SHA256)) ??
    differs(h, `${path}.block_hash`, "block_hash", f.block_hash, s.block_hash)
  );
}

/**
 * A fixture block below the snapshot a store starts at: the store does not hold it, but the
 * snapshot's block commits to it through its parent hash. So its claimed roots must be the roots
 * of its own transactions and receipts, and its block hash the hash of its header fields over
 * the claimed parent (the block before it, whose hash is checked the same way, up to the
 * snapshot's block, whose parent_hash is compared with the store's). Not executed: its
 * effective_rent_height, which no hash covers, is not checked.
 */
function chainedBlock(chainInstanceId: Uint8Array, f: FixtureBlock, path: string, parent: Uint8Array, base: bigint): Mismatch | null {
  const h = f.height;
  const roots = blockRoots(f.transactions.map(txHash), f.receipts.map(committedReceipt));
  const m =
    differs(h, `${path}.tx_root`, "tx_root", f.tx_root, roots.tx_root) ??
    differs(h, `${path}.receipt_root`, "receipt_root", f.receipt_root, roots.receipt_root) ??
    differs(h, `${path}.logs_root`, "logs_root", f.logs_root, roots.logs_root) ??
    differs(h, `${path}.block_hash`, "block_hash", f.block_hash, headerHash(chainInstanceId, h, f.timestamp, parent, f.state_root, f));
  if (m === null) return null;
  m.details.push(`(computed from the fixture's own block: the store starts at a snapshot of block ${base} and holds no block below it; the snapshot's block commits to this one through the parent hashes)`);
  return m;
}

/** Says where "got" comes from (the store, unless the mismatch says otherwise) and that nothing ran. */
function withNote(m: Mismatch): Mismatch {
  return { ...m, details: m.details.length === 0 ? [NOTHING_DONE] : [...m.details, "(nothing was executed, the store is unchanged)"] };
}

/**
 * The block a store's history starts at (docs/guides/run-a-devnet.md "history_start"): genesis when it holds the
 * chain from its start, else the lowest block it holds above genesis — the block a snapshot
 * import made its first (its parent is not held). `db` must hold a genesis.
 */
export function historyStart(db: ChainDb): BlockRecord {
  const genesis = db.genesis()!;
  const first = db.blocks({ from: 1n, to: U64_MAX, order: "asc", limit: 1 })[0];
  return first === undefined || bytesEqual(first.parent_hash, genesis.block.block_hash) ? genesis.block : first;
}

/** What the comparison covered, in words (one line; "" when the store holds no block above genesis). */
export function comparedText(c: StoredComparison): string {
  const parts: string[] = [];
  parts.push(c.compared === 0 ? "genesis compared with the fixture's (no stored block in the heights compared)" : `genesis and ${count(c.compared, "stored block")} (${heightSpan(c.first!, c.last!)}) compared with the fixture's: identical`);
  if (c.snapshotBase !== null) {
    const below = c.belowSnapshot === 0 ? "" : `; the fixture's ${c.belowSnapshot === 1 ? "block" : count(c.belowSnapshot, "block")} below it checked against the hash chain that ends at it (roots and block hashes, not executed)`;
    parts.push(`the store starts at a snapshot of block ${c.snapshotBase}, holding no block below it${below}`);
  }
  if (c.beyond !== null) parts.push(`the store also holds ${heightSpan(c.beyond.from, c.beyond.head)}, above the fixture's last block: not compared`);
  return parts.join("; ");
}

/** "block 5" or "heights 1 to 6" (the stored blocks lie in that range; not every height need hold one). */
export const heightSpan = (first: bigint, last: bigint): string => (first === last ? `block ${first}` : `heights ${first} to ${last}`);
