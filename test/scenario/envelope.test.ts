import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { decode as cborxDecode } from "cbor-x";
import { decodeEnvelope, encodeEnvelope, EnvelopeError, txHash, type TxEnvelope } from "../../src/chain/envelope.js";
import type { GovAction, TxBody } from "../../src/chain/types.js";
import { CborWriter } from "../../src/chain/cbor.js";
import { keccak256 } from "../../src/crypto/hash.js";
import { toHex } from "../../src/bytes.js";

const addr = fc.uint8Array({ minLength: 20, maxLength: 20 });
const u64 = fc.bigInt({ min: 0n, max: (1n << 64n) - 1n });
const name = fc.string({ maxLength: 40 });
const gov: fc.Arbitrary<GovAction> = fc.oneof(
  fc.record({ type: fc.constant("SetParam" as const), name, value: u64 }),
  fc.record({
    type: fc.constant("SetParams" as const),
    values: fc.array(fc.record({ name, value: u64 }), { maxLength: 5 }),
  }),
  fc.record({ type: fc.constant("Pause" as const), actor: addr, blocks: u64 }),
  fc.record({ type: fc.constant("ExtendPause" as const), actor: addr, blocks: u64 }),
  fc.record({ type: fc.constant("Unpause" as const), actor: addr }),
);
const body: fc.Arbitrary<TxBody> = fc.oneof(
  fc.record({ kind: fc.constant("system" as const), opcode: fc.integer({ min: 0, max: 255 }), payload: fc.uint8Array({ maxLength: 300 }) }),
  fc.record({ kind: fc.constant("gov" as const), action: gov }),
  fc.record({ kind: fc.constant("transfer" as const), to: addr, amount: u64 }),
);
const envelope: fc.Arbitrary<TxEnvelope> = fc.record({
  chain_id: u64,
  nonce: u64,
  tx: fc.record({ from: addr, body }),
});

const sample: TxEnvelope = {
  chain_id: 7n,
  nonce: 3n,
  tx: { from: new Uint8Array(20).fill(0x11), body: { kind: "system", opcode: 218, payload: Uint8Array.of(1, 6) } },
};

describe("transaction envelope (docs/transactions.md, CIP-4 §4.3/§5.2)", () => {
  it("CIP-4 §5.2: decode(encode(e)) = e and re-encoding is byte-identical", () => {
    fc.assert(
      fc.property(envelope, (e) => {
        const bytes = encodeEnvelope(e);
        const back = decodeEnvelope(bytes);
        expect(back).toEqual(e);
        expect(encodeEnvelope(back)).toEqual(bytes);
      }),
      { numRuns: 300 },
    );
  });

  it("CIP-4 §4.3: the envelope is plain CBOR a generic decoder (cbor-x) reads field for field", () => {
    const obj = cborxDecode(encodeEnvelope(sample)) as Record<string, unknown>;
    expect(Object.keys(obj)).toEqual(["version", "chain_id", "from", "nonce", "kind", "opcode", "payload"]);
    expect(obj.version).toBe(1);
    expect(obj.chain_id).toBe(7);
    expect(obj.opcode).toBe(218);
    expect(Uint8Array.from(obj.payload as Uint8Array)).toEqual(Uint8Array.of(1, 6));
  });

  it("CIP-4 §5.2: tx_hash is keccak256 of the envelope bytes", () => {
    const bytes = encodeEnvelope(sample);
    expect(toHex(txHash(bytes))).toBe(toHex(keccak256(bytes)));
  });

  it("strict decode: every proper prefix is rejected with a typed error", () => {
    const bytes = encodeEnvelope(sample);
    for (let n = 0; n < bytes.length; n++) {
      expect(() => decodeEnvelope(bytes.subarray(0, n))).toThrow(EnvelopeError);
    }
  });

  it("strict decode: trailing bytes, non-shortest integers, indefinite lengths and reordered keys are rejected", () => {
    const bytes = encodeEnvelope(sample);
    expect(() => decodeEnvelope(Uint8Array.from([...bytes, 0]))).toThrow(/trailing/);
    // chain_id 7 written as a one-byte-argument head (0x18 0x07) instead of 0x07
    const hex = Buffer.from(bytes).toString("hex");
    const chainIdKey = Buffer.from("chain_id").toString("hex");
    const nonShortest = hex.replace(chainIdKey + "07", chainIdKey + "1807");
    expect(() => decodeEnvelope(Uint8Array.from(Buffer.from(nonShortest, "hex")))).toThrow(/shortest/);
    // indefinite-length map
    expect(() => decodeEnvelope(Uint8Array.from([0xbf, ...bytes.subarray(1)]))).toThrow(/indefinite/);
    // the same fields with "chain_id" before "version"
    const reordered = new CborWriter().map(7).text("chain_id").uint(7).text("version").uint(1)
      .text("from").bytes(sample.tx.from).text("nonce").uint(3).text("kind").text("system")
      .text("opcode").uint(218).text("payload").bytes(Uint8Array.of(1, 6)).finish();
    expect(() => decodeEnvelope(reordered)).toThrow(/expected key "version"/);
  });

  it("strict decode: unknown version, kind and governance action are rejected", () => {
    const v2 = encodeEnvelope(sample);
    const idx = Buffer.from(v2).indexOf(Buffer.from("version")) + 7;
    const bad = Uint8Array.from(v2);
    bad[idx] = 0x02;
    expect(() => decodeEnvelope(bad)).toThrow(/unsupported envelope version 2/);
    const hex = Buffer.from(v2).toString("hex").replace(Buffer.from("system").toString("hex"), Buffer.from("sysxem").toString("hex"));
    expect(() => decodeEnvelope(Uint8Array.from(Buffer.from(hex, "hex")))).toThrow(/unknown transaction kind/);
  });

  it("bounded decode: an oversized length is refused before allocation", () => {
    // map(7) … "payload" key then a byte string claiming 2^32 bytes
    const bytes = encodeEnvelope({ ...sample, tx: { ...sample.tx, body: { kind: "system", opcode: 218, payload: new Uint8Array(0) } } });
    const claim = Uint8Array.from([...bytes.subarray(0, bytes.length - 1), 0x5b, 0, 0, 0, 1, 0, 0, 0, 0]);
    expect(() => decodeEnvelope(claim)).toThrow(/exceed/);
  });
});
