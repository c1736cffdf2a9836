// A StateStore wrapper that sees exactly what the CBQS meter sees: it tees the batch observer the
// engine installs around a CBQS handler (§18.1 "counted at the state interface"), so the gas
// tooling measures reads, writes and written bytes independently of the Meter's own counters.
// An optional `amplify` hook lets a test make the state interface misbehave (e.g. a handler
// forced over its reservation) without touching engine code.
import type { BlockBatch, CommitResult, IoCounts, StateAccess, StateStore } from "../../state/interface.js";

export class ObservingStore implements StateStore {
  /** Every access made while the engine's meter observer was installed, in order. */
  metered: StateAccess[] = [];

  constructor(
    private readonly inner: StateStore,
    private readonly amplify?: (batch: BlockBatch, key: Uint8Array) => void,
  ) {}

  read(key: Uint8Array): Uint8Array | undefined {
    return this.inner.read(key);
  }
  root(): Uint8Array {
    return this.inner.root();
  }
  entries(): Iterable<[Uint8Array, Uint8Array]> {
    return this.inner.entries();
  }
  beginBlock(height: bigint): BlockBatch {
    return new ObservedBatch(this.inner.beginBlock(height), this, this.amplify);
  }
  commitBlock(batch: BlockBatch): CommitResult {
    if (!(batch instanceof ObservedBatch)) throw new Error("batch was not begun by this store");
    return this.inner.commitBlock(batch.inner);
  }
}

class ObservedBatch implements BlockBatch {
  private engineObserver: ((access: StateAccess) => void) | undefined = undefined;

  constructor(
    readonly inner: BlockBatch,
    private readonly store: ObservingStore,
    private readonly amplify?: (batch: BlockBatch, key: Uint8Array) => void,
  ) {}

  get height(): bigint {
    return this.inner.height;
  }
  get counts(): IoCounts {
    return this.inner.counts;
  }
  get observer(): ((access: StateAccess) => void) | undefined {
    return this.engineObserver;
  }
  set observer(fn: ((access: StateAccess) => void) | undefined) {
    this.engineObserver = fn;
    this.inner.observer =
      fn === undefined
        ? undefined
        : (access) => {
            this.store.metered.push(access);
            fn(access);
          };
  }
  get(key: Uint8Array): Uint8Array | undefined {
    if (this.engineObserver !== undefined) this.amplify?.(this.inner, key);
    return this.inner.get(key);
  }
  put(key: Uint8Array, value: Uint8Array): void {
    this.inner.put(key, value);
  }
  delete(key: Uint8Array): void {
    this.inner.delete(key);
  }
  checkpoint(): number {
    return this.inner.checkpoint();
  }
  rollback(token: number): void {
    this.inner.rollback(token);
  }
  release(token: number): void {
    this.inner.release(token);
  }
}
