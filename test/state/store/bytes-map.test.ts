// The byte-keyed hash tables behind the store's batches and the QMDB key index
// (state/kv/bytes-map.ts) against a plain Map on random operation sequences, growth and
// deletion shifts included.
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { toHex } from "../../../src/bytes.js";
import { BytesMap, KeyedIntTable } from "../../../state/kv/bytes-map.js";

// Few distinct short keys force collisions, long probe runs and deletion shifts.
const keyArb = fc.uint8Array({ minLength: 0, maxLength: 3 }).map((k) => k.map((b) => b & 0x0f));
const opArb = fc.oneof(
  fc.record({ op: fc.constant("set" as const), key: keyArb, value: fc.nat(1000) }),
  fc.record({ op: fc.constant("delete" as const), key: keyArb }),
);

describe("byte-keyed hash tables (state/kv/bytes-map.ts)", () => {
  it("BytesMap behaves as a Map keyed by the bytes", () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 400 }), (ops) => {
        const map = new BytesMap<number>(2);
        const model = new Map<string, number>();
        for (const o of ops) {
          if (o.op === "set") {
            map.set(o.key.slice(), o.value);
            model.set(toHex(o.key), o.value);
          } else expect(map.delete(o.key)).toBe(model.delete(toHex(o.key)));
          expect(map.size).toBe(model.size);
          expect(map.get(o.key)).toBe(model.get(toHex(o.key)));
        }
        const entries = [...map.entries()].map(([k, v]) => [toHex(k), v] as const).sort();
        expect(entries).toEqual([...model.entries()].sort());
      }),
      { numRuns: 200 },
    );
  });

  it("KeyedIntTable maps keys to integers, confirming candidates through the callback", () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 400 }), (ops) => {
        // The table stores only integers: here n stands for the key with hex `owners[n]`.
        const owners: string[] = [];
        const table = new KeyedIntTable((n, key) => owners[n] === toHex(key));
        const model = new Map<string, number>();
        for (const o of ops) {
          const hex = toHex(o.key);
          if (o.op === "set") {
            owners.push(hex);
            table.set(o.key, owners.length - 1);
            model.set(hex, owners.length - 1);
          } else {
            expect(table.delete(o.key)).toBe(model.delete(hex));
          }
          expect(table.size).toBe(model.size);
          expect(table.get(o.key)).toBe(model.get(hex));
        }
        expect([...table.values()].sort((a, b) => a - b)).toEqual([...model.values()].sort((a, b) => a - b));
      }),
      { numRuns: 200 },
    );
  });
});
