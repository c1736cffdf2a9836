// The worker-thread pool of src/jobs/pool.ts, compiled (it starts worker threads only from dist/).
// Its workers here run a scripted stand-in for src/jobs/worker.ts that speaks the same protocol
// and does what each job's id says — answer after a delay, exit, throw, report a failure — so
// every way a worker can end is reached on purpose. The real worker runs in test/jobs/jobs.test.ts.
import { once } from "node:events";
import { createRequire, syncBuiltinESMExports } from "node:module";
import type { Worker as WorkerType, WorkerOptions } from "node:worker_threads";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JobInput, JobOutput, JobProgress } from "../../src/jobs/handlers.js";
import { requireFreshDist } from "../fuzz/dist.js";

type Pool = typeof import("../../src/jobs/pool.js");

// Job ids: "ok <ms>" answers done after ms, "after <i>" answers once job i has been answered
// (by any worker: the workers share a table of answered jobs), "progress" reports how far it is
// twice and answers once told to go on, "exit <code>" ends the thread, "throw" throws out of the
// thread, "fail" reports the job failed, "hold" never answers (until told to stop), "late" answers
// when told to stop (a job that finished as the stop came), then stops.
const SCRIPT = `
const { parentPort, workerData } = require("node:worker_threads");
const answered = new Int32Array(workerData.answered);
const done = (m) => {
  Atomics.store(answered, m.index, 1);
  parentPort.postMessage({ type: "done", index: m.index, output: { id: m.input.id } });
};
let held = null;
parentPort.on("message", (m) => {
  if (m.type === "close") return parentPort.postMessage({ type: "stopped" });
  if (m.type === "stop") {
    if (held !== null && held.input.id === "late") done(held);
    return parentPort.postMessage({ type: "stopped" });
  }
  if (m.type === "go on") return done(held);
  held = m;
  const [what, arg] = m.input.id.split(" ");
  if (what === "progress") {
    parentPort.postMessage({ type: "progress", index: m.index, progress: { blocks: 1, total: 2, txs: 3 } });
    return parentPort.postMessage({ type: "progress", index: m.index, progress: { blocks: 2, total: 2, txs: 5 } });
  }
  if (what === "exit") process.exit(Number(arg));
  if (what === "throw") throw new Error("thrown on the worker thread");
  if (what === "fail") return parentPort.postMessage({ type: "failed", index: m.index, message: "the handler threw" });
  if (what === "hold" || what === "late") return;
  if (what === "after") {
    const poll = setInterval(() => Atomics.load(answered, Number(arg)) === 1 && (clearInterval(poll), done(m)), 5);
    return;
  }
  setTimeout(() => done(m), Number(arg));
});
`;

const threads = createRequire(import.meta.url)("node:worker_threads") as { Worker: typeof WorkerType };
const RealWorker = threads.Worker;
/** The table the workers of one run share (run() makes a new one for each). */
let answered = new SharedArrayBuffer(4 * 16);
/** Every worker the pool started, in order, with what the pool posted to it ("job 3", "stop"). */
const started: ScriptedWorker[] = [];
class ScriptedWorker extends RealWorker {
  readonly posted: string[] = [];
  constructor(_script: URL, options: WorkerOptions) {
    super(SCRIPT, { ...options, eval: true, workerData: { answered } });
    started.push(this);
  }
  override postMessage(m: { type: string; index?: number }): void {
    this.posted.push(m.index === undefined ? m.type : `${m.type} ${m.index}`);
    super.postMessage(m);
  }
}

let pool: Pool;
beforeAll(async () => {
  requireFreshDist();
  threads.Worker = ScriptedWorker;
  syncBuiltinESMExports();
  pool = (await import("../../dist/src/jobs/pool.js")) as Pool;
});
afterAll(() => {
  threads.Worker = RealWorker;
  syncBuiltinESMExports();
});

const jobs = (...ids: string[]): JobInput[] => ids.map((id) => ({ file: `${id}.json`, id }));

async function run(
  inputs: JobInput[],
  n = 2,
  signal = new AbortController().signal,
  onFinished = (_index: number) => {},
  onProgress = (_running: ReadonlyMap<number, JobProgress>) => {},
) {
  answered = new SharedArrayBuffer(4 * inputs.length);
  started.length = 0;
  const results: Array<[number, string]> = [];
  const finished: number[] = [];
  const outcome = await pool
    .runJobs({ kind: "replay", toHeight: null }, inputs, {
      jobs: n,
      signal,
      onResult: (i, o: JobOutput) => results.push([i, (o as unknown as { id: string }).id]),
      onFinished: (i) => {
        finished.push(i);
        onFinished(i);
      },
      onProgress,
    })
    .then(
      (delivered): { delivered?: number; error?: Error } => ({ delivered }),
      (error: Error) => ({ error }),
    );
  return { ...outcome, results, finished };
}

