// The packed QMDB (state/qmdb/: paged operation log, MMR storing only nodes of height ≥ 4 plus
// its peaks, hash-table key index, incremental grafted cache, pruning below the inactivity
// floor) against the plain reference of test/state/reference/qmdb.ts on random histories:
// identical roots after every batch, identical values, and identical inclusion, exclusion and
// batch proofs, which verify.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { bytesEqual, toHex, u64BE } from "../../../src/bytes.js";
import { SHA256 } from "../../../src/crypto/hash.js";
import { buildMultiProof, buildRangeProof, Mmr, peaks } from "../../../state/qmdb/mmr.js";
import type { QmdbConfig, Write } from "../../../state/qmdb/any.js";
import { CurrentDb } from "../../../state/qmdb/current.js";
import { byteVecValue, variableCodec } from "../../../state/qmdb/operation.js";
import { proveKey, proveKeys, verifyStateProof, type ExclusionProof, type StateProof } from "../../../state/qmdb/proof.js";
import { memoryStorage, stateDbConfig } from "../../../state/qmdb/index.js";
import { ReferenceCurrentDb, ReferenceMmr } from "../reference/qmdb.js";

const KEY = 54;
const key = (i: number): Uint8Array => {
  const k = new Uint8Array(KEY);
  k[0] = 0x03;
  k[20] = i & 0xff; // keys share long prefixes, as state keys do
  k[53] = i >> 8;
  return k;
};
const value = (v: number): Uint8Array => Uint8Array.from({ length: 1 + (v % 5) }, (_, i) => (v * 7 + i) & 0xff);

const config = (chunkBytes: number): QmdbConfig => ({ ...stateDbConfig(SHA256), chunkBytes });

const batchArb = fc.array(fc.tuple(fc.integer({ min: 0, max: 60 }), fc.option(fc.integer({ min: 0, max: 255 }))), { maxLength: 24 });
const toWrites = (batch: [number, number | null][]): Write[] => batch.map(([k, v]) => [key(k), v === null ? undefined : value(v)]);

function expectProofsEqual(db: CurrentDb, ref: ReferenceCurrentDb, keys: number[]): void {
  const root = db.root();
  const graftedInactive = db.graftedInactivePeaks();
  const leaves = ref.mmr.leaves;
  for (const k of keys) {
    const proof = proveKey(db, key(k));
    expect(verifyStateProof(proof, root, db.config).valid).toBe(true);
    const loc = ref.locationOf(key(k));
    if (loc === undefined) {
      const p = proof as ExclusionProof;
      expect(p.loc).toBe(ref.floor);
      const expected = buildRangeProof(SHA256, leaves, graftedInactive, "backward", ref.floor, leaves, (pos) => ref.graftedNode(pos));
      expect(p.digests).toEqual(expected.digests.map(toHex));
      expect(p.ops.length).toBe(leaves - ref.floor);
    } else {
      const p = proof as StateProof;
      expect(p.loc).toBe(loc);
      expect(p.value).toBe(toHex(ref.get(key(k))!));
      const expected = buildRangeProof(SHA256, leaves, graftedInactive, "backward", loc, loc + 1, (pos) => ref.graftedNode(pos));
      expect(p.digests).toEqual(expected.digests.map(toHex));
      expect(p.chunk).toBe(toHex(ref.chunk(Math.floor(loc / (ref.chunkBytes * 8)))));
    }
  }
  const live = keys.filter((k) => ref.locationOf(key(k)) !== undefined);
  if (live.length > 0) {
    const multi = proveKeys(db, live.map(key));
    const expected = buildMultiProof(leaves, graftedInactive, "backward", live.map((k) => ref.locationOf(key(k))!), (pos) => ref.graftedNode(pos));
    expect(multi.digests).toEqual(expected.digests.map(toHex));
    expect(verifyStateProof(multi, root, db.config).valid).toBe(true);
  }
}

