import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { ed25519 } from "@noble/curves/ed25519.js";
import { concatBytes, fromHex, toHex } from "../../src/bytes.js";
import {
  ED25519_L,
  ED25519_P,
  ed25519PublicKeyFromSeed,
  ed25519Sign,
  ed25519VerifyStrict,
  verifyStrictDetailed,
} from "../../src/crypto/ed25519.js";
import { challenge, le32, leToBigint } from "../../scripts/fuzz-ed25519.js";
import { SPECCHECK_VECTORS } from "./speccheck-vectors.js";

const Point = ed25519.Point;

/** The bare cofactorless equation on decoded points, independent of the code under test. */
function cofactorlessEquationHolds(a: Uint8Array, m: Uint8Array, sig: Uint8Array): boolean {
  const A = Point.fromBytes(a, true);
  const R = Point.fromBytes(sig.subarray(0, 32), true);
  const S = leToBigint(sig.subarray(32));
  const k = challenge(sig.subarray(0, 32), a, m);
  return Point.BASE.multiplyUnsafe(S).equals(R.add(A.multiplyUnsafe(k)));
}

// RFC 8032 §7.1 TEST 1–3: secret seed, public key, message, signature.
const RFC8032 = [
  {
    seed: "0x9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
    pub: "0xd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
    msg: "0x",
    sig: "0xe5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
  },
  {
    seed: "0x4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
    pub: "0x3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
    msg: "0x72",
    sig: "0x92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00",
  },
  {
    seed: "0xc5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
    pub: "0xfc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
    msg: "0xaf82",
    sig: "0x6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a",
  },
];

// The eight points of order dividing 8, canonically encoded (well-known constants; the test
// below checks each independently: on the curve, [8]P = identity, pairwise distinct).
const SMALL_ORDER_CANONICAL = [
  "0x0100000000000000000000000000000000000000000000000000000000000000", // identity
  "0xecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // order 2, y = -1
  "0x0000000000000000000000000000000000000000000000000000000000000000", // order 4, y = 0
  "0x0000000000000000000000000000000000000000000000000000000000000080", // order 4, y = 0, -x
  "0x26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", // order 8
  "0x26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85", // order 8
  "0xc7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", // order 8
  "0xc7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa", // order 8
];
// The six other byte strings curve25519-dalek decodes to small-order points: y = p and y = p+1
// (y >= p is not rejected by its decompress) with either sign bit, and x = 0 with the sign bit set.
const SMALL_ORDER_NONCANONICAL = [
  toHex(le32(ED25519_P)),
  toHex(le32(ED25519_P | (1n << 255n))),
  toHex(le32(ED25519_P + 1n)),
  toHex(le32((ED25519_P + 1n) | (1n << 255n))),
  "0x0100000000000000000000000000000000000000000000000000000000000080", // identity, sign bit set
  "0xecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", // y = -1, sign bit set
];

const SEED = fromHex("0x" + "42".repeat(32));
const PUB = ed25519PublicKeyFromSeed(SEED);

