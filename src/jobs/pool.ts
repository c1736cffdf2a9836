// Whole fixtures on several cores (`replay`, `consume`, `fill` with `--jobs N`): N workers
// (threads on src/jobs/worker.ts, which serves src/jobs/serve.ts), each taking the next job not
// yet taken and holding one job's data at a time, so memory stays bounded whatever the corpus.
// Results are handed back in the jobs' order, whatever order they finish in, so output and
// reports are those of one job at a time. Stopping (SIGINT/SIGTERM) tells every worker to end what
// it runs (a target process included) and drops unfinished jobs; when no job is left, each worker
// closes its handler (a target server is given EOF and waited for) before it is ended. Without
// compiled workers (from the TypeScript sources) the jobs run on this thread, one at a time.
import { existsSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { makeHandler, type JobInput, type JobOutput, type JobProgress, type JobSpec } from "./handlers.js";

const WORKER_SCRIPT = new URL("./worker.js", import.meta.url);

/** Main thread → worker: a job; a stop (end the job under way, then close); a close (no job is left). */
export type ToWorker = { type: "job"; index: number; input: JobInput } | { type: "stop" } | { type: "close" };
/** Worker → main thread. */
export type FromWorker =
  | { type: "done"; index: number; output: JobOutput }
  | { type: "progress"; index: number; progress: JobProgress }
  | { type: "failed"; index: number; message: string }
  /** The handler is closed (its target process has exited): the worker may be ended. */
  | { type: "stopped" };

export interface PoolOptions {
  jobs: number;
  /** Polled between jobs; a stop signal also aborts the jobs under way. */
  signal: AbortSignal;
  /** Each result, in the inputs' order. */
  onResult: (index: number, output: JobOutput) => void;
  /** Each result as soon as it is in (any order): for progress. */
  onFinished?: (index: number, output: JobOutput) => void;
  /** How far the jobs under way are (by input index), whenever one reports. */
  onProgress?: (running: ReadonlyMap<number, JobProgress>) => void;
}

/** A job failed in a way its handler does not report as a result (a bug): the run stops with it. */
export class JobFailed extends Error {
  override name = "JobFailed";
}

/** What the pool needs of a worker: a node:worker_threads Worker is one (a test's in-process stand-in another). */
export interface PoolWorker {
  postMessage(m: ToWorker): void;
  on(event: "message", listener: (m: FromWorker) => void): unknown;
  on(event: "error", listener: (err: Error) => void): unknown;
  /** Emitted once the worker has ended, by terminate() or on its own. */
  on(event: "exit", listener: (code: number) => void): unknown;
  terminate(): unknown;
}

/** Starts one worker for jobs under `spec`. */
export type StartWorker = (spec: JobSpec) => PoolWorker;

/** Worker threads on the compiled worker `script`; null where it is absent (running from the TypeScript sources). */
export function threadsOn(script: URL): StartWorker | null {
  return existsSync(script) ? (spec) => new Worker(script, { workerData: spec }) : null;
}

/**
 * Runs `inputs` under `spec`; returns how many results were handed to onResult (all, unless
 * stopped). Workers are started by `startWorker` (threads on the compiled worker); without one,
 * or with one job or one input, the jobs run on this thread.
 */
export async function runJobs(spec: JobSpec, inputs: readonly JobInput[], options: PoolOptions, startWorker: StartWorker | null = threadsOn(WORKER_SCRIPT)): Promise<number> {
  const ordered = inOrder(options.onResult);
  const running = new Map<number, JobProgress>();
  const progressOf = (index: number) => (p: JobProgress) => {
    running.set(index, p);
    options.onProgress?.(running);
  };
  const finished = (index: number) => {
    running.delete(index);
    options.onProgress?.(running);
  };
  const workers = Math.min(options.jobs, inputs.length);
  if (workers <= 1 || startWorker === null) {
    const handler = makeHandler(spec);
    const stop = () => handler.stop();
    options.signal.addEventListener("abort", stop);
    try {
      for (let i = 0; i < inputs.length && !options.signal.aborted; i++) {
        const output = await handler.run(inputs[i]!, progressOf(i));
        finished(i);
        if (output === undefined || options.signal.aborted) break;
        options.onFinished?.(i, output);
        ordered.add(i, output);
      }
    } finally {
      options.signal.removeEventListener("abort", stop);
      await handler.close();
    }
    return ordered.delivered();
  }
  return new Promise<number>((resolve, reject) => {
    let next = 0;
    let live = workers;
    let failure: Error | null = null;
    const pool: PoolWorker[] = [];
    const ended = new Set<PoolWorker>();
    /** The job each worker was last given: a worker not ended always holds one. */
    const holding = new Map<PoolWorker, number>();
    /** A worker is done (no job left, a stop, a failure, its exit): counted once. */
    const end = (w: PoolWorker) => {
      if (ended.has(w)) return;
      ended.add(w);
      void w.terminate();
      if (--live > 0) return;
      options.signal.removeEventListener("abort", stopAll);
      if (failure !== null) reject(failure);
      else resolve(ordered.delivered());
    };
    const feed = (w: PoolWorker) => {
      if (failure !== null || options.signal.aborted) return end(w);
      // No job left: the worker closes its handler (a target server gets EOF and exits) before it is ended.
      if (next >= inputs.length) return w.postMessage({ type: "close" } satisfies ToWorker);
      const index = next++;
      holding.set(w, index);
      w.postMessage({ type: "job", index, input: inputs[index]! } satisfies ToWorker);
    };
    const stopAll = () => pool.forEach((w) => w.postMessage({ type: "stop" } satisfies ToWorker));
    options.signal.addEventListener("abort", stopAll);
    for (let k = 0; k < workers; k++) {
      const w = startWorker(spec);
      pool.push(w);
      w.on("message", (m) => {
        if (m.type === "progress") progressOf(m.index)(m.progress);
        else if (m.type === "done") {
          finished(m.index);
          if (!options.signal.aborted) {
            options.onFinished?.(m.index, m.output);
            ordered.add(m.index, m.output);
          }
          feed(w);
        } else if (m.type === "failed") {
          failure ??= new JobFailed(m.message);
          stopAll();
          end(w);
        } else end(w);
      });
      w.on("error", (err) => {
        failure ??= err;
        end(w);
      });
      // A worker that exits before the pool ends it has died under its job (process.exit, a
      // terminate): that job's result will never come, so the run fails rather than come up short.
      w.on("exit", (code) => {
        if (!ended.has(w)) {
          failure ??= new JobFailed(`a worker thread exited (code ${code}) under ${inputs[holding.get(w)!]!.id}`);
          stopAll();
        }
        end(w);
      });
      feed(w);
    }
  });
}

/** Hands results to `deliver` in index order, holding early ones until those before them arrive. */
function inOrder(deliver: (index: number, output: JobOutput) => void): { add(index: number, output: JobOutput): void; delivered(): number } {
  const held = new Map<number, JobOutput>();
  let nextIndex = 0;
  return {
    add(index, output) {
      held.set(index, output);
      while (held.has(nextIndex)) {
        const o = held.get(nextIndex)!;
        held.delete(nextIndex);
        deliver(nextIndex++, o);
      }
    },
    delivered: () => nextIndex,
  };
}
