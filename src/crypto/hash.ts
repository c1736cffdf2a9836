// The three hash functions of the protocol: keccak256 (CIP-39 digests, ids, tx/receipt
// leaves), sha256 (commonware conformance workloads), blake3 (Cowboy state commitments).
//
// All three run in hash-wasm's WebAssembly builds, several times faster than pure JS for the
// short inputs the engine hashes (scripts/bench-crypto.ts; docs/engineering/performance.md). Its factories
// are asynchronous (they instantiate the WASM module), so each hasher is created once here with
// top-level await and then used synchronously. Nothing can interleave within a hash (JS is
// single-threaded and it never yields), and the digest is a fresh copy, so callers may keep it
// and may reuse their input buffers.
// test/crypto/hash.test.ts checks each against @noble/hashes on inputs of every length class.
//
// Fast-path seam "hash-wasm" (docs/engineering/performance.md "Fast paths"): `selectHashing("reference")`
// makes every hash go through @noble/hashes, the pure-JS reference, instead (a spec-only run:
// test/harness/fast-paths.test.ts requires the same bytes both ways). It is the one process-wide
// seam: hashes are taken by pure functions all through the consensus layers (ids, keys, roots).
//
// The package's ES module build, by path: its default entry is a UMD bundle that Node loads as
// CommonJS, which costs about 50 ms of every `cbqs` call that hashes (the same code, the same
// WASM; docs/engineering/performance.md "Start-up"). The package declares no "exports", so the path is public;
// Node recognises the file as an ES module by its syntax (every Node that package.json "engines" admits).
//
// One WebAssembly call per hash. hash-wasm's hasher makes three (init, update, digest) and a
// type check, a view and an export lookup per call: about a third of a short hash's time
// (docs/engineering/performance.md "Pipelined replay"). Each module also exports Hash_Calculate (init,
// update and final in one call, over the input in the module's 16 KiB buffer), but hash-wasm
// does not expose the module instance, so it is recorded from WebAssembly.instantiate while the
// hasher is created. The one-call path is used only if it gives the hasher's own digests on a
// probe (`oneCallHashing`); inputs longer than the buffer always go through the hasher.
import { createRequire } from "node:module";
import type * as NobleSha2 from "@noble/hashes/sha2.js";
import type * as NobleSha3 from "@noble/hashes/sha3.js";
import type * as NobleBlake3 from "@noble/hashes/blake3.js";
import { createBLAKE3, createKeccak, createSHA256, type IHasher } from "hash-wasm/dist/index.esm.js";

/** hash-wasm's input buffer inside each module (its MAIN_BUFFER_SIZE). */
const WASM_BUFFER = 16 * 1024;

/** The pure-JS reference hashers, loaded on first use (a run that never selects them never loads them). */
interface ReferenceHashing {
  keccak256(data: Uint8Array): Uint8Array;
  sha256(data: Uint8Array): Uint8Array;
  blake3(data: Uint8Array): Uint8Array;
}

function loadReference(): ReferenceHashing {
  const require = createRequire(import.meta.url);
  const nobleBlake3 = (require("@noble/hashes/blake3.js") as typeof NobleBlake3).blake3;
  return {
    keccak256: (require("@noble/hashes/sha3.js") as typeof NobleSha3).keccak_256,
    sha256: (require("@noble/hashes/sha2.js") as typeof NobleSha2).sha256,
    blake3: (data) => nobleBlake3(data),
  };
}

/** undefined: hash-wasm (the default); else the reference every hash goes through. */
let reference: ReferenceHashing | undefined;

/** The seam: "fast" (hash-wasm) or "reference" (@noble/hashes) for every hash of this process from now on. */
export function selectHashing(path: "fast" | "reference"): void {
  reference = path === "fast" ? undefined : loadReference();
}

/** Which hashing `selectHashing` chose last. */
export const hashingPath = (): "fast" | "reference" => (reference === undefined ? "fast" : "reference");

/** The parts of the WebAssembly global used here (the compiler's libraries do not declare it). */
interface WasmInstance {
  exports: Record<string, unknown>;
}
interface WasmGlobal {
  instantiate(...args: unknown[]): Promise<unknown>;
  Instance: abstract new (...args: never[]) => WasmInstance;
  Memory: abstract new (...args: never[]) => { buffer: ArrayBuffer };
}
const Wasm = (globalThis as unknown as { WebAssembly: WasmGlobal }).WebAssembly;

/** A hash-wasm hasher, created while WebAssembly.instantiate is watched: its module instance. */
async function createWatched(create: () => Promise<IHasher>): Promise<{ hasher: IHasher; instance: WasmInstance | undefined }> {
  const instantiate = Wasm.instantiate;
  let instance: WasmInstance | undefined;
  Wasm.instantiate = async (...args: unknown[]) => {
    const made = await instantiate.apply(Wasm, args);
    instance = made instanceof Wasm.Instance ? made : (made as { instance: WasmInstance }).instance;
    return made;
  };
  try {
    return { hasher: await create(), instance };
  } finally {
    Wasm.instantiate = instantiate;
  }
}

/** A hash function over hash-wasm's module: `hash(data)`, and `hashParts` without concatenating. */
interface WasmHash {
  hash(data: Uint8Array): Uint8Array;
  hashParts(parts: readonly Uint8Array[]): Uint8Array;
  /** True when a hash is one WebAssembly call (the module's Hash_Calculate). */
  oneCall: boolean;
}

