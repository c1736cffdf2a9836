// The fast path of CIP-39 §9.1 strict Ed25519 verification: ed25519-dalek 2.2 `verify_strict`'s
// own checks done here on the bytes, then OpenSSL (Node's built-in `crypto.verify`) for decoding A
// and the cofactorless equation. An input whose verdict could depend on a difference between
// OpenSSL and dalek is not decided here: `nativeVerifyStrict` returns `undefined` and the caller
// runs the pure-JS reference (src/crypto/ed25519.ts). D-0033, "Ed25519 fast path".
//
// OpenSSL 3 `ossl_ed25519_verify` (crypto/ec/curve25519.c; Node 20 bundles OpenSSL 3.0) does,
// in order: reject S >= L (its own byte test); decode A (y from the low 255 bits without a range
// check, reject when no x exists); k = SHA-512(R || A || M) mod L over the bytes as given; accept
// iff encode([S]B - [k]A) equals R's 32 bytes. It has no small-order check and accepts any A that
// decodes. dalek's verify_strict is the same decoding, hash and equation, plus: R must decode, and
// neither R nor A may be small order. So, after the checks below, the two verdicts agree on every
// input handed to OpenSSL:
//  - small order (A or R) is recognised by its bytes: exactly 14 byte strings decode to one of
//    the 8 points of order dividing 8 (SMALL_ORDER_ENCODINGS; test/crypto/ed25519-native.test.ts
//    derives the list from the group structure). No scalar multiplication is needed.
//  - R with y >= p can never equal the canonical encoding OpenSSL and dalek compare it with:
//    rejected here. For a canonical R that is not small order, "R decodes" is implied by the byte
//    equality (the left side is the encoding of a point), so dalek's extra R checks add nothing.
//  - A with y >= p: dalek accepts the encoding when the point is not small order; OpenSSL would
//    too, but that is an argument about its field code, so these go to the reference.
//  - S in [2^252, L): OpenSSL's range test only looks beyond the top byte there (0x10); no honest
//    signature lands there (probability 2^-125), so these go to the reference as well.
import { createPublicKey, verify, type KeyObject } from "node:crypto";
import { bytesEqual, fromHex } from "../bytes.js";

/** Why a strict verification (src/crypto/ed25519.ts verifyStrict) refused a signature. */
export type StrictVerifyReason =
  | "wrong length" // public key not 32 bytes or signature not 64 bytes
  | "invalid A" // A's y is not the y of any curve point
  | "non-canonical S" // S >= L
  | "invalid R"
  | "small-order R"
  | "small-order A"
  | "non-canonical R" // y >= p, or x = 0 with the sign bit set
  | "equation failed"; // [S]B != R + [k]A (compared as compressed bytes)

export type StrictVerifyResult = { valid: true } | { valid: false; reason: StrictVerifyReason };

/** The group order L, 32 bytes little-endian. */
const L_LE = fromHex("0xedd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010");

/** Every 32-byte string curve25519-dalek decodes to a point P with [8]P = identity. */
export const SMALL_ORDER_ENCODINGS: readonly Uint8Array[] = [
  "0x0100000000000000000000000000000000000000000000000000000000000000", // identity (y = 1)
  "0x0100000000000000000000000000000000000000000000000000000000000080", // identity, x = 0 with sign bit
  "0xeeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // identity as y = p + 1
  "0xeeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", // identity as y = p + 1, sign bit
  "0xecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // order 2 (y = -1)
  "0xecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", // order 2, x = 0 with sign bit
  "0x0000000000000000000000000000000000000000000000000000000000000000", // order 4 (y = 0)
  "0x0000000000000000000000000000000000000000000000000000000000000080", // order 4 (y = 0), -x
  "0xedffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f", // order 4 as y = p
  "0xedffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff", // order 4 as y = p, -x
  "0x26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05", // order 8
  "0x26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85", // order 8
  "0xc7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a", // order 8
  "0xc7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa", // order 8
].map((hex) => fromHex(hex));

/** Inputs the fast path hands to the reference, and why (see the header). */
export type ReferenceInputClass = "non-canonical A (y >= p)" | "S in [2^252, L)";

export type StrictRoute =
  | { readonly kind: "reject"; readonly reason: StrictVerifyReason }
  | { readonly kind: "reference"; readonly inputClass: ReferenceInputClass }
  | { readonly kind: "openssl" };

const reject = (reason: StrictVerifyReason): StrictRoute => ({ kind: "reject", reason });
const ROUTE = {
  wrongLength: reject("wrong length"),
  nonCanonicalS: reject("non-canonical S"),
  smallOrderA: reject("small-order A"),
  smallOrderR: reject("small-order R"),
  nonCanonicalR: reject("non-canonical R"),
  highS: { kind: "reference", inputClass: "S in [2^252, L)" },
  nonCanonicalA: { kind: "reference", inputClass: "non-canonical A (y >= p)" },
  openssl: { kind: "openssl" },
} as const satisfies Record<string, StrictRoute>;

