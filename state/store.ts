// In-memory CIP-4 state store: the committed key→value map plus the StateCommitment that
// yields `state_root` (§5.1), and per-block batches (§6.1 begin_batch → execute → commit_batch)
// with nested checkpoints so a rejected transaction is undone without touching the rest.
//
// Semantics (docs/state.md):
//  - every get is one read, every put/delete one write, counted when executed (a rollback
//    does not un-count), and reported to the observer in the same order;
//  - a batch commits only onto the state it began from, at a height above the last committed
//    one; a batch that is never committed is simply dropped (a rejected block);
//  - commit hands the commitment, sorted by key, the final value of every key the batch wrote
//    (deleting a key that was never there is no change and is left out).
import { compareBytes } from "../src/bytes.js";
import type { KeyChange, StateCommitment } from "./commitment.js";
import type { BlockBatch, CommitResult, IoCounts, StateAccess, StateStore } from "./interface.js";
import { checkStateKey } from "./keys.js";
import { keyId } from "./qmdb/any.js";
import { createStateCommitment } from "./qmdb/index.js";

export class StateStoreError extends Error {
  override name = "StateStoreError";
}

const U64_MAX = (1n << 64n) - 1n;

/** Map key of a state key (`keyId`: one char per byte). */
type KeyId = string;

type Pending = Uint8Array | null; // null = deleted in this batch

interface JournalEntry {
  key: KeyId;
  /** Pending state of `key` before this write; undefined = the batch had not written it. */
  previous: Pending | undefined;
}

const copy = (v: Uint8Array | undefined): Uint8Array | undefined => (v === undefined ? undefined : v.slice());

class MemoryBlockBatch implements BlockBatch {
  observer: ((access: StateAccess) => void) | undefined = undefined;
  private reads = 0;
  private writes = 0;
  /** key id → [key, pending value]; the key is kept to avoid decoding the id on commit. */
  private readonly pending = new Map<KeyId, [Uint8Array, Pending]>();
  private readonly journal: JournalEntry[] = [];
  /** Journal length at each open checkpoint; checkpoint token n is marks[n - 1]. */
  private readonly marks: number[] = [];

  constructor(
    readonly height: bigint,
    readonly baseVersion: number,
    readonly owner: MemoryStateStore,
  ) {}

  get counts(): IoCounts {
    return { reads: this.reads, writes: this.writes };
  }

  get openCheckpoints(): number {
    return this.marks.length;
  }

  private current(id: KeyId): Uint8Array | undefined {
    const p = this.pending.get(id);
    if (p !== undefined) return p[1] ?? undefined;
    return this.owner.committedById(id);
  }

  get(key: Uint8Array): Uint8Array | undefined {
    checkStateKey(key);
    const value = copy(this.current(keyId(key)));
    this.reads++;
    this.observer?.({ op: "read", key: key.slice(), value: copy(value) });
    return value;
  }

  put(key: Uint8Array, value: Uint8Array): void {
    this.write(key, value.slice());
  }

  delete(key: Uint8Array): void {
    this.write(key, null);
  }

  private write(key: Uint8Array, value: Pending): void {
    checkStateKey(key);
    const id = keyId(key);
    const before = this.current(id);
    if (this.marks.length > 0) this.journal.push({ key: id, previous: this.pending.get(id)?.[1] });
    this.pending.set(id, [key.slice(), value]);
    this.writes++;
    this.observer?.({ op: "write", key: key.slice(), before: copy(before), after: copy(value ?? undefined) });
  }

  checkpoint(): number {
    this.marks.push(this.journal.length);
    return this.marks.length;
  }

  /** Only the innermost open checkpoint may be closed (catches engine nesting bugs). */
  private close(token: number): number {
    if (token !== this.marks.length || token === 0) {
      throw new StateStoreError(`checkpoint ${token} is not the innermost open checkpoint (depth ${this.marks.length})`);
    }
    return this.marks.pop()!;
  }

