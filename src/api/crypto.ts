// `cbqs-emulator/crypto` (docs/guides/use-the-library.md): the hashes and the strict Ed25519 the chain uses.
export { keccak256, sha256, blake3 } from "../crypto/hash.js";
export {
  ED25519_PUBLIC_KEY_LENGTH,
  ED25519_SIGNATURE_LENGTH,
  ed25519VerifyStrict,
  verifyStrictDetailed,
  ed25519Sign,
  ed25519PublicKeyFromSeed,
  type StrictVerifyReason,
  type StrictVerifyResult,
} from "../crypto/ed25519.js";
export { hkdfSha256, deriveRotationSeed, deriveDataKey } from "../crypto/hkdf.js";
