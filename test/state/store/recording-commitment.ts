// Test-only StateCommitment: remembers every batch it was given and derives its root from the
// full history, so tests can see exactly what the store committed and in which order.
import { concatBytes, u32BE } from "../../../src/bytes.js";
import { sha256 } from "../../../src/crypto/hash.js";
import type { KeyChange, StateCommitment } from "../../../state/commitment.js";

export class RecordingCommitment implements StateCommitment {
  readonly batches: KeyChange[][] = [];
  private current: Uint8Array = new Uint8Array(32);

  commitBatch(changes: readonly KeyChange[]): Uint8Array {
    this.batches.push(changes.map(([k, v]) => [k.slice(), v?.slice()] as const));
    const parts = changes.flatMap(([k, v]) => [k, v === undefined ? Uint8Array.of(0) : concatBytes(Uint8Array.of(1), u32BE(v.length), v)]);
    this.current = sha256(concatBytes(this.current, u32BE(changes.length), ...parts));
    return this.current;
  }

  root(): Uint8Array {
    return this.current;
  }
}