describe("CIP-39 §9.1 Ed25519 strict verification (ed25519-dalek 2.2 verify_strict)", () => {
  it("§9.1 accepts RFC 8032 test vectors 1–3 and signs them byte-exactly", () => {
    for (const v of RFC8032) {
      const seed = fromHex(v.seed);
      expect(toHex(ed25519PublicKeyFromSeed(seed))).toBe(v.pub);
      expect(toHex(ed25519Sign(seed, fromHex(v.msg)))).toBe(v.sig);
      expect(verifyStrictDetailed(fromHex(v.pub), fromHex(v.msg), fromHex(v.sig))).toEqual({ valid: true });
    }
  });

  it.each(SPECCHECK_VECTORS)(
    "§9.1 speccheck vector $index ($description): dalek strict = $dalekStrict",
    (v) => {
      const result = verifyStrictDetailed(fromHex(v.publicKey), fromHex(v.message), fromHex(v.signature));
      expect(result.valid).toBe(v.dalekStrict);
      if (!result.valid) expect(result.reason).toBe(v.reason);
    },
  );

  it("§9.1 rejects any key length other than 32 and signature length other than 64", () => {
    const msg = fromHex("0x01");
    const sig = ed25519Sign(SEED, msg);
    for (const n of [0, 31, 33, 64]) {
      expect(verifyStrictDetailed(new Uint8Array(n).fill(7), msg, sig)).toEqual({ valid: false, reason: "wrong length" });
    }
    for (const n of [0, 63, 65, 128]) {
      const s = new Uint8Array(n);
      s.set(sig.subarray(0, Math.min(n, 64)));
      expect(verifyStrictDetailed(PUB, msg, s)).toEqual({ valid: false, reason: "wrong length" });
    }
    expect(ed25519VerifyStrict(PUB, msg, concatBytes(sig, new Uint8Array(1)))).toBe(false);
  });

  it("§9.1 sign/verify round trip for arbitrary seeds and messages", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ maxLength: 200 }), (seed, msg) => {
        const pub = ed25519PublicKeyFromSeed(seed);
        return ed25519VerifyStrict(pub, msg, ed25519Sign(seed, msg));
      }),
      { numRuns: 60 },
    );
  });

  it("§9.1 rejects every single-bit flip of signature, key and message", () => {
    const msg = fromHex("0x636271732f7631");
    const sig = ed25519Sign(SEED, msg);
    const flip = (b: Uint8Array, bit: number): Uint8Array => {
      const c = b.slice();
      c[bit >> 3]! ^= 1 << (bit & 7);
      return c;
    };
    for (let bit = 0; bit < 512; bit++) expect(ed25519VerifyStrict(PUB, msg, flip(sig, bit))).toBe(false);
    for (let bit = 0; bit < 256; bit++) expect(ed25519VerifyStrict(flip(PUB, bit), msg, sig)).toBe(false);
    for (let bit = 0; bit < msg.length * 8; bit++) expect(ed25519VerifyStrict(PUB, flip(msg, bit), sig)).toBe(false);
  });

  it("§9.1 rejects a non-canonical S (S + L, and S = L) (S + L would satisfy the equation mod L)", () => {
    const msg = fromHex("0xabcdef");
    const sig = ed25519Sign(SEED, msg);
    const S = leToBigint(sig.subarray(32));
    const malleated = concatBytes(sig.subarray(0, 32), le32(S + ED25519_L));
    expect(verifyStrictDetailed(PUB, msg, malleated)).toEqual({ valid: false, reason: "non-canonical S" });
    const sEqualsL = concatBytes(sig.subarray(0, 32), le32(ED25519_L));
    expect(verifyStrictDetailed(PUB, msg, sEqualsL)).toEqual({ valid: false, reason: "non-canonical S" });
    const sMinus = concatBytes(sig.subarray(0, 32), le32(ED25519_L - 1n));
    expect(verifyStrictDetailed(PUB, msg, sMinus)).toEqual({ valid: false, reason: "equation failed" });
  });

  it("§9.1 the eight small-order points are exactly the canonical blocklist", () => {
    const seen = new Set<string>();
    for (const hex of SMALL_ORDER_CANONICAL) {
      const P = Point.fromBytes(fromHex(hex));
      expect(P.multiplyUnsafe(8n).is0()).toBe(true);
      expect(toHex(P.toBytes())).toBe(hex);
      seen.add(hex);
    }
    expect(seen.size).toBe(8);
    for (const hex of SMALL_ORDER_NONCANONICAL) {
      const P = Point.fromBytes(fromHex(hex), true);
      expect(P.multiplyUnsafe(8n).is0()).toBe(true);
      expect(toHex(P.toBytes())).not.toBe(hex);
    }
  });

  it("§9.1 rejects all 14 small-order public-key encodings, even when the cofactorless equation holds", () => {
    for (const hex of [...SMALL_ORDER_CANONICAL, ...SMALL_ORDER_NONCANONICAL]) {
      const a = fromHex(hex);
      // R = [r]B, S = r: the equation holds whenever [k]A is the identity, i.e. 8 | k.
      const r = 12345n;
      const rBytes = Point.BASE.multiply(r).toBytes();
      let msg = new Uint8Array(0);
      for (let i = 0; challenge(rBytes, a, msg) % 8n !== 0n; i++) msg = Uint8Array.of(i & 0xff, i >> 8);
      const sig = concatBytes(rBytes, le32(r));
      expect(cofactorlessEquationHolds(a, msg, sig)).toBe(true);
      expect(verifyStrictDetailed(a, msg, sig)).toEqual({ valid: false, reason: "small-order A" });
    }
  });

  it("§9.1 rejects all 14 small-order R encodings, including R = identity with a satisfied equation", () => {
    const msg = fromHex("0x52");
    const a = ed25519.utils.getExtendedPublicKey(SEED).scalar;
    for (const hex of [...SMALL_ORDER_CANONICAL, ...SMALL_ORDER_NONCANONICAL]) {
      const rBytes = fromHex(hex);
      const S = (challenge(rBytes, PUB, msg) * a) % ED25519_L;
      const sig = concatBytes(rBytes, le32(S));
      if (Point.fromBytes(rBytes, true).is0()) expect(cofactorlessEquationHolds(PUB, msg, sig)).toBe(true);
      expect(verifyStrictDetailed(PUB, msg, sig)).toEqual({ valid: false, reason: "small-order R" });
    }
  });

  it("§9.1 rejects a non-canonical (y >= p) encoding of a large-order R", () => {
    // y = p + 3 decodes (dalek does not range-check y) to the point with y = 3, which is not small order.
    const rBytes = le32(ED25519_P + 3n);
    expect(Point.fromBytes(rBytes, true).isSmallOrder()).toBe(false);
    const sig = concatBytes(rBytes, le32(1n));
    expect(verifyStrictDetailed(PUB, fromHex("0x00"), sig)).toEqual({ valid: false, reason: "non-canonical R" });
  });

  it("§9.1 rejects y values that are not on the curve, for A and for R", () => {
    const y2 = le32(2n); // (4-1)/(4d+1) is not a square
    const msg = fromHex("0x00");
    expect(verifyStrictDetailed(y2, msg, ed25519Sign(SEED, msg))).toEqual({ valid: false, reason: "invalid A" });
    const sig = concatBytes(y2, le32(1n));
    expect(verifyStrictDetailed(PUB, msg, sig)).toEqual({ valid: false, reason: "invalid R" });
  });

  it("§9.1 non-canonical large-order A decodes like dalek and fails only on the equation", () => {
    const a = le32(ED25519_P + 3n);
    const msg = fromHex("0x00");
    expect(verifyStrictDetailed(a, msg, ed25519Sign(SEED, msg))).toEqual({ valid: false, reason: "equation failed" });
  });

  it("§9.1 is cofactorless: a mixed-order key verifies iff [k]T cancels (8 | k for an order-8 T)", () => {
    const T = Point.fromBytes(fromHex(SMALL_ORDER_CANONICAL[4]!));
    const { scalar: a } = ed25519.utils.getExtendedPublicKey(SEED);
    const mixedA = Point.BASE.multiply(a).add(T).toBytes();
    const r = 777n;
    const rBytes = Point.BASE.multiply(r).toBytes();
    let passing: Uint8Array | undefined;
    let failing: Uint8Array | undefined;
    for (let i = 0; passing === undefined || failing === undefined; i++) {
      const msg = Uint8Array.of(i);
      if (challenge(rBytes, mixedA, msg) % 8n === 0n) passing ??= msg;
      else failing ??= msg;
    }
    const sign = (m: Uint8Array) => concatBytes(rBytes, le32((r + challenge(rBytes, mixedA, m) * a) % ED25519_L));
    expect(verifyStrictDetailed(mixedA, passing, sign(passing))).toEqual({ valid: true });
    expect(verifyStrictDetailed(mixedA, failing, sign(failing))).toEqual({ valid: false, reason: "equation failed" });
  });

  it("§9.1 never throws and rejects arbitrary key/signature bytes (property)", () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 30, maxLength: 34 }),
        fc.uint8Array({ maxLength: 40 }),
        fc.uint8Array({ minLength: 62, maxLength: 66 }),
        (pub, msg, sig) => {
          expect(ed25519VerifyStrict(pub, msg, sig)).toBe(false);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("RFC 8032 key and signature from a seed (tests and scenarios)", () => {
  it("a seed must be exactly 32 bytes: 31 and 33 are refused with our RangeError, before noble sees them", () => {
    for (const length of [0, 31, 33, 64]) {
      const bad = new Uint8Array(length).fill(7);
      const message = `ed25519 seed: expected 32 bytes, got ${length}`;
      expect(() => ed25519PublicKeyFromSeed(bad)).toThrow(new RangeError(message));
      expect(() => ed25519Sign(bad, new Uint8Array(0))).toThrow(new RangeError(message));
    }
    // RFC 8032 §7.1 TEST 1: the 32-byte seed gives the published key and signature
    const seed = fromHex("0x9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60");
    expect(toHex(ed25519PublicKeyFromSeed(seed))).toBe("0xd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
    expect(toHex(ed25519Sign(seed, new Uint8Array(0)))).toBe(
      "0xe5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
    );
  });
});

describe("ed25519Sign and ed25519PublicKeyFromSeed (OpenSSL) against the noble reference", () => {
  it("give noble's bytes for any seed and message (RFC 8032 signing is deterministic)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.uint8Array({ maxLength: 300 }), (seed, message) => {
        expect(toHex(ed25519PublicKeyFromSeed(seed))).toBe(toHex(ed25519.getPublicKey(seed)));
        expect(toHex(ed25519Sign(seed, message))).toBe(toHex(ed25519.sign(message, seed)));
      }),
      { numRuns: 300 },
    );
  });

  it("refuse a seed that is not 32 bytes; a returned key is the caller's to change", () => {
    expect(() => ed25519Sign(new Uint8Array(31), new Uint8Array(0))).toThrow(/expected 32 bytes, got 31/);
    const seed = new Uint8Array(32).fill(9);
    ed25519PublicKeyFromSeed(seed).fill(0);
    expect(toHex(ed25519PublicKeyFromSeed(seed))).toBe(toHex(ed25519.getPublicKey(seed)));
  });
});
