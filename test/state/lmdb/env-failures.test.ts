// Opening an LMDB environment (state/lmdb/env.ts) when the file system refuses: the paths root —
// the CI user — never meets for real (a directory it may not write or search, an unreadable
// data.mdb, a file system without hard links or statfs, another user's process holding the lock)
// and the lock races another process would cause. node:fs fails here on cue, one call at a time
// with a chosen errno, and does the real thing otherwise; in process, so that mutation runs reach
// these paths too (test/cli/store.test.ts reaches a few through the compiled CLI only).
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { Env, hasEnv } from "../../../state/lmdb/env.js";
import { refusal, written } from "./env-helpers.js";

type Fn = (...args: never[]) => unknown;
interface Fault {
  /** Which calls fail: by their first argument (a path or a descriptor). */
  on: (first: unknown) => boolean;
  /** What a failing call does instead (throws, as a rule). */
  act: (real: Fn, args: unknown[]) => unknown;
  /** How many matching calls fail; later ones do the real thing. */
  times: number;
  /** Matching calls made so far, failed or not. */
  calls: number;
}

const faults = vi.hoisted(() => new Map<string, Fault>());
/** What lmdb-js's `open` throws (undefined: it opens). */
const lmdbRefuses = vi.hoisted(() => ({ with: undefined as Error | undefined }));

vi.mock("lmdb", async (importOriginal) => {
  const lmdb = await importOriginal<typeof import("lmdb")>();
  return {
    ...lmdb,
    open: (...args: Parameters<typeof lmdb.open>) => {
      if (lmdbRefuses.with !== undefined) throw lmdbRefuses.with;
      return lmdb.open(...args);
    },
  };
});

vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  const wrapped = (name: keyof typeof real) => {
    const fn = real[name] as unknown as (...args: unknown[]) => unknown;
    return (...args: unknown[]) => {
      const fault = faults.get(name);
      if (fault !== undefined && fault.on(args[0])) {
        fault.calls++;
        if (fault.calls <= fault.times) return fault.act(fn as Fn, args);
      }
      return fn(...args);
    };
  };
  const names = ["linkSync", "mkdirSync", "openSync", "readSync", "rmSync", "statfsSync", "statSync", "writeFileSync"] as const;
  return { ...real, ...Object.fromEntries(names.map((name) => [name, wrapped(name)])) };
});

