// The authenticated structure behind `state_root` (CIP-4 §5.1), which also holds the committed
// state itself. The store hands it each block's final net changes; the implementation is
// commonware's QMDB "current" database over an MMR with Blake3 (state/qmdb/).

/** A net change of one block: value undefined means the key was deleted. */
export type KeyChange = readonly [key: Uint8Array, value: Uint8Array | undefined];

export interface StateCommitment {
  /**
   * Applies one block's net changes as one batch followed by one commit, and returns the
   * new root. `changes` are sorted by key (ascending bytes) and contain each key once; they
   * may be read more than once (a large pre-state is not held as a list), so a non-array
   * must be iterable again. The caller hands the keys and values over: the commitment may keep
   * the arrays themselves, so they must not be modified afterwards.
   */
  commitBatch(changes: Iterable<KeyChange>): Uint8Array;
  /** Root after the last commit (the empty root before any). */
  root(): Uint8Array;
  /** Committed value of `key` (a fresh copy), undefined when absent. */
  get(key: Uint8Array): Uint8Array | undefined;
  /**
   * Like `get` without the copy, where the commitment keeps values as arrays it never modifies:
   * the caller must not modify the array either. A block batch reads through it (the batch keeps
   * each value it read, unmodified, until it is committed or dropped).
   */
  view?(key: Uint8Array): Uint8Array | undefined;
  /** Every committed key and value, keys in ascending byte order (read before the next batch). */
  entries(): Iterable<[Uint8Array, Uint8Array]>;
}
