import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { bytesEqual, concatBytes, u64BE } from "../../../src/bytes.js";
import { SHA256 } from "../../../src/crypto/hash.js";
import {
  Blueprint,
  Mmr,
  bagPeaks,
  bitLength,
  inactivePeaks,
  nodeHeight,
  leafPosition,
  leavesOfSize,
  mmrSize,
  peaks,
  standardProofHasher,
  verifyMultiProof,
  verifyRangeProof,
} from "../../../state/qmdb/mmr.js";

const H = (...parts: Uint8Array[]): Uint8Array => SHA256.hash(concatBytes(...parts));
const element = (i: number): Uint8Array => SHA256.hash(u64BE(i));

describe("MMR structure (CIP-4 §5.1, commonware merkle/mmr)", () => {
  it("§5.1 leaf positions follow post-order numbering (11-element example of mmr/mod.rs)", () => {
    expect(Array.from({ length: 11 }, (_, i) => leafPosition(i))).toEqual([0, 1, 3, 4, 7, 8, 10, 11, 15, 16, 18]);
    expect(mmrSize(11)).toBe(19);
    expect(leavesOfSize(19)).toBe(11);
    expect(() => leavesOfSize(2)).toThrow(RangeError);
  });

  it("§5.1 peaks are listed tallest first with their heights", () => {
    expect(peaks(19)).toEqual([
      { pos: 14, height: 3 },
      { pos: 17, height: 1 },
      { pos: 18, height: 0 },
    ]);
    expect(peaks(0)).toEqual([]);
  });

  it("§5.1 peaks cover exactly the leaves, heights strictly decreasing", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000 }), (leaves) => {
        const ps = peaks(mmrSize(leaves));
        const covered = ps.reduce((sum, p) => sum + 2 ** p.height, 0);
        const decreasing = ps.every((p, i) => i === 0 || p.height < ps[i - 1]!.height);
        return covered === leaves && decreasing;
      }),
    );
  });

  it("§5.1 the root of 11 elements is H(11 || fold(peaks)) with position-prefixed nodes", () => {
    const mmr = new Mmr(SHA256);
    for (let i = 0; i < 11; i++) mmr.append(element(i));
    const leaf = (pos: number, i: number): Uint8Array => H(u64BE(pos), element(i));
    const node = (pos: number, l: Uint8Array, r: Uint8Array): Uint8Array => H(u64BE(pos), l, r);
    const n2 = node(2, leaf(0, 0), leaf(1, 1));
    const n5 = node(5, leaf(3, 2), leaf(4, 3));
    const n9 = node(9, leaf(7, 4), leaf(8, 5));
    const n12 = node(12, leaf(10, 6), leaf(11, 7));
    const peak1 = node(14, node(6, n2, n5), node(13, n9, n12));
    const peak2 = node(17, leaf(15, 8), leaf(16, 9));
    const peak3 = leaf(18, 10);
    const expected = H(u64BE(11), H(H(peak1, peak2), peak3));
    expect(bytesEqual(mmr.root(), expected)).toBe(true);
    // Backward bagging folds from the right: H(peak1 || H(peak2 || peak3)).
    expect(bytesEqual(mmr.root("backward"), H(u64BE(11), H(peak1, H(peak2, peak3))))).toBe(true);
    // One inactive peak is committed into the root.
    expect(bytesEqual(mmr.root("backward", 1), H(u64BE(11), u64BE(1), H(peak1, H(peak2, peak3))))).toBe(true);
    expect(bytesEqual(mmr.root("backward", 2), H(u64BE(11), u64BE(2), H(H(peak1, peak2), peak3)))).toBe(true);
  });

  it("§5.1 the empty root is H(u64be(0)) and every append changes the root", () => {
    const mmr = new Mmr(SHA256);
    expect(bytesEqual(mmr.root(), H(u64BE(0)))).toBe(true);
    const seen = new Set<string>([Buffer.from(mmr.root()).toString("hex")]);
    for (let i = 0; i < 40; i++) {
      mmr.append(element(i));
      seen.add(Buffer.from(mmr.root()).toString("hex"));
    }
    expect(seen.size).toBe(41);
    expect(() => bagPeaks(SHA256, 0, [], "forward", 1)).toThrow(RangeError);
  });

  it("§5.1 inactive peaks count only peaks wholly below the floor", () => {
    // 11 leaves: peaks cover [0,8), [8,10), [10,11).
    expect(inactivePeaks(11, 7)).toBe(0);
    expect(inactivePeaks(11, 8)).toBe(1);
    expect(inactivePeaks(11, 9)).toBe(1);
    expect(inactivePeaks(11, 10)).toBe(2);
    expect(inactivePeaks(11, 11)).toBe(3);
  });
});

