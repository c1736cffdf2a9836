// The QMDB storage (state/qmdb/storage.ts) on LMDB, so the one QMDB algorithm (state/qmdb/mmr.ts,
// state/qmdb/any.ts, current.ts) runs unchanged over a persistent store:
//
//   table `ops`    u64be(location) → encoded operation (values live in the Update operations)
//   table `nodes`  u64be(position) → 32-byte MMR digest (heights the MMR stores, plus the
//                  pinned peaks of the pruned prefix)
//   table `index`  54-byte key → u64be(location of its active Update)   (only with the "lmdb"
//                  index placement; by default the index is in memory, see IndexPlacement)
//
// Nothing is written while a block is applied: appended operations, new nodes, index changes and
// pruning wait in small per-block overlays, and `writePending()` writes them inside the caller's
// LMDB transaction (the ChainDb's one transaction per block). Until then LMDB still holds the
// last committed block, so a crash at any point reopens at a whole block.
//
// The activity bitmap is not stored: it is exactly "the location of every live key plus the
// last commit" (state/qmdb/any.ts), so opening rebuilds it from the index, as commonware rebuilds
// its bitmap from the log at startup. Only the part from the pruning boundary on is held in
// memory (every bit below the inactivity floor is zero), so its size follows the live state.
import { mmrSize, nodePosition } from "../qmdb/mmr.js";
import { BytesMap } from "../kv/bytes-map.js";
import { STATE_KEY_LENGTH } from "../kv/interface.js";
import { MemoryKeyIndex } from "../qmdb/memory.js";
import { DELETE_CONTEXT, UPDATE_CONTEXT } from "../qmdb/operation.js";
import type { BitmapStore, KeyIndex, NodeStore, OperationLog, PinnedNode, QmdbStorage } from "../qmdb/storage.js";
import { buf, DamagedStoreError, entryCount, plain, readU64Key, StoreError, u64Key, type Env, type Table } from "./env.js";

function checkLocation(loc: number, first: number, size: number): void {
  if (!Number.isInteger(loc) || loc < first || loc >= size) {
    throw new RangeError(loc < first && loc >= 0 ? `location ${loc} was pruned (below ${first})` : `location ${loc} out of range (size ${size})`);
  }
}

class LmdbOperationLog implements OperationLog {
  /** Operations appended since the last write, from location `written` on. */
  private pending: Uint8Array[] = [];
  private written: number;
  private writtenPrunedBelow: number;
  private first: number;

  constructor(private readonly table: Table) {
    const last = firstKey(table, true);
    this.written = last === undefined ? 0 : last + 1;
    this.first = firstKey(table, false) ?? 0;
    this.writtenPrunedBelow = this.first;
  }

  get size(): number {
    return this.written + this.pending.length;
  }

  get prunedBelow(): number {
    return this.first;
  }

  append(encoded: Uint8Array): void {
    this.pending.push(encoded);
  }

  /** An empty log whose first location is `loc` (a snapshot's inactivity floor). */
  startAt(loc: number): void {
    if (this.size !== 0) throw new StoreError("only an empty log can start above location 0");
    this.written = this.first = this.writtenPrunedBelow = loc;
  }

  read(loc: number): Uint8Array {
    checkLocation(loc, this.first, this.size);
    if (loc >= this.written) return this.pending[loc - this.written]!;
    const bytes = this.table.get(u64Key(loc));
    if (bytes === undefined) throw new DamagedStoreError(`operation ${loc} is missing`);
    return plain(bytes);
  }

  matches(loc: number, offset: number, part: Uint8Array): boolean {
    const bytes = this.read(loc);
    if (offset + part.length > bytes.length) return false;
    for (let i = 0; i < part.length; i++) if (bytes[offset + i] !== part[i]) return false;
    return true;
  }

  prune(loc: number): void {
    this.first = Math.max(this.first, Math.min(loc, this.size));
  }

  writePending(): void {
    for (let loc = this.writtenPrunedBelow; loc < Math.min(this.first, this.written); loc++) this.table.removeSync(u64Key(loc));
    this.pending.forEach((op, i) => {
      const loc = this.written + i;
      if (loc >= this.first) this.table.putSync(u64Key(loc), buf(op));
    });
  }

  markWritten(): void {
    this.written += this.pending.length;
    this.pending = [];
    this.writtenPrunedBelow = this.first;
  }
}

/** The first (or last) key of a table of u64 keys, as a number. */
function firstKey(table: Table, last: boolean): number | undefined {
  for (const key of table.getKeys({ reverse: last, limit: 1 })) return readU64Key(key);
  return undefined;
}

class LmdbNodeStore implements NodeStore {
  /** Digests put or pinned since the last write, by position. */
  private pending = new Map<number, Uint8Array>();
  private prunedLoc: number;
  private writtenPrunedLoc: number;
  private pinned: readonly PinnedNode[] = [];

  constructor(
    private readonly table: Table,
    prunedBelow: number,
  ) {
    this.prunedLoc = prunedBelow;
    this.writtenPrunedLoc = prunedBelow;
  }

