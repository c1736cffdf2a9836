// Wrappers that watch the state interface (gas measurement, execution traces, benchmarks) without
// changing it: each passes every call through and overrides only what it watches.
import type { BlockBatch, CommitResult, IoCounts, StateAccess, StateStore } from "../kv/interface.js";

type Observer = ((access: StateAccess) => void) | undefined;

/** A BlockBatch that passes every call, the observer included, to the batch it wraps. */
export class ForwardingBatch implements BlockBatch {
  constructor(readonly inner: BlockBatch) {}

  get height(): bigint {
    return this.inner.height;
  }
  get counts(): IoCounts {
    return this.inner.counts;
  }
  get observer(): Observer {
    return this.inner.observer;
  }
  set observer(fn: Observer) {
    this.inner.observer = fn;
  }
  get(key: Uint8Array): Uint8Array | undefined {
    return this.inner.get(key);
  }
  getView(key: Uint8Array): Uint8Array | undefined {
    return this.inner.getView(key);
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

/**
 * A ForwardingBatch that sees every access of the wrapped batch while the engine's own observer
 * (the CBQS meter, installed around a CBQS handler) keeps exactly its usual view. `seen` gets each
 * access first, with whether the engine's observer was installed for it, i.e. whether the meter
 * counted it (CIP-39 §18.1: counted at the state interface).
 */
export abstract class WatchingBatch extends ForwardingBatch {
  private engineObserver: Observer = undefined;

  constructor(inner: BlockBatch) {
    super(inner);
    inner.observer = (access) => {
      this.seen(access, this.engineObserver !== undefined);
      this.engineObserver?.(access);
    };
  }

  protected abstract seen(access: StateAccess, metered: boolean): void;

  override get observer(): Observer {
    return this.engineObserver;
  }
  override set observer(fn: Observer) {
    this.engineObserver = fn;
  }
}

/**
 * A WatchingBatch that also sees transaction boundaries: the engine opens one outermost
 * checkpoint per transaction (src/engine/chain.ts executeTx), so txStart/txEnd run when the
 * checkpoint depth leaves and returns to zero.
 */
export abstract class TxWatchingBatch extends WatchingBatch {
  private depth = 0;

  protected abstract txStart(): void;
  protected abstract txEnd(): void;

  override checkpoint(): number {
    if (this.depth++ === 0) this.txStart();
    return super.checkpoint();
  }
  override rollback(token: number): void {
    super.rollback(token);
    this.close();
  }
  override release(token: number): void {
    super.release(token);
    this.close();
  }
  private close(): void {
    if (--this.depth === 0) this.txEnd();
  }
}

/**
 * A StateStore that passes every call to the store it wraps. Subclasses wrap the batches that
 * beginBlock hands out; commitBlock commits the wrapped batch underneath.
 */
export class ForwardingStore implements StateStore {
  constructor(readonly inner: StateStore) {}

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
    return this.inner.beginBlock(height);
  }
  commitBlock(batch: BlockBatch): CommitResult {
    return this.inner.commitBlock(batch instanceof ForwardingBatch ? batch.inner : batch);
  }
}
