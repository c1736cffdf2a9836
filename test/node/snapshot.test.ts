// Snapshot import and periodic snapshots (src/store-tools/snapshot.ts, state/lmdb/snapshot.ts) in
// process, on a real disk: each check of the import reached on its own — a snapshot rewritten
// with a correct checksum gets past the checksum, so the check behind it is the one that refuses.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { concatBytes, toHex, u32BE } from "../../src/bytes.js";
import { chainInstanceId } from "../../src/codec/derive.js";
import { keccak256 } from "../../src/crypto/hash.js";
import { readFixture } from "../../src/harness/documents.js";
import { CbqsNode } from "../../src/chain-node/chain-node.js";
import { AnchorMismatch, exportSnapshot, importSnapshot, importSnapshotSteps, SnapshotError, snapshotEvery } from "../../src/store-tools/snapshot.js";
import { finish } from "../../src/steps.js";
import { LmdbChainDb } from "../../state/lmdb/chain-db.js";
import { DamagedStoreError, StoreError } from "../../state/lmdb/errors.js";
import type { BlockRecord, GenesisRecord } from "../../state/chain-db/chain-db.js";
import { decodeBlock, decodeGenesis, encodeBlock, encodeGenesis } from "../../state/lmdb/records.js";
import { rebuildSnapshotState } from "../../state/lmdb/snapshot.js";
import { UPDATE_CONTEXT } from "../../state/qmdb/operation.js";
import { STATE_KEY_LENGTH } from "../../state/kv/interface.js";
import { block, genesis, key, value } from "../state/chain-db/conformance.js";

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

