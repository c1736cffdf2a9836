// Replay benchmark (docs/engineering/performance.md): replays the long chain (scripts/gen-long-chain.ts)
// and prints tx/s along the chain, where the time goes, and how total time compares with the
// cryptography the same chain cannot avoid (Blake3 of the state commitment, keccak256 of the
// handlers, the tx hashes and the block roots, Ed25519 verifications), re-run alone on the same
// inputs with the same primitives.
//
//   node dist/scripts/bench-replay.js [--fixture long-chain.json.gz] [--blocks N]
//        [--baseline [label=]<dist dir of another build>]... [--json] [--svg <file>] [--signature-worker] [--pipeline]
//
// Without --fixture the chain is generated and filled first (not timed). Fixture loading is
// never timed. Three passes over the same fixture:
//   1. throughput: a plain replay with every check, this build alone (absolute figures); then,
//      with --baseline, this build and each other build in the same process, block by block in
//      turn, so load falls on all alike (ratios);
//   2. split: a second replay with timing hooks (a timing Hasher for the commitment, a timing
//      BlockBatch wrapper, wrappers around the engine meter's keccak/verifyEd25519 and the
//      block-roots computation), which also records every cryptographic input;
//   3. cryptography alone: those recorded inputs hashed and verified again, nothing else.
// With --signature-worker, a fourth pass measures the most a second core could save on
// signatures: each block's Ed25519 checks (recorded in pass 2, so perfectly predicted) are
// verified on a worker thread while the previous block executes, and the engine takes the
// worker's answers; it alternates blocks with a plain replay of the same build.
// With --pipeline, whole pipelined replays (`replayFixture(…, { pipeline: true })`: roots and
// signature checks on a worker thread) alternate with plain whole replays and with each
// baseline build's pipelined replays (plain, pipelined, baselines…, baselines…, pipelined,
// plain), each timed in wall time, process CPU time (all threads) and the main thread's own CPU
// time (/proc; what bounds the pipelined replay when a core is free).
// The final figures are the last lines of the output (or one JSON document with --json;
// progress always goes to stderr).
import { readFileSync } from "node:fs";
import { writeOutputFile } from "../src/output-file.js";
import { cpus, loadavg, totalmem } from "node:os";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { performance } from "node:perf_hooks";
import { decode } from "../src/codec/core.js";
import * as S from "../src/codec/schema.js";
import { blake3, keccak256, type Hasher } from "../src/crypto/hash.js";
import { ed25519VerifyStrict } from "../src/crypto/ed25519.js";
import { Meter } from "../src/engine/meter.js";
import { fillScenario } from "../src/harness/fill.js";
import type { Fixture } from "../src/harness/fixture.js";
import { readFixture } from "../src/harness/documents.js";
import { committedReceipt } from "../src/chain/receipts.js";
import { decodeTransaction } from "../src/harness/execute.js";
import { Replay, replayFixture } from "../src/harness/replay.js";
import { parseScenario } from "../src/scenario/parse.js";
import type { StateStore } from "../state/kv/interface.js";
import { ForwardingBatch, ForwardingStore } from "../state/store/forwarding.js";
import type { BlockBatch, CommitResult } from "../state/kv/interface.js";
import { blockRoots } from "../state/roots/roots.js";
import { MemoryStateStore } from "../state/store/store.js";
import { createStateCommitment } from "../state/qmdb/index.js";
import { lineChartSvg } from "./chart.js";
import { generateLongChainScenario } from "./gen-long-chain.js";
import { exitOnHelp, usageExit } from "./script-args.js";

/** Points along the chain for the progress lines and the chart. */
const SEGMENTS = 50;

interface Options {
  fixture: string | undefined;
  blocks: number;
  baselines: string[];
  json: boolean;
  svg: string | undefined;
  signatureWorker: boolean;
  pipeline: boolean;
}

const USAGE = "usage: bench-replay [--fixture f.json.gz] [--blocks N] [--baseline [label=]dist-dir]... [--json] [--svg file] [--signature-worker] [--pipeline]";

