// A StateCommitment whose merkleization runs on a worker thread (state/commitment/commit-worker.ts), so a
// replay can execute block N+1 while block N's root is computed (docs/engineering/performance.md
// "Pipelined replay"). Executing needs the committed *values*, never the root: this side keeps
// them in a plain table and answers every read at once; the worker holds the real QMDB and
// applies each block's net changes, in commit order, exactly as QmdbStateCommitment would.
//
// The one twist: `commitBatch` returns the root array before the root is known; it is filled in
// by `settle` (or any later call that needs a root). Code that reads a root from a deferred
// commit must settle first; with `deferred` false (the default) every commit settles at once and
// this is an ordinary, merely slower, StateCommitment.
//
// The threads share memory only (no message per block: a postMessage cost ~100 µs of the
// sender's time here): the main thread writes each batch into a ring of bytes and publishes it
// by bumping a counter; the worker waits on that counter, applies the batch, writes the root into
// a ring of roots and bumps its own counter. A batch larger than the whole ring goes by message.
import { existsSync } from "node:fs";
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";
import { compareBytes } from "../../src/bytes.js";
import { BytesMap } from "../kv/bytes-map.js";
import type { KeyChange, StateCommitment } from "../kv/commitment.js";
import { STATE_KEY_LENGTH } from "../kv/interface.js";
import { createStateCommitment } from "../qmdb/index.js";
import type { BlockRoots } from "../roots/roots.js";
import type { SignatureRingShared } from "../../src/crypto/signature-ring.js";

export const ROOT_BYTES = 32;
/** Bytes of one result slot: a state root, or a block's tx, receipt and logs roots. */
export const RESULT_BYTES = 3 * ROOT_BYTES;
/** Job kinds (a slot's third int). */
export const JOB = { stateBatch: 0, blockRoots: 1, reset: 2 } as const;
/** Value length that marks a deleted key in a packed batch. */
export const DELETED = 0xffff_ffff;
/** How many commits may be in flight (the rings of batch descriptors and roots). */
export const RING = 64;
/** Batches waiting before a deferred commit wakes the worker. */
const WAKE_AFTER = 8;
/** Bytes of the batch ring. */
const DATA_BYTES = 16 << 20;
/** A worker that answers nothing for this long is taken to be dead (unless the constructor says otherwise). */
const STALL_MS = 120_000;
/** How long `close` waits for a worker still starting before it terminates it all the same. */
const START_MS = 10_000;

/** Int32 slots of the shared header. */
export const H = {
  /** Batches published by the main thread. */
  posted: 0,
  /** Batches applied by the worker (their roots are in the ring). */
  done: 1,
  /** Set by the worker when a batch failed (the message follows on the port). */
  failed: 2,
  /** Set by the main thread to stop the worker. */
  closed: 3,
  /** Bumped by the main thread whenever it gives the worker something to do; the worker sleeps on it. */
  bell: 4,
  /** Set by the worker while it sleeps (or is about to): only then is a wake-up, a system call, worth making. */
  asleep: 5,
  /**
   * Set by the worker to job + 1 when it refuses a state batch because one of the signature
   * checks it was executed with is invalid; it then applies nothing until the main thread has
   * rewound (`rewind`) and cleared this.
   */
  refused: 6,
  /** Set by `rewind`: how many of the discarded jobs came by message (the worker drops them from its port). */
  discardedMessages: 7,
  /**
   * Bumped by the worker after each of `done`, `refused` and `failed` changes: the main thread
   * waits on it, so a refusal or failure between its look at the flags and its wait still wakes it.
   */
  events: 8,
  /**
   * Set by the worker when its loop starts, its modules evaluated: `close` terminates it only then
   * (a worker terminated during that evaluation aborts the process: commit-worker.ts).
   */
  started: 9,
} as const;
const HEADER_INTS = 10;
/** Per job: offset and length in `data`, kind (JOB), and the signature checks [from, to) a state batch was executed with. */
export const SLOT_INTS = 5;

/**
 * What both threads share: the header (H), per ring slot the job's offset and length in `data`
 * (length −1: the job came as a message) and kind (JOB), the job bytes, and a ring of results.
 */
export interface WorkerShared {
  header: SharedArrayBuffer;
  slots: SharedArrayBuffer;
  data: SharedArrayBuffer;
  roots: SharedArrayBuffer;
  /** Ed25519 checks the worker verifies between its jobs (src/crypto/signature-ring.ts), if any. */
  signatures: SignatureRingShared | undefined;
}

