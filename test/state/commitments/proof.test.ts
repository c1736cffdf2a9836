import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { fromHex, toHex } from "../../../src/bytes.js";
import { SHA256 } from "../../../src/crypto/hash.js";
import { STATE_KEY_LENGTH } from "../../../state/kv/interface.js";
import { ProofError } from "../../../state/qmdb/mmr.js";
import { CurrentDb } from "../../../state/qmdb/current.js";
import { stateDbConfig, type Write } from "../../../state/qmdb/index.js";
import {
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
  k[50] = i >> 8;
  k[51] = i & 0xff;
  return k;
};
const value = (i: number, round: number): Uint8Array => Uint8Array.from([i & 0xff, round, 7, 7].slice(0, 1 + ((i + round) % 4)));

/** A Cowboy state database with several bitmap chunks, a partial last chunk and a raised floor. */
function buildDb(keys: number, rounds: number): CurrentDb {
  const db = new CurrentDb(stateDbConfig());
  for (let round = 0; round < rounds; round++) {
    const writes: Write[] = [];
    for (let i = 0; i < keys; i++) {
      if ((i + round) % 7 === 0) writes.push([key(i), undefined]);
      else if ((i * 3 + round) % 4 !== 0) writes.push([key(i), value(i, round)]);
    }
    db.applyBatch(writes);
  }
  return db;
}

const flipHex = (hex: string, byte = 0): string => {
  const bytes = fromHex(hex);
  bytes[byte] = bytes[byte]! ^ 0x01;
  return toHex(bytes);
};

