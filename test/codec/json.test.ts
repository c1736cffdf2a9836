// docs/reference/formats/scenario.md §1 JSON value conventions.
import { describe, expect, it } from "vitest";
import { JsonValueError, codecs, fromJson, streamId, toJson } from "../../src/codec/index.js";
import * as S from "./samples.js";

const { fill } = S;
const hex = (n: number, b: string): string => "0x" + b.repeat(n);

function jsonError(f: () => unknown): JsonValueError {
  try {
    f();
  } catch (err) {
    if (err instanceof JsonValueError) return err;
    throw err;
  }
  throw new Error("expected a JsonValueError");
}

describe("scenario-format §1 JSON mapping", () => {
  it("§1: integers are decimal strings on output; input accepts strings or safe-integer numbers", () => {
    const j = toJson(codecs.TopUpStreamArgsV1, { stream_id: fill(32, 1), amount: (1n << 127n) + 1n }) as Record<string, unknown>;
    expect(j.amount).toBe(((1n << 127n) + 1n).toString());
    expect(toJson(codecs.SetProviderStatusArgsV1, { status: "Active" })).toEqual({ status: "Active" });
    expect(toJson(codecs.CbqsSigningContextV1, S.context)).toEqual({ version: "1", chain_id: "7", chain_instance_id: hex(32, "c1") });
    expect(fromJson(codecs.TopUpStreamArgsV1, { stream_id: hex(32, "01"), amount: 5 }).amount).toBe(5n);
    expect(fromJson(codecs.TopUpStreamArgsV1, { stream_id: hex(32, "01"), amount: "340282366920938463463374607431768211455" }).amount).toBe((1n << 128n) - 1n);
    for (const bad of [2 ** 53, -1, 1.5, "0x10", "-1", "1e3", "340282366920938463463374607431768211456"]) {
      const err = jsonError(() => fromJson(codecs.TopUpStreamArgsV1, { stream_id: hex(32, "01"), amount: bad }));
      expect(err.path).toBe("$.amount");
    }
  });

  it("§1: an unknown field is refused with the struct's fields listed (a typo in an argument name)", () => {
    const err = jsonError(() => fromJson(codecs.TopUpStreamArgsV1, { stream_id: hex(32, "01"), amout: "5" }));
    expect(err.path).toBe("$.amout");
    expect(err.reason).toBe("unknown field of TopUpStreamArgsV1 (expected one of: stream_id, amount)");
  });

  it("§1: byte strings are 0x-hex of exact length; input accepts either case, output is lowercase", () => {
    const v = fromJson(codecs.CloseStreamArgsV1, { stream_id: "0x" + "AB".repeat(32) });
    expect(v.stream_id).toEqual(fill(32, 0xab));
    expect(toJson(codecs.CloseStreamArgsV1, v)).toEqual({ stream_id: hex(32, "ab") });
    expect(jsonError(() => fromJson(codecs.CloseStreamArgsV1, { stream_id: hex(31, "ab") })).path).toBe("$.stream_id");
    expect(jsonError(() => fromJson(codecs.CloseStreamArgsV1, { stream_id: "0xabc" })).path).toBe("$.stream_id");
  });

  it("§1: Option is null or an absent field", () => {
    const absent = fromJson(codecs.UpdateProviderArgsV1, { metadata_hash: hex(32, "ee") });
    expect(absent).toEqual({ endpoints: null, signing_key: null, quote_key: null, base_rate_admission: null, metadata_hash: fill(32, 0xee) });
    expect(toJson(codecs.UpdateProviderArgsV1, absent)).toEqual({
      endpoints: null, signing_key: null, quote_key: null, base_rate_admission: null, metadata_hash: hex(32, "ee"),
    });
    expect(fromJson(codecs.UpdateProviderArgsV1, { endpoints: null, metadata_hash: hex(32, "ee") })).toEqual(absent);
  });

  it("§1: struct fields are the spec's snake_case names; unknown and missing fields are errors naming the path", () => {
    expect(jsonError(() => fromJson(codecs.CloseStreamArgsV1, { stream_id: hex(32, "01"), extra: 1 })).path).toBe("$.extra");
    expect(jsonError(() => fromJson(codecs.CbqsInstructionV1, { TopUpStream: { stream_id: hex(32, "01") } })).path).toBe("$.TopUpStream.amount");
  });

  it("§1: enums by variant name; PricingBasisV1, RotationKeyUpdateV1, LaneScope/GroupScope, CbqsInstructionV1 shapes", () => {
    expect(toJson(codecs.PricingBasisV1, { type: "ProviderQuote", quote_digest: fill(32, 1) })).toEqual({ ProviderQuote: { quote_digest: hex(32, "01") } });
    expect(fromJson(codecs.PricingBasisV1, { GovernanceBase: { schedule_version: "1", schedule_digest: hex(32, "02") } })).toEqual({
      type: "GovernanceBase", schedule_version: 1n, schedule_digest: fill(32, 2),
    });
    expect(toJson(codecs.RotationKeyUpdateV1, { type: "Keep" })).toBe("Keep");
    expect(toJson(codecs.RotationKeyUpdateV1, { type: "Set", key: S.edKey(3) })).toEqual({ Set: { ed25519: hex(32, "03") } });
    expect(fromJson(codecs.RotationKeyUpdateV1, "Clear")).toEqual({ type: "Clear" });
    expect(toJson(codecs.LaneScopeV1, { type: "Exact", lane_id: fill(32, 4) })).toEqual({ Exact: hex(32, "04") });
    expect(toJson(codecs.LaneScopeV1, { type: "Set", lane_ids: [fill(32, 4)] })).toEqual({ Set: [hex(32, "04")] });
    expect(toJson(codecs.GroupScopeV1, { type: "Any" })).toBe("Any");
    expect(toJson(codecs.CbqsInstructionV1, { type: "SetProviderStatus", args: { status: "Draining" } })).toEqual({
      SetProviderStatus: { status: "Draining" },
    });
    expect(jsonError(() => fromJson(codecs.StreamStatus, "Paused")).path).toBe("$");
    expect(jsonError(() => fromJson(codecs.RotationKeyUpdateV1, "Set")).path).toBe("$");
    expect(jsonError(() => fromJson(codecs.CbqsInstructionV1, { Bogus: {} })).path).toBe("$");
  });

  it("§1/§9.1: SigningPublicKey {\"ed25519\"}; input {\"ed25519_seed\"} is the RFC 8032 public key of the seed", () => {
    // RFC 8032 §7.1 TEST 1.
    const seed = "0x9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60";
    const pub = "0xd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a";
    const key = fromJson(codecs.SigningPublicKey, { ed25519_seed: seed });
    expect(toJson(codecs.SigningPublicKey, key)).toEqual({ ed25519: pub });
    expect(fromJson(codecs.SigningPublicKey, { ed25519: pub })).toEqual(key);
    expect(jsonError(() => fromJson(codecs.SigningPublicKey, { secp256k1: pub })).path).toBe("$");
    expect(jsonError(() => fromJson(codecs.SigningPublicKey, { ed25519_seed: "0x01" })).path).toBe("$.ed25519_seed");
  });

  it("D-0027: HpkePublicKey is {\"x25519\": \"0x…\"}", () => {
    expect(toJson(codecs.HpkePublicKey, S.hpkeKey(7))).toEqual({ x25519: hex(32, "07") });
  });

  it("§1: the resolveBytes32 hook lets the caller accept stream references for Bytes32 fields", () => {
    const ctx = {
      resolveBytes32: (v: unknown): Uint8Array | undefined => {
        if (typeof v === "object" && v !== null && "owner" in v && "owner_nonce" in v) {
          const r = v as { owner: string; owner_nonce: string };
          return streamId(7n, fill(32, 0xc1), Buffer.from(r.owner.slice(2), "hex"), BigInt(r.owner_nonce));
        }
        return undefined;
      },
    };
    const ref = { owner: hex(20, "11"), owner_nonce: "3" };
    const v = fromJson(codecs.CbqsInstructionV1, { CloseStream: { stream_id: ref } }, ctx);
    expect(v).toEqual({ type: "CloseStream", args: { stream_id: streamId(7n, fill(32, 0xc1), fill(20, 0x11), 3n) } });
    expect(jsonError(() => fromJson(codecs.CbqsInstructionV1, { CloseStream: { stream_id: { nope: 1 } } }, ctx)).path).toBe("$.CloseStream.stream_id");
    expect(jsonError(() => fromJson(codecs.CbqsInstructionV1, { CloseStream: { stream_id: ref } })).path).toBe("$.CloseStream.stream_id");
  });

  it("§4.3/§1: JSON input enforces the same endpoint and receipt rules as the decoder", () => {
    const err = jsonError(() =>
      fromJson(codecs.RegisterProviderArgsV1, {
        signing_key: { ed25519: hex(32, "01") },
        endpoints: [{ transport: "Https", uri: "https://a.example" }, { transport: "WebSocketTls", uri: "https://b.example" }],
        quote_key: { ed25519: hex(32, "02") },
        base_rate_admission: { accepts_new: true, max_active_streams: "1", max_total_retained_bytes: "1", max_total_append_bytes_per_sec: "1", max_total_delivered_bytes_per_sec: "1" },
        metadata_hash: hex(32, "00"),
      }),
    );
    expect(err.path).toBe("$.endpoints[1].uri");
    const r = toJson(codecs.KeyBatchReceiptV1, S.receipt) as Record<string, unknown>;
    expect(jsonError(() => fromJson(codecs.KeyBatchReceiptV1, { ...r, last_sequence: "99" })).path).toBe("$.last_sequence");
  });
});
