// Canonical store records (the decoder audit in docs/reference/formats/transaction.md): every byte
// string the block and genesis record decoders accept — what the store reads back, and what
// `snapshot import` reads from a snapshot file — re-encodes to exactly itself. The class: a
// text decoder that strips a byte-order mark, and flag bytes read as "anything but 0/1 means 1".
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { BlockRecord, ReceiptRecord } from "../../../state/chain-db/chain-db.js";
import { StoreError } from "../../../state/lmdb/env.js";
import { concatBytes } from "../../../src/bytes.js";
import {
  DamagedRecordError,
  decodeBefore,
  decodeBlock,
  decodeGenesis,
  decodeTxLocation,
  encodeBefore,
  encodeBlock,
  encodeGenesis,
  encodeTxLocation,
} from "../../../state/lmdb/records.js";

const b32 = (n: number) => new Uint8Array(32).fill(n);
const receipt = (over: Partial<ReceiptRecord> = {}): ReceiptRecord => ({
  tx_hash: b32(7),
  status: "ok",
  error: null,
  events: [{ emitter: new Uint8Array(20).fill(0x17), topic: "cbqs.provider.registered", payload: Uint8Array.of(1, 2) }],
  cycles: 471n,
  cells: 812n,
  ...over,
});
const block = (receipts: ReceiptRecord[]): BlockRecord => ({
  height: 3n,
  timestamp: 1767225603n,
  block_hash: b32(1),
  parent_hash: b32(2),
  state_root: b32(3),
  tx_root: b32(4),
  receipt_root: b32(5),
  logs_root: b32(6),
  effective_rent_height: 3n,
  transactions: receipts.map((_, i) => Uint8Array.of(0xa0 + i)),
  receipts,
});

/** Where the status byte of a one-receipt block lies: the only byte an ok and a rejected receipt differ in. */
function statusOffset(): number {
  const ok = encodeBlock(block([receipt()]));
  const rejected = encodeBlock(block([receipt({ status: "rejected" })]));
  const at = ok.findIndex((b, i) => b !== rejected[i]);
  expect([ok[at], rejected[at]]).toEqual([1, 0]);
  return at;
}

describe("store records: one accepted byte string per record", () => {
  it("a topic or error name starting with a byte-order mark keeps it (BOM class)", () => {
    const r = receipt({ status: "rejected", error: { code: 4108, name: "\uFEFFNoOpRejected" }, events: [{ emitter: new Uint8Array(20), topic: "\uFEFFx", payload: new Uint8Array(0) }] });
    const bytes = encodeBlock(block([r]));
    const back = decodeBlock(bytes);
    expect(back.receipts[0]!.events[0]!.topic).toBe("\uFEFFx");
    expect(back.receipts[0]!.error!.name).toBe("\uFEFFNoOpRejected");
    expect(encodeBlock(back)).toEqual(bytes);
  });

  it("a status byte other than 0 or 1 is refused, not read as rejected (flag class)", () => {
    const bytes = encodeBlock(block([receipt()]));
    const at = statusOffset();
    for (const v of [2, 0x80, 0xff]) {
      const bad = bytes.slice();
      bad[at] = v;
      expect(() => decodeBlock(bad), String(v)).toThrow(new DamagedRecordError(`block record: flag byte ${v} is not 0 or 1`));
    }
  });

  it("an error option byte other than 0 or 1 is refused, not read as present (flag class)", () => {
    const bytes = encodeBlock(block([receipt({ status: "rejected", error: { code: 4108, name: "NoOpRejected" } })]));
    const at = statusOffset() + 1;
    expect(bytes[at]).toBe(1);
    const bad = bytes.slice();
    bad[at] = 2;
    expect(() => decodeBlock(bad)).toThrow(/flag byte 2 is not 0 or 1/);
  });

  it("the genesis record reads its block the same way", () => {
    const g = { source: new TextEncoder().encode('{"chain_id":"7"}'), chain_instance_id: b32(9), block: block([receipt()]) };
    const bytes = encodeGenesis(g);
    expect(encodeGenesis(decodeGenesis(bytes))).toEqual(bytes);
    const bad = bytes.slice();
    bad[bytes.length - encodeBlock(g.block).length + statusOffset()] = 2;
    expect(() => decodeGenesis(bad)).toThrow(/genesis record: flag byte 2 is not 0 or 1/);
  });

  it("encode(decode(b)) == b for every mutation of a record the decoder accepts (fast-check)", () => {
    const text = fc.string({ unit: "binary", maxLength: 6 }).map((s) => `\uFEFF${s}`);
    const arbReceipt = fc.record({
      tx_hash: fc.uint8Array({ minLength: 32, maxLength: 32 }),
      status: fc.constantFrom("ok" as const, "rejected" as const),
      error: fc.option(fc.record({ code: fc.integer({ min: 0, max: 0xffff }), name: text })),
      events: fc.array(fc.record({ emitter: fc.uint8Array({ minLength: 20, maxLength: 20 }), topic: text, payload: fc.uint8Array({ maxLength: 4 }) }), { maxLength: 2 }),
      cycles: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
      cells: fc.bigInt({ min: 0n, max: (1n << 64n) - 1n }),
    });
    let accepted = 0;
    fc.assert(
      fc.property(fc.array(arbReceipt, { minLength: 1, maxLength: 3 }), fc.nat(), fc.integer({ min: 0, max: 255 }), (receipts, where, value) => {
        const bytes = encodeBlock(block(receipts));
        expect(encodeBlock(decodeBlock(bytes))).toEqual(bytes);
        const mutated = bytes.slice();
        mutated[where % bytes.length] = value;
        let decoded: BlockRecord;
        try {
          decoded = decodeBlock(mutated);
        } catch (err) {
          expect(err).toBeInstanceOf(StoreError);
          return;
        }
        accepted++;
        expect(encodeBlock(decoded)).toEqual(mutated);
      }),
      { numRuns: 1000 },
    );
    expect(accepted).toBeGreaterThan(50);
  });
});

