// CIP-4 §11 SNAPSHOT_INTERVAL_BLOCKS, apart from src/store-tools/snapshot.ts (which loads lmdb): the
// --snapshot-interval help states it (src/cli/store-options.ts).

/** CIP-4 §11 SNAPSHOT_INTERVAL_BLOCKS. */
export const SNAPSHOT_INTERVAL_BLOCKS = 100_000n;
