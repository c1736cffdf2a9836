// One test per §14 encoding rule and per decode-time bound / structural invariant.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DecodeError,
  EncodeError,
  JsonValueError,
  codecs,
  decode,
  encode,
  fromJson,
  type Codec,
  type DecodeErrorKind,
} from "../../src/codec/index.js";
import { Reader, Writer, struct, u8 } from "../../src/codec/core.js";
import type * as T from "../../src/codec/types.js";
import * as S from "./samples.js";

const { be, fill, hex } = S;
const bytesOf = (h: string): Uint8Array => Uint8Array.from(Buffer.from(h, "hex"));

function decodeError(codec: Codec<unknown>, bytes: Uint8Array): DecodeError {
  try {
    decode(codec, bytes);
  } catch (err) {
    if (err instanceof DecodeError) return err;
    throw err;
  }
  throw new Error("decode unexpectedly succeeded");
}

function expectReject(
  codec: Codec<any>,
  bytes: Uint8Array,
  want: { kind: DecodeErrorKind; path?: string; offset?: number },
): DecodeError {
  const err = decodeError(codec, bytes);
  expect(err.kind).toBe(want.kind);
  if (want.path !== undefined) expect(err.path).toBe(want.path);
  if (want.offset !== undefined) expect(err.offset).toBe(want.offset);
  expect(err.code).toBe(want.kind === "UnsupportedVersion" ? 3937 : 4000);
  return err;
}

const topUp = (amount: bigint): T.CbqsInstructionV1 => ({
  type: "TopUpStream",
  args: { stream_id: fill(32, 0x51), amount },
});

