// QMDB "any" database, unordered keys (CIP-4 §5.1): an append-only operation log authenticated
// by an MMR, an index mapping each live key to the location of its latest Update, an activity
// bitmap, and an inactivity floor raised at every commit by moving the oldest active
// operations to the tip. Ported from commonware storage/src/qmdb/any/{db.rs,batch.rs,mod.rs}
// and qmdb/mod.rs at dc41a895f069 for the single-writer case (no speculative batch chains).
// All data lives in a QmdbStorage (state/qmdb/storage.ts); this file is only the algorithm.
import { compareBytes } from "../../src/bytes.js";
import type { Hasher } from "../../src/crypto/hash.js";
import { BytesMap } from "../kv/bytes-map.js";
import { Mmr, inactivePeaks } from "./mmr.js";
import { memoryStorage } from "./memory.js";
import { UPDATE_CONTEXT, type Operation, type OperationCodec } from "./operation.js";
import type { BitmapStore, KeyIndex, OperationLog, QmdbStorage } from "./storage.js";

/** One keyed write of a batch: value undefined deletes the key. */
export type Write = readonly [key: Uint8Array, value: Uint8Array | undefined];

export interface QmdbConfig {
  hasher: Hasher;
  codec: OperationCodec;
  /** Activity bitmap chunk size in bytes (commonware `N`; 32 for Cowboy and the conformance). */
  chunkBytes: number;
  /** Fixed key length, checked on every write. */
  keyLength: number;
}

/** What one batch appended, for tracing and debugging. */
export interface BatchTrace {
  /** Location of the first appended operation. */
  start: number;
  /** Number of operations appended (the commit included). */
  count: number;
  floor: number;
}

/** A key whose index entry this batch changes. */
interface KeyMove {
  key: Uint8Array;
  /** New location of the key's Update; undefined when the batch deletes the key. */
  loc: number | undefined;
  /** Location this entry supersedes (committed, or a create of this batch moved by the floor raise). */
  baseOld: number | undefined;
}

/**
 * The batch's writes in ascending key order, each key once. A block's changes arrive that way
 * (docs/spec/state.md §3) and are returned as they are; any other array is reduced to the last write
 * of each key and sorted. A non-array iterable must already be ascending (checked while it is
 * read) and iterable more than once: a large pre-state is read twice rather than held as a list.
 */
function sortedWrites(writes: Iterable<Write>): Iterable<Write> {
  if (!Array.isArray(writes)) return writes;
  let ascending = true;
  for (let i = 1; i < writes.length && ascending; i++) ascending = compareBytes(writes[i - 1]![0], writes[i]![0]) < 0;
  if (ascending) return writes;
  const slotOf = new BytesMap<number>(writes.length);
  const latest: Write[] = [];
  for (const write of writes as readonly Write[]) {
    const slot = slotOf.get(write[0]);
    if (slot === undefined) {
      slotOf.set(write[0], latest.length);
      latest.push(write);
    } else latest[slot] = write;
  }
  return latest.sort((a, b) => compareBytes(a[0], b[0]));
}

export class AnyDb {
  readonly mmr: Mmr;
  readonly bitmap: BitmapStore;
  private readonly log: OperationLog;
  private readonly index: KeyIndex;
  private floorLoc = 0;
  private lastCommitLoc = 0;

  constructor(
    readonly config: QmdbConfig,
    readonly storage: QmdbStorage = memoryStorage(config.chunkBytes),
  ) {
    if (config.codec.keyLength !== config.keyLength) throw new RangeError("codec and database disagree on the key length");
    this.log = storage.log;
    this.index = storage.index;
    this.bitmap = storage.bitmap;
    this.mmr = new Mmr(config.hasher, storage.nodes, { source: this.log, leaves: this.log.size, prunedBelow: this.log.prunedBelow });
    if (this.log.size === 0) {
      // A fresh database starts with CommitFloor(None, 0) (any/mod.rs `init_with_bitmap`), the
      // last commit carrying bit 1.
      this.append(config.codec.encode({ kind: "commit", floor: 0 }));
      this.bitmap.extendTo(1);
      this.bitmap.set(0, true);
    } else {
      // Reopening: the last operation is always the last commit, and it records the floor.
      const last = config.codec.decode(this.log.read(this.log.size - 1));
      if (last.kind !== "commit" || this.mmr.leaves !== this.log.size) throw new Error("storage does not end with a commit");
      this.floorLoc = last.floor;
      this.lastCommitLoc = this.log.size - 1;
    }
  }

