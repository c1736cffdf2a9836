// The performance guard (docs/engineering/performance.md "Regression guard"): this build against a pinned
// baseline build (scripts/perf-baseline.ts), compared in instructions executed — counted by
// valgrind, so the same whatever else the machine does — on four workloads: replay, plain and
// pipelined (a prefix of the long chain), a fuzz campaign through `cbqs t8n --server`, and
// merkleized QMDB writes. It prints a table (baseline, this build, ratio, tolerance, verdict) and
// exits 1 when a workload costs more than its tolerance above the baseline, or when the two builds
// did not do the same work. No wall-clock time enters a verdict.
//
//   npm run perf-guard                  # builds this checkout, then runs the guard
//   node dist/scripts/perf-guard.js [--only w,…] [--repeat N] [--jobs N] [--baseline <dist dir>] [--build <dist dir>] [--json]
//
// How each workload is measured: one valgrind process per build (valgrind --trace-children for the
// fuzz campaign, whose server is a child process), node with V8 made deterministic (V8_FLAGS),
// minus the same command doing everything but the workload (the set-up: node's start, loading
// the build's modules, reading the fixture; for the fuzz campaign, its first run), so the ratio is
// the workload's own. The baseline is built once per commit into .cache/perf-baseline/<commit>/.
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { ensureLongChain } from "./long-chain-cache.js";
import { PERF_BASELINE_COMMIT } from "./perf-baseline.js";
import { failed, guardTable, instructionsOf, judge, leastWorkload, spreadOf, toleranceFor, workloadInstructions, type Judged, type Measurement } from "./perf-guard-lib.js";
import { scriptArgs, usageExit } from "./script-args.js";

/** The checkout this script was compiled in (dist/scripts/ → the folder above dist/). */
const ROOT = resolve(import.meta.dirname, "..", "..");
const RUNNER = join(import.meta.dirname, "perf-workload.js");

/**
 * V8 made deterministic: no background threads (compilers, garbage collector helpers), a fixed
 * heap-growing and memory-reducing schedule instead of timers, fixed hash and random seeds.
 * Worker threads still run (the pipelined replay's commit worker).
 */
const V8_FLAGS = ["--predictable", "--predictable-gc-schedule", "--hash-seed=1", "--random-seed=1"];
const VALGRIND = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"];

/** The long chain's first blocks, replayed (filled by this build, cached in .cache/perf-guard/). */
const CHAIN_BLOCKS = 300;
/** Tolerances: three times the spread measured over repeated runs, never below 2 % (docs/engineering/performance.md). */
const FLOOR = 0.02;

type WorkloadName = "replay" | "replay-pipelined" | "fuzz" | "qmdb-writes";

interface Workload {
  name: WorkloadName;
  what: string;
  tolerance: number;
  /** Valgrind follows child processes (the fuzz campaign's server). */
  children: boolean;
  /** node's arguments after V8_FLAGS, for the build in `dist`: the whole run or its set-up only. */
  args(dist: string, setupOnly: boolean): string[];
  /** What a whole run did, from its stdout: equal for both builds or the ratio means nothing. */
  result(stdout: string): string;
}

const FUZZ = { seed: 1, runs: 6, blocks: 8 };
/**
 * The replays take the whole fixture: a set-up moves by ~24 M instructions between processes
 * (bimodal: likely a garbage collection on one side of a threshold, following the allocations of
 * the build's path), which was 1.2 % of a 120-block replay and is 0.5 % of 300 blocks.
 */
const REPLAY_SIZE = CHAIN_BLOCKS;
const WRITE_BLOCKS = 20;
/**
 * The pipelined replay's count depends on scheduling: its commit worker spins briefly before it
 * sleeps (state/commitment/commit-worker.ts), and how often it spins depends on when the main
 * thread hands it work, which valgrind's serialised threads do not fix. Two runs of one build
 * read up to ~4 % apart, so it is judged at 10 %: it catches a gross regression of the pipeline;
 * the shared code is judged at FLOOR by the plain replay.
 */