describe("snapshot import checks, each reached on its own (CIP-4 §8.1)", () => {
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

  it("the end record's checksum is compared, not only its length: a snapshot whose digest alone is wrong is refused as corrupt (CIP-4 §8.1)", () => {
    const corrupt = join(root, "digest.cbqs");
    const flipped = Buffer.from(bytes);
    flipped[flipped.length - 1]! ^= 1; // the digest itself: every record before it is intact
    writeFileSync(corrupt, flipped);
    const target = fresh();
    expect(() => importSnapshot(corrupt, target)).toThrow(new SnapshotError("checksum mismatch: the snapshot is corrupt"));
    expect(existsSync(target)).toBe(false);
  });

  it("the rebuilt state root is checked against block H's state_root: a snapshot with one operation changed and a correct checksum is refused (CIP-4 §8.1)", () => {
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

  it("block H's logs_root is checked against its receipts' events: a snapshot whose block record carries another logs_root (checksum correct) is refused (CIP-4 §8.1)", () => {
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

describe("the snapshot reader's refusals, each reached alone with a correct checksum (state/lmdb/snapshot.ts)", () => {
  const file = join(root, "reader.cbqs");
  let bytes: Uint8Array;
  let magic: Uint8Array;
  beforeAll(() => {
    const db = LmdbChainDb.open(fresh());
    CbqsNode.open(db, { kind: "fixture", fixture: readFixture("fixtures/corpus/create-quote.json") });
    exportSnapshot(db, file);
    db.close();
    bytes = readFileSync(file);
    magic = bytes.subarray(0, MAGIC_LENGTH);
  });

  /** The snapshot's records with `edit` applied, written with a correct checksum. */
  const forged = (edit: (recs: Rec[]) => Rec[]): Uint8Array => {
    const out = join(root, "forged.cbqs");
    write(out, magic, edit(records(bytes).map((r) => ({ tag: r.tag, body: r.body.slice() }))));
    return readFileSync(out);
  };
  const qmdb = (recs: Rec[]) => recs.find((r) => r.tag === 3)!;
  const ops = (recs: Rec[]) => recs.find((r) => r.tag === 4)!;
  const u64 = (n: bigint) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(n);
    return new Uint8Array(b);
  };
  const sizeOf = (recs: Rec[]) => Buffer.from(qmdb(recs).body).readBigUInt64BE(0);
  const floorOf = (recs: Rec[]) => Buffer.from(qmdb(recs).body).readBigUInt64BE(8);

  const CASES: Array<[what: string, snapshot: () => Uint8Array, message: string | RegExp]> = [
    ["another magic", () => concatBytes(new TextEncoder().encode("CBQS-SNAPSHOT/2\n"), bytes.subarray(MAGIC_LENGTH)), "not a cbqs snapshot (bad magic)"],
    ["a file cut inside a record", () => bytes.subarray(0, MAGIC_LENGTH + 40), "the snapshot is truncated"],
    ["a file cut before its end record", () => forged((r) => r).subarray(0, bytes.length - 37), "the snapshot is truncated"],
    ["a record longer than the bound", () => concatBytes(magic, Uint8Array.of(1), u32BE((64 << 20) + 1)), `record of ${(64 << 20) + 1} bytes exceeds the ${64 << 20}-byte bound`],
    ["an end record of 31 bytes", () => {
      const head = bytes.subarray(0, bytes.length - 37);
      const hashed = concatBytes(head, Uint8Array.of(END), u32BE(31));
      return concatBytes(hashed, createHash("sha256").update(hashed).digest().subarray(0, 31));
    }, "checksum mismatch: the snapshot is corrupt"],
    ["a byte after the end record", () => concatBytes(bytes, Uint8Array.of(0)), "bytes after the end record"],
    ["the block record before the genesis record", () => forged(([g, b, ...rest]) => [b!, g!, ...rest]), "expected the genesis record, found tag 2"],
    ["no block record", () => forged(([g, , ...rest]) => [g!, ...rest]), "expected the block record, found tag 3"],
    ["a genesis record that does not decode", () => forged(([g, ...rest]) => [{ tag: 1, body: g!.body.subarray(0, 3) }, ...rest]), /^malformed record: /],
    // The record's integers come from the file: one out of range is the snapshot's fault, not a damaged store's.
    ["a qmdb record whose size is above 2^53", () => forged((recs) => (qmdb(recs).body = concatBytes(Uint8Array.of(0xff), qmdb(recs).body.subarray(1)), recs)), "malformed record: stored integer exceeds 2^53"],
    ["a qmdb record of 15 bytes", () => forged((recs) => (qmdb(recs).body = qmdb(recs).body.subarray(0, 15), recs)), "qmdb record is truncated"],
    // Exactly the fixed fields and no digest: the bound says truncated only below 16 bytes.
    ["a qmdb record of exactly 16 bytes", () => forged((recs) => (qmdb(recs).body = qmdb(recs).body.subarray(0, 16), recs)), /^qmdb record: floor \d+, size \d+ and 0 pinned digests do not fit$/],
    ["no qmdb record", () => forged((recs) => recs.filter((r) => r.tag !== 3)), "expected the qmdb record, found tag 4"],
    ["no ops record", () => forged((recs) => recs.filter((r) => r.tag !== 4)), `expected the ops record, found tag ${END}`],
    ["an ops record more than the log holds", () => forged((recs) => [...recs.slice(0, -1), ops(recs), recs.at(-1)!]), "expected the end record, found tag 4"],
    // Its header alone is in order; the log then still needs its operations.
    ["an ops record with no operation", () => forged((recs) => (ops(recs).body = ops(recs).body.subarray(0, 8), recs)), `expected the ops record, found tag ${END}`],
    ["an empty operation at the very end of its record", () => forged((recs) => {
      const o = ops(recs);
      o.body = concatBytes(o.body.subarray(0, 8), u32BE(0));
      return recs;
    }), /^malformed record: /],
    ["an operation two bytes longer than what is left", () => forged((recs) => {
      const o = ops(recs);
      o.body = concatBytes(o.body.subarray(0, 8), u32BE(3), Uint8Array.of(0));
      return recs;
    }), "ops record overruns"],
    ["a floor at the log size", () => forged((recs) => {
      const q = qmdb(recs);
      // As many pinned digests as that floor has peaks (one per set bit): only the bound refuses it.
      const size = sizeOf(recs);
      const peaks = size.toString(2).split("").filter((bit) => bit === "1").length;
      q.body = concatBytes(u64(size), u64(size), new Uint8Array(32 * peaks));
      return recs;
    }), /^qmdb record: floor (\d+), size \1 and \d+ pinned digests do not fit$/],
    ["one pinned digest too many", () => forged((recs) => {
      const q = qmdb(recs);
      q.body = concatBytes(q.body, new Uint8Array(32));
      return recs;
    }), /^qmdb record: floor \d+, size \d+ and \d+ pinned digests do not fit$/],
    // A floor of 1 has one peak: the count of digests the message names is the record's own.
    ["two pinned digests for a floor of 1", () => forged((recs) => {
      const q = qmdb(recs);
      q.body = concatBytes(u64(sizeOf(recs)), u64(1n), new Uint8Array(64));
      return recs;
    }), /^qmdb record: floor 1, size \d+ and 2 pinned digests do not fit$/],
    ["an ops record starting elsewhere than the floor", () => forged((recs) => {
      const o = ops(recs);
      o.body = concatBytes(u64(floorOf(recs) + 1n), o.body.subarray(8));
      return recs;
    }), /^ops record out of order \(expected location \d+\)$/],
    ["an ops record of 7 bytes", () => forged((recs) => (ops(recs).body = ops(recs).body.subarray(0, 7), recs)), /^ops record out of order \(expected location \d+\)$/],
    ["an ops record ending inside a length", () => forged((recs) => {
      const o = ops(recs);
      o.body = concatBytes(o.body.subarray(0, 8), Uint8Array.of(0, 0));
      return recs;
    }), "ops record is truncated"],
    ["an operation longer than its record", () => forged((recs) => {
      const o = ops(recs);
      o.body = concatBytes(o.body.subarray(0, 8), u32BE(1000), new Uint8Array(10));
      return recs;
    }), "ops record overruns"],
    ["an operation beyond the log size", () => forged((recs) => {
      const o = ops(recs);
      o.body = concatBytes(o.body, u32BE(1), Uint8Array.of(0));
      return recs;
    }), "ops record overruns"],
    ["an operation that does not decode", () => forged((recs) => {
      const o = ops(recs);
      o.body = concatBytes(o.body.subarray(0, 8), u32BE(1), Uint8Array.of(0xee));
      return recs;
    }), /^malformed record: /],
    ["a log whose last operation is not a commit", () => forged((recs) => {
      const q = qmdb(recs);
      const o = ops(recs);
      const b = Buffer.from(o.body);
      // Drop the last operation (the block's commit) and shrink the log size with it.
      let off = 8;
      let last = 8;
      while (off < b.length) {
        last = off;
        off += 4 + b.readUInt32BE(off);
      }
      o.body = o.body.subarray(0, last);
      q.body = concatBytes(u64(sizeOf(recs) - 1n), q.body.subarray(8));
      return recs;
    }), "the last operation is not a commit"],
  ];

  for (const [what, snapshot, message] of CASES) {
    it(`${what}: refused, nothing left in the target`, () => {
      const path = join(root, "case.cbqs");
      writeFileSync(path, snapshot());
      const target = fresh();
      let error: unknown;
      try {
        importSnapshot(path, target);
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(SnapshotError);
      if (typeof message === "string") expect((error as Error).message).toBe(message);
      else expect((error as Error).message).toMatch(message);
      expect(existsSync(target)).toBe(false);
    });
  }

  it("the untouched snapshot imports (each case above is one change away from it); block H's transactions are in the imported store's index", () => {
    const target = fresh();
    expect(importSnapshot(file, target).height).toBe(6n);
    const db = LmdbChainDb.open(target);
    const head = db.head()!;
    expect(head.receipts.length).toBeGreaterThan(0);
    head.receipts.forEach((r, index) => expect(db.txLocation(r.tx_hash)).toEqual({ height: 6n, index }));
    db.close();
  });
});

describe("the chain checks of a snapshot import, each reached alone (src/store-tools/snapshot.ts)", () => {
  const head = join(root, "chain-head.cbqs");
  const zero = join(root, "chain-zero.cbqs");
  let source: string;
  beforeAll(() => {
    source = fresh();
    const db = LmdbChainDb.open(source);
    CbqsNode.open(db, { kind: "fixture", fixture: readFixture("fixtures/corpus/create-quote.json") });
    exportSnapshot(db, head);
    exportSnapshot(db, zero, 0n);
    db.close();
  });

  /** `file`'s snapshot with its genesis and block records edited, written with a correct checksum. */
  const forged = (file: string, edit: (g: GenesisRecord, b: BlockRecord) => [GenesisRecord, BlockRecord]): string => {
    const bytes = readFileSync(file);
    const recs = records(bytes);
    const [g, b] = edit(decodeGenesis(recs[0]!.body), decodeBlock(recs[1]!.body));
    recs[0]!.body = encodeGenesis(g);
    recs[1]!.body = encodeBlock(b);
    const out = join(root, `chain-forged-${dirs}.cbqs`);
    write(out, bytes.subarray(0, MAGIC_LENGTH), recs);
    return out;
  };
  const refusal = (file: string, target = fresh()): string => {
    try {
      importSnapshot(file, target);
    } catch (err) {
      expect(err).toBeInstanceOf(SnapshotError);
      return (err as Error).message;
    }
    throw new Error(`${file} was imported`);
  };

  it("the genesis record: chain_instance_id, a source that is no genesis, a genesis block its source does not produce", () => {
    expect(refusal(forged(head, (g, b) => [{ ...g, chain_instance_id: keccak256(g.chain_instance_id) }, b]))).toBe("chain_instance_id is not keccak256 of the genesis source");
    const notGenesis = new TextEncoder().encode("{}");
    expect(refusal(forged(head, (g, b) => [{ ...g, source: notGenesis, chain_instance_id: chainInstanceId(notGenesis) }, b]))).toMatch(/^invalid genesis: /);
    expect(refusal(forged(head, (g, b) => [{ ...g, block: { ...g.block, timestamp: g.block.timestamp + 1n } }, b]))).toBe("the genesis block is not the one its genesis source produces");
  });

  it("a snapshot of block 0: its block must be the genesis block", () => {
    expect(importSnapshot(zero, fresh()).height).toBe(0n);
    expect(refusal(forged(zero, (g, b) => [g, { ...b, timestamp: b.timestamp + 1n }]))).toBe("block 0 is not the genesis block");
  });

  it("block H: each receipt's transaction, the roots, the block hash", () => {
    // One receipt per transaction is the record format's: a block record cannot say otherwise.
    expect(() => forged(head, (g, b) => [g, { ...b, receipts: b.receipts.slice(1) }])).toThrow(RangeError);
    expect(refusal(forged(head, (g, b) => [g, { ...b, receipts: [b.receipts[1]!, b.receipts[0]!, ...b.receipts.slice(2)] }]))).toBe("block 6: receipt 0 is not for transaction 0");
    expect(refusal(forged(head, (g, b) => [g, { ...b, tx_root: keccak256(b.tx_root) }]))).toBe("block 6: tx_root does not match its transactions and receipts");
    expect(refusal(forged(head, (g, b) => [g, { ...b, receipt_root: keccak256(b.receipt_root) }]))).toBe("block 6: receipt_root does not match its transactions and receipts");
    expect(refusal(forged(head, (g, b) => [g, { ...b, timestamp: b.timestamp + 1n }]))).toBe("block 6: block_hash does not match its header");
  });

  it("block H's effective_rent_height, which its block hash does not cover, is checked against the rebuilt state (H − pause coverage); nothing is left in the target", () => {
    const target = fresh();
    expect(refusal(forged(head, (g, b) => [g, { ...b, effective_rent_height: b.effective_rent_height + 1n }]), target)).toBe(
      "block 6: effective_rent_height 7 is not the 6 its rebuilt state gives (H − pause coverage)",
    );
    expect(existsSync(target)).toBe(false);
  });

  it("the target: the same chain, another chain, a directory holding something else", () => {
    expect(refusal(head, source)).toBe(`${source} already holds this chain (head 6); import into an empty directory`);
    const other = fresh();
    const db = LmdbChainDb.open(other);
    CbqsNode.open(db, { kind: "fixture", fixture: readFixture("fixtures/corpus/governance-params.json") });
    const otherId = toHex(db.genesis()!.chain_instance_id);
    db.close();
    const ours = toHex(decodeGenesis(records(readFileSync(head))[0]!.body).chain_instance_id);
    expect(refusal(head, other)).toBe(`foreign snapshot: it is of chain ${ours}, the store in ${other} holds chain ${otherId}`);
    const cluttered = fresh();
    mkdirSync(cluttered);
    writeFileSync(join(cluttered, "notes.txt"), "x");
    expect(refusal(head, cluttered)).toBe(`${cluttered} is not empty and holds no cbqs store`);
    expect(readdirSync(cluttered)).toEqual(["notes.txt"]);
  });

  it("a target that is an empty directory, or a store that never committed its genesis (a crash before it), is replaced by the import; a file is refused as not a directory", () => {
    const empty = fresh();
    mkdirSync(empty);
    expect(importSnapshot(head, empty).height).toBe(6n);
    const unborn = fresh();
    LmdbChainDb.open(unborn).close();
    expect(readdirSync(unborn).length).toBeGreaterThan(0);
    expect(importSnapshot(head, unborn).height).toBe(6n);
    for (const dir of [empty, unborn]) {
      const db = LmdbChainDb.open(dir);
      expect(db.head()!.height).toBe(6n);
      db.close();
    }
    const file = join(root, "a-file");
    writeFileSync(file, "x");
    expect(() => importSnapshot(head, file)).toThrow(new StoreError("not a directory"));
    expect(readFileSync(file, "utf8")).toBe("x");
  });

  it("the import is built beside the target, as <dir>.import-<pid> (trailing slashes of the target dropped), and moved into place; nothing is left beside it", () => {
    const base = fresh();
    const beside = `${base}.import-${process.pid}`;
    const steps = importSnapshotSteps(head, `${base}//`);
    expect(steps.next().done).toBe(false);
    expect(existsSync(beside)).toBe(true);
    expect(existsSync(base)).toBe(false);
    expect(finish(steps).height).toBe(6n);
    expect([existsSync(beside), existsSync(base)]).toEqual([false, true]);
  });

  it("a leftover <dir>.import-<pid> of an import that was killed is cleared, not imported into", () => {
    const base = fresh();
    mkdirSync(`${base}.import-${process.pid}`);
    writeFileSync(join(`${base}.import-${process.pid}`, "stale"), "x");
    expect(importSnapshot(head, base).height).toBe(6n);
    expect(readdirSync(base)).not.toContain("stale");
  });

  it("the store a refused import looked into is closed again: it opens in this process afterwards", () => {
    expect(refusal(head, source)).toMatch(/already holds this chain/);
    const db = LmdbChainDb.open(source);
    expect(db.head()!.height).toBe(6n);
    db.close();
  });

  it("a block hash other than the trusted one is an AnchorMismatch, named", () => {
    const target = fresh();
    let thrown: unknown;
    try {
      importSnapshot(head, target, new Uint8Array(32));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(AnchorMismatch);
    expect((thrown as Error).name).toBe("AnchorMismatch");
    expect(existsSync(target)).toBe(false);
  });
});

describe("snapshot export's refusals (state/lmdb/snapshot.ts)", () => {
  it("an empty store, a height without a block, and a block whose operations are pruned are refused by name; an older block still held exports", () => {
    const empty = LmdbChainDb.open(fresh());
    expect(() => exportSnapshot(empty, join(root, "empty.cbqs"))).toThrow(new SnapshotError("the store holds no chain"));
    empty.close();
    // 600 keys rewritten by every block: the inactivity floor moves past the pruning step (1,024 operations) within a few blocks.
    const db = LmdbChainDb.open(fresh(), { retainBlocks: 8 });
    const keys = Array.from({ length: 600 }, (_, i) => i);
    genesis(db, keys.map((i) => [key(i), value(i)]));
    for (let h = 1n; h <= 6n; h++) block(db, h, keys.map((i) => [key(i), value(i + Number(h))]));
    expect(db.commitment.db.any.mmr.prunedBelow).toBeGreaterThan(0);
    expect(() => exportSnapshot(db, join(root, "gap.cbqs"), 9n)).toThrow(new SnapshotError("the store has no block at height 9"));
    expect(() => exportSnapshot(db, join(root, "old.cbqs"), 1n)).toThrow(
      new SnapshotError("the state of block 1 is no longer held (pruned); snapshot the head, or write them as blocks commit (--snapshot-interval)"),
    );
    expect(existsSync(join(root, "old.cbqs"))).toBe(false);
    expect(exportSnapshot(db, join(root, "head.cbqs")).height).toBe(6n);
    // Trailing bytes are found also when the snapshot ends exactly where a read of the
    // file ends (the reader reads 1 MiB at a time): the genesis source padded to make it 1 MiB.
    const recs = records(readFileSync(join(root, "head.cbqs")));
    const g = decodeGenesis(recs[0]!.body);
    const sized = (pad: number): Uint8Array => {
      const padded = recs.map((r, i) => (i === 0 ? { tag: r.tag, body: encodeGenesis({ ...g, source: new Uint8Array(pad) }) } : r));
      const out = join(root, "sized.cbqs");
      write(out, new TextEncoder().encode("CBQS-SNAPSHOT/1\n"), padded);
      return readFileSync(out);
    };
    let pad = (1 << 20) - sized(0).length;
    pad += (1 << 20) - sized(pad).length;
    const mib = sized(pad);
    expect(mib.length).toBe(1 << 20);
    expect(rebuildSnapshotState(join(root, "sized.cbqs"), fresh(), () => {}).block.height).toBe(6n);
    writeFileSync(join(root, "sized.cbqs"), concatBytes(mib, Uint8Array.of(0)));
    expect(() => rebuildSnapshotState(join(root, "sized.cbqs"), fresh(), () => {})).toThrow(new SnapshotError("bytes after the end record"));
    // The state rebuilt from it (the chain checks of an import need a real chain: this one is synthetic).
    const rebuilt = fresh();
    expect(rebuildSnapshotState(join(root, "head.cbqs"), rebuilt, () => {}).block.height).toBe(6n);
    const adopted = LmdbChainDb.open(rebuilt);
    expect(toHex(adopted.commitment.root())).toBe(toHex(db.head()!.state_root));
    adopted.close();
    db.close();
  });
});

/** The state rebuilt from snapshot `file` is block `head`'s: its height and its state root. */
function expectRebuilt(file: string, head: BlockRecord): void {
  const rebuilt = fresh();
  expect(rebuildSnapshotState(file, rebuilt, () => {}).block.height).toBe(head.height);
  const adopted = LmdbChainDb.open(rebuilt);
  try {
    expect(toHex(adopted.commitment.root())).toBe(toHex(head.state_root));
  } finally {
    adopted.close();
  }
}

describe("snapshot export at the pruning boundary's edges (state/lmdb/snapshot.ts)", () => {
  const openFds = (): number => readdirSync("/proc/self/fd").length;

  it("a block whose last commit is still held but whose floor lies below the pruning boundary is refused by name; the head exports", () => {
    // A large genesis and small blocks: the floor climbs slowly, so the boundary (set from the
    // head's floor) passes older blocks' floors while their commits are still held.
    const db = LmdbChainDb.open(fresh(), { retainBlocks: 60 });
    const keys = Array.from({ length: 2000 }, (_, i) => i);
    genesis(db, keys.map((i) => [key(i), value(i)]));
    for (let h = 1n; h <= 16n; h++) block(db, h, keys.slice(0, 60).map((i) => [key(i), value(i + Number(h))]));
    const any = db.commitment.db.any;
    const commit = any.operation(db.logSizeAt(15n)! - 1);
    expect(db.logSizeAt(15n)! - 1).toBeGreaterThanOrEqual(any.mmr.prunedBelow);
    expect(commit.kind === "commit" && commit.floor < any.mmr.prunedBelow).toBe(true);
    expect(() => exportSnapshot(db, join(root, "floor.cbqs"), 15n)).toThrow(
      new SnapshotError("the state of block 15 is no longer held (pruned); snapshot the head, or write them as blocks commit (--snapshot-interval)"),
    );
    expect(existsSync(join(root, "floor.cbqs"))).toBe(false);
    const rebuilt = fresh();
    exportSnapshot(db, join(root, "floor-head.cbqs"));
    expect(rebuildSnapshotState(join(root, "floor-head.cbqs"), rebuilt, () => {}).block.height).toBe(16n);
    db.close();
  });

  it("a state with no live key: its last commit is the pruning boundary itself, and it exports and imports", () => {
    const db = LmdbChainDb.open(fresh(), { retainBlocks: 8 });
    const keys = Array.from({ length: 600 }, (_, i) => i);
    genesis(db, keys.map((i) => [key(i), value(i)]));
    block(db, 1n, keys.map((i) => [key(i), value(i + 1)]));
    block(db, 2n, keys.map((i) => [key(i), undefined]));
    const any = db.commitment.db.any;
    expect(any.mmr.prunedBelow).toBe(any.size - 1);
    const file = join(root, "empty-state.cbqs");
    expect(exportSnapshot(db, file).height).toBe(2n);
    expectRebuilt(file, db.head()!);
    db.close();
  });

  it("more operations than one ops record holds (4,096): the records follow each other, and the snapshot imports", () => {
    const db = LmdbChainDb.open(fresh(), { retainBlocks: 8 });
    genesis(db, Array.from({ length: 5000 }, (_, i) => [key(i), value(i)] as [Uint8Array, Uint8Array]));
    const file = join(root, "two-records.cbqs");
    exportSnapshot(db, file);
    const ops = records(readFileSync(file)).filter((r) => r.tag === 4); // the ops records
    expect(ops.length).toBe(2);
    const first = (r: Rec) => Buffer.from(r.body).readBigUInt64BE(0);
    expect(first(ops[1]!) - first(ops[0]!)).toBe(4096n);
    expectRebuilt(file, db.head()!);
    db.close();
  });

  it("exactly as many operations as one ops record holds: one record, no empty one after it; the file starts with the format's magic", () => {
    const db = LmdbChainDb.open(fresh(), { retainBlocks: 8 });
    genesis(db, Array.from({ length: 4095 }, (_, i) => [key(i), value(i)] as [Uint8Array, Uint8Array]));
    const any = db.commitment.db.any;
    const commit = any.operation(any.size - 1);
    expect(commit.kind === "commit" && any.size - commit.floor).toBe(4096);
    const file = join(root, "one-record.cbqs");
    exportSnapshot(db, file);
    const bytes = readFileSync(file);
    expect(bytes.subarray(0, MAGIC_LENGTH).toString()).toBe("CBQS-SNAPSHOT/1\n"); // docs/spec/state.md "Snapshot files"
    expect(records(bytes).filter((r) => r.tag === 4)).toHaveLength(1);
    expectRebuilt(file, db.head()!);
    db.close();
  });

  it("a snapshot file that cannot be opened is refused naming the path and the reason", () => {
    const missing = join(root, "no-such.cbqs");
    expect(() => importSnapshot(missing, fresh())).toThrow(new SnapshotError(`cannot read ${missing}: ENOENT`));
  });

  it("an operation missing from the store is damage, named; nothing is left where the snapshot was to go", () => {
    const dir = fresh();
    const db = LmdbChainDb.open(dir, { retainBlocks: 8 });
    genesis(db, Array.from({ length: 40 }, (_, i) => [key(i), value(i)] as [Uint8Array, Uint8Array]));
    const table = db.env.table("ops");
    const gone = Buffer.alloc(8);
    gone.writeBigUInt64BE(7n);
    db.env.transaction(() => table.removeSync(gone));
    const out = mkdtempSync(join(root, "out-"));
    expect(() => exportSnapshot(db, join(out, "damaged.cbqs"))).toThrow(new DamagedStoreError("operation 7 is missing"));
    expect(readdirSync(out)).toEqual([]);
    db.close();
  });

  it("the reader closes the snapshot file, after an import and after a refusal", () => {
    const db = LmdbChainDb.open(fresh(), { retainBlocks: 8 });
    genesis(db, [[key(1), value(1)]]);
    const file = join(root, "fds.cbqs");
    exportSnapshot(db, file);
    db.close();
    const before = openFds();
    rebuildSnapshotState(file, fresh(), () => {});
    expect(openFds()).toBe(before);
    writeFileSync(file, readFileSync(file).subarray(0, 40));
    expect(() => rebuildSnapshotState(file, fresh(), () => {})).toThrow(SnapshotError);
    expect(openFds()).toBe(before);
  });
});

describe("periodic snapshots", () => {
  it("a snapshot is written at the first block at or above each multiple of the interval, also when that multiple is a skipped height (CIP-4 §11 SNAPSHOT_INTERVAL_BLOCKS)", () => {
    // Heights 1, 2, 5, 8, 10, 12, 20, 21, 30; every 4 blocks: multiples 4, 16, 24 and 28 have no block.
    const dir = fresh();
    const db = LmdbChainDb.open(dir, { afterCommit: snapshotEvery(dir, 4n) });
    CbqsNode.open(db, { kind: "fixture", fixture: readFixture("fixtures/corpus/pause-accounting.json") });
    db.close();
    const heights = readdirSync(join(dir, "snapshots")).map((f) => Number(/^snapshot-(\d+)\.cbqs$/.exec(f)![1])).sort((a, b) => a - b);
    expect(heights).toEqual([5, 8, 12, 20, 30]);
  });
});
