// QMDB "any" database, unordered keys (CIP-4 §5.1): an append-only operation log authenticated
// by an MMR, a snapshot mapping each live key to the location of its latest Update, an activity
// bitmap, and an inactivity floor raised at every commit by moving the oldest active
// operations to the tip. Ported from commonware storage/src/qmdb/any/{db.rs,batch.rs,mod.rs}
// and qmdb/mod.rs at dc41a895f069 for the single-writer case (no speculative batch chains).
import { compareBytes } from "../../src/bytes.js";
import type { Hasher } from "../../src/crypto/hash.js";
import { Mmr, inactivePeaks } from "../mmr.js";
import { ActivityBitmap } from "./bitmap.js";
import type { Operation, OperationCodec } from "./operation.js";

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
  ops: readonly Operation[];
  floor: number;
}

interface DiffEntry {
  key: Uint8Array;
  /** New location of the key's Update; undefined when the batch deletes the key. */
  loc: number | undefined;
  /** Committed location this entry supersedes. */
  baseOld: number | undefined;
}

/**
 * Map key of a byte key: one UTF-16 code unit per byte, so distinct keys give distinct ids.
 * Built on every state access, and measured ~3x cheaper than hex. Keys are short (54 bytes),
 * far below the argument-count limit of `apply`.
 */
export const keyId = (key: Uint8Array): string => String.fromCharCode.apply(null, key as unknown as number[]);

export class AnyDb {
  readonly mmr: Mmr;
  readonly bitmap: ActivityBitmap;
  private readonly log: Operation[] = [];
  private readonly snapshot = new Map<string, number>();
  private floorLoc = 0;
  private lastCommitLoc = 0;
  private liveKeys = 0;

  constructor(readonly config: QmdbConfig) {
    this.mmr = new Mmr(config.hasher);
    this.bitmap = new ActivityBitmap(config.chunkBytes);
    // A fresh database starts with CommitFloor(None, 0) (any/mod.rs `init_with_bitmap`), the
    // last commit carrying bit 1.
    this.append({ kind: "commit", floor: 0 });
    this.bitmap.extendTo(1);
    this.bitmap.set(0, true);
  }

  get size(): number {
    return this.log.length;
  }

  get inactivityFloor(): number {
    return this.floorLoc;
  }

  get lastCommit(): number {
    return this.lastCommitLoc;
  }

  get activeKeys(): number {
    return this.liveKeys;
  }

  operation(loc: number): Operation {
    const op = this.log[loc];
    if (op === undefined) throw new RangeError(`location ${loc} beyond log size ${this.log.length}`);
    return op;
  }

  encodedOperation(loc: number): Uint8Array {
    return this.config.codec.encode(this.operation(loc));
  }

  /** Location of the key's active Update, if the key is live. */
  locationOf(key: Uint8Array): number | undefined {
    return this.snapshot.get(keyId(key));
  }

  get(key: Uint8Array): Uint8Array | undefined {
    const loc = this.locationOf(key);
    if (loc === undefined) return undefined;
    const op = this.log[loc]!;
    if (op.kind !== "update") throw new Error(`snapshot points at a non-update operation at ${loc}`);
    return op.value;
  }

  /** Root of the operation log: backward bagging with the inactive peaks below the floor. */
  root(): Uint8Array {
    return this.mmr.root("backward", inactivePeaks(this.mmr.leaves, this.floorLoc));
  }