const PIPELINED_TOLERANCE = 0.1;
/**
 * The fuzz campaign is two processes talking over pipes: how the server's answers arrive in
 * chunks (how many reads, how many partial lines) depends on when each process runs. Two runs of
 * one build read 1.9 % apart (1,886.3 and 1,922.3 M), so it is judged at 5 %.
 */
const FUZZ_TOLERANCE = 0.05;

function workloads(fixture: string): Workload[] {
  const runner = (workload: string, size: number) => (dist: string, setupOnly: boolean) => [RUNNER, "--workload", workload, "--build", dist, "--size", String(size), ...(workload === "qmdb-writes" ? [] : ["--fixture", fixture]), ...(setupOnly ? ["--setup-only"] : [])];
  const lastLine = (stdout: string) => stdout.trim().split("\n").pop() ?? "";
  return [
    { name: "replay", what: `first ${REPLAY_SIZE} blocks of the long chain`, tolerance: FLOOR, children: false, args: runner("replay", REPLAY_SIZE), result: lastLine },
    { name: "replay-pipelined", what: `the same, --pipeline (commit worker thread)`, tolerance: PIPELINED_TOLERANCE, children: false, args: runner("replay-pipelined", REPLAY_SIZE), result: lastLine },
    {
      name: "fuzz",
      what: `cbqs fuzz --t8n-server "cbqs t8n --server" --seed ${FUZZ.seed}, runs 2–${FUZZ.runs} of ${FUZZ.blocks} blocks, 1 lane`,
      tolerance: FUZZ_TOLERANCE,
      children: true,
      args: (dist, setupOnly) => {
        const cli = join(dist, "src", "cli.js");
        const server = [process.execPath, ...V8_FLAGS, cli, "t8n", "--server"].map(shellWord).join(" ");
        return [cli, "fuzz", "--t8n-server", server, "--seed", String(FUZZ.seed), "--runs", String(setupOnly ? 1 : FUZZ.runs), "--blocks", String(FUZZ.blocks), "--jobs", "1", "--timeout", "3600", "--quiet"];
      },
      // "fuzz: 6 runs (seed 1), 48 blocks, 171 txs in 9.1 s (…): 97 states reached, no divergence" without the times.
      result: (stdout) => lastLine(stdout).replace(/ in [\d.]+ s \(.*\)/, ""),
    },
    { name: "qmdb-writes", what: `${WRITE_BLOCKS} blocks × 1,000 merkleized writes (bench-state's workload)`, tolerance: FLOOR, children: false, args: runner("qmdb-writes", WRITE_BLOCKS), result: lastLine },
  ];
}

