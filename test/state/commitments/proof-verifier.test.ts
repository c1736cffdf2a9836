// The standalone state-proof verifier (state/qmdb/proof.ts) against proofs that are well formed and
// authentic in every part but one: each case names the check that must refuse it, and asserts
// that check's reason, so a verifier that skipped it would be caught even when a later check
// happened to fail too.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { fromHex, toHex } from "../../../src/bytes.js";
import { SHA256 } from "../../../src/crypto/hash.js";
import { STATE_KEY_LENGTH } from "../../../state/kv/interface.js";
import { buildRangeProof, MAX_PROOF_DIGESTS_PER_ELEMENT } from "../../../state/qmdb/mmr.js";
import type { QmdbConfig } from "../../../state/qmdb/any.js";
import { CurrentDb } from "../../../state/qmdb/current.js";
import { stateDbConfig, type Write } from "../../../state/qmdb/index.js";
import { rawValue, variableCodec } from "../../../state/qmdb/operation.js";
import {
  MAX_EXCLUSION_PROOF_OPS,
  MAX_MULTI_PROOF_KEYS,
  proveInclusion,
  proveKey,
  proveKeys,
  verifyStateProof,
  type ExclusionProof,
  type MultiStateProof,
  type StateProof,
} from "../../../state/qmdb/proof.js";

const key = (i: number): Uint8Array => {
  const k = new Uint8Array(STATE_KEY_LENGTH);
  k[0] = 0x03;
  k[51] = i;
  return k;
};

/**
 * An Appendix C proof of the operation at `loc`, built exactly as proveInclusion builds one for
 * a current value (real range proof, real bitmap chunk), but for any Update of the log.
 */
function proofAt(db: CurrentDb, loc: number): StateProof {
  const op = db.any.operation(loc);
  if (op.kind !== "update") throw new Error(`operation ${loc} is not an update`);
  const current = proveInclusion(db, op.key);
  const range = buildRangeProof(db.config.hasher, db.any.mmr.leaves, db.graftedInactivePeaks(), "backward", loc, loc + 1, (pos) =>
    db.graftedNode(pos),
  );
  return {
    ...current,
    value: toHex(op.value),
    loc,
    chunk: toHex(db.any.bitmap.chunk(Math.floor(loc / db.any.bitmap.chunkBits))),
    mmr_leaves: range.leaves,
    inactive_peaks: range.inactivePeaks,
    digests: range.digests.map(toHex),
  };
}

describe("state proof verifier: each check refuses on its own (CIP-4 §5.4, Appendix C)", () => {
  it("activity bit: a proof of a key's OVERWRITTEN value, with the real bitmap chunk, does not verify as current", () => {
    const db = new CurrentDb(stateDbConfig());
    // Key 1 is written twice: its first Update stays in the log, inactive.
    db.applyBatch([[key(1), Uint8Array.of(0xaa)], [key(2), Uint8Array.of(2)], [key(3), Uint8Array.of(3)]]);
    db.applyBatch([[key(1), Uint8Array.of(0xbb)], [key(4), Uint8Array.of(4)]] satisfies Write[]);
    const root = db.root();
    const overwritten = Array.from({ length: db.any.size }, (_, loc) => loc).find((loc) => {
      const op = db.any.operation(loc);
      return op.kind === "update" && op.key[51] === 1 && op.value[0] === 0xaa;
    })!;
    const stale = proofAt(db, overwritten);
    expect(stale.value).toBe("0xaa");
    // The construction is authentic: at the key's current location it is a valid proof.
    const current = proofAt(db, db.any.locationOf(key(1))!);
    expect([current.value, verifyStateProof(current, root)]).toEqual(["0xbb", { valid: true }]);
    expect(verifyStateProof(stale, root)).toEqual({ valid: false, reason: "operation is not active in its chunk" });
  });
});

/** The reason a proof is refused (fails the test if it verifies). */
function reason(proof: unknown, root: Uint8Array, config?: QmdbConfig): string {
  const result = verifyStateProof(proof, root, config);
  if (result.valid) throw new Error("proof unexpectedly verified");
  return result.reason;
}

const flip = (hex: string, byte: number, mask = 0x01): string => {
  const bytes = fromHex(hex);
  bytes[byte] = bytes[byte]! ^ mask;
  return toHex(bytes);
};
const without = (proof: object, name: string): Record<string, unknown> => {
  const copy: Record<string, unknown> = { ...proof };
  delete copy[name];
  return copy;
};