describe("packed QMDB = plain reference (CIP-4 §5.1, §5.4)", () => {
  for (const chunkBytes of [1, 32]) {
    it(`§5.1 roots, values and proofs agree after every batch, pruning at every commit (${chunkBytes}-byte chunks)`, () => {
      fc.assert(
        fc.property(fc.array(batchArb, { minLength: 1, maxLength: 30 }), fc.array(fc.integer({ min: 0, max: 60 }), { minLength: 1, maxLength: 4 }), (batches, probe) => {
          const db = new CurrentDb(config(chunkBytes));
          const ref = new ReferenceCurrentDb(SHA256, variableCodec(KEY, byteVecValue), chunkBytes);
          for (const batch of batches) {
            const writes = toWrites(batch);
            db.applyBatch(writes);
            ref.applyBatch(writes);
            expect(toHex(db.root())).toBe(toHex(ref.root()));
            db.prune();
            expect(db.any.inactivityFloor).toBe(ref.floor);
          }
          for (let k = 0; k <= 60; k++) expect(db.get(key(k)) && toHex(db.get(key(k))!)).toBe(ref.get(key(k)) && toHex(ref.get(key(k))!));
          expectProofsEqual(db, ref, [...new Set(probe)]);
          expect([...db.any.entries()].map(([k, v]) => toHex(k) + toHex(v).slice(2))).toEqual(
            [...ref.snapshot.keys()].sort().map((hex) => hex + toHex(ref.get(Buffer.from(hex.slice(2), "hex"))!).slice(2)),
          );
        }),
        { numRuns: chunkBytes === 1 ? 60 : 30 },
      );
    });
  }

  it("§5.1 a long history with a far-raised floor: pruned database still agrees (32-byte chunks)", () => {
    const db = new CurrentDb(config(32));
    const ref = new ReferenceCurrentDb(SHA256, variableCodec(KEY, byteVecValue), 32);
    for (let round = 0; round < 60; round++) {
      const writes: Write[] = [];
      for (let i = 0; i < 40; i++) if ((i * 7 + round) % 3 !== 0) writes.push([key(i), (i + round) % 11 === 0 ? undefined : value(i + round)]);
      db.applyBatch(writes);
      ref.applyBatch(writes);
      expect(toHex(db.root())).toBe(toHex(ref.root()));
      db.prune();
    }
    expect(db.any.inactivityFloor).toBeGreaterThan(512);
    expect(() => db.any.operation(0)).toThrow(RangeError);
    expectProofsEqual(db, ref, [0, 1, 5, 17, 39, 59]);
  });
});

/** The batch as a non-array source that can be read more than once (as a dump's entry list is). */
const reiterable = (writes: readonly Write[]): Iterable<Write> => ({ [Symbol.iterator]: () => writes[Symbol.iterator]() });

describe("a batch read twice from its source instead of held as a list (CIP-4 §5.1)", () => {
  it("§5.1 an ascending batch handed as a re-iterable source gives the reference's roots and values", () => {
    fc.assert(
      fc.property(fc.array(batchArb, { minLength: 1, maxLength: 20 }), (batches) => {
        const db = new CurrentDb(config(1));
        const ref = new ReferenceCurrentDb(SHA256, variableCodec(KEY, byteVecValue), 1);
        for (const batch of batches) {
          // Last write of each key, ascending: the form a block's net changes and a dump have.
          const last = new Map(batch.map(([k, v]) => [k, v] as const));
          const writes = toWrites([...last].sort((a, b) => toHex(key(a[0])).localeCompare(toHex(key(b[0])))));
          db.applyBatch(reiterable(writes));
          ref.applyBatch(writes);
          expect(toHex(db.root())).toBe(toHex(ref.root()));
          db.prune();
        }
        for (let k = 0; k <= 60; k++) expect(db.get(key(k)) && toHex(db.get(key(k))!)).toBe(ref.get(key(k)) && toHex(ref.get(key(k))!));
      }),
      { numRuns: 40 },
    );
  });

  it("§5.1 a source that is not strictly ascending is refused before anything is appended", () => {
    const db = new CurrentDb(config(32));
    db.applyBatch([[key(1), value(1)]]);
    const root = toHex(db.root());
    const size = db.any.size;
    expect(() => db.applyBatch(reiterable([[key(3), value(3)], [key(2), value(2)]]))).toThrow("batch keys must be strictly ascending");
    expect(() => db.applyBatch(reiterable([[key(2), value(2)], [key(2), value(3)]]))).toThrow("batch keys must be strictly ascending");
    expect(db.any.size).toBe(size);
    expect(toHex(db.root())).toBe(root);
  });

  it("§5.1 a source that yields different creates on its second reading is a defect, not a silent root", () => {
    const db = new CurrentDb(config(32));
    let readings = 0;
    const shrinking: Iterable<Write> = {
      [Symbol.iterator]: () => (readings++ === 0 ? [[key(1), value(1)], [key(2), value(2)]] : [[key(1), value(1)]])[Symbol.iterator]() as Iterator<Write>,
    };
    expect(() => db.applyBatch(shrinking)).toThrow("batch changed between its two passes: 2 creates, then 1");
  });

  it("§5.1 entries() reads values lazily in key order and refuses to continue across a batch", () => {
    const db = new CurrentDb(config(32));
    db.applyBatch([[key(9), value(9)], [key(2), value(2)], [key(5), value(5)]]);
    expect([...db.any.entries()].map(([k]) => toHex(k))).toEqual([key(2), key(5), key(9)].map(toHex));
    const it = db.any.entries();
    expect(toHex(it.next().value![1])).toBe(toHex(value(2)));
    db.applyBatch([[key(7), value(7)]]);
    expect(() => it.next()).toThrow("a batch was applied while the state's entries were being read");
  });
});

