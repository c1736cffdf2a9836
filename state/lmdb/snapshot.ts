// State snapshots for fast sync (CIP-4 §8.1, docs/spec/state.md "Snapshots"): the state at block H
// in a form from which an empty store rebuilds a QMDB whose root is block H's state_root and
// whose every later root matches — the QMDB root commits to history (every operation since the
// first, through the MMR), so values alone are not enough. A snapshot carries:
//
//   - the genesis record (exact genesis source bytes, chain_instance_id, block 0) and the block
//     record at H (header fields, transactions, receipts): the chain it belongs to;
//   - the QMDB log size at H and its inactivity floor F (read from the commit at size − 1);
//   - the pinned peaks of the MMR prefix below F (one digest per set bit of F): every digest of
//     the history before F that a later root, append or proof still uses;
//   - the operations from F to the end of the log: every active operation lies there, so the
//     MMR nodes above F are rebuilt from them (appended onto the pinned peaks), and the key index
//     (the last Update of each key, unless a Delete follows) and the activity bitmap (those
//     locations plus the last commit) are rebuilt from them when the store opens, as on every
//     open (state/lmdb/qmdb-storage.ts).
//
// Nothing derived is trusted: importing rebuilds index, bitmap and nodes and accepts only if the
// rebuilt root equals block H's state_root (the chain checks are the caller's, src/store-tools/snapshot.ts).
//
// File format: "CBQS-SNAPSHOT/1\n" then records `tag u8 ‖ length u32be ‖ body`, in this order:
//   1 genesis   encodeGenesis (state/lmdb/records.ts)
//   2 block     encodeBlock of block H
//   3 qmdb      u64be(log size) ‖ u64be(floor) ‖ the pinned digests (32 bytes each)
//   4 ops       u64be(first location) ‖ (u32be length ‖ encoded operation)*   (repeated, in order)
//   255 end     SHA-256 of every byte before the digest (the end record's tag and length included)
import { closeSync, openSync } from "node:fs";
import { createHash, type Hash } from "node:crypto";
import { bytesEqual, concatBytes, u32BE, u64BE } from "../../src/bytes.js";
import { BLAKE3 } from "../../src/crypto/hash.js";
import type { BlockRecord, GenesisRecord } from "../chain-db/chain-db.js";
import { Mmr, peakHeights } from "../qmdb/mmr.js";
import type { PinnedNode } from "../qmdb/storage.js";
import { STATE_CHUNK_BYTES, stateDbConfig } from "../qmdb/index.js";
import type { LmdbChainDb } from "./chain-db.js";
import { DamagedStoreError, Env, readU64Key, u64Key } from "./env.js";
import { LmdbQmdbStorage } from "./qmdb-storage.js";
import { DamagedRecordError, decodeBlock, decodeGenesis, encodeBlock, encodeGenesis } from "./records.js";
import { finish, type Steps } from "../../src/steps.js";
import { OutputFile } from "../../src/output-file.js";
import { readNext, STDIN } from "../../src/json/read.js";

/** The first bytes of every snapshot file. */
export const SNAPSHOT_MAGIC = new TextEncoder().encode("CBQS-SNAPSHOT/1\n");
const MAGIC = SNAPSHOT_MAGIC;
const TAG = { genesis: 1, block: 2, qmdb: 3, ops: 4, end: 255 } as const;
/** Operations per `ops` record, and per write transaction on import. */
const OPS_PER_RECORD = 4096;
/** Largest record body accepted (a record of 4,096 operations is far below it). */
const MAX_RECORD = 64 << 20;

export class SnapshotError extends Error {
  override name = "SnapshotError";
}

/** Peaks of the MMR prefix below `loc`, as (height, index). */
function prefixPeaks(loc: number): { height: number; index: number }[] {
  const out: { height: number; index: number }[] = [];
  let first = 0;
  for (const height of peakHeights(loc)) {
    out.push({ height, index: first / 2 ** height });
    first += 2 ** height;
  }
  return out;
}

class SnapshotWriter {
  private readonly file: OutputFile;
  private readonly hash: Hash = createHash("sha256");
  private buffered: Uint8Array[] = [];
  private bytes = 0;

  /** Opened by the CLI's one output rule (src/output-file.ts): a file appears only when finished. */
  constructor(readonly path: string) {
    this.file = OutputFile.open(path);
    this.raw(MAGIC);
  }

  private raw(b: Uint8Array, hashed = true): void {
    if (hashed) this.hash.update(b);
    this.buffered.push(b);
    this.bytes += b.length;
    if (this.bytes >= 1 << 20) this.flush();
  }

  private flush(): void {
    this.file.write(concatBytes(...this.buffered));
    this.buffered = [];
    this.bytes = 0;
  }

  record(tag: number, body: Uint8Array): void {
    this.raw(Uint8Array.of(tag));
    this.raw(u32BE(body.length));
    this.raw(body);
  }

