// The WASM hashers of src/crypto/hash.ts against @noble/hashes (the previous implementation of
// keccak256 and sha256; noble's blake3 stands in for the previous blake3-wasm) on inputs of every
// length class: empty, every length 0..2000, the block and chunk boundaries of each function and
// of hash-wasm's 16 KiB transfer buffer, views at odd offsets, and split preimages (hashParts).
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { sha256 as nobleSha256 } from "@noble/hashes/sha2.js";
import { blake3 as nobleBlake3 } from "@noble/hashes/blake3.js";
import { concatBytes, toHex, utf8 } from "../../src/bytes.js";
import { BLAKE3, KECCAK256, SHA256, blake3, hashParts, keccak256, oneCallHashing, sha256, type Hasher } from "../../src/crypto/hash.js";

const CASES: Array<[Hasher, (d: Uint8Array) => Uint8Array, (d: Uint8Array) => Uint8Array]> = [
  [KECCAK256, keccak256, keccak_256],
  [SHA256, sha256, nobleSha256],
  [BLAKE3, blake3, (d) => nobleBlake3(d)],
];

/** Deterministic, non-repeating test bytes. */
function bytes(n: number, salt = 0): Uint8Array {
  const out = new Uint8Array(n);
  let x = 0x9e3779b9 ^ salt;
  for (let i = 0; i < n; i++) {
    x = Math.imul(x ^ (x >>> 15), 0x2c1b3c6d) + i;
    out[i] = x >>> 24;
  }
  return out;
}

const BOUNDARIES = [
  ...[64, 128, 136, 272, 1024, 2048, 3072, 4096, 8192, 16_384, 32_768, 65_536].flatMap((n) => [n - 1, n, n + 1]),
  100_000,
];

describe("hash primitives (WASM) against @noble/hashes", () => {
  it("known answers for the empty string and \"abc\"", () => {
    expect(toHex(keccak256(new Uint8Array(0)))).toBe("0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470");
    expect(toHex(sha256(new Uint8Array(0)))).toBe("0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    expect(toHex(blake3(new Uint8Array(0)))).toBe("0xaf1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262");
    expect(toHex(keccak256(utf8("abc")))).toBe("0x4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45");
    expect(toHex(sha256(utf8("abc")))).toBe("0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect(toHex(blake3(utf8("abc")))).toBe("0x6437b3ac38465133ffb63b75273a8db548c558465d79db03fd359c6cd5bd9d85");
  });

  it.each(CASES)("$name equals the reference for every length 0..2000 and at every block boundary", (hasher, ours, reference) => {
    for (let n = 0; n <= 2000; n++) {
      const d = bytes(n, n);
      expect(toHex(ours(d)), `${hasher.name} length ${n}`).toBe(toHex(reference(d)));
    }
    for (const n of BOUNDARIES) {
      const d = bytes(n, n);
      expect(toHex(ours(d)), `${hasher.name} length ${n}`).toBe(toHex(reference(d)));
      expect(toHex(hasher.hash(d))).toBe(toHex(reference(d)));
    }
  });

  it.each(CASES)("$name reads a view at its offset and returns a fresh 32-byte array", (_hasher, ours, reference) => {
    const big = bytes(300, 7);
    for (const [start, end] of [[1, 65], [3, 3], [7, 299], [0, 300]] as const) {
      const view = big.subarray(start, end);
      expect(toHex(ours(view))).toBe(toHex(reference(big.slice(start, end))));
    }
    const first = ours(utf8("first"));
    const kept = toHex(first);
    ours(utf8("second"));
    expect(toHex(first)).toBe(kept);
    expect(first.length).toBe(32);
    expect(first.buffer.byteLength).toBe(32);
    first.fill(0);
    expect(toHex(ours(utf8("first")))).toBe(kept);
  });

  it.each(CASES)("$name: hashParts equals hashing the concatenation (property, incl. > 16 KiB)", (hasher, _ours, reference) => {
    fc.assert(
      fc.property(fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 8 }), (parts) => {
        expect(toHex(hashParts(hasher, ...parts))).toBe(toHex(reference(concatBytes(...parts))));
      }),
      { numRuns: 300 },
    );
    const large = [bytes(10_000, 1), bytes(7_000, 2), bytes(1, 3)];
    expect(toHex(hashParts(hasher, ...large))).toBe(toHex(reference(concatBytes(...large))));
    expect(toHex(hashParts(hasher))).toBe(toHex(reference(new Uint8Array(0))));
  });

  it("hashParts gives any other Hasher the concatenation through its own hash", () => {
    const seen: number[] = [];
    const wrapper: Hasher = { name: "blake3", hash: (d) => (seen.push(d.length), blake3(d)) };
    const parts = [bytes(5), bytes(0), bytes(70)];
    expect(toHex(hashParts(wrapper, ...parts))).toBe(toHex(nobleBlake3(concatBytes(...parts))));
    expect(seen).toEqual([75]);
  });

  it("each hash up to 16 KiB is one WebAssembly call (the modules' Hash_Calculate was found and gave hash-wasm's own digests)", () => {
    expect(oneCallHashing).toBe(true);
  });

  it.each(CASES)("$name: a streamed hash (over 16 KiB) between one-call hashes leaves neither wrong", (_hasher, ours, reference) => {
    const [short, long] = [bytes(100, 5), bytes(20_000, 6)];
    for (const d of [short, long, short, long, long, short]) expect(toHex(ours(d))).toBe(toHex(reference(d)));
  });
});
