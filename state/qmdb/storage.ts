// Where a QMDB keeps its data. The algorithms (state/qmdb/mmr.ts, any.ts, current.ts) run over these
// four small interfaces and never see how bytes are held, so a persistent backend implements
// them once and reuses the one QMDB algorithm:
//   - the operation log: every operation's encoding by location (values live here, in the
//     Update operations; nothing else holds them);
//   - the MMR node digests (of the heights the MMR chooses to keep);
//   - the activity bitmap;
//   - the key index: live key → location of its active Update.
// Everything strictly below the inactivity floor may be pruned (commonware `prune`): no root or
// proof this emulator builds reads an operation there, and the MMR keeps the few digests
// ("pinned nodes") that still stand for a pruned region.
//
// Views returned by `read`/`node` are read-only and must not be modified by callers.

export interface OperationLog {
  /** Number of operations ever appended (the next location). */
  readonly size: number;
  /** First location still held; `read` below it throws. */
  readonly prunedBelow: number;
  append(encoded: Uint8Array): void;
  /** The encoding of the operation at `loc`. */
  read(loc: number): Uint8Array;
  /** True when bytes [offset, offset + part.length) of the operation at `loc` equal `part`. */
  matches(loc: number, offset: number, part: Uint8Array): boolean;
  /** Drops every operation below `loc` (never raises past `size`). */
  prune(loc: number): void;
}

/**
 * MMR node digests, addressed by (height, index): node (h, i) covers leaves
 * [i·2^h, (i+1)·2^h). The MMR decides which heights it stores (state/qmdb/mmr.ts); the store keeps
 * what it is given.
 */
export interface NodeStore {
  /** The digest of node (height, index), or undefined when not held. */
  get(height: number, index: number): Uint8Array | undefined;
  /** Stores a digest (copied); the nodes of one height arrive in increasing index order. */
  put(height: number, index: number, digest: Uint8Array): void;
  /**
   * Drops every node whose leaves all lie below location `loc`, except `pinned`, which replace
   * the previously pinned nodes.
   */
  prune(loc: number, pinned: readonly PinnedNode[]): void;
}

export interface PinnedNode {
  readonly height: number;
  readonly index: number;
  readonly digest: Uint8Array;
}

export interface BitmapStore {
  readonly length: number;
  readonly chunkBytes: number;
  /** chunkBytes · 8. */
  readonly chunkBits: number;
  /** Appends zero bits until the bitmap holds `length` bits. */
  extendTo(length: number): void;
  get(bit: number): boolean;
  set(bit: number, value: boolean): void;
  /** Copy of chunk `index` (bits at and beyond `length` are zero). */
  chunk(index: number): Uint8Array;
  /** Indices of the chunks changed since the previous call (cache invalidation). */
  takeChangedChunks(): Iterable<number>;
}

export interface KeyIndex {
  readonly size: number;
  get(key: Uint8Array): number | undefined;
  set(key: Uint8Array, loc: number): void;
  delete(key: Uint8Array): void;
  /** Every indexed location, in no particular order. */
  locations(): Iterable<number>;
}

export interface QmdbStorage {
  readonly log: OperationLog;
  readonly nodes: NodeStore;
  readonly bitmap: BitmapStore;
  readonly index: KeyIndex;
}
