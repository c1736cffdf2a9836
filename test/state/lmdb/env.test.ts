// Opening an LMDB environment (state/lmdb/env.ts), in process: the directory checks, the writer
// lock (<dir>/cbqs.pid: one process at a time, a dead holder's lock taken over), the read-only
// refusals, and where the pre-open data checks report. Each refusal names its rule.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { concatBytes } from "../../../src/bytes.js";
import { buf, entryCount, Env, heightKey, plain, readU64Key, u64Key } from "../../../state/lmdb/env.js";
import { DamagedStoreError, StoreError } from "../../../state/lmdb/errors.js";
import { refusal, written } from "./env-helpers.js";

const root = mkdtempSync(join(tmpdir(), "cbqs-env-"));
let n = 0;
const fresh = () => join(root, `s${n++}`);
afterAll(() => rmSync(root, { recursive: true, force: true }));


describe("opening a store directory", () => {
  it("creates a missing directory; refuses a file, and (read-only) a missing directory or one without a store", () => {
    const dir = fresh();
    Env.open(dir).close();
    expect(existsSync(join(dir, "data.mdb"))).toBe(true);
    const file = join(root, "a-file");
    writeFileSync(file, "x");
    expect(refusal(() => Env.open(file))).toBe("not a directory");
    expect(refusal(() => Env.open(fresh(), { readOnly: true }))).toBe("no store there");
    const empty = fresh();
    mkdirSync(empty);
    expect(refusal(() => Env.open(empty, { readOnly: true }))).toBe("no store there");
    expect(refusal(() => Env.open(join(file, "below")))).toBe("cannot use it: ENOTDIR");
  });

  it("a 0-byte data.mdb is an empty store for a writer, and no store for a reader", () => {
    const dir = fresh();
    mkdirSync(dir);
    writeFileSync(join(dir, "data.mdb"), "");
    expect(refusal(() => Env.open(dir, { readOnly: true }))).toBe("no store there (data.mdb is empty: a store created but never written)");
    Env.open(dir).close();
  });
});

describe("the writer lock (cbqs.pid)", () => {
  it("holds this process's pid while open and is gone after close; a second open in this process is refused", () => {
    const dir = fresh();
    const env = Env.open(dir);
    expect(readFileSync(join(dir, "cbqs.pid"), "utf8")).toBe(String(process.pid));
    expect(refusal(() => Env.open(dir))).toBe("the store is already open in this process");
    expect(refusal(() => Env.open(dir, { readOnly: true }))).toBe("the store is already open in this process");
    env.close();
    expect(readdirSync(dir).filter((f) => f.startsWith("cbqs.pid"))).toEqual([]);
    env.close(); // closing twice is harmless
  });

  it("a lock held by another running process is refused by its pid; a dead or unreadable holder's lock is taken over", () => {
    const dir = written(fresh());
    writeFileSync(join(dir, "cbqs.pid"), String(process.ppid));
    expect(refusal(() => Env.open(dir))).toBe(`the store is in use by process ${process.ppid}`);
    expect(refusal(() => Env.open(dir, { readOnly: true }))).toBe(`the store is in use by process ${process.ppid}`);
    const exited = spawnSync(process.execPath, ["-e", ""]).pid!;
    for (const stale of [String(exited), "not a pid", "", "-5", "1.5"]) {
      writeFileSync(join(dir, "cbqs.pid"), stale);
      const env = Env.open(dir);
      expect(readFileSync(join(dir, "cbqs.pid"), "utf8"), JSON.stringify(stale)).toBe(String(process.pid));
      env.close();
    }
  });
});