  /**
   * Applies one batch and commits it (commonware `merkleize` + `apply_batch`). When a key is
   * written several times the last write wins; deleting an absent key writes nothing.
   */
  applyBatch(writes: readonly Write[]): BatchTrace {
    const mutations = new Map<string, Write>();
    for (const write of writes) {
      if (write[0].length !== this.config.keyLength) {
        throw new RangeError(`key must be ${this.config.keyLength} bytes, got ${write[0].length}`);
      }
      mutations.set(keyId(write[0]), write);
    }

    const baseSize = this.log.length;
    const ops: Operation[] = [];
    const diff = new Map<string, DiffEntry>();
    const superseded = new Set<number>();
    let userSteps = 0;
    let activeDelta = 0;

    // Updates and deletes of live keys, in ascending order of their current location.
    const existing: number[] = [];
    for (const id of mutations.keys()) {
      const loc = this.snapshot.get(id);
      if (loc !== undefined) existing.push(loc);
    }
    existing.sort((a, b) => a - b);
    for (const oldLoc of existing) {
      const op = this.log[oldLoc]!;
      if (op.kind !== "update") throw new Error(`snapshot points at a non-update operation at ${oldLoc}`);
      const id = keyId(op.key);
      const [, value] = mutations.get(id)!;
      mutations.delete(id);
      superseded.add(oldLoc);
      if (value === undefined) {
        ops.push({ kind: "delete", key: op.key });
        diff.set(id, { key: op.key, loc: undefined, baseOld: oldLoc });
        activeDelta--;
      } else {
        diff.set(id, { key: op.key, loc: baseSize + ops.length, baseOld: oldLoc });
        ops.push({ kind: "update", key: op.key, value });
      }
      userSteps++;
    }

    // Creates of keys not live, in ascending key order.
    const creates = [...mutations.values()].filter((w): w is readonly [Uint8Array, Uint8Array] => w[1] !== undefined);
    creates.sort((a, b) => compareBytes(a[0], b[0]));
    for (const [key, value] of creates) {
      diff.set(keyId(key), { key, loc: baseSize + ops.length, baseOld: undefined });
      ops.push({ kind: "update", key, value });
      activeDelta++;
    }

    const floor = this.raiseFloor(ops, diff, superseded, baseSize, userSteps + 1, this.liveKeys + activeDelta);

    const commitLoc = baseSize + ops.length;
    ops.push({ kind: "commit", floor });
    for (const op of ops) this.append(op);

    this.bitmap.extendTo(this.log.length);
    for (const [id, entry] of diff) {
      if (entry.loc === undefined) this.snapshot.delete(id);
      else {
        this.snapshot.set(id, entry.loc);
        this.bitmap.set(entry.loc, true);
      }
      if (entry.baseOld !== undefined) this.bitmap.set(entry.baseOld, false);
    }
    // Only the latest commit carries bit 1.
    this.bitmap.set(this.lastCommitLoc, false);
    this.bitmap.set(commitLoc, true);

    this.liveKeys += activeDelta;
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
    ops: Operation[],
    diff: Map<string, DiffEntry>,
    superseded: ReadonlySet<number>,
    baseSize: number,
    steps: number,
    totalActive: number,
  ): number {
    if (totalActive < 0) throw new Error("active key count underflow");
    if (totalActive === 0) return baseSize + ops.length;
    let floor = this.floorLoc;
    const fixedTip = baseSize + ops.length;
    let moved = 0;
    for (let loc = floor; loc < fixedTip && moved < steps; loc++) {
      if (loc < baseSize && !this.bitmap.get(loc)) continue;
      floor = loc + 1;
      if (superseded.has(loc)) continue;
      const op = loc < baseSize ? this.log[loc]! : ops[loc - baseSize]!;
      if (op.kind !== "update") continue;
      const id = keyId(op.key);
      const entry = diff.get(id);
      const newLoc = baseSize + ops.length;
      if (entry !== undefined) {
        if (entry.loc !== loc) continue;
        entry.loc = newLoc;
      } else {
        if (this.snapshot.get(id) !== loc) continue;
        diff.set(id, { key: op.key, loc: newLoc, baseOld: loc });
      }
      ops.push(op);
      moved++;
    }
    return floor;
  }

  private append(op: Operation): void {
    this.log.push(op);
    this.mmr.append(this.config.codec.encode(op));
  }
}
