// §14 signing registry: domain || canonical(context) || canonical(fields after context, before signature).
import { describe, expect, it } from "vitest";
import { keccak_256 } from "@noble/hashes/sha3.js";
import * as C from "../../src/codec/index.js";
import { codecs, encode } from "../../src/codec/index.js";
import * as S from "./samples.js";

const { be, fill } = S;
const h = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const ascii = (s: string): string => Buffer.from(s, "ascii").toString("hex");
const CTX = "01" + be(7, 8) + "c1".repeat(32);
const kh = (hexStr: string): string => h(keccak_256(Buffer.from(hexStr, "hex")));

describe("§14 signing bytes", () => {
  it("§4.4/§14: price_quote_signing_bytes_v1 and quote_digest", () => {
    const q = S.quote;
    const hand =
      ascii("cbqs/price-quote/v1") + CTX + "22".repeat(20) + "11".repeat(20) + "51".repeat(32) + be(1, 8) + "02" +
      be(1_073_741_824, 8) + be(1_048_576, 8) + be(1_048_576, 8) + be(90_000, 16) + be(100, 8) + "1d".repeat(32);
    expect(h(C.price_quote_signing_bytes_v1(q))).toBe(hand);
    expect(h(C.quoteDigest(q))).toBe(kh(hand));
    // The signature is excluded: changing it does not change the digest.
    expect(C.quoteDigest({ ...q, signature: fill(64, 0) })).toEqual(C.quoteDigest(q));
  });

  it("§7/§14: stream_grant_signing_bytes_v1 and grant_id", () => {
    const g = S.grant;
    const hand =
      ascii("cbqs/stream-grant/v1") + CTX + "51".repeat(32) + be(1, 8) + "6e".repeat(32) + "01" + "c2".repeat(32) +
      "01" + "01" + "c3".repeat(32) + be(3, 2) + "03" + be(2, 4) + "01".repeat(32) + "02".repeat(32) + "01" +
      be(1000, 8) + be(2000, 8) + be(1024, 4) + be(4096, 8) + be(8, 4) + be(4, 4);
    expect(h(C.stream_grant_signing_bytes_v1(g))).toBe(hand);
    expect(h(C.grantId(g))).toBe(kh(hand));
  });

  it("§7.1/§14: session_proof_signing_bytes_v1 matches the §7.1 preimage", () => {
    const p = { context: S.context, stream_id: fill(32, 1), provider_epoch: 0n, grant_id: fill(32, 2), session_id: fill(32, 3), challenge: fill(32, 4), signature: fill(64, 5) };
    const hand = ascii("cbqs/session/v1") + CTX + "01".repeat(32) + be(0, 8) + "02".repeat(32) + "03".repeat(32) + "04".repeat(32);
    expect(h(C.session_proof_signing_bytes_v1(p))).toBe(hand);
    expect(h(C.sessionProofDigest(p))).toBe(kh(hand));
  });

  it("§7.1/§14: request_proof_signing_bytes_v1 (method is a u16)", () => {
    const p = { context: S.context, session_id: fill(32, 3), counter: 1n, method: "CommitKeyBatch" as const, body_hash: fill(32, 0xbb), signature: fill(64, 5) };
    const hand = ascii("cbqs/request/v1") + CTX + "03".repeat(32) + be(1, 8) + be(4, 2) + "bb".repeat(32);
    expect(h(C.request_proof_signing_bytes_v1(p))).toBe(hand);
    expect(h(C.requestProofDigest(p))).toBe(kh(hand));
  });

  it("§9.3/§14: key_rotation_batch_signing_bytes_v1 and batch_digest", () => {
    const hand =
      ascii("cbqs/key-rotation-batch/v1") + CTX + "52".repeat(32) + be(2, 8) + "0b".repeat(32) + be(2, 4) +
      "31".repeat(32) + "32".repeat(32) + "3d".repeat(32) + be(123_456, 8);
    expect(h(C.key_rotation_batch_signing_bytes_v1(S.batch))).toBe(hand);
    expect(h(C.batchDigest(S.batch))).toBe(kh(hand));
  });

  it("§9.3/§14: key_batch_receipt_signing_bytes_v1 and the receipt digest", () => {
    const r = S.receipt;
    const hand =
      ascii("cbqs/key-batch-receipt/v1") + CTX + "c1".repeat(32) + be(9, 8) + "99".repeat(32) + "52".repeat(32) +
      "51".repeat(32) + be(0, 8) + be(2, 8) + "bd".repeat(32) + be(3, 4) + "e0".repeat(32) + be(10, 8) + be(13, 8) +
      "0a".repeat(32) + "0f".repeat(32);
    expect(h(C.key_batch_receipt_signing_bytes_v1(r))).toBe(hand);
    expect(h(C.keyBatchReceiptDigest(r))).toBe(kh(hand));
    expect(h(encode(codecs.KeyBatchReceiptV1, r))).toBe(hand.slice(ascii("cbqs/key-batch-receipt/v1").length) + "5a".repeat(64));
  });

  it("§14: signing bytes refuse an object with no canonical encoding (e.g. nonzero provider_epoch)", () => {
    expect(() => C.key_batch_receipt_signing_bytes_v1({ ...S.receipt, provider_epoch: 1n })).toThrow(C.EncodeError);
    expect(() => C.price_quote_signing_bytes_v1({ ...S.quote, signature: fill(63, 0) })).toThrow(C.EncodeError);
  });
});
