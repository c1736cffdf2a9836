#!/usr/bin/env node
// `cbqs`: the command-line face of the emulator (commands in src/cli/program.ts).
import { CommanderError } from "commander";
import { createRequire } from "node:module";
import { errorLine, exitCodeOf, ignoreEpipe, UsageError } from "./cli/common.js";
import { buildProgram } from "./cli/program.js";

async function main(argv: string[]): Promise<void> {
  // Commander would print the whole help to stderr; unusable input is one line (exit 2).
  if (argv.length <= 2) fail(new UsageError("no command given (cbqs --help lists them)"));
  try {
    await (await buildProgram(packageVersion(), argv.slice(2))).parseAsync(argv);
  } catch (err) {
    fail(err);
  }
}

function fail(err: unknown): never {
  // Commander has already printed its own errors; --help and --version exit here with code 0.
  // On a terminal the line starts afresh: a progress line may be drawn (src/harness/progress.ts).
  if (!(err instanceof CommanderError)) process.stderr.write((process.stderr.isTTY === true ? "\r\x1b[K" : "") + errorLine(err));
  process.exit(exitCodeOf(err));
}

function packageVersion(): string {
  // Runs as dist/src/cli.js, two levels below package.json.
  const pkg = createRequire(import.meta.url)("../../package.json") as { version: string };
  return pkg.version;
}

ignoreEpipe(process.stdout, fail);
process.on("uncaughtException", fail);
main(process.argv).catch(fail);
