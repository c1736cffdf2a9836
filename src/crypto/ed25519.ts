// Ed25519 verification with exactly the semantics of ed25519-dalek 2.2
// `VerifyingKey::verify_strict` (CIP-39 §9.1). The noble libraries' own `verify` is not used:
// neither their RFC 8032 nor their ZIP-215 mode rejects small-order keys the way dalek does.
//
// What dalek 2.2 does (ed25519-dalek/src/verifying.rs, signature.rs; curve25519-dalek decompress):
//  1. `VerifyingKey::from_bytes`: decompress A. curve25519-dalek reads y from the low 255 bits
//     WITHOUT checking y < p, and a set sign bit on x = 0 is silently ignored.
//  2. `InternalSignature::try_from`: S must be canonical (S < L).
//  3. Decompress R the same way.
//  4. Reject if R or A is small order ([8]P = identity).
//  5. k = SHA-512(R_bytes || A_bytes || M) mod L over the bytes exactly as given, then
//     compress([S]B - [k]A) and compare with R's bytes. A non-canonical R can therefore never
//     match (compress() is canonical); we report that case before doing the scalar products.
// A non-canonical A that is not small order (y = p+3, p+4, …) is accepted by dalek if the
// equation holds; we mirror that (D-0001, "Ed25519: exact ed25519-dalek 2.2 decoding, including a non-canonical A").
//
// `verifyStrictDetailed` below is the reference: pure JS, written to read like dalek. Consensus
// calls `ed25519VerifyStrict`, which takes the OpenSSL fast path of ./ed25519-native.ts and falls
// back to the reference for the inputs that path does not decide (D-0033, "Ed25519
// fast path"); test/crypto and scripts/fuzz-ed25519.ts check the two agree.
//
// The noble libraries are loaded on first use (require of an ES module, synchronous; every Node
// that package.json "engines" admits does it without a flag or a warning): the fast
// path decides almost every signature, and loading them took about 40 ms of every `cbqs` call
// that verifies one, a per-call `t8n` included (docs/engineering/performance.md "Start-up").
import { createPrivateKey, createPublicKey, sign, type KeyObject } from "node:crypto";
import { createRequire } from "node:module";
import type * as Curves from "@noble/curves/ed25519.js";
import type * as Hashes from "@noble/hashes/sha2.js";
import { bytesEqual, concatBytes } from "../bytes.js";
import { nativeVerifyStrict, type StrictVerifyResult } from "./ed25519-native.js";

const require = createRequire(import.meta.url);
let noble: { ed25519: typeof Curves.ed25519; sha512: typeof Hashes.sha512 } | undefined;

function loadNoble(): NonNullable<typeof noble> {
  noble ??= {
    ed25519: (require("@noble/curves/ed25519.js") as typeof Curves).ed25519,
    sha512: (require("@noble/hashes/sha2.js") as typeof Hashes).sha512,
  };
  return noble;
}

type EdPoint = InstanceType<typeof Curves.ed25519.Point>;

/** Group order L of the prime-order subgroup (RFC 8032 §5.1). */
export const ED25519_L = 2n ** 252n + 27742317777372353535851937790883648493n;
/** Field prime p = 2^255 - 19. */
export const ED25519_P = 2n ** 255n - 19n;

export const ED25519_PUBLIC_KEY_LENGTH = 32;
export const ED25519_SIGNATURE_LENGTH = 64;

// The verdict types live with the fast path (the lower layer) so neither file imports the other's values.
export type { StrictVerifyReason, StrictVerifyResult } from "./ed25519-native.js";

function littleEndianToBigint(bytes: Uint8Array): bigint {
  let n = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(bytes[i]!);
  return n;
}

/** curve25519-dalek `CompressedEdwardsY::decompress`: y taken mod p, x = 0 with sign bit accepted.
 *  noble's `fromBytes(…, zip215 = true)` has exactly this acceptance set. */
function decompressLikeDalek(encoding: Uint8Array): EdPoint | null {
  try {
    return loadNoble().ed25519.Point.fromBytes(encoding, true);
  } catch {
    return null;
  }
}

