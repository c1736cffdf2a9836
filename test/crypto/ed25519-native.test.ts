// The OpenSSL fast path of CIP-39 §9.1 strict Ed25519 (src/crypto/ed25519-native.ts) against the
// pure-JS reference (verifyStrictDetailed): the byte-level small-order and canonicity checks it
// relies on, the published edge-case vectors, and a differential sample of
// scripts/fuzz-ed25519.ts (the script runs the same generator at 10^5 cases).
import { describe, expect, it } from "vitest";
import { ed25519 } from "@noble/curves/ed25519.js";
import { concatBytes, fromHex, toHex } from "../../src/bytes.js";
import { ED25519_L, ED25519_P, ed25519Sign, ed25519VerifyStrict, verifyStrictDetailed } from "../../src/crypto/ed25519.js";
import {
  cachedPublicKey,
  KEY_CACHE_LIMIT,
  keyCacheSize,
  SMALL_ORDER_ENCODINGS,
  nativeVerifyStrict,
  opensslAvailable,
  strictRoute,
} from "../../src/crypto/ed25519-native.js";
import { CLASSES, ed25519Cases, le32, opensslAlone } from "../../scripts/fuzz-ed25519.js";
import { SPECCHECK_VECTORS } from "./speccheck-vectors.js";

const Point = ed25519.Point;
type EdPoint = InstanceType<typeof Point>;

function decodeLikeDalek(b: Uint8Array): EdPoint | null {
  try {
    return Point.fromBytes(b, true);
  } catch {
    return null;
  }
}
const SEED = fromHex("0x" + "5a".repeat(32));
const PUB = ed25519.getPublicKey(SEED);