describe("§14 primitive encodings", () => {
  it("§14: integers are unsigned big-endian (u8, u16, u32, u64, u128)", () => {
    expect(hex(encode(codecs.SetProviderStatusArgsV1, { status: "Draining" }))).toBe("02");
    expect(hex(encode(codecs.CbqsRequestMethodV1, "Redrive"))).toBe("0012"); // u16 registry (§7.1)
    const cfg = hex(encode(codecs.StreamConfigV1, S.config));
    expect(cfg.slice(0, 16)).toBe(be(604_800_000n, 8)); // u64
    expect(cfg.slice(32, 40)).toBe(be(262_144, 4)); // u32
    const ctx = hex(encode(codecs.CbqsSigningContextV1, { ...S.context, chain_id: 0x0102030405060708n }));
    expect(ctx.slice(2, 18)).toBe("0102030405060708");
    const instr = hex(encode(codecs.CbqsInstructionV1, topUp((1n << 127n) + 5n)));
    expect(instr.slice(-32)).toBe("80000000000000000000000000000005"); // u128
  });

  it("§14: integers out of their width are not encodable (no wrap)", () => {
    expect(() => encode(codecs.CbqsInstructionV1, topUp(1n << 128n))).toThrow(EncodeError);
    expect(() => encode(codecs.CbqsInstructionV1, topUp(-1n))).toThrow(EncodeError);
    expect(() => encode(codecs.StreamConfigV1, { ...S.config, default_max_attempts: 65_536 })).toThrow(EncodeError);
  });

  it("§14: fixed byte strings and addresses are their raw fixed-width bytes", () => {
    const bytes = encode(codecs.CbqsInstructionV1, { type: "CloseStream", args: { stream_id: fill(32, 0xab) } });
    expect(hex(bytes)).toBe("0108" + "ab".repeat(32));
    expect(() => encode(codecs.CloseStreamArgsV1, { stream_id: fill(31, 0xab) })).toThrow(EncodeError);
  });

  it("§14: a variable byte string is u32 length || bytes", () => {
    const env: T.KeyEnvelopeV1 = {
      stream_id: fill(32, 1),
      encryption_generation: 2n,
      recipient_hpke_key: S.hpkeKey(3),
      hpke_ciphertext: fill(80, 4),
    };
    expect(hex(encode(codecs.KeyEnvelopeV1, env))).toBe(
      "01".repeat(32) + be(2, 8) + "01" + "03".repeat(32) + be(80, 4) + "04".repeat(80),
    );
  });

  it("§14: an option is tag 0 for absent, tag 1 || value for present; other tags are invalid", () => {
    const none = encode(codecs.BaseRateSchedulesV1, { active: S.schedule, pending: null });
    expect(none[161]).toBe(0);
    const some = encode(codecs.BaseRateSchedulesV1, { active: S.schedule, pending: S.schedule });
    expect(some[161]).toBe(1);
    expect(hex(some.subarray(162))).toBe(hex(some.subarray(0, 161)));
    const bad = none.slice();
    bad[161] = 2;
    expectReject(codecs.BaseRateSchedulesV1, bad, { kind: "InvalidTag", path: "pending", offset: 161 });
  });

  it("§14: a vector is u32 element_count || elements", () => {
    const bytes = hex(encode(codecs.LaneScopeV1, { type: "Set", lane_ids: [fill(32, 1), fill(32, 2)] }));
    expect(bytes).toBe("03" + be(2, 4) + "01".repeat(32) + "02".repeat(32));
  });

  it("§14 (D-0027): bool is one byte 0/1; any other byte is invalid", () => {
    expect(hex(encode(codecs.ActivateKeyGenerationArgsV1, { receipt: S.receipt, bump_authorization_generation: true })).slice(-2)).toBe("01");
    const bytes = encode(codecs.UpdateStreamArgsV1, {
      stream_id: fill(32, 1),
      config: null,
      admin_key: null,
      rotation_key: { type: "Keep" },
      price_quote: null,
      bump_authorization_generation: false,
    });
    expect(hex(bytes)).toBe("01".repeat(32) + "00" + "00" + "00" + "00" + "00");
    bytes[bytes.length - 1] = 2;
    expectReject(codecs.UpdateStreamArgsV1, bytes, { kind: "InvalidTag", path: "bump_authorization_generation", offset: 36 });
  });

  it("§14: String is u32 length || UTF-8 and invalid UTF-8 is rejected (§4.3)", () => {
    const ok = encode(codecs.ProviderEndpointV1, S.endpoint("https://é.example"));
    expect(hex(ok)).toBe("02" + be(18, 4) + Buffer.from("https://é.example").toString("hex"));
    const bad = bytesOf("02" + be(10, 4) + Buffer.from("https://").toString("hex") + "c328");
    expectReject(codecs.ProviderEndpointV1, bad, { kind: "InvalidValue", path: "uri", offset: 1 });
  });

  it("§14: struct fields appear in declaration order (CbqsSigningContextV1)", () => {
    expect(hex(encode(codecs.CbqsSigningContextV1, S.context))).toBe("01" + be(7, 8) + "c1".repeat(32));
  });

  it("§14: a decoder rejects trailing bytes and truncated input", () => {
    const bytes = encode(codecs.StreamRecordV1, S.streamRecord);
    expectReject(codecs.StreamRecordV1, Uint8Array.from([...bytes, 0]), { kind: "TrailingBytes", offset: bytes.length });
    expectReject(codecs.StreamRecordV1, bytes.subarray(0, bytes.length - 1), { kind: "Truncated", path: "created_at_block" });
  });
});