/** An error as node:fs throws it. */
const errno = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: refused on cue`), { code });

/** Makes `name`'s calls on paths ending in `suffix` throw `error` (the first `times` of them). */
function fail(name: keyof typeof fs, suffix: string, error: unknown, times = Infinity): Fault {
  const fault: Fault = {
    on: (first) => typeof first === "string" && first.endsWith(suffix),
    act: () => {
      throw error;
    },
    times,
    calls: 0,
  };
  faults.set(name, fault);
  return fault;
}

const root = mkdtempSync(join(tmpdir(), "cbqs-env-failures-"));
let n = 0;
const fresh = () => join(root, `s${n++}`);
afterEach(() => {
  faults.clear();
  lmdbRefuses.with = undefined;
  vi.restoreAllMocks();
});
afterAll(() => rmSync(root, { recursive: true, force: true }));


const lockFiles = (dir: string) => readdirSync(dir).filter((f) => f.startsWith("cbqs.pid")).sort();
const mine = `cbqs.pid.${process.pid}`;
/** A pid no process has: a child that has exited. */
const deadPid = () => spawnSync(process.execPath, ["-e", ""]).pid!;

describe("a store whose directory the user may not write", () => {
  it("a reader whose lock file cannot be written (EACCES, EPERM, EROFS) opens without a lock and leaves the directory as it was", () => {
    const dir = written(fresh());
    for (const code of ["EACCES", "EPERM", "EROFS"]) {
      const before = readdirSync(dir).sort();
      fail("writeFileSync", mine, errno(code));
      const env = Env.open(dir, { readOnly: true });
      expect(env.table("t").getBinary(Buffer.from("k"))?.toString(), code).toBe("v");
      env.close();
      expect(readdirSync(dir).sort(), code).toEqual(before);
    }
  });

  it("a lock left by a dead process stays where it is: a reader that takes no lock removes none", () => {
    const dir = written(fresh());
    const stale = String(deadPid());
    writeFileSync(join(dir, "cbqs.pid"), stale);
    fail("writeFileSync", mine, errno("EROFS"));
    const env = Env.open(dir, { readOnly: true });
    env.close();
    expect(readFileSync(join(dir, "cbqs.pid"), "utf8")).toBe(stale);
    // Refused after the lock step too (a damaged lock.mdb): still nothing removed.
    rmSync(join(dir, "lock.mdb"));
    mkdirSync(join(dir, "lock.mdb"));
    expect(refusal(() => Env.open(dir, { readOnly: true }))).toBe("the store is damaged: lock.mdb is not a regular file");
    expect(readFileSync(join(dir, "cbqs.pid"), "utf8")).toBe(stale);
  });

  it("a reader that cannot write its lock still refuses a store a running process holds, by pid", () => {
    const dir = written(fresh());
    writeFileSync(join(dir, "cbqs.pid"), String(process.ppid));
    fail("writeFileSync", mine, errno("EACCES"));
    expect(refusal(() => Env.open(dir, { readOnly: true }))).toBe(`the store is in use by process ${process.ppid}`);
  });

  it("a writer that cannot write its lock is refused with the error's code (EACCES, EPERM, EROFS); so is a reader for any other error (ENOSPC) or one without a code", () => {
    const dir = written(fresh());
    for (const code of ["EACCES", "EPERM", "EROFS"]) {
      fail("writeFileSync", mine, errno(code));
      expect(refusal(() => Env.open(dir)), code).toBe(`cannot lock the store: ${code}`);
    }
    fail("writeFileSync", mine, errno("ENOSPC"));
    expect(refusal(() => Env.open(dir, { readOnly: true }))).toBe("cannot lock the store: ENOSPC");
    fail("writeFileSync", mine, new Error("no code"));
    expect(refusal(() => Env.open(dir, { readOnly: true }))).toBe("cannot lock the store: Error: no code");
    expect(lockFiles(dir)).toEqual([]);
  });

  it("a missing directory that cannot be created is refused with the error's code, and nothing is left", () => {
    const dir = fresh();
    fail("mkdirSync", dir, errno("EACCES"));
    expect(refusal(() => Env.open(dir))).toBe("cannot create the directory: EACCES");
    fail("mkdirSync", dir, new Error("no code"));
    expect(refusal(() => Env.open(dir))).toBe("cannot create the directory: Error: no code");
    expect(fs.existsSync(dir)).toBe(false);
  });

  it("a directory that cannot be examined (EACCES on its parent) is refused with the code, for writers and readers", () => {
    const dir = written(fresh());
    fail("statSync", dir, errno("EACCES"));
    expect(refusal(() => Env.open(dir))).toBe("cannot use it: EACCES");
    expect(refusal(() => Env.open(dir, { readOnly: true }))).toBe("cannot use it: EACCES");
    fail("statSync", dir, new Error("no code"));
    expect(refusal(() => Env.open(dir))).toBe("cannot use it: Error: no code");
    expect(lockFiles(dir)).toEqual([]);
  });
});

describe("LMDB's files that cannot be read", () => {
  it("a data.mdb that cannot be opened or read is refused naming the error, and the lock is released", () => {
    const dir = written(fresh());
    for (const [name, error, expected] of [
      ["openSync", errno("EACCES"), "cannot read data.mdb: EACCES"],
      ["openSync", new Error("no code"), "cannot read data.mdb: Error: no code"],
    ] as const) {
      fail(name, "data.mdb", error);
      expect(refusal(() => Env.open(dir))).toBe(expected);
      expect(refusal(() => Env.open(dir, { readOnly: true }))).toBe(expected);
      expect(lockFiles(dir)).toEqual([]);
      faults.clear();
    }
    // A read error (a failing disk): readSync takes the descriptor, so every read fails.
    faults.set("readSync", {
      on: () => true,
      act: () => {
        throw errno("EIO");
      },
      times: Infinity,
      calls: 0,
    });
    expect(refusal(() => Env.open(dir))).toBe("cannot read data.mdb: EIO");
    faults.clear();
    expect(lockFiles(dir)).toEqual([]);
    Env.open(dir).close();
  });

  it("a lock.mdb that cannot be examined is refused naming it and the error", () => {
    const dir = written(fresh());
    fail("statSync", "lock.mdb", errno("EACCES"));
    expect(refusal(() => Env.open(dir))).toBe("cannot use lock.mdb: EACCES");
    fail("statSync", "lock.mdb", new Error("no code"));
    expect(refusal(() => Env.open(dir))).toBe("cannot use lock.mdb: Error: no code");
    expect(lockFiles(dir)).toEqual([]);
  });

  it("LMDB's own refusal to open the environment is a store error quoting it, and the lock is released", () => {
    // In-process LMDB opens every damaged store the checks before it let through (its findings
    // come on the first read), so its refusal is made here.
    const dir = written(fresh());
    lmdbRefuses.with = new Error("MDB_VERSION_MISMATCH: Database environment version mismatch");
    expect(refusal(() => Env.open(dir))).toBe("LMDB cannot open the store: MDB_VERSION_MISMATCH: Database environment version mismatch");
    expect(lockFiles(dir)).toEqual([]);
    expect(refusal(() => Env.open(dir, { readOnly: true }))).toBe("LMDB cannot open the store: MDB_VERSION_MISMATCH: Database environment version mismatch");
    lmdbRefuses.with = undefined;
    Env.open(dir).close();
  });

  it("hasEnv answers false, not undefined, where there is no data.mdb", () => {
    expect(hasEnv(fresh())).toBe(false);
    expect(hasEnv(written(fresh()))).toBe(true);
  });
});

describe("the writer lock when the file system or another process interferes", () => {
  it("a hard link refused for another reason than EEXIST (a file system without hard links) is refused with its code; no lock file is left", () => {
    const dir = written(fresh());
    for (const [error, expected] of [
      [errno("EPERM"), "cannot lock the store: EPERM"],
      [errno("EXDEV"), "cannot lock the store: EXDEV"],
      [new Error("no code"), "cannot lock the store: Error: no code"],
    ] as const) {
      fail("linkSync", mine, error);
      expect(refusal(() => Env.open(dir))).toBe(expected);
      expect(lockFiles(dir)).toEqual([]);
    }
  });

  it("a lock another opener takes and drops between our attempts is tried three times: taken on the third, refused after it", () => {
    // The link fails with EEXIST while cbqs.pid is already gone again: nothing to check, nothing to
    // remove (the removal must not fail on the missing file), and the next attempt follows.
    const dir = written(fresh());
    const twice = fail("linkSync", mine, errno("EEXIST"), 2);
    const env = Env.open(dir);
    expect(twice.calls).toBe(3);
    expect(readFileSync(join(dir, "cbqs.pid"), "utf8")).toBe(String(process.pid));
    env.close();
    const always = fail("linkSync", mine, errno("EEXIST"), 3);
    expect(refusal(() => Env.open(dir))).toBe("cannot lock the store");
    expect(always.calls).toBe(3);
    expect(lockFiles(dir)).toEqual([]);
  });

  it("a dead holder's lock that cannot be removed is refused naming the error", () => {
    const dir = written(fresh());
    writeFileSync(join(dir, "cbqs.pid"), String(deadPid()));
    fail("rmSync", join(dir, "cbqs.pid"), errno("EBUSY"));
    expect(refusal(() => Env.open(dir))).toBe("cannot lock the store: cbqs.pid cannot be replaced (EBUSY)");
    fail("rmSync", join(dir, "cbqs.pid"), new Error("no code"));
    expect(refusal(() => Env.open(dir))).toBe("cannot lock the store: cbqs.pid cannot be replaced (Error: no code)");
    faults.clear();
    expect(lockFiles(dir)).toEqual(["cbqs.pid"]);
    Env.open(dir).close();
  });

  it("our pid file removed by someone else before we clean it up (a process of another pid namespace with our pid) still ends in the store's refusal", () => {
    const dir = written(fresh());
    faults.set("linkSync", {
      on: () => true,
      act: (_real, args) => {
        rmSync(args[0] as string);
        throw errno("ENOENT");
      },
      times: 1,
      calls: 0,
    });
    expect(refusal(() => Env.open(dir))).toBe("cannot lock the store: ENOENT");
    expect(lockFiles(dir)).toEqual([]);
  });

  it("our lock removed by another opener while we hold it (a process of another pid namespace that cannot see ours) does not turn our refusal or our close into an internal error", () => {
    const dir = written(fresh());
    faults.set("statSync", {
      on: (first) => typeof first === "string" && first.endsWith("lock.mdb"),
      act: () => {
        rmSync(join(dir, "cbqs.pid"));
        throw errno("EACCES");
      },
      times: 1,
      calls: 0,
    });
    expect(refusal(() => Env.open(dir))).toBe("cannot use lock.mdb: EACCES");
    const env = Env.open(dir);
    rmSync(join(dir, "cbqs.pid"));
    env.close();
    expect(lockFiles(dir)).toEqual([]);
  });

  it("a holder this user may not signal (EPERM: another user's running process) holds the store; a holder that is gone (ESRCH) does not", () => {
    const dir = written(fresh());
    const pid = deadPid();
    writeFileSync(join(dir, "cbqs.pid"), String(pid));
    const real = process.kill.bind(process);
    const kill = vi.spyOn(process, "kill").mockImplementation((target: number, signal?: string | number) => {
      if (target === pid) throw errno("EPERM");
      return real(target, signal);
    });
    expect(refusal(() => Env.open(dir))).toBe(`the store is in use by process ${pid}`);
    expect(refusal(() => Env.open(dir, { readOnly: true }))).toBe(`the store is in use by process ${pid}`);
    expect(kill).toHaveBeenCalledWith(pid, 0);
    kill.mockImplementation((target: number, signal?: string | number) => {
      if (target === pid) throw errno("ESRCH");
      return real(target, signal);
    });
    const env = Env.open(dir);
    expect(readFileSync(join(dir, "cbqs.pid"), "utf8")).toBe(String(process.pid));
    env.close();
  });

  it("a lock naming no usable pid (a fraction, past 2^53, 0) names no holder, even where every signal would be refused", () => {
    const dir = written(fresh());
    const real = process.kill.bind(process);
    vi.spyOn(process, "kill").mockImplementation((target: number, signal?: string | number) => {
      if (target !== process.pid) throw errno("EPERM");
      return real(target, signal);
    });
    for (const stale of ["1.5", "9007199254740993", "0", ""]) {
      writeFileSync(join(dir, "cbqs.pid"), stale);
      const env = Env.open(dir);
      expect(readFileSync(join(dir, "cbqs.pid"), "utf8"), JSON.stringify(stale)).toBe(String(process.pid));
      env.close();
    }
  });
});

describe("the free bytes of the store's file system", () => {
  it("are its available blocks times their size, and unknown (undefined) where statfs fails", () => {
    const env = Env.open(fresh());
    try {
      faults.set("statfsSync", { on: () => true, act: (real, args) => ({ ...(real(...(args as never[])) as fs.StatsFs), bavail: 1000, bsize: 4096 }), times: Infinity, calls: 0 });
      expect(env.freeBytes()).toBe(4_096_000);
      fail("statfsSync", "", errno("ENOSYS"));
      expect(env.freeBytes()).toBeUndefined();
    } finally {
      env.close();
    }
  });
});