  get size(): number {
    return this.log.size;
  }

  get inactivityFloor(): number {
    return this.floorLoc;
  }

  get lastCommit(): number {
    return this.lastCommitLoc;
  }

  get activeKeys(): number {
    return this.index.size;
  }

  operation(loc: number): Operation {
    return this.config.codec.decode(this.log.read(loc));
  }

  /** The encoding of the operation at `loc` (a copy). */
  encodedOperation(loc: number): Uint8Array {
    return new Uint8Array(this.log.read(loc));
  }

  /** Location of the key's active Update, if the key is live. */
  locationOf(key: Uint8Array): number | undefined {
    return this.index.get(key);
  }

  get(key: Uint8Array): Uint8Array | undefined {
    const loc = this.index.get(key);
    if (loc === undefined) return undefined;
    const bytes = this.log.read(loc);
    if (bytes[0] !== UPDATE_CONTEXT) throw new Error(`index points at a non-update operation at ${loc}`);
    return this.config.codec.updateValue(bytes);
  }

  /**
   * Every live key and value, keys in ascending byte order, read lazily: the keys are sorted in
   * one packed buffer and each value is read from the log as it is reached, so a million-key
   * state is written out without a list of a million entries. The iteration must end before the
   * next batch (it throws if one was applied meanwhile). Keys are views into the sort buffer.
   */
  *entries(): Generator<[Uint8Array, Uint8Array]> {
    const k = this.config.keyLength;
    const size = this.log.size;
    const count = this.index.size;
    const locs = new Uint32Array(count);
    const keys = new Uint8Array(count * k);
    let n = 0;
    for (const loc of this.index.locations()) {
      if (n === count) throw new Error("key index holds more locations than its size");
      locs[n] = loc;
      keys.set(this.log.read(loc).subarray(1, 1 + k), n * k);
      n++;
    }
    if (n !== count) throw new Error("key index holds fewer locations than its size");
    const order = new Uint32Array(count);
    for (let i = 0; i < count; i++) order[i] = i;
    order.sort((a, b) => {
      const x = a * k;
      const y = b * k;
      for (let i = 0; i < k; i++) {
        const d = keys[x + i]! - keys[y + i]!;
        if (d !== 0) return d;
      }
      return 0;
    });
    for (const i of order) {
      if (this.log.size !== size) throw new Error("a batch was applied while the state's entries were being read");
      yield [keys.subarray(i * k, (i + 1) * k), this.config.codec.updateValue(this.log.read(locs[i]!))];
    }
  }

  /** Root of the operation log: backward bagging with the inactive peaks below the floor. */
  root(): Uint8Array {
    return this.mmr.root("backward", inactivePeaks(this.mmr.leaves, this.floorLoc));
  }

  /**
   * Drops the operations and MMR nodes below the inactivity floor (commonware `prune`). Roots do
   * not change; operations below the floor can no longer be read or proven.
   */
  prune(): void {
    this.mmr.prune(this.floorLoc); // reads elements below the floor for its pinned peaks
    this.log.prune(this.floorLoc);
  }