function isSmallOrderEncoding(encoding: Uint8Array): boolean {
  for (const e of SMALL_ORDER_ENCODINGS) if (bytesEqual(e, encoding)) return true;
  return false;
}

/** y (the low 255 bits, little-endian) >= p = 2^255 - 19, i.e. 0x7fff…ffed <= y <= 0x7fff…ffff. */
function yIsNonCanonical(encoding: Uint8Array): boolean {
  if ((encoding[31]! & 0x7f) !== 0x7f) return false;
  for (let i = 30; i >= 1; i--) if (encoding[i] !== 0xff) return false;
  return encoding[0]! >= 0xed;
}

/** S < L, comparing little-endian bytes from the most significant end. */
function scalarIsCanonical(s: Uint8Array): boolean {
  for (let i = 31; i >= 0; i--) if (s[i] !== L_LE[i]) return s[i]! < L_LE[i]!;
  return false;
}

/** Which way the fast path takes an input; only the boolean verdict is consensus, not the reason. */
export function strictRoute(publicKey: Uint8Array, signature: Uint8Array): StrictRoute {
  if (publicKey.length !== 32 || signature.length !== 64) return ROUTE.wrongLength;
  const rBytes = signature.subarray(0, 32);
  const sBytes = signature.subarray(32, 64);
  if (!scalarIsCanonical(sBytes)) return ROUTE.nonCanonicalS;
  if (isSmallOrderEncoding(rBytes)) return ROUTE.smallOrderR;
  if (isSmallOrderEncoding(publicKey)) return ROUTE.smallOrderA;
  if (yIsNonCanonical(rBytes)) return ROUTE.nonCanonicalR;
  if (sBytes[31]! >= 0x10) return ROUTE.highS;
  if (yIsNonCanonical(publicKey)) return ROUTE.nonCanonicalA;
  return ROUTE.openssl;
}

// A raw Ed25519 public key as a JWK (RFC 8037 "OKP"); OpenSSL takes the 32 bytes as they are.
// (Importing through DER SubjectPublicKeyInfo gives the same key but is ~14x slower in Node 20.)
function importPublicKey(publicKey: Uint8Array): KeyObject {
  const x = Buffer.from(publicKey.buffer, publicKey.byteOffset, 32).toString("base64url");
  return createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x }, format: "jwk" });
}

// Importing a key on every call makes a verification ~15% slower (scripts/bench-crypto.ts), and a
// chain reuses few keys. The cache is a pure memo of importPublicKey (a KeyObject is immutable),
// bounded by clearing it when full: no verdict depends on what it holds. Exported (with its
// size) for test/crypto/ed25519-native.test.ts, which checks the memo and its bound.
export const KEY_CACHE_LIMIT = 4096;
const keyCache = new Map<string, KeyObject>();

/** How many keys the memo holds (tests only). */
export const keyCacheSize = (): number => keyCache.size;

export function cachedPublicKey(publicKey: Uint8Array): KeyObject {
  const id = Buffer.from(publicKey.buffer, publicKey.byteOffset, 32).toString("latin1");
  let key = keyCache.get(id);
  if (key === undefined) {
    key = importPublicKey(publicKey);
    if (keyCache.size >= KEY_CACHE_LIMIT) keyCache.clear();
    keyCache.set(id, key);
  }
  return key;
}

function opensslVerify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean | undefined {
  try {
    return verify(null, message, cachedPublicKey(publicKey), signature);
  } catch {
    return undefined; // Ed25519 unavailable (e.g. a restricted OpenSSL configuration): use the reference
  }
}

// RFC 8032 §7.1 TEST 1, and the same with the last signature byte changed. If this process's
// OpenSSL does not give exactly (true, false), the fast path is off and every input goes to the
// reference: the verdicts are the same, only slower.
const SELF_TEST_KEY = fromHex("0xd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a");
const SELF_TEST_SIG = fromHex(
  "0xe5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
);
const SELF_TEST_BAD_SIG = Uint8Array.from(SELF_TEST_SIG, (b, i) => (i === 63 ? b ^ 0x01 : b));

/** Whether this process verifies through OpenSSL at all (decided once, at load). */
export const opensslAvailable: boolean =
  opensslVerify(SELF_TEST_KEY, new Uint8Array(0), SELF_TEST_SIG) === true &&
  opensslVerify(SELF_TEST_KEY, new Uint8Array(0), SELF_TEST_BAD_SIG) === false;

/**
 * dalek 2.2 verify_strict's verdict when the fast path can give it without the reference:
 * `false` for inputs its byte checks reject, OpenSSL's verdict for inputs past them, and
 * `undefined` (run the reference) for the classes in ReferenceInputClass or when OpenSSL is not
 * usable. Synchronous; never throws.
 */
export function nativeVerifyStrict(
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
): boolean | undefined {
  const route = strictRoute(publicKey, signature);
  if (route.kind === "reject") return false;
  if (route.kind === "reference" || !opensslAvailable) return undefined;
  return opensslVerify(publicKey, message, signature);
}
