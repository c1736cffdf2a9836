// The cheap checks of a data.mdb before LMDB maps it (state/lmdb/check.ts), run in process on a
// real store's file with one field damaged at a time: each refusal is reached alone and names its
// rule. (test/cli/store.test.ts runs the commands on damaged stores; the compiled CLI there cannot
// show which check refused.)
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LmdbChainDb } from "../../../state/lmdb/chain-db.js";
import { checkDataFile } from "../../../state/lmdb/check.js";
import { DamagedStoreError } from "../../../state/lmdb/errors.js";
import { block, genesis } from "../chain-db/conformance.js";

// MDB_meta field offsets within a meta page (the layout comment of state/lmdb/check.ts).
const FLAGS = 18;
const MAGIC = 24;
const VERSION = 28;
const PAGE_SIZE = 24 + 24;
const ROOTS = [24 + 24 + 40, 24 + 24 + 48 + 40];
const LAST_PAGE = 24 + 120;
const TXNID = 24 + 128;

let dir: string;
let original: Buffer;
let pageSize: number;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "cbqs-check-"));
  const db = LmdbChainDb.open(join(dir, "store"));
  genesis(db);
  block(db, 1n, []);
  db.close();
  original = readFileSync(join(dir, "store", "data.mdb"));
  pageSize = original.readUInt32LE(PAGE_SIZE);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The meta pages in the order LMDB weighs them: [older, newer] by txnid. */
function metas(bytes: Buffer): [number, number] {
  const t0 = bytes.readBigUInt64LE(TXNID);
  const t1 = bytes.readBigUInt64LE(pageSize + TXNID);
  return t1 > t0 ? [0, pageSize] : [pageSize, 0];
}

function check(damage: (b: Buffer) => Buffer | void): string | undefined {
  const copy = Buffer.from(original);
  const file = join(dir, `data-${Math.random().toString(16).slice(2)}.mdb`);
  writeFileSync(file, damage(copy) ?? copy);
  try {
    checkDataFile(file);
    return undefined;
  } catch (err) {
    expect(err).toBeInstanceOf(DamagedStoreError);
    return (err as Error).message.replace(/^the store is damaged: /, "");
  } finally {
    rmSync(file);
  }
}

