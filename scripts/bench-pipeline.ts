// Pipelined replay benchmark (docs/engineering/performance.md "Pipelined replay"): where the worker side's
// time goes, and whole replays plain and pipelined with each thread's CPU time. Tooling only; no
// test asserts a timing. Every time below is CPU time of one thread (/proc/<pid>/task/<tid>/schedstat,
// nanoseconds), which load from other processes does not inflate the way it inflates wall time.
//
//   node dist/scripts/bench-pipeline.js record --fixture lc.json.gz --jobs jobs.bin
//   node dist/scripts/bench-pipeline.js worker --jobs jobs.bin [--rounds 3]
//   node dist/scripts/bench-pipeline.js whole  --fixture lc.json.gz [--rounds 2] [--pipelined-only]
//
// record: a plain replay (not timed) writes down exactly what the commit worker is handed: each
//   block's state batch in the hand-off layout (WorkerCommitment `pack`), each block's rootsJob,
//   and every Ed25519 check the engine makes.
// worker: in a fresh process holding nothing but those jobs (as the worker's isolate does), the
//   worker's work alone, stage by stage, each stage `rounds` times (the minimum is reported):
//   the main thread's copy into the ring (pack), the worker's copy out (unpack), the QMDB commit
//   of every batch (with its Blake3), the same Blake3 calls alone (same input lengths), the
//   block roots (rootsOfJob), the same keccak256 calls alone, and the Ed25519 checks; the
//   collector's pauses in each stage (PerformanceObserver "gc"; helper threads' share apart).
// whole: whole replays alternating, plain and pipelined (P Q Q P …), each pipelined one with a
//   fresh ReplayPipeline as `cbqs replay --pipeline` starts one; per run the wall time and the
//   CPU time of the main thread, of the commit worker, and of every other thread together
//   (V8's helpers: parallel scavenges, concurrent marking, the optimizing compiler).
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { PerformanceObserver } from "node:perf_hooks";
import { blake3, keccak256, type Hasher } from "../src/crypto/hash.js";
import { ed25519VerifyStrict } from "../src/crypto/ed25519.js";
import { readFixture } from "../src/harness/documents.js";
import type { Fixture } from "../src/harness/fixture.js";
import { Replay, ReplayPipeline, replayFixture } from "../src/harness/replay.js";
import { ALL_FAST_PATHS, enginePaths } from "../src/engine/fast-paths.js";
import type { SignatureVerifier } from "../src/engine/meter.js";
import type { StateCommitment } from "../state/kv/commitment.js";
import { STATE_KEY_LENGTH } from "../state/kv/interface.js";
import { createStateCommitment } from "../state/qmdb/index.js";
import { JOB, pack, unpack } from "../state/commitment/worker-commitment.js";
import { MemoryStateStore } from "../state/store/store.js";
import { rootsJob, rootsOfJob } from "../state/roots/roots.js";
import { checkScriptArgs, exitOnHelp } from "./script-args.js";

const USAGE = `usage: bench-pipeline record --fixture f.json.gz --jobs jobs.bin
       bench-pipeline worker --jobs jobs.bin [--rounds N]
       bench-pipeline whole --fixture f.json.gz [--rounds N] [--pipelined-only]
`;
/** Kind of a recorded Ed25519 check in the jobs file (beside JOB.stateBatch and JOB.blockRoots). */
const SIGNATURE = 9;

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

/** CPU seconds a thread of this process has run (schedstat: nanoseconds on a CPU). */
function threadCpu(tid: number | "self"): number {
  const path = tid === "self" ? "/proc/thread-self/schedstat" : `/proc/self/task/${tid}/schedstat`;
  try {
    return Number(readFileSync(path, "utf8").split(" ")[0]) / 1e9;
  } catch {
    return NaN;
  }
}

const threads = (): number[] => readdirSync("/proc/self/task").map(Number);
/** Each thread's CPU seconds so far. */
const snapshot = (): Map<number, number> => new Map(threads().map((t) => [t, threadCpu(t) || 0]));
/** CPU seconds the threads alive now have run since `before` (a thread that ended meanwhile counts nothing). */
const cpuSince = (before: Map<number, number>): number => threads().reduce((sum, t) => sum + (threadCpu(t) || 0) - (before.get(t) ?? 0), 0);

// ---- record --------------------------------------------------------------------------------------