describe("CIP-39 §9.1 Ed25519 fast path: the byte-level strict checks", () => {
  it("§9.1 the 14 small-order encodings are exactly the byte strings dalek decodes to a point of order dividing 8", () => {
    // The group has order 8·L with L an odd prime, so the points P with [8]P = identity form a
    // subgroup of exactly 8 elements. [L]Q of a random point Q lies in it; one of order 8 generates it.
    let T: EdPoint | undefined;
    for (let i = 1; T === undefined; i++) {
      const Q = decodeLikeDalek(le32(BigInt(i) * 0x1234567n));
      if (Q === null) continue;
      const candidate = Q.multiplyUnsafe(ED25519_L - 1n).add(Q); // [L]Q without a scalar >= L
      if (!candidate.multiplyUnsafe(4n).is0()) T = candidate;
    }
    const torsion = Array.from({ length: 8 }, (_, i) => (i === 0 ? Point.ZERO : T!.multiplyUnsafe(BigInt(i))));
    expect(new Set(torsion.map((P) => toHex(P.toBytes()))).size).toBe(8);
    expect(torsion.every((P) => P.multiplyUnsafe(8n).is0())).toBe(true);
    // dalek decodes y from the low 255 bits (y mod p) and takes the sign bit as x's sign. A byte
    // string decodes to P = (x, y) only if its 255-bit y is y or y + p (y + 2p >= 2^255), so these
    // at most four candidates per point are every preimage.
    const preimages = new Set<string>();
    for (const P of torsion) {
      const y = P.toBytes();
      y[31]! &= 0x7f;
      let yValue = 0n;
      for (let i = 31; i >= 0; i--) yValue = (yValue << 8n) | BigInt(y[i]!);
      for (const Y of [yValue, yValue + ED25519_P]) {
        if (Y >= 2n ** 255n) continue;
        for (const sign of [0n, 1n]) {
          const b = le32(Y | (sign << 255n));
          const decoded = decodeLikeDalek(b);
          if (decoded !== null && decoded.equals(P)) preimages.add(toHex(b));
        }
      }
    }
    expect(preimages.size).toBe(14);
    expect(new Set(SMALL_ORDER_ENCODINGS.map(toHex))).toEqual(preimages);
  });

  it("§9.1 routes every small-order encoding of A or R to a reject without OpenSSL", () => {
    const sig = ed25519Sign(SEED, new Uint8Array(0));
    for (const e of SMALL_ORDER_ENCODINGS) {
      expect(strictRoute(e, sig)).toEqual({ kind: "reject", reason: "small-order A" });
      expect(strictRoute(PUB, concatBytes(e, sig.subarray(32)))).toEqual({ kind: "reject", reason: "small-order R" });
    }
  });

  it("§9.1 S boundaries: S < 2^252 to OpenSSL, [2^252, L) to the reference, S >= L rejected", () => {
    const r = ed25519Sign(SEED, new Uint8Array(0)).subarray(0, 32);
    const route = (s: bigint) => strictRoute(PUB, concatBytes(r, le32(s)));
    expect(route(0n)).toEqual({ kind: "openssl" });
    expect(route(2n ** 252n - 1n)).toEqual({ kind: "openssl" });
    expect(route(2n ** 252n)).toEqual({ kind: "reference", inputClass: "S in [2^252, L)" });
    expect(route(ED25519_L - 1n)).toEqual({ kind: "reference", inputClass: "S in [2^252, L)" });
    for (const s of [ED25519_L, ED25519_L + 1n, ED25519_L + 2n ** 128n, 2n ** 253n, 2n ** 256n - 1n]) {
      expect(route(s)).toEqual({ kind: "reject", reason: "non-canonical S" });
    }
  });

  it("§9.1 y >= p: a non-canonical A goes to the reference, a non-canonical R is rejected; y = p - 2 is canonical", () => {
    const sig = ed25519Sign(SEED, new Uint8Array(0));
    for (let k = 2; k < 19; k++) {
      for (const sign of [0n, 1n]) {
        const enc = le32((ED25519_P + BigInt(k)) | (sign << 255n));
        expect(strictRoute(enc, sig)).toEqual({ kind: "reference", inputClass: "non-canonical A (y >= p)" });
        expect(strictRoute(PUB, concatBytes(enc, sig.subarray(32)))).toEqual({ kind: "reject", reason: "non-canonical R" });
      }
    }
    const canonical = le32(ED25519_P - 2n);
    expect(strictRoute(canonical, sig)).toEqual({ kind: "openssl" });
    expect(strictRoute(PUB, concatBytes(canonical, sig.subarray(32)))).toEqual({ kind: "openssl" });
  });

  it("§9.1 y >= p is recognised on every byte: an encoding that matches p's pattern except in one byte is canonical", () => {
    // p = 0x7fff…ffed little-endian: byte 0 >= 0xed, bytes 1..30 = 0xff, byte 31 = 0x7f (sign bit aside).
    const sig = ed25519Sign(SEED, new Uint8Array(0));
    const nearMisses = [
      le32(2n ** 254n - 1n), // byte 31 = 0x3f, every other byte 0xff
      le32((ED25519_P + 5n) & ~(0xffn << 8n)), // byte 1 = 0x00
      le32((ED25519_P + 5n) & ~(0x01n << 16n)), // byte 2 = 0xfe
      le32((ED25519_P + 5n) & ~(0x01n << 240n)), // byte 30 = 0xfe
    ];
    for (const enc of nearMisses) {
      expect(enc[0]).toBeGreaterThanOrEqual(0xed);
      expect(strictRoute(enc, sig), toHex(enc)).toEqual({ kind: "openssl" });
      expect(strictRoute(PUB, concatBytes(enc, sig.subarray(32))), toHex(enc)).toEqual({ kind: "openssl" });
    }
  });

  it("§9.1 a key that is not 32 bytes or a signature that is not 64 is rejected as wrong length, on either side", () => {
    const sig = ed25519Sign(SEED, new Uint8Array(0));
    const wrongLength = { kind: "reject", reason: "wrong length" };
    expect(strictRoute(PUB.subarray(0, 31), sig)).toEqual(wrongLength);
    expect(strictRoute(concatBytes(PUB, Uint8Array.of(0)), sig)).toEqual(wrongLength);
    expect(strictRoute(PUB, sig.subarray(0, 63))).toEqual(wrongLength);
    expect(strictRoute(PUB, concatBytes(sig, Uint8Array.of(0)))).toEqual(wrongLength);
    expect(nativeVerifyStrict(PUB, new Uint8Array(0), concatBytes(sig, Uint8Array.of(0)))).toBe(false);
    expect(strictRoute(PUB, sig)).toEqual({ kind: "openssl" });
  });

  it("§9.1 the fast path does not decide the reference classes: nativeVerifyStrict returns undefined for them", () => {
    const msg = new Uint8Array(0);
    const sig = ed25519Sign(SEED, msg);
    const nonCanonicalA = le32(ED25519_P + 2n);
    expect(nativeVerifyStrict(nonCanonicalA, msg, sig)).toBeUndefined();
    const highS = concatBytes(sig.subarray(0, 32), le32(2n ** 252n));
    expect(nativeVerifyStrict(PUB, msg, highS)).toBeUndefined();
    // and the consensus entry point still gives the reference's verdict for them
    expect(ed25519VerifyStrict(nonCanonicalA, msg, sig)).toBe(verifyStrictDetailed(nonCanonicalA, msg, sig).valid);
    expect(ed25519VerifyStrict(PUB, msg, highS)).toBe(false);
  });

  it("§9.1 OpenSSL is used in this process (its self-test at load passed)", () => {
    expect(opensslAvailable).toBe(true);
    const msg = fromHex("0x0102");
    expect(nativeVerifyStrict(PUB, msg, ed25519Sign(SEED, msg))).toBe(true);
  });
});

