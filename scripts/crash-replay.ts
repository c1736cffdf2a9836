// Crash test of the persistent store (docs/spec/state.md "Crash safety"): replays a fixture with
// `cbqs replay --db`, killing the process with SIGKILL at seeded random moments — half of them
// from outside, half from inside a block commit (CBQS_CRASH_IN_COMMIT, after the block's state is
// written into the open LMDB transaction) — and restarting it each time. The kills are spread
// along the whole chain: run i aims at a seeded height in the i-th of `kills` equal stretches of
// the chain (an outside kill lands at a random moment once the run's progress lines pass its
// target; an inside kill at the commit of the target block). Every run verifies every block it
// commits against the fixture (a mismatch exits 1 and fails this script); at the end a last run
// must complete, and the store's state dump must equal the dump of an uninterrupted in-memory
// replay. Loopback-free and bounded: `kills` runs.
//
//   node dist/scripts/crash-replay.js [fixture=.cache/long-chain.json.gz] [--kills 20] [--seed N]
//        [--grace <ms>] [--dir <path>]
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mulberry32 } from "./rng.js";
import { exitOnHelp, usageExit } from "./script-args.js";

const CLI = new URL("../src/cli.js", import.meta.url).pathname;

interface Options {
  fixture: string;
  kills: number;
  seed: number;
  /** An outside kill lands a random 0…grace ms after a progress line passes its target. */
  graceMs: number;
  dir: string | undefined;
}

const USAGE = "usage: crash-replay [fixture.json.gz] [--kills N] [--seed S] [--grace MS] [--dir path]";

function parseArgs(argv: string[]): Options {
  exitOnHelp(argv, USAGE);
  const o: Options = { fixture: ".cache/long-chain.json.gz", kills: 20, seed: 0xc4a54, graceMs: 200, dir: undefined };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const next = () => argv[++i] ?? usageExit("crash-replay", `${arg} needs a value`, USAGE);
    if (arg === "--kills") o.kills = Number(next());
    else if (arg === "--seed") o.seed = Number(next());
    else if (arg === "--grace") o.graceMs = Number(next());
    else if (arg === "--dir") o.dir = next();
    else if (arg.startsWith("--")) usageExit("crash-replay", `unknown option ${arg}`, USAGE);
    else o.fixture = arg;
  }
  return o;
}

function fail(message: string): never {
  throw new Error(message);
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  out: string;
  err: string;
}

/** How a run is killed: after a delay, or once its progress lines report a height at or past `height`. */
type Kill = { afterMs: number } | { atHeight: number; graceMs: number } | undefined;

/** The heights named by progress lines ("… height 1,234/10,000 …") in `text`. */
const heightsIn = (text: string): number[] => [...text.matchAll(/height ([\d,]+)\//g)].map((m) => Number(m[1]!.replaceAll(",", "")));

function cbqs(args: string[], env: NodeJS.ProcessEnv = {}, kill: Kill = undefined): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    let timer: NodeJS.Timeout | undefined;
    const killNow = () => child.kill("SIGKILL");
    if (kill !== undefined && "afterMs" in kill) timer = setTimeout(killNow, kill.afterMs);
    child.stdout.on("data", (c) => (out += String(c)));
    child.stderr.on("data", (c) => {
      err += String(c);
      if (kill === undefined || !("atHeight" in kill) || timer !== undefined) return;
      // A random moment shortly after the target: mid-block, mid-commit or between blocks.
      if (heightsIn(String(c)).some((h) => h >= kill.atHeight)) timer = setTimeout(killNow, kill.graceMs);
    });
    child.on("error", reject);
    child.on("close", (code, signal) => {
      if (timer !== undefined) clearTimeout(timer);
      resolve({ code, signal, out, err });
    });
  });
}

/** The last height a run's progress lines reported (0 when none). */
function lastHeight(run: Run): number {
  return heightsIn(run.err).at(-1) ?? 0;
}

async function main(): Promise<void> {
  const o = parseArgs(process.argv.slice(2));
  const random = mulberry32(o.seed);
  const dir = o.dir ?? mkdtempSync(join(tmpdir(), "crash-replay-"));
  mkdirSync(dir, { recursive: true });
  const store = join(dir, "store");
  rmSync(store, { recursive: true, force: true });
  console.log(`crash-replay: ${o.fixture}, ${o.kills} kills, seed ${o.seed}, store ${store}`);

  const reference = join(dir, "reference.json");
  const ref = await cbqs(["state", "dump", o.fixture, "-o", reference]);
  if (ref.code !== 0) fail(`uninterrupted replay failed (exit ${ref.code}): ${ref.err.trim()}`);

  const top = Number((JSON.parse(readFileSync(reference, "utf8")) as { height: string }).height);
  // The last twentieth is left alone: a run must still be going when its target comes.
  const stretch = (top * 0.95) / o.kills;
  // Progress lines every 50 ms: they tell how far a run got and when to kill it.
  const progressEnv = { CBQS_PROGRESS_MS: "50" };
  let head = 0;
  let killed = 0;
  let inCommit = 0;
  for (let i = 0; i < o.kills; i++) {
    const inside = i % 2 === 1;
    const target = Math.max(head + 1, Math.floor(stretch * i + random() * stretch));
    const env = inside ? { ...progressEnv, CBQS_CRASH_IN_COMMIT: String(target - head) } : progressEnv;
    const kill: Kill = inside ? undefined : { atHeight: target, graceMs: Math.round(random() * o.graceMs) };
    const run = await cbqs(["replay", o.fixture, "--db", store], env, kill);
    const how = inside ? `in the commit of block ~${target} (commit ${target - head} of the run)` : `past height ${target}`;
    head = Math.max(head, lastHeight(run));
    if (run.signal === "SIGKILL") {
      killed++;
      if (inside) inCommit++;
      console.log(`  run ${i + 1}: killed ${how}; last progress line at height ${head}`);
    } else if (run.code === 0) {
      console.log(`  run ${i + 1}: finished before the kill (${how}): ${run.out.trim()}`);
    } else {
      fail(`run ${i + 1} (${how}) exited ${run.code}: ${(run.out + run.err).trim()}`);
    }
  }
  const last = await cbqs(["replay", o.fixture, "--db", store, "--quiet"]);
  if (last.code !== 0) fail(`the final run exited ${last.code}: ${(last.out + last.err).trim()}`);
  console.log(`  final run: ${last.out.trim()}`);
  const dump = await cbqs(["state", "dump", "--db", store]);
  if (dump.code !== 0) fail(`state dump --db failed: ${dump.err.trim()}`);
  const same = JSON.stringify(JSON.parse(dump.out)) === JSON.stringify(JSON.parse(readFileSync(reference, "utf8")));
  console.log(`crash-replay: ${killed}/${o.kills} runs killed (${inCommit} inside a commit), every block verified, final state dump ${same ? "equals" : "DIFFERS FROM"} the uninterrupted run's`);
  if (o.dir === undefined) rmSync(dir, { recursive: true, force: true });
  if (!same || killed < o.kills) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(`crash-replay: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
