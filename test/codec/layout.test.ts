// Whole-struct layouts (§14: fields in the order the CIP lists them, at their declared widths).
// Every expected byte string is written out by hand from the spec's schema text, field by field,
// independently of the codec; each case checks encode and strict decode both ways.
import { describe, expect, it } from "vitest";
import { codecs, decode, encode, type Codec } from "../../src/codec/index.js";
import type * as T from "../../src/codec/types.js";
import * as S from "./samples.js";

const { be, fill, hex } = S;
const ascii = (s: string): string => Buffer.from(s, "utf8").toString("hex");
const rep = (byteHex: string, n: number): string => byteHex.repeat(n);
const bytesOf = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, "hex"));

function expectLayout<V>(codec: Codec<V>, value: V, hand: string): void {
  expect(hex(encode(codec, value))).toBe(hand);
  expect(decode(codec, bytesOf(hand))).toEqual(value);
}

// §4 CbqsSigningContextV1 { version: u8, chain_id: u64, chain_instance_id: Bytes32 } of S.context.
const CTX = "01" + be(7, 8) + rep("c1", 32);
const edHex = (b: string): string => "01" + rep(b, 32); // §9.1 SigningPublicKey: Ed25519 = 1 || key

// §4.2 StreamConfigV1 of S.config, widths u64 u64 u32 u64 u64 u32 u64 u64 u64 u16 u32 u32.
const CONFIG =
  be(604_800_000, 8) + be(1_073_741_824, 8) + be(262_144, 4) + be(1_048_576, 8) + be(1_048_576, 8) + be(16, 4) +
  be(86_400_000, 8) + be(30_000, 8) + be(900_000, 8) + be(10, 2) + be(0, 4) + be(0, 4);

// §4.3 BaseRateAdmissionV1 of S.admission { bool, u64, u128, u128, u128 }.
const ADMISSION = "01" + be(100, 8) + be(1n << 40n, 16) + be(1n << 30n, 16) + be(1n << 30n, 16);

// §4.3 Vec<ProviderEndpointV1> of S.providerRecord.endpoints: u32 count, then transport tag || u32 len || UTF-8.
const WSS = "wss://cbqs.example/stream";
const HTTPS = "https://provider.example";
const ENDPOINTS = be(2, 4) + "01" + be(WSS.length, 4) + ascii(WSS) + "02" + be(HTTPS.length, 4) + ascii(HTTPS);

// §4.4 PriceQuoteV1 of S.quote, signature included.
const QUOTE =
  CTX + rep("22", 20) + rep("11", 20) + rep("51", 32) + be(1, 8) + "02" + be(1_073_741_824, 8) + be(1_048_576, 8) +
  be(1_048_576, 8) + be(90_000, 16) + be(100, 8) + rep("1d", 32) + rep("5b", 64);

// §9.3 KeyBatchReceiptV1 of S.receipt, signature included.
const RECEIPT =
  CTX + rep("c1", 32) + be(9, 8) + rep("99", 32) + rep("52", 32) + rep("51", 32) + be(0, 8) + be(2, 8) + rep("bd", 32) +
  be(3, 4) + rep("e0", 32) + be(10, 8) + be(13, 8) + rep("0a", 32) + rep("0f", 32) + rep("5a", 64);

describe("§14 whole-struct layouts, written out by hand", () => {
  it("§4.2: StreamConfigV1 field order and widths (u32 max_message_bytes/max_lanes, u16 default_max_attempts)", () => {
    expectLayout(codecs.StreamConfigV1, S.config, CONFIG);
  });

  it("§4.1: StreamRecordV1 (Standard, unencrypted, GovernanceBase, every option absent)", () => {
    const hand =
      "01" + rep("c1", 32) + rep("51", 32) + "01" + rep("11", 20) + be(3, 8) + edHex("a1") + "00" + "01" + "00" + "00" +
      rep("22", 20) + be(0, 8) + edHex("b1") + be(1, 8) + be(0, 8) + be(1, 8) + "01" + CONFIG +
      "02" + be(1, 8) + rep("d1", 32) + be(80_000, 16) + be(1_000_000, 16) + be(5, 8) + "00" + "00" + be(5, 8);
    expectLayout(codecs.StreamRecordV1, S.streamRecord, hand);
  });

  it("§4.1: StreamRecordV1 (Key purpose, Fast, encrypted, ProviderQuote, Suspended, every option present)", () => {
    const rec: T.StreamRecordV1 = {
      ...S.streamRecord,
      purpose: "Key",
      rotation_key: S.edKey(0xa2),
      delivery_class: "Fast",
      encrypted: true,
      linked_stream_id: fill(32, 0x53),
      status: "Suspended",
      pricing_basis: { type: "ProviderQuote", quote_digest: fill(32, 0xd2) },
      suspended_at_block: 7n,
      suspension_grace_deadline_block: 607n,
    };
    const hand =
      "01" + rep("c1", 32) + rep("51", 32) + "02" + rep("11", 20) + be(3, 8) + edHex("a1") + "01" + edHex("a2") + "02" +
      "01" + "01" + rep("53", 32) + rep("22", 20) + be(0, 8) + edHex("b1") + be(1, 8) + be(0, 8) + be(1, 8) + "02" +
      CONFIG + "01" + rep("d2", 32) + be(80_000, 16) + be(1_000_000, 16) + be(5, 8) + "01" + be(7, 8) + "01" +
      be(607, 8) + be(5, 8);
    expectLayout(codecs.StreamRecordV1, rec, hand);
  });

  it("§4.3: ProviderRecordV1 field order (u64 live_assigned_streams, u128 caps and reservations)", () => {
    const hand =
      "01" + rep("c1", 32) + rep("22", 20) + edHex("b1") + ENDPOINTS + edHex("b2") + ADMISSION + be(0, 8) +
      be(0, 16) + be(0, 16) + be(0, 16) + be(0, 8) + "01" + rep("ee", 32) + be(1, 8);
    expectLayout(codecs.ProviderRecordV1, S.providerRecord, hand);
  });

  it("§4/§4.4: FinalizedViewV1 and PriceQuoteV1 (u128 rate_per_block)", () => {
    expectLayout(codecs.FinalizedViewV1, S.receipt.served_at, rep("c1", 32) + be(9, 8) + rep("99", 32));
    expectLayout(codecs.PriceQuoteV1, S.quote, QUOTE);
  });
});

