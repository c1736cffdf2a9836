import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { bmtConformanceDigest, bmtProve, bmtRoot, bmtVerify } from "../../../state/roots/bmt.js";
import { concatBytes, toHex, u32BE, u64BE } from "../../../src/bytes.js";
import { KECCAK256, SHA256, sha256 } from "../../../src/crypto/hash.js";

const leaf = (i: number) => sha256(u64BE(i));
const h = (...parts: Uint8Array[]) => sha256(concatBytes(...parts));

describe("BMT (CIP-4 §5.2/§5.3, commonware storage/src/bmt)", () => {
  it("CIP-4 §5.2: RootConformance digest matches commonware's conformance.toml (external anchor)", () => {
    // docs/reference/anchors.md: bmt::tests::conformance::RootConformance, 200 seeds, commit dc41a895.
    expect(toHex(bmtConformanceDigest(200))).toBe(
      "0x18b1108f18520078e2eb5bb29c6a4cdf3bded6b52d8efda19d45c0f10be27207",
    );
  });

  it("CIP-4 §5.2: three leaves follow commonware's documented shape (odd node duplicated, count-bound root)", () => {
    const [a, b, c] = [leaf(0), leaf(1), leaf(2)];
    const la = h(u32BE(0), a), lb = h(u32BE(1), b), lc = h(u32BE(2), c);
    const treeRoot = h(h(la, lb), h(lc, lc));
    expect(toHex(bmtRoot(SHA256, [a, b, c]))).toBe(toHex(h(u32BE(3), treeRoot)));
  });

  it("CIP-4 §5.2: the empty tree is H(0u32 ‖ H(\"\")) and one leaf is H(1u32 ‖ H(0u32 ‖ leaf))", () => {
    expect(toHex(bmtRoot(SHA256, []))).toBe(toHex(h(u32BE(0), sha256(new Uint8Array(0)))));
    expect(toHex(bmtRoot(SHA256, [leaf(7)]))).toBe(toHex(h(u32BE(1), h(u32BE(0), leaf(7)))));
  });

  it("CIP-4 §5.2: leaves must be 32-byte digests", () => {
    expect(() => bmtRoot(SHA256, [new Uint8Array(31)])).toThrow(/32 bytes/);
  });

  it("CIP-4 §5.4: every leaf's proof verifies, and tampering with it fails", () => {
    for (let n = 1; n <= 33; n++) {
      const leaves = Array.from({ length: n }, (_, i) => leaf(i));
      const root = bmtRoot(KECCAK256, leaves);
      for (let i = 0; i < n; i++) {
        const proof = bmtProve(KECCAK256, leaves, i);
        expect(bmtVerify(KECCAK256, leaves[i]!, i, proof, root)).toBe(true);
        expect(bmtVerify(KECCAK256, leaf(1000), i, proof, root)).toBe(false);
        expect(bmtVerify(KECCAK256, leaves[i]!, i, { ...proof, leafCount: n + 1 }, root)).toBe(false);
        expect(bmtVerify(KECCAK256, leaves[i]!, i, { ...proof, siblings: [...proof.siblings, leaf(9)] }, root)).toBe(false);
        if (proof.siblings.length > 0) {
          expect(bmtVerify(KECCAK256, leaves[i]!, i, { ...proof, siblings: proof.siblings.slice(1) }, root)).toBe(false);
        }
      }
      expect(() => bmtProve(KECCAK256, leaves, n)).toThrow(/invalid position/);
    }
  });

  it("CIP-4 §5.2: the root depends on leaf order and on every leaf (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 40 }), fc.nat(), (n, k) => {
        const leaves = Array.from({ length: n }, (_, i) => leaf(i));
        const root = toHex(bmtRoot(SHA256, leaves));
        const changed = leaves.slice();
        changed[k % n] = leaf(n + 1);
        const swapped = leaves.slice();
        [swapped[0], swapped[1]] = [swapped[1]!, swapped[0]!];
        return toHex(bmtRoot(SHA256, changed)) !== root && toHex(bmtRoot(SHA256, swapped)) !== root;
      }),
    );
  });
});
