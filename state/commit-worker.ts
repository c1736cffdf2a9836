// The worker half of WorkerCommitment (state/worker-commitment.ts): holds the Cowboy state
// database (QMDB "current", Blake3) and applies each block's net changes in the order they
// arrive, writing each new root into the shared ring. Nothing here decides anything: the main
// thread executes, this thread only merkleizes what it was sent, one block after another.
import { workerData } from "node:worker_threads";
import type { MessagePort } from "node:worker_threads";
import type { KeyChange } from "./commitment.js";
import { createStateCommitment } from "./qmdb/index.js";
import { STATE_KEY_LENGTH } from "./interface.js";
import { DELETED, ROOT_BYTES, type WorkerShared } from "./worker-commitment.js";

const { header, roots, ring, port } = workerData as WorkerShared & { port: MessagePort };
const done = new Int32Array(header);
const rootBytes = new Uint8Array(roots);
const commitment = createStateCommitment();
let commits = 0;

/** Unpacks one block's changes (WorkerCommitment.pack's layout); keys and values are views. */
function unpack(buffer: ArrayBuffer): KeyChange[] {
  const bytes = new Uint8Array(buffer);
  const view = new DataView(buffer);
  const count = view.getUint32(0);
  const changes: KeyChange[] = new Array(count);
  let at = 4;
  for (let i = 0; i < count; i++) {
    const key = bytes.subarray(at, at + STATE_KEY_LENGTH);
    const length = view.getUint32(at + STATE_KEY_LENGTH);
    at += STATE_KEY_LENGTH + 4;
    if (length === DELETED) changes[i] = [key, undefined];
    else {
      changes[i] = [key, bytes.subarray(at, at + length)];
      at += length;
    }
  }
  return changes;
}

port.on("message", (buffer: ArrayBuffer) => {
  if (Atomics.load(done, 1) !== 0) return;
  try {
    const root = commitment.commitBatch(unpack(buffer));
    rootBytes.set(root, (commits % ring) * ROOT_BYTES);
    commits++;
    Atomics.store(done, 0, commits);
  } catch (err) {
    port.postMessage(err instanceof Error ? (err.stack ?? err.message) : String(err));
    Atomics.store(done, 1, 1);
  }
  Atomics.notify(done, 0);
});