function parseArgs(argv: string[]): Options {
  exitOnHelp(argv, USAGE);
  const o: Options = { fixture: undefined, blocks: 10_000, baselines: [], json: false, svg: undefined, signatureWorker: false, pipeline: false };
  const value = (i: number, flag: string): string => argv[i] ?? fail(`${flag} needs a value`);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--fixture") o.fixture = value(++i, arg);
    else if (arg === "--blocks") o.blocks = Number(value(++i, arg));
    else if (arg === "--baseline") o.baselines.push(value(++i, arg));
    else if (arg === "--svg") o.svg = value(++i, arg);
    else if (arg === "--json") o.json = true;
    else if (arg === "--signature-worker") o.signatureWorker = true;
    else if (arg === "--pipeline") o.pipeline = true;
    else fail(`unknown argument ${arg}`);
  }
  if (!Number.isSafeInteger(o.blocks) || o.blocks < 1) fail("--blocks must be a positive integer");
  return o;
}

function fail(message: string): never {
  return usageExit("bench-replay", message, USAGE);
}

const ms = () => performance.now();
const loadAverage = () => loadavg().map((l) => l.toFixed(2)).join(" ");

function loadChain(o: Options): Fixture {
  if (o.fixture !== undefined) {
    // --blocks keeps a prefix of a given fixture.
    const f = readFixture(o.fixture);
    return { ...f, blocks: f.blocks.slice(0, o.blocks) };
  }
  process.stderr.write(`bench: generating and filling the long chain (${o.blocks} blocks; not timed)…\n`);
  const scenario = generateLongChainScenario({ blocks: o.blocks, minTxs: o.blocks >= 10_000 ? 50_000 : 0 });
  return fillScenario(parseScenario(scenario), "none");
}

// ---- pass 1: throughput ----------------------------------------------------------------------

/** What the throughput pass needs of a build: its fixture parser and its Replay. */
interface ReplayBuild {
  label: string;
  start(): { block(index: number): { mismatch: { field: string } | null } };
  fixture: Fixture;
  /** The build's whole replay (pass 5 runs it pipelined). */
  replayFixture: typeof replayFixture;
}

/** `--baseline label=dir` or `--baseline dir`. */
function splitBaseline(arg: string): { label: string; dir: string } {
  const eq = arg.indexOf("=");
  return eq > 0 ? { label: arg.slice(0, eq), dir: arg.slice(eq + 1) } : { label: `baseline ${arg}`, dir: arg };
}

async function loadBaseline(arg: string, fixturePath: string | undefined, fixture: Fixture): Promise<ReplayBuild> {
  const { label, dir } = splitBaseline(arg);
  const url = (path: string) => pathToFileURL(resolve(dir, path)).href;
  const replayModule = (await import(url("src/harness/replay.js"))) as { Replay: typeof Replay; replayFixture: typeof replayFixture };
  // Every build replays the same parsed fixture (its shape is the same in all of them).
  const own = { ...fixture, blocks: fixture.blocks.slice(0, fixture.blocks.length) };
  return { label, fixture: own, start: () => startReplay(replayModule.Replay, own), replayFixture: replayModule.replayFixture };
}

function startReplay(R: typeof Replay, fixture: Fixture) {
  const { replay, mismatch } = R.start(fixture);
  if (mismatch !== null) throw new Error(`genesis mismatch: ${mismatch.field}`);
  return replay;
}

interface Throughput {
  label: string;
  /** Wall-clock seconds inside this build's block calls. */
  seconds: number;
  /** CPU seconds (user + system, all of the process's threads) during those calls. */
  cpuSeconds: number;
  /** tx per CPU-second of each segment of the chain (CPU time: steadier on a shared machine). */
  segments: number[];
}

