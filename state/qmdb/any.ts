// QMDB "any" database, unordered keys (CIP-4 §5.1): an append-only operation log authenticated
// by an MMR, an index mapping each live key to the location of its latest Update, an activity
// bitmap, and an inactivity floor raised at every commit by moving the oldest active
// operations to the tip. Ported from commonware storage/src/qmdb/any/{db.rs,batch.rs,mod.rs}
// and qmdb/mod.rs at dc41a895f069 for the single-writer case (no speculative batch chains).
// All data lives in a QmdbStorage (state/qmdb/storage.ts); this file is only the algorithm.
import { compareBytes } from "../../src/bytes.js";
import type { Hasher } from "../../src/crypto/hash.js";
import { BytesMap } from "../bytes-map.js";
import { Mmr, inactivePeaks } from "../mmr.js";
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
  /** The appended operations, encoded. */
  ops: readonly Uint8Array[];
  floor: number;
}

/** A key whose index entry this batch changes. */
interface KeyMove {
  key: Uint8Array;
  /** New location of the key's Update; undefined when the batch deletes the key. */
  loc: number | undefined;
  /** Committed location this entry supersedes. */
  baseOld: number | undefined;
}

/**
 * The last write of each key. A state block's changes arrive sorted by key, each key once
 * (docs/state.md §3): then they are returned as they are.
 */
function lastWritePerKey(writes: readonly Write[]): readonly Write[] {
  let ascending = true;
  for (let i = 1; i < writes.length && ascending; i++) ascending = compareBytes(writes[i - 1]![0], writes[i]![0]) < 0;
  if (ascending) return writes;
  const slotOf = new BytesMap<number>(writes.length);
  const latest: Write[] = [];
  for (const write of writes) {
    const slot = slotOf.get(write[0]);
    if (slot === undefined) {
      slotOf.set(write[0], latest.length);
      latest.push(write);
    } else latest[slot] = write;
  }
  return latest;
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

  /** Every live key and value, keys in ascending byte order. */
  entries(): [Uint8Array, Uint8Array][] {
    const out: [Uint8Array, Uint8Array][] = [];
    const k = this.config.keyLength;
    for (const loc of this.index.locations()) {
      const bytes = this.log.read(loc);
      out.push([bytes.slice(1, 1 + k), this.config.codec.updateValue(bytes)]);
    }
    return out.sort((a, b) => compareBytes(a[0], b[0]));
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
   */
  applyBatch(writes: readonly Write[]): BatchTrace {
    const { codec, keyLength } = this.config;
    for (const write of writes) {
      if (write[0].length !== keyLength) throw new RangeError(`key must be ${keyLength} bytes, got ${write[0].length}`);
    }
    const latest = lastWritePerKey(writes);

    const existing: { loc: number; write: Write }[] = [];
    const creates: Write[] = [];
    for (const write of latest) {
      const loc = this.index.get(write[0]);
      if (loc !== undefined) existing.push({ loc, write });
      else if (write[1] !== undefined) creates.push(write);
    }

    const baseSize = this.log.size;
    const ops: Uint8Array[] = [];
    /** The KeyMove each appended Update belongs to (deletes: the deleting move). */
    const owners: KeyMove[] = [];
    const moves: KeyMove[] = [];
    const superseded = new Set<number>();
    let activeDelta = 0;
    const push = (op: Uint8Array, move: KeyMove): void => {
      ops.push(op);
      owners.push(move);
    };

    // Updates and deletes of live keys, in ascending order of their current location.
    existing.sort((a, b) => a.loc - b.loc);
    for (const { loc: oldLoc, write } of existing) {
      const [key, value] = write;
      superseded.add(oldLoc);
      if (value === undefined) {
        const move: KeyMove = { key, loc: undefined, baseOld: oldLoc };
        push(codec.encode({ kind: "delete", key }), move);
        moves.push(move);
        activeDelta--;
      } else {
        const move: KeyMove = { key, loc: baseSize + ops.length, baseOld: oldLoc };
        push(codec.encode({ kind: "update", key, value }), move);
        moves.push(move);
      }
    }

    // Creates of keys not live, in ascending key order.
    creates.sort((a, b) => compareBytes(a[0], b[0]));
    for (const [key, value] of creates) {
      const move: KeyMove = { key, loc: baseSize + ops.length, baseOld: undefined };
      push(codec.encode({ kind: "update", key, value: value! }), move);
      moves.push(move);
      activeDelta++;
    }

    const floor = this.raiseFloor(ops, owners, moves, superseded, baseSize, existing.length + 1, this.index.size + activeDelta);

    const commitLoc = baseSize + ops.length;
    ops.push(codec.encode({ kind: "commit", floor }));
    for (const op of ops) this.append(op);

    this.bitmap.extendTo(this.log.size);
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
    return { start: baseSize, ops, floor };
  }

  /**
   * Floor raise (any/batch.rs `finish`): scan from the floor for `steps` active operations and
   * re-append each at the tip. Candidates are committed locations whose bit is set and every
   * location of this batch's own user operations; the floor ends one past the last candidate
   * examined. With no live key left, the floor jumps to the commit location.
   */
  private raiseFloor(
    ops: Uint8Array[],
    owners: KeyMove[],
    moves: KeyMove[],
    superseded: ReadonlySet<number>,
    baseSize: number,
    steps: number,
    totalActive: number,
  ): number {
    if (totalActive < 0) throw new Error("active key count underflow");
    if (totalActive === 0) return baseSize + ops.length;
    const keyLength = this.config.keyLength;
    let floor = this.floorLoc;
    const fixedTip = baseSize + ops.length;
    let moved = 0;
    for (let loc = floor; loc < fixedTip && moved < steps; loc++) {
      if (loc < baseSize && !this.bitmap.get(loc)) continue;
      floor = loc + 1;
      if (superseded.has(loc)) continue;
      const newLoc = baseSize + ops.length;
      let op: Uint8Array;
      let move: KeyMove;
      if (loc < baseSize) {
        // A set bit on a committed location that this batch did not supersede: an active Update
        // of an untouched key (or the previous commit).
        op = this.log.read(loc);
        if (op[0] !== UPDATE_CONTEXT) continue;
        move = { key: op.subarray(1, 1 + keyLength), loc: newLoc, baseOld: loc };
        moves.push(move);
      } else {
        op = ops[loc - baseSize]!;
        move = owners[loc - baseSize]!;
        // Only the key's latest Update is active (an earlier one may already have been moved).
        if (op[0] !== UPDATE_CONTEXT || move.loc !== loc) continue;
        move.loc = newLoc;
      }
      ops.push(op);
      owners.push(move);
      moved++;
    }
    return floor;
  }

  private append(encoded: Uint8Array): void {
    this.log.append(encoded);
    this.mmr.append(encoded);
  }
}
