// `--db <dir>` for the commands that keep a chain (node, follow, replay, snapshot, state dump,
// proof state, store verify): the LMDB store in <dir>, or an in-memory one without it. A store
// that cannot be opened or read (not a directory, in use by another process, not a cbqs store,
// damaged, full) is unusable input: exit 2, one line naming `--db <dir>`.
import type { LmdbChainDb } from "../../state/lmdb/chain-db.js";
import { DamagedStoreError } from "../../state/lmdb/env.js";
import { openChainDb, StoreError, type StoreOptions } from "../store-tools/store.js";
import { StoreInconsistency, verifyStore } from "../store-tools/verify-store.js";
import { EXIT_OK, EXIT_REJECT, exitCodes, requiredOption, UsageError } from "./common.js";
import type { CommandSpec } from "./define.js";

/**
 * The one line for an error of the store in `dir`, or undefined when `err` is not one. LMDB's
 * own errors ("MDB_CORRUPTED: …", "MDB_PAGE_NOTFOUND: …") come from a damaged file.
 */
export function storeUsageError(dir: string, err: unknown): UsageError | undefined {
  if (err instanceof StoreError) return new UsageError(`--db ${dir}: ${err.message}`);
  if (err instanceof Error && /^MDB_[A-Z_]+:/.test(err.message)) return new UsageError(`--db ${dir}: ${new DamagedStoreError(err.message).message}`);
  return undefined;
}

/** Runs `work` on the store in `dir`; its store errors become exit-2 lines naming `--db <dir>`. */
export async function usingStore<T>(dir: string | undefined, work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw (dir === undefined ? undefined : storeUsageError(dir, err)) ?? err;
  }
}

export function openStore(dir: string | undefined, options: StoreOptions = {}): ReturnType<typeof openChainDb> {
  try {
    return openChainDb(dir, options);
  } catch (err) {
    throw (dir === undefined ? undefined : storeUsageError(dir, err)) ?? err;
  }
}

/** A store that must already hold a chain, opened read-only (read commands never create or change one). */
export function openExistingStore(dir: string): ReturnType<typeof openChainDb> {
  const db = openStore(dir, { snapshotInterval: 0n, readOnly: true });
  if (db.head() === undefined) {
    db.close();
    throw new UsageError(`--db ${dir}: the store holds no chain yet`);
  }
  return db;
}

/** Whether an error means the store's files are damaged (not merely unusable: absent, busy, not a directory). */
function isDamage(err: unknown): boolean {
  return err instanceof DamagedStoreError || (err instanceof Error && /^MDB_[A-Z_]+:/.test(err.message));
}

export const commands: Readonly<Record<string, CommandSpec>> = {
  verify: {
    description: "re-derive everything the store holds (record hashes and roots, indexes, the state root rebuilt from the stored operations) and compare it with what is stored",
    options: () => [requiredOption("--db <dir>", "the store (opened read-only)")],
    exits: exitCodes("ok: every check held (they are listed)", "the first inconsistency found, or damage LMDB or the pre-open check reports", "no store there, a store in use, not a directory"),
    action: (opts: { db: string }) => {
      const dir = opts.db;
      let db: LmdbChainDb | undefined;
      try {
        db = openChainDb(dir, { snapshotInterval: 0n, readOnly: true }) as LmdbChainDb;
        process.stdout.write(`ok: --db ${dir}: ${verifyStore(db)}\n`);
        process.exitCode = EXIT_OK;
      } catch (err) {
        if (!(err instanceof StoreInconsistency) && !isDamage(err)) throw storeUsageError(dir, err) ?? err;
        const what = err instanceof StoreInconsistency ? err.message : storeUsageError(dir, err)!.message.slice(`--db ${dir}: `.length);
        process.stdout.write(`inconsistent: --db ${dir}: ${what}\n`);
        process.exitCode = EXIT_REJECT;
      } finally {
        db?.close();
      }
    },
  },
};
