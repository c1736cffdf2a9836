// The worker's side of the job pool (src/jobs/serve.ts), served on a MessageChannel in this
// process with a scripted handler: what it posts back for each job (its output, a stop, a
// failure with its stack), when it answers a stop or a close (only once the handler is closed),
// and how it throttles progress (one message per PROGRESS_MS, a job's last block always).
import { MessageChannel, type MessagePort } from "node:worker_threads";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Handler, JobInput, JobOutput, JobProgress } from "../../src/jobs/handlers.js";
import type { FromWorker, ToWorker } from "../../src/jobs/pool.js";
import { PROGRESS_MS, serveJobs } from "../../src/jobs/serve.js";

const open: MessagePort[] = [];
afterEach(() => {
  for (const p of open.splice(0)) p.close();
  vi.restoreAllMocks();
});

const input = (id: string): JobInput => ({ file: `${id}.json`, id });
const output = (id: string): JobOutput => ({ kind: "fill", file: `${id}.json`, failed: id });

/** A handler whose run is `run`; it logs its stops and closes, and its close resolves when `closed` does. */
function handler(run: Handler["run"], closed: Promise<void> = Promise.resolve()) {
  const log: string[] = [];
  const h: Handler = {
    run,
    stop: () => void log.push("stop"),
    close: () => (log.push("close"), closed),
  };
  return { h, log };
}

/** Serves `h` on one end of a channel; the test holds the other: it sends, and reads what came back. */
function serve(h: Handler) {
  const { port1, port2 } = new MessageChannel();
  open.push(port1, port2);
  serveJobs(port2, h);
  const got: FromWorker[] = [];
  let wake = () => {};
  port1.on("message", (m: FromWorker) => (got.push(m), wake()));
  return {
    got,
    send: (m: ToWorker) => port1.postMessage(m),
    /** Resolves once `n` messages have come back. */
    received: (n: number) =>
      new Promise<FromWorker[]>((resolve) => {
        wake = () => got.length >= n && resolve(got);
        wake();
      }),
  };
}

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

// A message that never comes (a dropped answer) fails the test here, not after the suite's two minutes.
describe("a worker serving jobs", { timeout: 10_000 }, () => {
  it("posts a job's output as done under the job's index, and a job stopped before it finished as stopped", async () => {
    const { h } = handler(async (i) => (i.id === "stopped" ? undefined : output(i.id)));
    const s = serve(h);
    s.send({ type: "job", index: 3, input: input("a") });
    expect(await s.received(1)).toEqual([{ type: "done", index: 3, output: output("a") }]);
    s.send({ type: "job", index: 4, input: input("stopped") });
    expect((await s.received(2))[1]).toEqual({ type: "stopped" });
  });

  it("posts a job whose handler throws as failed: the error's stack, its message when it has no stack, a thrown value as text", async () => {
    const bare = new Error("no stack here");
    bare.stack = undefined;
    const thrown = new Error("the handler broke");
    const { h } = handler(async (i) => {
      throw i.id === "error" ? thrown : i.id === "bare" ? bare : "a plain string";
    });
    const s = serve(h);
    s.send({ type: "job", index: 0, input: input("error") });
    s.send({ type: "job", index: 1, input: input("bare") });
    s.send({ type: "job", index: 2, input: input("value") });
    expect(await s.received(3)).toEqual([
      { type: "failed", index: 0, message: thrown.stack },
      { type: "failed", index: 1, message: "no stack here" },
      { type: "failed", index: 2, message: "a plain string" },
    ]);
    expect(thrown.stack).toMatch(/^Error: the handler broke\n {4}at /);
  });

  it("a stop stops the handler, then closes it, and answers stopped only once it is closed", async () => {
    const closed = deferred<void>();
    const { h, log } = handler(async (i) => output(i.id), closed.promise);
    const s = serve(h);
    s.send({ type: "stop" });
    // A job sent after the stop comes back first: the stop's answer waits for the close.
    s.send({ type: "job", index: 0, input: input("after") });
    expect(await s.received(1)).toEqual([{ type: "done", index: 0, output: output("after") }]);
    expect(log).toEqual(["stop", "close"]);
    closed.resolve();
    expect((await s.received(2))[1]).toEqual({ type: "stopped" });
  });

  it("a close (no job is left) closes the handler without stopping it, and answers stopped once it is closed", async () => {
    const closed = deferred<void>();
    const { h, log } = handler(async (i) => output(i.id), closed.promise);
    const s = serve(h);
    s.send({ type: "close" });
    s.send({ type: "job", index: 0, input: input("after") });
    expect(await s.received(1)).toEqual([{ type: "done", index: 0, output: output("after") }]);
    expect(log).toEqual(["close"]);
    closed.resolve();
    expect((await s.received(2))[1]).toEqual({ type: "stopped" });
  });

  it(`posts at most one progress message per ${PROGRESS_MS} ms, a job's first and last blocks always, each job timed from its own start`, async () => {
    let clock = 0;
    vi.spyOn(performance, "now").mockImplementation(() => clock);
    /** Each job reports these blocks of 5, each at its time. */
    const steps: Array<[number, number]> = [
      [1000, 1], // the first report
      [1100, 2], // 100 ms later: dropped
      [1199, 3], // dropped
      [1000 + PROGRESS_MS, 4], // PROGRESS_MS after the last one sent: sent
      [1000 + PROGRESS_MS + 1, 5], // the last block: sent however soon
    ];
    /** The second job reports its first block at clock 0 (a worker thread's clock starts with the thread): sent. */
    const second: Array<[number, number]> = [[0, 1], [PROGRESS_MS - 1, 2]];
    const { h } = handler(async (i, progress) => {
      for (const [t, blocks] of i.id === "second" ? second : steps) {
        clock = t;
        progress({ blocks, total: 5, txs: 10 * blocks });
      }
      return output(i.id);
    });
    const s = serve(h);
    s.send({ type: "job", index: 7, input: input("first") });
    await s.received(4);
    s.send({ type: "job", index: 8, input: input("second") });
    const got = await s.received(6);
    const reported = (index: number, blocks: number): FromWorker => ({ type: "progress", index, progress: { blocks, total: 5, txs: 10 * blocks } satisfies JobProgress });
    expect(got).toEqual([
      reported(7, 1),
      reported(7, 4),
      reported(7, 5),
      { type: "done", index: 7, output: output("first") },
      // Clock 0 is "before" the first job's last report, but the second job's clock is its own.
      reported(8, 1),
      { type: "done", index: 8, output: output("second") },
    ]);
  });
});
