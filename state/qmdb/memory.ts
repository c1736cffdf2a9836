// The in-memory QMDB storage (state/qmdb/storage.ts): packed pages instead of one JS object per
// operation or node, so a live key costs little more than its bytes. Operations sit back to back
// in 1 MiB byte pages with a 4-byte start offset per location; node digests sit in
// pages of 4,096 32-byte slots, one run of pages per height; the key index stores only
// locations (key bytes are confirmed against the log). Pruning frees whole pages.
import { KeyedIntTable } from "../kv/bytes-map.js";
import { ActivityBitmap } from "./bitmap.js";
import type { KeyIndex, NodeStore, OperationLog, PinnedNode, QmdbStorage } from "./storage.js";

/**
 * Pages freed by pruning, kept for reuse: the log grows at its tail as pruning frees its head,
 * so recycling pages keeps the process from handing memory back and forth to the allocator
 * (which fragments it). Recycled pages are not cleared: every byte is written before it is read.
 */
class PagePool<T extends Uint8Array | Uint32Array> {
  private readonly free: T[] = [];

  constructor(
    private readonly make: () => T,
    private readonly keep = 16,
  ) {}

  take(): T {
    return this.free.pop() ?? this.make();
  }

  give(page: T | undefined): void {
    if (page !== undefined && this.free.length < this.keep) this.free.push(page);
  }
}

const LOG_PAGE_BYTES = 1 << 20;
/** Locations per block of operation starts. */
const META_SHIFT = 12;
const META_SIZE = 1 << META_SHIFT;
const META_MASK = META_SIZE - 1;

function checkLocation(loc: number, first: number, size: number, what: string): void {
  if (!Number.isInteger(loc) || loc < first || loc >= size) {
    throw new RangeError(loc < first && loc >= 0 ? `${what} ${loc} was pruned (below ${first})` : `${what} ${loc} out of range (size ${size})`);
  }
}

export class MemoryOperationLog implements OperationLog {
  private pages: (Uint8Array | undefined)[] = [];
  /** First location held by each page, and the bytes each page uses. */
  private readonly pageFirst: number[] = [];
  private readonly pageUsed: number[] = [];
  private readonly pagePool = new PagePool<Uint8Array>(() => new Uint8Array(LOG_PAGE_BYTES));
  private readonly metaPool = new PagePool<Uint32Array>(() => new Uint32Array(META_SIZE));
  private tail: Uint8Array = new Uint8Array(0);
  /** Start of each operation within its page, in blocks of META_SIZE locations (4 bytes each). */
  private starts: (Uint32Array | undefined)[] = [];
  private count = 0;
  private first = 0;
  /** Pages and start blocks below these indices have been freed. */
  private firstPage = 0;
  private firstBlock = 0;
  /** The page of the last lookup (reads cluster). */
  private lastPage = 0;

  get size(): number {
    return this.count;
  }

  get prunedBelow(): number {
    return this.first;
  }

  append(encoded: Uint8Array): void {
    const n = encoded.length;
    let page = this.pages.length - 1;
    if (page < 0 || this.pageUsed[page]! + n > this.tail.length) {
      // An operation never spans pages; one larger than a page gets a page of its own.
      this.tail = n > LOG_PAGE_BYTES ? new Uint8Array(n) : this.pagePool.take();
      this.pages.push(this.tail);
      this.pageFirst.push(this.count);
      this.pageUsed.push(0);
      page++;
    }
    const block = this.count >>> META_SHIFT;
    if (block === this.starts.length) this.starts.push(this.metaPool.take());
    const at = this.pageUsed[page]!;
    this.starts[block]![this.count & META_MASK] = at;
    this.tail.set(encoded, at);
    this.pageUsed[page] = at + n;
    this.count++;
    if (this.count >= 2 ** 32) throw new RangeError("operation log exceeds 2^32 operations");
  }

  private startOf(loc: number): number {
    return this.starts[loc >>> META_SHIFT]![loc & META_MASK]!;
  }