const shellWord = (s: string): string => (/^[\w./=:-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
const say = (line: string) => process.stderr.write(`perf-guard: ${line}\n`);
const seconds = (ms: number) => `${(ms / 1000).toFixed(0)} s`;

// ---- the baseline build -----------------------------------------------------------------------

/**
 * The dist/ folder of `commit`, built when not cached: `git archive` of the commit into
 * .cache/perf-baseline/<commit>/, this checkout's node_modules linked in when the commit's
 * package-lock.json is the same (else `npm ci` there), and `tsc -p tsconfig.json`.
 */
function baselineDist(commit: string, root = ROOT): string {
  const dir = join(root, ".cache", "perf-baseline", commit);
  const marker = join(dir, ".perf-baseline-built");
  if (existsSync(marker)) return join(dir, "dist");
  const git = (...args: string[]) => spawnSync("git", ["-C", root, ...args], { encoding: "utf8" });
  if (git("cat-file", "-e", `${commit}^{commit}`).status !== 0) {
    throw new Error(`the baseline commit ${commit} (scripts/perf-baseline.ts) is not in this clone: fetch it (a shallow clone: git fetch --unshallow)`);
  }
  const t = performance.now();
  say(`building the baseline ${commit.slice(0, 12)} into ${dir} (once; cached)…`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const tar = join(dir, "..", `${commit}.tar`);
  run("git", ["-C", root, "archive", "--format=tar", "-o", tar, commit]);
  run("tar", ["-xf", tar, "-C", dir]);
  rmSync(tar);
  const lock = (d: string) => readFileSync(join(d, "package-lock.json"), "utf8");
  if (lock(dir) === lock(root)) symlinkSync(join(root, "node_modules"), join(dir, "node_modules"), "dir");
  else run("npm", ["ci", "--ignore-scripts", "--no-audit", "--no-fund"], dir);
  run(process.execPath, [join(dir, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], dir);
  const took = performance.now() - t;
  writeFileSync(marker, JSON.stringify({ commit, builtAt: new Date().toISOString(), seconds: +(took / 1000).toFixed(1) }) + "\n");
  say(`baseline built in ${seconds(took)}`);
  return join(dir, "dist");
}

/**
 * A copy of a build, with the package.json and gas vectors beside it, in a fresh folder
 * .cache/perf-guard/<label>-XXXXXX/ (deleted at the end). Both builds are measured from such
 * copies, under labels of one length, so that the two differ in nothing but their code:
 * - measured from this checkout's dist/ itself, the build under test would share the workload
 *   harness's modules (the fixture reader, the write generator: one instance, already compiled
 *   and warm) while the baseline loads its own — the same code read some 2.5 % dearer for one;
 * - measured from folders of other path lengths (.cache/perf-baseline/<commit>/ against
 *   .cache/perf-guard/this-build-…/), the same code's set-up read 30 M instructions (1.3 %) apart
 *   in every run, and a workload's own count, its full run minus its set-up, 1.2–1.9 % apart.
 * A baseline with its own node_modules (another package-lock) keeps them, linked beside.
 */
function buildCopy(dist: string, label: "baseline" | "measured"): string {
  mkdirSync(join(ROOT, ".cache", "perf-guard"), { recursive: true });
  const dir = mkdtempSync(join(ROOT, ".cache", "perf-guard", `${label}-`));
  cpSync(dist, join(dir, "dist"), { recursive: true });
  for (const beside of ["package.json", "gas-vectors"]) cpSync(join(dist, "..", beside), join(dir, beside), { recursive: true });
  const modules = join(dist, "..", "node_modules");
  if (existsSync(modules) && realpathSync(modules) !== realpathSync(join(ROOT, "node_modules"))) symlinkSync(realpathSync(modules), join(dir, "node_modules"), "dir");
  return join(dir, "dist");
}

function run(command: string, args: string[], cwd = ROOT): void {
  const r = spawnSync(command, args, { cwd, encoding: "utf8", maxBuffer: 64 * 2 ** 20 });
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (exit ${r.status}): ${r.stderr || r.stdout}`);
}

// ---- measuring ------------------------------------------------------------------------------------

interface Task {
  workload: Workload;
  build: "baseline" | "this build";
  dist: string;
  setupOnly: boolean;
  repetition: number;
}

interface Counted {
  instructions: number;
  stdout: string;
  ms: number;
}

/** One command under valgrind; its instructions are the sum over every process it started. */
async function count(task: Task, scratch: string, id: number): Promise<Counted> {
  const dir = join(scratch, String(id));
  mkdirSync(dir);
  const args = [...VALGRIND.slice(1), `--log-file=${join(dir, "vg.%p.log")}`, ...(task.workload.children ? ["--trace-children=yes"] : []), process.execPath, ...V8_FLAGS, ...task.workload.args(task.dist, task.setupOnly)];
  const t = performance.now();
  const { status, stdout, stderr } = await new Promise<{ status: number | null; stdout: string; stderr: string }>((done, fail) => {
    // The fuzz campaign's --out report folder, written only on a divergence, goes to the scratch folder.
    const child = spawn(VALGRIND[0]!, args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (c: Buffer) => (out += c.toString()));
    child.stderr.on("data", (c: Buffer) => (err += c.toString()));
    child.on("error", fail);
    child.on("close", (code) => done({ status: code, stdout: out, stderr: err }));
  });
  const ms = performance.now() - t;
  const label = `${task.workload.name}${task.setupOnly ? " (set-up)" : ""}, ${task.build}`;
  if (status !== 0) throw new Error(`${label}: exit ${status}\n${stdout}${stderr}`);
  let instructions = 0;
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".log"))) {
    const n = instructionsOf(readFileSync(join(dir, file), "utf8"));
    if (n === null) throw new Error(`${label}: valgrind's log ${file} has no instruction count`);
    instructions += n;
  }
  say(`${label}: ${(instructions / 1e6).toFixed(1)} M instructions (${seconds(ms)} under valgrind)`);
  return { instructions, stdout, ms };
}

/** Runs `tasks` on `jobs` processes at a time (each is one valgrind process). */
async function countAll(tasks: readonly Task[], jobs: number, scratch: string): Promise<Counted[]> {
  const results: Counted[] = new Array(tasks.length);
  let next = 0;
  const lane = async () => {
    while (next < tasks.length) {
      const i = next++;
      results[i] = await count(tasks[i]!, scratch, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, tasks.length) }, lane));
  return results;
}

// ---- main ----------------------------------------------------------------------------------------

const USAGE = `usage: node dist/scripts/perf-guard.js [--only w,…] [--repeat N] [--jobs N] [--baseline <dist dir>] [--build <dist dir>] [--json]
  (npm run perf-guard builds this checkout first)
  --only w,…          some of the workloads: replay, replay-pipelined, fuzz, qmdb-writes (default all)
  --repeat N          measure every build N times: the spread of each; the verdict takes the least full run minus the least set-up (default 2)
  --jobs N            valgrind processes at a time (default 2)
  --baseline dir      compare with this compiled dist/ folder instead of the pinned commit (scripts/perf-baseline.ts)
  --build dir         the build under test (default this checkout's dist/)
  --json              the rows as one JSON document on stdout
Exit: 0 no regression; 1 a regression beyond a tolerance, or builds that did not do the same work;
      2 nothing to judge: bad options, no valgrind, a workload that failed (a replay mismatch: docs/engineering/performance.md).
`;

function options() {
  try {
    const args = scriptArgs(process.argv.slice(2), USAGE, ["only", "repeat", "jobs", "baseline", "build"], ["json"]);
    if (args === null) process.exit(0);
    const names: WorkloadName[] = ["replay", "replay-pipelined", "fuzz", "qmdb-writes"];
    const only = (args.value("only") ?? names.join(",")).split(",");
    for (const n of only) if (!(names as string[]).includes(n)) throw new Error(`--only: no workload ${n} (${names.join(", ")})`);
    return {
      only: only as WorkloadName[],
      repeat: args.integer("repeat", 2, 1),
      jobs: args.integer("jobs", 2, 1),
      baseline: args.value("baseline"),
      build: resolve(args.value("build") ?? join(ROOT, "dist")),
      json: args.flag("json"),
    };
  } catch (err) {
    return usageExit("perf-guard", (err as Error).message, USAGE);
  }
}

async function main(): Promise<void> {
  const o = options();
  const started = performance.now();
  const load = () => loadavg().map((l) => l.toFixed(1)).join(" ");
  const valgrindVersion = spawnSync("valgrind", ["--version"], { encoding: "utf8" }).stdout?.trim();
  if (valgrindVersion === undefined || valgrindVersion === "") throw new Error("valgrind is not installed (apt-get install valgrind)");
  const baselineBuild = o.baseline === undefined ? baselineDist(PERF_BASELINE_COMMIT) : resolve(o.baseline);
  const baselineName = o.baseline === undefined ? `commit ${PERF_BASELINE_COMMIT.slice(0, 12)}` : baselineBuild;
  const fixture = join(ROOT, ".cache", "perf-guard", `long-chain-${CHAIN_BLOCKS}.json.gz`);
  if (o.only.some((w) => w.startsWith("replay"))) ensureLongChain(fixture, { blocks: CHAIN_BLOCKS, minTxs: 0, progress: "off" });
  const chosen = workloads(fixture).filter((w) => o.only.includes(w.name));
  const baseline = buildCopy(baselineBuild, "baseline");
  const current = buildCopy(o.build, "measured");
  say(`${valgrindVersion}, node ${process.version} ${V8_FLAGS.join(" ")}; baseline ${baselineName}; load average ${load()} at start`);

  const tasks: Task[] = [];
  for (let r = 0; r < o.repeat; r++) {
    for (const workload of chosen) {
      for (const [build, dist] of [["baseline", baseline], ["this build", current]] as const) {
        for (const setupOnly of [false, true]) tasks.push({ workload, build, dist, setupOnly, repetition: r });
      }
    }
  }
  const scratch = mkdtempSync(join(tmpdir(), "cbqs-perf-guard-"));
  let counted: Counted[];
  try {
    counted = await countAll(tasks, o.jobs, scratch);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
    for (const copy of [baseline, current]) rmSync(join(copy, ".."), { recursive: true, force: true });
  }

  const rows: Judged[] = [];
  const spreads: Array<{ workload: string; build: string; values: number[] }> = [];
  for (const workload of chosen) {
    const of = (build: Task["build"]) => {
      const mine = tasks.map((t, i) => [t, counted[i]!] as const).filter(([t]) => t.workload === workload && t.build === build);
      const runs: Measurement[] = [];
      const results = new Set<string>();
      for (let r = 0; r < o.repeat; r++) {
        const full = mine.find(([t]) => t.repetition === r && !t.setupOnly)![1];
        const setup = mine.find(([t]) => t.repetition === r && t.setupOnly)![1];
        runs.push({ full: full.instructions, setup: setup.instructions });
        results.add(workload.result(full.stdout));
      }
      spreads.push({ workload: workload.name, build, values: runs.map(workloadInstructions) });
      return { instructions: leastWorkload(runs), results: [...results] };
    };
    const b = of("baseline");
    const c = of("this build");
    const same = b.results.length === 1 && c.results.length === 1 && b.results[0] === c.results[0];
    rows.push(
      judge({
        workload: workload.name,
        what: workload.what,
        baseline: b.instructions,
        current: c.instructions,
        tolerance: workload.tolerance,
        ...(same ? {} : { notComparable: `the baseline's run said ${JSON.stringify(b.results.join(" / "))}, this build's ${JSON.stringify(c.results.join(" / "))}` }),
      }),
    );
  }
  const took = performance.now() - started;
  const verdict = failed(rows) ? 1 : 0;
  if (o.json) {
    process.stdout.write(JSON.stringify({ baseline: baselineName, build: o.build, node: process.version, valgrind: valgrindVersion, seconds: +(took / 1000).toFixed(1), rows, spreads }) + "\n");
  } else {
    process.stdout.write(`perf-guard: this build (${o.build}) against the baseline (${baselineName}), instructions executed by each workload\n\n${guardTable(rows)}\n`);
    if (o.repeat > 1) {
      process.stdout.write(`\n| workload | build | runs (M instructions) | spread | tolerance it calls for |\n| --- | --- | --- | ---: | ---: |\n`);
      for (const s of spreads) {
        const spread = spreadOf(s.values);
        process.stdout.write(`| ${s.workload} | ${s.build} | ${s.values.map((v) => (v / 1e6).toFixed(2)).join(", ")} | ${(100 * spread).toFixed(3)} % | ${(100 * toleranceFor(spread, FLOOR)).toFixed(1)} % |\n`);
      }
    }
    process.stdout.write(`\n${verdict === 0 ? "no regression" : "FAILED: see the verdicts above"}; ${seconds(took)} in all, load average ${load()} at the end\n`);
  }
  process.exitCode = verdict;
}

main().catch((err: unknown) => {
  process.stderr.write(`perf-guard: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 2;
});