describe("§14 enum tags", () => {
  const tagOf = (codec: Codec<any>, v: unknown): number => encode(codec, v)[0]!;

  it("§14: DeliveryClass Standard = 1, Fast = 2; unknown tags invalid", () => {
    expect(tagOf(codecs.DeliveryClass, "Standard")).toBe(1);
    expect(tagOf(codecs.DeliveryClass, "Fast")).toBe(2);
    for (const t of [0, 3, 255]) expectReject(codecs.DeliveryClass, Uint8Array.of(t), { kind: "InvalidTag" });
  });

  it("§4.3: ProviderStatus Active = 1, Draining = 2, Deregistered = 3; transport WebSocketTls = 1, Https = 2", () => {
    expect(["Active", "Draining", "Deregistered"].map((v) => tagOf(codecs.ProviderStatus, v))).toEqual([1, 2, 3]);
    expect(["WebSocketTls", "Https"].map((v) => tagOf(codecs.ProviderEndpointTransportV1, v))).toEqual([1, 2]);
    expectReject(codecs.ProviderStatus, Uint8Array.of(4), { kind: "InvalidTag" });
    expectReject(codecs.ProviderEndpointV1, bytesOf("03" + be(0, 4)), { kind: "InvalidTag", path: "transport", offset: 0 });
  });

  it("§4.1 (D-0026): StreamPurpose Main = 1, Key = 2; StreamStatus Active..DataExpired = 1..4", () => {
    expect(["Main", "Key"].map((v) => tagOf(codecs.StreamPurpose, v))).toEqual([1, 2]);
    expect(["Active", "Suspended", "Closed", "DataExpired"].map((v) => tagOf(codecs.StreamStatus, v))).toEqual([1, 2, 3, 4]);
    expectReject(codecs.StreamStatus, Uint8Array.of(5), { kind: "InvalidTag" });
    expectReject(codecs.StreamPurpose, Uint8Array.of(0), { kind: "InvalidTag" });
  });

  it("§4.1: PricingBasisV1 ProviderQuote = 1, GovernanceBase = 2", () => {
    expect(hex(encode(codecs.PricingBasisV1, { type: "ProviderQuote", quote_digest: fill(32, 9) }))).toBe("01" + "09".repeat(32));
    expect(hex(encode(codecs.PricingBasisV1, { type: "GovernanceBase", schedule_version: 1n, schedule_digest: fill(32, 9) }))).toBe(
      "02" + be(1, 8) + "09".repeat(32),
    );
    expectReject(codecs.PricingBasisV1, Uint8Array.of(3), { kind: "InvalidTag" });
  });

  it("§14: LaneScope Any = 1, Exact = 2, Set = 3; GroupScope Any = 1, Exact = 2", () => {
    expect(hex(encode(codecs.LaneScopeV1, { type: "Any" }))).toBe("01");
    expect(hex(encode(codecs.LaneScopeV1, { type: "Exact", lane_id: fill(32, 7) }))).toBe("02" + "07".repeat(32));
    expect(hex(encode(codecs.GroupScopeV1, { type: "Any" }))).toBe("01");
    expect(hex(encode(codecs.GroupScopeV1, { type: "Exact", group_id: fill(32, 7) }))).toBe("02" + "07".repeat(32));
    expectReject(codecs.LaneScopeV1, Uint8Array.of(0), { kind: "InvalidTag" });
    expectReject(codecs.GroupScopeV1, Uint8Array.of(3), { kind: "InvalidTag" });
  });

  it("§5/§14: RotationKeyUpdateV1 is 0-based: Keep = 0, Set = 1 || SigningPublicKey, Clear = 2", () => {
    expect(hex(encode(codecs.RotationKeyUpdateV1, { type: "Keep" }))).toBe("00");
    expect(hex(encode(codecs.RotationKeyUpdateV1, { type: "Set", key: S.edKey(5) }))).toBe("0101" + "05".repeat(32));
    expect(hex(encode(codecs.RotationKeyUpdateV1, { type: "Clear" }))).toBe("02");
    expectReject(codecs.RotationKeyUpdateV1, Uint8Array.of(3), { kind: "InvalidTag" });
  });

  it("§4/§9.1: SigningPublicKey is tag 1 || 32 bytes; every other algorithm tag is rejected", () => {
    expect(hex(encode(codecs.SigningPublicKey, S.edKey(0xaa)))).toBe("01" + "aa".repeat(32));
    for (const t of [0, 2, 255]) {
      expectReject(codecs.SigningPublicKey, bytesOf(be(t, 1) + "aa".repeat(32)), { kind: "InvalidTag", offset: 0 });
    }
    // Inside a record the path names the field.
    const rec = encode(codecs.StreamRecordV1, S.streamRecord);
    const adminAt = 1 + 32 + 32 + 1 + 20 + 8;
    rec[adminAt] = 2;
    expectReject(codecs.StreamRecordV1, rec, { kind: "InvalidTag", path: "admin_key", offset: adminAt });
  });

  it("§4/§9.3 (D-0027): HpkePublicKey is suite tag 1 || 32 bytes; Signature is raw 64 bytes", () => {
    expect(hex(encode(codecs.HpkePublicKey, S.hpkeKey(0xcc)))).toBe("01" + "cc".repeat(32));
    expectReject(codecs.HpkePublicKey, bytesOf("02" + "cc".repeat(32)), { kind: "InvalidTag" });
    expect(hex(encode(codecs.KeyBatchReceiptV1, S.receipt)).slice(-128)).toBe("5a".repeat(64));
  });

  it("§5: CbqsInstructionV1 is version byte 1 || action tag 1..9 || the action's fields", () => {
    const names: T.CbqsInstructionV1["type"][] = [
      "RegisterProvider", "UpdateProvider", "SetProviderStatus", "CreateStream", "UpdateStream",
      "TopUpStream", "SettleStreamRent", "CloseStream", "ActivateKeyGeneration",
    ];
    expect(hex(encode(codecs.CbqsInstructionV1, topUp(5n)))).toBe("0106" + "51".repeat(32) + be(5, 16));
    expect(hex(encode(codecs.CbqsInstructionV1, { type: "SettleStreamRent", args: { stream_id: fill(32, 1) } }))).toBe("0107" + "01".repeat(32));
    expect(hex(encode(codecs.CbqsInstructionV1, { type: "SetProviderStatus", args: { status: "Active" } }))).toBe("010301");
    names.forEach((n, i) => {
      const probe = decodeError(codecs.CbqsInstructionV1, Uint8Array.of(1, i + 1));
      expect(probe.kind).toBe("Truncated"); // the tag itself was accepted
      expect(n).toBeTruthy();
    });
    for (const t of [0, 10, 255]) expectReject(codecs.CbqsInstructionV1, Uint8Array.of(1, t), { kind: "InvalidTag", offset: 1 });
  });
});

