// The files a divergence leaves behind (src/fuzz/report.ts, docs/reference/fuzzer.md §6 "Reading a
// report"), from a finding of an in-process session target whose first receipt's cycles are one
// too many: which files, in which order, with exactly what in them; the reproduce line; the
// chain in words; and a shrunk chain that does not replay is the fuzzer's own bug, never written.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FuzzInternalError } from "../../src/fuzz/build.js";
import { fuzz, type Finding } from "../../src/fuzz/fuzz.js";
import { chainLines, REPORT_FORMAT, reproduceLine, writeInputs, writeReport, type ReportMeta } from "../../src/fuzz/report.js";
import { replayFixture } from "../../src/harness/replay.js";
import { loadFixture } from "../../src/harness/fixture.js";
import { registryRecords } from "../../src/harness/records.js";
import { sessionBlock, transition } from "../../src/harness/t8n.js";
import { inputTexts, parseTargetOutput, perCall, type ChainTarget, type Entries, type T8nInputs, type TargetAnswer, type TargetOutput } from "../../src/target/target.js";
import { dumpEntries, dumpState } from "../../state/kv/dump.js";
import { createStateCommitment } from "../../state/qmdb/index.js";
import { MemoryStateStore } from "../../state/store/store.js";

/** An in-process session target whose first receipt of each block costs one cycle more, with `stderr` on its post-state. */
class OneCycleMore implements ChainTarget {
  readonly stateRoot = "chain";
  readonly memoizable = false;
  private store: MemoryStateStore | null = null;
  constructor(private readonly stderr: string) {}
  startChain(alloc: Entries, height: bigint): Promise<void> {
    this.store = MemoryStateStore.fromEntries(alloc, height, createStateCommitment());
    return Promise.resolve();
  }
  apply(inputs: T8nInputs): Promise<TargetAnswer> {
    const result = structuredClone(sessionBlock(this.store!, inputs.txs, inputs.env).result) as { receipts: Array<{ cycles: string }> };
    if (result.receipts.length > 0) result.receipts[0]!.cycles = String(BigInt(result.receipts[0]!.cycles) + 1n);
    return Promise.resolve({ result, resultText: JSON.stringify(result) });
  }
  postState(inputs: T8nInputs, answer: TargetAnswer): Promise<TargetOutput> {
    return Promise.resolve(parseTargetOutput(answer.resultText, JSON.stringify(dumpState(this.store!, { height: inputs.env.height })), this.stderr));
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

/** Whether a pre-state holds a stream record. */
const holdsStream = (alloc: Entries) => dumpEntries(alloc, { decodeSlot: registryRecords }).entries.some((e) => JSON.stringify(e.decoded).includes('"StreamRecordV1"'));

/**
 * A per-call command (its state_root commits the pre-state as one batch) whose first receipt costs
 * one cycle more once a stream exists: the divergence is past the first block, where its root and
 * the chain's differ.
 */
const oneCycleMorePerCall = perCall({
  run(inputs: T8nInputs): Promise<TargetOutput> {
    const run = transition(inputs.alloc, inputs.txs, inputs.env);
    const result = structuredClone(run.result) as { receipts: Array<{ cycles: string }> };
    if (result.receipts.length > 0 && holdsStream(inputs.alloc)) result.receipts[0]!.cycles = String(BigInt(result.receipts[0]!.cycles) + 1n);
    return Promise.resolve(parseTargetOutput(JSON.stringify(result), JSON.stringify(dumpState(run.store, { height: inputs.env.height })), ""));
  },
  close: () => undefined,
});

const META: ReportMeta = { mode: "t8n", command: "my-t8n --fast", blocks: 3, stateRoot: true };
let finding: Finding;
let scratch: string;

beforeAll(async () => {
  const r = await fuzz(new OneCycleMore("their words\n"), { seed: 9, firstRun: 0, runs: 3, blocks: 3, compare: { stateRoot: true }, shrinkBudget: 60 });
  finding = r.finding!;
}, 60_000);
beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), "cbqs-fuzz-report-test-"));
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

const read = (name: string) => readFileSync(join(scratch, name), "utf8");

