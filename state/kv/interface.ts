// The narrow interface the execution engine sees (CIP-4 §4, §5): 54-byte keys, raw value
// bytes (encoded with state/kv/value.ts), one batch per block with nested checkpoints so a
// rejected transaction rolls back without touching the rest of the block.
//
// Every `get` counts one state read and every `put`/`delete` one state write, at this
// boundary, whatever the key; the gas meter and the tracer consume these counts/events.

export const STATE_KEY_LENGTH = 54;

export type StateAccess =
  | { op: "read"; key: Uint8Array; value: Uint8Array | undefined }
  | { op: "write"; key: Uint8Array; before: Uint8Array | undefined; after: Uint8Array | undefined };

export interface IoCounts {
  reads: number;
  writes: number;
}

/** One block's pending changes over the committed state. */
export interface BlockBatch {
  readonly height: bigint;
  /** Current value, reading this batch's own writes first. Counts one read. */
  get(key: Uint8Array): Uint8Array | undefined;
  /**
   * The same read as `get` (counted and observed alike), without the copy: the array may be the
   * batch's own, so the caller must not modify it. For readers that decode in place or copy.
   */
  getView(key: Uint8Array): Uint8Array | undefined;
  /** Set a key within the batch. Counts one write. */
  put(key: Uint8Array, value: Uint8Array): void;
  /** Delete a key within the batch. Counts one write. */
  delete(key: Uint8Array): void;
  /** Opens a nested checkpoint and returns its depth token. */
  checkpoint(): number;
  /** Discards every change since the checkpoint `token` (and closes it). */
  rollback(token: number): void;
  /** Keeps every change since the checkpoint `token` (and closes it). */
  release(token: number): void;
  /** Running totals of metered operations in this batch. */
  readonly counts: IoCounts;
  /**
   * Observer for every metered access, in order (tracing, metering). It sees the caller's own
   * key and value arrays (and a fresh copy of a write's previous value): it must not modify
   * them, and must copy whatever it keeps beyond the call.
   */
  observer: ((access: StateAccess) => void) | undefined;
}

export interface CommitResult {
  height: bigint;
  stateRoot: Uint8Array;
}

/** The committed state plus the authenticated structure that gives `state_root`. */
export interface StateStore {
  /** Committed value (no metering; for dumps, proofs, tooling). */
  read(key: Uint8Array): Uint8Array | undefined;
  /** Root of the committed state. */
  root(): Uint8Array;
  /** Starts the batch of block `height` (heights strictly increase; gaps are free). */
  beginBlock(height: bigint): BlockBatch;
  /** Applies the batch in a deterministic order (keys sorted) and returns the new root. */
  commitBlock(batch: BlockBatch): CommitResult;
  /** Every live key and value, keys in ascending byte order. */
  entries(): Iterable<[Uint8Array, Uint8Array]>;
}
