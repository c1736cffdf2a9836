// A StateStore wrapper that sees exactly what the CBQS meter sees: it tees the batch observer the
// engine installs around a CBQS handler (§18.1 "counted at the state interface"), so the gas
// tooling measures reads, writes and written bytes independently of the Meter's own counters.
// An optional `amplify` hook lets a test make the state interface misbehave (e.g. a handler
// forced over its reservation) without touching engine code.
import { ForwardingStore, WatchingBatch } from "../../state/store/forwarding.js";
import type { BlockBatch, StateAccess, StateStore } from "../../state/kv/interface.js";

type Amplify = (batch: BlockBatch, key: Uint8Array) => void;

export class ObservingStore extends ForwardingStore {
  /** Every access made while the engine's meter observer was installed, in order. */
  metered: StateAccess[] = [];

  constructor(
    inner: StateStore,
    private readonly amplify?: Amplify,
  ) {
    super(inner);
  }

  override beginBlock(height: bigint): BlockBatch {
    return new ObservedBatch(this.inner.beginBlock(height), this, this.amplify);
  }
}

const copyOf = (v: Uint8Array | undefined): Uint8Array | undefined => v?.slice();

function copyAccess(a: StateAccess): StateAccess {
  return a.op === "read"
    ? { op: "read", key: a.key.slice(), value: copyOf(a.value) }
    : { op: "write", key: a.key.slice(), before: copyOf(a.before), after: copyOf(a.after) };
}

class ObservedBatch extends WatchingBatch {
  constructor(
    inner: BlockBatch,
    private readonly store: ObservingStore,
    private readonly amplify?: Amplify,
  ) {
    super(inner);
  }

  protected seen(access: StateAccess, metered: boolean): void {
    // The batch hands observers the caller's arrays: keep copies.
    if (metered) this.store.metered.push(copyAccess(access));
  }

  override get(key: Uint8Array): Uint8Array | undefined {
    if (this.observer !== undefined) this.amplify?.(this.inner, key);
    return super.get(key);
  }

  override getView(key: Uint8Array): Uint8Array | undefined {
    if (this.observer !== undefined) this.amplify?.(this.inner, key);
    return super.getView(key);
  }
}
