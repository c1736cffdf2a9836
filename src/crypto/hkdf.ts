// HKDF-SHA256 (RFC 5869) and the CIP-39 §9.2 root-escrow derivations.
// §9.2 writes HKDF-SHA256(stream_root, label || …) without naming salt or length: stream_root is
// the IKM, the salt is absent (RFC 5869 §2.2: HashLen zero bytes), the label string is the info,
// and the output is 32 bytes (D-0035, "§9.2 HKDF parameters").
import { hkdf } from "@noble/hashes/hkdf.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { concatBytes, u64BE, utf8 } from "../bytes.js";

/** RFC 5869 HKDF with SHA-256. An empty `salt` is the RFC's "not provided". */
export function hkdfSha256(ikm: Uint8Array, salt: Uint8Array, info: Uint8Array, length: number): Uint8Array {
  return hkdf(sha256, ikm, salt, info, length);
}

const ROTATION_SIGNING_LABEL = utf8("cbqs/rotation-signing/v1");
const DATA_KEY_LABEL = utf8("cbqs/data-key/v1");

function requireLength(bytes: Uint8Array, length: number, what: string): void {
  if (bytes.length !== length) throw new RangeError(`${what}: expected ${length} bytes, got ${bytes.length}`);
}

/** §9.2 rotation_seed = HKDF-SHA256(stream_root, "cbqs/rotation-signing/v1" || stream_id): an Ed25519 seed. */
export function deriveRotationSeed(streamRoot: Uint8Array, streamId: Uint8Array): Uint8Array {
  requireLength(streamRoot, 32, "stream_root");
  requireLength(streamId, 32, "stream_id");
  return hkdfSha256(streamRoot, new Uint8Array(0), concatBytes(ROTATION_SIGNING_LABEL, streamId), 32);
}

/** §9.2 data_key[g] = HKDF-SHA256(stream_root, "cbqs/data-key/v1" || stream_id || g_u64_be). */
export function deriveDataKey(streamRoot: Uint8Array, streamId: Uint8Array, generation: bigint): Uint8Array {
  requireLength(streamRoot, 32, "stream_root");
  requireLength(streamId, 32, "stream_id");
  return hkdfSha256(streamRoot, new Uint8Array(0), concatBytes(DATA_KEY_LABEL, streamId, u64BE(generation)), 32);
}
