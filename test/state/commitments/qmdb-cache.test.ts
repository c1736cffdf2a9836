// The "current" database keeps grafted-tree digests across batches and drops only those above
// a changed bitmap chunk (state/qmdb/current.ts). These properties compare it with a database
// whose cache is cold: any stale entry the invalidation missed shows up as a different root.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { toHex } from "../../../src/bytes.js";
import { SHA256 } from "../../../src/crypto/hash.js";
import type { QmdbConfig, Write } from "../../../state/qmdb/any.js";
import { CurrentDb } from "../../../state/qmdb/current.js";
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
});
