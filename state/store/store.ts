// In-memory CIP-4 state store: the StateCommitment that holds the committed state and yields
// `state_root` (§5.1), and per-block batches (§6.1 begin_batch → execute → commit_batch)
// with nested checkpoints so a rejected transaction is undone without touching the rest.
//
// Semantics (docs/spec/state.md):
//  - every get is one read, every put/delete one write, counted when executed (a rollback
//    does not un-count), and reported to the observer in the same order;
//  - a batch commits only onto the state it began from, at a height above the last committed
//    one; a batch that is never committed is simply dropped (a rejected block);
//  - commit hands the commitment, sorted by key, the final value of every key the batch wrote
//    (deleting a key that was never there is no change and is left out).
import { compareBytes } from "../../src/bytes.js";
import { BytesMap } from "../kv/bytes-map.js";
import type { KeyChange, StateCommitment } from "../kv/commitment.js";
import type { BlockBatch, CommitResult, IoCounts, StateAccess, StateStore } from "../kv/interface.js";
import { checkStateKey } from "../kv/keys.js";
import { createStateCommitment } from "../qmdb/index.js";
import { finish, type Steps } from "../../src/steps.js";
import { count } from "../../src/format.js";

/** Entries taken between two units of fromEntriesSteps. */
const FROM_ENTRIES_UNIT = 4096;

export class StateStoreError extends Error {
  override name = "StateStoreError";
}

const U64_MAX = (1n << 64n) - 1n;

/**
 * A key this batch has read or written: its bytes (a private copy) and its value in the batch
 * (null = absent). Committed values are cached here on first read: the committed state cannot
 * change under an open batch (a batch only commits onto the version it began from), so later
 * reads of the key cost one table lookup.
 */
interface Entry {
  readonly key: Uint8Array;
  value: Uint8Array | null;
  /** The batch wrote the key: a net change candidate. */
  written: boolean;
}

interface JournalEntry {
  entry: Entry;
  /** The entry's state before this write; undefined = the batch had not seen the key. */
  previous: { value: Uint8Array | null; written: boolean } | undefined;
}

// `new Uint8Array(v)` copies a whole array about twice as fast as `v.slice()` (no species lookup): these run on every state access.
const copy = (v: Uint8Array | undefined): Uint8Array | undefined => (v === undefined ? undefined : new Uint8Array(v));

class MemoryBlockBatch implements BlockBatch {
  observer: ((access: StateAccess) => void) | undefined = undefined;
  private reads = 0;
  private writes = 0;
  private readonly seen = new BytesMap<Entry>(64);
  private readonly journal: JournalEntry[] = [];
  /** Journal length at each open checkpoint; checkpoint token n is marks[n - 1]. */
  private readonly marks: number[] = [];

  constructor(
    readonly height: bigint,
    readonly baseVersion: number,
    readonly owner: MemoryStateStore,
    private readonly committed: StateCommitment,
  ) {}

  get counts(): IoCounts {
    return { reads: this.reads, writes: this.writes };
  }

  get openCheckpoints(): number {
    return this.marks.length;
  }

  get(key: Uint8Array): Uint8Array | undefined {
    return copy(this.getView(key));
  }

  // Values in `seen` are never modified in place (a write replaces the array), so the view stays
  // what it was when read. The observer sees the same array (it must not modify it either).
  getView(key: Uint8Array): Uint8Array | undefined {
    checkStateKey(key);
    let entry = this.seen.get(key);
    if (entry === undefined) {
      entry = { key: new Uint8Array(key), value: (this.committed.view !== undefined ? this.committed.view(key) : this.committed.get(key)) ?? null, written: false };
      this.seen.set(entry.key, entry);
    }
    const value = entry.value ?? undefined;
    this.reads++;
    this.observer?.({ op: "read", key, value });
    return value;
  }

  put(key: Uint8Array, value: Uint8Array): void {
    // new Uint8Array(x) would also accept undefined, null or a number (an empty or zero-filled value).
    if (!(value instanceof Uint8Array)) throw new TypeError("a state value must be a Uint8Array");
    this.write(key, new Uint8Array(value), value);
  }

  delete(key: Uint8Array): void {
    this.write(key, null, undefined);
  }