describe("MMR inclusion proofs (CIP-4 §5.4, commonware merkle/proof.rs)", () => {
  const build = (n: number): Mmr => {
    const mmr = new Mmr(SHA256);
    for (let i = 0; i < n; i++) mmr.append(element(i));
    return mmr;
  };
  const ph = standardProofHasher(SHA256);

  it("§5.4 every range of every small MMR verifies, for both baggings and every inactive count", () => {
    for (let n = 1; n <= 14; n++) {
      const mmr = build(n);
      const peakCount = peaks(mmr.size).length;
      for (const bagging of ["forward", "backward"] as const) {
        for (let inactive = 0; inactive <= peakCount; inactive++) {
          const root = mmr.root(bagging, inactive);
          for (let start = 0; start < n; start++) {
            for (let end = start + 1; end <= n; end++) {
              const elements = Array.from({ length: end - start }, (_, i) => element(start + i));
              const proof = mmr.rangeProof(start, end, bagging, inactive);
              if (!verifyRangeProof(ph, proof, elements, start, root, bagging)) {
                throw new Error(`n=${n} ${bagging} inactive=${inactive} [${start},${end}) failed`);
              }
            }
          }
        }
      }
    }
  });

  it("§5.4 a single proof carries path siblings plus bagged peaks (11 elements, element 8)", () => {
    const mmr = build(11);
    // Forward: prefix peak 14 is folded; sibling 16 from peak 17; after-peak 18 listed.
    const proof = mmr.proof(8);
    expect(proof.digests.map((d) => Buffer.from(d).toString("hex"))).toEqual(
      [mmr.node(14), mmr.node(18), mmr.node(16)].map((d) => Buffer.from(d).toString("hex")),
    );
    // Backward with no inactive peak: peak 14 stays individual; the suffix is one accumulator.
    const backward = mmr.proof(0, "backward");
    const suffix = H(mmr.node(17), mmr.node(18));
    expect(bytesEqual(backward.digests[0]!, suffix)).toBe(true);
  });

  it("§5.4 tampered proofs, elements, locations, leaf counts and inactive counts are rejected", () => {
    const mmr = build(13);
    const root = mmr.root("backward", 1);
    const proof = mmr.proof(9, "backward", 1);
    expect(verifyRangeProof(ph, proof, [element(9)], 9, root, "backward")).toBe(true);
    for (let i = 0; i < proof.digests.length; i++) {
      const digests = proof.digests.map((d, j) => (j === i ? SHA256.hash(d) : d));
      expect(verifyRangeProof(ph, { ...proof, digests }, [element(9)], 9, root, "backward")).toBe(false);
    }
    expect(verifyRangeProof(ph, proof, [element(8)], 9, root, "backward")).toBe(false);
    expect(verifyRangeProof(ph, proof, [element(9)], 8, root, "backward")).toBe(false);
    expect(verifyRangeProof(ph, { ...proof, leaves: 14 }, [element(9)], 9, root, "backward")).toBe(false);
    expect(verifyRangeProof(ph, { ...proof, inactivePeaks: 0 }, [element(9)], 9, root, "backward")).toBe(false);
    expect(verifyRangeProof(ph, { ...proof, digests: proof.digests.slice(1) }, [element(9)], 9, root, "backward")).toBe(
      false,
    );
    expect(verifyRangeProof(ph, proof, [element(9)], 9, root, "forward")).toBe(false);
  });

  it("§8.2 a multi-proof of two sibling leaves carries the shared path once", () => {
    const mmr = build(16);
    const multi = mmr.multiProof([4, 5]);
    // Union of both paths: the leaves 7 and 8 (each the other's sibling), then 12, 6 and 29.
    expect(multi.digests.map((d) => Buffer.from(d).toString("hex"))).toEqual(
      [6, 7, 8, 12, 29].map((pos) => Buffer.from(mmr.node(pos)).toString("hex")),
    );
    expect(mmr.proof(4).digests.length + mmr.proof(5).digests.length).toBe(8);
  });

  it("§8.2 multi-proofs verify, deduplicate shared nodes and reject tampering", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 80 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 8 }),
        fc.constantFrom("forward" as const, "backward" as const),
        (n, picks, bagging) => {
          const mmr = build(n);
          const locs = [...new Set(picks.map((p) => p % n))];
          const inactive = inactivePeaks(n, Math.floor(n / 2));
          const root = mmr.root(bagging, inactive);
          const proof = mmr.multiProof(locs, bagging, inactive);
          const elements = locs.map((loc) => ({ element: element(loc), loc, ph }));
          // Position-keyed: each needed node once (backward suffix peaks are listed, not folded).
          const perLoc = locs.map((loc) => new Blueprint(n, inactive, bagging, loc, loc + 1).requiredPositions());
          const union = new Set(perLoc.flat());
          const ok = verifyMultiProof(proof, elements, root, bagging) && proof.digests.length === union.size;
          const tampered = verifyMultiProof(
            { ...proof, digests: proof.digests.map((d, i) => (i === 0 ? SHA256.hash(d) : d)) },
            elements,
            root,
            bagging,
          );
          const wrongElement = verifyMultiProof(
            proof,
            elements.map((e, i) => (i === 0 ? { ...e, element: element(e.loc + 1) } : e)),
            root,
            bagging,
          );
          // A proof with no digests (n = 1, one leaf) has nothing to tamper with.
          return ok && (proof.digests.length === 0 || !tampered) && !wrongElement;
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe("nodeHeight and bitLength (the proof path's position arithmetic)", () => {
  /** The definitions, counted up one bit at a time (nodeHeight before its one-instruction bit length). */
  const slowBitLength = (n: number) => {
    let bits = 0;
    while (2 ** bits <= n) bits++;
    return bits;
  };
  const slowNodeHeight = (pos: number) => {
    let p = pos + 1;
    for (;;) {
      const bits = slowBitLength(p);
      if (p === 2 ** bits - 1) return bits - 1;
      p -= 2 ** (bits - 1) - 1;
    }
  };

  it("bitLength is the least b with 2^b > n, on both sides of 2^31 and up to 2^53", () => {
    for (const n of [1, 2, 3, 4, 7, 8, 2 ** 30, 2 ** 31 - 1, 2 ** 31, 2 ** 31 + 1, 2 ** 32 - 1, 2 ** 32, 2 ** 40 + 5, 2 ** 52, Number.MAX_SAFE_INTEGER]) {
      expect(bitLength(n), String(n)).toBe(slowBitLength(n));
    }
    fc.assert(fc.property(fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }), (n) => bitLength(n) === slowBitLength(n)));
  });

  it("nodeHeight agrees with the definition on every position of a 2^16-leaf MMR and on random ones up to 2^52", () => {
    for (let pos = 0; pos < mmrSize(2 ** 16); pos++) if (nodeHeight(pos) !== slowNodeHeight(pos)) expect(nodeHeight(pos), String(pos)).toBe(slowNodeHeight(pos));
    // Peaks of the tallest trees straddle 2^31: their heights are exact.
    for (const h of [29, 30, 31, 32, 40]) expect(nodeHeight(2 ** (h + 1) - 2)).toBe(h);
    fc.assert(fc.property(fc.integer({ min: 0, max: 2 ** 52 }), (pos) => nodeHeight(pos) === slowNodeHeight(pos)));
  });
});
