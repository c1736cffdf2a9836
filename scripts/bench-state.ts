// State-commitment benchmark (docs/spec/state.md "Performance"): one deterministic write workload run
// through our MemoryStateStore (QMDB "current", Blake3; state/qmdb/) and, unless --qmdb-only,
// through @ethereumjs/mpt's MerklePatriciaTrie (keccak256, in-memory MapDB), to check CIP-4's
// claim that a flat QMDB is 10–100× a hexary MPT, and how the QMDB's rate and memory behave as
// the state grows. Tooling only: timings are never asserted anywhere.
//
// Usage after `npm ci` (which builds dist/ through `prepare`) or `npm run build`:
//   node dist/scripts/bench-state.js [blocks=1000] [writesPerBlock=1000] [--seed N]
//        [--qmdb-only] [--backend memory|lmdb] [--with-memory] [--lmdb-index] [--dir <path>] [--no-sync]
//        [--no-profile] [--json] [--svg <file>] [--baseline [label=]<dist dir of another build>]...
//
// --backend lmdb runs the QMDB on its persistent storage (state/lmdb/): each block is applied,
// then written in one LMDB write transaction (the ChainDb's per-block commit, without the block
// records), timed as part of the block. It needs a directory (--dir, default a fresh one under the
// OS temp dir, removed at the end) and reports the store's size on disk per live key. --with-memory
// adds the in-memory QMDB as a second backend fed the same blocks in alternation, for the
// LMDB/memory throughput ratio measured in one run (memory figures then include both: run without
// it for the LMDB process's own heap, external and RSS per live key). --lmdb-index keeps the key
// index in an LMDB table instead of in memory (state/lmdb/qmdb-storage.ts IndexPlacement). --no-sync opens the store
// without fsync (benchmarks only; see docs/spec/state.md for the sync policy).
//
// --baseline (repeatable) runs the QMDB of another build of this repository (its compiled `dist/`
// folder) as one more backend in the same process, fed the same blocks in turn: a before/after
// comparison measured in one run, so machine load falls on all alike; identical roots required.
//
// Each block is timed in wall-clock and CPU time (process.cpuUsage: user + system). On a shared
// machine CPU time is the steadier figure (it does not count waiting for a core); the per-segment
// rates on stderr and in the chart are writes per CPU-second.
//
// Workload (scripts/state-workload.ts): `blocks` blocks of `writesPerBlock` writes; each write is a
// 54-byte key (prefix 0x03 ActorStorage ‖ 53 pseudo-random bytes) and a 100-byte value (0x04
// StorageSlot ‖ 99 pseudo-random bytes). From the second write on, 20 % of writes update a key
// written earlier (uniformly chosen), the rest create new keys. Key i is regenerated from (seed, i)
// when needed, so the script itself holds no per-key data and the process's memory growth is the
// store's. Generating a block is not timed.
//
// Each block goes to every backend in turn (alternating which is first), so load from other
// processes falls on all alike. Run 1 uses the plain hashers (throughput, memory). Run 2 (skip
// with --no-profile) repeats it with each hasher wrapped in a timer to get the share of time
// spent hashing. The final figures are the last lines of the output (or one JSON document with
// --json; progress always goes to stderr).
import { writeOutputFile } from "../src/output-file.js";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { availableParallelism, cpus, loadavg } from "node:os";
import { performance } from "node:perf_hooks";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { createMPT, type MerklePatriciaTrie } from "@ethereumjs/mpt";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { bytesEqual, toHex } from "../src/bytes.js";
import { BLAKE3, type Hasher } from "../src/crypto/hash.js";
import { createStateCommitment } from "../state/qmdb/index.js";
import { MemoryStateStore } from "../state/store/store.js";
import type { StateCommitment } from "../state/kv/commitment.js";
import { lineChartSvg } from "./chart.js";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Env } from "../state/lmdb/env.js";
import { LmdbQmdbStorage } from "../state/lmdb/qmdb-storage.js";
import { STATE_CHUNK_BYTES } from "../state/qmdb/index.js";
import { exitOnHelp, usageExit } from "./script-args.js";
import { KEY_LENGTH, stateWorkload, UPDATE_SHARE, VALUE_LENGTH, type Write } from "./state-workload.js";

