// A fuzz lane on a worker thread (`cbqs fuzz --jobs N`, src/fuzz/lanes.ts WorkerLane): a
// LocalLane driven by the main thread's messages, one request at a time. A stop ends the lane's
// target at once, even while a request is under way (messages are read between its awaits).
import { parentPort, workerData } from "node:worker_threads";
import { LaneFailure, LocalLane, type FromWorker, type LaneSpec, type ToWorker } from "./lanes.js";

const port = parentPort!;
const post = (m: FromWorker) => port.postMessage(m);
const lane = new LocalLane(workerData as LaneSpec, {
  onShrink: (run, candidates, size) => post({ type: "shrink", run, candidates, size }),
});

async function serve(m: ToWorker): Promise<void> {
  try {
    if (m.type === "run") post({ type: "ran", outcome: await lane.run(m.run) });
    else if (m.type === "finish") post({ type: "finished", report: await lane.finish(m.run) });
  } catch (err) {
    // Our own failure (a bug) keeps its stack for the error line; the target's is its one line.
    post({ type: "failed", line: err instanceof LaneFailure ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err), ours: !(err instanceof LaneFailure) });
  }
}

port.on("message", (m: ToWorker) => {
  switch (m.type) {
    case "run":
    case "finish":
      void serve(m);
      break;
    case "drop":
      lane.drop();
      break;
    case "stop":
      lane.stop();
      break;
    case "close":
      void lane.close().then(() => port.close());
      break;
  }
});
