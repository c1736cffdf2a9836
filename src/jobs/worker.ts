// A worker thread of src/jobs/pool.ts: serves the main thread's jobs (src/jobs/serve.ts) with
// the handler of its JobSpec. Its work runs in message handlers, never in this module's body.
import { parentPort, workerData } from "node:worker_threads";
import { makeHandler, type JobSpec } from "./handlers.js";
import { serveJobs } from "./serve.js";

serveJobs(parentPort!, makeHandler(workerData as JobSpec));
