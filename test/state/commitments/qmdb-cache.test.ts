// The "current" database keeps grafted-tree digests across batches and drops only those above
// a changed bitmap chunk (state/qmdb/current.ts). These properties compare it with a database
// whose cache is cold: any stale entry the invalidation missed shows up as a different root.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { concatBytes, toHex } from "../../../src/bytes.js";
import { SHA256 } from "../../../src/crypto/hash.js";
import type { QmdbConfig, Write } from "../../../state/qmdb/any.js";
import { bagPeaks, children, nodeDigest, peaks } from "../../../state/qmdb/mmr.js";
import { chunkAlignedInactivePeaks, combineRoots, CurrentDb } from "../../../state/qmdb/current.js";
import { rawValue, variableCodec } from "../../../state/qmdb/operation.js";

const key = (b: number): Uint8Array => new Uint8Array(32).fill(b);
const val = (b: number): Uint8Array => SHA256.hash(Uint8Array.of(b));
// One-byte chunks (grafting height 3) so short histories already have several grafted levels.
const config = (chunkBytes: number): QmdbConfig => ({ hasher: SHA256, codec: variableCodec(32, rawValue), chunkBytes, keyLength: 32 });

const batchArb = fc.array(
  fc.record({ k: fc.integer({ min: 0, max: 11 }), v: fc.option(fc.integer({ min: 0, max: 255 }), { nil: undefined }) }),
  { minLength: 1, maxLength: 6 },
);

function toWrites(batch: { k: number; v: number | undefined }[]): Write[] {
  return batch.map(({ k, v }) => [key(k), v === undefined ? undefined : val(v)] as const);
}

describe("QMDB current: grafted-node cache (CIP-4 §5.1)", () => {
  for (const chunkBytes of [1, 2]) {
    it(`§5.1 root after every batch equals a cold-cache root of the same history (${chunkBytes}-byte chunks)`, () => {
      fc.assert(
        fc.property(fc.array(batchArb, { minLength: 1, maxLength: 40 }), (batches) => {
          const warm = new CurrentDb(config(chunkBytes));
          const history: Write[][] = [];
          for (const batch of batches) {
            const writes = toWrites(batch);
            history.push(writes);
            warm.applyBatch(writes);
            const cold = new CurrentDb(config(chunkBytes));
            for (const w of history) cold.applyBatch(w);
            expect(toHex(warm.root())).toBe(toHex(cold.root()));
          }
        }),
        { numRuns: 60 },
      );
    });
  }

  it("grafted-cache invalidation: root() after every batch equals the root recomputed from its definition, no cache (fast-check)", () => {
    fc.assert(
      fc.property(fc.array(batchArb, { minLength: 1, maxLength: 40 }), (batches) => {
        const db = new CurrentDb(config(1));
        for (const batch of batches) {
          db.applyBatch(toWrites(batch));
          expect(toHex(db.root())).toBe(toHex(rootFromDefinition(db)));
        }
      }),
      { numRuns: 40, seed: 9 },
    );
  });
});

/**
 * The "current" root computed from the definition (state/qmdb/current.ts header), reading only
 * the ops MMR and the bitmap, never CurrentDb's grafted-node cache.
 */
function rootFromDefinition(db: CurrentDb): Uint8Array {
  const { hasher } = db.config;
  const { mmr, bitmap } = db.any;
  const g = db.height;
  const node = (pos: number, height: number, firstLeaf: number): Uint8Array => {
    if (height < g) return mmr.node(pos);
    if (height === g) {
      const chunk = bitmap.chunk(firstLeaf / 2 ** g);
      return chunk.every((b) => b === 0) ? mmr.node(pos) : hasher.hash(concatBytes(chunk, mmr.node(pos)));
    }
    const [left, right] = children(pos, height);
    return nodeDigest(hasher, pos, node(left, height - 1, firstLeaf), node(right, height - 1, firstLeaf + 2 ** (height - 1)));
  };
  const peakDigests: Uint8Array[] = [];
  let firstLeaf = 0;
  for (const peak of peaks(mmr.size)) {
    peakDigests.push(node(peak.pos, peak.height, firstLeaf));
    firstLeaf += 2 ** peak.height;
  }
  const inactive = chunkAlignedInactivePeaks(mmr.leaves, db.any.inactivityFloor, g);
  const graftedRoot = bagPeaks(hasher, mmr.leaves, peakDigests, "backward", inactive);
  const nextBit = bitmap.length % bitmap.chunkBits;
  const partial = nextBit === 0 ? undefined : { nextBit, digest: hasher.hash(bitmap.chunk(Math.floor(bitmap.length / bitmap.chunkBits))) };
  return combineRoots(hasher, db.any.root(), graftedRoot, partial);
}
