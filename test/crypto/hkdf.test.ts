import { describe, expect, it } from "vitest";
import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { concatBytes, fromHex, toHex, u64BE, utf8 } from "../../src/bytes.js";
import { deriveDataKey, deriveRotationSeed, hkdfSha256 } from "../../src/crypto/hkdf.js";

describe("CIP-39 §9.2 HKDF-SHA256 derivations", () => {
  it("§9.2 HKDF-SHA256 reproduces RFC 5869 test case 1", () => {
    const okm = hkdfSha256(
      fromHex("0x" + "0b".repeat(22)),
      fromHex("0x000102030405060708090a0b0c"),
      fromHex("0xf0f1f2f3f4f5f6f7f8f9"),
      42,
    );
    expect(toHex(okm)).toBe(
      "0x3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865",
    );
  });

  it("§9.2 HKDF-SHA256 reproduces RFC 5869 test case 3 (salt and info empty)", () => {
    const okm = hkdfSha256(fromHex("0x" + "0b".repeat(22)), new Uint8Array(0), new Uint8Array(0), 42);
    expect(toHex(okm)).toBe(
      "0x8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8",
    );
  });

  // Independent restatement of RFC 5869 for a 32-byte output: PRK = HMAC(zeros32, IKM), T1 = HMAC(PRK, info || 0x01).
  const byHand = (ikm: Uint8Array, info: Uint8Array): Uint8Array =>
    hmac(sha256, hmac(sha256, new Uint8Array(32), ikm), concatBytes(info, Uint8Array.of(1)));

  it("§9.2 rotation_seed = HKDF(stream_root, label || stream_id), no salt, 32 bytes", () => {
    const root = fromHex("0x" + "11".repeat(32));
    const id = fromHex("0x" + "22".repeat(32));
    const expected = byHand(root, concatBytes(utf8("cbqs/rotation-signing/v1"), id));
    expect(toHex(deriveRotationSeed(root, id))).toBe(toHex(expected));
  });

  it("§9.2 data_key[g] binds the generation as u64 big-endian and differs per generation", () => {
    const root = fromHex("0x" + "11".repeat(32));
    const id = fromHex("0x" + "22".repeat(32));
    for (const g of [0n, 1n, 2n ** 64n - 1n]) {
      const expected = byHand(root, concatBytes(utf8("cbqs/data-key/v1"), id, u64BE(g)));
      expect(toHex(deriveDataKey(root, id, g))).toBe(toHex(expected));
    }
    expect(toHex(deriveDataKey(root, id, 1n))).not.toBe(toHex(deriveDataKey(root, id, 2n)));
    expect(() => deriveDataKey(root, id, 2n ** 64n)).toThrow(RangeError);
    expect(() => deriveDataKey(root, id, -1n)).toThrow(RangeError);
  });

  it("§9.2 derivations reject a stream_root or stream_id that is not 32 bytes, naming which", () => {
    const ok = new Uint8Array(32);
    expect(() => deriveRotationSeed(new Uint8Array(31), ok)).toThrow(new RangeError("stream_root: expected 32 bytes, got 31"));
    expect(() => deriveRotationSeed(ok, new Uint8Array(30))).toThrow(new RangeError("stream_id: expected 32 bytes, got 30"));
    expect(() => deriveDataKey(new Uint8Array(33), ok, 0n)).toThrow(new RangeError("stream_root: expected 32 bytes, got 33"));
    expect(() => deriveDataKey(ok, new Uint8Array(33), 0n)).toThrow(new RangeError("stream_id: expected 32 bytes, got 33"));
  });
});
