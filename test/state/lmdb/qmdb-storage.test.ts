// The QMDB on LMDB (state/lmdb/qmdb-storage.ts) against the in-memory QMDB storage: both fed the
// same random batches, with the LMDB one written once per batch, pruned, and closed and reopened
// at random points (a reopened store rebuilds its bitmap and grafted digests from disk). Roots,
// values, inclusion, exclusion and batch proofs must be identical after every batch.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { toHex } from "../../../src/bytes.js";
import { SHA256 } from "../../../src/crypto/hash.js";
import type { QmdbConfig, Write } from "../../../state/qmdb/any.js";
import { CurrentDb } from "../../../state/qmdb/current.js";
import { stateDbConfig } from "../../../state/qmdb/index.js";
import { proveKey, proveKeys, verifyStateProof } from "../../../state/qmdb/proof.js";
import { entryCount, Env, readU64Key, StoreError } from "../../../state/lmdb/env.js";
import { mmrSize, nodePosition, peakHeights } from "../../../state/qmdb/mmr.js";
import { LmdbQmdbStorage, WindowBitmap, type IndexPlacement } from "../../../state/lmdb/qmdb-storage.js";
import { DamagedStoreError } from "../../../state/lmdb/errors.js";

const root = mkdtempSync(join(tmpdir(), "cbqs-lmdb-qmdb-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;

const KEY = 54;
const key = (i: number): Uint8Array => {
  const k = new Uint8Array(KEY);
  k[0] = 0x03;
  k[20] = i & 0xff;
  k[53] = i >> 8;
  return k;
};
const value = (v: number): Uint8Array => Uint8Array.from({ length: 1 + (v % 5) }, (_, i) => (v * 7 + i) & 0xff);
const config = (chunkBytes: number): QmdbConfig => ({ ...stateDbConfig(SHA256), chunkBytes });

/** A CurrentDb on LMDB that can be written and reopened. */
class Persistent {
  private env: Env;
  private storage: LmdbQmdbStorage;
  db: CurrentDb;

  constructor(
    private readonly dir: string,
    private readonly config: QmdbConfig,
    private readonly placement: IndexPlacement,
  ) {
    this.env = Env.open(dir);
    this.storage = new LmdbQmdbStorage(this.env, config.chunkBytes, placement);
    this.db = new CurrentDb(config, this.storage);
  }

  write(): void {
    this.env.transaction(() => this.storage.writePending());
    this.storage.markWritten();
  }

  reopen(): void {
    this.env.close();
    this.env = Env.open(this.dir);
    this.storage = new LmdbQmdbStorage(this.env, this.config.chunkBytes, this.placement);
    this.db = new CurrentDb(this.config, this.storage);
  }

  close(): void {
    this.env.close();
  }

  /** Rows of one table of the environment. */
  rows(table: string): number {
    return entryCount(this.env.table(table));
  }

  /** The u64 keys of one table (`ops`, `nodes`), ascending. */
  positions(table: string): number[] {
    return [...this.env.table(table).getKeys({})].map((k) => readU64Key(k));
  }

  /** What the storage still holds in memory for the block in progress (nothing once written). */
  overlays(): number[] {
    const s = this.storage as unknown as {
      log: { pending: unknown[] };
      nodes: { pending: Map<number, Uint8Array> };
      index: { changes?: { size: number }; looked?: { size: number } };
    };
    return [s.log.pending.length, s.nodes.pending.size, s.index.changes?.size ?? 0, s.index.looked?.size ?? 0];
  }
}

/** Positions of the peaks of the first `leaves` leaves: the nodes a pruned MMR pins. */
function pinnedPositions(leaves: number): number[] {
  const out: number[] = [];
  let first = 0;
  for (const height of peakHeights(leaves)) {
    out.push(nodePosition(height, first / 2 ** height));
    first += 2 ** height;
  }
  return out;
}

const batchArb = fc.array(fc.tuple(fc.integer({ min: 0, max: 60 }), fc.option(fc.integer({ min: 0, max: 255 }))), { maxLength: 24 });
const toWrites = (batch: [number, number | null][]): Write[] => batch.map(([k, v]) => [key(k), v === null ? undefined : value(v)]);

function expectSame(a: CurrentDb, b: CurrentDb, probe: number[]): void {
  expect(toHex(b.root())).toBe(toHex(a.root()));
  for (const k of probe) {
    const pa = proveKey(a, key(k));
    expect(proveKey(b, key(k))).toEqual(pa);
    expect(verifyStateProof(pa, a.root(), a.config).valid).toBe(true);
  }
  const live = probe.filter((k) => a.get(key(k)) !== undefined);
  if (live.length > 0) expect(proveKeys(b, live.map(key))).toEqual(proveKeys(a, live.map(key)));
}

describe.each(["memory", "lmdb"] as const)("QMDB on LMDB (key index in %s) = QMDB in memory (CIP-4 §5.1, §5.4)", (placement) => {
  for (const chunkBytes of [1, 32]) {
    it(`same roots, values and proofs after every batch, written, pruned and reopened at random (${chunkBytes}-byte chunks)`, () => {
      fc.assert(
        fc.property(
          fc.array(fc.tuple(batchArb, fc.boolean(), fc.integer({ min: 0, max: 4 })), { minLength: 1, maxLength: 25 }),
          fc.uniqueArray(fc.integer({ min: 0, max: 60 }), { minLength: 1, maxLength: 4 }),
          (batches, probe) => {
            const memory = new CurrentDb(config(chunkBytes));
            const disk = new Persistent(join(root, `db${dirs++}`), config(chunkBytes), placement);
            try {
              for (const [batch, reopen, pruneStep] of batches) {
                const writes = toWrites(batch);
                memory.applyBatch(writes);
                disk.db.applyBatch(writes);
                expect(toHex(disk.db.root())).toBe(toHex(memory.root()));
                memory.prune(pruneStep);
                disk.db.prune(pruneStep);
                disk.write();
                if (reopen) {
                  disk.reopen();
                  expect(toHex(disk.db.root())).toBe(toHex(memory.root()));
                }
              }
              for (let k = 0; k <= 60; k++) expect(disk.db.get(key(k))).toEqual(memory.get(key(k)));
              expect([...disk.db.any.entries()]).toEqual([...memory.any.entries()]);
              expectSame(memory, disk.db, probe);
              disk.reopen();
              expectSame(memory, disk.db, probe);
              // And both keep agreeing after the reopen.
              const more = toWrites([[probe[0]!, 7], [61, 1]]);
              memory.applyBatch(more);
              disk.db.applyBatch(more);
              expectSame(memory, disk.db, probe);
            } finally {
              disk.close();
            }
          },
        ),
        { numRuns: (chunkBytes === 1 ? 20 : 12) / (placement === "lmdb" ? 2 : 1) },
      );
    });
  }

  it("a long history with a far-raised floor: disk stays bounded by the live state and a reopen agrees", () => {
    const memory = new CurrentDb(config(32));
    const disk = new Persistent(join(root, `db${dirs++}`), config(32), placement);
    for (let round = 0; round < 80; round++) {
      const writes: Write[] = [];
      for (let i = 0; i < 40; i++) if ((i * 7 + round) % 3 !== 0) writes.push([key(i), (i + round) % 11 === 0 ? undefined : value(i + round)]);
      memory.applyBatch(writes);
      disk.db.applyBatch(writes);
      memory.prune();
      disk.db.prune();
      disk.write();
    }
    expect(disk.db.any.inactivityFloor).toBeGreaterThan(1024);
    expect(() => disk.db.any.operation(0)).toThrow(RangeError);
    // Bounded: the operations from the pruning boundary on, the MMR nodes above it plus its pinned peaks, and (in LMDB) one index row per live key.
    const { size } = disk.db.any;
    const pruned = disk.db.any.mmr.prunedBelow;
    expect(disk.rows("ops")).toBe(size - pruned);
    const peaks = pruned.toString(2).split("").filter((bit) => bit === "1").length;
    expect(disk.rows("nodes")).toBeLessThanOrEqual(mmrSize(size) - mmrSize(pruned) + peaks);
    expect(disk.rows("nodes")).toBeGreaterThan(0);
    if (placement === "lmdb") expect(disk.rows("index")).toBe([...memory.any.entries()].length);
    disk.reopen();
    expect(disk.db.any.mmr.prunedBelow).toBe(memory.any.mmr.prunedBelow);
    expectSame(memory, disk.db, [0, 1, 5, 17, 39, 59]);
    disk.close();
  });
});

describe.each(["memory", "lmdb"] as const)("what the LMDB storage holds, on disk and in memory (key index in %s)", (placement) => {
  it("the nodes table holds exactly the pruned prefix's pinned peaks below the boundary, after every block", () => {
    const disk = new Persistent(join(root, `db${dirs++}`), config(4), placement);
    try {
      let pruned = 0;
      for (let round = 0; round < 60; round++) {
        // Few keys written again and again: the floor climbs close to the tip, so a block prunes
        // nodes it appended itself.
        const writes: Write[] = [];
        for (let i = 0; i < 6; i++) writes.push([key(i), value(round * 6 + i)]);
        disk.db.applyBatch(writes);
        disk.db.prune();
        disk.write();
        const boundary = mmrSize(disk.db.any.mmr.prunedBelow);
        const pinned = pinnedPositions(disk.db.any.mmr.prunedBelow);
        // (Every pinned peak lies below the boundary; the peaks are listed left to right.)
        expect(disk.positions("nodes").filter((pos) => pos < boundary)).toEqual(pinned);
        pruned = disk.db.any.mmr.prunedBelow;
      }
      expect(pruned).toBeGreaterThan(300);
      disk.reopen();
      expect(disk.db.any.mmr.prunedBelow).toBe(pruned);
    } finally {
      disk.close();
    }
  });

  it("a written block leaves nothing of itself in the storage's memory", () => {
    const disk = new Persistent(join(root, `db${dirs++}`), config(4), placement);
    try {
      for (let round = 0; round < 12; round++) {
        disk.db.applyBatch([[key(round % 4), value(round)], [key(9), round % 3 === 0 ? undefined : value(round)]]);
        disk.db.prune();
        expect(disk.overlays().some((n) => n > 0)).toBe(true);
        disk.write();
        expect(disk.overlays()).toEqual([0, 0, 0, 0]);
      }
    } finally {
      disk.close();
    }
  });

  it("the live entries mid-block, before anything is written, count each changed key once", () => {
    const memory = new CurrentDb(config(4));
    const disk = new Persistent(join(root, `db${dirs++}`), config(4), placement);
    try {
      const first = toWrites([[1, 1], [2, 2], [3, 3], [4, 4]]);
      memory.applyBatch(first);
      disk.db.applyBatch(first);
      disk.write();
      // A committed key updated, one deleted, one created, all still pending.
      const second = toWrites([[1, 9], [2, null], [5, 5]]);
      memory.applyBatch(second);
      disk.db.applyBatch(second);
      const live = [...disk.db.any.entries()];
      expect(live.map(([k]) => k[20])).toEqual([1, 3, 4, 5]);
      expect(live).toEqual([...memory.any.entries()]);
      disk.write();
      expect([...disk.db.any.entries()]).toEqual(live);
    } finally {
      disk.close();
    }
  });
});

describe("WindowBitmap (the activity bitmap held from the pruning boundary up) = a plain array of bits", () => {
  // Operations: extend, set a bit (never below the dropped window to 1), drop what lies below a bit.
  const op = fc.oneof(
    fc.record({ kind: fc.constant("extend" as const), by: fc.integer({ min: 0, max: 40 }) }),
    fc.record({ kind: fc.constant("set" as const), at: fc.nat(), value: fc.boolean() }),
    fc.record({ kind: fc.constant("drop" as const), at: fc.nat() }),
  );

  it("every bit, every chunk and every refusal agree with the model, for 1- and 4-byte chunks", () => {
    fc.assert(
      fc.property(fc.constantFrom(1, 4), fc.nat({ max: 64 }), fc.array(op, { maxLength: 60 }), (chunkBytes, start, ops) => {
        const chunkBits = chunkBytes * 8;
        const first = Math.floor(start / chunkBits) * chunkBits;
        const b = new WindowBitmap(chunkBytes, start);
        const model: boolean[] = [];
        let floor = first; // the highest drop point: bits below it are zero
        let length = first;
        expect(b.length).toBe(first);
        for (const o of ops) {
          if (o.kind === "extend") {
            length += o.by;
            b.extendTo(length);
          } else if (o.kind === "set") {
            if (length === 0) continue;
            const at = o.at % length;
            if (at < first && o.value) {
              expect(() => b.set(at, true)).toThrow(new RangeError(`bit ${at} lies below the inactivity floor`));
              continue;
            }
            // Below a drop point the window may or may not be held any more (dropping is lazy): the
            // store never sets a bit there to 1.
            if (at < floor && o.value) continue;
            b.set(at, o.value);
            model[at] = o.value;
          } else {
            if (length === 0) continue;
            const at = o.at % (length + 1);
            // Only a window whose bits below `at` are all zero may be dropped.
            if (model.slice(0, at).some((v) => v === true)) continue;
            b.dropBelow(at);
            floor = Math.max(floor, at);
          }
        }
        expect(b.length).toBe(length);
        for (let i = 0; i < length; i++) expect(b.get(i), `bit ${i}`).toBe(model[i] === true);
        for (let c = 0; c * chunkBits < length; c++) {
          const expected = new Uint8Array(chunkBytes);
          for (let i = 0; i < chunkBits; i++) if (model[c * chunkBits + i] === true) expected[i >> 3]! |= 1 << (i & 7);
          expect(b.chunk(c), `chunk ${c}`).toEqual(expected);
        }
        const chunks = Math.ceil(length / chunkBits);
        expect(() => b.chunk(chunks)).toThrow(new RangeError(`bitmap chunk ${chunks} out of range`));
        expect(() => b.chunk(-1)).toThrow(new RangeError("bitmap chunk -1 out of range"));
        expect(() => b.chunk(0.5)).toThrow(new RangeError("bitmap chunk 0.5 out of range"));
        expect(() => b.get(length)).toThrow(new RangeError(`bit ${length} out of range (length ${length})`));
        expect(() => b.get(-1)).toThrow(new RangeError(`bit -1 out of range (length ${length})`));
        expect(() => b.set(1.5, false)).toThrow(new RangeError(`bit 1.5 out of range (length ${length})`));
        if (length > 0) expect(() => b.extendTo(length - 1)).toThrow(new RangeError(`cannot shrink bitmap from ${length} to ${length - 1}`));
      }),
      { numRuns: 300 },
    );
  });

  it("the chunks changed since the last take are reported once, by index", () => {
    const b = new WindowBitmap(1);
    b.extendTo(40);
    expect(b.takeChangedChunks()).toEqual(new Set());
    b.set(3, true);
    b.set(20, true);
    b.set(21, false); // already 0: no change
    expect(b.takeChangedChunks()).toEqual(new Set([0, 2]));
    expect(b.takeChangedChunks()).toEqual(new Set());
    b.set(3, true); // already 1
    expect(b.takeChangedChunks()).toEqual(new Set());
    b.set(3, false);
    expect(b.takeChangedChunks()).toEqual(new Set([0]));
  });

  it("dropping a window that still holds an active bit is refused", () => {
    const b = new WindowBitmap(1);
    b.extendTo(64);
    b.set(2, true);
    expect(() => b.dropBelow(40)).toThrow(new RangeError("an active bit lies below 40"));
    expect(b.get(2)).toBe(true);
  });
});

describe("the operation log on LMDB (its bounds, by message)", () => {
  it("an empty log has no location 0 to read: out of range, not pruned", () => {
    const env = Env.open(join(root, `log${dirs++}`));
    try {
      const { log } = new LmdbQmdbStorage(env, 1);
      expect(log.size).toBe(0);
      expect(() => log.read(0)).toThrow(new RangeError("location 0 out of range (size 0)"));
    } finally {
      env.close();
    }
  });

  it("reads refuse a pruned, a negative, a fractional and a too-high location; matches compares a part in place; startAt needs an empty log", () => {
    const env = Env.open(join(root, `log${dirs++}`));
    try {
      const storage = new LmdbQmdbStorage(env, 1);
      const log = storage.log;
      for (let i = 0; i < 8; i++) log.append(Uint8Array.of(i, i + 1, i + 2));
      env.transaction(() => storage.writePending());
      storage.markWritten();
      log.append(Uint8Array.of(8, 9, 10)); // pending, not written yet
      log.prune(5);
      expect(log.read(8)).toEqual(Uint8Array.of(8, 9, 10));
      expect(log.read(5)).toEqual(Uint8Array.of(5, 6, 7));
      expect(() => log.read(4)).toThrow(new RangeError("location 4 was pruned (below 5)"));
      expect(() => log.read(0)).toThrow(new RangeError("location 0 was pruned (below 5)"));
      expect(() => log.read(9)).toThrow(new RangeError("location 9 out of range (size 9)"));
      expect(() => log.read(-1)).toThrow(new RangeError("location -1 out of range (size 9)"));
      expect(() => log.read(5.5)).toThrow(new RangeError("location 5.5 out of range (size 9)"));
      expect(log.matches(6, 1, Uint8Array.of(7, 8))).toBe(true);
      expect(log.matches(6, 0, Uint8Array.of(6, 7, 8))).toBe(true);
      expect(log.matches(6, 1, Uint8Array.of(7, 9))).toBe(false);
      expect(log.matches(6, 2, Uint8Array.of(8, 9))).toBe(false); // runs past the operation's end
      expect(log.matches(6, 3, new Uint8Array(0))).toBe(true);
      expect(log.matches(6, 4, new Uint8Array(0))).toBe(false); // starts past the operation's end
      expect(() => log.startAt(20)).toThrow(new StoreError("only an empty log can start above location 0"));
    } finally {
      env.close();
    }
  });
  it("a written operation whose row is gone is damage, named by its location", () => {
    const env = Env.open(join(root, `log${dirs++}`));
    try {
      const storage = new LmdbQmdbStorage(env, 1);
      for (let i = 0; i < 4; i++) storage.log.append(Uint8Array.of(i));
      env.transaction(() => storage.writePending());
      storage.markWritten();
      const row = Buffer.alloc(8);
      row.writeBigUInt64BE(2n);
      env.transaction(() => env.table("ops").removeSync(row));
      expect(storage.log.read(1)).toEqual(Uint8Array.of(1));
      expect(() => storage.log.read(2)).toThrow(new DamagedStoreError("operation 2 is missing"));
    } finally {
      env.close();
    }
  });
});