  /** Index of the page holding `loc` (held, so at or after firstPage). */
  private pageOf(loc: number): number {
    const p = this.lastPage;
    if (p < this.pages.length && this.pageFirst[p]! <= loc && (p + 1 === this.pages.length || loc < this.pageFirst[p + 1]!)) return p;
    let lo = this.firstPage;
    let hi = this.pages.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.pageFirst[mid]! <= loc) lo = mid;
      else hi = mid - 1;
    }
    this.lastPage = lo;
    return lo;
  }

  /** End (exclusive) of the operation at `loc` in page `p`: the next one's start, or the page's end. */
  private endOf(loc: number, p: number): number {
    const next = p + 1 < this.pages.length ? this.pageFirst[p + 1]! : this.count;
    return loc + 1 < next ? this.startOf(loc + 1) : this.pageUsed[p]!;
  }

  read(loc: number): Uint8Array {
    checkLocation(loc, this.first, this.count, "location");
    const p = this.pageOf(loc);
    return this.pages[p]!.subarray(this.startOf(loc), this.endOf(loc, p));
  }

  matches(loc: number, offset: number, part: Uint8Array): boolean {
    checkLocation(loc, this.first, this.count, "location");
    const p = this.pageOf(loc);
    const start = this.startOf(loc) + offset;
    if (start + part.length > this.endOf(loc, p)) return false;
    const page = this.pages[p]!;
    for (let i = 0; i < part.length; i++) if (page[start + i] !== part[i]) return false;
    return true;
  }

  prune(loc: number): void {
    const target = Math.min(loc, this.count);
    if (target <= this.first) return;
    // Free every page before the one holding the first kept operation (or all but the tail).
    const keepPage = target < this.count ? this.pageOf(target) : this.pages.length - 1;
    this.first = target;
    for (; this.firstBlock < target >>> META_SHIFT; this.firstBlock++) {
      this.metaPool.give(this.starts[this.firstBlock]);
      this.starts[this.firstBlock] = undefined;
    }
    for (; this.firstPage < keepPage; this.firstPage++) {
      const page = this.pages[this.firstPage];
      if (page !== undefined && page.length === LOG_PAGE_BYTES) this.pagePool.give(page);
      this.pages[this.firstPage] = undefined;
    }
  }
}

const DIGEST = 32;
const NODE_SHIFT = 12;
const NODES_PER_PAGE = 1 << NODE_SHIFT;
const NODE_MASK = NODES_PER_PAGE - 1;

/** The nodes of one height, in pages of 4,096 digests. */
interface Level {
  pages: (Uint8Array | undefined)[];
  count: number;
  /** Pages below this index have been freed. */
  firstPage: number;
}

export class MemoryNodeStore implements NodeStore {
  private readonly levels: Level[] = [];
  private readonly pool = new PagePool<Uint8Array>(() => new Uint8Array(DIGEST * NODES_PER_PAGE));
  private pinned = new Map<number, Uint8Array>();

  private static pinKey(height: number, index: number): number {
    return index * 64 + height;
  }

  get(height: number, index: number): Uint8Array | undefined {
    const level = this.levels[height];
    if (level !== undefined && index < level.count) {
      const page = level.pages[index >>> NODE_SHIFT];
      if (page !== undefined) {
        const offset = DIGEST * (index & NODE_MASK);
        return page.subarray(offset, offset + DIGEST);
      }
    }
    return this.pinned.get(MemoryNodeStore.pinKey(height, index));
  }

  put(height: number, index: number, digest: Uint8Array): void {
    if (digest.length !== DIGEST) throw new RangeError(`node digest must be ${DIGEST} bytes`);
    while (this.levels.length <= height) this.levels.push({ pages: [], count: 0, firstPage: 0 });
    const level = this.levels[height]!;
    if (index !== level.count) throw new RangeError(`node (${height}, ${index}) out of order: expected index ${level.count}`);
    if (index >= 2 ** 32) throw new RangeError("too many MMR nodes");
    const page = index >>> NODE_SHIFT;
    if (page === level.pages.length) level.pages.push(this.pool.take());
    level.pages[page]!.set(digest, DIGEST * (index & NODE_MASK));
    level.count++;
  }

  prune(loc: number, pinned: readonly PinnedNode[]): void {
    // Copies, so a pinned digest does not keep a freed page alive.
    this.pinned = new Map(pinned.map((n) => [MemoryNodeStore.pinKey(n.height, n.index), n.digest.slice()]));
    this.levels.forEach((level, height) => {
      // Nodes [0, below) of this height lie wholly under loc; free the pages they fill.
      const below = Math.floor(loc / 2 ** height);
      for (; level.firstPage < Math.floor(below / NODES_PER_PAGE); level.firstPage++) {
        this.pool.give(level.pages[level.firstPage]);
        level.pages[level.firstPage] = undefined;
      }
    });
  }
}

/** Live key → location; the key bytes are those of the Update at that location (bytes 1..). */
export class MemoryKeyIndex implements KeyIndex {
  private readonly table: KeyedIntTable;

  constructor(log: OperationLog) {
    this.table = new KeyedIntTable((loc, key) => log.matches(loc, 1, key));
  }

  get size(): number {
    return this.table.size;
  }

  get(key: Uint8Array): number | undefined {
    return this.table.get(key);
  }

  set(key: Uint8Array, loc: number): void {
    this.table.set(key, loc);
  }

  delete(key: Uint8Array): void {
    this.table.delete(key);
  }

  locations(): Iterable<number> {
    return this.table.values();
  }
}

export function memoryStorage(chunkBytes: number): QmdbStorage {
  const log = new MemoryOperationLog();
  return {
    log,
    nodes: new MemoryNodeStore(),
    bitmap: new ActivityBitmap(chunkBytes),
    index: new MemoryKeyIndex(log),
  };
}