/** Replays every block with every check, alternating between builds block by block. */
function throughput(builds: readonly ReplayBuild[], fixture: Fixture): Throughput[] {
  const replays = builds.map((b) => b.start());
  const totals = builds.map(() => 0);
  const cpu = builds.map(() => 0);
  const segmentCpu = builds.map(() => 0);
  const out: Throughput[] = builds.map((b) => ({ label: b.label, seconds: 0, cpuSeconds: 0, segments: [] }));
  const n = fixture.blocks.length;
  const step = Math.max(1, Math.floor(n / SEGMENTS));
  let segmentTxs = 0;
  for (let i = 0; i < n; i++) {
    const order = i % 2 === 0 ? replays.map((_, k) => k) : replays.map((_, k) => replays.length - 1 - k);
    for (const k of order) {
      const c = process.cpuUsage();
      const t = ms();
      const { mismatch } = replays[k]!.block(i);
      const d = ms() - t;
      const used = process.cpuUsage(c);
      cpu[k]! += (used.user + used.system) / 1e6;
      if (mismatch !== null) throw new Error(`${builds[k]!.label}: replay mismatch at block ${i}: ${mismatch.field}`);
      totals[k]! += d;
      segmentCpu[k]! += (used.user + used.system) / 1e6;
    }
    segmentTxs += fixture.blocks[i]!.transactions.length;
    if ((i + 1) % step === 0 || i === n - 1) {
      out.forEach((o, k) => o.segments.push(Math.round(segmentTxs / segmentCpu[k]!)));
      process.stderr.write(`  block ${i + 1}/${n}: ${out.map((o) => `${o.segments[o.segments.length - 1]!.toLocaleString("en-US")} tx per CPU-second`).join(", ")}\n`);
      segmentTxs = 0;
      segmentCpu.fill(0);
    }
  }
  out.forEach((o, k) => {
    o.seconds = totals[k]! / 1000;
    o.cpuSeconds = cpu[k]!;
  });
  return out;
}

// ---- pass 2: split ---------------------------------------------------------------------------

const totals = { state: 0, commit: 0, blake3: 0, meterKeccak: 0, ed25519: 0, roots: 0, total: 0 };
const counts = { blake3: 0, blake3Bytes: 0, meterKeccak: 0, ed25519: 0, reads: 0, writes: 0 };
/** Inputs of the unavoidable cryptography, re-run alone in pass 3. */
const blake3Lengths: number[] = [];
const keccakPreimages: Uint8Array[] = [];
const signatures: Array<[Uint8Array, Uint8Array, Uint8Array]> = [];
/** Block index of each recorded signature (same order as `signatures`). */
const signatureBlocks: number[] = [];
let currentBlock = 0;

const timingBlake3: Hasher = {
  name: "blake3",
  hash(data) {
    const t = ms();
    const out = blake3(data);
    totals.blake3 += ms() - t;
    counts.blake3++;
    counts.blake3Bytes += data.length;
    blake3Lengths.push(data.length);
    return out;
  },
};

class TimingBatch extends ForwardingBatch {
  override get(key: Uint8Array) {
    const t = ms();
    const v = this.inner.get(key);
    totals.state += ms() - t;
    counts.reads++;
    return v;
  }
  override getView(key: Uint8Array) {
    const t = ms();
    const v = this.inner.getView(key);
    totals.state += ms() - t;
    counts.reads++;
    return v;
  }
  override put(key: Uint8Array, value: Uint8Array) {
    const t = ms();
    this.inner.put(key, value);
    totals.state += ms() - t;
    counts.writes++;
  }
  override delete(key: Uint8Array) {
    const t = ms();
    this.inner.delete(key);
    totals.state += ms() - t;
    counts.writes++;
  }
}

class TimingStore extends ForwardingStore {
  override beginBlock(height: bigint): BlockBatch {
    return new TimingBatch(this.inner.beginBlock(height));
  }
  override commitBlock(batch: BlockBatch): CommitResult {
    const t = ms();
    const r = super.commitBlock(batch);
    totals.commit += ms() - t;
    return r;
  }
}

function hookMeter(): () => void {
  const proto = Meter.prototype;
  const keccak = proto.keccak;
  const verify = proto.verifyEd25519;
  proto.keccak = function (this: Meter, preimage: Uint8Array) {
    const t = ms();
    const out = keccak.call(this, preimage);
    totals.meterKeccak += ms() - t;
    counts.meterKeccak++;
    keccakPreimages.push(preimage.slice());
    return out;
  };
  proto.verifyEd25519 = function (this: Meter, pk: Uint8Array, msg: Uint8Array, sig: Uint8Array) {
    const t = ms();
    const ok = verify.call(this, pk, msg, sig);
    totals.ed25519 += ms() - t;
    counts.ed25519++;
    signatures.push([pk.slice(), msg.slice(), sig.slice()]);
    signatureBlocks.push(currentBlock);
    return ok;
  };
  return () => {
    proto.keccak = keccak;
    proto.verifyEd25519 = verify;
  };
}

/** The block-roots work of one block alone (tx hashes, receipt/event encodings, three BMTs). */
function rootsOf(b: Fixture["blocks"][number], hasher: Hasher): void {
  blockRoots(b.transactions.map((t) => hasher.hash(t)), b.receipts.map(committedReceipt), hasher);
}