describe("§17 UnsupportedVersion (3937)", () => {
  const cases: [string, Codec<any>, unknown, number, string][] = [
    ["StreamRecordV1.version", codecs.StreamRecordV1, S.streamRecord, 0, "version"],
    ["ProviderRecordV1.version", codecs.ProviderRecordV1, S.providerRecord, 0, "version"],
    ["BaseRateScheduleV1.format_version", codecs.BaseRateScheduleV1, S.schedule, 0, "format_version"],
    ["BaseRateSchedulesV1.active.format_version", codecs.BaseRateSchedulesV1, { active: S.schedule, pending: null }, 0, "active.format_version"],
    ["context.version", codecs.PriceQuoteV1, S.quote, 0, "context.version"],
    ["ActivateKeyGeneration receipt context", codecs.CbqsInstructionV1, { type: "ActivateKeyGeneration", args: { receipt: S.receipt, bump_authorization_generation: false } }, 2, "args.receipt.context.version"],
    ["CbqsInstructionV1 version", codecs.CbqsInstructionV1, topUp(1n), 0, "version"],
  ];
  it.each(cases)("§17/§14: %s other than 1 decodes to UnsupportedVersion 3937", (_n, codec, value, at, path) => {
    for (const v of [0, 2, 255]) {
      const bytes = encode(codec, value);
      bytes[at] = v;
      expectReject(codec, bytes, { kind: "UnsupportedVersion", path, offset: at });
    }
  });

  it("§4: encoders refuse a version other than 1", () => {
    expect(() => encode(codecs.StreamRecordV1, { ...S.streamRecord, version: 2 })).toThrow(EncodeError);
  });
});

describe("§4 provider_epoch is zero in v1", () => {
  it("§4: a nonzero provider_epoch is a decode error (StreamRecordV1, KeyBatchReceiptV1, SessionProofV1) and unencodable", () => {
    const rec = encode(codecs.StreamRecordV1, S.streamRecord);
    const at = 1 + 32 + 32 + 1 + 20 + 8 + 33 + 1 + 1 + 1 + 1 + 20;
    expect(hex(rec.subarray(at, at + 8))).toBe("00".repeat(8));
    rec[at + 7] = 1;
    expectReject(codecs.StreamRecordV1, rec, { kind: "InvalidValue", path: "provider_epoch", offset: at });

    const r = encode(codecs.KeyBatchReceiptV1, S.receipt);
    const rAt = 41 + 72 + 32 + 32;
    r[rAt] = 0x80;
    expectReject(codecs.KeyBatchReceiptV1, r, { kind: "InvalidValue", path: "provider_epoch", offset: rAt });

    const proof: T.SessionProofV1 = {
      context: S.context, stream_id: fill(32, 1), provider_epoch: 0n, grant_id: fill(32, 2),
      session_id: fill(32, 3), challenge: fill(32, 4), signature: fill(64, 5),
    };
    const p = encode(codecs.SessionProofV1, proof);
    p[41 + 32] = 1;
    expectReject(codecs.SessionProofV1, p, { kind: "InvalidValue", path: "provider_epoch" });
    expect(() => encode(codecs.SessionProofV1, { ...proof, provider_epoch: 1n })).toThrow(EncodeError);
  });
});