describe("the lock and the files around LMDB's", () => {
  it("a second close of an Env does not remove the lock of the store's next opener", () => {
    const dir = fresh();
    const first = Env.open(dir);
    first.close();
    const second = Env.open(dir);
    first.close();
    expect(readFileSync(join(dir, "cbqs.pid"), "utf8")).toBe(String(process.pid));
    expect(refusal(() => Env.open(dir))).toBe("the store is already open in this process");
    second.close();
  });

  it("a directory where the lock file belongs is refused by name", () => {
    const dir = written(fresh());
    mkdirSync(join(dir, "cbqs.pid"));
    expect(refusal(() => Env.open(dir))).toBe("cannot lock the store: cbqs.pid cannot be replaced (ERR_FS_EISDIR)");
    expect(readdirSync(dir).filter((f) => f.startsWith("cbqs.pid."))).toEqual([]); // no stray pid file left
  });

  it("a data.mdb that cannot be examined (a symlink loop) is refused naming the error; a damaged one before LMDB opens it", () => {
    const loop = fresh();
    mkdirSync(loop);
    symlinkSync("data.mdb", join(loop, "data.mdb"));
    expect(refusal(() => Env.open(loop))).toBe("cannot use data.mdb: ELOOP");
    const damaged = written(fresh());
    writeFileSync(join(damaged, "data.mdb"), Buffer.alloc(16384, 0x5a));
    expect(() => Env.open(damaged)).toThrow(DamagedStoreError);
    expect(refusal(() => Env.open(damaged))).toMatch(/^the store is damaged: /);
    expect(refusal(() => Env.open(damaged, { readOnly: true }))).toMatch(/^the store is damaged: /);
  });

  it("values are stored uncompressed: the bytes of a large value are in data.mdb as written", () => {
    const dir = fresh();
    const env = Env.open(dir);
    const value = Buffer.alloc(8192);
    for (let i = 0; i < value.length; i++) value[i] = i % 251; // compressible, and recognisable
    env.transaction(() => env.table("t").putSync(Buffer.from("k"), value));
    env.close();
    expect(readFileSync(join(dir, "data.mdb")).includes(value)).toBe(true);
  });
});

describe("the store's byte keys and sizes", () => {
  it("u64 keys sort numerically and read back up to 2^53 − 1; a stored integer above it is refused", () => {
    for (const n of [0, 1, 255, 2 ** 32 - 1, 2 ** 32, 2 ** 40 + 7, Number.MAX_SAFE_INTEGER]) expect(readU64Key(u64Key(n)), String(n)).toBe(n);
    expect(u64Key(2 ** 32 + 1).toString("hex")).toBe("0000000100000001");
    const keys = [5, 256, 2 ** 32, 3].map(u64Key).sort(Buffer.compare);
    expect(keys.map((k) => readU64Key(k))).toEqual([3, 5, 256, 2 ** 32]);
    expect(readU64Key(concatBytes(Uint8Array.of(9), u64Key(7)), 1)).toBe(7);
    expect(() => readU64Key(Buffer.from("0020000000000000", "hex"))).toThrow(new StoreError("stored integer exceeds 2^53"));
    expect(readU64Key(Buffer.from("001fffffffffffff", "hex"))).toBe(Number.MAX_SAFE_INTEGER);
  });

  it("height keys are 8-byte big-endian; buf and plain are views, not copies", () => {
    expect(heightKey(258n).toString("hex")).toBe("0000000000000102");
    expect(heightKey(2n ** 64n - 1n).toString("hex")).toBe("ffffffffffffffff");
    const bytes = Uint8Array.of(1, 2, 3, 4).subarray(1, 3);
    const view = buf(bytes);
    view[0] = 9;
    expect(bytes[0]).toBe(9);
    const back = plain(view);
    expect(back).toEqual(Uint8Array.of(9, 3));
    expect(back).not.toBeInstanceOf(Buffer);
    back[1] = 7;
    expect(bytes[1]).toBe(7);
  });

  it("an open store reports the disk bytes of its data.mdb, the free bytes of its file system, and its tables' entry counts", () => {
    const env = Env.open(fresh());
    try {
      const table = env.table("t");
      env.transaction(() => {
        for (let i = 0; i < 3; i++) table.putSync(u64Key(i), Buffer.from("v"));
      });
      expect(entryCount(table)).toBe(3);
      expect(env.diskBytes()).toBe(statSync(join(env.dir, "data.mdb")).blocks * 512);
      expect(env.diskBytes()).toBeGreaterThan(0);
      expect(env.diskBytes() % 512).toBe(0);
      expect(env.freeBytes()).toBeGreaterThan(0);
    } finally {
      env.close();
    }
  });
});