export class WorkerCommitmentError extends Error {
  override name = "WorkerCommitmentError";
}

/** Thrown where a root is awaited: the worker refused state batch `job` (an invalid signature check); `rewind(job)` undoes it and everything after it. */
export class BatchRefused extends Error {
  override name = "BatchRefused";
  constructor(readonly job: number) {
    super(`the commit worker refused state batch ${job}: it was executed with an invalid signature check`);
  }
}

export class WorkerCommitment implements StateCommitment {
  /** When true, commitBatch returns at once and its root is filled in by a later `settle`. */
  deferred = false;
  /**
   * The signature checks (numbers in the signature ring) the next state batch was executed with:
   * the worker applies it only if all were valid, and refuses it otherwise (BatchRefused).
   */
  checks = { from: 0, to: 0 };
  private values = new BytesMap<Uint8Array>(1 << 12);
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly header: Int32Array;
  private readonly slots: Int32Array;
  private readonly data: Uint8Array;
  private readonly dataView: DataView;
  private readonly roots: Uint8Array;
  /** Where the next batch goes in `data`. */
  private writeAt = 0;
  /**
   * The jobs not yet settled, oldest first (the first is job number `settled`): the roots handed
   * out and not yet filled in, and for a state batch each changed key's value before it (to
   * rewind it; null for roots).
   */
  private readonly unsettled: { results: Uint8Array[]; undo: KeyChange[] | null }[] = [];
  private settled = 0;
  private posted = 0;
  private last: Uint8Array = createStateCommitment().root();
  private closed = false;

  /**
   * `signatures`: a ring of Ed25519 checks the worker also serves (call `wake` after posting one).
   * `stallMs`: how long a wait for a root lasts before the worker is taken to be dead.
   */
  constructor(
    signatures?: SignatureRingShared,
    private readonly stallMs = STALL_MS,
  ) {
    const shared: WorkerShared = {
      header: new SharedArrayBuffer(4 * HEADER_INTS),
      slots: new SharedArrayBuffer(4 * SLOT_INTS * RING),
      data: new SharedArrayBuffer(DATA_BYTES),
      roots: new SharedArrayBuffer(RING * RESULT_BYTES),
      signatures,
    };
    this.header = new Int32Array(shared.header);
    this.slots = new Int32Array(shared.slots);
    this.data = new Uint8Array(shared.data);
    this.dataView = new DataView(shared.data);
    this.roots = new Uint8Array(shared.roots);
    const script = new URL("./commit-worker.js", import.meta.url);
    // Run from TypeScript sources (vitest) there is no compiled worker: fail now, not after STALL_MS.
    if (!existsSync(script)) throw new WorkerCommitmentError(`no compiled commit worker at ${script.pathname} (run npm run build)`);
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(script, { workerData: { ...shared, port: port2 }, transferList: [port2] });
    this.worker.unref();
    this.port.unref();
  }

  commitBatch(changes: Iterable<KeyChange>): Uint8Array {
    if (this.closed) throw new WorkerCommitmentError("the commitment is closed");
    let size = 4;
    for (const [key, value] of changes) {
      if (key.length !== STATE_KEY_LENGTH) throw new WorkerCommitmentError(`state key of ${key.length} bytes`);
      size += STATE_KEY_LENGTH + 4 + (value?.length ?? 0);
    }
    // Room first (it may wait, and throw BatchRefused): nothing of this batch is applied before it is posted.
    this.makeRoom(size);
    const undo: KeyChange[] = [];
    // The arrays are kept as given (StateCommitment.commitBatch: the caller hands them over).
    for (const [key, value] of changes) {
      undo.push([key, this.values.get(key)]);
      if (value === undefined) this.values.delete(key);
      else this.values.set(key, value);
    }
    const root = new Uint8Array(ROOT_BYTES);
    this.post(JOB.stateBatch, size, (bytes, view, at) => pack(changes, bytes, view, at), [root], undo);
    if (!this.deferred) this.settle(this.posted);
    return root;
  }

  /**
   * A block's tx, receipt and logs roots from its rootsJob (state/roots/roots.ts), computed by the
   * worker after the batches posted before it; the arrays are filled in by `settle`.
   */
  deferRoots(job: Uint8Array): BlockRoots {
    if (this.closed) throw new WorkerCommitmentError("the commitment is closed");
    const roots: BlockRoots = { tx_root: new Uint8Array(ROOT_BYTES), receipt_root: new Uint8Array(ROOT_BYTES), logs_root: new Uint8Array(ROOT_BYTES) };
    this.makeRoom(job.length);
    this.post(JOB.blockRoots, job.length, (bytes, _, at) => bytes.set(job, at), [roots.tx_root, roots.receipt_root, roots.logs_root], null);
    return roots;
  }

