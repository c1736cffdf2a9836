// The worker half of WorkerCommitment (state/commitment/worker-commitment.ts): holds the Cowboy state
// database (QMDB "current", Blake3) and does each published job in order — apply a batch of net
// changes, or hash a block's tx/receipt/logs roots (state/roots/roots.ts rootsOfJob) — writing its
// roots into the shared ring of results — and, between jobs, the Ed25519 checks the main thread
// posts to its signature ring, if it has one. Nothing here decides anything: the main
// thread executes, this thread only merkleizes what it was given, one block after another.
import { receiveMessageOnPort, workerData, type MessagePort } from "node:worker_threads";
import { createStateCommitment } from "../qmdb/index.js";
import { rootsOfJob } from "../roots/roots.js";
import { SignatureServer } from "../../src/crypto/signature-ring.js";
import { H, JOB, RESULT_BYTES, RING, ROOT_BYTES, SLOT_INTS, unpack, type WorkerShared } from "./worker-commitment.js";

const shared = workerData as WorkerShared & { port: MessagePort };
const header = new Int32Array(shared.header);
const slots = new Int32Array(shared.slots);
const data = new Uint8Array(shared.data);
const roots = new Uint8Array(shared.roots);
let commitment = createStateCommitment();
const signatures = shared.signatures === undefined ? undefined : new SignatureServer(shared.signatures);

/**
 * How long the worker looks for work before it sleeps: long enough to catch a block's roots job
 * posted right after its state batch. Longer spins burnt CPU the main thread and the collector's
 * helpers need (0.5 ms: ~0.4 s of the long chain's ~2.2 s of worker CPU); sleeping costs little,
 * since the main thread wakes the worker only every WAKE_AFTER jobs or when it waits for a root
 * (worker-commitment.ts), and the pipeline runs 16 blocks ahead of its checks.
 */
const SPIN_MS = 0.05;

/** True when work came within SPIN_MS. */
function spinFor(done: number): boolean {
  const until = performance.now() + SPIN_MS;
  do {
    for (let i = 0; i < 64; i++) if (Atomics.load(header, H.posted) !== done || signatures?.pending() === true) return true;
  } while (performance.now() < until);
  return false;
}

/** Tells a main thread waiting for a root that `done`, `refused` or `failed` changed. */
function signal(): void {
  Atomics.add(header, H.events, 1);
  Atomics.notify(header, H.events);
}

/**
 * Refuses state batch `job` (executed with an invalid signature check) and waits, still verifying
 * the checks posted meanwhile, until the main thread has rewound; then drops the messages of the
 * jobs it discarded. False when the commitment was closed meanwhile.
 */
function refuse(job: number): boolean {
  Atomics.store(header, H.refused, job + 1);
  signal();
  while (Atomics.load(header, H.refused) !== 0) {
    if (Atomics.load(header, H.closed) !== 0) return false;
    if (signatures?.pending() === true) {
      signatures.serve();
      continue;
    }
    const bell = Atomics.load(header, H.bell);
    Atomics.store(header, H.asleep, 1);
    if (Atomics.load(header, H.refused) !== 0 && signatures?.pending() !== true && Atomics.load(header, H.closed) === 0) Atomics.wait(header, H.bell, bell, 1000);
    Atomics.store(header, H.asleep, 0);
  }
  for (let n = Atomics.load(header, H.discardedMessages); n > 0; n--) receiveMessageOnPort(shared.port);
  return true;
}

/**
 * The worker's loop: signature checks first (a state batch may be applied only once the checks it
 * was executed with are verified), then the next job; with neither, it sleeps on the bell.
 */
function run(): void {
  let done = 0;
  for (;;) {
    if (signatures?.pending() === true) signatures.serve();
    if (Atomics.load(header, H.posted) === done) {
      if (Atomics.load(header, H.closed) !== 0) return;
      if (spinFor(done)) continue;
      const bell = Atomics.load(header, H.bell);
      Atomics.store(header, H.asleep, 1);
      // Looked at again after saying so: work posted in between would otherwise find us awake and not wake us.
      if (Atomics.load(header, H.posted) === done && signatures?.pending() !== true && Atomics.load(header, H.closed) === 0) Atomics.wait(header, H.bell, bell, 1000);
      Atomics.store(header, H.asleep, 0);
      continue;
    }
    const slot = (done % RING) * SLOT_INTS;
    const [offset, length, kind, from, to] = [slots[slot]!, slots[slot + 1]!, slots[slot + 2]!, slots[slot + 3]!, slots[slot + 4]!];
    if (kind === JOB.stateBatch && from < to && signatures?.anyInvalid(from, to) === true) {
      if (!refuse(done)) return;
      continue;
    }
    const bytes = length === -1 ? new Uint8Array(receiveMessageOnPort(shared.port)!.message as ArrayBuffer) : data.subarray(offset, offset + length);
    const at = (done % RING) * RESULT_BYTES;
    if (kind === JOB.stateBatch) roots.set(commitment.commitBatch(unpack(bytes, 0)), at);
    else if (kind === JOB.reset) commitment = createStateCommitment();
    else {
      const r = rootsOfJob(bytes, 0);
      roots.set(r.tx_root, at);
      roots.set(r.receipt_root, at + ROOT_BYTES);
      roots.set(r.logs_root, at + 2 * ROOT_BYTES);
    }
    done++;
    Atomics.store(header, H.done, done);
    signal();
  }
}

// The loop starts from a task of the worker's event loop, never in this module's body: this module
// imports modules with top-level await (the hashers), so V8 evaluates it, and every module between
// it and them, inside the completion of their evaluation, and Node 22 and 24 abort the whole
// process (`Check failed: (location_) != nullptr` in SourceTextModule::AsyncModuleExecutionFulfilled)
// when a worker is terminated there — as `close` and the process's exit do to a running loop. So
// the loop runs after the evaluation, and says so (H.started) for `close`, which waits for it
// (D-0172 "The commit worker's loop runs after its modules are evaluated").
setImmediate(() => {
  Atomics.store(header, H.started, 1);
  Atomics.notify(header, H.started);
  try {
    run();
  } catch (err) {
    shared.port.postMessage(err instanceof Error ? (err.stack ?? err.message) : String(err));
    Atomics.store(header, H.failed, 1);
    signal();
  }
});
