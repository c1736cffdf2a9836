// The persistent store (`--db`): damaged stores are refused, never a crash; a write
// the disk refuses leaves the store at its previous block; a read-only store can be read;
// `store verify` re-derives what the store holds. Every command runs as a spawned process of
// the built CLI, so a native crash would show as its exit code (134 abort, 135 bus error,
// 139 segmentation fault) rather than pass unnoticed.
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { chmodSync, cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open } from "lmdb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const CLI = "dist/src/cli.js";
const toHexString = (b: Buffer): string => `0x${b.toString("hex")}`;
const FIXTURE = "fixtures/corpus/create-quote.json"; // genesis and blocks 1, 5, 6
const root = mkdtempSync(join(tmpdir(), "cbqs-store-"));
afterAll(() => {
  chmodSync(root, 0o700);
  rmSync(root, { recursive: true, force: true });
});

const run = (args: string[], opts: { shell?: string; uid?: number } = {}): SpawnSyncReturns<string> =>
  opts.shell !== undefined
    ? spawnSync("sh", ["-c", `${opts.shell}; exec "$0" "$@"`, process.execPath, CLI, ...args], { encoding: "utf8" })
    : spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", ...(opts.uid === undefined ? {} : { uid: opts.uid, gid: opts.uid }) });

let good = "";
let key = "";
const fixture = JSON.parse(readFileSync(FIXTURE, "utf8")) as { blocks: { height: string; state_root: string }[] };

beforeAll(() => {
  good = join(root, "good");
  const r = run(["replay", FIXTURE, "--db", good, "--quiet"]);
  expect(r.status, r.stderr).toBe(0);
  key = (JSON.parse(run(["state", "dump", "--db", good]).stdout) as { entries: { key: string }[] }).entries[0]!.key;
});

/** A copy of the good store, `damage` applied to its data.mdb. */
function damaged(name: string, damage: (bytes: Buffer) => Buffer): string {
  const dir = join(root, name);
  cpSync(good, dir, { recursive: true });
  const file = join(dir, "data.mdb");
  writeFileSync(file, damage(readFileSync(file)));
  return dir;
}

/** Every command that opens a store, on `dir`. */
const storeCommands = (dir: string): string[][] => [
  ["replay", FIXTURE, "--db", dir, "--quiet"],
  ["state", "dump", "--db", dir],
  ["prove-state", "--db", dir, "--key", key],
  ["snapshot", "export", "--db", dir, "-o", join(root, `${dir.split("/").pop()}.snap`)],
  ["export", "--db", dir, "-o", join(root, `${dir.split("/").pop()}.fixture.json`)],
  ["node", "--db", dir, "--port", "0", "--quiet"],
  ["follow", "http://127.0.0.1:9", "--db", dir, "--quiet"],
];

function expectRefused(r: SpawnSyncReturns<string>, dir: string, what: RegExp): void {
  expect([r.status, r.signal], r.stderr).toEqual([2, null]);
  const lines = r.stderr.trim().split("\n");
  expect(lines.at(-1)).toMatch(new RegExp(`^cbqs: error: --db ${dir}: ${what.source}`));
}

// LMDB meta page fields (state/lmdb/check.ts): the page size at 24 + 24, last page at 24 + 120,
// txnid at 24 + 128, the main DB's root page at 24 + 24 + 48 + 40.
const metaAt = (bytes: Buffer, page: number) => page * bytes.readUInt32LE(48);
function newerMeta(bytes: Buffer): number {
  const [a, b] = [metaAt(bytes, 0), metaAt(bytes, 1)];
  return bytes.readBigUInt64LE(b + 152) > bytes.readBigUInt64LE(a + 152) ? b : a;
}

