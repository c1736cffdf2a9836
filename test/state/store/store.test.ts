import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { MemoryStateStore, StateStoreError } from "../../../state/store/store.js";
import { accountKey, actorStorageKey, StateKeyError } from "../../../state/kv/keys.js";
import type { StateAccess } from "../../../state/kv/interface.js";
import { toHex } from "../../../src/bytes.js";
import { RecordingCommitment } from "./recording-commitment.js";

const A = new Uint8Array(20).fill(0xaa);
const k = (i: number) => actorStorageKey(A, Uint8Array.of(i));
const v = (i: number) => Uint8Array.of(0x04, i);
const hex = (b: Uint8Array | undefined) => (b === undefined ? undefined : toHex(b));

function fresh() {
  const commitment = new RecordingCommitment();
  return { commitment, store: new MemoryStateStore(commitment) };
}

describe("block batch (CIP-4 §6.1 begin_batch → execute → commit_batch)", () => {
  it("CIP-4 §6.1: reads see the batch's own writes; the committed state is untouched until commit", () => {
    const { store } = fresh();
    const b = store.beginBlock(1n);
    expect(b.get(k(1))).toBeUndefined();
    b.put(k(1), v(1));
    expect(hex(b.get(k(1)))).toBe(hex(v(1)));
    expect(store.read(k(1))).toBeUndefined();
    b.delete(k(1));
    expect(b.get(k(1))).toBeUndefined();
    b.put(k(2), v(2));
    store.commitBlock(b);
    expect(hex(store.read(k(2)))).toBe(hex(v(2)));
    expect(store.read(k(1))).toBeUndefined();
  });

  it("getView is the same metered read as get (counted, observed) and its view never changes under later writes", () => {
    const { store } = fresh();
    const setup = store.beginBlock(1n);
    setup.put(k(1), v(1));
    store.commitBlock(setup);
    const b = store.beginBlock(2n);
    const seen: StateAccess[] = [];
    b.observer = (a) => seen.push(a);
    const view = b.getView(k(1))!;
    expect(hex(view)).toBe(hex(v(1)));
    expect(b.getView(k(2))).toBeUndefined();
    expect(b.counts.reads).toBe(2);
    expect(seen.map((a) => [a.op, a.op === "read" ? hex(a.value) : null])).toEqual([["read", hex(v(1))], ["read", undefined]]);
    b.put(k(1), v(7));
    const tx = b.checkpoint();
    b.put(k(1), v(8));
    b.rollback(tx);
    expect(hex(view)).toBe(hex(v(1)));
    expect(hex(b.getView(k(1)))).toBe(hex(v(7)));
    // get hands out a copy of the same value
    const copy = b.get(k(1))!;
    copy[1] = 0xff;
    expect(hex(b.getView(k(1)))).toBe(hex(v(7)));
  });

  it("CIP-4 §6.1: a rejected transaction's checkpoint is rolled back without touching earlier writes", () => {
    const { store } = fresh();
    const b = store.beginBlock(1n);
    b.put(k(1), v(1));
    const tx = b.checkpoint();
    b.put(k(1), v(9));
    b.put(k(2), v(2));
    b.delete(k(1));
    b.rollback(tx);
    expect(hex(b.get(k(1)))).toBe(hex(v(1)));
    expect(b.get(k(2))).toBeUndefined();
  });

  it("CIP-4 §6.1: nested checkpoints — inner release then outer rollback discards both; inner rollback keeps outer", () => {
    const { store, commitment } = fresh();
    const b = store.beginBlock(1n);
    const outer = b.checkpoint();
    b.put(k(1), v(1));
    const inner = b.checkpoint();
    expect(inner).toBe(outer + 1);
    b.put(k(2), v(2));
    b.release(inner);
    expect(hex(b.get(k(2)))).toBe(hex(v(2)));
    b.rollback(outer);
    expect(b.get(k(1))).toBeUndefined();
    expect(b.get(k(2))).toBeUndefined();

    const o2 = b.checkpoint();
    b.put(k(3), v(3));
    const i2 = b.checkpoint();
    b.put(k(3), v(4));
    b.put(k(4), v(4));
    b.rollback(i2);
    b.release(o2);
    expect(hex(b.get(k(3)))).toBe(hex(v(3)));
    expect(b.get(k(4))).toBeUndefined();
    store.commitBlock(b);
    // Rolled-back keys never reach the commitment.
    expect(commitment.batches[0]!.map(([key]) => hex(key))).toEqual([hex(k(3))]);
  });

  it("CIP-4 §6.1: only the innermost checkpoint can be closed, and a batch with open checkpoints cannot commit", () => {
    const { store } = fresh();
    const b = store.beginBlock(1n);
    const outer = b.checkpoint();
    b.checkpoint();
    expect(() => b.rollback(outer)).toThrow(StateStoreError);
    expect(() => b.release(7)).toThrow(StateStoreError);
    expect(() => store.commitBlock(b)).toThrow(/open checkpoint/);
  });

  it("CIP-39 §18.1: every get is one read and every put/delete one write, rolled-back ones included, observed in order", () => {
    const { store } = fresh();
    const b = store.beginBlock(1n);
    const seen: StateAccess[] = [];
    b.observer = (a) => seen.push(a);
    b.get(k(1));
    const cp = b.checkpoint();
    b.put(k(1), v(1));
    b.get(k(1));
    b.delete(k(2)); // deleting an absent key is still an executed write
    b.rollback(cp);
    b.get(k(1));
    expect(b.counts).toEqual({ reads: 3, writes: 2 });
    expect(seen.map((a) => a.op)).toEqual(["read", "write", "read", "write", "read"]);
    expect(seen[1]).toMatchObject({ op: "write", before: undefined });
    expect(hex((seen[1] as { after?: Uint8Array }).after)).toBe(hex(v(1)));
    expect(hex((seen[2] as { value?: Uint8Array }).value)).toBe(hex(v(1)));
    expect((seen[4] as { value?: Uint8Array }).value).toBeUndefined();
  });

  it("CIP-4 §4.1: the batch rejects keys that are not 54 bytes with a known prefix", () => {
    const { store } = fresh();
    const b = store.beginBlock(1n);
    expect(() => b.get(new Uint8Array(53))).toThrow(StateKeyError);
    expect(() => b.put(new Uint8Array(54), v(1))).toThrow(StateKeyError);
    expect(b.counts).toEqual({ reads: 0, writes: 0 });
  });

  it("CIP-4 §6.3: the committed changes are sorted by key whatever the write order (property)", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 255 }), { minLength: 1, maxLength: 30 }), (order) => {
        const a = fresh();
        const ba = a.store.beginBlock(1n);
        for (const i of order) ba.put(k(i), v(i));
        const sorted = [...order].sort((x, y) => x - y);
        const c = fresh();
        const bc = c.store.beginBlock(1n);
        for (const i of sorted) bc.put(k(i), v(i));
        const ra = a.store.commitBlock(ba).stateRoot;
        const rc = c.store.commitBlock(bc).stateRoot;
        expect(toHex(ra)).toBe(toHex(rc));
        expect(a.commitment.batches[0]!.map(([key]) => hex(key))).toEqual(sorted.map((i) => hex(k(i))));
      }),
      { numRuns: 100 },
    );
  });

  it("CIP-4 §6.1: commit passes each key's final value once; deleting a never-committed key is no change", () => {
    const { store, commitment } = fresh();
    const b1 = store.beginBlock(1n);
    b1.put(k(1), v(1));
    b1.put(k(1), v(2));
    b1.put(k(2), v(2));
    b1.delete(k(3));
    store.commitBlock(b1);
    expect(commitment.batches[0]!.map(([key, val]) => [hex(key), hex(val)])).toEqual([
      [hex(k(1)), hex(v(2))],
      [hex(k(2)), hex(v(2))],
    ]);
    const b2 = store.beginBlock(2n);
    b2.delete(k(1));
    b2.put(k(2), v(2)); // same value rewritten: still a write the commitment sees
    const { stateRoot } = store.commitBlock(b2);
    expect(commitment.batches[1]!.map(([key, val]) => [hex(key), hex(val)])).toEqual([
      [hex(k(1)), undefined],
      [hex(k(2)), hex(v(2))],
    ]);
    expect(hex(store.root())).toBe(hex(stateRoot));
    expect([...store.entries()].map(([key]) => hex(key))).toEqual([hex(k(2))]);
  });

  it("CIP-4 §6.1: heights strictly increase, gaps are free, stale or foreign batches cannot commit", () => {
    const { store, commitment } = fresh();
    store.commitBlock(store.beginBlock(5n));
    expect(() => store.beginBlock(5n)).toThrow(StateStoreError);
    expect(() => store.beginBlock(4n)).toThrow(StateStoreError);
    const big = store.beginBlock(2n ** 64n - 1n); // a huge gap costs nothing
    const other = store.beginBlock(6n);
    store.commitBlock(other);
    expect(() => store.commitBlock(big)).toThrow(/stale/);
    expect(() => fresh().store.commitBlock(store.beginBlock(7n))).toThrow(/not begun by this store/);
    expect(() => store.beginBlock(2n ** 64n)).toThrow(/not a u64/);
    expect(commitment.batches.length).toBe(2);
    expect(store.height).toBe(6n);
  });

  it("CIP-4 §6.1: callers cannot mutate stored values through the arrays they passed or received", () => {
    const { store } = fresh();
    const b = store.beginBlock(1n);
    const val = v(1);
    b.put(k(1), val);
    val[1] = 99;
    b.get(k(1))![1] = 98;
    expect(hex(b.get(k(1)))).toBe(hex(v(1)));
    // Node Buffers too (Buffer#slice aliases): the key and the value are copied, not viewed.
    const key = Buffer.from(k(2));
    const value = Buffer.from(v(2));
    b.put(key, value);
    key[1] = key[1]! ^ 0xff;
    value[1] = 97;
    expect(hex(b.get(k(2)))).toBe(hex(v(2)));
    expect(b.get(key)).toBeUndefined();
    // Not a byte array: refused, not stored as an empty or zero-filled value.
    for (const bad of [undefined, null, 5, [1, 2]]) expect(() => b.put(k(3), bad as unknown as Uint8Array)).toThrow(TypeError);
    expect(b.get(k(3))).toBeUndefined();
  });

  it("CIP-4 §8.1: fromEntries builds a pre-state committed as one sorted batch", () => {
    const commitment = new RecordingCommitment();
    const store = MemoryStateStore.fromEntries([[accountKey(A), v(7)], [k(1), v(1)]], 3n, commitment);
    expect(store.height).toBe(3n);
    expect([...store.entries()].map(([key]) => hex(key))).toEqual([hex(accountKey(A)), hex(k(1))]);
    expect(commitment.batches.length).toBe(1);
  });
});

