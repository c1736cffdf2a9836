// The three hash functions of the protocol: keccak256 (CIP-39 digests, ids, tx/receipt
// leaves), sha256 (commonware conformance workloads), blake3 (Cowboy state commitments).
//
// All three run in hash-wasm's WebAssembly builds, several times faster than pure JS for the
// short inputs the engine hashes (scripts/bench-crypto.ts; docs/engineering/performance.md). Its factories
// are asynchronous (they instantiate the WASM module), so each hasher is created once here with
// top-level await and then used synchronously: init, update, digest. Nothing can interleave
// between those calls (JS is single-threaded and they never yield), and the digest is a fresh
// copy, so callers may keep it and may reuse their input buffers.
// test/crypto/hash.test.ts checks each against @noble/hashes on inputs of every length class.
//
// The package's ES module build, by path: its default entry is a UMD bundle that Node loads as
// CommonJS, which costs about 50 ms of every `cbqs` call that hashes (the same code, the same
// WASM; docs/engineering/performance.md "Start-up"). The package declares no "exports", so the path is public;
// Node recognises the file as an ES module by its syntax (Node ≥ 20.19, package.json "engines").
import { createBLAKE3, createKeccak, createSHA256, type IHasher } from "hash-wasm/dist/index.esm.js";

const [keccakWasm, sha256Wasm, blake3Wasm] = await Promise.all([createKeccak(256), createSHA256(), createBLAKE3(256)]);

function digestOf(h: IHasher, data: Uint8Array): Uint8Array {
  h.init();
  h.update(data);
  return h.digest("binary");
}

export function keccak256(data: Uint8Array): Uint8Array {
  return digestOf(keccakWasm, data);
}

export function sha256(data: Uint8Array): Uint8Array {
  return digestOf(sha256Wasm, data);
}

export function blake3(data: Uint8Array): Uint8Array {
  return digestOf(blake3Wasm, data);
}

/** A 32-byte hash function; the Merkle structures are generic over it. */
export interface Hasher {
  readonly name: "sha256" | "blake3" | "keccak256";
  hash(data: Uint8Array): Uint8Array;
}

export const SHA256: Hasher = { name: "sha256", hash: sha256 };
export const BLAKE3: Hasher = { name: "blake3", hash: blake3 };
export const KECCAK256: Hasher = { name: "keccak256", hash: keccak256 };

const WASM_OF = new Map<Hasher, IHasher>([
  [SHA256, sha256Wasm],
  [BLAKE3, blake3Wasm],
  [KECCAK256, keccakWasm],
]);

// Preimages up to this size are gathered here and hashed with one WASM call; larger ones are
// fed part by part (the copy is then small next to the hashing).
const SCRATCH = new Uint8Array(16 * 1024);

/**
 * hasher(parts[0] ‖ parts[1] ‖ …) without allocating the concatenation: for tree nodes, leaves
 * and other preimages built from a few small pieces. A hasher other than the three above (e.g. a
 * timing wrapper) gets the concatenation through its own `hash`.
 */
export function hashParts(hasher: Hasher, ...parts: Uint8Array[]): Uint8Array {
  const wasm = WASM_OF.get(hasher);
  let total = 0;
  for (const p of parts) total += p.length;
  if (wasm === undefined) {
    const joined = new Uint8Array(total);
    let at = 0;
    for (const p of parts) {
      joined.set(p, at);
      at += p.length;
    }
    return hasher.hash(joined);
  }
  if (total > SCRATCH.length) {
    wasm.init();
    for (const p of parts) wasm.update(p);
    return wasm.digest("binary");
  }
  let at = 0;
  for (const p of parts) {
    SCRATCH.set(p, at);
    at += p.length;
  }
  return digestOf(wasm, SCRATCH.subarray(0, total));
}