  /** Jobs posted so far (state batches and roots). */
  get jobs(): number {
    return this.posted;
  }

  /** Waits until a job of `size` bytes fits: a free ring slot and, unless it goes by message, room in `data` (reused from its start once every job in it is done). */
  private makeRoom(size: number): void {
    if (this.posted - this.settled >= RING) this.settle(this.posted - RING + 1);
    if (size <= DATA_BYTES && this.writeAt + size > DATA_BYTES) {
      this.settle(this.posted);
      this.writeAt = 0;
    }
  }

  /** Publishes a job; `makeRoom(size)` came just before. */
  private post(kind: number, size: number, write: (bytes: Uint8Array, view: DataView, at: number) => void, results: Uint8Array[], undo: KeyChange[] | null): void {
    const slot = (this.posted % RING) * SLOT_INTS;
    if (size > DATA_BYTES) {
      const buffer = new ArrayBuffer(size);
      write(new Uint8Array(buffer), new DataView(buffer), 0);
      this.port.postMessage(buffer, [buffer]);
      this.slots[slot] = 0;
      this.slots[slot + 1] = -1;
    } else {
      write(this.data, this.dataView, this.writeAt);
      this.slots[slot] = this.writeAt;
      this.slots[slot + 1] = size;
      this.writeAt += size;
    }
    this.slots[slot + 2] = kind;
    this.slots[slot + 3] = this.checks.from;
    this.slots[slot + 4] = this.checks.to;
    this.posted++;
    this.unsettled.push({ results, undo });
    // A range of checks belongs to one batch: the next batch has none unless it is given its own.
    if (kind === JOB.stateBatch) this.checks = { from: this.checks.to, to: this.checks.to };
    Atomics.store(this.header, H.posted, this.posted);
    // Waking the worker costs a context switch; it is woken for a few jobs at a time (and by settle).
    if (!this.deferred || this.posted - Atomics.load(this.header, H.done) >= WAKE_AFTER) this.wake();
    else Atomics.add(this.header, H.bell, 1);
  }

  /** Tells the worker there is work: wakes it if it sleeps. */
  readonly wake = (): void => {
    Atomics.add(this.header, H.bell, 1);
    if (Atomics.load(this.header, H.asleep) !== 0) Atomics.notify(this.header, H.bell);
  };

  /** True when job number `n` (0-based) has its result (without waiting). */
  ready(n: number): boolean {
    return n < this.settled || n < Atomics.load(this.header, H.done);
  }

  /** Waits until the first `count` jobs are done and fills in their roots. */
  settle(count: number): void {
    if (this.settled < count && Atomics.load(this.header, H.done) < count) this.wake();
    while (this.settled < count) {
      let done = Atomics.load(this.header, H.done);
      // The worker is at it (a block takes it ~0.2 ms): looking again is cheaper than sleeping and being woken.
      for (let spins = 0; done <= this.settled && spins < 1 << 16; spins++) done = Atomics.load(this.header, H.done);
      while (done <= this.settled) {
        const events = Atomics.load(this.header, H.events);
        this.checkFailed();
        const refused = Atomics.load(this.header, H.refused);
        if (refused !== 0) throw new BatchRefused(refused - 1);
        done = Atomics.load(this.header, H.done);
        if (done > this.settled) break;
        if (Atomics.wait(this.header, H.events, events, this.stallMs) === "timed-out") throw new WorkerCommitmentError(`no root from the commit worker for ${this.stallMs / 1000} s`);
        done = Atomics.load(this.header, H.done);
      }
      for (; this.settled < done && this.settled < count; this.settled++) {
        const { results } = this.unsettled.shift()!;
        let at = (this.settled % RING) * RESULT_BYTES;
        for (const r of results) {
          r.set(this.roots.subarray(at, at + ROOT_BYTES));
          at += ROOT_BYTES;
        }
        if (this.slots[(this.settled % RING) * SLOT_INTS + 2] === JOB.stateBatch) this.last = results[0]!;
      }
    }
    this.checkFailed();
  }

  private checkFailed(): void {
    if (Atomics.load(this.header, H.failed) === 0) return;
    const message = receiveMessageOnPort(this.port)?.message;
    throw new WorkerCommitmentError(`the commit worker failed: ${typeof message === "string" ? message : "(no message)"}`);
  }