/** Points along the run for the progress lines and the chart. */
const SEGMENTS = 50;
const BACKENDS = ["memory", "lmdb"] as const;

interface Options {
  blocks: number;
  writesPerBlock: number;
  seed: number;
  profile: boolean;
  mpt: boolean;
  backend: (typeof BACKENDS)[number];
  json: boolean;
  svg: string | undefined;
  baselines: string[];
  withMemory: boolean;
  lmdbIndex: boolean;
  dir: string | undefined;
  noSync: boolean;
}

const USAGE =
  "usage: bench-state [blocks] [writesPerBlock] [--seed N] [--qmdb-only] [--backend memory|lmdb] [--with-memory] [--lmdb-index] [--dir path] [--no-sync] [--no-profile] [--json] [--svg file] [--baseline [label=]dist-dir]...";

function parseArgs(argv: string[]): Options {
  exitOnHelp(argv, USAGE);
  const positional: number[] = [];
  const options: Options = {
    blocks: 1000,
    writesPerBlock: 1000,
    seed: 0xc0ffee,
    profile: true,
    mpt: true,
    backend: "memory",
    json: false,
    svg: undefined,
    baselines: [],
    withMemory: false,
    lmdbIndex: false,
    dir: undefined,
    noSync: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--no-profile") options.profile = false;
    else if (arg === "--qmdb-only") options.mpt = false;
    else if (arg === "--json") options.json = true;
    else if (arg === "--with-memory") options.withMemory = true;
    else if (arg === "--lmdb-index") options.lmdbIndex = true;
    else if (arg === "--no-sync") options.noSync = true;
    else if (arg === "--dir") options.dir = argv[++i] ?? fail("--dir needs a path");
    else if (arg === "--seed") options.seed = positiveInteger("--seed", argv[++i]);
    else if (arg === "--svg") options.svg = argv[++i] ?? fail("--svg needs a file name");
    else if (arg === "--baseline") options.baselines.push(argv[++i] ?? fail("--baseline needs a directory"));
    else if (arg === "--backend") {
      const name = argv[++i];
      if (!(BACKENDS as readonly string[]).includes(name ?? "")) fail(`--backend must be one of ${BACKENDS.join(", ")}`);
      options.backend = name as Options["backend"];
    } else if (arg.startsWith("--")) fail(`unknown option ${arg}`);
    else positional.push(positiveInteger(`argument ${positional.length + 1}`, arg));
  }
  if (positional.length > 2) fail("too many arguments");
  options.blocks = positional[0] ?? options.blocks;
  options.writesPerBlock = positional[1] ?? options.writesPerBlock;
  return options;
}

function fail(message: string): never {
  return usageExit("bench-state", message, USAGE);
}

function positiveInteger(what: string, text: string | undefined): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 1) fail(`${what} must be a positive integer, got ${text}`);
  return n;
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
  short: string;
  writes: number;
  totalMs: number;
  /** CPU time (user + system of the process) over the same spans as totalMs. */
  cpuMs: number;
  /** Time inside commit/root computation (QMDB commit; the MPT updates its root in every put). */
  rootMs: number;
  /** Writes per CPU-second of each segment of the run. */
  segments: number[];
  apply(height: bigint, block: readonly Write[]): Promise<void>;
  /** Bytes on disk (persistent backends). */
  diskBytes?: () => number;
  root(): Uint8Array;
  read(key: Uint8Array): Promise<Uint8Array | undefined>;
}

interface StoreModules {
  MemoryStateStore: new (commitment: StateCommitment) => MemoryStateStore;
  createStateCommitment: (hasher: Hasher) => StateCommitment;
}

const THIS_BUILD: StoreModules = { MemoryStateStore, createStateCommitment };