  get(height: number, index: number): Uint8Array | undefined {
    const pos = nodePosition(height, index);
    const pending = this.pending.get(pos);
    if (pending !== undefined) return pending;
    const stored = this.table.get(u64Key(pos));
    return stored === undefined ? undefined : plain(stored);
  }

  put(height: number, index: number, digest: Uint8Array): void {
    this.pending.set(nodePosition(height, index), digest.slice());
  }

  /** An empty store of an MMR pruned below `loc`, holding only the pinned peaks of that prefix. */
  startAt(loc: number, pinned: readonly PinnedNode[]): void {
    this.writtenPrunedLoc = loc;
    this.prune(loc, pinned);
  }

  prune(loc: number, pinned: readonly PinnedNode[]): void {
    this.prunedLoc = loc;
    this.pinned = pinned;
    for (const n of pinned) this.pending.set(nodePosition(n.height, n.index), n.digest.slice());
  }

  writePending(): void {
    const boundary = mmrSize(this.prunedLoc);
    const keep = new Set(this.pinned.map((n) => nodePosition(n.height, n.index)));
    if (this.prunedLoc > this.writtenPrunedLoc) {
      // Every node below the new boundary goes, except the new pinned peaks; that includes the
      // previous pinned peaks, which lie below the previous boundary.
      const drop: Buffer[] = [];
      for (const key of this.table.getKeys({ end: u64Key(boundary) })) if (!keep.has(readU64Key(key))) drop.push(key);
      for (const key of drop) this.table.removeSync(key);
    }
    for (const [pos, digest] of this.pending) {
      if (pos >= boundary || keep.has(pos)) this.table.putSync(u64Key(pos), buf(digest));
    }
  }

  markWritten(): void {
    this.pending = new Map();
    this.writtenPrunedLoc = this.prunedLoc;
  }
}

/** Live key → location: LMDB, under this block's changes (location −1 = deleted). */
class LmdbKeyIndex implements KeyIndex {
  private changes = new BytesMap<number>(64);
  /** Committed answers already looked up during this block (−1 = absent). */
  private looked = new BytesMap<number>(64);
  private count: number;

  constructor(private readonly table: Table) {
    this.count = entryCount(table);
  }

  get size(): number {
    return this.count;
  }

  get(key: Uint8Array): number | undefined {
    const loc = this.changes.get(key) ?? this.committed(key);
    return loc < 0 ? undefined : loc;
  }

  private committed(key: Uint8Array): number {
    let loc = this.looked.get(key);
    if (loc === undefined) {
      const bytes = this.table.get(buf(key));
      loc = bytes === undefined ? -1 : readU64Key(bytes);
      this.looked.set(key, loc);
    }
    return loc;
  }

  set(key: Uint8Array, loc: number): void {
    if (this.get(key) === undefined) this.count++;
    this.changes.set(key, loc);
  }

  delete(key: Uint8Array): void {
    if (this.get(key) !== undefined) this.count--;
    this.changes.set(key, -1);
  }

  *locations(): Iterable<number> {
    for (const { key, value } of this.table.getRange({})) if (!this.changes.has(key)) yield readU64Key(value);
    for (const [, loc] of this.changes.entries()) if (loc >= 0) yield loc;
  }

  writePending(): void {
    for (const [key, loc] of this.changes.entries()) {
      if (loc >= 0) this.table.putSync(buf(key), u64Key(loc));
      else this.table.removeSync(buf(key));
    }
  }

  markWritten(): void {
    this.changes = new BytesMap<number>(64);
    this.looked = new BytesMap<number>(64);
  }
}

/**
 * The activity bitmap from chunk `base` on; chunks below it are all zero (they lie below the
 * inactivity floor) and are not held.
 */
export class WindowBitmap implements BitmapStore {
  private bytes = new Uint8Array(64);
  private bits = 0;
  private base = 0;
  private changed = new Set<number>();

  /** `firstBit`: every bit below it is zero (the pruning boundary of a reopened store). */
  constructor(
    readonly chunkBytes: number,
    firstBit = 0,
  ) {
    this.base = Math.floor(firstBit / this.chunkBits);
    this.bits = this.offset;
  }

  get length(): number {
    return this.bits;
  }

  get chunkBits(): number {
    return this.chunkBytes * 8;
  }

  /** First bit held. */
  private get offset(): number {
    return this.base * this.chunkBits;
  }

  extendTo(length: number): void {
    if (length < this.bits) throw new RangeError(`cannot shrink bitmap from ${this.bits} to ${length}`);
    const needed = Math.ceil((length - this.offset) / 8);
    if (needed > this.bytes.length) {
      const grown = new Uint8Array(Math.max(needed, this.bytes.length * 2));
      grown.set(this.bytes);
      this.bytes = grown;
    }
    this.bits = length;
  }

  get(bit: number): boolean {
    this.check(bit);
    const i = bit - this.offset;
    return i >= 0 && (this.bytes[i >> 3]! & (1 << (i & 7))) !== 0;
  }

