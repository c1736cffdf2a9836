// Known-answer derivations: each expected value is keccak256 of a preimage written out by hand
// in the test from the spec's formula (independent of the codec's own encoders).
import { describe, expect, it } from "vitest";
import { keccak_256 } from "@noble/hashes/sha3.js";
import * as D from "../../src/codec/index.js";
import { EncodeError } from "../../src/codec/index.js";
import * as S from "./samples.js";

const { be, fill } = S;
const k = (...hexParts: string[]): string => Buffer.from(keccak_256(Buffer.from(hexParts.join(""), "hex"))).toString("hex");
const ascii = (s: string): string => Buffer.from(s, "ascii").toString("hex");
const h = (b: Uint8Array): string => Buffer.from(b).toString("hex");
const CTX = "01" + be(7, 8) + "c1".repeat(32); // canonical(S.context)

describe("derivations", () => {
  it("§3: chain_instance_id = keccak256(\"cowboy-chain-identity-v1:\" || exact genesis bytes)", () => {
    const genesis = Buffer.from('{"chain_id":"7"}\n');
    expect(h(D.chainInstanceId(genesis))).toBe(k(ascii("cowboy-chain-identity-v1:"), genesis.toString("hex")));
  });

  it("§4.1: main stream_id = keccak256(\"cbqs/stream-id/v1\" || chain_id_u64_be || chain_instance_id || owner || owner_nonce_u64_be)", () => {
    const got = D.streamId(7n, fill(32, 0xc1), fill(20, 0x11), 3n);
    expect(h(got)).toBe(k(ascii("cbqs/stream-id/v1"), be(7, 8), "c1".repeat(32), "11".repeat(20), be(3, 8)));
    expect(() => D.streamId(7n, fill(32, 0xc1), fill(19, 0x11), 3n)).toThrow(EncodeError);
    expect(() => D.streamId(1n << 64n, fill(32, 0xc1), fill(20, 0x11), 3n)).toThrow(EncodeError);
  });

  it("§4.1: key_stream_id = keccak256(\"cbqs/key-stream-id/v1\" || main_stream_id)", () => {
    expect(h(D.keyStreamId(fill(32, 0x51)))).toBe(k(ascii("cbqs/key-stream-id/v1"), "51".repeat(32)));
  });

  it("§8: lane_id = keccak256(\"cbqs/lane-id/v1\" || stream_id || lane_nonce)", () => {
    expect(h(D.laneId(fill(32, 0x51), fill(32, 0x4e)))).toBe(k(ascii("cbqs/lane-id/v1"), "51".repeat(32), "4e".repeat(32)));
  });

  it("§9.1: signing_key_id = keccak256(\"cbqs/signing-key-id/v1\" || 0x01 || key)", () => {
    expect(h(D.signingKeyId(S.edKey(0xb2)))).toBe(k(ascii("cbqs/signing-key-id/v1"), "01", "b2".repeat(32)));
  });

  it("§9.3: envelope_digest = keccak256(\"cbqs/key-envelope/v1\" || canonical(KeyEnvelopeV1))", () => {
    const env = { stream_id: fill(32, 0x52), encryption_generation: 2n, recipient_hpke_key: S.hpkeKey(9), hpke_ciphertext: fill(80, 0xcc) };
    expect(h(D.envelopeDigest(env))).toBe(
      k(ascii("cbqs/key-envelope/v1"), "52".repeat(32), be(2, 8), "01", "09".repeat(32), be(80, 4), "cc".repeat(80)),
    );
  });

  it("§9.3: key_batch_genesis = keccak256(\"cbqs/key-batch-genesis/v1\" || canonical(context) || key_stream_id)", () => {
    expect(h(D.keyBatchGenesis(S.context, fill(32, 0x52)))).toBe(k(ascii("cbqs/key-batch-genesis/v1"), CTX, "52".repeat(32)));
  });

  it("§9.3: membership_set_digest = keccak256(domain || u32 count || keys' struct encodings in order-key order)", () => {
    const keys = [S.hpkeKey(1), S.hpkeKey(2), S.hpkeKey(3)];
    const order = (b: number): string => k("01", be(b, 1).repeat(32));
    const sorted = [...keys].sort((a, b) => order(a.key[0]!).localeCompare(order(b.key[0]!)));
    const expected = k(ascii("cbqs/membership-set/v1"), be(3, 4), ...sorted.map((x) => "01" + h(x.key)));
    expect(h(D.membershipSetDigest(sorted))).toBe(expected);
    expect(h(D.hpkeOrderKey(keys[0]!))).toBe(order(1));
    expect(h(D.membershipSetDigest([]))).toBe(k(ascii("cbqs/membership-set/v1"), be(0, 4)));
  });

  it("§9.3: membership_set_digest rejects unsorted and duplicate members", () => {
    const keys = [S.hpkeKey(1), S.hpkeKey(2)];
    const sorted = [...keys].sort((a, b) => h(D.hpkeOrderKey(a)).localeCompare(h(D.hpkeOrderKey(b))));
    expect(() => D.membershipSetDigest([sorted[1]!, sorted[0]!])).toThrow(/strictly ascending/);
    expect(() => D.membershipSetDigest([sorted[0]!, sorted[0]!])).toThrow(/strictly ascending/);
  });

  it("§9.3: envelope_root = keccak256(domain || context || key_stream_id || generation || batch_digest || u32 count || digests)", () => {
    const digests = [fill(32, 0xd1), fill(32, 0xd2)];
    expect(h(D.envelopeRoot(S.context, fill(32, 0x52), 2n, fill(32, 0xbd), digests))).toBe(
      k(ascii("cbqs/envelope-root/v1"), CTX, "52".repeat(32), be(2, 8), "bd".repeat(32), be(2, 4), "d1".repeat(32), "d2".repeat(32)),
    );
  });

  it("§9.3: batch_context_digest = keccak256(domain || context || stream_id || generation || previous || membership || created_at_ms)", () => {
    expect(h(D.batchContextDigest(S.context, fill(32, 0x52), 2n, fill(32, 0x0b), fill(32, 0x3d), 123_456n))).toBe(
      k(ascii("cbqs/key-batch-context/v1"), CTX, "52".repeat(32), be(2, 8), "0b".repeat(32), "3d".repeat(32), be(123_456, 8)),
    );
  });

  it("§14.1: stream, lane and checkpoint receipt genesis anchors (provider_epoch 0)", () => {
    expect(h(D.streamReceiptGenesis(S.context, fill(32, 0x51)))).toBe(k(ascii("cbqs/stream-genesis/v1"), CTX, "51".repeat(32), be(0, 8)));
    expect(h(D.laneReceiptGenesis(S.context, fill(32, 0x51), fill(32, 0x1a)))).toBe(
      k(ascii("cbqs/lane-genesis/v1"), CTX, "51".repeat(32), "1a".repeat(32), be(0, 8)),
    );
    expect(h(D.checkpointGenesis(S.context, fill(32, 0x51)))).toBe(k(ascii("cbqs/checkpoint-genesis/v1"), CTX, "51".repeat(32), be(0, 8)));
  });
});
