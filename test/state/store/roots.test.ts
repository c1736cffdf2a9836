import { describe, expect, it } from "vitest";
import { keccak_256 } from "@noble/hashes/sha3.js";
import fc from "fast-check";
import { blockRoots, encodeReceipt, logsRoot, receiptRoot, txRoot, type Receipt } from "../../../state/roots/roots.js";
import { decodeEventAt, encodeEvent, EncodingError, meteredEventBytes, type Event } from "../../../state/kv/event.js";
import { toHex } from "../../../src/bytes.js";

// Independent reference for the keccak BMT of CIP-4 §5.2/§5.3 (commonware shape, keccak nodes).
const cat = (...p: Uint8Array[]) => Uint8Array.from(p.flatMap((x) => [...x]));
const be32 = (n: number) => Uint8Array.of(n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
const k = (...p: Uint8Array[]) => keccak_256(cat(...p));
function refBmt(leaves: Uint8Array[]): Uint8Array {
  let level: Uint8Array[] = leaves.length === 0 ? [k()] : leaves.map((l, i) => k(be32(i), l));
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(k(level[i]!, level[i + 1] ?? level[i]!));
    level = next;
  }
  return k(be32(leaves.length), level[0]!);
}

const emitter = new Uint8Array(20).fill(0x17);
const ev = (topic: string, payload: number[]): Event => ({ emitter, topic, payload: Uint8Array.from(payload) });
const enc = (s: string) => new TextEncoder().encode(s);

