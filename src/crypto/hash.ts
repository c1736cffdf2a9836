// The three hash functions of the protocol: keccak256 (CIP-39 digests, ids, tx/receipt
// leaves), sha256 (commonware conformance workloads), blake3 (Cowboy state commitments).
import { keccak_256 } from "@noble/hashes/sha3.js";
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";
import { hash as blake3Hash } from "blake3-wasm";

export function keccak256(data: Uint8Array): Uint8Array {
  return keccak_256(data);
}

export function sha256(data: Uint8Array): Uint8Array {
  return nobleSha256(data);
}

export function blake3(data: Uint8Array): Uint8Array {
  const out = blake3Hash(data) as Uint8Array;
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}

/** A 32-byte hash function; the Merkle structures are generic over it. */
export interface Hasher {
  readonly name: "sha256" | "blake3" | "keccak256";
  hash(data: Uint8Array): Uint8Array;
}

export const SHA256: Hasher = { name: "sha256", hash: sha256 };
export const BLAKE3: Hasher = { name: "blake3", hash: blake3 };
export const KECCAK256: Hasher = { name: "keccak256", hash: keccak256 };