describe("§5 CbqsInstructionV1 payloads, written out by hand", () => {
  it("§5: RegisterProvider = 01 || 01 || RegisterProviderArgsV1", () => {
    const v: T.CbqsInstructionV1 = {
      type: "RegisterProvider",
      args: {
        signing_key: S.edKey(0xb1),
        endpoints: S.providerRecord.endpoints,
        quote_key: S.edKey(0xb2),
        base_rate_admission: S.admission,
        metadata_hash: fill(32, 0xee),
      },
    };
    expectLayout(codecs.CbqsInstructionV1, v, "0101" + edHex("b1") + ENDPOINTS + edHex("b2") + ADMISSION + rep("ee", 32));
  });

  it("§5: UpdateProvider = 01 || 02 || five options in order (endpoints, signing_key, quote_key, admission, metadata)", () => {
    const v: T.CbqsInstructionV1 = {
      type: "UpdateProvider",
      args: {
        endpoints: null,
        signing_key: S.edKey(0xc4),
        quote_key: null,
        base_rate_admission: S.admission,
        metadata_hash: fill(32, 0xef),
      },
    };
    expectLayout(codecs.CbqsInstructionV1, v, "0102" + "00" + "01" + edHex("c4") + "00" + "01" + ADMISSION + "01" + rep("ef", 32));
    const withEndpoints: T.CbqsInstructionV1 = {
      type: "UpdateProvider",
      args: { endpoints: S.providerRecord.endpoints, signing_key: null, quote_key: null, base_rate_admission: null, metadata_hash: null },
    };
    expectLayout(codecs.CbqsInstructionV1, withEndpoints, "0102" + "01" + ENDPOINTS + "00000000");
  });

  it("§5: CreateStream = 01 || 04 || owner_nonce u64, initial_escrow u128, keys, class, encrypted, provider, config, quote", () => {
    const v: T.CbqsInstructionV1 = {
      type: "CreateStream",
      args: {
        owner_nonce: 3n,
        initial_escrow: 10n ** 18n,
        admin_key: S.edKey(0xa1),
        rotation_key: S.edKey(0xa2),
        delivery_class: "Fast",
        encrypted: true,
        provider: fill(20, 0x22),
        config: S.config,
        price_quote: S.quote,
      },
    };
    const hand =
      "0104" + be(3, 8) + be(10n ** 18n, 16) + edHex("a1") + "01" + edHex("a2") + "02" + "01" + rep("22", 20) + CONFIG +
      "01" + QUOTE;
    expectLayout(codecs.CbqsInstructionV1, v, hand);
  });

  it("§5: UpdateStream = 01 || 05 || stream_id, Option config, Option admin_key, RotationKeyUpdateV1 (0-based), Option quote, bump", () => {
    const base: T.UpdateStreamArgsV1 = {
      stream_id: fill(32, 0x51),
      config: null,
      admin_key: S.edKey(0xa3),
      rotation_key: { type: "Set", key: S.edKey(0xa4) },
      price_quote: null,
      bump_authorization_generation: true,
    };
    const head = "0105" + rep("51", 32) + "00" + "01" + edHex("a3");
    expectLayout(codecs.CbqsInstructionV1, { type: "UpdateStream", args: base }, head + "01" + edHex("a4") + "00" + "01");
    expectLayout(
      codecs.CbqsInstructionV1,
      { type: "UpdateStream", args: { ...base, rotation_key: { type: "Keep" }, bump_authorization_generation: false } },
      head + "00" + "00" + "00",
    );
    expectLayout(
      codecs.CbqsInstructionV1,
      { type: "UpdateStream", args: { ...base, config: S.config, rotation_key: { type: "Clear" }, price_quote: S.quote } },
      "0105" + rep("51", 32) + "01" + CONFIG + "01" + edHex("a3") + "02" + "01" + QUOTE + "01",
    );
  });

  it("§5: CloseStream = 01 || 08 || stream_id; ActivateKeyGeneration = 01 || 09 || KeyBatchReceiptV1 || bump", () => {
    expectLayout(codecs.CbqsInstructionV1, { type: "CloseStream", args: { stream_id: fill(32, 0x51) } }, "0108" + rep("51", 32));
    expectLayout(
      codecs.CbqsInstructionV1,
      { type: "ActivateKeyGeneration", args: { receipt: S.receipt, bump_authorization_generation: true } },
      "0109" + RECEIPT + "01",
    );
  });
});