describe("CIP-39 §9.1 Ed25519 fast path agrees with the reference", () => {
  it.each(SPECCHECK_VECTORS)("§9.1 speccheck vector $index: fast = reference = $dalekStrict", (v) => {
    const [pub, msg, sig] = [fromHex(v.publicKey), fromHex(v.message), fromHex(v.signature)];
    expect(ed25519VerifyStrict(pub, msg, sig)).toBe(v.dalekStrict);
    expect(verifyStrictDetailed(pub, msg, sig).valid).toBe(v.dalekStrict);
  });

  it("§9.1 differential sample of scripts/fuzz-ed25519.ts: every class, no disagreement", () => {
    const perClass = 30;
    const stats = new Map<string, { valid: number; opensslAloneWrong: number }>();
    for (const c of ed25519Cases(20_260_411, perClass * CLASSES.length)) {
      const reference = verifyStrictDetailed(c.publicKey, c.message, c.signature).valid;
      const fast = ed25519VerifyStrict(c.publicKey, c.message, c.signature);
      expect(fast, `${c.inputClass}: pub=${toHex(c.publicKey)} msg=${toHex(c.message)} sig=${toHex(c.signature)}`).toBe(reference);
      const route = strictRoute(c.publicKey, c.signature);
      if (route.kind === "reject") expect(reference).toBe(false);
      const s = stats.get(c.inputClass) ?? { valid: 0, opensslAloneWrong: 0 };
      if (reference) s.valid++;
      if (opensslAlone(c) !== reference) s.opensslAloneWrong++;
      stats.set(c.inputClass, s);
    }
    expect([...stats.keys()]).toEqual(CLASSES.map(([name]) => name));
    // Not vacuous: valid signatures (including mixed-order ones) reach OpenSSL and verify, and
    // OpenSSL with no checks in front would accept small-order keys the fast path must reject.
    expect(stats.get("valid signature")!.valid).toBe(perClass);
    expect(stats.get("mixed-order A, cofactorless equation holds")!.valid).toBe(perClass);
    expect(stats.get("mixed-order R and A, cofactorless equation holds")!.valid).toBe(perClass);
    expect(stats.get("small-order A (14 encodings), cofactorless equation holds")!.opensslAloneWrong).toBe(perClass);
  });
});

describe("the fast path's public-key memo", () => {
  it("holds at most KEY_CACHE_LIMIT keys and, full, is cleared before the next new key; a held key comes back as the same KeyObject", () => {
    // Keys no other test uses (OpenSSL imports any 32 bytes as an Ed25519 key).
    let n = 0;
    const fresh = (): Uint8Array => {
      const b = new Uint8Array(32).fill(0x42);
      new DataView(b.buffer).setUint32(0, n++, true);
      return b;
    };
    // Fill the memo to exactly the limit (it holds what earlier tests verified): it never clears on the way there.
    for (let i = 0; i <= KEY_CACHE_LIMIT && keyCacheSize() < KEY_CACHE_LIMIT; i++) {
      const before = keyCacheSize();
      cachedPublicKey(fresh());
      expect(keyCacheSize()).toBe(before + 1);
    }
    expect(keyCacheSize()).toBe(KEY_CACHE_LIMIT);
    // Full: the next new key clears it first.
    const first = fresh();
    const held = cachedPublicKey(first);
    expect(keyCacheSize()).toBe(1);
    expect(cachedPublicKey(first)).toBe(held); // a hit, not a re-import
    const second = cachedPublicKey(fresh());
    expect(keyCacheSize()).toBe(2);
    expect(second).not.toBe(held);
    expect(cachedPublicKey(first)).toBe(held); // a second key did not evict the first
    expect(held.equals(cachedPublicKey(Uint8Array.from(first)))).toBe(true); // keyed by bytes, not by array
  });
});