function wasmHash(hasher: IHasher, instance: WasmInstance | undefined, initParam: number, finalParam: number): WasmHash {
  const streamed = (parts: readonly Uint8Array[]): Uint8Array => {
    hasher.init();
    for (const p of parts) hasher.update(p);
    return hasher.digest("binary");
  };
  const slow: WasmHash = { hash: (data) => streamed([data]), hashParts: streamed, oneCall: false };
  const exports = instance?.exports;
  const calculate = exports?.["Hash_Calculate"];
  const memory = exports?.["memory"];
  const getBuffer = exports?.["Hash_GetBuffer"];
  if (typeof calculate !== "function" || !(memory instanceof Wasm.Memory) || typeof getBuffer !== "function") return slow;
  const at = (getBuffer as () => number)();
  let buffer = new Uint8Array(memory.buffer, at, WASM_BUFFER);
  const run = calculate as (length: number, initParam: number, finalParam: number) => void;
  /** The module's buffer (made again should the module's memory ever grow and detach it). */
  const input = (): Uint8Array => (buffer.byteLength === 0 ? (buffer = new Uint8Array(memory.buffer, at, WASM_BUFFER)) : buffer);
  const fast: WasmHash = {
    hash(data) {
      if (data.length > WASM_BUFFER) return streamed([data]);
      const b = input();
      b.set(data);
      run(data.length, initParam, finalParam);
      return b.slice(0, 32);
    },
    hashParts(parts) {
      let total = 0;
      for (const p of parts) total += p.length;
      if (total > WASM_BUFFER) return streamed(parts);
      const b = input();
      let offset = 0;
      for (const p of parts) {
        b.set(p, offset);
        offset += p.length;
      }
      run(total, initParam, finalParam);
      return b.slice(0, 32);
    },
    oneCall: true,
  };
  // The one call must give the hasher's own digests (lengths around a block and the buffer's end).
  for (const n of [0, 3, 64, 65, 200, WASM_BUFFER]) {
    const probe = new Uint8Array(n).map((_, i) => (i * 31 + n) & 0xff);
    const [a, b] = [fast.hash(probe), streamed([probe])];
    if (a.length !== b.length || a.some((x, i) => x !== b[i])) return slow;
  }
  return fast;
}

// Created one after another: each watch of WebAssembly.instantiate must see its own module only.
const keccakWasm = await createWatched(() => createKeccak(256));
const sha256Wasm = await createWatched(() => createSHA256());
const blake3Wasm = await createWatched(() => createBLAKE3(256));
// Hash_Calculate(length, init, final): keccak256 starts with 256 bits and pads with 0x01 (hash-wasm
// createKeccak), sha256 with 256 (its final takes nothing), blake3 unkeyed (0) with a 32-byte digest.
const keccakHash = wasmHash(keccakWasm.hasher, keccakWasm.instance, 256, 0x01);
const sha256Hash = wasmHash(sha256Wasm.hasher, sha256Wasm.instance, 256, 0);
const blake3Hash = wasmHash(blake3Wasm.hasher, blake3Wasm.instance, 0, 32);

/** True when every hash is one WebAssembly call (test/crypto/hash.test.ts pins it). */
export const oneCallHashing = keccakHash.oneCall && sha256Hash.oneCall && blake3Hash.oneCall;

export function keccak256(data: Uint8Array): Uint8Array {
  return reference === undefined ? keccakHash.hash(data) : reference.keccak256(data);
}

export function sha256(data: Uint8Array): Uint8Array {
  return reference === undefined ? sha256Hash.hash(data) : reference.sha256(data);
}

export function blake3(data: Uint8Array): Uint8Array {
  return reference === undefined ? blake3Hash.hash(data) : reference.blake3(data);
}

/** A 32-byte hash function; the Merkle structures are generic over it. */
export interface Hasher {
  readonly name: "sha256" | "blake3" | "keccak256";
  hash(data: Uint8Array): Uint8Array;
}

export const SHA256: Hasher = { name: "sha256", hash: sha256 };
export const BLAKE3: Hasher = { name: "blake3", hash: blake3 };
export const KECCAK256: Hasher = { name: "keccak256", hash: keccak256 };

const WASM_OF = new Map<Hasher, WasmHash>([
  [SHA256, sha256Hash],
  [BLAKE3, blake3Hash],
  [KECCAK256, keccakHash],
]);

/**
 * hasher(parts[0] ‖ parts[1] ‖ …) without allocating the concatenation: for tree nodes, leaves
 * and other preimages built from a few small pieces. A hasher other than the three above (e.g. a
 * timing wrapper), or any hasher under the reference hashing, gets the concatenation through its
 * own `hash`.
 */
export function hashParts(hasher: Hasher, ...parts: Uint8Array[]): Uint8Array {
  const wasm = reference === undefined ? WASM_OF.get(hasher) : undefined;
  if (wasm !== undefined) return wasm.hashParts(parts);
  let total = 0;
  for (const p of parts) total += p.length;
  const joined = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    joined.set(p, at);
    at += p.length;
  }
  return hasher.hash(joined);
}
