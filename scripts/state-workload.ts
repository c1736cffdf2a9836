// The deterministic write workload of the state benchmarks (scripts/bench-state.ts) and of the
// performance guard's QMDB writes (scripts/perf-workload.ts): `blocks` blocks of `writesPerBlock`
// writes; each write is a 54-byte key (prefix 0x03 ActorStorage ‖ 53 pseudo-random bytes) and a
// 100-byte value (0x04 StorageSlot ‖ 99 pseudo-random bytes). From the second write on, 20 % of
// writes update a key written earlier (uniformly chosen), the rest create new keys. Key i is
// regenerated from (seed, i) when needed, so the caller holds no per-key data.
import { STATE_KEY_LENGTH } from "../state/kv/interface.js";
import { StatePrefix } from "../state/kv/keys.js";

export const KEY_LENGTH = STATE_KEY_LENGTH;
export const VALUE_LENGTH = 100;
export const UPDATE_SHARE = 0.2;
const STORAGE_SLOT_TAG = 0x04;

/** xoshiro128** seeded through splitmix32: small, fast, and the same sequence on every run. */
export class Prng {
  private s: Uint32Array;

  constructor(seed: number) {
    let x = seed >>> 0;
    const splitmix = () => {
      x = (x + 0x9e3779b9) >>> 0;
      let z = x;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.s = Uint32Array.of(splitmix(), splitmix(), splitmix(), splitmix());
  }

  next(): number {
    const s = this.s;
    const r = s[1]! * 5;
    const result = Math.imul(((r << 7) | (r >>> 25)) >>> 0, 9) >>> 0;
    const t = s[1]! << 9;
    s[2]! ^= s[0]!;
    s[3]! ^= s[1]!;
    s[1]! ^= s[2]!;
    s[0]! ^= s[3]!;
    s[2]! ^= t;
    s[3] = (s[3]! << 11) | (s[3]! >>> 21);
    return result;
  }

  /** Uniform in [0, 1). */
  fraction(): number {
    return this.next() / 2 ** 32;
  }

  fill(out: Uint8Array, from: number): Uint8Array {
    for (let i = from; i < out.length; i += 4) {
      const word = this.next();
      for (let b = 0; b < 4 && i + b < out.length; b++) out[i + b] = (word >>> (8 * b)) & 0xff;
    }
    return out;
  }
}

/** Key number `index` of the workload: 0x03 ‖ 53 bytes drawn from a generator seeded by (seed, index). */
export function workloadKey(seed: number, index: number): Uint8Array {
  const key = new Uint8Array(KEY_LENGTH);
  key[0] = StatePrefix.ActorStorage;
  return new Prng((Math.imul(seed, 0x9e3779b1) + index) >>> 0).fill(key, 1);
}

export type Write = [key: Uint8Array, value: Uint8Array];

export interface Workload {
  blocks: Generator<Write[]>;
  /** Distinct keys created so far (= live keys: the workload never deletes). */
  keys(): number;
}

export function stateWorkload(o: { blocks: number; writesPerBlock: number; seed: number }): Workload {
  const prng = new Prng(o.seed);
  let keys = 0;
  function* blocks(): Generator<Write[]> {
    for (let b = 0; b < o.blocks; b++) {
      const writes: Write[] = [];
      for (let w = 0; w < o.writesPerBlock; w++) {
        const index = keys > 0 && prng.fraction() < UPDATE_SHARE ? Math.floor(prng.fraction() * keys) : keys++;
        const value = new Uint8Array(VALUE_LENGTH);
        value[0] = STORAGE_SLOT_TAG;
        writes.push([workloadKey(o.seed, index), prng.fill(value, 1)]);
      }
      yield writes;
    }
  }
  return { blocks: blocks(), keys: () => keys };
}
