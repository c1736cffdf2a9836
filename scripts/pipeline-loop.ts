// Loop of pipelined replays (docs/engineering/testing.md "Node 24"; D-0172 "The commit worker's
// loop runs after its modules are evaluated"): runs `cbqs replay --pipeline` on one fixture
// `--runs` times in turn, each a fresh process of the given Node binary and build, and counts how
// they ended: ok (exit 0), aborted (killed by SIGTRAP or SIGABRT, or V8's "# Fatal error" on
// stderr: the abort a worker terminated during its modules' evaluation causes on Node 22 and 24),
// or failed otherwise (another exit code, or the run took longer than --timeout-s and was killed).
// One line per run on stderr, the counts on stdout; exit 0 only when every run was ok.
//
//   node dist/scripts/pipeline-loop.js [--fixture .cache/long-chain.json.gz] [--runs 50]
//        [--node <binary>] [--cli <a build's dist/src/cli.js>] [--to-height N] [--timeout-s 600]
import { spawn } from "node:child_process";
import { loadavg } from "node:os";
import { join } from "node:path";
import { scriptArgs, usageExit } from "./script-args.js";

const USAGE = `usage: pipeline-loop [--fixture f.json.gz] [--runs N] [--node binary] [--cli dist/src/cli.js] [--to-height N] [--timeout-s S]
  --fixture F     the fixture replayed (default .cache/long-chain.json.gz: npm run long-chain)
  --runs N        replays, one process each (default 50)
  --node B        the Node binary running them (default: this one)
  --cli C         the build's compiled CLI (default: this build's)
  --to-height N   stop each replay after this height (default: the whole fixture)
  --timeout-s S   a run still going after S seconds is killed and counted failed (default 600)
`;

/** What is kept of a run's stderr, its end (V8's fatal error is the last thing it prints). */
const STDERR_TAIL = 64 << 10;

interface Options {
  fixture: string;
  runs: number;
  node: string;
  cli: string;
  toHeight: number | undefined;
  timeoutMs: number;
}

function options(): Options {
  try {
    const args = scriptArgs(process.argv.slice(2), USAGE, ["fixture", "runs", "node", "cli", "to-height", "timeout-s"], []);
    if (args === null) process.exit(0);
    const toHeight = args.integer("to-height", 0, 1);
    return {
      fixture: args.value("fixture") ?? ".cache/long-chain.json.gz",
      runs: args.integer("runs", 50, 1),
      node: args.value("node") ?? process.execPath,
      cli: args.value("cli") ?? join(import.meta.dirname, "..", "src", "cli.js"),
      toHeight: toHeight === 0 ? undefined : toHeight,
      timeoutMs: args.integer("timeout-s", 600, 1) * 1000,
    };
  } catch (err) {
    return usageExit("pipeline-loop", (err as Error).message, USAGE);
  }
}

type Outcome = "ok" | "aborted" | "failed";

/** How a run ended, from its exit code or signal and the end of its stderr. */
function outcome(code: number | null, signal: NodeJS.Signals | null, stderr: string): Outcome {
  if (signal === "SIGTRAP" || signal === "SIGABRT" || stderr.includes("# Fatal error")) return "aborted";
  return code === 0 && signal === null ? "ok" : "failed";
}

interface Run {
  outcome: Outcome;
  detail: string;
  seconds: number;
}

function replayOnce(o: Options): Promise<Run> {
  const args = [o.cli, "replay", "--pipeline", "--quiet", o.fixture];
  if (o.toHeight !== undefined) args.push("--to-height", String(o.toHeight));
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    const child = spawn(o.node, args, { stdio: ["ignore", "ignore", "pipe"] });
    let stderr = "";
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGKILL");
    }, o.timeoutMs);
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-STDERR_TAIL);
    });
    child.on("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const ended = timedOut ? `killed after ${o.timeoutMs / 1000} s` : signal !== null ? `signal ${signal}` : `exit ${code}`;
      const fatal = /^# (Fatal error.*|Check failed.*)$/m.exec(stderr);
      resolve({ outcome: timedOut ? "failed" : outcome(code, signal, stderr), detail: fatal === null ? ended : `${ended}: ${fatal[1]}`, seconds });
    });
  });
}

async function main(): Promise<void> {
  const o = options();
  const version = await new Promise<string>((resolve, reject) => {
    const child = spawn(o.node, ["--version"], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.on("data", (c) => (out += String(c)));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`${o.node} --version: exit ${code}`))));
  });
  const counts: Record<Outcome, number> = { ok: 0, aborted: 0, failed: 0 };
  for (let i = 1; i <= o.runs; i++) {
    const run = await replayOnce(o);
    counts[run.outcome]++;
    process.stderr.write(`run ${i}/${o.runs}: ${run.outcome} (${run.detail}) in ${run.seconds.toFixed(1)} s; load ${loadavg()[0]!.toFixed(2)}\n`);
  }
  const height = o.toHeight === undefined ? "" : ` to height ${o.toHeight}`;
  process.stdout.write(`pipeline-loop: node ${version}, ${o.cli}, ${o.fixture}${height}: ${o.runs} runs, ${counts.ok} ok, ${counts.aborted} aborted, ${counts.failed} failed otherwise\n`);
  process.exitCode = counts.ok === o.runs ? 0 : 1;
}

await main();
