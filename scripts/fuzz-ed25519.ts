// Differential fuzz of CIP-39 §9.1 strict Ed25519: the consensus function `ed25519VerifyStrict`
// (OpenSSL behind dalek's checks, src/crypto/ed25519-native.ts) against the pure-JS reference
// `verifyStrictDetailed` on mutated (key, message, signature) triples from every edge class:
// valid signatures and their bit flips, S around L and 2^252, small-order / mixed-order /
// non-canonical / off-curve A and R, x = 0 with the sign bit, wrong lengths, random bytes.
// A failure is any input where the two verdicts differ. It also counts, per class, how often
// OpenSSL alone (no strict checks) would have disagreed with dalek: the checks that matter.
// Deterministic for a given --seed; the test suite runs a small sample (test/crypto).
//
//   npm run build && node dist/scripts/fuzz-ed25519.js [--count N] [--seed S] [--json]
import { createPublicKey, verify } from "node:crypto";
import { pathToFileURL } from "node:url";
import { ed25519 } from "@noble/curves/ed25519.js";
import { sha512 } from "@noble/hashes/sha2.js";
import { concatBytes, toHex } from "../src/bytes.js";
import { ED25519_L, ED25519_P, ed25519VerifyStrict, verifyStrictDetailed } from "../src/crypto/ed25519.js";
import { SMALL_ORDER_ENCODINGS, strictRoute } from "../src/crypto/ed25519-native.js";
import { checkScriptArgs } from "./script-args.js";

const Point = ed25519.Point;
type EdPoint = InstanceType<typeof Point>;

export interface Ed25519Case {
  inputClass: string;
  publicKey: Uint8Array;
  message: Uint8Array;
  signature: Uint8Array;
}

/** splitmix32-style deterministic PRNG (runs are reproducible from the seed). */
class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  next(): number {
    this.s = (this.s + 0x9e3779b9) >>> 0;
    let z = this.s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  }
  below(n: number): number {
    return this.next() % n;
  }
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i++) out[i] = this.next() & 0xff;
    return out;
  }
  pick<T>(items: readonly T[]): T {
    return items[this.below(items.length)]!;
  }
  /** Uniform-ish scalar in [1, L). */
  scalar(): bigint {
    return (leToBigint(this.bytes(64)) % (ED25519_L - 1n)) + 1n;
  }
}

