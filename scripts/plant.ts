// Plants one mutant by hand and runs the tests that should kill it (docs/engineering/testing.md "Mutants
// planted by hand"). Stryker evaluates module-level constants (a regular expression, a parameter table)
// once, before any mutant is active, so those mutants survive whatever the tests: each is planted
// here instead. The file is restored byte for byte, with its modification time, whatever happens
// (dist/ freshness checks compare times).
//
//   node dist/scripts/plant.js [--build] <file> <line> <from> <to> <test file>…
//
// --build compiles dist/ with the mutant (and again once the file is restored), for code that runs
// only compiled: on a worker thread (state/commitment/commit-worker.ts) or in a child process.
//
// <from> must occur exactly once on <line> (1-based). Exit 0 when the tests fail with the mutant
// (killed) or are still running after PLANT_TIMEOUT_S seconds (300 unless set: a mutant that
// loops), 1 when they pass (survived), 2 for unusable arguments.
import { spawnSync } from "node:child_process";
import { readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { exitOnHelp, usageExit } from "./script-args.js";

const USAGE = "usage: node dist/scripts/plant.js [--build] <file> <line> <from> <to> <test file>…";
const args = process.argv.slice(2);
exitOnHelp(args, USAGE);
const build = args[0] === "--build";
if (build) args.shift();
// The file comes first: an option there is one this script does not know.
if (args[0]?.startsWith("-") === true) usageExit("plant", `unknown option '${args[0]}'`, USAGE);
const compile = () => {
  if (spawnSync("npx", ["tsc", "-p", "tsconfig.json"], { stdio: "inherit" }).status !== 0) throw new Error("tsc failed");
};
const [file, lineText, from, to, ...tests] = args;
if (file === undefined || lineText === undefined || from === undefined || to === undefined || tests.length === 0) usageExit("plant", "missing arguments", USAGE);
const line = Number(lineText);
const original = readFileSync(file!, "utf8");
const lines = original.split("\n");
if (!Number.isSafeInteger(line) || line < 1 || line > lines.length) usageExit("plant", `${file} has no line ${lineText}`, USAGE);
const target = lines[line - 1]!;
if (target.split(from!).length !== 2) usageExit("plant", `line ${line} of ${file} must contain ${JSON.stringify(from)} exactly once: ${target.trim()}`, USAGE);
lines[line - 1] = target.replace(from!, () => to!);

const { atime, mtime } = statSync(file!);
const restore = () => {
  writeFileSync(file!, original);
  utimesSync(file!, atime, mtime);
};
for (const [signal, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
  process.once(signal, () => {
    restore();
    process.exit(code);
  });
}
// A mutant that makes the code loop never lets vitest's own timeouts fire: after this long the
// tests are stopped and the mutant counts as killed, as Stryker counts a timeout.
const TIMEOUT_S = Number(process.env.PLANT_TIMEOUT_S ?? 300);
let status: number | null;
let timedOut = false;
try {
  writeFileSync(file!, lines.join("\n"));
  if (build) compile();
  // In a session of its own, so that a timeout stops vitest's workers too, not only npx.
  const run = spawnSync("setsid", ["npx", "vitest", "run", ...tests], { stdio: ["ignore", "ignore", "ignore"], timeout: TIMEOUT_S * 1000, killSignal: "SIGKILL" });
  timedOut = run.error !== undefined && (run.error as NodeJS.ErrnoException).code === "ETIMEDOUT";
  if (timedOut) {
    try {
      process.kill(-run.pid, "SIGKILL");
    } catch {
      // The whole group has gone already.
    }
  }
  status = run.status;
} finally {
  restore();
  if (build) compile();
}
const killed = status !== 0;
console.log(`${killed ? "killed  " : "SURVIVED"} ${file}:${line} ${JSON.stringify(from)} → ${JSON.stringify(to)}${timedOut ? ` (timed out after ${TIMEOUT_S} s)` : ""}`);
process.exitCode = killed ? 0 : 1;
