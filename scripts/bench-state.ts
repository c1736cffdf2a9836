// State-commitment benchmark (docs/state.md "Performance"): one deterministic write workload run
// through our MemoryStateStore (QMDB "current", Blake3; state/qmdb/) and through @ethereumjs/mpt's
// MerklePatriciaTrie (keccak256, in-memory MapDB), to check CIP-4's claim that a flat QMDB is
// 10–100× a hexary MPT. Tooling only: timings are never asserted anywhere.
//
// Usage after `npm ci` (which builds dist/ through `prepare`) or `npm run build`:
//   node dist/scripts/bench-state.js [blocks=1000] [writesPerBlock=1000] [--seed N] [--no-profile]
//
// Workload: `blocks` blocks of `writesPerBlock` writes; each write is a 54-byte key
// (prefix 0x03 ActorStorage ‖ 53 random bytes) and a 100-byte value (0x04 StorageSlot ‖ 99 random
// bytes). From the second write on, 20 % of writes update a key written earlier (uniformly chosen),
// the rest create new keys. A seeded xoshiro128** drives everything, so both backends see the same
// bytes in the same order. Generating a block is not timed.
//
// Each block goes to both backends in turn (alternating which is first), so load from other
// processes falls on both alike. Run 1 uses the plain hashers (throughput). Run 2 (skip with
// --no-profile) repeats it with each hasher wrapped in a timer to get the share of time spent
// hashing; the wrapper's clock reads slow that run, so its totals are reported separately, and
// the cost of one clock read is measured and printed.
import { availableParallelism, cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { createMPT, type MerklePatriciaTrie } from "@ethereumjs/mpt";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesEqual, toHex } from "../src/bytes.js";
import { BLAKE3, type Hasher } from "../src/crypto/hash.js";
import { createStateCommitment } from "../state/qmdb/index.js";
import { StatePrefix } from "../state/keys.js";
import { MemoryStateStore } from "../state/store.js";
import { STATE_KEY_LENGTH } from "../state/interface.js";

const KEY_LENGTH = STATE_KEY_LENGTH;
const VALUE_LENGTH = 100;
const UPDATE_SHARE = 0.2;
const STORAGE_SLOT_TAG = 0x04;

interface Options {
  blocks: number;
  writesPerBlock: number;
  seed: number;
  profile: boolean;
}

function parseArgs(argv: string[]): Options {
  const positional: number[] = [];
  const options: Options = { blocks: 1000, writesPerBlock: 1000, seed: 0xc0ffee, profile: true };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--no-profile") options.profile = false;
    else if (arg === "--seed") options.seed = positiveInteger("--seed", argv[++i]);
    else positional.push(positiveInteger(`argument ${positional.length + 1}`, arg));
  }
  if (positional.length > 2) throw new Error("usage: bench-state [blocks] [writesPerBlock] [--seed N] [--no-profile]");
  options.blocks = positional[0] ?? options.blocks;
  options.writesPerBlock = positional[1] ?? options.writesPerBlock;
  return options;
}

