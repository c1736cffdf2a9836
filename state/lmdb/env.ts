// One LMDB environment (a directory holding data.mdb and lock.mdb) with the named tables of a
// store, opened by exactly one process at a time.
//
// Sync policy (docs/spec/state.md "Persistent store"): every commit is one LMDB write transaction.
// By default lmdb-js commits with `overlappingSync`: the transaction is atomic and visible when
// the commit returns, and its flush to the disk (fsync) runs after it, overlapping the next block.
// A process crash (SIGKILL, an exception) loses nothing committed: the pages are in the OS page
// cache. An OS crash or power loss can lose the last unflushed commits but never leaves a torn
// one: LMDB's meta pages switch only to fully written transactions, and the store reopens at an
// earlier complete block, from which replay continues. `noSync` (benchmarks only) never flushes.
import { linkSync, mkdirSync, readFileSync, rmSync, statfsSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { open, type Database, type RootDatabase } from "lmdb";
import { checkDataFile } from "./check.js";
import { DamagedStoreError, StoreError } from "./errors.js";

export { DamagedStoreError, StoreError };

export interface EnvOptions {
  /** Never fsync (benchmarks only: an OS crash can then corrupt the store). */
  noSync?: boolean;
  /**
   * Open an existing store for reading only: nothing in the directory is created or changed,
   * so a store the user cannot write can be read (the read commands).
   */
  readOnly?: boolean;
}

/** Tables of one environment; every key and value is raw bytes. */
export type Table = Database<Buffer, Buffer>;

/** Whether a directory already holds an LMDB environment. */
export function hasEnv(dir: string): boolean {
  try {
    return statSync(join(dir, "data.mdb")).isFile();
  } catch {
    return false;
  }
}

/**
 * The writer lock: `<dir>/cbqs.pid` holds the pid of the process that has the store open. A
 * lock left by a process that no longer runs (killed) is taken over. Every opener takes it, so
 * a reader never sees a store whose in-memory parts another process is changing — except a
 * read-only opener that may not write the directory: it only refuses a store a running process
 * holds, and takes no lock (returns undefined).
 */
function takeLock(dir: string, readOnly: boolean): string | undefined {
  const path = join(dir, "cbqs.pid");
  // Written aside, then linked into place: the lock file appears with its pid already in it.
  const mine = join(dir, `cbqs.pid.${process.pid}`);
  try {
    writeFileSync(mine, String(process.pid));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    if (readOnly && (code === "EACCES" || code === "EPERM" || code === "EROFS")) {
      checkNotHeld(path);
      return undefined;
    }
    throw new StoreError(`cannot lock the store: ${code}`);
  }
  try {
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        linkSync(mine, path);
        return path;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw new StoreError(`cannot lock the store: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
      }
      const pid = checkNotHeld(path);
      if (pid === process.pid) throw new StoreError("the store is already open in this process");
      try {
        rmSync(path, { force: true });
      } catch (err) {
        // A directory in the lock's place, say: refused by name, not as an internal error.
        throw new StoreError(`cannot lock the store: cbqs.pid cannot be replaced (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
      }
    }
    throw new StoreError("cannot lock the store");
  } finally {
    rmSync(mine, { force: true });
  }
}

/** Refuses a lock another running process holds; returns the pid in it (NaN: none or unreadable). */
function checkNotHeld(path: string): number {
  let pid: number;
  try {
    pid = Number(readFileSync(path, "utf8"));
  } catch {
    return NaN;
  }
  if (pid !== process.pid && Number.isSafeInteger(pid) && pid > 0 && isRunning(pid)) throw new StoreError(`the store is in use by process ${pid}`);
  return pid;
}

/** Refuses a path that is not a directory or cannot be examined (a missing one is the caller's). */
function checkDir(dir: string): void {
  let isDir: boolean;
  try {
    isDir = statSync(dir).isDirectory();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    if (code !== "ENOENT") throw new StoreError(`cannot use it: ${code}`);
    return;
  }
  if (!isDir) throw new StoreError("not a directory");
}

/** The pre-open checks of data.mdb (state/lmdb/check.ts); an unreadable file is refused too. */
function checkData(dir: string): void {
  try {
    checkDataFile(join(dir, "data.mdb"));
  } catch (err) {
    if (err instanceof StoreError) throw err;
    throw new StoreError(`cannot read data.mdb: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}

/**
 * LMDB's two files must be regular files when they exist: lmdb-js crashes the process (SIGSEGV)
 * on a directory or a FIFO there, so a store damaged that way is refused first.
 */
function checkRegularFiles(dir: string): void {
  for (const name of ["data.mdb", "lock.mdb"]) {
    let isFile: boolean;
    try {
      isFile = statSync(join(dir, name)).isFile();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? String(err);
      if (code === "ENOENT") continue;
      throw new StoreError(`cannot use ${name}: ${code}`);
    }
    if (!isFile) throw new DamagedStoreError(`${name} is not a regular file`);
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

export class Env {
  private closed = false;

  private constructor(
    readonly dir: string,
    readonly root: RootDatabase,
    private readonly lock: string | undefined,
    readonly readOnly: boolean,
  ) {}

  static open(dir: string, options: EnvOptions = {}): Env {
    const readOnly = options.readOnly === true;
    checkDir(dir);
    if (readOnly && !hasEnv(dir)) throw new StoreError("no store there"); // a missing directory too
    // An empty data.mdb (a crash before LMDB's first meta write) is an empty store: a writable open
    // lets LMDB initialise it, a read-only one cannot (LMDB would read meta pages that are not there).
    if (readOnly && statSync(join(dir, "data.mdb")).size === 0) throw new StoreError("no store there (data.mdb is empty: a store created but never written)");
    try {
      mkdirSync(dir, { recursive: true });
    } catch (err) {
      throw new StoreError(`cannot create the directory: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
    const lock = takeLock(dir, readOnly);
    try {
      // Under the lock: a store another process holds is refused as in use, not examined.
      checkRegularFiles(dir);
      if (hasEnv(dir)) checkData(dir);
      const root = open({
        path: dir,
        maxDbs: 16,
        // A directory even when its name has a dot (lmdb-js takes such a path for a file otherwise).
        noSubdir: false,
        compression: false,
        ...(readOnly ? { readOnly: true } : {}),
        ...(options.noSync ? { noSync: true, overlappingSync: false } : {}),
      });
      return new Env(dir, root, lock, readOnly);
    } catch (err) {
      if (lock !== undefined) rmSync(lock, { force: true });
      if (err instanceof StoreError) throw err;
      throw new StoreError(`LMDB cannot open the store: ${(err as Error).message}`);
    }
  }

  /**
   * The named table. A writable open creates it; a read-only one cannot, and lmdb-js then answers
   * undefined (every store this code writes has all its tables, so one missing is no cbqs store).
   */
  table(name: string): Table {
    const table = this.root.openDB<Buffer, Buffer>({ name, encoding: "binary", keyEncoding: "binary" }) as Table | undefined;
    if (table === undefined) throw new StoreError(`not a cbqs store (it has no ${name} table)`);
    return table;
  }

  /** Runs `write` as one atomic write transaction (aborted if it throws). */
  transaction<T>(write: () => T): T {
    return this.root.transactionSync(write);
  }

  /** Bytes the environment occupies on disk (allocated blocks of data.mdb). */
  diskBytes(): number {
    const s = statSync(join(this.dir, "data.mdb"));
    return s.blocks * 512;
  }

  /** Bytes free for this user on the store's file system (undefined: unknown). */
  freeBytes(): number | undefined {
    try {
      const s = statfsSync(this.dir);
      return s.bavail * s.bsize;
    } catch {
      return undefined;
    }
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    void this.root.close();
    if (this.lock !== undefined) rmSync(this.lock, { force: true });
  }
}

// ---- Byte keys ----------------------------------------------------------------------------

/** A Buffer view of `bytes` (no copy), as lmdb-js takes keys and values. */
export const buf = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/**
 * The bytes of a value read from LMDB as a plain Uint8Array (no copy). Buffer's `slice` is a
 * view, not a copy, so a Buffer must never reach code that copies with `slice()`.
 */
export const plain = (b: Buffer): Uint8Array => new Uint8Array(b.buffer, b.byteOffset, b.byteLength);

/** Entries of a table (LMDB's own count, O(1)). */
export const entryCount = (table: Table): number => (table.getStats() as { entryCount: number }).entryCount;

/** 8-byte big-endian key of a location or position (a safe integer), so keys sort numerically. */
export function u64Key(n: number): Buffer {
  const out = Buffer.allocUnsafe(8);
  out.writeUInt32BE(Math.floor(n / 2 ** 32), 0);
  out.writeUInt32BE(n >>> 0, 4);
  return out;
}

export function readU64Key(bytes: Uint8Array, offset = 0): number {
  const b = buf(bytes);
  const high = b.readUInt32BE(offset);
  if (high >= 2 ** 21) throw new StoreError(`stored integer exceeds 2^53`);
  return high * 2 ** 32 + b.readUInt32BE(offset + 4);
}

/** 8-byte big-endian key of a block height. */
export function heightKey(height: bigint): Buffer {
  const out = Buffer.allocUnsafe(8);
  out.writeBigUInt64BE(height);
  return out;
}
