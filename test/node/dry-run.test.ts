// The devnet's throwaway store (state/chain-db/dry-run.ts): a candidate block runs against committed
// state through an overlay with the engine's nested checkpoints, and nothing reaches the base.
import { describe, expect, it } from "vitest";
import { DryRunStore } from "../../state/chain-db/dry-run.js";

const K = Uint8Array.of(1, 2, 3);
const FRESH = Uint8Array.of(9, 9);

describe("dry-run overlay", () => {
  it("issue 22: rolling back a checkpoint falls back to the stored value of a key first written inside it, never to a deletion", () => {
    const base = new Map([[K.join(), Uint8Array.of(7)]]);
    const store = new DryRunStore({ read: (k) => base.get(k.join()) });
    const batch = store.beginBlock(1n);
    const outer = batch.checkpoint();
    batch.put(K, Uint8Array.of(8));
    batch.put(FRESH, Uint8Array.of(1));
    batch.rollback(outer);
    expect(batch.get(K)).toEqual(Uint8Array.of(7)); // the committed value, as before the checkpoint
    expect(batch.get(FRESH)).toBeUndefined();
    // Nested: an inner rollback restores the outer checkpoint's write, the outer one the stored value.
    const a = batch.checkpoint();
    batch.delete(K);
    const b = batch.checkpoint();
    batch.put(K, Uint8Array.of(5));
    batch.rollback(b);
    expect(batch.get(K)).toBeUndefined();
    batch.rollback(a);
    expect(batch.get(K)).toEqual(Uint8Array.of(7));
    expect(store.read(K)).toEqual(Uint8Array.of(7)); // the base is never written
  });
});