describe("a store LMDB itself cannot open", () => {
  it("a directory or a FIFO where LMDB's data.mdb or lock.mdb belongs is refused before LMDB sees it (lmdb-js crashed the process on each: SIGSEGV)", () => {
    for (const name of ["data.mdb", "lock.mdb"]) {
      for (const kind of ["directory", "fifo"] as const) {
        const dir = written(fresh());
        rmSync(join(dir, name), { force: true });
        if (kind === "directory") mkdirSync(join(dir, name));
        else execFileSync("mkfifo", [join(dir, name)]);
        expect(refusal(() => Env.open(dir)), `${name} ${kind}`).toBe(`the store is damaged: ${name} is not a regular file`);
        // A reader refuses too (a FIFO data.mdb is no store for it: it looks for a regular file).
        expect(refusal(() => Env.open(dir, { readOnly: true })), `${name} ${kind}`).toMatch(name === "data.mdb" ? /^no store there$/ : /lock\.mdb is not a regular file$/);
        expect(readdirSync(dir).filter((f) => f.startsWith("cbqs.pid"))).toEqual([]); // the writer lock is released
      }
    }
  });
});

/** What lmdb-js keeps of its open options, and its state (on its root object; not in its types). */
const lmdb = (env: Env) => env.root as unknown as { overlappingSync?: boolean; noSync?: boolean; readOnly?: boolean; status: string };

describe("what LMDB is asked to open", () => {
  it("the sync policy of docs/spec/state.md: a commit is flushed after it returns (overlappingSync), never with noSync (benchmarks)", () => {
    const dir = fresh();
    const env = Env.open(dir);
    expect([lmdb(env).overlappingSync, lmdb(env).noSync]).toEqual([true, undefined]);
    env.close();
    const bench = Env.open(dir, { noSync: true });
    expect([lmdb(bench).overlappingSync, lmdb(bench).noSync]).toEqual([false, true]);
    bench.close();
  });

  it("a reader opens LMDB read-only: a table the store lacks is refused by name, not created", () => {
    const dir = written(fresh());
    const env = Env.open(dir, { readOnly: true });
    try {
      expect(lmdb(env).readOnly).toBe(true);
      expect(env.readOnly).toBe(true);
      expect(env.table("t").getBinary(Buffer.from("k"))).toEqual(Buffer.from("v"));
      expect(refusal(() => env.table("absent"))).toBe("not a cbqs store (it has no absent table)");
    } finally {
      env.close();
    }
    const writer = Env.open(dir);
    expect([lmdb(writer).readOnly, writer.readOnly]).toEqual([undefined, false]);
    writer.close();
  });

  it("tables hold raw bytes: values read back exactly as written (no encoding header), keys as Buffers in byte order", () => {
    const env = Env.open(fresh());
    try {
      const table = env.table("t");
      env.transaction(() => {
        table.putSync(u64Key(5), Buffer.from("abc"));
        table.putSync(Buffer.from("zz"), Buffer.of(1, 2));
      });
      expect(table.getBinary(u64Key(5))).toEqual(Buffer.from("abc"));
      expect([...table.getKeys()]).toEqual([u64Key(5), Buffer.from("zz")]);
    } finally {
      env.close();
    }
  });

  it("close closes LMDB's environment too", () => {
    const env = Env.open(fresh());
    env.close();
    expect(lmdb(env).status).toBe("closed");
  });
});
