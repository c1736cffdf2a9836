// Plants one mutant by hand and runs the tests that should kill it (docs/testing.md "Static
// mutants"). Stryker evaluates module-level constants (a regular expression, a parameter table)
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
// (killed), 1 when they pass (survived), 2 for unusable arguments.
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
process.once("SIGINT", () => {
  restore();
  process.exit(130);
});
let status: number | null;
try {
  writeFileSync(file!, lines.join("\n"));
  if (build) compile();
  status = spawnSync("npx", ["vitest", "run", ...tests], { stdio: ["ignore", "ignore", "ignore"] }).status;
} finally {
  restore();
  if (build) compile();
}
const killed = status !== 0;
console.log(`${killed ? "killed  " : "SURVIVED"} ${file}:${line} ${JSON.stringify(from)} → ${JSON.stringify(to)}`);
process.exitCode = killed ? 0 : 1;