/** Several keys over two batches: live keys, an overwritten one, a deleted one. */
function smallDb(): CurrentDb {
  const db = new CurrentDb(stateDbConfig());
  db.applyBatch([1, 2, 3, 4, 5].map((i): Write => [key(i), Uint8Array.of(i)]));
  db.applyBatch([[key(1), Uint8Array.of(0x11)], [key(5), undefined]]);
  return db;
}

describe("state proof verifier: every refusal names its check (CIP-4 §5.4, §8.2, Appendix C)", () => {
  const db = smallDb();
  const root = db.root();
  const single = proveInclusion(db, key(2));
  const absent = proveKey(db, key(9)) as ExclusionProof;
  const multi = proveKeys(db, [key(1), key(2), key(3)]);

  it("test precondition: the three proof kinds verify", () => {
    for (const proof of [single, absent, multi]) expect(verifyStateProof(proof, root)).toEqual({ valid: true });
    expect(absent.value).toBeNull();
    expect(single.partial_chunk_digest).not.toBeNull();
  });

  it("the prover refuses what it cannot prove, saying why", () => {
    expect(() => proveInclusion(db, key(5))).toThrow(`key ${toHex(key(5))} has no current value`);
    expect(() => proveKey(db, new Uint8Array(3))).toThrow(`key must be ${STATE_KEY_LENGTH} bytes`);
    expect(() => proveKeys(db, [])).toThrow("no keys to prove");
    expect(() => proveKeys(db, [key(1), key(1)])).toThrow("duplicate key in batch proof");
    const many = Array.from({ length: MAX_MULTI_PROOF_KEYS + 1 }, (_, i) => key(i));
    expect(() => proveKeys(db, many)).toThrow(`${MAX_MULTI_PROOF_KEYS + 1} keys requested; at most ${MAX_MULTI_PROOF_KEYS} per proof (CIP-4 §8.2)`);
  });

  it("shape: not an object, missing or unknown field, wrong types", () => {
    for (const bad of ["nonsense", null, [], 5]) expect(reason(bad, root)).toBe("proof is not an object");
    expect(reason(without(single, "chunk"), root)).toBe("missing field chunk");
    expect(reason(without(absent, "ops"), root)).toBe("missing field ops");
    expect(reason({ ...single, extra: 1 }, root)).toBe("unknown field extra in proof");
    expect(reason({ ...absent, chunk: "0x" }, root)).toBe("unknown field chunk in proof");
    expect(reason({ ...multi, loc: 0 }, root)).toBe("unknown field loc in proof");
    expect(reason({ ...single, proof_version: 2 }, root)).toBe("unsupported proof_version");
    expect(reason({ ...single, loc: -1 }, root)).toBe("proof.loc must be a non-negative integer");
    expect(reason({ ...single, loc: 1.5 }, root)).toBe("proof.loc must be a non-negative integer");
    expect(reason({ ...single, loc: "1" }, root)).toBe("proof.loc must be a non-negative integer");
    expect(reason({ ...single, mmr_leaves: -1 }, root)).toBe("mmr_leaves must be a non-negative integer");
    expect(reason({ ...single, inactive_peaks: -1 }, root)).toBe("inactive_peaks must be a non-negative integer");
    expect(reason({ ...single, key: 5 }, root)).toBe("proof.key must be a hex string");
    expect(reason({ ...single, key: "0x00" }, root)).toMatch(/^proof\.key\b/);
    expect(reason({ ...single, value: "0xzz" }, root)).toMatch(/^proof\.value\b/);
    expect(reason({ ...single, chunk: "0x00" }, root)).toMatch(/^proof\.chunk\b/);
    expect(reason({ ...single, ops_root: "0x00" }, root)).toMatch(/^ops_root\b/);
    expect(reason({ ...single, partial_chunk_digest: "0x00" }, root)).toMatch(/^partial_chunk_digest\b/);
    expect(reason({ ...single, digests: "0x" }, root)).toBe("digests must be an array");
    expect(reason({ ...single, digests: [...single.digests.slice(1), "0x00"] }, root)).toMatch(/^digests\[\d+\]/);
  });

  it("digest-count bound: more than the per-element bound is refused before use; the bound itself is not", () => {
    const filler = single.digests[0] ?? toHex(new Uint8Array(32));
    const over = Array.from({ length: MAX_PROOF_DIGESTS_PER_ELEMENT + 1 }, () => filler);
    expect(reason({ ...single, digests: over }, root)).toBe(`${MAX_PROOF_DIGESTS_PER_ELEMENT + 1} digests exceed the bound ${MAX_PROOF_DIGESTS_PER_ELEMENT}`);
    expect(reason({ ...single, digests: over.slice(1) }, root)).not.toMatch(/exceed the bound/);
  });

  it("single proof: activity, location and trailing-chunk checks each give their reason", () => {
    const chunk = fromHex(single.chunk);
    const ownBit = single.loc % 256;
    // A location at mmr_leaves, its bit forged on so the activity check passes.
    const beyond = single.mmr_leaves;
    const forged = chunk.slice();
    forged[(beyond % 256) >> 3]! |= 1 << (beyond % 8);
    expect(reason({ ...single, loc: beyond, chunk: toHex(forged) }, root)).toBe("loc beyond mmr_leaves");
    expect(reason({ ...single, partial_chunk_digest: null }, root)).toBe("partial_chunk_digest presence mismatch");
    // Another bit of the trailing chunk flipped: the own bit stays set, the chunk no longer matches.
    const other = (ownBit + 1) % 256;
    expect(reason({ ...single, chunk: flip(single.chunk, other >> 3, 1 << (other % 8)) }, root)).toBe("chunk does not match partial_chunk_digest");
    expect(reason(single, fromHex(flip(toHex(root), 0)))).toBe("root mismatch");
  });

  it("exclusion proof: each structural check gives its reason", () => {
    const last = absent.ops.length - 1;
    expect(reason({ ...absent, ops: [] }, root)).toBe("ops must be a non-empty array");
    expect(reason({ ...absent, ops: "x" }, root)).toBe("ops must be a non-empty array");
    expect(reason({ ...absent, ops: [null, ...absent.ops.slice(1)] }, root)).toBe("ops[0].op must be update, delete or commit");
    expect(reason({ ...absent, ops: [5, ...absent.ops.slice(1)] }, root)).toBe("ops[0].op must be update, delete or commit");
    expect(reason({ ...absent, ops: [{ op: "update", key: "0x00", value: "0x" }] }, root)).toMatch(/^ops\[0\]\.key\b/);
    expect(reason({ ...absent, ops: [{ op: "update", key: toHex(key(1)), value: "0xz" }] }, root)).toMatch(/^ops\[0\]\.value\b/);
    expect(reason({ ...absent, ops: [{ op: "delete", key: "0x00" }] }, root)).toMatch(/^ops\[0\]\.key\b/);
    expect(reason({ ...absent, ops: [{ op: "commit", floor: -1 }] }, root)).toBe("ops[0].floor must be a non-negative integer");
    expect(reason({ ...absent, ops: [{ op: "commit", floor: 0, extra: 1 }] }, root)).toBe("unknown field extra in ops[0]");
    expect(reason({ ...absent, key: "0x00" }, root)).toMatch(/^key\b/);
    expect(reason({ ...absent, loc: -1 }, root)).toBe("loc must be a non-negative integer");
    expect(reason({ ...absent, ops: absent.ops.slice(0, -1) }, root)).toBe("ops do not reach the last operation");
    expect(reason({ ...absent, loc: absent.loc + 1, ops: absent.ops.slice(1) }, root)).toBe("range does not start at the committed floor");
    const notCommit = absent.ops.map((op, i) => (i === last ? { op: "delete", key: toHex(key(7)) } : op));
    expect(reason({ ...absent, ops: notCommit }, root)).toBe("range does not start at the committed floor");
    expect(reason({ ...absent, chunks: [] }, root)).toBe("chunks must list 1 chunks");
    expect(reason({ ...absent, chunks: ["0x00"] }, root)).toMatch(/^chunks\[0\]/);
    expect(reason({ ...absent, partial_chunk_digest: null }, root)).toBe("partial_chunk_digest presence mismatch");
    expect(reason({ ...absent, chunks: [flip(absent.chunks[0]!, 31, 0x80)] }, root)).toBe("last chunk does not match partial_chunk_digest");
    expect(reason({ ...absent, key: toHex(key(2)) }, root)).toBe("key has a current value");
  });

  it("exclusion proof: the ops bound is checked before any op is read", () => {
    const ops = new Array<null>(MAX_EXCLUSION_PROOF_OPS + 1).fill(null);
    expect(reason({ ...absent, ops }, root)).toBe(`more than ${MAX_EXCLUSION_PROOF_OPS} ops`);
    expect(reason({ ...absent, ops: ops.slice(1) }, root)).toBe("ops[0].op must be update, delete or commit");
  });

  it("exclusion proof of a key whose old Update is still in the range (overwritten, then deleted) verifies", () => {
    const d = new CurrentDb(stateDbConfig());
    // Many live keys keep the inactivity floor low while key 1 is rewritten, then deleted.
    d.applyBatch(Array.from({ length: 20 }, (_, i): Write => [key(i + 1), Uint8Array.of(i)]));
    d.applyBatch([[key(1), Uint8Array.of(0xaa)]]);
    d.applyBatch([[key(1), undefined]]);
    const proof = proveKey(d, key(1)) as ExclusionProof;
    expect(proof.ops.some((op) => op.op === "update" && op.key === toHex(key(1)))).toBe(true);
    expect(verifyStateProof(proof, d.root())).toEqual({ valid: true });
  });

  it("batch proof: each structural check gives its reason", () => {
    const entry = multi.entries[0]!;
    expect(reason({ ...multi, entries: [] }, root)).toBe("entries must be a non-empty array");
    expect(reason({ ...multi, entries: {} }, root)).toBe("entries must be a non-empty array");
    expect(reason({ ...multi, entries: new Array(MAX_MULTI_PROOF_KEYS + 1).fill(null) }, root)).toBe(`more than ${MAX_MULTI_PROOF_KEYS} entries`);
    expect(reason({ ...multi, entries: [null] }, root)).toBe("entries[0] is not an object");
    expect(reason({ ...multi, entries: [{ ...entry, extra: 1 }] }, root)).toBe("unknown field extra in entries[0]");
    expect(reason({ ...multi, entries: [{ ...entry, key: "0x00" }] }, root)).toMatch(/^entries\[0\]\.key\b/);
    expect(reason({ ...multi, entries: [entry, entry] }, root)).toBe("duplicate key");
    expect(reason({ ...multi, entries: [entry, { ...multi.entries[1]!, loc: entry.loc }] }, root)).toBe("duplicate loc");
    const tooMany = Array.from({ length: MAX_PROOF_DIGESTS_PER_ELEMENT * 3 + 1 }, () => multi.digests[0]!);
    expect(reason({ ...multi, digests: tooMany }, root)).toMatch(/digests exceed the bound/);
  });
});