/** CIP-39 §9.1 reference: dalek 2.2 verify_strict in pure JS, with the reason on reject. */
export function verifyStrictDetailed(
  publicKey: Uint8Array,
  message: Uint8Array,
  signature: Uint8Array,
): StrictVerifyResult {
  if (publicKey.length !== ED25519_PUBLIC_KEY_LENGTH || signature.length !== ED25519_SIGNATURE_LENGTH) {
    return { valid: false, reason: "wrong length" };
  }
  const A = decompressLikeDalek(publicKey);
  if (A === null) return { valid: false, reason: "invalid A" };
  const rBytes = signature.subarray(0, 32);
  const S = littleEndianToBigint(signature.subarray(32, 64));
  if (S >= ED25519_L) return { valid: false, reason: "non-canonical S" };
  const R = decompressLikeDalek(rBytes);
  if (R === null) return { valid: false, reason: "invalid R" };
  if (R.isSmallOrder()) return { valid: false, reason: "small-order R" };
  if (A.isSmallOrder()) return { valid: false, reason: "small-order A" };
  if (!bytesEqual(R.toBytes(), rBytes)) return { valid: false, reason: "non-canonical R" };

  const { ed25519, sha512 } = loadNoble();
  const k = littleEndianToBigint(sha512(concatBytes(rBytes, publicKey, message))) % ED25519_L;
  const expectedR = ed25519.Point.BASE.multiplyUnsafe(S).add(A.negate().multiplyUnsafe(k));
  return bytesEqual(expectedR.toBytes(), rBytes) ? { valid: true } : { valid: false, reason: "equation failed" };
}

/** CIP-39 §9.1: ed25519-dalek 2.2 `verify_strict` as a boolean, the one consensus uses.
 *  OpenSSL behind dalek's checks, the reference for the rest. Synchronous; never throws. */
export function ed25519VerifyStrict(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  return nativeVerifyStrict(publicKey, message, signature) ?? verifyStrictDetailed(publicKey, message, signature).valid;
}

// Signing and key derivation (scenarios, the fuzzer, the devnet; never verification) go through
// OpenSSL: RFC 8032 signing is deterministic, so its bytes are noble's, at a fraction of the
// cost (the fuzzer signs every generated transaction; test/crypto checks the RFC vectors).

/** PKCS #8 DER header of an Ed25519 private key; the 32-byte seed follows it (RFC 8410 §7). */
const PKCS8_ED25519 = Buffer.from("302e020100300506032b657004220420", "hex");
/** The key objects of the seeds seen last: a scenario or a fuzz world signs with a handful of seeds. */
const KEYS_KEPT = 256;
const keys = new Map<string, { key: KeyObject; publicKey: Uint8Array }>();

function keyOf(seed: Uint8Array): { key: KeyObject; publicKey: Uint8Array } {
  if (seed.length !== 32) throw new RangeError(`ed25519 seed: expected 32 bytes, got ${seed.length}`);
  const id = Buffer.from(seed).toString("hex");
  let k = keys.get(id);
  if (k === undefined) {
    const key = createPrivateKey({ key: Buffer.concat([PKCS8_ED25519, seed]), format: "der", type: "pkcs8" });
    // The SPKI DER of an Ed25519 key is a 12-byte header and the 32-byte key.
    const publicKey = new Uint8Array(createPublicKey(key).export({ format: "der", type: "spki" }).subarray(12));
    if (keys.size >= KEYS_KEPT) keys.delete(keys.keys().next().value!);
    keys.set(id, (k = { key, publicKey }));
  }
  return k;
}

/** RFC 8032 public key of a 32-byte seed (tests and scenarios). */
export function ed25519PublicKeyFromSeed(seed: Uint8Array): Uint8Array {
  return keyOf(seed).publicKey.slice();
}

/** RFC 8032 deterministic signature by a 32-byte seed (tests and scenarios). */
export function ed25519Sign(seed: Uint8Array, message: Uint8Array): Uint8Array {
  return new Uint8Array(sign(null, message, keyOf(seed).key));
}