  /** `value` is the batch's own copy; `given` the caller's array (what the observer sees). */
  private write(key: Uint8Array, value: Uint8Array | null, given: Uint8Array | undefined): void {
    checkStateKey(key);
    const observer = this.observer;
    let entry = this.seen.get(key);
    const previous = entry === undefined ? undefined : { value: entry.value, written: entry.written };
    const before = observer === undefined ? undefined : entry === undefined ? this.committed.get(key) : copy(entry.value ?? undefined);
    if (entry === undefined) {
      entry = { key: new Uint8Array(key), value, written: true };
      this.seen.set(entry.key, entry);
    } else {
      entry.value = value;
      entry.written = true;
    }
    if (this.marks.length > 0) this.journal.push({ entry, previous });
    this.writes++;
    observer?.({ op: "write", key, before, after: given });
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
      const { entry, previous } = this.journal.pop()!;
      if (previous === undefined) this.seen.delete(entry.key);
      else {
        entry.value = previous.value;
        entry.written = previous.written;
      }
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
    this.seen.forEachValue((entry) => {
      if (!entry.written) return;
      if (entry.value === null && this.committed.get(entry.key) === undefined) return;
      changes.push([entry.key, entry.value ?? undefined]);
    });
    return changes.sort((a, b) => compareBytes(a[0], b[0]));
  }
}

/** The last change of each key, sorted by key (a batch's net changes when every write is a put). */
/** An iterator that is its own iterable (a generator): it can be read only once. */
const isOneShot = (entries: Iterable<unknown>): boolean => (entries as { [Symbol.iterator]: () => unknown })[Symbol.iterator]() === entries;

function lastPerKeySorted(changes: KeyChange[]): KeyChange[] {
  const last = new BytesMap<KeyChange>(changes.length);
  for (const change of changes) last.set(change[0], change);
  return [...last.entries()].map(([, change]) => change).sort((a, b) => compareBytes(a[0], b[0]));
}

export class MemoryStateStore implements StateStore {
  private lastHeight: bigint | undefined = undefined;
  /** Bumped by every commit; a batch may only commit onto the version it began from. */
  private version = 0;

  /**
   * `commitment` holds the committed state and gives its root; it defaults to the Cowboy
   * state_db: QMDB "current" with Blake3 (§5.1).
   */
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
    return finish(MemoryStateStore.fromEntriesSteps(entries, height, commitment));
  }

  /**
   * fromEntries unit by unit (src/steps.ts): a unit is FROM_ENTRIES_UNIT entries checked, the
   * commit is the last; `onCount` sees the entries checked so far.
   *
   * The batch goes to the commitment directly, as the net changes a block batch would hand it
   * (sorted by key, the last value of a key wins), without a batch's private copy of every key
   * and value. When the entries are already ascending and `entries` can be iterated again (an
   * array, a dump's entry list: anything but a one-shot iterator), the commitment reads them a
   * second time instead of this function holding them as a list: for a 1.25 M-entry pre-state
   * that list was a third of the peak memory (docs/engineering/performance.md "Large inputs and outputs").
   * So the arrays `entries` yields are handed to the commitment, not copied: they must stay
   * unchanged afterwards (StateCommitment.commitBatch; a dump's entries are views into its pools,
   * never reused, and the QMDB commitment copies what it keeps).
   */
  static *fromEntriesSteps(
    entries: Iterable<readonly [Uint8Array, Uint8Array]>,
    height = 0n,
    commitment: StateCommitment = createStateCommitment(),
    onCount?: (entries: number) => void,
  ): Steps<MemoryStateStore> {
    const store = new MemoryStateStore(commitment);
    store.checkHeight(height);
    const reiterable = !isOneShot(entries);
    /** The entries, held only when the source cannot be read again. */
    const held: KeyChange[] = [];
    let count = 0;
    let ascending = true;
    let previous: Uint8Array | undefined;
    for (const entry of entries) {
      const key = entry[0];
      checkStateKey(key);
      if (ascending && previous !== undefined && compareBytes(previous, key) >= 0) ascending = false;
      previous = key;
      if (!reiterable) held.push(entry);
      count++;
      if (count % FROM_ENTRIES_UNIT === 0) {
        onCount?.(count);
        yield;
      }
    }
    onCount?.(count);
    yield;
    const changes: Iterable<KeyChange> = reiterable ? entries : held;
    store.commitment.commitBatch(ascending ? changes : lastPerKeySorted([...changes]));
    store.version++;
    store.lastHeight = height;
    return store;
  }

  /** Height of the last committed block, if any. */
  get height(): bigint | undefined {
    return this.lastHeight;
  }

  read(key: Uint8Array): Uint8Array | undefined {
    checkStateKey(key);
    return this.commitment.get(key);
  }

  root(): Uint8Array {
    return this.commitment.root();
  }

  beginBlock(height: bigint): BlockBatch {
    this.checkHeight(height);
    return new MemoryBlockBatch(height, this.version, this, this.commitment);
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
    if (batch.openCheckpoints !== 0) throw new StateStoreError(`batch has ${count(batch.openCheckpoints, "open checkpoint")}`);
    this.checkHeight(batch.height);
    const stateRoot = this.commitment.commitBatch(batch.netChanges());
    this.version++;
    this.lastHeight = batch.height;
    return { height: batch.height, stateRoot };
  }

  entries(): Iterable<[Uint8Array, Uint8Array]> {
    return this.commitment.entries();
  }
}