/** Little-endian 32 bytes of n (shared with the Ed25519 tests). */
export function le32(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) {
    out[i] = Number(n & 0xffn);
    n >>= 8n;
  }
  return out;
}
export function leToBigint(b: Uint8Array): bigint {
  let n = 0n;
  for (let i = b.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(b[i]!);
  return n;
}
/** k = SHA-512(R ‖ A ‖ M) mod ℓ, computed apart from the code under test. */
export function challenge(r: Uint8Array, a: Uint8Array, m: Uint8Array): bigint {
  return leToBigint(sha512(concatBytes(r, a, m))) % ED25519_L;
}
function flipBit(b: Uint8Array, bit: number): Uint8Array {
  const c = b.slice();
  c[bit >> 3]! ^= 1 << (bit & 7);
  return c;
}
function withS(sig: Uint8Array, s: bigint): Uint8Array {
  return concatBytes(sig.subarray(0, 32), le32(s));
}

interface Signer {
  seed: Uint8Array;
  a: bigint;
  A: EdPoint;
  aBytes: Uint8Array;
}

/** Points of order dividing 8: [i]T8 for i = 0..7, T8 of order 8. */
const T8 = Point.fromBytes(SMALL_ORDER_ENCODINGS[10]!);
const TORSION: EdPoint[] = Array.from({ length: 8 }, (_, i) => (i === 0 ? Point.ZERO : T8.multiplyUnsafe(BigInt(i))));
const ORDER_OF_TORSION = [1n, 8n, 4n, 8n, 2n, 8n, 4n, 8n]; // order of [i]T8

function makeSigner(rng: Rng): Signer {
  const seed = rng.bytes(32);
  const ext = ed25519.utils.getExtendedPublicKey(seed);
  return { seed, a: ext.scalar, A: ext.point, aBytes: ext.pointBytes };
}

function message(rng: Rng): Uint8Array {
  const r = rng.below(16);
  if (r === 0) return new Uint8Array(0);
  if (r === 1) return rng.bytes(200 + rng.below(1800)); // long
  return rng.bytes(1 + rng.below(160));
}

/** S = r + k·a for an explicit R (any point) and nonce r: valid iff [S]B = R + [k]A holds. */
function signWith(r: bigint, rBytes: Uint8Array, a: bigint, aBytes: Uint8Array, msg: Uint8Array): Uint8Array {
  const k = challenge(rBytes, aBytes, msg);
  return concatBytes(rBytes, le32((r + k * a) % ED25519_L));
}

/** A y in [0, p) that is not the y of any curve point (half of all y are not). */
function offCurveY(rng: Rng): Uint8Array {
  for (;;) {
    const y = rng.bytes(32);
    y[31]! &= 0x7f;
    if (leToBigint(y) >= ED25519_P) continue;
    try {
      Point.fromBytes(y, true);
    } catch {
      return y;
    }
  }
}

/** y = p + k (k < 19, so it fits in 255 bits) with the given sign bit. */
function nonCanonicalY(k: number, sign: number): Uint8Array {
  const b = le32(ED25519_P + BigInt(k));
  b[31]! |= sign << 7;
  return b;
}

type Make = (rng: Rng, signers: Signer[]) => Ed25519Case | Omit<Ed25519Case, "inputClass">;

function honest(rng: Rng, signers: Signer[]): { s: Signer; msg: Uint8Array; sig: Uint8Array } {
  const s = rng.pick(signers);
  const msg = message(rng);
  return { s, msg, sig: ed25519.sign(msg, s.seed) };
}

/** Search messages until `accept(k)`; each try costs one SHA-512. */
function messageWhere(rng: Rng, rBytes: Uint8Array, aBytes: Uint8Array, accept: (k: bigint) => boolean): Uint8Array {
  for (;;) {
    const msg = rng.bytes(1 + rng.below(48));
    if (accept(challenge(rBytes, aBytes, msg))) return msg;
  }
}

const SPECIAL_S: Array<[string, (s: bigint) => bigint]> = [
  ["S = 0", () => 0n],
  ["S = 1", () => 1n],
  ["S = L-1", () => ED25519_L - 1n],
  ["S = L", () => ED25519_L],
  ["S = L+1", () => ED25519_L + 1n],
  ["S = 2^252-1", () => 2n ** 252n - 1n],
  ["S = 2^252", () => 2n ** 252n],
  ["S + L (malleated)", (s) => s + ED25519_L],
  ["S + 15·L (top nibble 0xf)", (s) => s + ED25519_L * 15n],
  ["S = 2^256-1", () => 2n ** 256n - 1n],
  ["S = 2^255 + S", (s) => s + 2n ** 255n],
];

/** The input classes, each a generator of one case. Every class is drawn equally often. */
export const CLASSES: ReadonlyArray<[string, Make]> = [
  ["valid signature", (rng, signers) => {
    const { s, msg, sig } = honest(rng, signers);
    return { publicKey: s.aBytes, message: msg, signature: sig };
  }],
  ["valid, one bit of R flipped", (rng, signers) => {
    const { s, msg, sig } = honest(rng, signers);
    return { publicKey: s.aBytes, message: msg, signature: flipBit(sig, rng.below(256)) };
  }],
  ["valid, one bit of S flipped", (rng, signers) => {
    const { s, msg, sig } = honest(rng, signers);
    return { publicKey: s.aBytes, message: msg, signature: flipBit(sig, 256 + rng.below(256)) };
  }],
  ["valid, one bit of A flipped", (rng, signers) => {
    const { s, msg, sig } = honest(rng, signers);
    return { publicKey: flipBit(s.aBytes, rng.below(256)), message: msg, signature: sig };
  }],
  ["valid, sign bit of A or R flipped", (rng, signers) => {
    const { s, msg, sig } = honest(rng, signers);
    return rng.below(2) === 0
      ? { publicKey: flipBit(s.aBytes, 255), message: msg, signature: sig }
      : { publicKey: s.aBytes, message: msg, signature: flipBit(sig, 255) };
  }],
  ["valid, one bit of the message flipped", (rng, signers) => {
    const { s, msg, sig } = honest(rng, signers);
    const m = msg.length === 0 ? Uint8Array.of(rng.below(256)) : flipBit(msg, rng.below(msg.length * 8));
    return { publicKey: s.aBytes, message: m, signature: sig };
  }],
  ["valid, 1-4 random bytes overwritten", (rng, signers) => {
    const { s, msg, sig } = honest(rng, signers);
    const pub = s.aBytes.slice();
    const sg = sig.slice();
    for (let i = 1 + rng.below(4); i > 0; i--) {
      const at = rng.below(96);
      if (at < 64) sg[at] = rng.below(256);
      else pub[at - 64] = rng.below(256);
    }
    return { publicKey: pub, message: msg, signature: sg };
  }],
  ["signature under another key", (rng, signers) => {
    const { s, msg, sig } = honest(rng, signers);
    return { publicKey: rng.pick(signers.filter((o) => o !== s)).aBytes, message: msg, signature: sig };
  }],
  ["valid, inputs are views at odd offsets into larger buffers", (rng, signers) => {
    const { s, msg, sig } = honest(rng, signers);
    const view = (b: Uint8Array): Uint8Array => {
      const at = 1 + rng.below(15);
      const big = rng.bytes(at + b.length + rng.below(16));
      big.set(b, at);
      return big.subarray(at, at + b.length);
    };
    const flip = rng.below(2) === 0 ? 0 : 1 + rng.below(3); // also an invalid one now and then
    const signature = flip === 0 ? sig : flipBit(sig, rng.below(512));
    return { publicKey: view(s.aBytes), message: view(msg), signature: view(signature) };
  }],
  ...SPECIAL_S.map(([name, f]): [string, Make] => [name, (rng, signers) => {
    const { s, msg, sig } = honest(rng, signers);
    return { publicKey: s.aBytes, message: msg, signature: withS(sig, f(leToBigint(sig.subarray(32))) % 2n ** 256n) };
  }]),
  ["S random in [2^252, L)", (rng, signers) => {
    const { s, msg, sig } = honest(rng, signers);
    const v = 2n ** 252n + (leToBigint(rng.bytes(16)) % (ED25519_L - 2n ** 252n));
    return { publicKey: s.aBytes, message: msg, signature: withS(sig, v) };
  }],
  ["small-order A (14 encodings), cofactorless equation holds", (rng) => {
    const a = rng.pick(SMALL_ORDER_ENCODINGS);
    const r = rng.scalar();
    const rBytes = Point.BASE.multiply(r).toBytes();
    const msg = messageWhere(rng, rBytes, a, (k) => k % 8n === 0n); // [k]A = identity
    return { publicKey: a, message: msg, signature: concatBytes(rBytes, le32(r)) };
  }],
  ["small-order A (14 encodings), random signature", (rng, signers) => {
    const { msg, sig } = honest(rng, signers);
    return { publicKey: rng.pick(SMALL_ORDER_ENCODINGS), message: msg, signature: sig };
  }],
  ["small-order R (14 encodings), S = k·a", (rng, signers) => {
    const s = rng.pick(signers);
    const rBytes = rng.pick(SMALL_ORDER_ENCODINGS);
    const msg = message(rng);
    return { publicKey: s.aBytes, message: msg, signature: signWith(0n, rBytes, s.a, s.aBytes, msg) };
  }],
  ["small-order A and R", (rng) => {
    const a = rng.pick(SMALL_ORDER_ENCODINGS);
    const rBytes = rng.pick(SMALL_ORDER_ENCODINGS);
    return { publicKey: a, message: message(rng), signature: concatBytes(rBytes, le32(rng.below(4) === 0 ? 0n : rng.scalar())) };
  }],
  ["mixed-order A, cofactorless equation holds", (rng, signers) => {
    const s = rng.pick(signers);
    const t = 1 + rng.below(7);
    const aBytes = s.A.add(TORSION[t]!).toBytes();
    const r = rng.scalar();
    const rBytes = Point.BASE.multiply(r).toBytes();
    const msg = messageWhere(rng, rBytes, aBytes, (k) => k % ORDER_OF_TORSION[t]! === 0n);
    return { publicKey: aBytes, message: msg, signature: signWith(r, rBytes, s.a, aBytes, msg) };
  }],
  ["mixed-order A, equation fails by the torsion", (rng, signers) => {
    const s = rng.pick(signers);
    const t = 1 + rng.below(7);
    const aBytes = s.A.add(TORSION[t]!).toBytes();
    const r = rng.scalar();
    const rBytes = Point.BASE.multiply(r).toBytes();
    const msg = messageWhere(rng, rBytes, aBytes, (k) => k % ORDER_OF_TORSION[t]! !== 0n);
    return { publicKey: aBytes, message: msg, signature: signWith(r, rBytes, s.a, aBytes, msg) };
  }],
  ["mixed-order R and A, cofactorless equation holds", (rng, signers) => {
    const s = rng.pick(signers);
    const tA = 1 + rng.below(7);
    const aBytes = s.A.add(TORSION[tA]!).toBytes();
    const r = rng.scalar();
    // Pick the R torsion first, then a message with T_R + [k]T_A = identity.
    const kMod8 = BigInt(rng.below(8));
    const tR = Number((8n - ((kMod8 * BigInt(tA)) % 8n)) % 8n);
    const rBytes = Point.BASE.multiply(r).add(TORSION[tR]!).toBytes();
    const msg = messageWhere(rng, rBytes, aBytes, (k) => (BigInt(tR) + k * BigInt(tA)) % 8n === 0n);
    return { publicKey: aBytes, message: msg, signature: signWith(r, rBytes, s.a, aBytes, msg) };
  }],
  ["mixed-order R, prime-order A (never holds)", (rng, signers) => {
    const s = rng.pick(signers);
    const r = rng.scalar();
    const rBytes = Point.BASE.multiply(r).add(TORSION[1 + rng.below(7)]!).toBytes();
    const msg = message(rng);
    return { publicKey: s.aBytes, message: msg, signature: signWith(r, rBytes, s.a, s.aBytes, msg) };
  }],
  ["non-canonical A (y = p+k, either sign)", (rng, signers) => {
    const { msg, sig } = honest(rng, signers);
    return { publicKey: nonCanonicalY(rng.below(19), rng.below(2)), message: msg, signature: sig };
  }],
  ["non-canonical R (y = p+k, either sign)", (rng, signers) => {
    const s = rng.pick(signers);
    const msg = message(rng);
    return { publicKey: s.aBytes, message: msg, signature: signWith(rng.scalar(), nonCanonicalY(rng.below(19), rng.below(2)), s.a, s.aBytes, msg) };
  }],
  ["non-canonical A and R", (rng) => ({
    publicKey: nonCanonicalY(rng.below(19), rng.below(2)),
    message: message(rng),
    signature: concatBytes(nonCanonicalY(rng.below(19), rng.below(2)), le32(rng.scalar())),
  })],
  ["x = 0 with the sign bit (A or R)", (rng, signers) => {
    const { s, msg, sig } = honest(rng, signers);
    const enc = rng.pick(SMALL_ORDER_ENCODINGS.filter((e) => (e[31]! & 0x80) !== 0 && (e[0] === 0x01 || e[0] === 0xec || e[0] === 0xee)));
    return rng.below(2) === 0
      ? { publicKey: enc, message: msg, signature: sig }
      : { publicKey: s.aBytes, message: msg, signature: concatBytes(enc, sig.subarray(32)) };
  }],
  ["A not on the curve", (rng, signers) => {
    const { msg, sig } = honest(rng, signers);
    const y = offCurveY(rng);
    y[31]! |= rng.below(2) << 7;
    return { publicKey: y, message: msg, signature: sig };
  }],
  ["R not on the curve (canonical y)", (rng, signers) => {
    const { s, msg, sig } = honest(rng, signers);
    return { publicKey: s.aBytes, message: msg, signature: concatBytes(offCurveY(rng), sig.subarray(32)) };
  }],
  ["random R, S < L, real key", (rng, signers) => ({
    publicKey: rng.pick(signers).aBytes,
    message: message(rng),
    signature: concatBytes(rng.bytes(32), le32(rng.scalar())),
  })],
  ["random bytes", (rng) => ({ publicKey: rng.bytes(32), message: message(rng), signature: rng.bytes(64) })],
  ["wrong lengths", (rng, signers) => {
    const { s, msg, sig } = honest(rng, signers);
    return rng.below(2) === 0
      ? { publicKey: rng.pick([s.aBytes.subarray(0, 31), concatBytes(s.aBytes, Uint8Array.of(0)), new Uint8Array(0)]), message: msg, signature: sig }
      : { publicKey: s.aBytes, message: msg, signature: rng.pick([sig.subarray(0, 63), concatBytes(sig, Uint8Array.of(0)), new Uint8Array(0)]) };
  }],
];

/** `count` cases, cycling through CLASSES, deterministic in `seed`. */
export function* ed25519Cases(seed: number, count: number): Generator<Ed25519Case> {
  const rng = new Rng(seed);
  const signers = Array.from({ length: 16 }, () => makeSigner(rng));
  for (let i = 0; i < count; i++) {
    const [inputClass, make] = CLASSES[i % CLASSES.length]!;
    yield { ...make(rng, signers), inputClass };
  }
}

/** OpenSSL's own verdict with no strict checks in front (what a naive fast path would return). */
export function opensslAlone(c: Ed25519Case): boolean {
  if (c.publicKey.length !== 32 || c.signature.length !== 64) return false;
  try {
    const der = concatBytes(Uint8Array.of(0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00), c.publicKey);
    return verify(null, c.message, createPublicKey({ key: Buffer.from(der), format: "der", type: "spki" }), c.signature);
  } catch {
    return false;
  }
}

interface ClassTally {
  cases: number;
  accepted: number;
  routes: Record<string, number>;
  opensslAloneDisagrees: number;
  mismatches: number;
}

const FUZZ_ED25519_USAGE = "usage: fuzz-ed25519 [--count N] [--seed S] [--json]";

function main(argv: string[]): void {
  checkScriptArgs(argv, FUZZ_ED25519_USAGE, ["--count", "--seed"], ["--json"]);
  const arg = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const count = Number(arg("--count") ?? "100000");
  const seed = Number(arg("--seed") ?? "1");
  const json = argv.includes("--json");
  if (!Number.isSafeInteger(count) || count < 1 || !Number.isSafeInteger(seed)) {
    process.stderr.write(`${FUZZ_ED25519_USAGE}\n`);
    process.exit(2);
  }
  const tallies = new Map<string, ClassTally>(CLASSES.map(([name]) => [name, { cases: 0, accepted: 0, routes: {}, opensslAloneDisagrees: 0, mismatches: 0 }]));
  const failures: string[] = [];
  let stop = false;
  process.once("SIGINT", () => (stop = true));
  process.once("SIGTERM", () => (stop = true));
  const started = performance.now();
  let done = 0;
  for (const c of ed25519Cases(seed, count)) {
    if (stop) break;
    const t = tallies.get(c.inputClass)!;
    const reference = verifyStrictDetailed(c.publicKey, c.message, c.signature).valid;
    const fast = ed25519VerifyStrict(c.publicKey, c.message, c.signature);
    const route = strictRoute(c.publicKey, c.signature);
    const routeName = route.kind === "reject" ? `reject: ${route.reason}` : route.kind === "reference" ? `reference: ${route.inputClass}` : "openssl";
    t.cases++;
    if (reference) t.accepted++;
    t.routes[routeName] = (t.routes[routeName] ?? 0) + 1;
    if (opensslAlone(c) !== reference) t.opensslAloneDisagrees++;
    if (fast !== reference) {
      t.mismatches++;
      failures.push(`${c.inputClass}: reference=${reference} fast=${fast} pub=${toHex(c.publicKey)} msg=${toHex(c.message)} sig=${toHex(c.signature)}`);
    }
    done++;
    if (!json && done % 10_000 === 0) process.stderr.write(`fuzz-ed25519: ${done}/${count}\n`);
  }
  const seconds = (performance.now() - started) / 1000;
  const summary = {
    seed,
    cases: done,
    seconds: Number(seconds.toFixed(1)),
    mismatches: failures.length,
    classes: Object.fromEntries(tallies),
    failures: failures.slice(0, 20),
  };
  if (json) process.stdout.write(JSON.stringify(summary, null, 2) + "\n");
  else {
    for (const [name, t] of tallies) {
      const routes = Object.entries(t.routes).map(([r, n]) => `${r}=${n}`).join(", ");
      process.stdout.write(`${name}: ${t.cases} cases, ${t.accepted} valid, OpenSSL alone wrong ${t.opensslAloneDisagrees}, mismatches ${t.mismatches}\n    routes: ${routes}\n`);
    }
    for (const f of failures.slice(0, 20)) process.stdout.write(`FAIL ${f}\n`);
    process.stdout.write(`fuzz-ed25519: ${done} cases (seed ${seed}) in ${seconds.toFixed(1)} s, ${failures.length} mismatches\n`);
  }
  process.exit(failures.length > 0 || stop ? 1 : 0);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv.slice(2));