describe("fromEntries reads its source once or twice, never holding a re-readable one as a list", () => {
  const pre: Array<readonly [Uint8Array, Uint8Array]> = [[k(1), v(1)], [k(2), v(2)], [k(3), v(3)]];
  const rootOf = (entries: Iterable<readonly [Uint8Array, Uint8Array]>) => hex(MemoryStateStore.fromEntries(entries, 0n).root());

  it("CIP-4 §8.1: an array, a re-iterable source and a one-shot generator of the same entries give the same root", () => {
    const root = rootOf(pre);
    expect(rootOf({ [Symbol.iterator]: () => pre[Symbol.iterator]() })).toBe(root);
    expect(rootOf((function* () { yield* pre; })())).toBe(root);
    expect(root).not.toBe(rootOf(pre.slice(0, 2)));
  });

  it("CIP-4 §8.1: out-of-order and repeated keys give the sorted last-write-wins root, from any source", () => {
    const shuffled: Array<readonly [Uint8Array, Uint8Array]> = [[k(3), v(9)], [k(1), v(1)], [k(2), v(2)], [k(3), v(3)]];
    const root = rootOf(pre);
    expect(rootOf(shuffled)).toBe(root);
    expect(rootOf({ [Symbol.iterator]: () => shuffled[Symbol.iterator]() })).toBe(root);
    expect(rootOf((function* () { yield* shuffled; })())).toBe(root);
  });
});

