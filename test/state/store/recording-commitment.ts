// Test-only StateCommitment: remembers every batch it was given and derives its root from the
// full history, so tests can see exactly what the store committed and in which order. The
// committed state itself is a plain map.
import { compareBytes, concatBytes, toHex, u32BE } from "../../../src/bytes.js";
import { sha256 } from "../../../src/crypto/hash.js";
import type { KeyChange, StateCommitment } from "../../../state/kv/commitment.js";

export class RecordingCommitment implements StateCommitment {
  readonly batches: KeyChange[][] = [];
  private current: Uint8Array = new Uint8Array(32);
  private readonly state = new Map<string, [Uint8Array, Uint8Array]>();

  commitBatch(changes: readonly KeyChange[]): Uint8Array {
    this.batches.push(changes.map(([k, v]) => [k.slice(), v?.slice()] as const));
    const parts = changes.flatMap(([k, v]) => [k, v === undefined ? Uint8Array.of(0) : concatBytes(Uint8Array.of(1), u32BE(v.length), v)]);
    this.current = sha256(concatBytes(this.current, u32BE(changes.length), ...parts));
    for (const [k, v] of changes) {
      if (v === undefined) this.state.delete(toHex(k));
      else this.state.set(toHex(k), [k.slice(), v.slice()]);
    }
    return this.current;
  }

  root(): Uint8Array {
    return this.current;
  }

  get(key: Uint8Array): Uint8Array | undefined {
    return this.state.get(toHex(key))?.[1].slice();
  }

  entries(): [Uint8Array, Uint8Array][] {
    return [...this.state.values()].map(([k, v]): [Uint8Array, Uint8Array] => [k.slice(), v.slice()]).sort((a, b) => compareBytes(a[0], b[0]));
  }
}
