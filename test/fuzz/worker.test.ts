// A fuzz lane on a worker thread (src/fuzz/worker.ts, driven by src/fuzz/lanes.ts WorkerLane),
// compiled as `cbqs fuzz --jobs N` runs it: a run's outcome comes back as the run ended; a
// target's failure as a LaneFailure with its one error line, our own as an Error with its stack;
// a finding is shrunk there (progress reported as it goes) unless it was dropped; a stop ends the
// run under way; a close ends the worker.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
// The compiled lanes: a worker thread runs dist/src/fuzz/worker.js, which only the compiled module finds.
import { LaneFailure, LocalLane, makeLanes, WorkerLane, type LaneSpec } from "../../dist/src/fuzz/lanes.js";
import { requireFreshDist } from "./dist.js";
import { OURS, zeroRootCommand } from "./commands.js";

let scratch: string;
const lanes: WorkerLane[] = [];

beforeAll(requireFreshDist);
beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), "cbqs-fuzz-worker-"));
});
afterEach(async () => {
  await Promise.all(lanes.splice(0).map((l) => l.close()));
  rmSync(scratch, { recursive: true, force: true });
});

function spec(command: string): LaneSpec {
  return { meta: { mode: "t8n", command, blocks: 1, stateRoot: true }, timeout: 60, seed: 1, shrinkBudget: 3, out: join(scratch, "report") };
}

function lane(command: string, shrinks: unknown[] = []): WorkerLane {
  const l = new WorkerLane(spec(command), { onShrink: (run, candidates, size) => void shrinks.push({ run, candidates, size }) });
  lanes.push(l);
  return l;
}

const zeroRoot = (): string => zeroRootCommand(scratch);

type Settled = { value: unknown } | { error: unknown } | "pending";

/**
 * What a promise has settled to once this turn of the event loop is over: a dead lane answers at
 * once, without a round trip to its worker, so "pending" there is a request that would wait forever.
 */