  set(bit: number, value: boolean): void {
    this.check(bit);
    const i = bit - this.offset;
    if (i < 0) {
      if (value) throw new RangeError(`bit ${bit} lies below the inactivity floor`);
      return;
    }
    const mask = 1 << (i & 7);
    const before = this.bytes[i >> 3]!;
    const after = value ? before | mask : before & ~mask;
    if (after === before) return;
    this.bytes[i >> 3] = after;
    this.changed.add(Math.floor(bit / this.chunkBits));
  }

  chunk(index: number): Uint8Array {
    if (!Number.isInteger(index) || index < 0 || index * this.chunkBits >= this.bits) throw new RangeError(`bitmap chunk ${index} out of range`);
    const out = new Uint8Array(this.chunkBytes);
    if (index < this.base) return out;
    const start = (index - this.base) * this.chunkBytes;
    out.set(this.bytes.subarray(start, Math.min(start + this.chunkBytes, this.bytes.length)));
    return out;
  }

  takeChangedChunks(): Set<number> {
    const changed = this.changed;
    if (changed.size > 0) this.changed = new Set();
    return changed;
  }

  /**
   * Stops holding the chunks wholly below `bit` (every bit there must be zero). Done once they
   * make up half of what is held, so the copy costs O(1) per bit.
   */
  dropBelow(bit: number): void {
    const chunk = Math.floor(Math.min(bit, this.bits) / this.chunkBits);
    const drop = chunk - this.base;
    if (drop <= 0 || drop * this.chunkBytes * 2 < Math.ceil((this.bits - this.offset) / 8)) return;
    const cut = drop * this.chunkBytes;
    for (let i = 0; i < cut; i++) if (this.bytes[i] !== 0) throw new RangeError(`an active bit lies below ${bit}`);
    const kept = new Uint8Array(Math.max(64, this.bytes.length - cut));
    kept.set(this.bytes.subarray(cut));
    this.bytes = kept;
    this.base = chunk;
  }

  private check(bit: number): void {
    if (!Number.isInteger(bit) || bit < 0 || bit >= this.bits) throw new RangeError(`bit ${bit} out of range (length ${this.bits})`);
  }
}

/**
 * The four QMDB stores over one LMDB environment. Opening reads what the last committed
 * transaction left; `writePending()` inside a write transaction followed by `markWritten()`
 * after it commits moves that point on.
 */
/**
 * Where the key index lives. "memory" (the default, commonware's way): a hash table of locations
 * only (state/qmdb/memory.ts, 8 bytes a slot, keys confirmed against the log), rebuilt at open by
 * replaying the log from the pruning boundary. "lmdb": a table of key → location, so memory does
 * not grow with the live keys at all, at the price of a random B-tree insert per write (measured
 * 2.3× slower, docs/spec/state.md §6.6); kept for that comparison (bench-state --lmdb-index).
 */
export type IndexPlacement = "lmdb" | "memory";

export class LmdbQmdbStorage implements QmdbStorage {
  readonly log: LmdbOperationLog;
  readonly nodes: LmdbNodeStore;
  readonly bitmap: WindowBitmap;
  readonly index: LmdbKeyIndex | MemoryKeyIndex;

  constructor(env: Env, chunkBytes: number, placement: IndexPlacement = "memory") {
    this.log = new LmdbOperationLog(env.table("ops"));
    this.nodes = new LmdbNodeStore(env.table("nodes"), this.log.prunedBelow);
    if (placement === "lmdb") this.index = new LmdbKeyIndex(env.table("index"));
    else {
      // Every active operation lies above the pruning boundary: replaying the log from there in
      // order (an Update sets its key, a Delete removes it) leaves exactly the live keys.
      const index = new MemoryKeyIndex(this.log);
      for (const { key, value } of env.table("ops").getRange({})) {
        const k = value.subarray(1, 1 + STATE_KEY_LENGTH);
        if (value[0] === UPDATE_CONTEXT) index.set(plain(k).slice(), readU64Key(key));
        else if (value[0] === DELETE_CONTEXT) index.delete(plain(k));
      }
      this.index = index;
    }
    this.bitmap = new WindowBitmap(chunkBytes, this.log.prunedBelow);
    if (this.log.size > 0) {
      // Bit 1 exactly at each live key's location and at the last commit (the last operation).
      this.bitmap.extendTo(this.log.size);
      for (const loc of this.index.locations()) this.bitmap.set(loc, true);
      this.bitmap.set(this.log.size - 1, true);
      this.bitmap.takeChangedChunks();
    }
  }

  /** Writes this block's changes; call inside the environment's write transaction. */
  writePending(): void {
    this.log.writePending();
    this.nodes.writePending();
    if (this.index instanceof LmdbKeyIndex) this.index.writePending();
  }

  /** The transaction that wrote the changes committed. */
  markWritten(): void {
    this.log.markWritten();
    this.nodes.markWritten();
    if (this.index instanceof LmdbKeyIndex) this.index.markWritten();
    this.bitmap.dropBelow(this.log.prunedBelow);
  }
}