  /**
   * After BatchRefused(job): undoes state batch `job` and every job posted after it (their values
   * here, their roots never come) and lets the worker go on from there; the next job posted is
   * number `job` again. Every job before `job` is done.
   */
  rewind(job: number): void {
    if (Atomics.load(this.header, H.refused) !== job + 1) throw new WorkerCommitmentError(`rewind to job ${job}, but the worker refused ${Atomics.load(this.header, H.refused) - 1}`);
    this.settle(job);
    for (let i = this.unsettled.length - 1; i >= job - this.settled; i--) {
      for (const [key, value] of this.unsettled[i]!.undo ?? []) {
        if (value === undefined) this.values.delete(key);
        else this.values.set(key, value);
      }
    }
    let messages = 0;
    for (let j = job; j < this.posted; j++) if (this.slots[(j % RING) * SLOT_INTS + 1] === -1) messages++;
    this.unsettled.length = job - this.settled;
    this.posted = job;
    Atomics.store(this.header, H.posted, job);
    Atomics.store(this.header, H.discardedMessages, messages);
    Atomics.store(this.header, H.refused, 0);
    this.wake();
  }

  /**
   * Empties the commitment for another chain, keeping the worker: what is in flight is finished
   * or undone (a refused batch is rewound), the worker starts a fresh database, and this side
   * forgets every value. Then it is as new (not deferred).
   */
  reset(): void {
    if (this.closed) throw new WorkerCommitmentError("the commitment is closed");
    for (;;) {
      const refused = Atomics.load(this.header, H.refused);
      if (refused !== 0) this.rewind(refused - 1);
      try {
        this.settle(this.posted);
        break;
      } catch (err) {
        if (!(err instanceof BatchRefused)) throw err;
      }
    }
    this.values = new BytesMap<Uint8Array>(1 << 12);
    this.deferred = false;
    this.checks = { from: 0, to: 0 };
    this.makeRoom(0);
    this.post(JOB.reset, 0, () => {}, [], null);
    this.settle(this.posted);
    this.last = createStateCommitment().root();
  }

  root(): Uint8Array {
    this.settle(this.posted);
    return this.last.slice();
  }

  get(key: Uint8Array): Uint8Array | undefined {
    const value = this.values.get(key);
    return value === undefined ? undefined : new Uint8Array(value);
  }

  // The table's arrays are the ones commitBatch was handed (never modified, by contract), replaced by a later commit or rewind.
  view(key: Uint8Array): Uint8Array | undefined {
    return this.values.get(key);
  }

  entries(): [Uint8Array, Uint8Array][] {
    const all: [Uint8Array, Uint8Array][] = [];
    for (const [k, v] of this.values.entries()) all.push([k.slice(), v.slice()]);
    return all.sort((a, b) => compareBytes(a[0], b[0]));
  }

  /**
   * Stops the worker; roots not yet settled are abandoned. A worker still starting is waited for
   * first (commit-worker.ts: terminated while its modules are evaluated, it aborts the process).
   */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    Atomics.store(this.header, H.closed, 1);
    this.wake();
    this.port.close();
    Atomics.wait(this.header, H.started, 0, START_MS);
    void this.worker.terminate();
  }
}

/** At `at`: count (u32), then per change: key (54 bytes), value length (u32; DELETED for a delete), value. */
export function pack(changes: Iterable<KeyChange>, bytes: Uint8Array, view: DataView, at: number): void {
  const countAt = at;
  let count = 0;
  at += 4;
  for (const [key, value] of changes) {
    count++;
    bytes.set(key, at);
    view.setUint32(at + STATE_KEY_LENGTH, value === undefined ? DELETED : value.length);
    at += STATE_KEY_LENGTH + 4;
    if (value !== undefined) {
      bytes.set(value, at);
      at += value.length;
    }
  }
  view.setUint32(countAt, count);
}

/** Unpacks one batch (`pack`'s layout) into changes whose keys and values are copies. */
export function unpack(bytes: Uint8Array, at: number): KeyChange[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  const count = view.getUint32(at);
  const changes: KeyChange[] = new Array(count);
  at += 4;
  for (let i = 0; i < count; i++) {
    const key = bytes.slice(at, at + STATE_KEY_LENGTH);
    const length = view.getUint32(at + STATE_KEY_LENGTH);
    at += STATE_KEY_LENGTH + 4;
    if (length === DELETED) changes[i] = [key, undefined];
    else {
      changes[i] = [key, bytes.slice(at, at + length)];
      at += length;
    }
  }
  return changes;
}