/** The store classes of another build's dist/ folder (--baseline). */
async function loadBuild(dir: string): Promise<StoreModules> {
  const url = (path: string) => pathToFileURL(resolve(dir, path)).href;
  const store = (await import(url("state/store/store.js"))) as { MemoryStateStore: StoreModules["MemoryStateStore"] };
  const qmdb = (await import(url("state/qmdb/index.js"))) as { createStateCommitment: StoreModules["createStateCommitment"] };
  return { MemoryStateStore: store.MemoryStateStore, createStateCommitment: qmdb.createStateCommitment };
}

/** Directories of the LMDB stores this run opened (removed at the end unless --dir was given). */
const stores: { env: Env; temporary: boolean }[] = [];

function lmdbStore(o: Options, hasher: Hasher): { store: MemoryStateStore; write: () => void; env: Env } {
  const dir = o.dir === undefined ? mkdtempSync(join(tmpdir(), "bench-state-")) : join(o.dir, `store-${stores.length}`);
  const env = Env.open(dir, { noSync: o.noSync });
  stores.push({ env, temporary: o.dir === undefined });
  const storage = new LmdbQmdbStorage(env, STATE_CHUNK_BYTES, o.lmdbIndex ? "lmdb" : "memory");
  const store = new MemoryStateStore(createStateCommitment(hasher, storage));
  return {
    store,
    env,
    write: () => {
      env.transaction(() => storage.writePending());
      storage.markWritten();
    },
  };
}

function qmdbBackend(o: Options, hasher: Hasher, build: StoreModules = THIS_BUILD, label = "", kind: Options["backend"] = o.backend): Backend {
  const lmdb = kind === "lmdb" && build === THIS_BUILD ? lmdbStore(o, hasher) : undefined;
  const store = lmdb?.store ?? new build.MemoryStateStore(build.createStateCommitment(hasher));
  const backend: Backend = {
    name: `QMDB current (${hasher.name}, ${lmdb === undefined ? "memory" : `lmdb, key index in ${o.lmdbIndex ? "lmdb" : "memory"}${o.noSync ? ", no sync" : ""}`}) via MemoryStateStore${label}`,
    short: label !== "" ? "baseline" : kind === o.backend ? "QMDB" : kind,
    writes: 0,
    totalMs: 0,
    cpuMs: 0,
    rootMs: 0,
    segments: [],
    async apply(height, block) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      const batch = store.beginBlock(height);
      for (const [key, value] of block) batch.put(key, value);
      const t1 = performance.now();
      store.commitBlock(batch);
      const t2 = performance.now();
      lmdb?.write();
      const t3 = performance.now();
      backend.cpuMs += cpuMsSince(c0);
      backend.totalMs += t3 - t0;
      backend.rootMs += t2 - t1;
      backend.writes += block.length;
    },
    root: () => store.root(),
    read: async (key) => store.read(key),
    ...(lmdb === undefined ? {} : { diskBytes: () => lmdb.env.diskBytes() }),
  };
  return backend;
}