describe("§4.3 endpoint decoding", () => {
  const enc = (transport: number, raw: Uint8Array): Uint8Array => bytesOf(be(transport, 1) + be(raw.length, 4) + hex(raw));
  const utf = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s, "utf8"));

  it("§4.3: a URI of exactly 2,048 bytes decodes; 2,049 is BoundExceeded at its length prefix", () => {
    const base = "https://a.example/";
    const ok = utf(base + "x".repeat(2048 - base.length));
    expect(decode(codecs.ProviderEndpointV1, enc(2, ok)).uri).toHaveLength(2048);
    expectReject(codecs.ProviderEndpointV1, enc(2, utf(base + "x".repeat(2049 - base.length))), { kind: "BoundExceeded", path: "uri", offset: 1 });
  });

  it("§4.3/§18: an overlong URI length is rejected before the bytes are read (no allocation)", () => {
    expectReject(codecs.ProviderEndpointV1, bytesOf("02ffffffff"), { kind: "BoundExceeded", path: "uri" });
  });

  it("§4.3: the URI is nonempty and has no ASCII control or whitespace bytes", () => {
    expectReject(codecs.ProviderEndpointV1, enc(2, new Uint8Array()), { kind: "InvalidValue", path: "uri" });
    for (const b of [0x00, 0x09, 0x0a, 0x0d, 0x1f, 0x20, 0x7f]) {
      const raw = utf("https://a.example/x");
      raw[raw.length - 1] = b;
      expectReject(codecs.ProviderEndpointV1, enc(2, raw), { kind: "InvalidValue", path: "uri" });
    }
    expect(() => encode(codecs.ProviderEndpointV1, S.endpoint("https://a.example/ x"))).toThrow(EncodeError);
  });

  it("§4.3: the scheme must match the transport (wss:// for WebSocketTls, https:// for Https)", () => {
    expectReject(codecs.ProviderEndpointV1, enc(1, utf("https://cbqs.example/stream")), { kind: "InvalidValue", path: "uri", offset: 1 });
    expectReject(codecs.ProviderEndpointV1, enc(2, utf("wss://cbqs.example/stream")), { kind: "InvalidValue", path: "uri" });
    expectReject(codecs.ProviderEndpointV1, enc(2, utf("http://cbqs.example")), { kind: "InvalidValue", path: "uri" });
    // ASCII-case-insensitive, as admission rule 2 compares (D-0031).
    expect(decode(codecs.ProviderEndpointV1, enc(2, utf("HTTPS://cbqs.example"))).uri).toBe("HTTPS://cbqs.example");
    expect(decode(codecs.ProviderEndpointV1, enc(1, utf("wss://cbqs.example"))).transport).toBe("WebSocketTls");
  });

  it("§18: at most 8 endpoints (Maximum of cbqs.max_provider_endpoints), counted before allocating", () => {
    const eps = Array.from({ length: 8 }, (_, i) => S.endpoint(`https://p${i}.example`));
    const ok = encode(codecs.RegisterProviderArgsV1, {
      signing_key: S.edKey(1), endpoints: eps, quote_key: S.edKey(2), base_rate_admission: S.admission, metadata_hash: fill(32, 3),
    });
    expect(decode(codecs.RegisterProviderArgsV1, ok).endpoints).toHaveLength(8);
    const over = ok.slice();
    over[33 + 3] = 9; // u32 count at offset 33
    expectReject(codecs.RegisterProviderArgsV1, over, { kind: "BoundExceeded", path: "endpoints", offset: 33 });
    over.set([0xff, 0xff, 0xff, 0xff], 33);
    expectReject(codecs.RegisterProviderArgsV1, over, { kind: "BoundExceeded", path: "endpoints" });
    expect(() =>
      encode(codecs.ProviderRecordV1, { ...S.providerRecord, endpoints: [...eps, S.endpoint("https://x.example")] }),
    ).toThrow(EncodeError);
  });

  it("§4.3: a bad third endpoint is reported with its path args.endpoints[2].uri and byte offset", () => {
    const eps = [S.endpoint("https://a.example"), S.endpoint("https://b.example"), S.endpoint("https://c.example")];
    const bytes = encode(codecs.CbqsInstructionV1, {
      type: "RegisterProvider",
      args: { signing_key: S.edKey(1), endpoints: eps, quote_key: S.edKey(2), base_rate_admission: S.admission, metadata_hash: fill(32, 3) },
    });
    const thirdAt = 2 + 33 + 4 + 2 * (1 + 4 + 17);
    expect(bytes[thirdAt]).toBe(2);
    bytes[thirdAt] = 1; // transport WebSocketTls with an https:// URI
    const err = expectReject(codecs.CbqsInstructionV1, bytes, { kind: "InvalidValue", path: "args.endpoints[2].uri", offset: thirdAt + 1 });
    expect(err.message).toContain("args.endpoints[2].uri");
  });
});

