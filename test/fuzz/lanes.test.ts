// The lanes `cbqs fuzz` runs on, in this process (src/fuzz/lanes.ts LocalLane; the worker-thread
// lane is test/fuzz/worker.test.ts): the target a mode makes, the one error line of a failing
// command (docs/reference/fuzzer.md §2) with the block's inputs kept in --out, and the lines a finding
// prints (§6): the headline, the shrink, the chain in words, what was written, the reproduce line.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LaneFailure, LocalLane, makeLanes, makeTarget, type LaneSpec } from "../../src/fuzz/lanes.js";
import { ServerTarget } from "../../src/target/server-target.js";
import { OURS, zeroRootCommand } from "./commands.js";

// Our compiled t8n as the command under test (a child per block; the lanes' own code runs here).
let scratch: string;
const open: LocalLane[] = [];

beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), "cbqs-fuzz-lanes-"));
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((l) => l.close()));
  rmSync(scratch, { recursive: true, force: true });
});

function spec(command: string, over: Partial<LaneSpec> = {}, mode: "t8n" | "t8n-server" = "t8n"): LaneSpec {
  return { meta: { mode, command, blocks: 1, stateRoot: true }, timeout: 60, seed: 1, shrinkBudget: 2, out: join(scratch, "report"), ...over };
}

function lane(s: LaneSpec, shrinks: unknown[] = []): LocalLane {
  const l = new LocalLane(s, { onShrink: (run, candidates, size) => void shrinks.push({ run, candidates, size }) });
  open.push(l);
  return l;
}

const zeroRoot = (): string => zeroRootCommand(scratch);

const caught = (p: Promise<unknown>): Promise<unknown> =>
  p.then(
    () => null,
    (e: unknown) => e,
  );

describe("the target of a mode (src/fuzz/lanes.ts makeTarget, makeLanes)", () => {
  it("--t8n-server: a server kept for the run with the timeout in ms; --t8n: a per-call command", async () => {
    const server = makeTarget("t8n-server", "my server", 2.5);
    expect(server).toBeInstanceOf(ServerTarget);
    expect((server as ServerTarget).command).toBe("my server");
    expect((server as unknown as { timeoutMs: number }).timeoutMs).toBe(2_500);
    await server.close();
    const call = makeTarget("t8n", "my t8n", 1);
    expect(call).not.toBeInstanceOf(ServerTarget);
    expect([call.memoizable, call.stateRoot]).toEqual([true, "per_block"]);
    await call.close();
  });

  it("from the TypeScript source (no compiled worker beside it) every lane is a lane in this process, as many as asked", async () => {
    const lanes = makeLanes(3, spec(OURS), { onShrink: () => undefined });
    expect(lanes).toHaveLength(3);
    expect(lanes.every((l) => l instanceof LocalLane)).toBe(true);
    expect(new Set(lanes).size).toBe(3);
    await Promise.all(lanes.map((l) => l.close()));
    const one = makeLanes(1, spec(OURS), { onShrink: () => undefined });
    expect(one).toHaveLength(1);
    await one[0]!.close();
  });
});

