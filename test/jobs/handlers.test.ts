// What a job of each command hands back (src/jobs/handlers.ts), run through the pool on this
// thread (--jobs 1): a replay's report with its time, up to --to-height, its progress block by
// block; a fill's fixture text and index summary, or why the scenario was not filled; a consume's
// report against our own t8n server, and a stop that ends it.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fixtureSummary } from "../../src/harness/corpus-index.js";
import { readFixture } from "../../src/harness/documents.js";
import { makeHandler, type FillOutput, type JobInput, type JobOutput, type JobProgress, type JobSpec } from "../../src/jobs/handlers.js";
import { runJobs } from "../../src/jobs/pool.js";
import { requireFreshDist } from "../fuzz/dist.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "cbqs-handlers-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const input = (file: string): JobInput => ({ file, id: file });

async function one(spec: JobSpec, file: string, signal = new AbortController().signal) {
  const outputs: JobOutput[] = [];
  const progress: JobProgress[] = [];
  const delivered = await runJobs(spec, [input(file)], { jobs: 1, signal, onResult: (_, o) => outputs.push(o), onProgress: (r) => progress.push(...r.values()) });
  return { delivered, output: outputs[0], progress };
}

describe("a job of each command", () => {
  it("replay: the fixture's report and its seconds; its progress block by block; --to-height stops there", async () => {
    const file = "fixtures/corpus/transfers.json";
    const fixture = readFixture(file);
    const txs = fixture.blocks.reduce((n, b) => n + b.transactions.length, 0);
    const before = performance.now();
    const all = await one({ kind: "replay", toHeight: null }, file);
    const outer = (performance.now() - before) / 1000;
    expect(all.output).toMatchObject({ kind: "replay", file, name: "transfers", status: "ok", blocks: fixture.blocks.length, txs });
    // Its wall time in seconds: more than nothing, within the call's own.
    expect((all.output as { seconds: number }).seconds).toBeGreaterThan(0);
    expect((all.output as { seconds: number }).seconds).toBeLessThanOrEqual(outer);
    expect(all.progress.at(-1)).toEqual({ blocks: fixture.blocks.length, total: fixture.blocks.length, txs });
    expect(all.progress.map((p) => p.blocks)).toEqual(fixture.blocks.map((_, i) => i + 1));
    const first = fixture.blocks[0]!;
    const part = await one({ kind: "replay", toHeight: first.height }, file);
    expect(part.output).toMatchObject({ status: "ok", blocks: 1, txs: first.transactions.length });
  });

  it("fill: the fixture text as fill writes it (post-state as asked) and its index summary", async () => {
    const every = (await one({ kind: "fill", postState: "every" }, "fixtures/scenarios/transfers.json")).output as FillOutput & { text: string };
    expect(every).toMatchObject({ kind: "fill", file: "fixtures/scenarios/transfers.json", summary: fixtureSummary(readFixture("fixtures/corpus/transfers.json")) });
    expect(every.text).toBe(readFileSync("fixtures/corpus/transfers.json", "utf8"));
    const none = (await one({ kind: "fill", postState: "none" }, "fixtures/scenarios/transfers.json")).output as { text: string };
    expect(none.text).not.toContain('"post_state"');
    const final = (await one({ kind: "fill", postState: "final" }, "fixtures/scenarios/transfers.json")).output as { text: string };
    expect(final.text.match(/"post_state"/g)).toHaveLength(1);
  });

  it("fill: a scenario failing its own expectations is failed, one with an invalid genesis unusable, an unreadable one fails the run", async () => {
    const scenario = JSON.parse(readFileSync("fixtures/scenarios/transfers.json", "utf8"));
    const failing = join(dir, "failing.json");
    writeFileSync(failing, JSON.stringify({ ...scenario, blocks: [{ ...scenario.blocks[0], txs: [{ ...scenario.blocks[0].txs[0], expect: { status: "rejected" } }] }] }));
    expect((await one({ kind: "fill", postState: "none" }, failing)).output).toMatchObject({ kind: "fill", file: failing, failed: expect.stringMatching(/^scenario transfers fails its own expectations: /) });
    const genesis = join(dir, "genesis.json");
    const accounts = { "0x4444444444444444444444444444444444444444": { balance: "18446744073709551615" }, "0x4545454545454545454545454545454545454545": { balance: "1" } };
    writeFileSync(genesis, JSON.stringify({ ...scenario, genesis: { ...scenario.genesis, accounts } }));
    expect((await one({ kind: "fill", postState: "none" }, genesis)).output).toEqual({ kind: "fill", file: genesis, unusable: { path: "$.genesis", reason: "invalid genesis: accounts: total balance exceeds u64" } });
    await expect(one({ kind: "fill", postState: "none" }, join(dir, "missing.json"))).rejects.toThrow(/missing\.json/);
  });

  it("consume: the report against our own t8n server; a stop ends the job under way and the run, with nothing handed back", async () => {
    requireFreshDist();
    const spec: JobSpec = { kind: "consume", mode: "t8n-server", command: "node dist/src/cli.js t8n --server", timeout: 60, stateRoot: true };
    const ok = await one(spec, "fixtures/corpus/transfers.json");
    expect(ok.output).toMatchObject({ kind: "consume", status: "ok", id: "fixtures/corpus/transfers.json" });
    expect(ok.progress.at(-1)).toMatchObject({ blocks: readFixture("fixtures/corpus/transfers.json").blocks.length });
    const stop = new AbortController();
    const outputs: JobOutput[] = [];
    const run = runJobs(spec, [input("fixtures/corpus/transfers.json"), input("fixtures/corpus/create-quote.json")], {
      jobs: 1,
      signal: stop.signal,
      onResult: (_, o) => outputs.push(o),
      onProgress: () => stop.abort(),
    });
    expect(await run).toBe(0);
    expect(outputs).toEqual([]);
  });

  it("consume: the run resolves only after the target's server has read EOF and exited", async () => {
    requireFreshDist();
    const exited = join(dir, "exited");
    // Once its stdin ends, the server takes a moment more before it has exited: a run that did not wait for it would resolve first.
    const spec: JobSpec = { kind: "consume", mode: "t8n-server", command: `node dist/src/cli.js t8n --server; sleep 0.3; echo > ${exited}`, timeout: 60, stateRoot: true };
    const r = await one(spec, "fixtures/corpus/transfers.json");
    expect(r.output).toMatchObject({ status: "ok" });
    expect(readFileSync(exited, "utf8")).toBe("\n");
  });

  it("consume: the handler's stop ends the fixture under way at its next block, with nothing to hand back", async () => {
    requireFreshDist();
    const spec: JobSpec = { kind: "consume", mode: "t8n-server", command: "node dist/src/cli.js t8n --server", timeout: 60, stateRoot: true };
    const handler = makeHandler(spec);
    const blocks: number[] = [];
    try {
      // update-stream.json has 6 blocks: stopped after the first, the rest are never asked.
      const out = await handler.run(input("fixtures/corpus/update-stream.json"), (p) => {
        blocks.push(p.blocks);
        handler.stop();
      });
      expect(out).toBeUndefined();
      expect(blocks).toEqual([1]);
    } finally {
      await handler.close();
    }
  });

  it("consume: a target that failed a fixture is closed, so the next fixture gets a fresh process; one that served a fixture serves the next", async () => {
    requireFreshDist();
    const starts = join(dir, "starts");
    const once = join(dir, "started-once");
    // The first process says hello, then answers its first request with the wrong id (unusable) and stays up; every later one is our server.
    const command = [
      `echo >> ${starts}`,
      `if [ -e ${once} ]; then exec node dist/src/cli.js t8n --server; fi`,
      `touch ${once}`,
      `echo '{"protocol":"cbqs-t8n-server/v1","session_state_root":"chain"}'`,
      `read request`,
      `echo '{"id":0}'`,
      `cat > /dev/null`,
    ].join("; ");
    const handler = makeHandler({ kind: "consume", mode: "t8n-server", command, timeout: 10, stateRoot: true });
    const started = () => readFileSync(starts, "utf8").length;
    const file = "fixtures/corpus/transfers.json";
    try {
      const failed = await handler.run(input(file), () => undefined);
      expect(failed).toMatchObject({ status: "unusable", targetFailed: true, message: expect.stringMatching(/answered id 0, expected 1$/) });
      expect(await handler.run(input(file), () => undefined)).toMatchObject({ status: "ok" });
      expect(started()).toBe(2);
      expect(await handler.run(input(file), () => undefined)).toMatchObject({ status: "ok" });
      expect(started()).toBe(2);
    } finally {
      await handler.close();
    }
  });

  it("the pool on this thread: a stop reaches the job under way, and a finished job leaves the running ones", async () => {
    requireFreshDist();
    const spec: JobSpec = { kind: "consume", mode: "t8n-server", command: "node dist/src/cli.js t8n --server", timeout: 60, stateRoot: true };
    const stop = new AbortController();
    const reported: number[] = [];
    await runJobs(spec, [input("fixtures/corpus/update-stream.json")], { jobs: 1, signal: stop.signal, onResult: () => undefined, onProgress: (r) => (reported.push(r.get(0)?.blocks ?? 0), stop.abort()) });
    // The first block's report stops it; the job's end leaves no job running.
    expect(reported).toEqual([1, 0]);
    const sizes: number[] = [];
    await runJobs({ kind: "replay", toHeight: null }, [input("fixtures/corpus/transfers.json")], { jobs: 1, signal: new AbortController().signal, onResult: () => undefined, onProgress: (r) => sizes.push(r.size) });
    expect(sizes).toEqual([1, 1, 0]);
  });

  it("consume: a target that cannot start is unusable, named by its mode and command in the report", async () => {
    const spec: JobSpec = { kind: "consume", mode: "t8n-server", command: "no-such-command-cbqs-jobs", timeout: 60, stateRoot: true };
    const failed = await one(spec, "fixtures/corpus/transfers.json");
    expect(failed.output).toMatchObject({ kind: "consume", status: "unusable", targetFailed: true });
    expect((failed.output as { message: string }).message).toMatch(/^t8n-server no-such-command-cbqs-jobs: starting the chain: /);
  });
});