describe("§7 grant bounds", () => {
  it("§7.2/§18: a lane Set holds at most 16,384 ids (Maximum of cbqs.max_lane_ids_per_grant)", () => {
    const ids = Array.from({ length: 16_384 }, (_, i) => {
      const b = new Uint8Array(32);
      b[30] = i >> 8;
      b[31] = i & 0xff;
      return b;
    });
    const ok = encode(codecs.LaneScopeV1, { type: "Set", lane_ids: ids });
    expect(decode(codecs.LaneScopeV1, ok)).toEqual({ type: "Set", lane_ids: ids });
    expectReject(codecs.LaneScopeV1, bytesOf("03" + be(16_385, 4)), { kind: "BoundExceeded", path: "lane_ids", offset: 1 });
  });

  it("§7.2 (D-0031): lane Set ids must be sorted and unique", () => {
    const unsorted = bytesOf("03" + be(2, 4) + "02".repeat(32) + "01".repeat(32));
    expectReject(codecs.LaneScopeV1, unsorted, { kind: "InvalidValue", path: "lane_ids[1]", offset: 37 });
    const dup = bytesOf("03" + be(2, 4) + "01".repeat(32) + "01".repeat(32));
    expectReject(codecs.LaneScopeV1, dup, { kind: "InvalidValue", path: "lane_ids[1]" });
    expect(() => encode(codecs.LaneScopeV1, { type: "Set", lane_ids: [fill(32, 2), fill(32, 1)] })).toThrow(EncodeError);
  });

  it("vector uniqueness (§7.2, D-0031): a lane Set with any id repeated is refused by decode, encode and JSON alike (fast-check)", () => {
    const laneId = fc.uint8Array({ minLength: 32, maxLength: 32 });
    fc.assert(
      fc.property(fc.uniqueArray(laneId, { minLength: 1, maxLength: 6, selector: hex }), fc.nat(), (ids, pick) => {
        const sorted = [...ids].sort((a, b) => Buffer.compare(a, b));
        const at = pick % sorted.length;
        const repeated = [...sorted.slice(0, at + 1), sorted[at]!, ...sorted.slice(at + 1)];
        const wire = bytesOf("03" + be(repeated.length, 4) + repeated.map(hex).join(""));
        expectReject(codecs.LaneScopeV1, wire, { kind: "InvalidValue", path: `lane_ids[${at + 1}]` });
        expect(() => encode(codecs.LaneScopeV1, { type: "Set", lane_ids: repeated })).toThrow(EncodeError);
        expect(() => fromJson(codecs.LaneScopeV1, { Set: repeated.map((id) => "0x" + hex(id)) })).toThrow(JsonValueError);
        // The same ids without the repeat are accepted on every path.
        expect(decode(codecs.LaneScopeV1, encode(codecs.LaneScopeV1, { type: "Set", lane_ids: sorted }))).toEqual({ type: "Set", lane_ids: sorted });
        expect(fromJson(codecs.LaneScopeV1, { Set: sorted.map((id) => "0x" + hex(id)) })).toEqual({ type: "Set", lane_ids: sorted });
      }),
      { numRuns: 50, seed: 9 },
    );
  });

  it("§7: unknown verb bits (above bit 6) are rejected", () => {
    for (const verbs of [0x7f, 0]) expect(decode(codecs.StreamGrantV1, encode(codecs.StreamGrantV1, { ...S.grant, verbs })).verbs).toBe(verbs);
    const bytes = encode(codecs.StreamGrantV1, S.grant);
    const at = 41 + 32 + 8 + 32 + 33 + 34;
    expect(hex(bytes.subarray(at, at + 2))).toBe("0003");
    bytes[at + 1] = 0x80;
    expectReject(codecs.StreamGrantV1, bytes, { kind: "InvalidValue", path: "verbs", offset: at });
  });
});