/** Writes a plain replay's worker jobs (see the head of this file): kind (u8), length (u32 BE), bytes. */
function record(fixture: Fixture, out: string): void {
  const parts: Uint8Array[] = [];
  const put = (kind: number, bytes: Uint8Array) => {
    const head = new Uint8Array(5);
    head[0] = kind;
    new DataView(head.buffer).setUint32(1, bytes.length);
    parts.push(head, bytes);
  };
  const qmdb = createStateCommitment();
  const recording: StateCommitment = {
    commitBatch(changes) {
      const list = [...changes];
      let size = 4;
      for (const [, value] of list) size += STATE_KEY_LENGTH + 4 + (value?.length ?? 0);
      const bytes = new Uint8Array(size);
      pack(list, bytes, new DataView(bytes.buffer), 0);
      put(JOB.stateBatch, bytes);
      return qmdb.commitBatch(list);
    },
    root: () => qmdb.root(),
    get: (key) => qmdb.get(key),
    entries: () => qmdb.entries(),
  };
  const recordingVerifier: SignatureVerifier = (publicKey, message, signature) => {
    const bytes = new Uint8Array(96 + message.length);
    bytes.set(publicKey, 0);
    bytes.set(signature, 32);
    bytes.set(message, 96);
    put(SIGNATURE, bytes);
    return ed25519VerifyStrict(publicKey, message, signature);
  };  const { replay, mismatch } = Replay.start(fixture, new MemoryStateStore(recording), enginePaths(ALL_FAST_PATHS, recordingVerifier));
  if (mismatch !== null) throw new Error(`genesis mismatch: ${mismatch.field}`);
  replay.rootsOf = (txHashes, receipts) => {
    const job = rootsJob(txHashes, receipts);
    put(JOB.blockRoots, job);
    return rootsOfJob(job.slice(), 0);
  };

  for (let i = 0; i < fixture.blocks.length; i++) {
    const { mismatch } = replay.block(i);
    if (mismatch !== null) throw new Error(`replay mismatch at block ${i}: ${mismatch.field}`);
  }
  const total = parts.reduce((n, p) => n + p.length, 0);
  const file = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    file.set(p, at);
    at += p.length;
  }
  writeFileSync(out, file);
  process.stdout.write(`recorded ${parts.length / 2} jobs (${(total / 2 ** 20).toFixed(1)} MiB) of ${fixture.blocks.length} blocks to ${out}\n`);
}

// ---- worker --------------------------------------------------------------------------------------

interface Jobs {
  batches: Uint8Array[];
  roots: Uint8Array[];
  signatures: [Uint8Array, Uint8Array, Uint8Array][];
}

function readJobs(file: string): Jobs {
  const bytes = new Uint8Array(readFileSync(file));
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const jobs: Jobs = { batches: [], roots: [], signatures: [] };
  for (let at = 0; at < bytes.length; ) {
    const kind = bytes[at]!;
    const length = view.getUint32(at + 1);
    const body = bytes.subarray(at + 5, at + 5 + length);
    at += 5 + length;
    if (kind === JOB.stateBatch) jobs.batches.push(body);
    else if (kind === JOB.blockRoots) jobs.roots.push(body);
    else if (kind === SIGNATURE) jobs.signatures.push([body.subarray(0, 32), body.subarray(96), body.subarray(32, 96)]);
    else throw new Error(`unknown job kind ${kind}`);
  }
  return jobs;
}

/** The collector's pauses on this thread: start and duration (ms, performance.now's clock). */
const pauses: { start: number; duration: number }[] = [];
/** Lets the observer deliver the pauses so far (it reports between event-loop turns). */
const delivered = () => new Promise<void>((resolve) => setTimeout(resolve, 10));

interface Stage {
  /** CPU seconds of this thread in the first round (code not yet optimized, as in a fresh worker). */
  first: number;
  /** CPU seconds of this thread, best of the rounds. */
  cpu: number;
  /** Of which the collector's pauses on this thread. */
  gc: number;
  /** CPU seconds of every other thread meanwhile (the collector's helpers, the compiler). */
  helpers: number;
}

async function stage(rounds: number, run: () => void): Promise<Stage> {
  let best: Stage | undefined;
  let first = 0;
  for (let r = 0; r < rounds; r++) {
    const [c, all, t] = [threadCpu("self"), snapshot(), performance.now()];
    run();
    const cpu = threadCpu("self") - c;
    const helpers = cpuSince(all) - cpu;
    const end = performance.now();
    await delivered();
    const gc = pauses.filter((p) => p.start >= t && p.start < end).reduce((sum, p) => sum + p.duration, 0) / 1000;
    if (r === 0) first = cpu;
    if (best === undefined || cpu < best.cpu) best = { first, cpu, gc, helpers };
  }
  return { ...best!, first };
}

