import { describe, expect, it } from "vitest";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { decodeEventAt, encodeEvent, encodeReceipt, EncodingError, logsRoot, receiptRoot, txRoot, type Event, type Receipt } from "../../../state/roots.js";
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

describe("block roots (CIP-4 §5.2/§5.3, docs/state.md)", () => {
  it("CIP-4 §5.2: tx_root = keccak BMT over keccak256(tx_i): empty, one, many", () => {
    for (const n of [0, 1, 2, 3, 5, 8, 13]) {
      const txs = Array.from({ length: n }, (_, i) => Uint8Array.of(i, i + 1, 0xee));
      expect(toHex(txRoot(txs))).toBe(toHex(refBmt(txs.map((t) => keccak_256(t)))));
    }
  });

  it("docs/state.md: event encoding is emitter ‖ u32 topic length ‖ topic ‖ u32 payload length ‖ payload", () => {
    const e = ev("cbqs.x", [1, 2]);
    expect(toHex(encodeEvent(e))).toBe(toHex(cat(emitter, be32(6), enc("cbqs.x"), be32(2), Uint8Array.of(1, 2))));
    const [back, next] = decodeEventAt(encodeEvent(e), 0);
    expect(back).toEqual(e);
    expect(next).toBe(20 + 4 + 6 + 4 + 2);
    expect(() => encodeEvent({ ...e, emitter: new Uint8Array(19) })).toThrow(EncodingError);
  });

  it("docs/state.md: logs_root = keccak BMT over keccak256(event) in block order: empty, one, many", () => {
    const events = [ev("a", []), ev("b", [1]), ev("c", [2, 3])];
    for (const n of [0, 1, 3]) {
      const some = events.slice(0, n);
      expect(toHex(logsRoot(some))).toBe(toHex(refBmt(some.map((e) => keccak_256(encodeEvent(e))))));
    }
    expect(toHex(logsRoot([events[1]!, events[0]!]))).not.toBe(toHex(logsRoot([events[0]!, events[1]!])));
  });

  it("CIP-4 §5.3: receipt encoding is status ‖ error u16 ‖ cycles u64 ‖ cells u64 ‖ logs root ‖ u32 count ‖ events", () => {
    const events = [ev("cbqs.stream.created", [9])];
    const r: Receipt = { status: "ok", errorCode: 0, cycles: 0x10n, cells: 0x20n, events };
    const expected = cat(
      Uint8Array.of(1), Uint8Array.of(0, 0),
      Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0x10), Uint8Array.of(0, 0, 0, 0, 0, 0, 0, 0x20),
      refBmt(events.map((e) => keccak_256(encodeEvent(e)))), be32(1), encodeEvent(events[0]!),
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
});
