// A StateCommitment whose merkleization runs on a worker thread (state/commit-worker.ts), so a
// replay can execute block N+1 while block N's root is computed (docs/performance.md
// "Pipelined replay"). Executing needs the committed *values*, never the root: this side keeps
// them in a plain table and answers every read at once; the worker holds the real QMDB and
// applies each block's net changes, in commit order, exactly as QmdbStateCommitment would.
//
// The one twist: `commitBatch` returns the root array before the root is known; it is filled in
// by `settle` (or any later call that needs a root). Code that reads a root from a deferred
// commit must settle first; with `deferred` false (the default) every commit settles at once and
// this is an ordinary, merely slower, StateCommitment.
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";
import { compareBytes } from "../src/bytes.js";
import { BytesMap } from "./bytes-map.js";
import type { KeyChange, StateCommitment } from "./commitment.js";
import { STATE_KEY_LENGTH } from "./interface.js";
import { createStateCommitment } from "./qmdb/index.js";

export const ROOT_BYTES = 32;
/** Value length that marks a deleted key in a packed batch. */
export const DELETED = 0xffff_ffff;
/** How many commits may be in flight (the ring of roots the worker writes). */
const RING = 64;
/** A worker that answers nothing for this long is taken to be dead. */
const STALL_MS = 120_000;

/** What both threads share: header = [commits done, failed flag]; `roots` is a ring of `ring` roots. */
export interface WorkerShared {
  header: SharedArrayBuffer;
  roots: SharedArrayBuffer;
  ring: number;
}

export class WorkerCommitmentError extends Error {
  override name = "WorkerCommitmentError";
}

export class WorkerCommitment implements StateCommitment {
  /** When true, commitBatch returns at once and its root is filled in by a later `settle`. */
  deferred = false;
  private readonly values = new BytesMap<Uint8Array>(1 << 12);
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly done: Int32Array;
  private readonly roots: Uint8Array;
  /** Roots handed out and not yet filled in, oldest first; the first is commit number `settled`. */
  private readonly unfilled: Uint8Array[] = [];
  private settled = 0;
  private posted = 0;
  private last: Uint8Array = createStateCommitment().root();
  private closed = false;

  constructor() {
    const shared: WorkerShared = { header: new SharedArrayBuffer(8), roots: new SharedArrayBuffer(RING * ROOT_BYTES), ring: RING };
    this.done = new Int32Array(shared.header);
    this.roots = new Uint8Array(shared.roots);
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(new URL("./commit-worker.js", import.meta.url), { workerData: { ...shared, port: port2 }, transferList: [port2] });
    this.worker.unref();
    this.port.unref();
  }

  /** Commits posted so far (genesis included). */
  get commits(): number {
    return this.posted;
  }

  commitBatch(changes: readonly KeyChange[]): Uint8Array {
    if (this.closed) throw new WorkerCommitmentError("the commitment is closed");
    for (const [key, value] of changes) {
      if (value === undefined) this.values.delete(key);
      else this.values.set(key.slice(), value.slice());
    }
    if (this.posted - this.settled >= RING) this.settle(this.posted - RING + 1);
    const packed = pack(changes);
    this.port.postMessage(packed, [packed]);
    this.posted++;
    const root = new Uint8Array(ROOT_BYTES);
    this.unfilled.push(root);
    if (!this.deferred) this.settle(this.posted);
    return root;
  }

  /** True when commit number `n` (0-based) has its root (without waiting). */
  ready(n: number): boolean {
    return n < this.settled || n < Atomics.load(this.done, 0);
  }

  /** Waits until the first `count` commits have their roots and fills them in. */
  settle(count: number): void {
    while (this.settled < count) {
      let done = Atomics.load(this.done, 0);
      while (done <= this.settled) {
        this.checkFailed();
        if (Atomics.wait(this.done, 0, done, STALL_MS) === "timed-out") throw new WorkerCommitmentError(`no root from the commit worker for ${STALL_MS / 1000} s`);
        done = Atomics.load(this.done, 0);
      }
      for (; this.settled < done && this.settled < count; this.settled++) {
        const root = this.unfilled.shift()!;
        const at = (this.settled % RING) * ROOT_BYTES;
        root.set(this.roots.subarray(at, at + ROOT_BYTES));
        this.last = root;
      }
    }
    this.checkFailed();
  }

  private checkFailed(): void {
    if (Atomics.load(this.done, 1) === 0) return;
    const message = receiveMessageOnPort(this.port)?.message;
    throw new WorkerCommitmentError(`the commit worker failed: ${typeof message === "string" ? message : "(no message)"}`);
  }

  root(): Uint8Array {
    this.settle(this.posted);
    return this.last.slice();
  }

  get(key: Uint8Array): Uint8Array | undefined {
    return this.values.get(key)?.slice();
  }

  entries(): [Uint8Array, Uint8Array][] {
    const all: [Uint8Array, Uint8Array][] = [];
    for (const [k, v] of this.values.entries()) all.push([k.slice(), v.slice()]);
    return all.sort((a, b) => compareBytes(a[0], b[0]));
  }

  /** Stops the worker; roots not yet settled are abandoned. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.port.close();
    void this.worker.terminate();
  }
}

/** count (u32), then per change: key (54 bytes), value length (u32; DELETED for a delete), value. */
function pack(changes: readonly KeyChange[]): ArrayBuffer {
  let size = 4;
  for (const [, value] of changes) size += STATE_KEY_LENGTH + 4 + (value?.length ?? 0);
  const buffer = new ArrayBuffer(size);
  const bytes = new Uint8Array(buffer);
  const view = new DataView(buffer);
  view.setUint32(0, changes.length);
  let at = 4;
  for (const [key, value] of changes) {
    if (key.length !== STATE_KEY_LENGTH) throw new WorkerCommitmentError(`state key of ${key.length} bytes`);
    bytes.set(key, at);
    view.setUint32(at + STATE_KEY_LENGTH, value === undefined ? DELETED : value.length);
    at += STATE_KEY_LENGTH + 4;
    if (value !== undefined) {
      bytes.set(value, at);
      at += value.length;
    }
  }
  return buffer;
}
