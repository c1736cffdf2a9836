// Valid transaction envelopes of every kind and structure-aware mutations of them (docs/
// transactions.md "One accepted byte string"): byte flips, insertions, deletions, truncation,
// trailing bytes, and the CBOR-specific second forms a lenient decoder would accept — a BOM in a
// text string, widened (non-shortest) heads, indefinite lengths, duplicated or reordered map
// entries, tags, floats and negative integers in place of an unsigned integer, overlong UTF-8.
// Shared by scripts/fuzz-envelope.ts (≥ 10⁵ mutants) and test/scenario/envelope.test.ts (CI).
import { encodeEnvelope, type TxEnvelope } from "../src/chain/envelope.js";
import type { GovAction, TxBody } from "../src/engine/inputs.js";
import { Rng } from "./rng.js";


const PARAM_NAMES = ["cbqs.min_rate_per_block", "cbqs.suspend_grace_blocks", "x", "", "cbqs.é"];

function govAction(rng: Rng): GovAction {
  const actor = rng.bytes(20);
  const name = (): string => PARAM_NAMES[rng.below(PARAM_NAMES.length)]!;
  switch (rng.below(5)) {
    case 0:
      return { type: "SetParam", name: name(), value: rng.u64() };
    case 1:
      return { type: "SetParams", values: Array.from({ length: rng.below(4) }, () => ({ name: name(), value: rng.u64() })) };
    case 2:
      return { type: "Pause", actor, blocks: rng.u64() };
    case 3:
      return { type: "ExtendPause", actor, blocks: rng.u64() };
    default:
      return { type: "Unpause", actor };
  }
}

/** A valid envelope; `kind` cycles through system, gov and transfer. */
export function validEnvelope(rng: Rng, kind: number): TxEnvelope {
  let body: TxBody;
  switch (kind % 3) {
    case 0:
      body = { kind: "system", opcode: rng.below(2) === 0 ? 218 : rng.below(256), payload: rng.bytes(rng.below(40)) };
      break;
    case 1:
      body = { kind: "gov", action: govAction(rng) };
      break;
    default:
      body = { kind: "transfer", to: rng.bytes(20), amount: rng.u64() };
  }
  return { chain_id: rng.u64(), nonce: rng.u64(), tx: { from: rng.bytes(20), body } };
}

/** One CBOR item of a valid envelope: where its head starts and ends, and its content. */
interface Item {
  start: number;
  headEnd: number;
  major: number;
  arg: bigint;
  /** End of the item including nested items / content bytes. */
  end: number;
  /** Index of the enclosing map's item (for key/value pairs), or -1. */
  parent: number;
}

function readHead(b: Uint8Array, at: number): { major: number; arg: bigint; headEnd: number } {
  const first = b[at]!;
  const info = first & 0x1f;
  if (info < 24) return { major: first >> 5, arg: BigInt(info), headEnd: at + 1 };
  const width = 1 << (info - 24);
  let arg = 0n;
  for (let i = 0; i < width; i++) arg = (arg << 8n) | BigInt(b[at + 1 + i]!);
  return { major: first >> 5, arg, headEnd: at + 1 + width };
}

/** Every item of a valid (definite-length) envelope, in document order. Iterative. */
export function items(b: Uint8Array): Item[] {
  const out: Item[] = [];
  // Stack of open containers: the item index and how many child items remain.
  const open: Array<{ index: number; remaining: number }> = [];
  let pos = 0;
  while (pos < b.length) {
    const { major, arg, headEnd } = readHead(b, pos);
    const item: Item = { start: pos, headEnd, major, arg, end: headEnd, parent: open.length > 0 ? open[open.length - 1]!.index : -1 };
    out.push(item);
    const index = out.length - 1;
    if (major === 2 || major === 3) item.end = headEnd + Number(arg);
    pos = item.end;
    if ((major === 4 || major === 5) && arg > 0n) {
      open.push({ index, remaining: Number(arg) * (major === 5 ? 2 : 1) });
      continue;
    }
    // Close every container whose last child just ended.
    while (open.length > 0) {
      const top = open[open.length - 1]!;
      top.remaining--;
      if (top.remaining > 0) break;
      out[top.index]!.end = pos;
      open.pop();
    }
  }
  return out;
}

