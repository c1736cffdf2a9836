// Snapshot import and periodic snapshots (src/node/snapshot.ts, state/lmdb/snapshot.ts) in
// process, on a real disk: each check of the import reached on its own — a snapshot rewritten
// with a correct checksum gets past the checksum, so the check behind it is the one that refuses.
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { concatBytes, u32BE } from "../../src/bytes.js";
import { keccak256 } from "../../src/crypto/hash.js";
import { readFixture } from "../../src/harness/documents.js";
import { CbqsNode } from "../../src/node/chain-node.js";
import { exportSnapshot, importSnapshot, SnapshotError, snapshotEvery } from "../../src/node/snapshot.js";
import { LmdbChainDb } from "../../state/lmdb/chain-db.js";
import { decodeBlock, encodeBlock } from "../../state/lmdb/records.js";
import { UPDATE_CONTEXT } from "../../state/qmdb/operation.js";
import { STATE_KEY_LENGTH } from "../../state/kv/interface.js";

const root = mkdtempSync(join(tmpdir(), "cbqs-node-snapshot-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const fresh = () => join(root, `d${dirs++}`);

const MAGIC_LENGTH = "CBQS-SNAPSHOT/1\n".length;
const END = 255;

interface Rec {
  tag: number;
  body: Uint8Array;
}

/** The records of a snapshot file, the end record left out. */
function records(bytes: Uint8Array): Rec[] {
  const out: Rec[] = [];
  const view = Buffer.from(bytes);
  for (let off = MAGIC_LENGTH; ; ) {
    const tag = view[off]!;
    const length = view.readUInt32BE(off + 1);
    if (tag === END) return out;
    out.push({ tag, body: bytes.slice(off + 5, off + 5 + length) });
    off += 5 + length;
  }
}

/** A snapshot file of `recs` with a correct end-record checksum (what a careful forger writes). */
function write(file: string, magic: Uint8Array, recs: Rec[]): void {
  const parts = [magic, ...recs.flatMap((r) => [Uint8Array.of(r.tag), u32BE(r.body.length), r.body]), Uint8Array.of(END), u32BE(32)];
  const hashed = concatBytes(...parts);
  writeFileSync(file, concatBytes(hashed, createHash("sha256").update(hashed).digest()));
}

describe("issue 22: snapshot import checks, each reached on its own (CIP-4 §8.1)", () => {
  const FIXTURE = "fixtures/corpus/create-quote.json";
  const file = join(root, "head.cbqs");
  let bytes: Uint8Array;
  beforeAll(() => {
    const db = LmdbChainDb.open(fresh());
    CbqsNode.open(db, { kind: "fixture", fixture: readFixture(FIXTURE) });
    exportSnapshot(db, file);
    db.close();
    bytes = readFileSync(file);
    // The untouched file, rewritten by the helper, imports: the helper itself forges nothing.
    const same = join(root, "same.cbqs");
    write(same, bytes.subarray(0, MAGIC_LENGTH), records(bytes));
    expect(readFileSync(same).equals(Buffer.from(bytes))).toBe(true);
  });

  it("issue 22: the end record's checksum is compared, not only its length: a snapshot whose digest alone is wrong is refused as corrupt (CIP-4 §8.1)", () => {
    const corrupt = join(root, "digest.cbqs");
    const flipped = Buffer.from(bytes);
    flipped[flipped.length - 1]! ^= 1; // the digest itself: every record before it is intact
    writeFileSync(corrupt, flipped);
    const target = fresh();
    expect(() => importSnapshot(corrupt, target)).toThrow(new SnapshotError("checksum mismatch: the snapshot is corrupt"));
    expect(existsSync(target)).toBe(false);
  });

  it("issue 22: the rebuilt state root is checked against block H's state_root: a snapshot with one operation changed and a correct checksum is refused (CIP-4 §8.1)", () => {
    const recs = records(bytes);
    const ops = recs.find((r) => r.tag === 4)!;
    // The first Update operation: flip the last byte of its key (a valid key still, another one).
    const b = Buffer.from(ops.body);
    for (let off = 8; off < b.length; off += 4 + b.readUInt32BE(off)) {
      if (b[off + 4] === UPDATE_CONTEXT) {
        ops.body[off + 4 + STATE_KEY_LENGTH]! ^= 1;
        break;
      }
    }
    const forged = join(root, "ops.cbqs");
    write(forged, bytes.subarray(0, MAGIC_LENGTH), recs);
    const target = fresh();
    expect(() => importSnapshot(forged, target)).toThrow(SnapshotError);
    expect(() => importSnapshot(forged, target)).toThrow(/the rebuilt state root 0x[0-9a-f]{64} is not block \d+'s state_root/);
    expect(existsSync(target)).toBe(false);
  });

  it("issue 22: block H's logs_root is checked against its receipts' events: a snapshot whose block record carries another logs_root (checksum correct) is refused (CIP-4 §8.1)", () => {
    const recs = records(bytes);
    const rec = recs.find((r) => r.tag === 2)!;
    const block = decodeBlock(rec.body);
    // The block hash is computed from the roots of the block's own receipts: only this check sees the field.
    rec.body = encodeBlock({ ...block, logs_root: keccak256(block.logs_root) });
    const forged = join(root, "logs-root.cbqs");
    write(forged, bytes.subarray(0, MAGIC_LENGTH), recs);
    const target = fresh();
    expect(() => importSnapshot(forged, target)).toThrow(new SnapshotError(`block ${block.height}: logs_root does not match its transactions and receipts`));
    expect(existsSync(target)).toBe(false);
  });
});

describe("issue 22: periodic snapshots", () => {
  it("issue 22: a snapshot is written at the first block at or above each multiple of the interval, also when that multiple is a skipped height (CIP-4 §11 SNAPSHOT_INTERVAL_BLOCKS)", () => {
    // Heights 1, 2, 5, 8, 10, 12, 20, 21, 30; every 4 blocks: multiples 4, 16, 24 and 28 have no block.
    const dir = fresh();
    const db = LmdbChainDb.open(dir, { afterCommit: snapshotEvery(dir, 4n) });
    CbqsNode.open(db, { kind: "fixture", fixture: readFixture("fixtures/corpus/pause-accounting.json") });
    db.close();
    const heights = readdirSync(join(dir, "snapshots")).map((f) => Number(/^snapshot-(\d+)\.cbqs$/.exec(f)![1])).sort((a, b) => a - b);
    expect(heights).toEqual([5, 8, 12, 20, 30]);
  });
});
