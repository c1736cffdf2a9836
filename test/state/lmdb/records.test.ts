// Canonical store records (issue 9 §1, the decoder audit in docs/transactions.md): every byte
// string the block and genesis record decoders accept — what the store reads back, and what
// `snapshot import` reads from a snapshot file — re-encodes to exactly itself. The class: a
// text decoder that strips a byte-order mark, and flag bytes read as "anything but 0/1 means 1".
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { BlockRecord, ReceiptRecord } from "../../../state/chain-db/chain-db.js";
import { StoreError } from "../../../state/lmdb/env.js";
import { DamagedRecordError, decodeBlock, decodeGenesis, encodeBlock, encodeGenesis } from "../../../state/lmdb/records.js";

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
