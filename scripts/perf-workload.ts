// One workload of the performance guard (scripts/perf-guard.ts, docs/engineering/performance.md "Regression
// guard"), run by the guard under valgrind against one build's compiled dist/ folder: this
// script is always the checkout's own, the code it measures is the build's (its modules are
// imported from <dist dir>), so every build is driven by the same harness.
//
//   node dist/scripts/perf-workload.js --workload replay|replay-pipelined --build <dist dir> --size <blocks> --fixture f.json.gz [--setup-only]
//   node dist/scripts/perf-workload.js --workload qmdb-writes --build <dist dir> --size <blocks of 1,000 writes> [--setup-only]
//
// --setup-only does everything but the measured part (loading the build's modules, reading the
// fixture or generating the writes): the guard subtracts its instruction count, so that what it
// compares is the workload's own. A replay must match the fixture at every block; the last line
// says what was done (the QMDB's root after the writes), and the guard requires it to be the same
// for every build, so a fast wrong build does not pass.
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { toHex } from "../src/bytes.js";
import { readFixture } from "../src/harness/documents.js";
import type { replayFixture } from "../src/harness/replay.js";
import type { createStateCommitment } from "../state/qmdb/index.js";
import type { MemoryStateStore } from "../state/store/store.js";
import { scriptArgs, usageExit } from "./script-args.js";
import { stateWorkload, type Write } from "./state-workload.js";

const USAGE = `usage: perf-workload --workload replay|replay-pipelined|qmdb-writes --build <dist dir> --size N [--fixture f.json.gz] [--setup-only]
  --build dir     the compiled dist/ folder of the build to measure
  --size N        blocks: replayed (a prefix of the fixture), or of 1,000 QMDB writes each
  --fixture f     the filled chain to replay
  --setup-only    everything but the measured part (the guard subtracts it)
`;

const WORKLOADS = ["replay", "replay-pipelined", "qmdb-writes"] as const;
/** Writes per block and seed of the QMDB workload (bench-state's defaults). */
const WRITES_PER_BLOCK = 1000;
const STATE_SEED = 0xc0ffee;

function options() {
  try {
    const args = scriptArgs(process.argv.slice(2), USAGE, ["workload", "build", "size", "fixture"], ["setup-only"]);
    if (args === null) process.exit(0);
    const workload = args.value("workload") ?? "";
    if (!(WORKLOADS as readonly string[]).includes(workload)) throw new Error(`--workload must be one of ${WORKLOADS.join(", ")}`);
    const build = args.value("build");
    if (build === undefined) throw new Error("--build is required");
    const fixture = args.value("fixture");
    if (workload !== "qmdb-writes" && fixture === undefined) throw new Error(`${workload} needs --fixture`);
    return { workload: workload as (typeof WORKLOADS)[number], dist: resolve(build), size: args.integer("size", 1, 1), fixture, setupOnly: args.flag("setup-only") };
  } catch (err) {
    return usageExit("perf-workload", (err as Error).message, USAGE);
  }
}

const o = options();
const url = (path: string) => pathToFileURL(resolve(o.dist, path)).href;
const say = (line: string) => process.stdout.write(`${line}\n`);

if (o.workload === "qmdb-writes") {
  const { MemoryStateStore: Store } = (await import(url("state/store/store.js"))) as { MemoryStateStore: typeof MemoryStateStore };
  const { createStateCommitment: commitment } = (await import(url("state/qmdb/index.js"))) as { createStateCommitment: typeof createStateCommitment };
  const blocks: Write[][] = [...stateWorkload({ blocks: o.size, writesPerBlock: WRITES_PER_BLOCK, seed: STATE_SEED }).blocks];
  const store = new Store(commitment());
  if (!o.setupOnly) {
    let height = 0n;
    for (const block of blocks) {
      const batch = store.beginBlock(++height);
      for (const [key, value] of block) batch.put(key, value);
      store.commitBlock(batch);
    }
  }
  say(`qmdb-writes: ${o.setupOnly ? "setup only" : `${o.size} blocks of ${WRITES_PER_BLOCK} writes, root ${toHex(store.root())}`}`);
} else {
  const { replayFixture: replay } = (await import(url("src/harness/replay.js"))) as { replayFixture: typeof replayFixture };
  const f = readFixture(o.fixture!);
  if (f.blocks.length < o.size) throw new Error(`${o.fixture} has ${f.blocks.length} blocks, fewer than --size ${o.size}`);
  const fixture = { ...f, blocks: f.blocks.slice(0, o.size) };
  if (!o.setupOnly) {
    const outcome = replay(fixture, { pipeline: o.workload === "replay-pipelined" });
    if (outcome.mismatch !== null) throw new Error(`${o.dist}: mismatch at block ${outcome.mismatch.height}: ${outcome.mismatch.field} (a build whose consensus output differs from the one that filled the fixture)`);
    if (outcome.blocks !== o.size) throw new Error(`${o.dist}: replayed ${outcome.blocks} of ${o.size} blocks`);
    say(`${o.workload}: ${outcome.blocks} blocks, ${outcome.txs} txs`);
  } else say(`${o.workload}: setup only`);
}