describe("the data.mdb checks before LMDB maps it", () => {
  it("a real store's file passes, and so does an empty (0-byte) one", () => {
    expect(check(() => {})).toBeUndefined();
    expect(check(() => Buffer.alloc(0))).toBeUndefined();
  });

  // Counted in /proc/self/fd: outside CI a machine without it skips this; in CI it must run, so
  // there it fails with the reason instead of passing by skipping.
  const procFds = existsSync("/proc/self/fd");
  it("the file is closed after every check, passed or refused (no descriptor leaks)", () => {
    if (!procFds) throw new Error("this test counts open descriptors in /proc/self/fd, which this machine does not have (Linux only)");
    const open = () => readdirSync("/proc/self/fd").length;
    const before = open();
    for (let i = 0; i < 20; i++) {
      check(() => {});
      check((b) => b.subarray(0, 100));
      check((b) => void b.writeUInt32LE(0, MAGIC));
    }
    expect(open()).toBe(before);
  });

  it("each meta page must be marked as one, carry the magic number and data version 2", () => {
    for (const [at, which] of [[0, 0], [pageSize, 1]] as const) {
      expect(check((b) => void b.writeUInt16LE(b.readUInt16LE(at + FLAGS) & ~0x08, at + FLAGS))).toContain(`meta page ${which} is not marked as a meta page`);
      expect(check((b) => void b.writeUInt32LE(0xdeadbeef, at + MAGIC))).toContain(`meta page ${which} has no LMDB magic number`);
      expect(check((b) => void b.writeUInt32LE(3, at + VERSION))).toContain(`meta page ${which} has LMDB data version 3, not 2`);
    }
    // Only the low 16 bits are the data version (the high ones are flags).
    expect(check((b) => void b.writeUInt32LE(0x10002, VERSION))).toBeUndefined();
  });

  it("the page size is a power of two in 512..65,536, the same in both meta pages", () => {
    for (const size of [0, 256, 4095, 4097, 131_072]) expect(check((b) => void b.writeUInt32LE(size, PAGE_SIZE)), String(size)).toBe(`meta page 0 gives page size ${size}`);
    expect(check((b) => void b.writeUInt32LE(8192, pageSize + PAGE_SIZE))).toBe(`the meta pages disagree on the page size (${pageSize}, 8192)`);
    // Inside the bounds the check goes on to the second meta page (which then disagrees).
    for (const size of [512, 65_536]) expect(check((b) => void b.writeUInt32LE(size, PAGE_SIZE)), String(size)).not.toContain("gives page size");
  });

  it("a file too short for its meta pages is truncated", () => {
    expect(check((b) => b.subarray(0, 100))).toBe("data.mdb is truncated (100 bytes, too short for its meta pages)");
    expect(check((b) => b.subarray(0, pageSize + 100))).toBe(`data.mdb is truncated (${pageSize + 100} bytes, too short for its meta pages)`);
  });

  it("the newer meta page's last page must lie inside the file (and above the meta pages); the older one's is not consulted", () => {
    const pages = original.length / pageSize;
    const [older, newer] = metas(original);
    const truncated = (last: bigint) => `data.mdb is truncated: ${original.length} bytes, but its meta page says it uses ${last + 1n} pages of ${pageSize} bytes`;
    expect(check((b) => void b.writeBigUInt64LE(BigInt(pages), newer + LAST_PAGE))).toBe(truncated(BigInt(pages)));
    expect(check((b) => void b.writeBigUInt64LE(0n, newer + LAST_PAGE))).toBe(truncated(0n));
    // Last page 1 (meta pages only, as in a fresh environment) is not truncation: the roots are checked next.
    expect(check((b) => void b.writeBigUInt64LE(1n, newer + LAST_PAGE))).toMatch(/^the meta page names root page \d+, outside pages 2\.\.1$/);
    expect(check((b) => void b.writeBigUInt64LE(BigInt(pages - 1), newer + LAST_PAGE))).toBeUndefined();
    expect(check((b) => void b.writeBigUInt64LE(BigInt(pages), older + LAST_PAGE))).toBeUndefined();
    // A cut file: its meta page still says the full length.
    const last = original.readBigUInt64LE(newer + LAST_PAGE);
    const cut = Number(last) * pageSize;
    expect(check((b) => b.subarray(0, cut))).toBe(`data.mdb is truncated: ${cut} bytes, but its meta page says it uses ${last + 1n} pages of ${pageSize} bytes`);
    // Swapping which meta is newer (by txnid) swaps which one is checked.
    expect(
      check((b) => {
        b.writeBigUInt64LE(BigInt(pages), older + LAST_PAGE);
        b.writeBigUInt64LE(b.readBigUInt64LE(newer + TXNID) + 1n, older + TXNID);
      }),
    ).toBe(truncated(BigInt(pages)));
    // Equal txnids: page 0 is taken (LMDB's own rule picks the second only when its txnid is larger).
    expect(
      check((b) => {
        b.writeBigUInt64LE(b.readBigUInt64LE(TXNID), pageSize + TXNID);
        b.writeBigUInt64LE(BigInt(pages), pageSize + LAST_PAGE);
        b.writeBigUInt64LE(BigInt(pages - 1), LAST_PAGE);
      }),
    ).toBeUndefined();
  });

  it("each root page named by the newer meta lies in 2..last page, or is ~0 (an empty database)", () => {
    const [, newer] = metas(original);
    const last = original.readBigUInt64LE(newer + LAST_PAGE);
    for (const offset of ROOTS) {
      for (const root of [0n, 1n, last + 1n]) {
        expect(check((b) => void b.writeBigUInt64LE(root, newer + offset)), `${offset}/${root}`).toBe(`the meta page names root page ${root}, outside pages 2..${last}`);
      }
      for (const root of [2n, last, (1n << 64n) - 1n]) expect(check((b) => void b.writeBigUInt64LE(root, newer + offset)), `${offset}/${root}`).toBeUndefined();
    }
  });
});
