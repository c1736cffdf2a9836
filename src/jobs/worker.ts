// A worker thread of src/jobs/pool.ts: runs the jobs the main thread sends, one at a time, with
// the handler of its JobSpec; a stop ends the job under way (and its target process) and exits.
import { parentPort, workerData } from "node:worker_threads";
import { performance } from "node:perf_hooks";
import { makeHandler, type JobProgress, type JobSpec } from "./handlers.js";
import type { FromWorker, ToWorker } from "./pool.js";

const port = parentPort!;
const post = (m: FromWorker) => port.postMessage(m);
const handler = makeHandler(workerData as JobSpec);
const PROGRESS_MS = 200;

port.on("message", (m: ToWorker) => {
  if (m.type === "stop" || m.type === "close") {
    if (m.type === "stop") handler.stop();
    void handler.close().then(() => post({ type: "stopped" }));
    return;
  }
  // At most one progress message per PROGRESS_MS: a long chain reports its blocks without flooding the port.
  let last = 0;
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