function split(fixture: Fixture): void {
  const unhook = hookMeter();
  const store: StateStore = new TimingStore(new MemoryStateStore(createStateCommitment(timingBlake3)));
  const t0 = ms();
  const { replay } = Replay.start(fixture, store);
  for (let i = 0; i < fixture.blocks.length; i++) {
    currentBlock = i;
    const { mismatch } = replay.block(i);
    if (mismatch !== null) throw new Error(`replay mismatch at block ${i}: ${mismatch.field}`);
  }
  totals.total = ms() - t0;
  unhook();
  // The replay computes each block's roots inside Replay.block: the same work, alone.
  const t = ms();
  for (const b of fixture.blocks) rootsOf(b, { name: "keccak256", hash: keccak256 });
  totals.roots = ms() - t;
}

// ---- pass 3: cryptography alone ------------------------------------------------------------------

function cryptoOnly(f: Fixture): { seconds: number; cpuSeconds: number; parts: Record<string, number> } {
  const parts: Record<string, number> = {};
  let cpuSeconds = 0;
  const time = (name: string, run: () => void) => {
    const c = process.cpuUsage();
    const t = ms();
    run();
    parts[name] = (ms() - t) / 1000;
    const used = process.cpuUsage(c);
    cpuSeconds += (used.user + used.system) / 1e6;
  };
  // The length of every keccak256 input of the roots (tx hashes, event and receipt leaves, BMT
  // nodes): keccak's cost depends on the length only, so buffers of those lengths are hashed.
  const rootLengths: number[] = [];
  const recorder: Hasher = {
    name: "keccak256",
    hash(data) {
      rootLengths.push(data.length);
      return new Uint8Array(32);
    },
  };
  for (const b of f.blocks) rootsOf(b, recorder);
  const ofLengths = (lengths: readonly number[], hash: (data: Uint8Array) => Uint8Array) => {
    const buf = new Uint8Array(lengths.reduce((m, n) => Math.max(m, n), 0));
    for (const n of lengths) hash(buf.subarray(0, n));
  };
  time("blake3 (state commitment)", () => ofLengths(blake3Lengths, blake3));
  time("keccak256 (handlers)", () => {
    for (const p of keccakPreimages) keccak256(p);
  });
  time("keccak256 (tx hashes and tx/receipt/logs roots)", () => ofLengths(rootLengths, keccak256));
  time("ed25519 verify", () => {
    for (const [pk, msg, sig] of signatures) ed25519VerifyStrict(pk, msg, sig);
  });
  return { seconds: Object.values(parts).reduce((a, b) => a + b, 0), cpuSeconds, parts };
}


// ---- pass 4 (optional): signatures on a second core, perfectly predicted ----------------------