/** Every input length a hasher is given while `run` runs with it. */
function lengthsOf(name: Hasher["name"], run: (hasher: Hasher) => void, hash: (data: Uint8Array) => Uint8Array): number[] {
  const lengths: number[] = [];
  run({
    name,
    hash(data) {
      lengths.push(data.length);
      return hash(data);
    },
  });
  return lengths;
}

function hashLengths(lengths: readonly number[], hash: (data: Uint8Array) => Uint8Array): void {
  const buffer = new Uint8Array(lengths.reduce((m, n) => Math.max(m, n), 0)).fill(0x5a);
  for (const n of lengths) hash(buffer.subarray(0, n));
}

async function worker(jobs: Jobs, rounds: number): Promise<void> {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) pauses.push({ start: e.startTime, duration: e.duration });
  }).observe({ entryTypes: ["gc"] });
  const ring = new Uint8Array(16 << 20);
  const ringView = new DataView(ring.buffer);
  const unpacked = jobs.batches.map((b) => unpack(b, 0));
  const commitAll = (hasher?: Hasher) => {
    const c = hasher === undefined ? createStateCommitment() : createStateCommitment(hasher);
    for (const b of jobs.batches) c.commitBatch(unpack(b, 0));
  };
  const rootsCopies = () => jobs.roots.map((j) => j.slice());
  const stages: [string, Stage][] = [];
  const add = async (name: string, run: () => void) => {
    stages.push([name, await stage(rounds, run)]);
    process.stderr.write(`  ${name}\n`);
  };
  process.stderr.write(`bench-pipeline: ${jobs.batches.length} state batches, ${jobs.roots.length} roots jobs, ${jobs.signatures.length} signatures; load ${load()}\n`);
  await add("hand-off, main side: pack every batch into the ring", () => {
    let at = 0;
    for (const changes of unpacked) {
      let size = 4;
      for (const [, v] of changes) size += STATE_KEY_LENGTH + 4 + (v?.length ?? 0);
      if (at + size > ring.length) at = 0;
      pack(changes, ring, ringView, at);
      at += size;
    }
  });
  await add("hand-off, worker side: unpack every batch", () => {
    for (const b of jobs.batches) unpack(b, 0);
  });
  await add("QMDB commit of every batch (unpack and Blake3 included)", () => commitAll());
  let copies = rootsCopies();
  await add("block roots: rootsOfJob of every block", () => {
    for (const j of copies) rootsOfJob(j, 0);
    copies = rootsCopies();
  });
  await add(`Ed25519: ${jobs.signatures.length} checks`, () => {
    for (const [pk, msg, sig] of jobs.signatures) ed25519VerifyStrict(pk, msg, sig);
  });
  // The hash calls alone, counted after the stages above ran cold.
  const blake3Lengths = lengthsOf("blake3", commitAll, blake3);
  const keccakLengths = lengthsOf("keccak256", (h) => jobs.roots.forEach((j) => rootsOfJob(j.slice(), 0, h)), keccak256);
  await add(`Blake3 alone, the commit's ${blake3Lengths.length} calls (${blake3Lengths.reduce((a, b) => a + b, 0)} bytes)`, () => hashLengths(blake3Lengths, blake3));
  await add(`keccak256 alone, the roots' ${keccakLengths.length} calls (${keccakLengths.reduce((a, b) => a + b, 0)} bytes)`, () => hashLengths(keccakLengths, keccak256));
  const s = (x: number) => x.toFixed(3).padStart(7);
  const out = (line: string) => process.stdout.write(line + "\n");
  out(`the commit worker's work alone, one thread (CPU s: the first round and the best of ${rounds}; node ${process.version}; load ${load()}):`);
  out(`  "GC": the collector's pauses on this thread in the best round (wall time, so inflated by load; part of the CPU columns)`);
  out(`  "helpers": CPU of every other thread meanwhile (the collector's helpers)`);
  out(`    first     best       GC  helpers  stage`);
  for (const [name, st] of stages) out(`  ${s(st.first)}  ${s(st.cpu)}  ${s(st.gc)}  ${s(st.helpers)}  ${name}`);
  const get = (prefix: string) => stages.find(([n]) => n.startsWith(prefix))![1].cpu;
  const commit = get("QMDB commit");
  const b3 = get("Blake3 alone");
  const unpackCpu = get("hand-off, worker side");
  out(`  QMDB bookkeeping without Blake3 and unpack: ${s(commit - b3 - unpackCpu)}`);
  out(`  block roots without keccak256:             ${s(get("block roots") - get("keccak256 alone"))}`);
  out(`  the worker's work (commit with its unpack, roots, Ed25519): ${s(commit + get("block roots") + get("Ed25519"))}`);
}

// ---- whole ---------------------------------------------------------------------------------------