  /**
   * Applies one batch and commits it (commonware `merkleize` + `apply_batch`). When a key is
   * written several times the last write wins; deleting an absent key writes nothing.
   *
   * Operations go to the log (and the MMR) as they are encoded, never collected: a batch of a
   * million creates (a t8n pre-state) then costs no more than its operations in the log. The
   * order is commonware's: updates and deletes of live keys by their current location, creates
   * by key, the floor raise's moves, the commit.
   */
  applyBatch(writes: Iterable<Write>): BatchTrace {
    const { codec, keyLength } = this.config;
    const sorted = sortedWrites(writes);

    // Pass 1: which keys are live (the index is not changed before pass 2 ends).
    const existing: { loc: number; write: Write }[] = [];
    let creates = 0;
    let previous: Uint8Array | undefined;
    for (const write of sorted) {
      const key = write[0];
      if (key.length !== keyLength) throw new RangeError(`key must be ${keyLength} bytes, got ${key.length}`);
      if (previous !== undefined && compareBytes(previous, key) >= 0) throw new RangeError("batch keys must be strictly ascending");
      previous = key;
      const loc = this.index.get(key);
      if (loc !== undefined) existing.push({ loc, write });
      else if (write[1] !== undefined) creates++;
    }

    const baseSize = this.log.size;
    /** The KeyMove of each operation appended for a live key (deletes: the deleting move). */
    const owners: KeyMove[] = [];
    const moves: KeyMove[] = [];
    const superseded = new Set<number>();
    let deletes = 0;

    // Updates and deletes of live keys, in ascending order of their current location.
    existing.sort((a, b) => a.loc - b.loc);
    for (const { loc: oldLoc, write } of existing) {
      const [key, value] = write;
      superseded.add(oldLoc);
      const move: KeyMove = { key, loc: value === undefined ? undefined : this.log.size, baseOld: oldLoc };
      this.append(value === undefined ? codec.encode({ kind: "delete", key }) : codec.encode({ kind: "update", key, value }));
      owners.push(move);
      moves.push(move);
      if (value === undefined) deletes++;
    }

    // Pass 2: creates of keys not live, in ascending key order, indexed as they are appended.
    const createStart = this.log.size;
    for (const [key, value] of sorted) {
      if (value === undefined || this.index.get(key) !== undefined) continue;
      const loc = this.log.size;
      this.append(codec.encode({ kind: "update", key, value }));
      this.index.set(key, loc);
    }
    const createEnd = this.log.size;
    if (createEnd - createStart !== creates) throw new Error(`batch changed between its two passes: ${creates} creates, then ${createEnd - createStart}`);

    const floor = this.raiseFloor(owners, moves, superseded, baseSize, createStart, existing.length + 1, this.index.size - deletes);

    const commitLoc = this.log.size;
    this.append(codec.encode({ kind: "commit", floor }));

    this.bitmap.extendTo(this.log.size);
    for (let loc = createStart; loc < createEnd; loc++) this.bitmap.set(loc, true);
    for (const move of moves) {
      if (move.loc === undefined) this.index.delete(move.key);
      else {
        this.index.set(move.key, move.loc);
        this.bitmap.set(move.loc, true);
      }
      if (move.baseOld !== undefined) this.bitmap.set(move.baseOld, false);
    }
    // Only the latest commit carries bit 1.
    this.bitmap.set(this.lastCommitLoc, false);
    this.bitmap.set(commitLoc, true);

    this.floorLoc = floor;
    this.lastCommitLoc = commitLoc;
    return { start: baseSize, count: this.log.size - baseSize, floor };
  }

  /**
   * Floor raise (any/batch.rs `finish`): scan from the floor for `steps` active operations and
   * re-append each at the tip. Candidates are committed locations whose bit is set and every
   * location of this batch's own user operations; the floor ends one past the last candidate
   * examined. With no live key left, the floor jumps to the commit location.
   */
  private raiseFloor(
    owners: KeyMove[],
    moves: KeyMove[],
    superseded: ReadonlySet<number>,
    baseSize: number,
    createStart: number,
    steps: number,
    totalActive: number,
  ): number {
    if (totalActive < 0) throw new Error("active key count underflow");
    const fixedTip = this.log.size;
    if (totalActive === 0) return fixedTip;
    const keyLength = this.config.keyLength;
    let floor = this.floorLoc;
    let moved = 0;
    for (let loc = floor; loc < fixedTip && moved < steps; loc++) {
      if (loc < baseSize && !this.bitmap.get(loc)) continue;
      floor = loc + 1;
      if (superseded.has(loc)) continue;
      const newLoc = this.log.size;
      const held = this.log.read(loc);
      if (held[0] !== UPDATE_CONTEXT) continue;
      // A copy: the log grows while the operation is re-appended.
      const op = new Uint8Array(held);
      if (loc >= baseSize && loc < createStart) {
        // An update of a live key appended by this batch (its deletes were skipped above).
        const move = owners[loc - baseSize]!;
        if (move.loc !== loc) continue;
        move.loc = newLoc;
      } else {
        // A set bit on a committed location that this batch did not supersede (an active Update
        // of an untouched key; the previous commit was skipped above), or a create of this batch.
        moves.push({ key: op.subarray(1, 1 + keyLength), loc: newLoc, baseOld: loc });
      }
      this.append(op);
      moved++;
    }
    return floor;
  }

  private append(encoded: Uint8Array): void {
    this.log.append(encoded);
    this.mmr.append(encoded);
  }
}