describe("a damaged store is refused with exit 2, never a crash", () => {
  it("a garbage data.mdb (random bytes): every store command exits 2 naming --db, store verify exits 1", () => {
    const dir = damaged("garbage", (b) => {
      let x = 0x2545f491;
      return Buffer.from(b.map(() => ((x = (x * 1103515245 + 12345) >>> 0), x >>> 24)));
    });
    for (const args of storeCommands(dir)) expectRefused(run(args), dir, /the store is damaged: meta page 0 /);
    const v = run(["store", "verify", "--db", dir]);
    expect([v.status, v.signal]).toEqual([1, null]);
    expect(v.stdout).toMatch(new RegExp(`^inconsistent: --db ${dir}: the store is damaged: meta page 0 `));
  });

  it("a truncated data.mdb (a real store cut in half) is refused before LMDB maps it (no bus error)", () => {
    const dir = damaged("truncated", (b) => b.subarray(0, b.length / 2));
    for (const args of storeCommands(dir)) expectRefused(run(args), dir, /the store is damaged: data\.mdb is truncated: \d+ bytes, but its meta page says it uses \d+ pages of 4096 bytes/);
  });

  it("a 0-byte data.mdb (a crash before LMDB's first meta write) is an empty store: read commands exit 2 'no store there', replay --db fills it", () => {
    const dir = join(root, "zero-bytes");
    mkdirSync(dir);
    writeFileSync(join(dir, "data.mdb"), "");
    for (const args of [["state", "dump", "--db", dir], ["store", "verify", "--db", dir]]) {
      const r = run(args);
      expectRefused(r, dir, /no store there \(data\.mdb is empty/);
    }
    const r = run(["replay", FIXTURE, "--db", dir, "--quiet"]);
    expect([r.status, r.signal], r.stderr).toEqual([0, null]);
    expect(r.stdout).toMatch(/: ok; from genesis, 3 blocks/);
    expect(run(["store", "verify", "--db", dir]).status).toBe(0);
  });

  it("zeroed meta pages are refused", () => {
    const dir = damaged("zeroed", (b) => {
      b.fill(0, 0, 2 * metaAt(b, 1));
      return b;
    });
    for (const args of storeCommands(dir)) expectRefused(run(args), dir, /the store is damaged: meta page 0 is not marked as a meta page/);
  });

  it("a page in the middle overwritten passes the cheap check; commands exit 2 with LMDB's finding, store verify exits 1", () => {
    // The main B-tree's root page (named by the newer meta), zeroed: LMDB finds it the wrong type.
    const dir = damaged("mid-file", (b) => {
      const rootPage = Number(b.readBigUInt64LE(newerMeta(b) + 24 + 24 + 48 + 40));
      b.fill(0, rootPage * 4096, (rootPage + 1) * 4096);
      return b;
    });
    for (const args of storeCommands(dir)) expectRefused(run(args), dir, /the store is damaged: (LMDB cannot open the store: )?MDB_[A-Z_]+: /);
    const v = run(["store", "verify", "--db", dir]);
    expect([v.status, v.signal]).toEqual([1, null]);
    expect(v.stdout).toMatch(new RegExp(`^inconsistent: --db ${dir}: the store is damaged: .*MDB_CORRUPTED`));
  });
});

describe("cbqs store verify --db <dir>", () => {
  it("store verify on a good store: exit 0, ok listing what was checked", () => {
    const v = run(["store", "verify", "--db", good]);
    expect(v.status, v.stderr).toBe(0);
    expect(v.stdout).toMatch(/^ok: --db .*: format, genesis record, 4 block records .*, 4 block-hash and 18 transaction index entries .*, \d+ undo rows of 3 blocks \(index and rows both ways, each decoded\), state root rebuilt from \d+ operations = block 6's state_root 0x[0-9a-f]{64}\n$/);
  });

  /** A copy of the good store with one value rewritten through LMDB directly. */
  function altered(name: string, table: string, change: (key: Buffer, value: Buffer) => Buffer | undefined): string {
    const dir = join(root, name);
    cpSync(good, dir, { recursive: true });
    const env = open({ path: dir, maxDbs: 16, noSubdir: false, compression: false });
    const t = env.openDB<Buffer, Buffer>({ name: table, encoding: "binary", keyEncoding: "binary" });
    let done = false;
    for (const { key: k, value } of t.getRange({})) {
      const v = done ? undefined : change(Buffer.from(k), Buffer.from(value));
      if (v !== undefined) {
        t.putSync(Buffer.from(k), v);
        done = true;
      }
    }
    void env.close();
    expect(done).toBe(true);
    return dir;
  }

  /** A copy of the good store with the first row of `table` that `pick` accepts deleted through LMDB directly. */
  function deleted(name: string, table: string, pick: (key: Buffer) => boolean): { dir: string; key: Buffer } {
    const dir = join(root, name);
    cpSync(good, dir, { recursive: true });
    const env = open({ path: dir, maxDbs: 16, noSubdir: false, compression: false });
    const t = env.openDB<Buffer, Buffer>({ name: table, encoding: "binary", keyEncoding: "binary" });
    const key = [...t.getKeys({})].map((k) => Buffer.from(k)).find(pick);
    expect(key).toBeDefined();
    t.removeSync(key!);
    void env.close();
    return { dir, key: key! };
  }

  it("an undo row (the reverse diff pinned reads use) altered, deleted, or a block's undo index deleted: store verify exits 1 naming it", () => {
    const heightOf = (k: Buffer) => k.readBigUInt64BE(k.length - 8);
    const bad = altered("altered-undo", "undo", (k, v) => (heightOf(k) === 5n ? Buffer.of(7, ...v) : undefined));
    const v1 = run(["store", "verify", "--db", bad]);
    expect([v1.status, v1.signal], v1.stderr).toEqual([1, null]);
    expect(v1.stdout).toMatch(new RegExp(`^inconsistent: --db ${bad}: the undo row of key 0x[0-9a-f]{108} at block 5: bad reverse-diff value\n$`));

    const row = deleted("deleted-undo", "undo", (k) => heightOf(k) === 6n);
    const v2 = run(["store", "verify", "--db", row.dir]);
    expect([v2.status, v2.signal], v2.stderr).toEqual([1, null]);
    expect(v2.stdout).toBe(`inconsistent: --db ${row.dir}: the undo index of block 6: the undo row of key ${toHexString(row.key.subarray(0, 54))} is missing\n`);

    const index = deleted("deleted-undo-index", "undokeys", (k) => k.readBigUInt64BE(0) === 5n);
    const v3 = run(["store", "verify", "--db", index.dir]);
    expect([v3.status, v3.signal], v3.stderr).toEqual([1, null]);
    expect(v3.stdout).toMatch(new RegExp(`^inconsistent: --db ${index.dir}: the undo row of key 0x[0-9a-f]{108} at block 5: not in block 5's undo index\n$`));
  });

  it("a block record altered in place (block 5's timestamp): store verify exits 1 naming block 5", () => {
    const dir = altered("altered-block", "blocks", (k, v) => {
      if (k.readBigUInt64BE(0) !== 5n) return undefined;
      v.writeUInt8(v.readUInt8(8 + 8 + 7) ^ 1, 8 + 8 + 7); // log size (8), height (8), the timestamp's last byte
      return v;
    });
    const v = run(["store", "verify", "--db", dir]);
    expect([v.status, v.signal], v.stderr).toEqual([1, null]);
    expect(v.stdout).toBe(`inconsistent: --db ${dir}: block 5: block_hash does not match its header\n`);
  });

  it("a stored operation altered in place: store verify exits 1 on the rebuilt state root", () => {
    const dir = altered("altered-op", "ops", (_k, v) => {
      if (v[0] !== 0xd2 || v.length <= 1 + 54) return undefined; // an Update: context, 54-byte key, value
      v.writeUInt8(v.readUInt8(v.length - 1) ^ 1, v.length - 1);
      return v;
    });
    const v = run(["store", "verify", "--db", dir]);
    expect([v.status, v.signal], v.stderr).toEqual([1, null]);
    // Opening does not notice (it trusts the stored MMR nodes): the rebuild re-hashes every operation.
    expect(run(["state", "dump", "--db", dir]).status).toBe(0);
    expect(v.stdout).toMatch(new RegExp(`^inconsistent: --db ${dir}: the state root rebuilt from the stored operations, 0x[0-9a-f]{64}, is not block 6's state_root 0x`));
  });
});

/** The store's head height and state_root, read by the CLI. */
function headOf(dir: string): { height: string; state_root: string } {
  const r = run(["state", "dump", "--db", dir]);
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { height: string; state_root: string };
}

function expectLeftAtPrevious(r: SpawnSyncReturns<string>, dir: string): void {
  expect([r.status, r.signal], r.stderr).toEqual([2, null]);
  const m = new RegExp(`^cbqs: error: --db ${dir}: (the disk is full \\(\\d+ bytes free\\): )?block (\\d+) could not be written \\([^)]+\\); the store is left at block (\\d+)$`).exec(r.stderr.trim());
  expect(m, r.stderr).not.toBeNull();
  const [failed, left] = [m![2]!, m![3]!];
  const heights = ["0", ...fixture.blocks.map((b) => b.height)];
  expect(heights.indexOf(failed)).toBe(heights.indexOf(left) + 1);
  // Reopened: at the previous block, whose state_root is the fixture's for that height.
  const head = headOf(dir);
  expect(head.height).toBe(left);
  if (left !== "0") expect(head.state_root).toBe(fixture.blocks.find((b) => b.height === left)!.state_root);
  const v = run(["store", "verify", "--db", dir]);
  expect(v.status, v.stdout).toBe(0);
}

describe("resource exhaustion during a commit (CIP-4 §6.4)", () => {
  it("replay --db whose writes the OS refuses (a 100 KiB file-size limit: sh counts 512-byte blocks) exits 2 and leaves the store at the previous block (CIP-4 §6.4)", () => {
    const dir = join(root, "limited");
    // RLIMIT_FSIZE: LMDB's page write comes up short, as on a full disk (node ignores SIGXFSZ).
    expectLeftAtPrevious(run(["replay", FIXTURE, "--db", dir, "--quiet"], { shell: "ulimit -f 200" }), dir);
    // With room again, the same command resumes after that block and finishes.
    const again = run(["replay", FIXTURE, "--db", dir, "--quiet"]);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/: ok; resumed after height \d+/);
  });

  it("a node whose store refuses a produced block (a file-size limit) stops with exit 2, the store at the previous block (CIP-4 §6.4)", () => {
    const dir = join(root, "node-limited");
    const genesis = join(root, "genesis.json");
    writeFileSync(genesis, Buffer.from((JSON.parse(readFileSync(FIXTURE, "utf8")) as { genesis: { source: string } }).genesis.source.slice(2), "hex"));
    const r = spawnSync("sh", ["-c", `ulimit -f 200; exec "$0" "$@"`, process.execPath, CLI, "node", "--genesis", genesis, "--db", dir, "--port", "0", "--block-time", "0.02", "--quiet"], { encoding: "utf8", timeout: 120_000 });
    expect([r.status, r.signal], r.stderr).toEqual([2, null]);
    const m = new RegExp(`\\ncbqs: error: --db ${dir}: block (\\d+) could not be written \\([^\\n]+\\); the store is left at block (\\d+)\\n$`).exec(r.stderr);
    expect(m, r.stderr).not.toBeNull();
    expect(BigInt(m![1]!)).toBe(BigInt(m![2]!) + 1n);
    expect(headOf(dir).height).toBe(m![2]);
    expect(run(["store", "verify", "--db", dir]).status).toBe(0);
  });

  // A real full file system needs a mount (root, as in CI). Outside CI a machine that cannot mount
  // skips it; in CI it must run, so there it fails with the reason instead of passing by skipping.
  const mountable = process.getuid?.() === 0 && spawnSync("sh", ["-c", `d=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs "$d" && umount "$d" && rmdir "$d"`]).status === 0;
  it("replay --db on a full 100 KiB tmpfs exits 2 saying the disk is full, the store at the previous block (CIP-4 §6.4)", () => {
    if (!mountable) throw new Error("this test needs root and a tmpfs mount (mount -t tmpfs), which this machine refused (run the suite as root, as .ci/run does)");
    const mnt = join(root, "tmpfs");
    mkdirSync(mnt);
    expect(spawnSync("mount", ["-t", "tmpfs", "-o", "size=100k", "tmpfs", mnt]).status).toBe(0);
    try {
      const dir = join(mnt, "s");
      const r = run(["replay", FIXTURE, "--db", dir, "--quiet"]);
      expect(r.stderr).toMatch(/: the disk is full \(\d+ bytes free\): block \d+ could not be written/);
      expectLeftAtPrevious(r, dir);
    } finally {
      spawnSync("umount", [mnt]);
    }
  });
});

describe("read commands open the store read-only", () => {
  // lock.mdb is LMDB's reader table, which every reader (read-only ones too) writes its slot
  // into; what must not change is the data file and the set of files (no lock or pid left).
  const listing = (dir: string) => [readdirSync(dir).sort(), readFileSync(join(dir, "data.mdb")).toString("base64")];
  const readCommands = (dir: string): string[][] => [
    ["state", "dump", "--db", dir],
    ["prove-state", "--db", dir, "--key", key],
    ["snapshot", "export", "--db", dir, "-o", join(root, "ro.snap")],
    ["export", "--db", dir, "-o", join(root, "ro.fixture.json"), "--quiet"],
    ["store", "verify", "--db", dir],
  ];

  it("state dump, prove-state, snapshot export, export and store verify leave data.mdb byte-identical and no file behind", () => {
    const dir = join(root, "untouched");
    cpSync(good, dir, { recursive: true });
    const before = listing(dir);
    for (const args of readCommands(dir)) {
      const r = run(args);
      expect(r.status, `${args.join(" ")}: ${r.stderr}`).toBe(0);
      expect(listing(dir)).toEqual(before);
    }
  });

  // Root ignores file permissions, so as root the commands run as `nobody` (uid 65534); any other
  // user is already bound by the modes, and runs them as itself.
  const reader = process.getuid?.() === 0 ? { uid: 65534 } : {};
  it("a store its user cannot write (chmod a-w; read as uid 65534 when the suite runs as root) can be read by every read command", () => {
    const dir = join(root, "readonly");
    cpSync(good, dir, { recursive: true });
    rmSync(join(dir, "lock.mdb"), { force: true });
    chmodSync(root, 0o755);
    for (const f of readdirSync(dir)) chmodSync(join(dir, f), 0o444);
    chmodSync(dir, 0o555);
    const out = join(root, "out");
    mkdirSync(out, { mode: 0o777 });
    chmodSync(out, 0o777);
    for (const args of readCommands(dir).map((a) => a.map((x) => (x.startsWith(join(root, "ro.")) ? join(out, x.slice(root.length + 1)) : x)))) {
      const r = run(args, reader);
      expect(r.status, `${args.join(" ")}: ${r.stderr}`).toBe(0);
    }
    // A write command as that user is refused, naming --db.
    expectRefused(run(["replay", FIXTURE, "--db", dir, "--quiet"], reader), dir, /cannot lock the store: EACCES/);
  });
});

describe("smaller refusals", () => {
  it("--db <file> is 'not a directory' (exit 2), for write and read commands", () => {
    const file = join(root, "a-file");
    writeFileSync(file, "x");
    for (const args of [...storeCommands(file), ["store", "verify", "--db", file], ["snapshot", "import", join(root, "none.snap"), "--db", file]]) {
      expectRefused(run(args), file, /not a directory$/);
    }
  });
});