  rollback(token: number): void {
    const mark = this.close(token);
    while (this.journal.length > mark) {
      const { key, previous } = this.journal.pop()!;
      if (previous === undefined) this.pending.delete(key);
      else this.pending.get(key)![1] = previous;
    }
  }

  release(token: number): void {
    const mark = this.close(token);
    // With no checkpoint left open nothing can roll these writes back: drop their journal.
    if (this.marks.length === 0) this.journal.length = mark;
  }

  /** Final values of the written keys, sorted by key, minus deletes of keys never committed. */
  netChanges(): KeyChange[] {
    const changes: KeyChange[] = [];
    for (const [id, [key, value]] of this.pending) {
      if (value === null && this.owner.committedById(id) === undefined) continue;
      changes.push([key, value ?? undefined]);
    }
    return changes.sort((a, b) => compareBytes(a[0], b[0]));
  }
}

export class MemoryStateStore implements StateStore {
  private readonly committed = new Map<KeyId, [Uint8Array, Uint8Array]>();
  private lastHeight: bigint | undefined = undefined;
  /** Bumped by every commit; a batch may only commit onto the version it began from. */
  private version = 0;

  /** `commitment` defaults to the Cowboy state_db: QMDB "current" with Blake3 (§5.1). */
  constructor(private readonly commitment: StateCommitment = createStateCommitment()) {}

  /**
   * A store whose state is `entries`, committed as one block at `height` (t8n/property tests
   * starting from an explicit pre-state). Its root is the commitment's root after that batch.
   */
  static fromEntries(
    entries: Iterable<readonly [Uint8Array, Uint8Array]>,
    height = 0n,
    commitment: StateCommitment = createStateCommitment(),
  ): MemoryStateStore {
    const store = new MemoryStateStore(commitment);
    const batch = store.beginBlock(height);
    for (const [key, value] of entries) batch.put(key, value);
    store.commitBlock(batch);
    return store;
  }

  /** Height of the last committed block, if any. */
  get height(): bigint | undefined {
    return this.lastHeight;
  }

  committedById(id: KeyId): Uint8Array | undefined {
    return this.committed.get(id)?.[1];
  }

  read(key: Uint8Array): Uint8Array | undefined {
    checkStateKey(key);
    return copy(this.committedById(keyId(key)));
  }

  root(): Uint8Array {
    return this.commitment.root();
  }

  beginBlock(height: bigint): BlockBatch {
    this.checkHeight(height);
    return new MemoryBlockBatch(height, this.version, this);
  }

  private checkHeight(height: bigint): void {
    if (typeof height !== "bigint" || height < 0n || height > U64_MAX) {
      throw new StateStoreError(`block height ${String(height)} is not a u64`);
    }
    if (this.lastHeight !== undefined && height <= this.lastHeight) {
      throw new StateStoreError(`block height ${height} does not exceed the last committed height ${this.lastHeight}`);
    }
  }

  commitBlock(batch: BlockBatch): CommitResult {
    if (!(batch instanceof MemoryBlockBatch) || batch.owner !== this) {
      throw new StateStoreError("batch was not begun by this store");
    }
    if (batch.baseVersion !== this.version) throw new StateStoreError("batch is stale: another block was committed since it began");
    if (batch.openCheckpoints !== 0) throw new StateStoreError(`batch has ${batch.openCheckpoints} open checkpoint(s)`);
    this.checkHeight(batch.height);
    const changes = batch.netChanges();
    const stateRoot = this.commitment.commitBatch(changes);
    for (const [key, value] of changes) {
      const id = keyId(key);
      if (value === undefined) this.committed.delete(id);
      else this.committed.set(id, [key, value]);
    }
    this.version++;
    this.lastHeight = batch.height;
    return { height: batch.height, stateRoot };
  }

  *entries(): Iterable<[Uint8Array, Uint8Array]> {
    const sorted = [...this.committed.values()].sort((a, b) => compareBytes(a[0], b[0]));
    for (const [key, value] of sorted) yield [key.slice(), value.slice()];
  }
}
