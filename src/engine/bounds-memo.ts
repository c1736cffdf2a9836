// Fast path "bounds memo" (docs/engineering/performance.md "Fast paths"): the governance bounds decoded last
// and the 25 stored values they came from, kept by one chain. Most instructions read the same 25
// values, so when their bytes are the ones seen last, the decoding is skipped. The reads
// themselves are the spec's either way: every scalar is read (metered) by the caller
// (readGovernanceBounds, §18.1), and only their decoding is skipped here.
import { decodeScalar, GovernanceBounds } from "./context.js";
import { LIVE_SCALAR_READ_KEYS } from "./layout.js";

const STORED_SCALAR_BYTES = 9;

export class BoundsMemo {
  private readonly lastBytes = new Uint8Array(STORED_SCALAR_BYTES * LIVE_SCALAR_READ_KEYS.length);
  private last: GovernanceBounds | undefined;

  /** The bounds of the 25 stored values `views` (§18.1 order), decoded only when they changed. */
  bounds(views: readonly (Uint8Array | undefined)[]): GovernanceBounds {
    if (this.last !== undefined && this.sameAsLast(views)) return this.last;
    const values = views.map((bytes, i) => decodeScalar(bytes, LIVE_SCALAR_READ_KEYS[i]![0]));
    views.forEach((bytes, i) => this.lastBytes.set(bytes!, STORED_SCALAR_BYTES * i));
    this.last = new GovernanceBounds(values);
    return this.last;
  }

  private sameAsLast(views: readonly (Uint8Array | undefined)[]): boolean {
    const last = this.lastBytes;
    for (let v = 0; v < views.length; v++) {
      const bytes = views[v];
      if (bytes === undefined || bytes.length !== STORED_SCALAR_BYTES) return false;
      const at = STORED_SCALAR_BYTES * v;
      for (let i = 0; i < STORED_SCALAR_BYTES; i++) if (last[at + i] !== bytes[i]) return false;
    }
    return true;
  }
}
