// A throwaway StateStore over committed state, for trying a block before producing it: writes go
// to an in-memory overlay (with the engine's nested checkpoints) and "commit" discards them. The
// devnet runs a candidate block here first to learn which transactions the engine accepts, and
// so which envelope nonces are right (src/chain/nonces.ts), without touching the real store.
import type { BlockBatch, CommitResult, IoCounts, StateAccess, StateStore } from "../kv/interface.js";
import type { StateReader } from "./chain-db.js";

const id = (key: Uint8Array): string => Buffer.from(key.buffer, key.byteOffset, key.byteLength).toString("latin1");

class OverlayBatch implements BlockBatch {
  observer: ((access: StateAccess) => void) | undefined = undefined;
  private reads = 0;
  private writes = 0;
  private readonly pending = new Map<string, Uint8Array | null>();
  private readonly journal: Array<[string, Uint8Array | null | undefined]> = [];
  private readonly marks: number[] = [];

  constructor(
    readonly height: bigint,
    private readonly base: StateReader,
  ) {}

  get counts(): IoCounts {
    return { reads: this.reads, writes: this.writes };
  }

  private current(key: Uint8Array): Uint8Array | undefined {
    const p = this.pending.get(id(key));
    return p === undefined ? this.base.read(key) : (p ?? undefined);
  }

  // The observer contract (state/kv/interface.ts): it sees the caller's own arrays and a fresh
  // copy of a write's previous value, as the real batch gives it.
  get(key: Uint8Array): Uint8Array | undefined {
    const value = this.current(key)?.slice();
    this.reads++;
    this.observer?.({ op: "read", key, value });
    return value;
  }

  getView(key: Uint8Array): Uint8Array | undefined {
    return this.get(key);
  }

  put(key: Uint8Array, value: Uint8Array): void {
    this.write(key, value.slice(), value);
  }

  delete(key: Uint8Array): void {
    this.write(key, null, undefined);
  }

  /** `value` is the overlay's own copy; `given` the caller's array (what the observer sees). */
  private write(key: Uint8Array, value: Uint8Array | null, given: Uint8Array | undefined): void {
    const before = this.current(key)?.slice();
    const k = id(key);
    // Outside every checkpoint nothing can be rolled back: no journal entry.
    if (this.marks.length > 0) this.journal.push([k, this.pending.get(k)]);
    this.pending.set(k, value);
    this.writes++;
    this.observer?.({ op: "write", key, before, after: given });
  }

  checkpoint(): number {
    this.marks.push(this.journal.length);
    return this.marks.length;
  }

  rollback(token: number): void {
    const mark = this.close(token);
    while (this.journal.length > mark) {
      const [k, previous] = this.journal.pop()!;
      if (previous === undefined) this.pending.delete(k);
      else this.pending.set(k, previous);
    }
  }

  release(token: number): void {
    const mark = this.close(token);
    if (this.marks.length === 0) this.journal.length = mark;
  }

  private close(token: number): number {
    if (token !== this.marks.length || token === 0) throw new Error(`checkpoint ${token} is not the innermost open checkpoint`);
    return this.marks.pop()!;
  }
}

/** Executes against `base` and keeps nothing; the root it reports is meaningless (all zeros). */
export class DryRunStore implements StateStore {
  constructor(private readonly base: StateReader) {}

  read(key: Uint8Array): Uint8Array | undefined {
    return this.base.read(key);
  }
  root(): Uint8Array {
    return new Uint8Array(32);
  }
  beginBlock(height: bigint): BlockBatch {
    return new OverlayBatch(height, this.base);
  }
  commitBlock(batch: BlockBatch): CommitResult {
    return { height: batch.height, stateRoot: new Uint8Array(32) };
  }
  entries(): Iterable<[Uint8Array, Uint8Array]> {
    throw new Error("a dry run does not list state");
  }
}
