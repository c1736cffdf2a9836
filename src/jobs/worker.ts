// A worker thread of src/jobs/pool.ts: runs the jobs the main thread sends, one at a time, with
// the handler of its JobSpec; a stop ends the job under way (and its target process) and exits.
import { parentPort, workerData } from "node:worker_threads";
import { makeHandler, type JobSpec } from "./handlers.js";
import type { FromWorker, ToWorker } from "./pool.js";

const port = parentPort!;
const post = (m: FromWorker) => port.postMessage(m);
const handler = makeHandler(workerData as JobSpec);

port.on("message", (m: ToWorker) => {
  if (m.type === "stop") {
    handler.stop();
    void handler.close().then(() => post({ type: "stopped" }));
    return;
  }
  handler.run(m.input).then(
    (output) => post(output === undefined ? { type: "stopped" } : { type: "done", index: m.index, output }),
    (err: unknown) => post({ type: "failed", index: m.index, message: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
  );
});