describe("fuzz report (src/fuzz/report.ts)", () => {
  it("writes the t8n inputs, the command's stderr, the fixture, both outputs and report.json, and returns their paths in that order", () => {
    const paths = writeReport(scratch, finding, META);
    const names = ["alloc.json", "txs.json", "env.json", "theirs.stderr.txt", "fixture.json", "ours.result.json", "ours.alloc.json", "theirs.result.json", "theirs.alloc.json", "report.json"];
    expect(paths).toEqual(names.map((n) => join(scratch, n)));
    expect(readdirSync(scratch).sort()).toEqual([...names].sort());
    const d = finding.divergence;
    const inputs = inputTexts(d.block.inputs);
    expect([read("alloc.json"), read("txs.json"), read("env.json")]).toEqual([inputs.alloc, inputs.txs, inputs.env]);
    expect(read("theirs.stderr.txt")).toBe("their words\n");
    expect(read("theirs.result.json")).toBe(d.theirs.resultText);
    expect(read("theirs.alloc.json")).toBe(d.theirs.allocText);
    expect(read("ours.result.json")).toBe(JSON.stringify(d.ours, null, 2) + "\n");
  });

  it("for a per-call command, ours.result.json is our per-call result, whose state_root commits the pre-state as one batch, as the command's does", async () => {
    const f = (await fuzz(oneCycleMorePerCall, { seed: 9, firstRun: 0, runs: 3, blocks: 3, compare: { stateRoot: true }, shrinkBudget: 60 })).finding!;
    expect(writeReport(scratch, f, META).map((p) => p.slice(scratch.length + 1))).not.toContain("theirs.stderr.txt");
    const block = f.divergence.block;
    expect(block.index).toBeGreaterThan(0);
    const ours = JSON.parse(read("ours.result.json")) as Record<string, unknown>;
    expect(ours).toEqual(JSON.parse(JSON.stringify(block.ours.result)));
    expect(ours["state_root"]).not.toBe(block.result["state_root"]);
    expect((JSON.parse(read("ours.alloc.json")) as { state_root: string }).state_root).toBe(ours["state_root"]);
  });

  it("ours.alloc.json is our post-state of the diverging block at its height and state root, records decoded", () => {
    writeReport(scratch, finding, META);
    const d = finding.divergence;
    const alloc = JSON.parse(read("ours.alloc.json")) as { format: string; height: string; state_root: string; entries: Array<{ key: string; value: string; decoded: { value: { record?: Record<string, unknown> } } }> };
    expect({ format: alloc.format, height: alloc.height, state_root: alloc.state_root }).toEqual({ format: "cbqs-state-dump/v1", height: d.block.height.toString(), state_root: d.ours["state_root"] });
    expect(alloc.entries).toHaveLength(d.block.postState.length);
    expect(alloc.entries.map((e) => e.key)).toEqual([...alloc.entries.map((e) => e.key)].sort());
    // The registry's slots decoded as records (src/harness/records.ts), e.g. the base rate schedules.
    expect(alloc.entries.filter((e) => e.decoded.value.record !== undefined).map((e) => Object.keys(e.decoded.value.record!))).toContainEqual(["BaseRateSchedulesV1"]);
  });

  it("fixture.json is the shrunk chain under the run's name, described with its size and the first difference, and it replays", () => {
    writeReport(scratch, finding, META);
    const fixture = loadFixture(JSON.parse(read("fixture.json")));
    const blocks = finding.shrunk.blocks;
    expect(fixture.name).toBe(`fuzz-seed-${finding.seed}-run-${finding.run}`);
    expect(fixture.description).toBe(`cbqs fuzz seed ${finding.seed} run ${finding.run}, shrunk to ${blocks} ${blocks === 1 ? "block" : "blocks"}; the last block diverged: ${finding.divergence.text}`);
    expect(fixture.blocks).toHaveLength(blocks);
    expect(replayFixture(fixture).mismatch).toBeNull();
  });

  it("report.json holds the seed, run, sizes, command, first difference, the chain in words and the reproduce line", () => {
    writeReport(scratch, finding, META);
    const f = finding;
    const d = f.divergence;
    expect(JSON.parse(read("report.json"))).toEqual({
      format: REPORT_FORMAT,
      seed: String(f.seed),
      run: String(f.run),
      blocks_per_chain: "3",
      t8n: "my-t8n --fast",
      compared_state_root: true,
      divergence: { height: d.block.height.toString(), first_difference: d.text },
      original: { blocks: String(f.original.blocks), txs: String(f.original.txs) },
      shrunk: { blocks: String(f.shrunk.blocks), txs: String(f.shrunk.txs), candidates: String(f.candidates) },
      chain: d.summary.map((b) => ({ height: b.height.toString(), txs: b.txs.map((t, i) => ({ index: String(i), kind: t.kind, ours: t.outcome })) })),
      reproduce: `cbqs fuzz --t8n 'my-t8n --fast' --seed ${f.seed} --run ${f.run} --blocks 3`,
    });
    expect(REPORT_FORMAT).toBe("cbqs-fuzz-report/v1");
    expect(read("report.json").endsWith("}\n")).toBe(true);
  });

  it("report.json names a server command t8n_server, and says when state roots were not compared", () => {
    writeReport(scratch, finding, { mode: "t8n-server", command: "srv", blocks: 5, stateRoot: false });
    const report = JSON.parse(read("report.json")) as Record<string, unknown>;
    expect(report["t8n_server"]).toBe("srv");
    expect("t8n" in report).toBe(false);
    expect(report["compared_state_root"]).toBe(false);
    expect(report["blocks_per_chain"]).toBe("5");
    expect(report["reproduce"]).toBe(`cbqs fuzz --t8n-server 'srv' --seed ${finding.seed} --run ${finding.run} --blocks 5 --no-state-root`);
  });

  it("a shrunk chain that does not replay against this emulator is the fuzzer's own error, and nothing is written", () => {
    const d = finding.divergence;
    const last = d.fixture.blocks.at(-1)!;
    const bad = { ...finding, divergence: { ...d, fixture: { ...d.fixture, blocks: [...d.fixture.blocks.slice(0, -1), { ...last, state_root: new Uint8Array(32) }] } } };
    const out = join(scratch, "out");
    expect(() => writeReport(out, bad, META)).toThrow(new FuzzInternalError(`the shrunk fixture does not replay: block ${last.height} state_root`));
    expect(() => writeReport(out, bad, META)).toThrow(FuzzInternalError);
    expect(existsSync(out)).toBe(false);
  });

  it("the inputs alone (a failed command): alloc, txs and env, and its stderr only when it wrote any, into a directory made on the way", () => {
    const block = finding.divergence.block;
    const dir = join(scratch, "a", "b");
    expect(writeInputs(dir, block)).toEqual(["alloc.json", "txs.json", "env.json"].map((n) => join(dir, n)));
    expect(readdirSync(dir).sort()).toEqual(["alloc.json", "env.json", "txs.json"]);
    expect(writeInputs(dir, block, "boom")).toEqual(["alloc.json", "txs.json", "env.json", "theirs.stderr.txt"].map((n) => join(dir, n)));
    expect(readFileSync(join(dir, "theirs.stderr.txt"), "utf8")).toBe("boom");
  });

  it("the reproduce line quotes the command for a POSIX shell and adds --no-state-root only when roots were not compared", () => {
    expect(reproduceLine({ mode: "t8n", command: "sh -c 'my t8n' it's", blocks: 8, stateRoot: true }, 1, 2)).toBe(`cbqs fuzz --t8n 'sh -c '\\''my t8n'\\'' it'\\''s' --seed 1 --run 2 --blocks 8`);
    expect(reproduceLine({ mode: "t8n-server", command: "node t8n --server", blocks: 1, stateRoot: false }, 4294967295, 0)).toBe(
      "cbqs fuzz --t8n-server 'node t8n --server' --seed 4294967295 --run 0 --blocks 1 --no-state-root",
    );
  });

  it("the chain in words: one line per block, each transaction's kind and our outcome, or that it had none", () => {
    expect(
      chainLines([
        { height: 7n, txs: [{ kind: "SettleStreamRent", outcome: "ok" }, { kind: "CreateStream", outcome: "rejected NoOpRejected" }] },
        { height: 9n, txs: [] },
        { height: 10n, txs: [{ kind: "junk: random bytes", outcome: "left out" }] },
      ]),
    ).toEqual(["block 7: SettleStreamRent ok, CreateStream rejected NoOpRejected", "block 9: (no transactions)", "block 10: junk: random bytes left out"]);
    expect(chainLines([])).toEqual([]);
  });
});