describe("block roots (CIP-4 §5.2/§5.3, docs/spec/state.md)", () => {
  it("CIP-4 §5.2: tx_root = keccak BMT over keccak256(tx_i): empty, one, many", () => {
    for (const n of [0, 1, 2, 3, 5, 8, 13]) {
      const txs = Array.from({ length: n }, (_, i) => Uint8Array.of(i, i + 1, 0xee));
      expect(toHex(txRoot(txs))).toBe(toHex(refBmt(txs.map((t) => keccak_256(t)))));
    }
  });

  it("CIP-4 §5.3 commonware-codec: event = emitter ‖ varint topic length ‖ topic ‖ varint payload length ‖ payload", () => {
    const e = ev("cbqs.x", [1, 2]);
    expect(toHex(encodeEvent(e))).toBe(toHex(cat(emitter, Uint8Array.of(6), enc("cbqs.x"), Uint8Array.of(2), Uint8Array.of(1, 2))));
    const [back, next] = decodeEventAt(encodeEvent(e), 0);
    expect(back).toEqual(e);
    expect(next).toBe(20 + 1 + 6 + 1 + 2);
    expect(() => encodeEvent({ ...e, emitter: new Uint8Array(19) })).toThrow(EncodingError);
    // A 300-byte payload: varint 300 = 0xac 0x02 (7 bits per byte, low group first).
    const long = ev("t", Array.from({ length: 300 }, (_, i) => i & 0xff));
    expect(toHex(encodeEvent(long).subarray(20, 22))).toBe("0x0174");
    expect(toHex(encodeEvent(long).subarray(22, 24))).toBe("0xac02");
    expect(decodeEventAt(encodeEvent(long), 0)[0]).toEqual(long);
  });

  it("CIP-4 §5.3 commonware-codec: event decoding refuses every non-canonical length", () => {
    const body = cat(emitter, Uint8Array.of(1), enc("t"), Uint8Array.of(0));
    expect(decodeEventAt(body, 0)[1]).toBe(body.length);
    // topic length 1 written overlong as 0x81 0x00: one value, one encoding only.
    expect(() => decodeEventAt(cat(emitter, Uint8Array.of(0x81, 0x00), enc("t"), Uint8Array.of(0)), 0)).toThrow(/overlong/);
    // a length beyond u32 (fifth byte above 0x0f), and a length past the end of the input
    expect(() => decodeEventAt(cat(emitter, Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0x1f)), 0)).toThrow(/exceeds u32/);
    expect(() => decodeEventAt(cat(emitter, Uint8Array.of(5), enc("t")), 0)).toThrow(/exceeds remaining input/);
    expect(() => decodeEventAt(cat(emitter, Uint8Array.of(0x80)), 0)).toThrow(/truncated/);
  });

  it("gas schedule: the metered event size is 28 + topic + payload bytes, independent of the wire encoding", () => {
    expect(meteredEventBytes(ev("cbqs.x", [1, 2]))).toBe(20 + 4 + 6 + 4 + 2);
    const long = ev("t", Array.from({ length: 300 }, () => 7));
    expect(meteredEventBytes(long)).toBe(28 + 1 + 300);
    expect(encodeEvent(long).length).toBe(20 + 1 + 1 + 2 + 300);
  });

  it("docs/spec/state.md: logs_root = keccak BMT over keccak256(event) in block order: empty, one, many", () => {
    const events = [ev("a", []), ev("b", [1]), ev("c", [2, 3])];
    for (const n of [0, 1, 3]) {
      const some = events.slice(0, n);
      expect(toHex(logsRoot(some))).toBe(toHex(refBmt(some.map((e) => keccak_256(encodeEvent(e))))));
    }
    expect(toHex(logsRoot([events[1]!, events[0]!]))).not.toBe(toHex(logsRoot([events[0]!, events[1]!])));
  });

  it("CIP-4 §5.3 commonware-codec: receipt = status ‖ error u16 BE ‖ cycles u64 BE ‖ cells u64 BE ‖ logs root ‖ varint count ‖ events", () => {
    const events = [ev("cbqs.stream.created", [9])];
    const r: Receipt = { status: "ok", errorCode: 0, cycles: 0x10n, cells: 0x20n, events };
    const expected = cat(
      Uint8Array.of(1), Uint8Array.of(0, 0),
      Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0x10), Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0x20),
      refBmt(events.map((e) => keccak_256(encodeEvent(e)))), Uint8Array.of(1), encodeEvent(events[0]!),
    );
    expect(toHex(encodeReceipt(r))).toBe(toHex(expected));
    const rej: Receipt = { status: "rejected", errorCode: 3900, cycles: 5n, cells: 0n, events: [] };
    expect(toHex(encodeReceipt(rej).subarray(0, 3))).toBe("0x000f3c");
    expect(() => encodeReceipt({ ...r, errorCode: 1 })).toThrow(EncodingError);
    expect(() => encodeReceipt({ ...rej, errorCode: 0 })).toThrow(EncodingError);
    expect(() => encodeReceipt({ ...r, cycles: 2n ** 64n })).toThrow();
  });

  it("CIP-4 §5.3: receipt_root of no receipts is keccak256(\"empty_receipts\"); otherwise the keccak BMT", () => {
    expect(toHex(receiptRoot([]))).toBe(toHex(keccak_256(enc("empty_receipts"))));
    const rs: Receipt[] = [
      { status: "ok", errorCode: 0, cycles: 1n, cells: 2n, events: [ev("t", [1])] },
      { status: "rejected", errorCode: 3901, cycles: 3n, cells: 0n, events: [] },
      { status: "ok", errorCode: 0, cycles: 4n, cells: 5n, events: [] },
    ];
    for (const n of [1, 2, 3]) {
      const some = rs.slice(0, n);
      expect(toHex(receiptRoot(some))).toBe(toHex(refBmt(some.map((r) => keccak_256(encodeReceipt(r))))));
    }
  });

  it("CIP-4 §5.2/§5.3: blockRoots (each leaf hashed once, in-place BMT) equals the three roots computed separately", () => {
    const eventArb = fc.record({ topic: fc.string({ maxLength: 12 }), payload: fc.uint8Array({ maxLength: 140 }) }).map(({ topic, payload }) => ev(topic, [...payload]));
    const receiptArb = fc.oneof(
      fc.record({ cycles: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), cells: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), events: fc.array(eventArb, { maxLength: 4 }) }).map(
        (r): Receipt => ({ status: "ok", errorCode: 0, ...r }),
      ),
      fc.record({ errorCode: fc.integer({ min: 1, max: 0xffff }), cycles: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }) }).map(
        (r): Receipt => ({ status: "rejected", cells: 0n, events: [], ...r }),
      ),
    );
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.uint8Array({ maxLength: 90 }), receiptArb), { maxLength: 19 }), (block) => {
        const txs = block.map(([tx]) => tx);
        const receipts = block.map(([, r]) => r);
        const roots = blockRoots(txs.map((t) => keccak_256(t)), receipts);
        expect(toHex(roots.tx_root)).toBe(toHex(refBmt(txs.map((t) => keccak_256(t)))));
        expect(toHex(roots.tx_root)).toBe(toHex(txRoot(txs)));
        expect(toHex(roots.receipt_root)).toBe(toHex(receipts.length === 0 ? keccak_256(enc("empty_receipts")) : refBmt(receipts.map((r) => keccak_256(encodeReceipt(r))))));
        expect(toHex(roots.logs_root)).toBe(toHex(refBmt(receipts.flatMap((r) => r.events).map((e) => keccak_256(encodeEvent(e))))));
      }),
      { numRuns: 150 },
    );
  });

  it("CIP-4 §5.3: blockRoots writes multi-byte varint lengths in place (a 20,000-byte payload, 130 events)", () => {
    const big = ev("big", new Array(20_000).fill(7));
    const many = Array.from({ length: 130 }, (_, i) => ev(`t${i}`, [i]));
    const receipts: Receipt[] = [
      { status: "ok", errorCode: 0, cycles: 5n, cells: 6n, events: [big] },
      { status: "ok", errorCode: 0, cycles: 1n, cells: 2n, events: many },
    ];
    const txs = [Uint8Array.of(1), Uint8Array.of(2)];
    const roots = blockRoots(txs.map((t) => keccak_256(t)), receipts);
    expect(toHex(roots.receipt_root)).toBe(toHex(refBmt(receipts.map((r) => keccak_256(encodeReceipt(r))))));
    expect(toHex(roots.logs_root)).toBe(toHex(refBmt([big, ...many].map((e) => keccak_256(encodeEvent(e))))));
    // emitter ‖ varint(3) "big" ‖ varint(20,000) = 0xa0 0x9c 0x01 ‖ payload
    expect(toHex(encodeEvent(big).subarray(20, 27))).toBe("0x03626967a09c01");
  });

  it("CIP-4 §5.3: events at every varint width boundary (lengths 127, 128, 16,383, 16,384) encode as emitter ‖ Vec topic ‖ Vec payload, alone and inside a receipt", () => {
    // An independent reference: LEB128 by hand, the parts concatenated.
    const leb = (n: number): number[] => {
      const out: number[] = [];
      for (; n >= 0x80; n = Math.floor(n / 0x80)) out.push((n % 0x80) | 0x80);
      return [...out, n];
    };
    const refEvent = (e: Event): Uint8Array => cat(e.emitter, Uint8Array.from(leb(enc(e.topic).length)), enc(e.topic), Uint8Array.from(leb(e.payload.length)), e.payload);
    const be = (v: bigint, width: number) => Uint8Array.from({ length: width }, (_, i) => Number((v >> BigInt(8 * (width - 1 - i))) & 0xffn));
    for (const topicLength of [0, 127, 128, 16_383, 16_384]) {
      for (const payloadLength of [0, 127, 128, 16_383, 16_384]) {
        const e = ev("t".repeat(topicLength), new Array(payloadLength).fill(topicLength & 0xff));
        expect(toHex(encodeEvent(e))).toBe(toHex(refEvent(e)));
        const r: Receipt = { status: "ok", errorCode: 0, cycles: 3n, cells: 4n, events: [e, e] };
        const own = refBmt([e, e].map((x) => keccak_256(refEvent(x))));
        const want = cat(Uint8Array.of(1, 0, 0), be(3n, 8), be(4n, 8), own, Uint8Array.of(2), refEvent(e), refEvent(e));
        expect(toHex(encodeReceipt(r))).toBe(toHex(want));
        expect(toHex(blockRoots([keccak_256(Uint8Array.of(1))], [r]).receipt_root)).toBe(toHex(refBmt([keccak_256(want)])));
      }
    }
  });

  it("CIP-4 §5.3: an invalid receipt or event is refused before anything is written, its events' faults first", () => {
    const badEmitter: Event = { emitter: new Uint8Array(19), topic: "x", payload: new Uint8Array(0) };
    const okWithCode: Receipt = { status: "ok", errorCode: 7, cycles: 0n, cells: 0n, events: [badEmitter] };
    for (const run of [() => encodeReceipt(okWithCode), () => blockRoots([new Uint8Array(31)], [okWithCode])]) {
      expect(run).toThrow(/event emitter must be 20 bytes, got 19/);
    }
    const okWithCodeOnly: Receipt = { ...okWithCode, events: [] };
    expect(() => blockRoots([new Uint8Array(31)], [okWithCodeOnly])).toThrow(/ok receipt with an error code/);
    expect(() => blockRoots([new Uint8Array(31)], [])).toThrow(/tx hash of 31 bytes/);
  });
});