describe("state proofs (CIP-4 §5.4, §8.2, Appendix C)", () => {
  const db = buildDb(90, 9);
  const root = db.root();
  const live = Array.from({ length: 90 }, (_, i) => i).filter((i) => db.get(key(i)) !== undefined);

  it("§5.4 the database spans several chunks with a partial last one (test precondition)", () => {
    expect(db.any.size).toBeGreaterThan(600);
    expect(db.any.size % 256).not.toBe(0);
    expect(db.any.inactivityFloor).toBeGreaterThan(256);
    expect(live.length).toBeGreaterThan(40);
  });

  it("§5.4 every live key has an Appendix C proof that verifies against the state root", () => {
    for (const i of live) {
      const proof = proveKey(db, key(i)) as StateProof;
      expect(Object.keys(proof).sort()).toEqual(
        ["chunk", "digests", "inactive_peaks", "key", "loc", "mmr_leaves", "ops_root", "partial_chunk_digest", "proof_version", "value"],
      );
      expect(proof.value).toBe(toHex(db.get(key(i))!));
      const round = JSON.parse(JSON.stringify(proof)) as unknown;
      expect(verifyStateProof(round, root)).toEqual({ valid: true });
    }
  });

  it("§5.4 a proof binds its value, and a stale proof fails against a later root", () => {
    const i = live[0]!;
    const proof = proveInclusion(db, key(i));
    expect(verifyStateProof({ ...proof, value: toHex(Uint8Array.of(0xee)) }, root).valid).toBe(false);
    const later = buildDb(90, 9);
    later.applyBatch([[key(i), Uint8Array.of(1, 2, 3)]]);
    expect(verifyStateProof(proof, later.root()).valid).toBe(false);
    expect(verifyStateProof(proveInclusion(later, key(i)), later.root()).valid).toBe(true);
  });

  it("§5.4 an absent key has an exclusion proof: every operation from the floor, none active for the key", () => {
    const absent = Array.from({ length: 90 }, (_, i) => i).filter((i) => db.get(key(i)) === undefined);
    expect(absent.length).toBeGreaterThan(3);
    expect(() => proveInclusion(db, key(absent[0]!))).toThrow(ProofError);
    for (const i of [...absent, 5000]) {
      const proof = proveKey(db, key(i)) as ExclusionProof;
      expect(proof.value).toBeNull();
      expect(proof.loc).toBe(db.any.inactivityFloor);
      expect(proof.ops.length).toBe(db.any.size - db.any.inactivityFloor);
      expect(verifyStateProof(JSON.parse(JSON.stringify(proof)), root)).toEqual({ valid: true });
    }
  });

  it("§5.4 exclusion proofs are rejected for live keys and when tampered", () => {
    const absent = Array.from({ length: 90 }, (_, i) => i).find((i) => db.get(key(i)) === undefined)!;
    const proof = proveKey(db, key(absent)) as ExclusionProof;
    // Re-pointing the proof at a live key: its active Update is in the listed range.
    expect(verifyStateProof({ ...proof, key: toHex(key(live[0]!)) }, root)).toEqual({
      valid: false,
      reason: "key has a current value",
    });
    const firstUpdate = proof.ops.findIndex((op) => op.op === "update");
    const ops = proof.ops.map((op, i) => (i === firstUpdate && op.op === "update" ? { ...op, key: toHex(key(absent)) } : op));
    const variants: [string, ExclusionProof][] = [
      ["op key rewritten to the proven key", { ...proof, ops }],
      ["ops truncated at the front", { ...proof, loc: proof.loc + 1, ops: proof.ops.slice(1) }],
      ["ops truncated at the end", { ...proof, ops: proof.ops.slice(0, -1) }],
      ["chunk flipped", { ...proof, chunks: proof.chunks.map((c, i) => (i === 0 ? flipHex(c, 31) : c)) }],
      ["chunk dropped", { ...proof, chunks: proof.chunks.slice(1) }],
      ["digest flipped", { ...proof, digests: proof.digests.map((d, i) => (i === 0 ? flipHex(d) : d)) }],
      ["ops_root", { ...proof, ops_root: flipHex(proof.ops_root) }],
      ["partial", { ...proof, partial_chunk_digest: flipHex(proof.partial_chunk_digest!) }],
      ["inactive_peaks", { ...proof, inactive_peaks: proof.inactive_peaks + 1 }],
      ["mmr_leaves", { ...proof, mmr_leaves: proof.mmr_leaves + 1 }],
    ];
    for (const [name, variant] of variants) {
      if (verifyStateProof(variant, root).valid) throw new Error(`tampered ${name} accepted`);
    }
  });

  it("§5.4 flipping any field of a single-key proof is rejected", () => {
    const proof = proveInclusion(db, key(live[3]!));
    expect(proof.digests.length).toBeGreaterThan(2);
    expect(proof.partial_chunk_digest).not.toBeNull();
    const chunkBytes = fromHex(proof.chunk);
    const otherSetBit = (() => {
      for (let b = 0; b < 256; b++) if (b !== proof.loc % 256 && (chunkBytes[b >> 3]! >> (b & 7)) & 1) return b;
      return 0;
    })();
    const ownBit = proof.loc % 256;
    const variants: [string, StateProof][] = [
      ["proof_version", { ...proof, proof_version: 2 }],
      ["key", { ...proof, key: flipHex(proof.key, 53) }],
      ["value", { ...proof, value: proof.value === "0x" ? "0x00" : flipHex(proof.value) }],
      ["loc", { ...proof, loc: proof.loc + 1 }],
      ["loc-1", { ...proof, loc: proof.loc - 1 }],
      ["chunk own bit", { ...proof, chunk: flipHex(proof.chunk, ownBit >> 3) }],
      ["chunk other bit", { ...proof, chunk: flipHex(proof.chunk, otherSetBit >> 3) }],
      ["mmr_leaves", { ...proof, mmr_leaves: proof.mmr_leaves + 1 }],
      ["mmr_leaves-1", { ...proof, mmr_leaves: proof.mmr_leaves - 1 }],
      ["mmr_leaves huge", { ...proof, mmr_leaves: Number.MAX_SAFE_INTEGER }],
      ["mmr_leaves fractional", { ...proof, mmr_leaves: proof.mmr_leaves + 0.5 }],
      ["inactive_peaks", { ...proof, inactive_peaks: proof.inactive_peaks + 1 }],
      ["partial_chunk_digest", { ...proof, partial_chunk_digest: flipHex(proof.partial_chunk_digest!) }],
      ["partial_chunk_digest null", { ...proof, partial_chunk_digest: null }],
      ["ops_root", { ...proof, ops_root: flipHex(proof.ops_root) }],
      ["digests dropped", { ...proof, digests: proof.digests.slice(1) }],
      ["digests extra", { ...proof, digests: [...proof.digests, proof.digests[0]!] }],
      ...proof.digests.map((_, i): [string, StateProof] => [
        `digests[${i}]`,
        { ...proof, digests: proof.digests.map((d, j) => (j === i ? flipHex(d, 31) : d)) },
      ]),
    ];
    for (const [name, variant] of variants) {
      const result = verifyStateProof(variant, root);
      if (result.valid) throw new Error(`tampered ${name} accepted`);
    }
    expect(verifyStateProof(proof, fromHex(flipHex(toHex(root)))).valid).toBe(false);
    expect(verifyStateProof({ ...proof, extra: 1 }, root).valid).toBe(false);
    expect(verifyStateProof("nonsense", root).valid).toBe(false);
  });

  it("§8.2 batch proofs verify, share nodes, and reject tampering", () => {
    const keys = live.slice(0, 30).map(key);
    const multi = proveKeys(db, keys);
    expect(verifyStateProof(JSON.parse(JSON.stringify(multi)), root)).toEqual({ valid: true });
    const singles = keys.reduce((sum, k) => sum + proveInclusion(db, k).digests.length, 0);
    expect(multi.digests.length).toBeLessThan(singles);
    const tampered: MultiStateProof[] = [
      { ...multi, digests: multi.digests.map((d, i) => (i === 5 ? flipHex(d) : d)) },
      { ...multi, entries: multi.entries.map((e, i) => (i === 7 ? { ...e, value: e.value + "00" } : e)) },
      { ...multi, entries: multi.entries.map((e, i) => (i === 2 ? { ...e, loc: e.loc + 1 } : e)) },
      { ...multi, entries: [...multi.entries, multi.entries[0]!] },
      { ...multi, ops_root: flipHex(multi.ops_root) },
      { ...multi, mmr_leaves: multi.mmr_leaves + 1 },
    ];
    for (const t of tampered) expect(verifyStateProof(t, root).valid).toBe(false);
  });

  it("§8.2 batch proofs of more than 256 keys are refused", () => {
    const big = new CurrentDb(stateDbConfig());
    const keys = Array.from({ length: MAX_MULTI_PROOF_KEYS + 1 }, (_, i) => key(i));
    big.applyBatch(keys.map((k, i): Write => [k, value(i, 0)]));
    expect(() => proveKeys(big, keys)).toThrow(ProofError);
    expect(verifyStateProof(proveKeys(big, keys.slice(0, MAX_MULTI_PROOF_KEYS)), big.root())).toEqual({ valid: true });
  });

  it("§5.4 proofs verify for random databases and any live key (SHA-256 configuration too)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 12 }), fc.nat(), (keys, rounds, pick) => {
        const config = stateDbConfig(SHA256);
        const sdb = new CurrentDb(config);
        for (let round = 0; round < rounds; round++) {
          sdb.applyBatch(
            Array.from({ length: keys }, (_, i): Write => [key(i), (i + round) % 5 === 0 ? undefined : value(i, round)]),
          );
        }
        const present = Array.from({ length: keys }, (_, i) => i).filter((i) => sdb.get(key(i)) !== undefined);
        if (present.length === 0) return verifyStateProof(proveKey(sdb, key(0)), sdb.root(), config).valid;
        const target = key(present[pick % present.length]!);
        const single = verifyStateProof(proveKey(sdb, target), sdb.root(), config).valid;
        const absentKey = verifyStateProof(proveKey(sdb, key(keys + 1)), sdb.root(), config).valid;
        const multi = verifyStateProof(proveKeys(sdb, present.slice(0, 20).map(key)), sdb.root(), config).valid;
        return single && multi && absentKey;
      }),
      { numRuns: 40 },
    );
  });
});