describe("store records — each refusal names what failed", () => {
  it("a record cut short is truncated; one with bytes after it has trailing bytes", () => {
    const bytes = encodeBlock(block([receipt()]));
    expect(() => decodeBlock(bytes.subarray(0, bytes.length - 1))).toThrow(new DamagedRecordError("block record: truncated"));
    expect(() => decodeBlock(concatBytes(bytes, Uint8Array.of(0, 0, 0)))).toThrow(new DamagedRecordError("block record: 3 trailing bytes"));
    const loc = encodeTxLocation({ height: 9n, index: 4 });
    expect(decodeTxLocation(loc)).toEqual({ height: 9n, index: 4 });
    expect(() => decodeTxLocation(concatBytes(loc, Uint8Array.of(1)))).toThrow(new DamagedRecordError("transaction location: 1 trailing bytes"));
  });

  it("a count larger than the bytes left could hold is refused before anything is allocated", () => {
    // One event (count byte 1 just before its emitter); 127 events of at least 22 bytes cannot follow.
    const bytes = encodeBlock(block([receipt({ events: [{ emitter: new Uint8Array(20).fill(0x5c), topic: "t", payload: new Uint8Array(0) }] })]));
    const at = bytes.findIndex((_, k) => bytes.subarray(k, k + 20).every((b) => b === 0x5c)) - 1;
    expect(bytes[at]).toBe(1);
    const bad = bytes.slice();
    bad[at] = 127;
    expect(() => decodeBlock(bad)).toThrow(new DamagedRecordError("block record: count 127 exceeds remaining input"));
    // The bound is the bytes left after the count, not the record's length: one event more than they could hold is refused
    // by its count; as many as they could hold passes the count check (and fails on their content).
    const left = bytes.length - at - 1;
    bad[at] = Math.floor(left / 22) + 1;
    expect(() => decodeBlock(bad)).toThrow(new DamagedRecordError(`block record: count ${bad[at]} exceeds remaining input`));
    bad[at] = Math.floor(left / 22);
    expect(() => decodeBlock(bad)).not.toThrow(/exceeds remaining input/);
  });

  it("a topic that is not UTF-8 is refused (the decoder is fatal, never substituting U+FFFD)", () => {
    const bytes = encodeBlock(block([receipt({ events: [{ emitter: new Uint8Array(20), topic: "zqzqz", payload: new Uint8Array(0) }] })]));
    const at = bytes.findIndex((b, k) => b === 0x7a && bytes[k + 1] === 0x71 && bytes[k + 2] === 0x7a);
    const bad = bytes.slice();
    bad[at] = 0xff;
    expect(() => decodeBlock(bad)).toThrow(DamagedRecordError);
  });

  it("an encoded block needs a receipt per transaction", () => {
    const b = { ...block([receipt()]), transactions: [] };
    expect(() => encodeBlock(b)).toThrow(new RangeError("block 3: 1 receipts for 0 transactions"));
  });

  it("a reverse-diff value is 0 (absent) or 1 ‖ bytes; anything else is refused", () => {
    expect(decodeBefore(encodeBefore(undefined))).toBeUndefined();
    expect(decodeBefore(encodeBefore(new Uint8Array(0)))).toEqual(new Uint8Array(0));
    expect(decodeBefore(encodeBefore(Uint8Array.of(7, 8)))).toEqual(Uint8Array.of(7, 8));
    for (const bad of [[], [2], [0xff, 1], [0, 5]]) expect(() => decodeBefore(Uint8Array.from(bad)), JSON.stringify(bad)).toThrow("bad reverse-diff value");
  });
});