describe("block batch against a copy-on-checkpoint model (property)", () => {
  type Op =
    | { t: "put"; k: number; v: number }
    | { t: "del"; k: number }
    | { t: "get"; k: number }
    | { t: "cp" }
    | { t: "rb" }
    | { t: "rel" };
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ t: fc.constant("put" as const), k: fc.integer({ min: 0, max: 5 }), v: fc.integer({ min: 0, max: 3 }) }),
    fc.record({ t: fc.constant("del" as const), k: fc.integer({ min: 0, max: 5 }) }),
    fc.record({ t: fc.constant("get" as const), k: fc.integer({ min: 0, max: 5 }) }),
    fc.constant({ t: "cp" as const }),
    fc.constant({ t: "rb" as const }),
    fc.constant({ t: "rel" as const }),
  );

  it("CIP-4 §6.1: reads, counts and committed state match the model for any op sequence", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 4 }), fc.array(op, { maxLength: 60 }), (pre, ops) => {
        const commitment = new RecordingCommitment();
        const store = MemoryStateStore.fromEntries([...new Set(pre)].map((i) => [k(i), v(100 + i)] as const), 0n, commitment);
        const b = store.beginBlock(1n);
        let model = new Map<number, number | undefined>(); // pending: key → value (undefined = deleted)
        const committed = new Map([...new Set(pre)].map((i) => [i, 100 + i]));
        const saved: Array<Map<number, number | undefined>> = [];
        let reads = 0, writes = 0;
        const cur = (i: number) => (model.has(i) ? model.get(i) : committed.get(i));
        for (const o of ops) {
          if (o.t === "put") { b.put(k(o.k), v(o.v)); model.set(o.k, o.v); writes++; }
          else if (o.t === "del") { b.delete(k(o.k)); model.set(o.k, undefined); writes++; }
          else if (o.t === "get") {
            const got = b.get(k(o.k));
            reads++;
            const want = cur(o.k);
            expect(hex(got)).toBe(want === undefined ? undefined : hex(v(want)));
          } else if (o.t === "cp") { saved.push(new Map(model)); expect(b.checkpoint()).toBe(saved.length); }
          else if (saved.length > 0 && o.t === "rb") { b.rollback(saved.length); model = saved.pop()!; }
          else if (saved.length > 0 && o.t === "rel") { b.release(saved.length); saved.pop(); }
        }
        while (saved.length > 0) { b.release(saved.length); saved.pop(); }
        expect(b.counts).toEqual({ reads, writes });
        store.commitBlock(b);
        const expected = [...model.keys()]
          .filter((i) => model.get(i) !== undefined || committed.has(i))
          .sort((x, y) => x - y)
          .map((i) => [hex(k(i)), model.get(i) === undefined ? undefined : hex(v(model.get(i)!))]);
        expect(commitment.batches[1]!.map(([key, val]) => [hex(key), hex(val)])).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});

describe("MemoryStateStore over the default QMDB commitment (CIP-4 §5.1)", () => {
  it("CIP-4 §6.3: identical blocks give identical state roots whatever the write order; any change moves the root", () => {
    const run = (order: number[], extra?: number) => {
      const store = new MemoryStateStore();
      const genesis = toHex(store.root());
      const b = store.beginBlock(1n);
      for (const i of order) b.put(k(i), v(i));
      const cp = b.checkpoint();
      b.put(k(50), v(50)); // a rejected transaction's write
      b.rollback(cp);
      if (extra !== undefined) b.put(k(extra), v(extra));
      return { genesis, root: toHex(store.commitBlock(b).stateRoot), store };
    };
    const a = run([1, 2, 3, 4]);
    const b = run([4, 2, 3, 1]);
    expect(a.root).toBe(b.root);
    expect(a.root).not.toBe(a.genesis);
    expect(toHex(a.store.root())).toBe(a.root);
    expect(run([1, 2, 3, 4], 5).root).not.toBe(a.root);
  });
});