  finish(): void {
    // The end record: its tag and length are covered by the checksum, the digest itself not.
    this.raw(Uint8Array.of(TAG.end));
    this.raw(u32BE(32));
    this.raw(this.hash.digest(), false);
    this.flush();
    this.file.commit();
  }

  abandon(): void {
    this.file.discard();
  }
}

/**
 * Writes the snapshot of the committed block at `height` (the head, or an older block whose
 * operations from its floor on are not pruned yet) to `path`, atomically (a temporary file
 * renamed into place; a device or FIFO is written in place, src/output-file.ts). Returns the block.
 */
export function exportSnapshot(db: LmdbChainDb, path: string, height?: bigint): BlockRecord {
  return finish(exportSnapshotSteps(db, path, height));
}

/** exportSnapshot unit by unit: a unit is one ops record written (src/steps.ts). */
export function* exportSnapshotSteps(db: LmdbChainDb, path: string, height?: bigint): Steps<BlockRecord> {
  db.checkCommitted(); // a read-only store exports too (cbqs snapshot export opens it so)
  const genesis = db.genesis();
  const head = db.head();
  if (genesis === undefined || head === undefined) throw new SnapshotError("the store holds no chain");
  const h = height ?? head.height;
  const block = db.blockByHeight(h);
  const size = db.logSizeAt(h);
  if (block === undefined || size === undefined) throw new SnapshotError(`the store has no block at height ${h}`);
  const any = db.commitment.db.any;
  const last = size - 1 >= any.mmr.prunedBelow ? any.operation(size - 1) : undefined;
  if (last === undefined || last.kind !== "commit" || last.floor < any.mmr.prunedBelow) {
    throw new SnapshotError(`the state of block ${h} is no longer held (pruned); snapshot the head, or write them as blocks commit (--snapshot-interval)`);
  }
  const floor = last.floor;
  // The floor is at or above the pruning boundary: every peak of the prefix below it is built
  // from the boundary's pinned peaks and retained leaves.
  const pinned = prefixPeaks(floor).map((p) => any.mmr.digest(p.height, p.index));
  const out = new SnapshotWriter(path);
  try {
    out.record(TAG.genesis, encodeGenesis(genesis));
    out.record(TAG.block, encodeBlock(block));
    out.record(TAG.qmdb, concatBytes(u64BE(size), u64BE(floor), ...pinned));
    const ops = db.env.table("ops");
    let chunk: Uint8Array[] = [];
    let first = floor;
    const emit = () => {
      out.record(TAG.ops, concatBytes(u64BE(first), ...chunk.flatMap((op) => [u32BE(op.length), op])));
      first += chunk.length;
      chunk = [];
    };
    let expected = floor;
    for (const { key, value } of ops.getRange({ start: u64Key(floor), end: u64Key(size) })) {
      if (readU64Key(key) !== expected++) throw new DamagedStoreError(`operation ${expected - 1} is missing`);
      chunk.push(new Uint8Array(value));
      if (chunk.length === OPS_PER_RECORD) {
        emit();
        yield;
      }
    }
    // No check that the loop reached `size`: the last operation was read above, so a gap can only
    // lie before it, where the loop finds it.
    if (chunk.length > 0) emit();
    out.finish();
  } catch (err) {
    out.abandon();
    throw err;
  }
  return block;
}

/** Sequential reader over a snapshot file that hashes everything it hands out. */
class SnapshotReader {
  private readonly fd: number;
  private buffer: Uint8Array = new Uint8Array(0);
  private pos = 0;
  private readonly hash: Hash = createHash("sha256");

  /** `-` (or /dev/stdin) is the standard input, read once, in order, like a file (docs/reference/cli-conventions.md). */
  private readonly stdin: boolean;

  constructor(readonly path: string) {
    this.stdin = path === STDIN || path === "/dev/stdin";
    try {
      this.fd = this.stdin ? 0 : openSync(path, "r");
    } catch (err) {
      throw new SnapshotError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
    }
  }

  private take(n: number, hashed = true): Uint8Array {
    while (this.buffer.length - this.pos < n) {
      const more = new Uint8Array(Math.max(1 << 20, n));
      const got = readNext(this.fd, more);
      if (got === 0) throw new SnapshotError("the snapshot is truncated");
      this.buffer = concatBytes(this.buffer.subarray(this.pos), more.subarray(0, got));
      this.pos = 0;
    }
    const out = this.buffer.subarray(this.pos, this.pos + n);
    this.pos += n;
    if (hashed) this.hash.update(out);
    return out;
  }

  magic(): void {
    if (!bytesEqual(this.take(MAGIC.length), MAGIC)) throw new SnapshotError("not a cbqs snapshot (bad magic)");
  }

