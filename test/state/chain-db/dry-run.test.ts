// The devnet's throwaway overlay (state/chain-db/dry-run.ts) against the BlockBatch contract of
// state/kv/interface.ts: copies where the contract promises them, counts, and the nested
// checkpoint rules the engine relies on (a rejected transaction rolls back, a kept one releases).
import { describe, expect, it } from "vitest";
import type { StateAccess } from "../../../state/kv/interface.js";
import { DryRunStore } from "../../../state/chain-db/dry-run.js";

const A = Uint8Array.of(1);
const B = Uint8Array.of(2);

function overlay(stored: Record<string, Uint8Array> = {}) {
  const base = new Map(Object.entries(stored));
  const store = new DryRunStore({ read: (k) => base.get(k.join()) });
  return { store, batch: store.beginBlock(5n), base };
}

describe("dry-run overlay (BlockBatch contract)", () => {
  it("get returns the caller's own copy: changing it changes neither the overlay nor the stored state", () => {
    const { batch, base } = overlay({ "1": Uint8Array.of(7) });
    batch.get(A)!.fill(0);
    expect(batch.get(A)).toEqual(Uint8Array.of(7));
    expect(base.get("1")).toEqual(Uint8Array.of(7));
    batch.put(B, Uint8Array.of(3));
    batch.get(B)!.fill(0);
    expect(batch.getView(B)).toEqual(Uint8Array.of(3));
  });

  it("put keeps its own copy of the value: the caller may reuse its array", () => {
    const { batch } = overlay();
    const value = Uint8Array.of(4, 4);
    batch.put(A, value);
    value.fill(9);
    expect(batch.get(A)).toEqual(Uint8Array.of(4, 4));
  });

  it("every get counts one read and every put or delete one write (the meter's counts)", () => {
    const { batch } = overlay({ "1": Uint8Array.of(7) });
    batch.get(A);
    batch.getView(B);
    batch.put(A, Uint8Array.of(1));
    batch.delete(B);
    batch.delete(A);
    expect(batch.counts).toEqual({ reads: 2, writes: 3 });
  });

  it("the observer sees every access in order, with a fresh copy of a write's previous value it may keep or change", () => {
    const { batch, base } = overlay({ "1": Uint8Array.of(7) });
    const seen: StateAccess[] = [];
    batch.observer = (access) => {
      seen.push(access);
      if (access.op === "write") access.before?.fill(0);
    };
    const value = Uint8Array.of(8);
    batch.get(A);
    batch.put(A, value);
    batch.delete(A);
    expect(seen).toEqual([
      { op: "read", key: A, value: Uint8Array.of(7) },
      { op: "write", key: A, before: Uint8Array.of(0), after: value },
      { op: "write", key: A, before: Uint8Array.of(0), after: undefined },
    ]);
    expect(seen[1]!.op === "write" && seen[1]!.after).toBe(value); // the caller's array, not a copy
    expect(base.get("1")).toEqual(Uint8Array.of(7)); // the observer changed a copy, not the stored value
    batch.observer = undefined;
    expect(batch.get(A)).toBeUndefined();
    expect(new DryRunStore({ read: () => Uint8Array.of(7) }).read(A)).toEqual(Uint8Array.of(7));
  });

  it("releasing an inner checkpoint hands its writes to the outer one, so the outer rollback undoes both", () => {
    const { batch } = overlay({ "1": Uint8Array.of(7) });
    const outer = batch.checkpoint();
    batch.put(A, Uint8Array.of(1));
    const inner = batch.checkpoint();
    expect(inner).toBe(outer + 1);
    batch.put(B, Uint8Array.of(2));
    batch.release(inner);
    expect(batch.get(B)).toEqual(Uint8Array.of(2));
    batch.rollback(outer);
    expect(batch.get(A)).toEqual(Uint8Array.of(7));
    expect(batch.get(B)).toBeUndefined();
  });

  it("a released checkpoint is closed: the next one gets the same depth, and releasing the outermost keeps its writes", () => {
    const { batch } = overlay();
    const first = batch.checkpoint();
    batch.put(A, Uint8Array.of(1));
    batch.release(first);
    expect(batch.checkpoint()).toBe(first);
    batch.rollback(first);
    expect(batch.get(A)).toEqual(Uint8Array.of(1));
  });

  it("only the innermost open checkpoint may be closed; token 0 and a closed one are refused", () => {
    const { batch } = overlay();
    const refusal = (token: number) => `checkpoint ${token} is not the innermost open checkpoint`;
    expect(() => batch.rollback(0)).toThrow(refusal(0));
    expect(() => batch.release(1)).toThrow(refusal(1));
    const outer = batch.checkpoint();
    const inner = batch.checkpoint();
    expect(() => batch.release(outer)).toThrow(refusal(outer));
    expect(() => batch.rollback(0)).toThrow(refusal(0));
    batch.rollback(inner);
    expect(() => batch.rollback(inner)).toThrow(refusal(inner));
    batch.release(outer);
  });

  it("rolling back a checkpoint falls back to the stored value of a key first written inside it, never to a deletion", () => {
    const base = new Map([[A.join(), Uint8Array.of(7)]]);
    const store = new DryRunStore({ read: (k) => base.get(k.join()) });
    const batch = store.beginBlock(1n);
    const outer = batch.checkpoint();
    batch.put(A, Uint8Array.of(8));
    batch.put(B, Uint8Array.of(1));
    batch.rollback(outer);
    expect(batch.get(A)).toEqual(Uint8Array.of(7)); // the committed value, as before the checkpoint
    expect(batch.get(B)).toBeUndefined();
    // Nested: an inner rollback restores the outer checkpoint's write, the outer one the stored value.
    const a = batch.checkpoint();
    batch.delete(A);
    const b = batch.checkpoint();
    batch.put(A, Uint8Array.of(5));
    batch.rollback(b);
    expect(batch.get(A)).toBeUndefined();
    batch.rollback(a);
    expect(batch.get(A)).toEqual(Uint8Array.of(7));
    expect(store.read(A)).toEqual(Uint8Array.of(7)); // the base is never written
  });

  it("the store reports an all-zero root, keeps nothing and does not list state", () => {
    const { store, batch } = overlay();
    batch.put(A, Uint8Array.of(1));
    expect(store.commitBlock(batch)).toEqual({ height: 5n, stateRoot: new Uint8Array(32) });
    expect(store.root()).toEqual(new Uint8Array(32));
    expect(store.read(A)).toBeUndefined();
    expect(() => store.entries()).toThrow("a dry run does not list state");
  });
});
