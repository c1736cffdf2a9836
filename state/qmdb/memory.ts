// The in-memory QMDB storage (state/qmdb/storage.ts): packed pages instead of one JS object per
// operation or node, so a live key costs little more than its bytes. Operations sit back to back
// in 1 MiB byte pages with a (page, offset, length) triple per location; node digests sit in
// pages of 4,096 32-byte slots, one run of pages per height; the key index stores only
// locations (key bytes are confirmed against the log). Pruning frees whole pages.
import { KeyedIntTable } from "../bytes-map.js";
import { ActivityBitmap } from "./bitmap.js";
import type { KeyIndex, NodeStore, OperationLog, PinnedNode, QmdbStorage } from "./storage.js";

const LOG_PAGE_BYTES = 1 << 20;
/** Locations per block of (page, offset, length) triples. */
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
  private tail = new Uint8Array(0);
  private tailUsed = 0;
  private meta: (Uint32Array | undefined)[] = [];
  private count = 0;
  private first = 0;
  /** Pages and metadata blocks below these indices have been freed. */
  private firstPage = 0;
  private firstMeta = 0;

  get size(): number {
    return this.count;
  }

  get prunedBelow(): number {
    return this.first;
  }

  append(encoded: Uint8Array): void {
    const n = encoded.length;
    if (this.tailUsed + n > this.tail.length) {
      // An operation never spans pages; one larger than a page gets a page of its own.
      this.tail = new Uint8Array(Math.max(LOG_PAGE_BYTES, n));
      this.pages.push(this.tail);
      this.tailUsed = 0;
    }
    const block = this.count >>> META_SHIFT;
    if (block === this.meta.length) this.meta.push(new Uint32Array(3 * META_SIZE));
    const m = this.meta[block]!;
    const j = 3 * (this.count & META_MASK);
    m[j] = this.pages.length - 1;
    m[j + 1] = this.tailUsed;
    m[j + 2] = n;
    this.tail.set(encoded, this.tailUsed);
    this.tailUsed += n;
    this.count++;
    if (this.count >= 2 ** 32) throw new RangeError("operation log exceeds 2^32 operations");
  }

  read(loc: number): Uint8Array {
    checkLocation(loc, this.first, this.count, "location");
    const m = this.meta[loc >>> META_SHIFT]!;
    const j = 3 * (loc & META_MASK);
    const offset = m[j + 1]!;
    return this.pages[m[j]!]!.subarray(offset, offset + m[j + 2]!);
  }

  matches(loc: number, offset: number, part: Uint8Array): boolean {
    checkLocation(loc, this.first, this.count, "location");
    const m = this.meta[loc >>> META_SHIFT]!;
    const j = 3 * (loc & META_MASK);
    if (offset + part.length > m[j + 2]!) return false;
    const page = this.pages[m[j]!]!;
    const start = m[j + 1]! + offset;
    for (let i = 0; i < part.length; i++) if (page[start + i] !== part[i]) return false;
    return true;
  }

  prune(loc: number): void {
    const target = Math.min(loc, this.count);
    if (target <= this.first) return;
    this.first = target;
    for (; this.firstMeta < target >>> META_SHIFT; this.firstMeta++) this.meta[this.firstMeta] = undefined;
    // Free every page before the one holding the first kept operation (or all but the tail).
    const keepPage = target < this.count ? this.meta[target >>> META_SHIFT]![3 * (target & META_MASK)]! : this.pages.length - 1;
    for (; this.firstPage < keepPage; this.firstPage++) this.pages[this.firstPage] = undefined;
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
    if (page === level.pages.length) level.pages.push(new Uint8Array(DIGEST * NODES_PER_PAGE));
    level.pages[page]!.set(digest, DIGEST * (index & NODE_MASK));
    level.count++;
  }

  prune(loc: number, pinned: readonly PinnedNode[]): void {
    // Copies, so a pinned digest does not keep a freed page alive.
    this.pinned = new Map(pinned.map((n) => [MemoryNodeStore.pinKey(n.height, n.index), n.digest.slice()]));
    this.levels.forEach((level, height) => {
      // Nodes [0, below) of this height lie wholly under loc; free the pages they fill.
      const below = Math.floor(loc / 2 ** height);
      for (; level.firstPage < Math.floor(below / NODES_PER_PAGE); level.firstPage++) level.pages[level.firstPage] = undefined;
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
  return { log, nodes: new MemoryNodeStore(), bitmap: new ActivityBitmap(chunkBytes), index: new MemoryKeyIndex(log) };
}