async function mptBackend(hash: (data: Uint8Array) => Uint8Array): Promise<Backend> {
  // Plain (not "secure") trie: the keys are already random, so hashing them would only add work.
  const trie: MerklePatriciaTrie = await createMPT({ useKeyHashingFunction: hash });
  const backend: Backend = {
    name: "MPT (@ethereumjs/mpt, keccak256, MapDB)",
    short: "MPT",
    writes: 0,
    totalMs: 0,
    cpuMs: 0,
    rootMs: 0,
    segments: [],
    async apply(_height, block) {
      const c0 = process.cpuUsage();
      const t0 = performance.now();
      for (const [key, value] of block) await trie.put(key, value);
      trie.root();
      const ms = performance.now() - t0;
      backend.cpuMs += cpuMsSince(c0);
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
 * Feeds every block to every backend, alternating which goes first. Records writes/s per
 * segment, and reads back the final value of a sample of keys from all (untimed) to show each
 * did the work. Returns the number of live keys.
 */
async function run(o: Options, backends: readonly Backend[]): Promise<number> {
  const w = stateWorkload(o);
  const sample = new Map<string, [Uint8Array, Uint8Array]>();
  let n = 0;
  let height = 0n;
  const step = Math.max(1, Math.floor(o.blocks / SEGMENTS));
  let lastMs = backends.map((b) => b.cpuMs);
  for (const block of w.blocks) {
    height++;
    const order = height % 2n === 0n ? backends : [...backends].reverse();
    for (const backend of order) await backend.apply(height, block);
    if (Number(height) % step === 0) {
      backends.forEach((b, i) => b.segments.push(rate(step * o.writesPerBlock, b.cpuMs - lastMs[i]!)));
      const interval = backends.map((b) => `${b.short} ${b.segments[b.segments.length - 1]!.toLocaleString("en-US")} writes/CPU-s`);
      console.error(`  block ${height}/${o.blocks} (${w.keys().toLocaleString("en-US")} live keys): ${interval.join(", ")}`);
      lastMs = backends.map((b) => b.cpuMs);
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
  return w.keys();
}

/** Full garbage collection, so memory figures count live data only. */
function collectGarbage(): void {
  setFlagsFromString("--expose-gc");
  (runInNewContext("gc") as () => void)();
}

interface Memory {
  rss: number;
  /** JS heap plus memory outside it held by JS objects (typed-array stores). */
  heap: number;
}

function memory(): Memory {
  collectGarbage();
  const m = process.memoryUsage();
  return { rss: m.rss, heap: m.heapUsed + m.external };
}

/** Cost of one performance.now() read; the wrapper adds about two per hash call. */
function clockReadNs(): number {
  const n = 1_000_000;
  const start = performance.now();
  for (let i = 0; i < n; i++) performance.now();
  return ((performance.now() - start) / n) * 1e6;
}

const cpuMsSince = (start: NodeJS.CpuUsage): number => {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
};
const loadAverage = () => loadavg().map((l) => l.toFixed(2)).join(" ");
const rate = (writes: number, ms: number) => Math.round((writes / ms) * 1000);
const usPerWrite = (ms: number, writes: number) => +((ms * 1000) / writes).toFixed(2);
const pct = (part: number, whole: number) => +((100 * part) / whole).toFixed(1);
const num = (n: number) => n.toLocaleString("en-US");

/** Mean of the first and last tenth of the segments: is the rate flat along the run? */
function tenths(segments: readonly number[]): { first: number; last: number } {
  const k = Math.max(1, Math.floor(segments.length / 10));
  const mean = (xs: readonly number[]) => Math.round(xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length));
  return { first: mean(segments.slice(0, k)), last: mean(segments.slice(-k)) };
}

function summary(b: Backend) {
  return {
    name: b.name,
    ms: Math.round(b.totalMs),
    cpuMs: Math.round(b.cpuMs),
    writesPerSecond: rate(b.writes, b.totalMs),
    writesPerCpuSecond: rate(b.writes, b.cpuMs),
    usPerWrite: usPerWrite(b.totalMs, b.writes),
    rootUsPerWrite: usPerWrite(b.rootMs, b.writes),
    rootShare: pct(b.rootMs, b.totalMs),
    ...(() => {
      const t = tenths(b.segments);
      return { firstTenthWritesPerCpuSecond: t.first, lastTenthWritesPerCpuSecond: t.last };
    })(),
    segments: b.segments,
    root: toHex(b.root()),
  };
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const log = (line: string) => (o.json ? console.error(line) : console.log(line));
  const machine = `${availableParallelism()} cores, ${cpus()[0]?.model ?? "unknown CPU"}, node ${process.version}`;
  const loadStart = loadAverage();
  log(`machine: ${machine}`);
  log(`load average at start: ${loadStart} (other processes share the cores)`);
  log(
    `workload: ${o.blocks} blocks × ${o.writesPerBlock} writes, ${KEY_LENGTH}-byte keys, ${VALUE_LENGTH}-byte values, ` +
      `${UPDATE_SHARE * 100} % updates, seed ${o.seed}${o.mpt ? "" : ", QMDB only"}`,
  );

  // Run 1: plain hashers.
  const before = memory();
  const qmdb = qmdbBackend(o, BLAKE3);
  const backends = [qmdb];
  if (o.mpt) backends.push(await mptBackend(keccak_256));
  const inMemory = o.withMemory && o.backend === "lmdb" ? qmdbBackend(o, BLAKE3, THIS_BUILD, "", "memory") : undefined;
  if (inMemory !== undefined) backends.push(inMemory);
  const baselines: Backend[] = [];
  for (const spec of o.baselines) {
    const eq = spec.indexOf("=");
    const [label, dir] = eq > 0 ? [spec.slice(0, eq), spec.slice(eq + 1)] : [spec, spec];
    const backend = qmdbBackend(o, BLAKE3, await loadBuild(dir), ` [baseline ${label}]`);
    backend.short = label;
    baselines.push(backend);
  }
  backends.push(...baselines);
  const liveKeys = await run(o, backends);
  const after = memory();
  const loadRun1 = loadAverage();
  const q = summary(qmdb);
  const m = o.mpt ? summary(backends[1]!) : undefined;
  const bs = baselines.map(summary);
  for (const b of bs) if (b.root !== q.root) throw new Error(`${b.name} computed a different root`);
  const memoryFigures = {
    liveKeys,
    rssBytesPerLiveKey: Math.round((after.rss - before.rss) / liveKeys),
    heapBytesPerLiveKey: Math.round((after.heap - before.heap) / liveKeys),
    rssBytes: after.rss,
    heapBytes: after.heap,
    includesOtherBackends: backends.length > 1,
    ...(qmdb.diskBytes === undefined ? {} : { diskBytes: qmdb.diskBytes(), diskBytesPerLiveKey: Math.round(qmdb.diskBytes() / liveKeys) }),
  };
  const mem = inMemory === undefined ? undefined : summary(inMemory);
  const qmdbRoot = qmdb.root();
  const mptRoot = m === undefined ? undefined : backends[1]!.root();
  backends.length = 0; // free run 1 before run 2

  let profile: Record<string, unknown> | undefined;
  if (o.profile) {
    const blake = { ms: 0, calls: 0, bytes: 0 };
    const keccak = { ms: 0, calls: 0, bytes: 0 };
    const pq = qmdbBackend(o, { name: "blake3", hash: timedHash(BLAKE3.hash, blake) });
    const pb = [pq];
    if (o.mpt) pb.push(await mptBackend(timedHash(keccak_256, keccak)));
    await run(o, pb);
    if (!bytesEqual(pq.root(), qmdbRoot) || (mptRoot !== undefined && !bytesEqual(pb[1]!.root(), mptRoot))) {
      throw new Error("the profiled run produced a different root");
    }
    const share = (backend: Backend, t: HashTimer) => ({
      calls: t.calls,
      callsPerWrite: +(t.calls / backend.writes).toFixed(1),
      averageBytes: Math.round(t.bytes / Math.max(1, t.calls)),
      ms: Math.round(t.ms),
      shareOfBackend: pct(t.ms, backend.totalMs),
      backendMs: Math.round(backend.totalMs),
    });
    profile = {
      clockReadNs: Math.round(clockReadNs()),
      blake3: share(pq, blake),
      ...(o.mpt ? { keccak256: share(pb[1]!, keccak) } : {}),
      ratio: o.mpt ? +(pb[1]!.totalMs / pq.totalMs).toFixed(1) : undefined,
    };
  }
  const loadEnd = loadAverage();

  if (o.svg !== undefined) {
    const step = Math.max(1, Math.floor(o.blocks / SEGMENTS)) * o.writesPerBlock;
    const series = [q, ...(m ? [m] : []), ...bs].map((s) => ({ name: s.name, points: s.segments.map((r, i): [number, number] => [(i + 1) * step, r]) }));
    writeOutputFile(
      o.svg,
      lineChartSvg({
        title: `bench-state ${o.blocks} × ${o.writesPerBlock}: merkleized writes per CPU-second along the run`,
        note: `${machine}; load ${loadStart} → ${loadEnd}`,
        xLabel: "writes so far",
        yLabel: "writes per CPU-second (per segment)",
        series,
      }),
    );
  }

  const result = {
    machine,
    load: { start: loadStart, afterRun1: loadRun1, end: loadEnd },
    workload: { blocks: o.blocks, writesPerBlock: o.writesPerBlock, seed: o.seed, backend: o.backend, mpt: o.mpt },
    qmdb: { ...q, memory: memoryFigures },
    ...(m ? { mpt: m, ratio: +(m.ms / q.ms).toFixed(1) } : {}),
    baselines: bs.map((b) => ({ ...b, speedup: +(b.ms / q.ms).toFixed(2), cpuSpeedup: +(b.cpuMs / q.cpuMs).toFixed(2) })),
    ...(mem ? { memoryBackend: mem, lmdbOverMemory: +(q.ms / mem.ms).toFixed(2) } : {}),
    ...(profile ? { profile } : {}),
  };
  if (o.json) {
    process.stdout.write(JSON.stringify(result) + "\n");
    return;
  }
  if (profile !== undefined) {
    log(`profile (second run, hasher wrapped in performance.now(), one clock read ≈ ${profile.clockReadNs} ns):`);
    for (const name of ["blake3", "keccak256"] as const) {
      const p = profile[name] as ReturnType<typeof Object> | undefined;
      if (p !== undefined) log(`  ${name}: ${JSON.stringify(p)}`);
    }
  }
  log(`load average: ${loadStart} at start, ${loadRun1} after run 1, ${loadEnd} at the end`);
  log(`final roots: QMDB ${q.root}${m ? `, MPT ${m.root}` : ""}`);
  if (m) {
    log(`${m.name}: ${num(m.ms)} ms (${num(m.cpuMs)} ms CPU), ${num(m.writesPerSecond)} writes/s, ${m.usPerWrite} µs/write (all of it root update)`);
  }
  log(
    `${q.name}: ${num(q.ms)} ms (${num(q.cpuMs)} ms CPU), ${num(q.writesPerSecond)} writes/s (${num(q.writesPerCpuSecond)} per CPU-second), ${q.usPerWrite} µs/write; ` +
      `commit+root ${q.rootUsPerWrite} µs/write (${q.rootShare} %)`,
  );
  log(
    `QMDB memory: ${num(memoryFigures.rssBytesPerLiveKey)} B RSS and ${num(memoryFigures.heapBytesPerLiveKey)} B heap+external per live key ` +
      `(${num(liveKeys)} live keys${backends.length > 1 ? "; includes the other backends: use --qmdb-only for the QMDB alone" : ""})`,
  );
  for (const b of result.baselines) {
    log(
      `${b.name}: ${num(b.ms)} ms (${num(b.cpuMs)} ms CPU), ${num(b.writesPerSecond)} writes/s; per CPU-second, first tenth → last tenth ` +
        `${num(b.firstTenthWritesPerCpuSecond)} → ${num(b.lastTenthWritesPerCpuSecond)}; this build is ${b.speedup}× faster (wall), ${b.cpuSpeedup}× (CPU) in the same run`,
    );
  }
  log(`QMDB writes per CPU-second, first tenth → last tenth of the run: ${num(q.firstTenthWritesPerCpuSecond)} → ${num(q.lastTenthWritesPerCpuSecond)}`);
  if (m) log(`throughput ratio QMDB/MPT: ${result.ratio}×`);
  if (memoryFigures.diskBytes !== undefined) log(`LMDB store on disk: ${num(memoryFigures.diskBytes)} B, ${num(memoryFigures.diskBytesPerLiveKey ?? 0)} B per live key`);
  if (mem) {
    log(`${mem.name}: ${num(mem.ms)} ms, ${num(mem.writesPerSecond)} writes/s; per CPU-second, first tenth → last tenth ${num(mem.firstTenthWritesPerCpuSecond)} → ${num(mem.lastTenthWritesPerCpuSecond)}`);
    log(`LMDB time / in-memory time (same run, alternating blocks): ${result.lmdbOverMemory}×`);
  }
}

main()
  .catch((err: unknown) => {
    console.error(`bench-state: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  })
  .finally(() => {
    for (const { env, temporary } of stores) {
      env.close();
      if (temporary) rmSync(env.dir, { recursive: true, force: true });
    }
  });
