// Errors of the persistent store. The CLI turns each into one exit-2 line naming `--db <dir>`
// (src/cli/store.ts), so their messages do not repeat the directory.
export class StoreError extends Error {
  override name = "StoreError";
}

/** A store whose files are not a sound LMDB environment or cbqs store. */
export class DamagedStoreError extends StoreError {
  constructor(readonly detail: string) {
    super(`the store is damaged: ${detail}`);
  }
}