const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
import(workerData.ed25519).then(({ ed25519VerifyStrict }) => {
  const status = new Int32Array(workerData.status);
  parentPort.on("message", (jobs) => {
    for (const [index, pk, msg, sig] of jobs) {
      Atomics.store(status, index, ed25519VerifyStrict(pk, msg, sig) ? 1 : 2);
      Atomics.notify(status, index);
    }
  });
  parentPort.postMessage("ready");
});
`;

/**
 * Replays twice in alternation, one replay plain and one whose Ed25519 checks are answered by a
 * worker that verified them (from pass 2's recording) while the previous block executed. An
 * upper bound on what moving signature checks to a second core can save: a real implementation
 * would have to predict each check's key and message, which depend on state.
 */
async function signatureWorker(fixture: Fixture): Promise<{ plainSeconds: number; workerSeconds: number; waits: number }> {
  const { Worker } = await import("node:worker_threads");
  const status = new Int32Array(new SharedArrayBuffer(4 * Math.max(1, signatures.length)));
  const ed25519 = new URL("../src/crypto/ed25519.js", import.meta.url).href;
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { status: status.buffer, ed25519 } });
  await new Promise((done) => worker.once("message", done));
  const firstOf: number[] = [];
  signatureBlocks.forEach((b, i) => (firstOf[b] ??= i));
  const jobsOf = (block: number) => {
    const jobs: Array<[number, Uint8Array, Uint8Array, Uint8Array]> = [];
    for (let i = firstOf[block] ?? signatures.length; i < signatures.length && signatureBlocks[i] === block; i++) jobs.push([i, ...signatures[i]!]);
    return jobs;
  };
  const proto = Meter.prototype;
  const verify = proto.verifyEd25519;
  let next = 0;
  let waits = 0;
  let oracle = false;
  proto.verifyEd25519 = function (this: Meter, pk: Uint8Array, msg: Uint8Array, sig: Uint8Array) {
    if (!oracle) return verify.call(this, pk, msg, sig);
    const index = next++;
    const [rpk, rmsg, rsig] = signatures[index]!;
    const same = Buffer.compare(rpk, pk) === 0 && Buffer.compare(rmsg, msg) === 0 && Buffer.compare(rsig, sig) === 0;
    if (!same) throw new Error(`signature ${index} differs from the recording`);
    this.signatures += 1;
    if (Atomics.load(status, index) === 0) {
      waits++;
      Atomics.wait(status, index, 0);
    }
    return Atomics.load(status, index) === 1;
  };
  try {
    const plain = startReplay(Replay, fixture);
    const withWorker = startReplay(Replay, fixture);
    let plainMs = 0;
    let workerMs = 0;
    worker.postMessage(jobsOf(0));
    for (let i = 0; i < fixture.blocks.length; i++) {
      for (const which of i % 2 === 0 ? ["plain", "worker"] : ["worker", "plain"]) {
        const t = ms();
        if (which === "worker") {
          if (i + 1 < fixture.blocks.length) worker.postMessage(jobsOf(i + 1));
          oracle = true;
          const { mismatch } = withWorker.block(i);
          oracle = false;
          if (mismatch !== null) throw new Error(`signature-worker replay mismatch at block ${i}: ${mismatch.field}`);
          workerMs += ms() - t;
        } else {
          const { mismatch } = plain.block(i);
          plainMs += ms() - t;
          if (mismatch !== null) throw new Error(`replay mismatch at block ${i}: ${mismatch.field}`);
        }
      }
    }
    return { plainSeconds: plainMs / 1000, workerSeconds: workerMs / 1000, waits };
  } finally {
    proto.verifyEd25519 = verify;
    await worker.terminate();
  }
}

// ---- pass 5 (optional): the pipelined replay -------------------------------------------------

interface WholeRun {
  seconds: number;
  cpuSeconds: number;
  /** CPU time of the main thread alone: on two idle cores, the pipelined replay's critical path. */
  mainThreadCpuSeconds: number;
}

/** CPU seconds of the main thread so far, from /proc (Linux; NaN elsewhere): utime + stime in clock ticks. */
function mainThreadCpu(): number {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

const noRun = (): WholeRun => ({ seconds: 0, cpuSeconds: 0, mainThreadCpuSeconds: 0 });

/**
 * Whole replays, twice each: this build plain (P) and pipelined (Q), and each baseline build
 * pipelined (B), in the order P Q B… B… Q P; the sums.
 */
function pipelinePass(self: ReplayBuild, baselines: readonly ReplayBuild[]): { plain: WholeRun; pipelined: WholeRun; baselines: WholeRun[] } {
  const sum = { plain: noRun(), pipelined: noRun(), baselines: baselines.map(noRun) };
  const half: [ReplayBuild, boolean, WholeRun][] = [[self, false, sum.plain], [self, true, sum.pipelined], ...baselines.map((b, i): [ReplayBuild, boolean, WholeRun] => [b, true, sum.baselines[i]!])];
  for (const [build, pipeline, run] of [...half, ...[...half].reverse()]) {
    const t = ms();
    const c = process.cpuUsage();
    const main = mainThreadCpu();
    const outcome = build.replayFixture(build.fixture, { pipeline });
    const used = process.cpuUsage(c);
    const mainUsed = mainThreadCpu() - main;
    if (outcome.mismatch !== null) throw new Error(`${build.label}: ${pipeline ? "pipelined" : "plain"} replay mismatch at block ${outcome.mismatch.height}: ${outcome.mismatch.field}`);
    run.seconds += (ms() - t) / 1000;
    run.cpuSeconds += (used.user + used.system) / 1e6;
    run.mainThreadCpuSeconds += mainUsed;
  }
  return sum;
}

// ---- main --------------------------------------------------------------------------------------

async function main(argv: string[]): Promise<void> {
  const o = parseArgs(argv);
  const log = (line: string) => (o.json ? process.stderr.write(line + "\n") : process.stdout.write(line + "\n"));
  const fixture = loadChain(o);
  const txs = fixture.blocks.reduce((n, b) => n + b.transactions.length, 0);
  const machine = `${cpus()[0]?.model ?? "?"} x${cpus().length}, ${Math.round(totalmem() / 2 ** 30)} GiB, node ${process.version}`;
  const loadStart = loadAverage();
  log(`machine: ${machine}; load average at start ${loadStart}`);
  process.stderr.write(`bench: replaying ${fixture.blocks.length} blocks, ${txs} transactions…\n`);

  const self: ReplayBuild = { label: "this build", fixture, start: () => startReplay(Replay, fixture), replayFixture };
  // This build alone (its absolute figures and the chart), then, with baselines, every build in
  // turn block by block (the ratios; sharing a process costs each build some speed).
  const main = throughput([self], fixture)[0]!;
  const builds: ReplayBuild[] = [self];
  for (const dir of o.baselines) builds.push(await loadBaseline(dir, o.fixture, fixture));
  const runs = builds.length > 1 ? throughput(builds, fixture) : [main];
  const loadAfterThroughput = loadAverage();

  process.stderr.write("bench: split pass (timing hooks)…\n");
  split(fixture);
  const crypto = cryptoOnly(fixture);
  let sigWorker: Awaited<ReturnType<typeof signatureWorker>> | undefined;
  if (o.signatureWorker) {
    process.stderr.write("bench: signature-worker pass…\n");
    sigWorker = await signatureWorker(fixture);
  }
  let pipelined: ReturnType<typeof pipelinePass> | undefined;
  if (o.pipeline) {
    process.stderr.write("bench: pipelined vs plain whole replays…\n");
    pipelined = pipelinePass(self, builds.slice(1));
  }
  const loadEnd = loadAverage();

  // Decoding, measured alone on the same inputs.
  const chainId = fixture.genesis.config.chain_id;
  let t = ms();
  const payloads: Uint8Array[] = [];
  for (const b of fixture.blocks) {
    b.transactions.forEach((raw, i) => {
      const body = decodeTransaction(raw, i, chainId).tx.body;
      if (body.kind === "system") payloads.push(body.payload);
    });
  }
  const envelopeDecode = (ms() - t) / 1000;
  t = ms();
  for (const p of payloads) {
    try {
      decode(S.CbqsInstructionV1, p);
    } catch {
      // malformed payloads of the chain are rejected by the engine the same way
    }
  }
  const instructionDecode = (ms() - t) / 1000;

  const s = (x: number) => x / 1000;
  const splitTotal = s(totals.total);
  const rows: Array<[string, number]> = [
    ["envelope decode", envelopeDecode],
    ["instruction decode (CbqsInstructionV1)", instructionDecode],
    [`state reads/writes (${counts.reads} reads, ${counts.writes} writes)`, s(totals.state)],
    ["merkleization: QMDB commit without Blake3", s(totals.commit - totals.blake3)],
    [`hashing: Blake3 in the commitment (${counts.blake3} calls, ${counts.blake3Bytes} bytes)`, s(totals.blake3)],
    [`hashing: keccak256 in handlers (${counts.meterKeccak} calls)`, s(totals.meterKeccak)],
    ["tx hashes + tx/receipt/logs roots (hashing and encoding)", s(totals.roots)],
    [`signature checks (${counts.ed25519} Ed25519)`, s(totals.ed25519)],
  ];
  const measured = rows.reduce((a, [, v]) => a + v, 0);
  rows.splice(2, 0, ["handlers + engine + harness checks (rest)", splitTotal - measured]);

  const rate = Math.round(txs / main.seconds);
  const ratio = main.seconds / crypto.seconds;
  const cpuRatio = main.cpuSeconds / crypto.cpuSeconds;
  const flat = (xs: readonly number[]) => {
    const k = Math.max(1, Math.floor(xs.length / 10));
    const mean = (v: readonly number[]) => Math.round(v.reduce((a, b) => a + b, 0) / v.length);
    return { firstTenth: mean(xs.slice(0, k)), lastTenth: mean(xs.slice(-k)) };
  };
  const result = {
    machine,
    load: { start: loadStart, afterThroughput: loadAfterThroughput, end: loadEnd },
    blocks: fixture.blocks.length,
    txs,
    replaySeconds: +main.seconds.toFixed(3),
    replayCpuSeconds: +main.cpuSeconds.toFixed(3),
    txPerSecond: rate,
    txPerCpuSecond: Math.round(txs / main.cpuSeconds),
    blocksPerSecond: Math.round(fixture.blocks.length / main.seconds),
    txPerCpuSecondAlongChain: { ...flat(main.segments), segments: main.segments },
    split: { totalSeconds: +splitTotal.toFixed(3), rows: Object.fromEntries(rows.map(([k, v]) => [k, +v.toFixed(3)])) },
    cryptography: {
      seconds: +crypto.seconds.toFixed(3),
      cpuSeconds: +crypto.cpuSeconds.toFixed(3),
      parts: Object.fromEntries(Object.entries(crypto.parts).map(([k, v]) => [k, +v.toFixed(3)])),
    },
    ratioReplayToCryptography: +ratio.toFixed(2),
    cpuRatioReplayToCryptography: +cpuRatio.toFixed(2),
    ...(sigWorker
      ? {
          signatureWorker: {
            plainSeconds: +sigWorker.plainSeconds.toFixed(3),
            withWorkerSeconds: +sigWorker.workerSeconds.toFixed(3),
            saving: +(1 - sigWorker.workerSeconds / sigWorker.plainSeconds).toFixed(3),
            waits: sigWorker.waits,
          },
        }
      : {}),
    ...(pipelined
      ? {
          pipeline: {
            plainSeconds: +(pipelined.plain.seconds / 2).toFixed(3),
            plainCpuSeconds: +(pipelined.plain.cpuSeconds / 2).toFixed(3),
            pipelinedSeconds: +(pipelined.pipelined.seconds / 2).toFixed(3),
            pipelinedCpuSeconds: +(pipelined.pipelined.cpuSeconds / 2).toFixed(3),
            plainMainThreadCpuSeconds: +(pipelined.plain.mainThreadCpuSeconds / 2).toFixed(3),
            pipelinedMainThreadCpuSeconds: +(pipelined.pipelined.mainThreadCpuSeconds / 2).toFixed(3),
            pipelinedOtherThreadsCpuSeconds: +((pipelined.pipelined.cpuSeconds - pipelined.pipelined.mainThreadCpuSeconds) / 2).toFixed(3),
            pipelinedTxPerSecond: Math.round((2 * txs) / pipelined.pipelined.seconds),
            wallSpeedup: +(pipelined.plain.seconds / pipelined.pipelined.seconds).toFixed(2),
            baselines: pipelined.baselines.map((b, i) => ({
              label: builds[i + 1]!.label,
              pipelinedSeconds: +(b.seconds / 2).toFixed(3),
              pipelinedMainThreadCpuSeconds: +(b.mainThreadCpuSeconds / 2).toFixed(3),
              speedup: +(b.seconds / pipelined.pipelined.seconds).toFixed(2),
            })),
          },
        }
      : {}),
    baselines: runs.slice(1).map((b) => ({
      label: b.label,
      replaySeconds: +b.seconds.toFixed(3),
      replayCpuSeconds: +b.cpuSeconds.toFixed(3),
      txPerSecond: Math.round(txs / b.seconds),
      txPerCpuSecond: Math.round(txs / b.cpuSeconds),
      txPerCpuSecondAlongChain: { ...flat(b.segments), segments: b.segments },
      speedup: +(b.seconds / runs[0]!.seconds).toFixed(2),
      cpuSpeedup: +(b.cpuSeconds / runs[0]!.cpuSeconds).toFixed(2),
    })),
  };

  if (o.svg !== undefined) {
    const step = Math.max(1, Math.floor(fixture.blocks.length / SEGMENTS));
    writeOutputFile(
      o.svg,
      lineChartSvg({
        title: `bench-replay: tx per CPU-second along the long chain (${fixture.blocks.length} blocks, ${txs} transactions)`,
        note: `${machine}; load ${loadStart} → ${loadEnd}`,
        xLabel: "block",
        yLabel: "tx per CPU-second (per fiftieth)",
        series: [{ ...main, label: "this build, alone" }, ...(runs.length > 1 ? runs.map((r) => ({ ...r, label: `${r.label}, builds in turn` })) : [])].map((r) => ({
          name: r.label,
          points: r.segments.map((v, i): [number, number] => [Math.min((i + 1) * step, fixture.blocks.length), v]),
        })),
      }),
    );
  }

  if (o.json) {
    process.stdout.write(JSON.stringify(result) + "\n");
    return;
  }
  log(`time split, second pass with timing hooks (${splitTotal.toFixed(2)} s; s, % of that pass):`);
  for (const [name, v] of rows) log(`  ${v.toFixed(2).padStart(8)}  ${((100 * v) / splitTotal).toFixed(1).padStart(5)}%  ${name}`);
  log(`unavoidable cryptography alone, same inputs: ${crypto.seconds.toFixed(2)} s (${crypto.cpuSeconds.toFixed(2)} s CPU)`);
  for (const [name, v] of Object.entries(crypto.parts)) log(`  ${v.toFixed(2).padStart(8)}  ${name}`);
  if (sigWorker) {
    log(
      `signatures on a worker, perfectly predicted (upper bound): ${sigWorker.workerSeconds.toFixed(2)} s vs ${sigWorker.plainSeconds.toFixed(2)} s plain ` +
        `(same run, alternating blocks): saves ${(100 * (1 - sigWorker.workerSeconds / sigWorker.plainSeconds)).toFixed(1)} %; the engine waited ${sigWorker.waits} times`,
    );
  }
  if (result.pipeline) {
    const p = result.pipeline;
    log(
      `pipelined replay (merkleization on a worker), mean of 2 whole replays each, alternating: ${p.pipelinedSeconds.toFixed(2)} s ` +
        `(${p.pipelinedCpuSeconds.toFixed(2)} s CPU, all threads; main thread ${p.pipelinedMainThreadCpuSeconds.toFixed(2)} s, other threads — the workers, the collector's — ${p.pipelinedOtherThreadsCpuSeconds.toFixed(2)} s), ` +
        `${p.pipelinedTxPerSecond} tx/s; plain ${p.plainSeconds.toFixed(2)} s (${p.plainCpuSeconds.toFixed(2)} s CPU): ${p.wallSpeedup}x (wall); ` +
        `plain main thread ${p.plainMainThreadCpuSeconds.toFixed(2)} s; on two idle cores the pipelined replay would take about max(main, other threads) = ` +
        `${Math.max(p.pipelinedMainThreadCpuSeconds, p.pipelinedOtherThreadsCpuSeconds).toFixed(2)} s against ${p.plainCpuSeconds.toFixed(2)} s plain`,
    );
    for (const b of p.baselines) {
      log(`${b.label}, pipelined in the same pass: ${b.pipelinedSeconds.toFixed(2)} s (main thread ${b.pipelinedMainThreadCpuSeconds.toFixed(2)} s CPU); this build's pipelined replay is ${b.speedup}x faster (wall)`);
    }
  }
  log(`load average: ${loadStart} at start, ${loadAfterThroughput} after the throughput pass, ${loadEnd} at the end`);
  for (const b of result.baselines) {
    log(
      `${b.label}: ${b.replaySeconds.toFixed(2)} s (${b.replayCpuSeconds.toFixed(2)} s CPU), ${b.txPerSecond} tx/s ` +
        `(per CPU-second, first tenth → last tenth ${b.txPerCpuSecondAlongChain.firstTenth} → ${b.txPerCpuSecondAlongChain.lastTenth}); ` +
        `this build is ${b.speedup}x faster (wall), ${b.cpuSpeedup}x (CPU) in the same run`,
    );
  }
  log(`tx per CPU-second along the chain, first tenth → last tenth: ${result.txPerCpuSecondAlongChain.firstTenth} → ${result.txPerCpuSecondAlongChain.lastTenth}`);
  log(
    `replay: ${fixture.blocks.length} blocks, ${txs} txs in ${main.seconds.toFixed(2)} s (${main.cpuSeconds.toFixed(2)} s CPU): ` +
      `${result.blocksPerSecond} blocks/s, ${rate} tx/s, ${result.txPerCpuSecond} tx per CPU-second`,
  );
  log(`ratio replay / unavoidable cryptography: ${ratio.toFixed(2)}x wall, ${cpuRatio.toFixed(2)}x CPU`);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`bench-replay: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
