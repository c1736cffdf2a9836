// Opening an LMDB environment (state/lmdb/env.ts), in process: the directory checks, the writer
// lock (<dir>/cbqs.pid: one process at a time, a dead holder's lock taken over), the read-only
// refusals, and where the pre-open data checks report. Each refusal names its rule.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { Env } from "../../../state/lmdb/env.js";
import { StoreError } from "../../../state/lmdb/errors.js";

const root = mkdtempSync(join(tmpdir(), "cbqs-env-"));
let n = 0;
const fresh = () => join(root, `s${n++}`);
afterAll(() => rmSync(root, { recursive: true, force: true }));

function refusal(open: () => unknown): string {
  try {
    open();
  } catch (err) {
    expect(err).toBeInstanceOf(StoreError);
    expect((err as Error).name).toBe("StoreError"); // what the CLI's one-line errors and logs show
    return (err as Error).message;
  }
  throw new Error("opened");
}

/** A store with something written, closed. */
function written(dir: string): string {
  const env = Env.open(dir);
  env.transaction(() => env.table("t").putSync(Buffer.from("k"), Buffer.from("v")));
  env.close();
  return dir;
}

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