describe("§9.3 key batches", () => {
  it("§9.3/§18: at most 65,536 envelope digests per batch, counted before allocating", () => {
    const digests = Array.from({ length: 65_536 }, () => fill(32, 7));
    const ok = encode(codecs.KeyRotationBatchV1, { ...S.batch, sorted_envelope_digests: digests });
    expect(decode(codecs.KeyRotationBatchV1, ok).sorted_envelope_digests).toHaveLength(65_536);
    const at = 41 + 32 + 8 + 32;
    const over = encode(codecs.KeyRotationBatchV1, S.batch);
    over.set(bytesOf(be(65_537, 4)), at);
    expectReject(codecs.KeyRotationBatchV1, over, { kind: "BoundExceeded", path: "sorted_envelope_digests", offset: at });
    over.set(bytesOf(be(1000, 4)), at); // within the bound but longer than the input
    expectReject(codecs.KeyRotationBatchV1, over, { kind: "Truncated", path: "sorted_envelope_digests", offset: at });
  });

  it("§9.3 (D-0030): hpke_ciphertext length is within [80, 4,194,304]", () => {
    const env = (n: number): T.KeyEnvelopeV1 => ({
      stream_id: fill(32, 1), encryption_generation: 1n, recipient_hpke_key: S.hpkeKey(2), hpke_ciphertext: fill(n, 3),
    });
    expect(decode(codecs.KeyEnvelopeV1, encode(codecs.KeyEnvelopeV1, env(80))).hpke_ciphertext).toHaveLength(80);
    expect(() => encode(codecs.KeyEnvelopeV1, env(79))).toThrow(EncodeError);
    const prefix = "01".repeat(32) + be(1, 8) + "01" + "02".repeat(32);
    expectReject(codecs.KeyEnvelopeV1, bytesOf(prefix + be(79, 4) + "03".repeat(79)), { kind: "InvalidValue", path: "hpke_ciphertext", offset: 73 });
    expectReject(codecs.KeyEnvelopeV1, bytesOf(prefix + be(4_194_305, 4)), { kind: "BoundExceeded", path: "hpke_ciphertext", offset: 73 });
  });

  const receiptCases: [string, Partial<T.KeyBatchReceiptV1>, string][] = [
    ["envelope_count = 0", { envelope_count: 0, last_sequence: 10n }, "envelope_count"],
    ["envelope_count > 65,536", { envelope_count: 65_537, last_sequence: 10n + 65_537n }, "envelope_count"],
    ["batch_digest all zero", { batch_digest: fill(32, 0) }, "batch_digest"],
    ["envelope_root all zero", { envelope_root: fill(32, 0) }, "envelope_root"],
    ["last_sequence = first + count - 1", { last_sequence: 12n }, "last_sequence"],
    ["last_sequence = first + count + 1", { last_sequence: 14n }, "last_sequence"],
    ["first_sequence + count overflows u64", { first_sequence: (1n << 64n) - 2n, last_sequence: 1n }, "first_sequence"],
  ];
  it.each(receiptCases)("§9.3: a KeyBatchReceiptV1 with %s is a decode error", (_n, patch, field) => {
    const bad = { ...S.receipt, ...patch };
    expect(() => encode(codecs.KeyBatchReceiptV1, bad)).toThrow(EncodeError);
    // Build the bytes by hand-patching a valid encoding, so the decoder alone sees the violation.
    const bytes = encode(codecs.KeyBatchReceiptV1, S.receipt);
    const off = { batch_digest: 41 + 72 + 32 + 32 + 8 + 8, envelope_count: 0, envelope_root: 0, first_sequence: 0, last_sequence: 0 };
    off.envelope_count = off.batch_digest + 32;
    off.envelope_root = off.envelope_count + 4;
    off.first_sequence = off.envelope_root + 32;
    off.last_sequence = off.first_sequence + 8;
    bytes.set(bytesOf(be(bad.envelope_count, 4)), off.envelope_count);
    bytes.set(bad.batch_digest, off.batch_digest);
    bytes.set(bad.envelope_root, off.envelope_root);
    bytes.set(bytesOf(be(bad.first_sequence, 8)), off.first_sequence);
    bytes.set(bytesOf(be(bad.last_sequence, 8)), off.last_sequence);
    expectReject(codecs.KeyBatchReceiptV1, bytes, { kind: "InvalidValue", path: field, offset: off[field as keyof typeof off] });
  });

  it("§9.3: the receipt invariant holds at the edges (count 1 and 65,536; last_sequence = u64 max)", () => {
    for (const [count, first] of [[1, 0n], [65_536, (1n << 64n) - 1n - 65_536n]] as const) {
      const r = { ...S.receipt, envelope_count: count, first_sequence: first, last_sequence: first + BigInt(count) };
      expect(decode(codecs.KeyBatchReceiptV1, encode(codecs.KeyBatchReceiptV1, r))).toEqual(r);
    }
  });
});