const splice = (b: Uint8Array, from: number, to: number, insert: ArrayLike<number>): Uint8Array => {
  const out = new Uint8Array(b.length - (to - from) + insert.length);
  out.set(b.subarray(0, from), 0);
  out.set(insert, from);
  out.set(b.subarray(to), from + insert.length);
  return out;
};

/** A head of `major` for `arg` in an explicit width (0 = inline, 1/2/4/8 bytes). */
function headOfWidth(major: number, arg: bigint, width: 0 | 1 | 2 | 4 | 8): number[] {
  if (width === 0) return [(major << 5) | Number(arg)];
  const info = { 1: 24, 2: 25, 4: 26, 8: 27 }[width];
  const bytes: number[] = [];
  for (let i = width - 1; i >= 0; i--) bytes.push(Number((arg >> BigInt(8 * i)) & 0xffn));
  return [(major << 5) | info, ...bytes];
}

function shortestWidth(arg: bigint): 0 | 1 | 2 | 4 | 8 {
  return arg < 24n ? 0 : arg <= 0xffn ? 1 : arg <= 0xffffn ? 2 : arg <= 0xffff_ffffn ? 4 : 8;
}

/** Rewrites item `it`'s head with argument `arg` (shortest width, or `width` when given). */
function rehead(b: Uint8Array, it: Item, arg: bigint, width?: 0 | 1 | 2 | 4 | 8): Uint8Array {
  return splice(b, it.start, it.headEnd, headOfWidth(it.major, arg, width ?? shortestWidth(arg)));
}

const BOM = [0xef, 0xbb, 0xbf];
export const MUTATIONS = [
  "flip",
  "insert",
  "delete",
  "truncate",
  "trailing",
  "bom",
  "widen-head",
  "indefinite",
  "duplicate-entry",
  "swap-entries",
  "map-count",
  "tag",
  "float",
  "negative",
  "overlong-utf8",
  "value-change",
] as const;
export type Mutation = (typeof MUTATIONS)[number];

