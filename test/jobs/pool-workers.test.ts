// The job pool's worker path (src/jobs/pool.ts) in this process: its workers are stand-ins that
// serve jobs with the real src/jobs/serve.ts over a MessageChannel, with a handler scripted by
// each job's id, and that can die under a job or emit an error as a thread can. Pinned: results in
// the inputs' order whatever order workers finish in; a worker dying under its job, an error, a
// failed job each fail the run (never a short count) and stop the other workers; a stop ends every
// worker and resolves with what was handed back; a close when no job is left, waited for; how
// many workers are started. test/jobs/pool.test.ts runs the compiled pool on real threads.
import { EventEmitter, getEventListeners } from "node:events";
import { MessageChannel, type MessagePort } from "node:worker_threads";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { makeHandler, type Handler, type JobInput, type JobOutput, type JobProgress, type JobSpec } from "../../src/jobs/handlers.js";
import { JobFailed, runJobs, threadsOn, type FromWorker, type PoolOptions, type PoolWorker, type StartWorker, type ToWorker } from "../../src/jobs/pool.js";
import { serveJobs } from "../../src/jobs/serve.js";
import { requireFreshDist } from "../fuzz/dist.js";

/** Opened by name: a job "gate <name>" answers when its gate opens, a close waits for gate "close <worker>". */
class Gates {
  private readonly gates = new Map<string, { promise: Promise<void>; open: () => void }>();
  private gate(name: string) {
    let g = this.gates.get(name);
    if (g === undefined) {
      let open!: () => void;
      const promise = new Promise<void>((r) => (open = r));
      g = { promise, open };
      this.gates.set(name, g);
    }
    return g;
  }
  wait = (name: string): Promise<void> => this.gate(name).promise;
  open = (name: string): void => this.gate(name).open();
}

/** A worker in this process: the real serveJobs on one end of a channel, the pool on the other. */
class ChannelWorker extends EventEmitter implements PoolWorker {
  /** What the pool posted to it: "job 3", "stop", "close". */
  readonly posted: string[] = [];
  terminated = false;
  private gone = false;
  private readonly port: MessagePort;
  private readonly served: MessagePort;

  constructor(readonly n: number, handler: (w: ChannelWorker) => Handler) {
    super();
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.served = port2;
    serveJobs(port2, handler(this));
    port1.on("message", (m: FromWorker) => this.gone || this.emit("message", m));
  }

  postMessage(m: ToWorker): void {
    this.posted.push(m.type === "job" ? `job ${m.index}` : m.type);
    if (!this.gone) this.port.postMessage(m);
  }

  terminate(): void {
    this.terminated = true;
    this.exit(1);
  }

  /** The thread has ended (terminated, or on its own under a job): "exit" once, nothing after it. */
  exit(code: number): void {
    if (this.gone) return;
    this.gone = true;
    this.port.close();
    this.served.close();
    setImmediate(() => this.emit("exit", code));
  }

  /** An exception thrown out of the thread: "error", then its exit. */
  fault(err: Error): void {
    this.emit("error", err);
    this.exit(1);
  }
}

let gates: Gates;
let workers: ChannelWorker[];
/** Every handler's closes, by worker. */
let closes: number[];

const output = (input: JobInput): JobOutput => ({ kind: "fill", file: input.file, failed: input.id });

/**
 * Job ids: "ok" answers at once; "gate <name>" when that gate opens; "hold" answers only a stop
 * (stopped, nothing to hand back); "late" answers a stop with its output (it finished as the stop
 * came); "throw" throws from the handler; "exit <code>" ends its thread under it; "error <gate>"
 * throws out of its thread, then opens that gate; "progress" reports blocks 1 and 2 of 2, then
 * answers when gate "progress" opens.
 */
function scripted(w: ChannelWorker): Handler {
  let onStop = () => {};
  return {
    run(input, progress) {
      const [what, arg = ""] = input.id.split(" ");
      switch (what) {
        case "ok":
          return Promise.resolve(output(input));
        case "gate":
          return gates.wait(arg).then(() => output(input));
        case "hold":
        case "late":
          return new Promise((resolve) => (onStop = () => resolve(what === "late" ? output(input) : undefined)));
        case "throw":
          return Promise.reject(new Error(`the handler of ${input.id} threw`));
        case "exit":
          w.exit(Number(arg));
          return new Promise(() => {});
        case "error":
          w.fault(new Error("thrown out of the worker thread"));
          gates.open(arg);
          return new Promise(() => {});
        case "progress":
          progress({ blocks: 1, total: 2, txs: 3 });
          progress({ blocks: 2, total: 2, txs: 5 });
          return gates.wait("progress").then(() => output(input));
      }
      throw new Error(`no script for ${input.id}`);
    },
    stop: () => onStop(),
    close: () => {
      closes[w.n]!++;
      return w.n === 0 ? gates.wait("close 0") : Promise.resolve();
    },
  };
}

const startScripted: StartWorker = () => {
  const w = new ChannelWorker(workers.length, scripted);
  workers.push(w);
  closes.push(0);
  return w;
};