  /** The next record; the end record's checksum is verified here. */
  record(): { tag: number; body: Uint8Array } {
    const tag = this.take(1)[0]!;
    const header = this.take(4);
    const expectedDigest = tag === TAG.end ? this.hash.copy().digest() : undefined;
    const length = Buffer.from(header).readUInt32BE(0);
    if (length > MAX_RECORD) throw new SnapshotError(`record of ${length} bytes exceeds the ${MAX_RECORD}-byte bound`);
    if (tag !== TAG.end) return { tag, body: this.take(length).slice() };
    const digest = this.take(length, false);
    // bytesEqual compares lengths too: an end record of any other length than 32 is a mismatch.
    if (!bytesEqual(digest, expectedDigest!)) throw new SnapshotError("checksum mismatch: the snapshot is corrupt");
    const rest = new Uint8Array(1);
    if (this.buffer.length > this.pos || readNext(this.fd, rest) > 0) throw new SnapshotError("bytes after the end record");
    return { tag, body: digest };
  }

  close(): void {
    if (!this.stdin) closeSync(this.fd);
  }
}

function expectRecord(r: SnapshotReader, tag: number, what: string): Uint8Array {
  const rec = r.record();
  if (rec.tag !== tag) throw new SnapshotError(`expected the ${what} record, found tag ${rec.tag}`);
  return rec.body;
}

export interface SnapshotHead {
  genesis: GenesisRecord;
  block: BlockRecord;
}

/**
 * Rebuilds the snapshot's state into `dir` (a new, empty directory) and returns its genesis and
 * block records once the checksum held and the rebuilt root equals the block's state_root.
 * `checkChain` runs as soon as both records are read (before the state is rebuilt) and throws to
 * refuse them. On any failure the caller removes `dir`. The records are written by the caller
 * (LmdbChainDb.adoptSnapshot) only after this returns.
 */
export function rebuildSnapshotState(path: string, dir: string, checkChain: (head: SnapshotHead) => void): SnapshotHead {
  return finish(rebuildSnapshotStateSteps(path, dir, checkChain));
}

/** rebuildSnapshotState unit by unit: a unit is one ops record rebuilt and written (src/steps.ts). */
export function* rebuildSnapshotStateSteps(path: string, dir: string, checkChain: (head: SnapshotHead) => void): Steps<SnapshotHead> {
  const r = new SnapshotReader(path);
  let env: Env | undefined;
  try {
    r.magic();
    const genesis = decodeRecord(() => decodeGenesis(expectRecord(r, TAG.genesis, "genesis")));
    const block = decodeRecord(() => decodeBlock(expectRecord(r, TAG.block, "block")));
    checkChain({ genesis, block });
    const q = expectRecord(r, TAG.qmdb, "qmdb");
    const view = Buffer.from(q.buffer, q.byteOffset, q.byteLength);
    if (q.length < 16) throw new SnapshotError("qmdb record is truncated");
    const size = decodeRecord(() => readU64Key(q, 0));
    const floor = decodeRecord(() => readU64Key(q, 8));
    const peaks = prefixPeaks(floor);
    if (floor >= size || q.length !== 16 + 32 * peaks.length) throw new SnapshotError(`qmdb record: floor ${floor}, size ${size} and ${(q.length - 16) / 32} pinned digests do not fit`);
    const pinned: PinnedNode[] = peaks.map((p, i) => ({ ...p, digest: view.subarray(16 + 32 * i, 48 + 32 * i) }));

    env = Env.open(dir);
    const storage = new LmdbQmdbStorage(env, STATE_CHUNK_BYTES);
    storage.log.startAt(floor);
    storage.nodes.startAt(floor, pinned);
    const mmr = new Mmr(BLAKE3, storage.nodes, { source: storage.log, leaves: floor, prunedBelow: floor });
    const codec = stateDbConfig().codec;
    let loc = floor;
    while (loc < size) {
      const body = expectRecord(r, TAG.ops, "ops");
      if (body.length < 8 || decodeRecord(() => readU64Key(body, 0)) !== loc) throw new SnapshotError(`ops record out of order (expected location ${loc})`);
      const b = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
      for (let off = 8; off < body.length; loc++) {
        if (off + 4 > body.length) throw new SnapshotError("ops record is truncated");
        const length = b.readUInt32BE(off);
        if (off + 4 + length > body.length || loc >= size) throw new SnapshotError("ops record overruns");
        const op = body.subarray(off + 4, off + 4 + length);
        off += 4 + length;
        decodeRecord(() => codec.decode(op));
        storage.log.append(op);
        mmr.append(op);
      }
      env.transaction(() => storage.writePending());
      storage.markWritten();
      yield;
    }
    if (codec.decode(storage.log.read(size - 1)).kind !== "commit") throw new SnapshotError("the last operation is not a commit");
    expectRecord(r, TAG.end, "end");
    env.close();
    env = undefined;
    return { genesis, block };
  } finally {
    env?.close();
    r.close();
  }
}

function decodeRecord<T>(decode: () => T): T {
  try {
    return decode();
  } catch (err) {
    if (err instanceof SnapshotError) throw err;
    // The record came from the file, not from a store: say so, not "the store is damaged".
    throw new SnapshotError(`malformed record: ${err instanceof DamagedRecordError ? err.detail : (err as Error).message}`);
  }
}
