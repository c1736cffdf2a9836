// Snapshot import and periodic snapshots (src/store-tools/snapshot.ts) when the file system refuses: a
// target directory that cannot be listed and a snapshot that cannot be written — paths root, the
// CI user, never meets for real. node:fs fails here on cue and does the real thing otherwise, in
// process, so that mutation runs reach these paths too.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { readFixture } from "../../src/harness/documents.js";
import { CbqsNode } from "../../src/chain-node/chain-node.js";
import { importSnapshot, SnapshotError, snapshotEvery } from "../../src/store-tools/snapshot.js";
import { LmdbChainDb } from "../../state/lmdb/chain-db.js";
import { StoreError } from "../../state/lmdb/errors.js";

/** node:fs calls that throw, by name: on paths ending in `suffix`. */
const faults = vi.hoisted(() => new Map<string, { suffix: string; error: unknown }>());

vi.mock("node:fs", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs")>();
  const wrapped = (name: "readdirSync" | "mkdirSync") => {
    const fn = real[name] as unknown as (...args: unknown[]) => unknown;
    return (...args: unknown[]) => {
      const fault = faults.get(name);
      if (fault !== undefined && typeof args[0] === "string" && args[0].endsWith(fault.suffix)) throw fault.error;
      return fn(...args);
    };
  };
  return { ...real, readdirSync: wrapped("readdirSync"), mkdirSync: wrapped("mkdirSync") };
});

const errno = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`${code}: refused on cue`), { code });

const root = mkdtempSync(join(tmpdir(), "cbqs-snapshot-failures-"));
let n = 0;
const fresh = () => join(root, `d${n++}`);
afterEach(() => faults.clear());
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("snapshot import into a directory that cannot be listed (src/store-tools/snapshot.ts)", () => {
  it("is refused naming the directory and the error's code (or the error itself when it has none); nothing is imported", () => {
    const target = fresh();
    mkdirSync(target);
    faults.set("readdirSync", { suffix: target, error: errno("EACCES") });
    expect(() => importSnapshot("unused.cbqs", target)).toThrow(new SnapshotError(`cannot use ${target}: EACCES`));
    faults.set("readdirSync", { suffix: target, error: "no code" });
    expect(() => importSnapshot("unused.cbqs", target)).toThrow(new SnapshotError(`cannot use ${target}: no code`));
  });
});

describe("a periodic snapshot that cannot be written (src/store-tools/snapshot.ts snapshotEvery)", () => {
  /** Replays the fixture (blocks 1, 5, 6) into a store writing a snapshot every 5 blocks: block 5 crosses the first multiple. */
  function replayWithSnapshots(dir: string): void {
    const db = LmdbChainDb.open(dir, { afterCommit: snapshotEvery(dir, 5n) });
    try {
      CbqsNode.open(db, { kind: "fixture", fixture: readFixture("fixtures/corpus/create-quote.json") });
    } finally {
      db.close();
    }
  }

  it("a file-system refusal is a StoreError naming the block, its code and that the block is committed", () => {
    const dir = fresh();
    faults.set("mkdirSync", { suffix: "snapshots", error: errno("ENOSPC") });
    expect(() => replayWithSnapshots(dir)).toThrow(new StoreError("block 5 is committed, but its snapshot could not be written (ENOSPC); the store is at block 5"));
    const db = LmdbChainDb.open(dir);
    expect(db.head()!.height).toBe(5n);
    db.close();
  });

  it("anything else (no errno code: a bug) is thrown as it is", () => {
    const bug = new TypeError("a bug");
    faults.set("mkdirSync", { suffix: "snapshots", error: bug });
    expect(() => replayWithSnapshots(fresh())).toThrow(bug);
  });
});
