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
import { Env } from "../../../state/lmdb/env.js";
import { LmdbQmdbStorage, type IndexPlacement } from "../../../state/lmdb/qmdb-storage.js";

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
              expect(disk.db.any.entries()).toEqual(memory.any.entries());
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
    disk.reopen();
    expect(disk.db.any.mmr.prunedBelow).toBe(memory.any.mmr.prunedBelow);
    expectSame(memory, disk.db, [0, 1, 5, 17, 39, 59]);
    disk.close();
  });
});