afterEach(() => {
  // A mutant that leaves a worker running must not leave its ports open past the test.
  for (const w of workers) w.exit(0);
});

const SPEC: JobSpec = { kind: "fill", postState: "none" };
const jobs = (...ids: string[]): JobInput[] => ids.map((id) => ({ file: `${id}.json`, id }));

interface Run {
  delivered?: number;
  error?: Error;
  results: Array<[number, string]>;
  finished: number[];
}

/** Runs `ids` on `n` scripted workers (gate "close 0" open unless `closeWaits`). */
async function run(ids: string[], n: number, options: Partial<PoolOptions> = {}, closeWaits = false): Promise<Run> {
  gates = new Gates();
  workers = [];
  closes = [];
  if (!closeWaits) gates.open("close 0");
  const results: Array<[number, string]> = [];
  const finished: number[] = [];
  const outcome = await runJobs(
    SPEC,
    jobs(...ids),
    {
      jobs: n,
      signal: new AbortController().signal,
      onResult: (i, o) => results.push([i, (o as { failed: string }).failed]),
      onFinished: (i) => finished.push(i),
      ...options,
    },
    startScripted,
  ).then(
    (delivered) => ({ delivered }),
    (error: Error) => ({ error }),
  );
  return { ...outcome, results, finished };
}

/** Waits (turn by turn, at most 1,000 turns) until `ready()`. */
async function until(ready: () => boolean): Promise<void> {
  for (let turn = 0; !ready(); turn++) {
    if (turn === 1000) throw new Error("never ready");
    await new Promise((r) => setImmediate(r));
  }
}

describe("the pool's workers", { timeout: 10_000 }, () => {
  beforeAll(() => {
    gates = new Gates();
    workers = [];
    closes = [];
  });

  it("hands every result back in the inputs' order, whichever worker finishes first; each worker takes the next job not yet taken, then is closed", async () => {
    const finished: number[] = [];
    const r = await run(["gate a", "ok", "ok", "ok"], 2, {
      onFinished: (i) => {
        finished.push(i);
        if (i === 3) gates.open("a");
      },
    });
    expect(finished).toEqual([1, 2, 3, 0]);
    expect(r).toMatchObject({ delivered: 4, results: [[0, "gate a"], [1, "ok"], [2, "ok"], [3, "ok"]] });
    expect(workers.map((w) => w.posted)).toEqual([
      ["job 0", "close"],
      ["job 1", "job 2", "job 3", "close"],
    ]);
    expect(closes).toEqual([1, 1]);
    expect(workers.map((w) => w.terminated)).toEqual([true, true]);
  });

  it("tells how far the jobs under way are, and drops a job from them when it is done", async () => {
    const seen: Array<Array<[number, JobProgress]>> = [];
    const r = await run(["progress", "gate b"], 2, {
      onProgress: (running) => {
        seen.push([...running]);
        if (running.get(0)?.blocks === 2) gates.open("progress");
      },
      onFinished: (i) => i === 0 && gates.open("b"),
    });
    expect(r).toMatchObject({ delivered: 2 });
    expect(seen).toEqual([[[0, { blocks: 1, total: 2, txs: 3 }]], [[0, { blocks: 2, total: 2, txs: 5 }]], [], []]);
  });

  it("resolves only once every worker has closed its handler (a target server has exited)", async () => {
    let settled = false;
    const outcome = run(["ok", "ok"], 2, {}, true).then((r) => ((settled = true), r));
    await until(() => closes[0] === 1 && workers[1]!.terminated);
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    expect(workers[0]!.terminated).toBe(false);
    gates.open("close 0");
    expect(await outcome).toMatchObject({ delivered: 2 });
    expect(workers[0]!.terminated).toBe(true);
  });

  it("a worker that dies under its job fails the run with JobFailed naming the job and stops the other workers: never a short count", async () => {
    const r = await run(["hold", "exit 3"], 2);
    expect(r.error).toBeInstanceOf(JobFailed);
    expect(r.error!.name).toBe("JobFailed");
    expect(r.error!.message).toBe("a worker thread exited (code 3) under exit 3");
    expect(r.results).toEqual([]);
    expect(workers.map((w) => w.posted)).toEqual([
      ["job 0", "stop"],
      ["job 1", "stop"],
    ]);
    expect(workers.map((w) => w.terminated)).toEqual([true, true]);
    const clean = await run(["exit 0", "ok", "ok"], 2);
    expect(clean.error!.message).toBe("a worker thread exited (code 0) under exit 0");
  });

  it("an error thrown out of a worker fails the run with that error; the job under way elsewhere is handed back, no job is started after it", async () => {
    const r = await run(["gate a", "error a", "ok"], 2);
    expect(r.error).not.toBeInstanceOf(JobFailed);
    expect(r.error!.message).toBe("thrown out of the worker thread");
    expect(r).toMatchObject({ results: [[0, "gate a"]], finished: [0] });
    expect(workers.map((w) => w.posted)).toEqual([["job 0"], ["job 1"]]);
    expect(workers.map((w) => w.terminated)).toEqual([true, true]);
  });

  it("a job whose handler threw fails the run with JobFailed carrying the worker's stack, and stops the other workers", async () => {
    const r = await run(["hold", "throw"], 2);
    expect(r.error).toBeInstanceOf(JobFailed);
    expect(r.error!.message).toMatch(/^Error: the handler of throw threw\n {4}at /);
    expect(r.results).toEqual([]);
    expect(workers.map((w) => w.posted)).toEqual([
      ["job 0", "stop"],
      ["job 1", "stop"],
    ]);
    expect(closes).toEqual([1, 0]);
    expect(workers.map((w) => w.terminated)).toEqual([true, true]);
  });

  it("a stop ends every worker's job and resolves with the results handed back before it; none is handed out after it", async () => {
    const stop = new AbortController();
    const r = await run(["ok", "hold", "ok", "ok"], 2, { signal: stop.signal, onFinished: () => stop.abort() });
    expect(r).toMatchObject({ delivered: 1, results: [[0, "ok"]] });
    expect(workers.map((w) => w.posted)).toEqual([
      ["job 0", "stop"],
      ["job 1", "stop"],
    ]);
    expect(workers.map((w) => w.terminated)).toEqual([true, true]);
  });

  it("a result that comes in after the stop is not handed back", async () => {
    const stop = new AbortController();
    const finished: number[] = [];
    const r = await run(["ok", "late"], 2, { signal: stop.signal, onFinished: (i) => (finished.push(i), stop.abort()) });
    expect(r).toMatchObject({ delivered: 1, results: [[0, "ok"]] });
    expect(finished).toEqual([0]);
  });

  it("leaves nothing on the caller's signal: a stop after the run posts nothing (the callbacks besides onResult are optional)", async () => {
    const stop = new AbortController();
    const r = await run(["ok", "ok"], 2, { signal: stop.signal, onFinished: undefined, onProgress: undefined });
    expect(r.delivered).toBe(2);
    expect(getEventListeners(stop.signal, "abort")).toEqual([]);
    stop.abort();
    expect(workers.map((w) => w.posted)).toEqual([
      ["job 0", "close"],
      ["job 1", "close"],
    ]);
  });
});

