// The worker's side of src/jobs/pool.ts: runs the jobs the pool sends on `port`, one at a time,
// with `handler`; a stop ends the job under way (and its target process), a close (no job is
// left) closes the handler, and either answers "stopped" once the handler is closed. On a worker
// thread (src/jobs/worker.ts) the port is its parentPort; a test serves a MessageChannel's port.
import { performance } from "node:perf_hooks";
import type { Handler, JobProgress } from "./handlers.js";
import type { FromWorker, ToWorker } from "./pool.js";

/** What serveJobs needs of a port: parentPort and a MessageChannel's ports are ones. */
export interface JobPort {
  on(event: "message", listener: (m: ToWorker) => void): unknown;
  postMessage(m: FromWorker): void;
}

/** At most one progress message per PROGRESS_MS (a job's last block excepted). */
export const PROGRESS_MS = 200;

export function serveJobs(port: JobPort, handler: Handler): void {
  const post = (m: FromWorker) => port.postMessage(m);
  port.on("message", (m) => {
    if (m.type === "stop" || m.type === "close") {
      if (m.type === "stop") handler.stop();
      void handler.close().then(() => post({ type: "stopped" }));
      return;
    }
    // A long chain reports its blocks without flooding the port; its first and last blocks are
    // always told (a worker thread's clock starts at 0 with the thread: no job's first report is
    // within PROGRESS_MS of a report that never was).
    let last = Number.NEGATIVE_INFINITY;
    const progress = (p: JobProgress) => {
      const now = performance.now();
      if (now - last < PROGRESS_MS && p.blocks < p.total) return;
      last = now;
      post({ type: "progress", index: m.index, progress: p });
    };
    handler.run(m.input, progress).then(
      (output) => post(output === undefined ? { type: "stopped" } : { type: "done", index: m.index, output }),
      (err: unknown) => post({ type: "failed", index: m.index, message: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
    );
  });
}