interface Run {
  wall: number;
  main: number;
  worker: number;
  others: number;
}

function whole(fixture: Fixture, rounds: number, pipelinedOnly: boolean): void {
  const runs: { plain: Run[]; pipelined: Run[] } = { plain: [], pipelined: [] };
  const one = (pipelined: boolean): Run => {
    const t = performance.now();
    const [m, all] = [threadCpu("self"), snapshot()];
    let workerCpu = 0;
    let outcome;
    if (pipelined) {
      const before = new Set(threads());
      const pipeline = new ReplayPipeline();
      const spawned = threads().filter((x) => !before.has(x));
      outcome = replayFixture(fixture, { pipeline });
      workerCpu = spawned.reduce((sum, x) => sum + (threadCpu(x) || 0), 0);
      // Read before the worker's thread ends (its CPU time leaves the process's tasks with it).
      const othersAll = cpuSince(all);
      pipeline.close();
      const wall = (performance.now() - t) / 1000;
      const main = threadCpu("self") - m;
      if (outcome.mismatch !== null) throw new Error(`pipelined replay mismatch at ${outcome.mismatch.height}`);
      return { wall, main, worker: workerCpu, others: othersAll - main - workerCpu };
    }
    outcome = replayFixture(fixture);
    const wall = (performance.now() - t) / 1000;
    const main = threadCpu("self") - m;
    if (outcome.mismatch !== null) throw new Error(`plain replay mismatch at ${outcome.mismatch.height}`);
    return { wall, main, worker: 0, others: cpuSince(all) - main };
  };
  const f = (x: number) => x.toFixed(2).padStart(6);
  const loadStart = load();
  for (let r = 0; r < rounds; r++) {
    for (const pipelined of pipelinedOnly ? [true] : r % 2 === 0 ? [false, true] : [true, false]) {
      const run = one(pipelined);
      (pipelined ? runs.pipelined : runs.plain).push(run);
      process.stderr.write(`  ${pipelined ? "pipelined" : "plain    "}: wall ${f(run.wall)} s; CPU main ${f(run.main)}, worker ${f(run.worker)}, others ${f(run.others)}; load ${load()}\n`);
    }
  }
  const median = (xs: number[]) => {
    const sorted = [...xs].sort((a, b) => a - b);
    const mid = sorted.length / 2;
    return Number.isInteger(mid) ? (sorted[mid - 1]! + sorted[mid]!) / 2 : sorted[Math.floor(mid)]!;
  };
  const sum = (rs: Run[], k: keyof Run) => median(rs.map((r) => r[k]));
  const line = (name: string, rs: Run[]) =>
    `  ${name}: wall ${f(sum(rs, "wall"))} s; CPU s: main ${f(sum(rs, "main"))}, worker ${f(sum(rs, "worker"))}, others ${f(sum(rs, "others"))}`;
  process.stdout.write(`whole replays, ${rounds} each alternating, medians (node ${process.version}; load ${loadStart} → ${load()}):\n`);
  if (pipelinedOnly) {
    process.stdout.write(line("pipelined", runs.pipelined) + "\n");
    return;
  }
  process.stdout.write(line("plain    ", runs.plain) + "\n" + line("pipelined", runs.pipelined) + "\n");
  process.stdout.write(`  wall ratio plain / pipelined (medians): ${(sum(runs.plain, "wall") / sum(runs.pipelined, "wall")).toFixed(2)}\n`);
}

// ---- main ----------------------------------------------------------------------------------------

exitOnHelp(process.argv.slice(2), USAGE);
const [mode, ...rest] = process.argv.slice(2);
checkScriptArgs(process.argv.slice(2), USAGE, ["--fixture", "--jobs", "--rounds"], ["--pipelined-only"], 1);
const option = (name: string): string | undefined => {
  const i = rest.indexOf(name);
  return i < 0 ? undefined : rest[i + 1];
};
const need = (name: string): string => option(name) ?? (process.stderr.write(`${mode} needs ${name}\n${USAGE}`), process.exit(2));
const rounds = Number(option("--rounds") ?? (mode === "worker" ? 3 : 2));
if (!Number.isSafeInteger(rounds) || rounds < 1) {
  process.stderr.write(`--rounds must be a positive integer\n${USAGE}`);
  process.exit(2);
}
if (mode === "record") record(readFixture(need("--fixture")), need("--jobs"));
else if (mode === "worker") await worker(readJobs(need("--jobs")), rounds);
else if (mode === "whole") whole(readFixture(need("--fixture")), rounds, rest.includes("--pipelined-only"));
else {
  process.stderr.write(USAGE);
  process.exit(2);
}