describe("how many workers the pool starts", { timeout: 60_000 }, () => {
  const spec: JobSpec = { kind: "replay", toHeight: null };
  const corpus = ["transfers", "create-quote", "update-stream"].map((name): JobInput => ({ file: `fixtures/corpus/${name}.json`, id: name }));
  let started: number;
  /** Workers serving the real replay handler on a channel. */
  const channel: StartWorker = (s) => {
    started++;
    const w = new ChannelWorker(workers.length, () => makeHandler(s));
    workers.push(w);
    return w;
  };
  /** Each result's index, fixture and status (its seconds vary). */
  async function replay(n: number, inputs: readonly JobInput[], start?: StartWorker | null): Promise<Array<[number, string, string]>> {
    started = 0;
    workers = [];
    const got: Array<[number, string, string]> = [];
    const delivered = await runJobs(spec, inputs, { jobs: n, signal: new AbortController().signal, onResult: (i, o) => got.push([i, o.file, (o as { status: string }).status]) }, start);
    expect(delivered).toBe(got.length);
    return got;
  }
  const expected = corpus.map((c, i): [number, string, string] => [i, c.file, "ok"]);

  it("as many as there are jobs, never more than the inputs; one job or one input runs on this thread", async () => {
    expect(await replay(2, corpus, channel)).toEqual(expected);
    expect(started).toBe(2);
    expect(await replay(8, corpus, channel)).toEqual(expected);
    expect(started).toBe(3);
    expect(await replay(1, corpus, channel)).toEqual(expected);
    expect(started).toBe(0);
    expect(await replay(4, corpus.slice(0, 1), channel)).toEqual(expected.slice(0, 1));
    expect(started).toBe(0);
    expect(await replay(4, [], channel)).toEqual([]);
    expect(started).toBe(0);
  });

  it("on this thread too, a run leaves no listener on the caller's signal (one signal serves run after run)", async () => {
    const stop = new AbortController();
    for (let k = 0; k < 3; k++) expect(await runJobs(spec, corpus.slice(0, 1), { jobs: 1, signal: stop.signal, onResult: () => undefined })).toBe(1);
    expect(getEventListeners(stop.signal, "abort")).toEqual([]);
  });

  it("threads only on a compiled worker script: from the TypeScript sources the jobs run on this thread", async () => {
    expect(threadsOn(new URL("./no-such-worker.js", import.meta.url))).toBeNull();
    // This file runs the pool from its sources, where src/jobs/worker.js does not exist.
    expect(await replay(2, corpus)).toEqual(expected);
  });

  it("threads on the compiled worker give the results of this thread", async () => {
    requireFreshDist();
    const threads = threadsOn(new URL("../../dist/src/jobs/worker.js", import.meta.url));
    expect(threads).not.toBeNull();
    expect(await replay(2, corpus, threads)).toEqual(expected);
  });
});