function positiveInteger(what: string, text: string | undefined): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${what} must be a positive integer, got ${text}`);
  return n;
}

/** xoshiro128** seeded through splitmix32: small, fast, and the same sequence on every run. */
class Prng {
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

type Write = [key: Uint8Array, value: Uint8Array];

/** Yields the writes of each block; the key list lives here, not in either backend. */
function* workload(o: Options): Generator<Write[]> {
  const prng = new Prng(o.seed);
  const keys: Uint8Array[] = [];
  for (let b = 0; b < o.blocks; b++) {
    const writes: Write[] = [];
    for (let w = 0; w < o.writesPerBlock; w++) {
      let key: Uint8Array;
      if (keys.length > 0 && prng.fraction() < UPDATE_SHARE) {
        key = keys[Math.floor(prng.fraction() * keys.length)]!;
      } else {
        key = new Uint8Array(KEY_LENGTH);
        key[0] = StatePrefix.ActorStorage;
        prng.fill(key, 1);
        keys.push(key);
      }
      const value = new Uint8Array(VALUE_LENGTH);
      value[0] = STORAGE_SLOT_TAG;
      writes.push([key, prng.fill(value, 1)]);
    }
    yield writes;
  }
}

interface HashTimer {
  ms: number;
  calls: number;
  bytes: number;
}

function timedHash(hash: (data: Uint8Array) => Uint8Array, timer: HashTimer): (data: Uint8Array) => Uint8Array {
  return (data) => {
    const start = performance.now();
    const digest = hash(data);
    timer.ms += performance.now() - start;
    timer.calls++;
    timer.bytes += data.length;
    return digest;
  };
}

/** One backend fed block by block; `apply` is timed, the rest is not. */
interface Backend {
  name: string;
  writes: number;
  totalMs: number;
  /** Time inside commit/root computation (QMDB commit; the MPT updates its root in every put). */
  rootMs: number;
  apply(height: bigint, block: readonly Write[]): Promise<void>;
  root(): Uint8Array;
  read(key: Uint8Array): Promise<Uint8Array | undefined>;
}

function qmdbBackend(hasher: Hasher): Backend {
  const store = new MemoryStateStore(createStateCommitment(hasher));
  const backend: Backend = {
    name: `QMDB current (${hasher.name}) via MemoryStateStore`,
    writes: 0,
    totalMs: 0,
    rootMs: 0,
    async apply(height, block) {
      const t0 = performance.now();
      const batch = store.beginBlock(height);
      for (const [key, value] of block) batch.put(key, value);
      const t1 = performance.now();
      store.commitBlock(batch);
      const t2 = performance.now();
      backend.totalMs += t2 - t0;
      backend.rootMs += t2 - t1;
      backend.writes += block.length;
    },
    root: () => store.root(),
    read: async (key) => store.read(key),
  };
  return backend;
}

async function mptBackend(hash: (data: Uint8Array) => Uint8Array): Promise<Backend> {
  // Plain (not "secure") trie: the keys are already random, so hashing them would only add work.
  const trie: MerklePatriciaTrie = await createMPT({ useKeyHashingFunction: hash });
  const backend: Backend = {
    name: "MPT (@ethereumjs/mpt, keccak256, MapDB)",
    writes: 0,
    totalMs: 0,
    rootMs: 0,
    async apply(_height, block) {
      const t0 = performance.now();
      for (const [key, value] of block) await trie.put(key, value);
      trie.root();
      const ms = performance.now() - t0;
      backend.totalMs += ms;
      backend.rootMs += ms;
      backend.writes += block.length;
    },
    root: () => trie.root(),
    read: async (key) => (await trie.get(key)) ?? undefined,
  };
  return backend;
}

/**
 * Feeds every block to both backends, alternating which goes first, so load from other
 * processes on a shared machine falls on both alike. Reads back the final value of a sample
 * of keys from both (untimed) to show both did the work.
 */
async function run(o: Options, backends: readonly Backend[]): Promise<void> {
  const sample = new Map<string, [Uint8Array, Uint8Array]>();
  let n = 0;
  let height = 0n;
  const step = Math.max(1, Math.floor(o.blocks / 10));
  let lastMs = backends.map((b) => b.totalMs);
  for (const block of workload(o)) {
    height++;
    const order = height % 2n === 0n ? backends : [...backends].reverse();
    for (const backend of order) await backend.apply(height, block);
    if (Number(height) % step === 0) {
      // Progress on stderr: cost per write over the last interval shows how each scales with size.
      const interval = backends.map((b, i) => `${b.name.split(" ")[0]} ${usPerWrite(b.totalMs - lastMs[i]!, step * o.writesPerBlock)} µs/write`);
      console.error(`  block ${height}/${o.blocks}: ${interval.join(", ")}`);
      lastMs = backends.map((b) => b.totalMs);
    }
    for (const [key, value] of block) {
      const hex = toHex(key);
      if (n++ % 997 === 0 || sample.has(hex)) sample.set(hex, [key, value]);
    }
  }
  for (const [key, value] of sample.values()) {
    for (const backend of backends) {
      const got = await backend.read(key);
      if (got === undefined || !bytesEqual(got, value)) throw new Error(`${backend.name} lost the value of ${toHex(key)}`);
    }
  }
}

/** Cost of one performance.now() read; the wrapper adds about two per hash call. */
function clockReadNs(): number {
  const n = 1_000_000;
  const start = performance.now();
  for (let i = 0; i < n; i++) performance.now();
  return ((performance.now() - start) / n) * 1e6;
}

const loadAverage = () => loadavg().map((l) => l.toFixed(2)).join(" ");
const rate = (writes: number, ms: number) => Math.round((writes / ms) * 1000);
const usPerWrite = (ms: number, writes: number) => ((ms * 1000) / writes).toFixed(2);
const pct = (part: number, whole: number) => ((100 * part) / whole).toFixed(1);

/** Run 1: plain hashers. Returns the final roots only, so both backends can be freed before run 2. */
async function throughputRun(o: Options): Promise<[qmdbRoot: Uint8Array, mptRoot: Uint8Array]> {
  const qmdb = qmdbBackend(BLAKE3);
  const mpt = await mptBackend(keccak_256);
  await run(o, [qmdb, mpt]);
  console.log(
    `${qmdb.name}: ${qmdb.totalMs.toFixed(0)} ms, ${rate(qmdb.writes, qmdb.totalMs)} writes/s, ` +
      `${usPerWrite(qmdb.totalMs, qmdb.writes)} µs/write; commit+root ${usPerWrite(qmdb.rootMs, qmdb.writes)} µs/write ` +
      `(${pct(qmdb.rootMs, qmdb.totalMs)} % of its time)`,
  );
  console.log(
    `${mpt.name}: ${mpt.totalMs.toFixed(0)} ms, ${rate(mpt.writes, mpt.totalMs)} writes/s, ` +
      `${usPerWrite(mpt.totalMs, mpt.writes)} µs/write (every put rehashes its path: all of it is root update)`,
  );
  console.log(`load average after run 1: ${loadAverage()}`);
  console.log(`throughput ratio QMDB/MPT: ${(mpt.totalMs / qmdb.totalMs).toFixed(1)}×`);
  console.log(`sampled keys read back equal on both; final roots: QMDB ${toHex(qmdb.root())}, MPT ${toHex(mpt.root())}`);
  return [qmdb.root(), mpt.root()];
}

/** Run 2: the same workload with timed hashers; must reproduce run 1's roots. */
async function profileRun(o: Options, [qmdbRoot, mptRoot]: [Uint8Array, Uint8Array]): Promise<void> {
  const blake = { ms: 0, calls: 0, bytes: 0 };
  const keccak = { ms: 0, calls: 0, bytes: 0 };
  const qmdb = qmdbBackend({ name: "blake3", hash: timedHash(BLAKE3.hash, blake) });
  const mpt = await mptBackend(timedHash(keccak_256, keccak));
  await run(o, [qmdb, mpt]);
  if (!bytesEqual(qmdb.root(), qmdbRoot) || !bytesEqual(mpt.root(), mptRoot)) {
    throw new Error("the profiled run produced a different root");
  }
  console.log(`profile: second run with the hasher wrapped in performance.now() (one clock read ≈ ${clockReadNs().toFixed(0)} ns)`);
  for (const [name, backend, t] of [["QMDB Blake3", qmdb, blake], ["MPT keccak256", mpt, keccak]] as const) {
    console.log(
      `  ${name}: ${t.calls} calls (${(t.calls / backend.writes).toFixed(1)}/write, ${(t.bytes / t.calls).toFixed(0)} B avg), ` +
        `${t.ms.toFixed(0)} ms = ${pct(t.ms, backend.totalMs)} % of that backend's ${backend.totalMs.toFixed(0)} ms`,
    );
  }
  console.log(`ratio of the profiled run: ${(mpt.totalMs / qmdb.totalMs).toFixed(1)}×; load average after run 2: ${loadAverage()}`);
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  console.log(`machine: ${availableParallelism()} cores, ${cpus()[0]?.model ?? "unknown CPU"}, node ${process.version}`);
  console.log(`load average at start: ${loadAverage()} (other processes share the cores)`);
  console.log(
    `workload: ${o.blocks} blocks × ${o.writesPerBlock} writes, ${KEY_LENGTH}-byte keys, ${VALUE_LENGTH}-byte values, ` +
      `${UPDATE_SHARE * 100} % updates, seed ${o.seed}`,
  );
  const roots = await throughputRun(o);
  if (o.profile) await profileRun(o, roots);
}

main().catch((err: unknown) => {
  console.error(`bench-state: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