/** Waits until every worker the last run started has exited (a worker the pool leaves running hangs the test). */
async function allExited(): Promise<void> {
  for (const w of started) if (w.threadId !== -1) await once(w, "exit");
}

// A run that should end but hangs (a worker never told to stop) fails here, not after the suite's two minutes.
describe("the worker pool on threads", { timeout: 10_000 }, () => {
  it("hands every result back in the inputs' order, whichever worker finishes first", async () => {
    const r = await run(jobs("after 4", "ok 0", "ok 5", "ok 0", "ok 0"));
    expect(r.finished).toEqual([1, 2, 3, 4, 0]);
    expect(r).toMatchObject({ delivered: 5 });
    expect(r.results).toEqual([
      [0, "after 4"],
      [1, "ok 0"],
      [2, "ok 5"],
      [3, "ok 0"],
      [4, "ok 0"],
    ]);
    expect(started).toHaveLength(2);
    await allExited();
  });

  it("reports each job's progress while it runs, and drops a job from the running ones when it is done", async () => {
    const seen: Array<Array<[number, JobProgress]>> = [];
    const r = await run(jobs("progress", "after 0"), 2, undefined, undefined, (running) => {
      seen.push([...running]);
      if (running.get(0)?.blocks === 2) started[0]!.postMessage({ type: "go on" });
    });
    expect(r).toMatchObject({ delivered: 2, finished: [0, 1] });
    expect(seen).toEqual([[[0, { blocks: 1, total: 2, txs: 3 }]], [[0, { blocks: 2, total: 2, txs: 5 }]], [], []]);
  });

  it("one job, or --jobs 1, runs on this thread: no worker is started", async () => {
    const outputs: JobOutput[] = [];
    const options = { signal: new AbortController().signal, onResult: (_: number, o: JobOutput) => outputs.push(o) };
    started.length = 0;
    expect(await pool.runJobs({ kind: "replay", toHeight: null }, jobs("exit 3"), { ...options, jobs: 2 })).toBe(1);
    expect(await pool.runJobs({ kind: "replay", toHeight: null }, jobs("exit 3", "exit 4"), { ...options, jobs: 1 })).toBe(2);
    expect(started).toEqual([]);
    expect(outputs.map((o) => [o.kind, (o as { status?: string }).status])).toEqual([
      ["replay", "unusable"],
      ["replay", "unusable"],
      ["replay", "unusable"],
    ]);
  });

  it("a worker thread that exits under its job fails the run with JobFailed naming the job, never a short count", async () => {
    const r = await run(jobs("ok 0", "exit 3", "ok 50", "ok 50"));
    expect(r.error).toBeInstanceOf(pool.JobFailed);
    expect(r.error!.message).toBe("a worker thread exited (code 3) under exit 3");
  });

  it("a worker thread that exits with code 0 under its job fails the run too", async () => {
    const r = await run(jobs("exit 0", "ok 0"));
    expect(r.error).toBeInstanceOf(pool.JobFailed);
    expect(r.error!.message).toBe("a worker thread exited (code 0) under exit 0");
  });

  it("a worker thread that dies under its job stops the other workers' jobs", async () => {
    const r = await run(jobs("hold", "exit 1"));
    expect(r.error!.message).toBe("a worker thread exited (code 1) under exit 1");
    expect(r.results).toEqual([]);
  });

  it("an error thrown out of a worker thread fails the run with that error", async () => {
    const r = await run(jobs("ok 30", "throw", "ok 0"));
    expect(r.error).not.toBeInstanceOf(pool.JobFailed);
    expect(r.error!.message).toBe("thrown on the worker thread");
    // The job under way finishes and is handed back; no job is started after the failure.
    expect(r).toMatchObject({ results: [[0, "ok 30"]], finished: [0] });
    await allExited();
  });

  it("a job its worker reports failed fails the run with JobFailed carrying the worker's message, and stops the other workers", async () => {
    const r = await run(jobs("hold", "fail", "ok 0"));
    expect(r.error).toBeInstanceOf(pool.JobFailed);
    expect(r.error!.message).toBe("the handler threw");
    expect(r.results).toEqual([]);
  });

  it("a stop ends the jobs under way and resolves with the results handed back before it", async () => {
    const stop = new AbortController();
    const r = await run(jobs("ok 0", "hold", "hold", "ok 0"), 2, stop.signal, () => stop.abort());
    expect(r).toEqual({ delivered: 1, results: [[0, "ok 0"]], finished: [0] });
    // No job is handed out after the stop (a consume job would start a target process).
    expect(started.map((w) => w.posted)).toEqual([
      ["job 0", "stop"],
      ["job 1", "stop"],
    ]);
    await allExited();
  });

  it("a result that comes in after the stop is not handed back", async () => {
    const stop = new AbortController();
    const r = await run(jobs("ok 0", "late"), 2, stop.signal, () => stop.abort());
    expect(r).toEqual({ delivered: 1, results: [[0, "ok 0"]], finished: [0] });
  });
});