/** One mutant of `valid` (a valid envelope's bytes) by `kind`. */
export function mutate(rng: Rng, valid: Uint8Array, kind: Mutation): Uint8Array {
  const all = items(valid);
  const pick = (pred: (it: Item) => boolean): Item | undefined => {
    const candidates = all.filter(pred);
    return candidates.length === 0 ? undefined : candidates[rng.below(candidates.length)];
  };
  const anyItem = all[rng.below(all.length)]!;
  switch (kind) {
    case "flip": {
      const b = valid.slice();
      const flips = 1 + rng.below(3);
      for (let i = 0; i < flips; i++) {
        const at = rng.below(b.length);
        b[at] = b[at]! ^ (1 << rng.below(8));
      }
      return b;
    }
    case "insert":
      return splice(valid, rng.below(valid.length + 1), 0, rng.bytes(1 + rng.below(4)).map((x, i) => (i === 0 && rng.below(2) === 0 ? 0xef : x)));
    case "delete": {
      const at = rng.below(valid.length);
      return splice(valid, at, Math.min(valid.length, at + 1 + rng.below(3)), []);
    }
    case "truncate":
      return valid.slice(0, rng.below(valid.length));
    case "trailing":
      return splice(valid, valid.length, valid.length, rng.bytes(1 + rng.below(3)));
    case "bom": {
      // A BOM at the start of a text string (a key, the kind, a parameter name), length adjusted.
      const t = pick((it) => it.major === 3);
      if (t === undefined) return valid;
      const withBom = splice(valid, t.headEnd, t.headEnd, BOM);
      return rehead(withBom, t, t.arg + 3n);
    }
    case "widen-head": {
      const w = shortestWidth(anyItem.arg);
      const wider = ([1, 2, 4, 8] as const).filter((x) => x > w);
      if (wider.length === 0) return valid;
      return rehead(valid, anyItem, anyItem.arg, wider[rng.below(wider.length)]!);
    }
    case "indefinite": {
      // Indefinite-length form of a byte/text string (one chunk), array or map, plus the break.
      const c = pick((it) => it.major >= 2 && it.major <= 5);
      if (c === undefined) return valid;
      if (c.major === 2 || c.major === 3) {
        return splice(valid, c.start, c.end, [(c.major << 5) | 31, ...valid.subarray(c.start, c.end), 0xff]);
      }
      const withBreak = splice(valid, c.end, c.end, [0xff]);
      return splice(withBreak, c.start, c.headEnd, [(c.major << 5) | 31]);
    }
    case "duplicate-entry":
    case "swap-entries": {
      // A key/value pair of the top-level map: duplicate it (count + 1) or swap it with the next.
      const top = all.filter((it) => it.parent === 0);
      const pairs: Array<[number, number]> = [];
      for (let i = 0; i + 1 < top.length; i += 2) pairs.push([top[i]!.start, top[i + 1]!.end]);
      if (pairs.length < 2) return valid;
      const p = rng.below(pairs.length - 1);
      const [s1, e1] = pairs[p]!;
      if (kind === "duplicate-entry") {
        const dup = splice(valid, e1, e1, valid.subarray(s1, e1));
        return rehead(dup, all[0]!, all[0]!.arg + 1n);
      }
      const [s2, e2] = pairs[p + 1]!;
      return Uint8Array.from([...valid.subarray(0, s1), ...valid.subarray(s2, e2), ...valid.subarray(s1, e1), ...valid.subarray(e2)]);
    }
    case "map-count": {
      const m = pick((it) => it.major === 4 || it.major === 5);
      if (m === undefined) return valid;
      return rehead(valid, m, rng.below(2) === 0 ? m.arg + 1n : m.arg === 0n ? 1n : m.arg - 1n);
    }
    case "tag":
      return splice(valid, anyItem.start, anyItem.start, [0xc0 | rng.below(24)]);
    case "float": {
      const u = pick((it) => it.major === 0);
      if (u === undefined) return valid;
      const f = new DataView(new ArrayBuffer(8));
      f.setFloat64(0, Number(u.arg));
      return splice(valid, u.start, u.headEnd, [0xfb, ...new Uint8Array(f.buffer)]);
    }
    case "negative": {
      const u = pick((it) => it.major === 0);
      if (u === undefined) return valid;
      const b = valid.slice();
      b[u.start] = (b[u.start]! & 0x1f) | (1 << 5);
      return b;
    }
    case "overlong-utf8": {
      // An ASCII byte of a text string written as the overlong two-byte form C0|x>>6, 80|x&63.
      const t = pick((it) => it.major === 3 && it.arg > 0n);
      if (t === undefined) return valid;
      const at = t.headEnd + rng.below(Number(t.arg));
      const x = valid[at]!;
      if (x >= 0x80) return valid;
      return rehead(splice(valid, at, at + 1, [0xc0 | (x >> 6), 0x80 | (x & 63)]), t, t.arg + 1n);
    }
    case "value-change": {
      // A different valid-looking value of the same item: must decode to a different transaction.
      const u = pick((it) => it.major === 0);
      if (u === undefined) return valid;
      return rehead(valid, u, u.arg ^ 1n);
    }
  }
}

/** The `n`-th mutant of a deterministic sequence: a fresh valid envelope, then one mutation. */
export function nthMutant(rng: Rng, n: number): { valid: Uint8Array; mutant: Uint8Array; mutation: Mutation } {
  const valid = encodeEnvelope(validEnvelope(rng, n));
  const mutation = MUTATIONS[rng.below(MUTATIONS.length)]!;
  return { valid, mutant: mutate(rng, valid, mutation), mutation };
}
