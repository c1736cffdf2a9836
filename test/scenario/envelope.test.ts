import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { decode as cborxDecode } from "cbor-x";
import { decodeEnvelope, encodeEnvelope, EnvelopeError, txHash, type TxEnvelope } from "../../src/chain/envelope.js";
import type { GovAction, TxBody } from "../../src/engine/inputs.js";
import { CborReader, CborWriter } from "../../src/chain/cbor.js";
import { keccak256 } from "../../src/crypto/hash.js";
import { bytesEqual, toHex, utf8 } from "../../src/bytes.js";
import { MUTATIONS, nthMutant } from "../../scripts/envelope-mutations.js";
import { Rng } from "../../scripts/rng.js";

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

describe("transaction envelope (docs/reference/formats/transaction.md, CIP-4 §4.3/§5.2)", () => {
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

  it("CBOR unsigned heads: every width reads back what CborWriter wrote (around 2^53 too), and each width's smallest value is its floor", () => {
    const values = [0n, 23n, 24n, 255n, 256n, 65535n, 65536n, 2n ** 32n - 1n, 2n ** 32n, 2n ** 53n - 1n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 64n - 1n];
    for (const v of values) expect(new CborReader(new CborWriter().uint(v).finish()).uint("v")).toBe(v);
    fc.assert(fc.property(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), (v) => new CborReader(new CborWriter().uint(v).finish()).uint("v") === v), { numRuns: 2000 });
    // [info, width, the smallest value this width may carry]: one below it is not in shortest form.
    for (const [info, width, floor] of [[24, 1, 24n], [25, 2, 256n], [26, 4, 65536n], [27, 8, 2n ** 32n]] as const) {
      const head = (v: bigint) => Uint8Array.of(info, ...Array.from({ length: width }, (_, i) => Number((v >> BigInt(8 * (width - 1 - i))) & 0xffn)));
      expect(new CborReader(head(floor)).uint("v")).toBe(floor);
      expect(() => new CborReader(head(floor - 1n)).uint("v")).toThrow(/shortest form/);
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

  it("one accepted byte string: a BOM before a map key is refused (U+FEFF is not stripped from text)", () => {
    const bytes = encodeEnvelope(sample);
    // "version" (67 76 65 72 73 69 6f 6e) → BOM + "version", text head 0x67 → 0x6a (10 bytes)
    const at = Buffer.from(bytes).indexOf(Buffer.from("version"));
    const withBom = Uint8Array.from([...bytes.subarray(0, at - 1), 0x6a, 0xef, 0xbb, 0xbf, ...bytes.subarray(at)]);
    expect(() => decodeEnvelope(withBom)).toThrow(/expected key "version", got "\ufeffversion"/);
    const kindAt = Buffer.from(bytes).indexOf(Buffer.from("system"));
    const bomKind = Uint8Array.from([...bytes.subarray(0, kindAt - 1), 0x69, 0xef, 0xbb, 0xbf, ...bytes.subarray(kindAt)]);
    expect(() => decodeEnvelope(bomKind)).toThrow(/unknown transaction kind/);
  });

  it("one accepted byte string: a BOM inside a value is part of the value (a different transaction, same bytes back)", () => {
    const plain: TxEnvelope = { chain_id: 7n, nonce: 0n, tx: { from: sample.tx.from, body: { kind: "gov", action: { type: "SetParam", name: "x", value: 1n } } } };
    const bom: TxEnvelope = { ...plain, tx: { ...plain.tx, body: { kind: "gov", action: { type: "SetParam", name: "\ufeffx", value: 1n } } } };
    const bytes = encodeEnvelope(bom);
    expect(bytes).toContain(0xef);
    const back = decodeEnvelope(bytes);
    expect(back.tx.body).toEqual(bom.tx.body);
    expect(bytesEqual(encodeEnvelope(back), bytes)).toBe(true);
    expect(bytesEqual(encodeEnvelope(back), encodeEnvelope(plain))).toBe(false);
  });

  it("one accepted byte string: 12,000 mutants of valid envelopes of every kind — every accepted one re-encodes byte-identically", () => {
    // The CI share of scripts/fuzz-envelope.ts (≥ 10⁵ there): BOMs, widened heads, indefinite
    // lengths, duplicate/reordered entries, tags, floats, negatives, overlong UTF-8, flips, truncation.
    const rng = new Rng(0x5eed);
    const seen = new Map<string, number>(MUTATIONS.map((m) => [m, 0]));
    let accepted = 0;
    for (let n = 0, changed = 0; changed < 12_000; n++) {
      const { valid, mutant, mutation } = nthMutant(rng, n);
      if (bytesEqual(valid, mutant)) continue;
      changed++;
      seen.set(mutation, seen.get(mutation)! + 1);
      let decoded: TxEnvelope;
      try {
        decoded = decodeEnvelope(mutant);
      } catch (err) {
        expect(err).toBeInstanceOf(EnvelopeError);
        continue;
      }
      accepted++;
      if (!bytesEqual(encodeEnvelope(decoded), mutant)) throw new Error(`${mutation} mutant accepted in a second form: ${toHex(mutant)}`);
    }
    // Every mutation class ran, and some mutants were valid (value changes, BOMs inside values).
    for (const [m, count] of seen) expect(count, m).toBeGreaterThan(400);
    expect(accepted).toBeGreaterThan(500);
  });

  it("one accepted byte string: overlong UTF-8 and CESU surrogates in a text are refused", () => {
    const bytes = encodeEnvelope(sample);
    const kindAt = Buffer.from(bytes).indexOf(Buffer.from("system"));
    // "system" with its "s" written as the overlong C1 B3
    const overlong = Uint8Array.from([...bytes.subarray(0, kindAt - 1), 0x67, 0xc1, 0xb3, ...bytes.subarray(kindAt + 1)]);
    expect(() => decodeEnvelope(overlong)).toThrow(/invalid UTF-8/);
    const name = (n: Uint8Array) => {
      const w = new CborWriter().map(8).text("version").uint(1).text("chain_id").uint(7).text("from").bytes(sample.tx.from)
        .text("nonce").uint(0).text("kind").text("gov").text("action").text("SetParam").text("name");
      return Uint8Array.from([...w.finish(), 0x60 | n.length, ...n, ...new CborWriter().text("value").uint(1).finish()]);
    };
    expect(decodeEnvelope(name(utf8("ok"))).tx.body).toMatchObject({ action: { name: "ok" } });
    expect(() => decodeEnvelope(name(Uint8Array.of(0xed, 0xa0, 0x80)))).toThrow(/invalid UTF-8/);
  });
});