// One-byte chunks: 8 operations per chunk, so random histories end on a chunk boundary (no
// partial chunk), one short of it, or anywhere between; every boundary of the chunk arithmetic.
const smallChunks: QmdbConfig = { hasher: SHA256, codec: variableCodec(32, rawValue), chunkBytes: 1, keyLength: 32 };
const k32 = (i: number): Uint8Array => new Uint8Array(32).fill(i + 1);

describe("state proofs with 8-operation chunks: every position relative to a chunk boundary", () => {
  /** Every key's proof verifies, so does a batch proof of the live ones; returns whether aligned. */
  function checkAll(d: CurrentDb): boolean {
    const r = d.root();
    const live: Uint8Array[] = [];
    for (let i = 0; i < 10; i++) {
      const proof = proveKey(d, k32(i));
      expect(verifyStateProof(proof, r, smallChunks)).toEqual({ valid: true });
      if (proof.value !== null) live.push(k32(i));
    }
    if (live.length > 0) expect(verifyStateProof(proveKeys(d, live), r, smallChunks)).toEqual({ valid: true });
    if (d.any.size % 8 !== 0) return false;
    // No trailing partial chunk: a proof claiming one is refused.
    const sample = proveKey(d, k32(0));
    expect(sample.partial_chunk_digest).toBeNull();
    expect(reason({ ...sample, partial_chunk_digest: toHex(new Uint8Array(32)) }, r, smallChunks)).toBe("partial_chunk_digest presence mismatch");
    return true;
  }

  it("inclusion, exclusion and batch proofs verify on and beside chunk boundaries (fast-check)", () => {
    let aligned = 0;
    const write = fc.tuple(fc.integer({ min: 0, max: 9 }), fc.option(fc.nat(255), { nil: undefined }));
    fc.assert(
      fc.property(fc.array(fc.array(write, { minLength: 1, maxLength: 5 }), { minLength: 1, maxLength: 6 }), (batches) => {
        const d = new CurrentDb(smallChunks);
        for (const batch of batches) {
          const writes = new Map(batch);
          d.applyBatch([...writes].map(([k, v]): Write => [k32(k), v === undefined ? undefined : Uint8Array.of(v)]));
        }
        // Then one write at a time, checking wherever the log ends on or just before a boundary.
        for (let step = 0; step < 12; step++) {
          d.applyBatch([[k32(step % 10), Uint8Array.of(step)]]);
          if (d.any.size % 8 === 0 || d.any.size % 8 === 7) aligned += checkAll(d) ? 1 : 0;
        }
      }),
      { numRuns: 20, seed: 9 },
    );
    expect(aligned).toBeGreaterThan(3);
  });
});

export type { MultiStateProof, StateProof };