describe("decoded values are independent of the input", () => {
  it("§14: decoding a Node Buffer yields plain Uint8Arrays that do not alias the input", () => {
    const buf = Buffer.from(encode(codecs.CloseStreamArgsV1, { stream_id: fill(32, 7) }));
    const v = decode(codecs.CloseStreamArgsV1, buf);
    expect(v.stream_id).toEqual(fill(32, 7));
    expect(Buffer.isBuffer(v.stream_id)).toBe(false);
    buf[0] = 9;
    expect(v.stream_id[0]).toBe(7);
  });
});

// decode and encode run without field paths first and build them only to report a failure
// (src/codec/core.ts `withPaths`): the error must name the same place as a path-building run would.
describe("errors name the offending field's full path", () => {
  const record = S.providerRecord;
  const bytes = encode(codecs.ProviderRecordV1, record);
  // endpoints[1] starts after its vec count and endpoints[0] (transport byte, u32 length, uri).
  const endpointsAt = 1 + 32 + 20 + 33 + 4;
  const secondAt = endpointsAt + 1 + 4 + record.endpoints[0]!.uri.length;

  it("§14: a bad tag inside a vector element of a struct is reported at endpoints[1].transport", () => {
    const bad = bytes.slice();
    expect(bad[secondAt]).toBe(2); // Https
    bad[secondAt] = 9;
    const err = expectReject(codecs.ProviderRecordV1, bad, { kind: "InvalidTag", path: "endpoints[1].transport", offset: secondAt });
    expect(err.message).toContain("endpoints[1].transport");
  });

  it("§4.3: a struct invariant inside a vector element is reported at endpoints[1].uri, encoding and decoding", () => {
    const wrong = { ...record, endpoints: [record.endpoints[0]!, S.endpoint("wss://provider.example")] };
    let encodeErr: unknown;
    try {
      encode(codecs.ProviderRecordV1, wrong);
    } catch (err) {
      encodeErr = err;
    }
    expect(encodeErr).toBeInstanceOf(EncodeError);
    expect((encodeErr as EncodeError).path).toBe("endpoints[1].uri");
    const bad = bytes.slice();
    bad[secondAt] = 1; // WebSocketTls with an https:// uri
    expectReject(codecs.ProviderRecordV1, bad, { kind: "InvalidValue", path: "endpoints[1].uri" });
  });

  it("§14: a failure leaves nothing behind, and a codec read outside decode builds paths throughout", () => {
    const bad = bytes.slice();
    bad[secondAt] = 9;
    decodeError(codecs.ProviderRecordV1, bad);
    expect(decode(codecs.ProviderRecordV1, bytes)).toEqual(record);
    // A codec's read called directly (not through decode) builds its paths from the start.
    expect(() => codecs.ProviderRecordV1.read(new Reader(bad), "")).toThrow(/endpoints\[1\]\.transport/);
  });

  it("§14: an EncodeError inside a decode (a read that writes) names its field; a failure that does not repeat still fails", () => {
    // A field whose read writes an invalid value with a codec's own write (as derive.ts does):
    // decode runs again with paths, so the EncodeError names the field.
    const encodingRead: Codec<number> = {
      ...u8,
      read: (r, path) => (codecs.ProviderEndpointV1.write(new Writer(), S.endpoint("wss://x", "Https"), "endpoint"), u8.read(r, path)),
    };
    let inner: unknown;
    try {
      decode(struct<{ a: number }>("EncodingRead", { a: encodingRead }), Uint8Array.of(1));
    } catch (err) {
      inner = err;
    }
    expect(inner).toBeInstanceOf(EncodeError);
    expect((inner as EncodeError).path).toBe("endpoint.uri");
    // A read that fails only the first time: decode still refuses the input (the first error).
    let calls = 0;
    const flaky: Codec<number> = { ...u8, read: (r, path) => (calls++ === 0 ? r.fail("InvalidValue", path, "first run only") : u8.read(r, path)) };
    const err = decodeError(struct<{ b: number }>("Flaky", { b: flaky }), Uint8Array.of(1));
    expect(err.reason).toBe("first run only");
    expect(calls).toBe(2);
  });
});