describe("reopening a QMDB on its storage (what a persistent backend relies on)", () => {
  it("§5.1 a database reopened on the same storage, pruned, has the same root and proofs and continues identically", () => {
    fc.assert(
      fc.property(fc.array(batchArb, { minLength: 1, maxLength: 25 }), fc.array(batchArb, { maxLength: 8 }), (before, after) => {
        const cfg = config(1);
        const storage = memoryStorage(cfg.chunkBytes);
        const db = new CurrentDb(cfg, storage);
        const ref = new ReferenceCurrentDb(SHA256, variableCodec(KEY, byteVecValue), 1);
        for (const batch of before) {
          db.applyBatch(toWrites(batch));
          ref.applyBatch(toWrites(batch));
          db.root();
          db.prune();
        }
        const reopened = new CurrentDb(cfg, storage);
        expect(toHex(reopened.root())).toBe(toHex(ref.root()));
        expectProofsEqual(reopened, ref, [0, 7, 33]);
        for (const batch of after) {
          reopened.applyBatch(toWrites(batch));
          ref.applyBatch(toWrites(batch));
          expect(toHex(reopened.root())).toBe(toHex(ref.root()));
          reopened.prune();
        }
      }),
      { numRuns: 40 },
    );
  });
});

describe("MMR with sparse node storage = every node stored (CIP-4 §5.1)", () => {
  it("§5.1 digests of every position, roots and range proofs agree, before and after pruning", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), fc.nat(), (n, cut) => {
        const mmr = new Mmr(SHA256);
        const ref = new ReferenceMmr(SHA256);
        for (let i = 0; i < n; i++) {
          const element = SHA256.hash(u64BE(i));
          mmr.append(element);
          ref.append(element);
        }
        for (let pos = 0; pos < ref.nodes.length; pos++) expect(bytesEqual(mmr.node(pos), ref.nodes[pos]!)).toBe(true);
        const floor = cut % (n + 1);
        mmr.prune(floor);
        const inactive = Math.min(1, peaks(ref.nodes.length).length);
        expect(toHex(mmr.root("backward", inactive))).toBe(toHex(ref.root("backward", inactive)));
        for (let loc = floor; loc < n; loc++) {
          const proof = mmr.rangeProof(loc, n, "backward", 0);
          const expected = buildRangeProof(SHA256, n, 0, "backward", loc, n, (pos) => ref.nodes[pos]!);
          expect(proof.digests.map(toHex)).toEqual(expected.digests.map(toHex));
        }
        // Appending after pruning keeps matching.
        for (let i = n; i < n + 20; i++) {
          const element = SHA256.hash(u64BE(i));
          mmr.append(element);
          ref.append(element);
        }
        expect(toHex(mmr.root())).toBe(toHex(ref.root("forward", 0)));
      }),
      { numRuns: 40 },
    );
  });
});