describe("a lane in this process (src/fuzz/lanes.ts LocalLane)", () => {
  it("a failing command: a LaneFailure with the one error line, the block's inputs kept in --out", async () => {
    const err = await caught(lane(spec("false")).run(0));
    expect(err).toBeInstanceOf(LaneFailure);
    expect((err as Error).name).toBe("LaneFailure");
    const out = join(scratch, "report");
    expect((err as Error).message).toBe(
      `--t8n command failed on block 4 of run 0 (seed 1): exit 1 without writing --output.result (kept for a look: ${join(out, "alloc.json")}, ${join(out, "txs.json")}, ${join(out, "env.json")}: the block's inputs and the command's stderr)`,
    );
    expect(readdirSync(out).sort()).toEqual(["alloc.json", "env.json", "txs.json"]);
  });

  it("a failing command and an --out that cannot be written: the error line alone", async () => {
    const file = join(scratch, "a-file");
    writeFileSync(file, "");
    const err = await caught(lane(spec("false", { out: join(file, "report") })).run(2));
    expect(err).toBeInstanceOf(LaneFailure);
    expect((err as Error).message).toBe("--t8n command failed on block 1 of run 2 (seed 1): exit 1 without writing --output.result");
  });

  it("a server that cannot open its session, twice: --t8n-server and the run, no block and nothing kept", async () => {
    const err = await caught(lane(spec("exit 3", { seed: 7 }, "t8n-server")).run(0));
    expect(err).toBeInstanceOf(LaneFailure);
    expect((err as Error).message).toMatch(/^--t8n-server command failed on run 0 \(opening its session\) \(seed 7\): \S/);
    expect((err as Error).message).not.toMatch(/kept for a look/);
    expect(existsSync(join(scratch, "report"))).toBe(false);
  }, 60_000);

  it("a clean run's outcome; finishing a run that did not diverge is our own failure, not a LaneFailure", async () => {
    const l = lane(spec(OURS));
    expect(await l.run(0)).toMatchObject({ run: 0, blocks: 1, divergent: false, stopped: false, restarts: [] });
    const err = await caught(l.finish(0));
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(LaneFailure);
    expect((err as Error).message).toBe("no divergence of run 0 on this lane");
  });

  it("a per-call command's directory is removed after its call, and the lane's working directory by a close", async () => {
    const record = join(scratch, "result-path.txt");
    const l = new LocalLane(spec(`f() { echo "$8" > ${record}; ${OURS} "$@"; }; f`), { onShrink: () => undefined });
    expect(await l.run(0)).toMatchObject({ divergent: false });
    const call = dirname(readFileSync(record, "utf8").trim());
    const dir = dirname(call);
    expect(existsSync(call)).toBe(false);
    expect(existsSync(dir)).toBe(true);
    await l.close();
    expect(existsSync(dir)).toBe(false);
  }, 60_000);

  it("a divergence dropped (a lower run diverged too) is not there to finish", async () => {
    const l = lane(spec(zeroRoot()));
    expect(await l.run(1)).toMatchObject({ divergent: true });
    l.drop();
    await expect(l.finish(1)).rejects.toThrow(new Error("no divergence of run 1 on this lane"));
  }, 60_000);

  it("a divergence: the headline, the shrink, the chain in words, the files written and the reproduce line; progress per candidate with the run", async () => {
    const shrinks: unknown[] = [];
    const command = zeroRoot();
    const out = join(scratch, "report");
    const l = lane(spec(command), shrinks);
    expect(await l.run(3)).toMatchObject({ run: 3, divergent: true });
    const report = await l.finish(3);
    expect(report.run).toBe(3);
    expect(report.headline).toMatch(/^DIVERGENCE seed 1 run 3: block \d+: t8n result: state_root expected "0x[0-9a-f]{64}" got "0x0{64}"$/);
    expect(report.writeError).toBeNull();
    expect(report.details[0]).toMatch(/^shrunk from 1 block, \d+ txs? to 1 block, \d+ txs? \(2 candidate chains\)$/);
    expect(report.details.slice(1, -1)).toHaveLength(1);
    expect(report.details[1]).toMatch(/^block \d+: /);
    const files = readdirSync(out);
    expect(report.details.at(-1)).toBe(`wrote ${files.length} files to ${out}: fixture.json (cbqs replay ${out}/fixture.json), report.json, the block's t8n inputs and both outputs`);
    expect(files).toContain("fixture.json");
    expect(report.reproduce).toBe(`cbqs fuzz --t8n '${command.replaceAll("'", "'\\''")}' --seed 1 --run 3 --blocks 1`);
    expect(shrinks).toEqual([1, 2].map((candidates) => ({ run: 3, candidates, size: { blocks: 1, txs: expect.any(Number) as number } })));
  }, 120_000);

  it("a divergence whose report cannot be written: the finding stands, with the reason on its own line and nothing written", async () => {
    const file = join(scratch, "a-file");
    writeFileSync(file, "");
    const out = join(file, "report");
    const l = lane(spec(zeroRoot(), { out }));
    expect(await l.run(0)).toMatchObject({ divergent: true });
    const report = await l.finish(0);
    expect(report.details.at(-1)).toBe("no report written");
    expect(report.writeError).toMatch(new RegExp(`^cannot write the report to ${out}: \\S`));
    expect(report.headline).toMatch(/^DIVERGENCE seed 1 run 0: /);
  }, 120_000);

  it("a divergence whose report file cannot be written (a directory of that name): the reason names the file", async () => {
    const out = join(scratch, "report");
    mkdirSync(join(out, "alloc.json"), { recursive: true });
    const l = lane(spec(zeroRoot()));
    expect(await l.run(0)).toMatchObject({ divergent: true });
    const report = await l.finish(0);
    expect(report.details.at(-1)).toBe("no report written");
    expect(report.writeError).toBe(`cannot write the report to ${out}: cannot write ${join(out, "alloc.json")}: it is a directory (give a file name)`);
  }, 120_000);

  it("a stop ends the run under way (stopped, not a failure) and a finding shrunk after it says it was interrupted", async () => {
    // A command that would run for ten minutes: only the stop ends it.
    const slow = lane(spec("sh -c 'sleep 600' sh", { timeout: 600 }));
    const ran = slow.run(0);
    slow.stop();
    expect(await ran).toMatchObject({ run: 0, divergent: false, stopped: true });
    const l = lane(spec(zeroRoot()));
    expect(await l.run(0)).toMatchObject({ divergent: true });
    l.stop();
    const report = await l.finish(0);
    expect(report.details[0]).toMatch(/^shrunk from 1 block, \d+ txs? to 1 block, \d+ txs? \(0 candidate chains, interrupted\)$/);
  }, 120_000);
});