async function settledNow(p: Promise<unknown>): Promise<Settled> {
  let outcome: Settled = "pending";
  p.then(
    (value) => void (outcome = { value }),
    (error: unknown) => void (outcome = { error }),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return outcome;
}

/**
 * Closes a lane while its run 0 waits; what run 0 was answered. close() returns once the worker
 * has exited, or at once when the lane already knows it dead: the run has its answer either way.
 */
async function closeUnderRun(l: WorkerLane): Promise<Settled> {
  const ran = l.run(0);
  ran.catch(() => undefined);
  await l.close();
  return settledNow(ran);
}

/** A dead lane: every later request is rejected at once with `err` itself; stop, drop and close return. */
async function expectDead(l: WorkerLane, err: unknown): Promise<void> {
  for (const later of [() => l.run(1), () => l.finish(0)]) {
    const rejected = await settledNow(later());
    expect(rejected).toEqual({ error: err });
    expect((rejected as { error: unknown }).error).toBe(err);
  }
  l.stop();
  l.drop();
  expect(await settledNow(l.close())).toEqual({ value: undefined });
}

describe("a fuzz lane on a worker thread (src/fuzz/worker.ts)", () => {
  it("a run's outcome comes back; finishing a run that did not diverge is our own failure, an Error with its stack", async () => {
    const l = lane(OURS);
    expect(await l.run(0)).toMatchObject({ run: 0, blocks: 1, divergent: false, stopped: false, restarts: [] });
    const err = await l.finish(0).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(LaneFailure);
    expect((err as Error).message).toMatch(/^Error: no divergence of run 0 on this lane\n {4}at /);
  });

  it("a target's failure is a LaneFailure whose message is the one error line", async () => {
    const err = await lane("false")
      .run(0)
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(LaneFailure);
    const out = join(scratch, "report");
    expect((err as Error).message).toBe(
      `--t8n command failed on block 4 of run 0 (seed 1): exit 1 without writing --output.result (kept for a look: ${join(out, "alloc.json")}, ${join(out, "txs.json")}, ${join(out, "env.json")}: the block's inputs and the command's stderr)`,
    );
  });

  it("a divergence is shrunk on the worker, its progress reported as it goes; one dropped is not there to finish", async () => {
    const shrinks: unknown[] = [];
    const l = lane(zeroRoot(), shrinks);
    expect(await l.run(0)).toMatchObject({ run: 0, divergent: true, stopped: false });
    l.drop();
    await expect(l.finish(0)).rejects.toThrow(/^Error: no divergence of run 0 on this lane\n/);
    expect(await l.run(2)).toMatchObject({ run: 2, divergent: true, stopped: false });
    const report = await l.finish(2);
    expect(report.run).toBe(2);
    expect(report.headline).toMatch(/^DIVERGENCE seed 1 run 2: block \d+: t8n result: state_root expected "0x[0-9a-f]{64}" got "0x0{64}"$/);
    expect(report.writeError).toBeNull();
    // One progress message per candidate chain (the budget is 3), each with the run and the size of the best chain so far.
    expect(shrinks).toEqual([1, 2, 3].map((candidates) => ({ run: 2, candidates, size: { blocks: 1, txs: expect.any(Number) as number } })));
    expect(report.details[0]).toMatch(/^shrunk from 1 block, \d+ txs? to 1 block, \d+ txs? \(3 candidate chains\)$/);
  });

  it("a stop ends the run under way at once: its outcome is a stopped run, not the command's failure", async () => {
    // Without the stop the command would exit 0 without a result: a LaneFailure.
    const l = lane("sh -c 'sleep 10' sh");
    const ran = l.run(0);
    l.stop();
    expect(await ran).toMatchObject({ run: 0, divergent: false, stopped: true });
  });

  it("a close ends the worker: a lane closed answers no more", async () => {
    const l = lane(OURS);
    await l.close();
    await expect(l.run(0)).rejects.toThrow(new Error("the fuzz worker exited (status 0)"));
  }, 30_000);
});

describe("the compiled lanes of a campaign (src/fuzz/lanes.ts makeLanes, WorkerLane; hand-reviewed mutants)", () => {
  it("--jobs 1: one lane in this process; --jobs 2: a worker thread each", async () => {
    const hooks = { onShrink: () => undefined };
    const one = makeLanes(1, spec(OURS), hooks);
    expect(one).toHaveLength(1);
    expect(one[0]).toBeInstanceOf(LocalLane);
    await one[0]!.close();
    const two = makeLanes(2, spec(OURS), hooks);
    lanes.push(...(two as WorkerLane[]));
    expect(two).toHaveLength(2);
    expect(two.every((l) => l instanceof WorkerLane)).toBe(true);
    expect(two[0]).not.toBe(two[1]);
  });

  it("a worker that dies of its own error (a spec it cannot start a lane on) rejects the request under way with that error, not its exit's, and every later request with the same Error at once; stop, drop and close on the dead lane return", async () => {
    const l = new WorkerLane({ ...spec(OURS), meta: undefined } as unknown as LaneSpec, { onShrink: () => undefined });
    lanes.push(l);
    const answer = await closeUnderRun(l);
    // The worker's own error, not the exit (status 1) that follows it.
    expect(answer).toEqual({ error: new TypeError("Cannot read properties of undefined (reading 'mode')") });
    expect((answer as { error: unknown }).error).toBeInstanceOf(TypeError);
    await expectDead(l, (answer as { error: unknown }).error);
  });

  it("a worker that exits under a request (closed while a run waits on its command) rejects it with an Error naming the exit status, and every later request with the same Error at once; stop, drop and close on the dead lane return", async () => {
    const l = lane("sh -c 'sleep 10' sh");
    // The worker ends its target and closes its port at once: the run's own failure is never posted, the exit is its answer.
    const answer = await closeUnderRun(l);
    expect(answer).toEqual({ error: new Error("the fuzz worker exited (status 0)") });
    await expectDead(l, (answer as { error: unknown }).error);
  });
});
