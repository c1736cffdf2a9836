// Conventions shared by every `cbqs` command: exit 0 = success/accept/match,
// 1 = reject/verification mismatch, 2 = unusable input. Errors are one line, never a stack.
import { Command, CommanderError, Help, Option } from "commander";
import { Stopped } from "../steps.js";
import { echo, MAX_ERROR_LINE } from "../bounds.js";
import { checkOutputDirectory, checkOutputPath } from "../output-file.js";
import type { EventEmitter } from "node:events";
import { availableParallelism } from "node:os";
import { resolve } from "node:path";
import type { HtmlMeta } from "../report/html.js";
import type { Suite } from "../report/model.js";

export const EXIT_OK = 0;
export const EXIT_REJECT = 1;
export const EXIT_BAD_INPUT = 2;

/** Unusable input (bad hex, unknown type, malformed file…): reported as one line, exit 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** Prints a result either as one human line or as JSON (`--json`). */
export function report(json: boolean, human: string, data: unknown): void {
  if (json) process.stdout.write(JSON.stringify(data, jsonReplacer) + "\n");
  else process.stdout.write(human + "\n");
}

/** JSON.stringify replacer for the scenario-format conventions: bigint → decimal string. */
export function jsonReplacer(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}

/**
 * One terminal-safe line: a multi-line message (commander's "(Did you mean …?)" hint, a wrapped
 * error) is joined rather than cut, and control characters echoed from user input (binary
 * garbage in a file, ESC sequences) are shown as \xNN instead of reaching the terminal — as are
 * the invisible ones a reader could not otherwise see (a byte-order mark, U+2028/U+2029), as \uNNNN.
 */
export function oneLine(text: string): string {
  const visible = (line: string): string =>
    line.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/g, (c) => {
      const code = c.charCodeAt(0);
      return code <= 0xff ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
    });
  return text
    .split(/\r?\n/)
    .map((line) => visible(line).trim())
    .filter((line) => line !== "")
    .join(" ");
}

/** A message as one line of at most MAX_ERROR_LINE characters (commander's own echo argv whole). */
const boundedLine = (text: string): string => echo(oneLine(text), MAX_ERROR_LINE);

/** The error line every failure of `cbqs` prints on stderr. */
export function errorLine(err: unknown): string {
  if (err instanceof Stopped) return `cbqs: ${oneLine(`${err.message}; ${err.kept}`)}\n`;
  return `cbqs: error: ${boundedLine(err instanceof Error ? err.message : String(err))}\n`;
}

/** Exit code for an error that escaped a command: commander's own (0 for --help/--version) or 2. */
export function exitCodeOf(err: unknown): number {
  if (err instanceof Stopped) return err.exitCode;
  return err instanceof CommanderError && err.exitCode === 0 ? EXIT_OK : EXIT_BAD_INPUT;
}

/** Commander's report of a required option left out (a method its typings do not declare). */
interface MandatoryReport {
  missingMandatoryOptionValue(option: Option): void;
}

/**
 * The argParser of an option that may be given more than once (`state dump --stream a --stream b`):
 * its values are collected, in order. Every other option given twice is refused (refuseRepeats).
 */
function repeatable(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** An option as commander's `.option(flags, description, default)` declares it. */
export function option(flags: string, description: string, defaultValue?: string): Option {
  const made = new Option(flags, description);
  return defaultValue === undefined ? made : made.default(defaultValue);
}

/** An option the command cannot run without (--help marks it "(required)", configureProgram). */
export function requiredOption(flags: string, description: string): Option {
  return new Option(flags, description).makeOptionMandatory();
}

/** An option that may be given more than once, its values collected in order (`repeatable`). */
export function repeatableOption(flags: string, description: string): Option {
  return new Option(flags, description).argParser(repeatable);
}

/** The options naming what a command writes, checked before the command does any work. */
const outputs = new WeakMap<Option, { kind: "file" } | { kind: "dir"; role: string }>();

/**
 * An option naming a file the command writes (`-o`, `--output.alloc`, `--trace`): written by the
 * rule of src/output-file.ts, and checked before the command reads or computes anything, so an
 * unwritable name is exit 2 at once, not after the work is done and lost.
 */
export function outputOption(flags: string, description: string, defaultValue?: string): Option {
  const made = option(flags, description, defaultValue);
  outputs.set(made, { kind: "file" });
  return made;
}

/** An option naming a directory the command writes files into (`fill -o`, `fuzz --out`); `role` says which, for the refusal. */
export function outputDirOption(flags: string, description: string, role: string, defaultValue?: string): Option {
  const made = outputOption(flags, description, defaultValue);
  outputs.set(made, { kind: "dir", role });
  return made;
}

/**
 * `--junit <file>` and `--report <file>` of a verifying command (src/cli/reports.ts writes them):
 * `cases` says what one test case is there ("a testcase per fixture").
 */
export function reportOptions(cases: string): Option[] {
  return [
    outputOption("--junit <file>", `write a JUnit XML report for CI (${cases}; a failure's first difference as its message)`),
    outputOption("--report <file>", "write an HTML report: one self-contained page with a summary, a row per case and, for a failure, its difference and the command that reproduces it"),
  ];
}

/** `--junit` and `--report` naming one file is refused before any work: the second would replace the first. */
export function checkReportFiles(opts: { junit?: string; report?: string }): void {
  if (opts.junit !== undefined && opts.report !== undefined && resolve(opts.junit) === resolve(opts.report)) {
    throw new UsageError(`--junit and --report name the same file (${echo(opts.junit)}): give each its own`);
  }
}

/**
 * The exit code once the reports asked for are written (src/cli/reports.ts, loaded only then):
 * `verdict`, or 2 when a report could not be written and the verdict is not 1. `suites` is built
 * only when a report is asked for.
 */
export async function withReports(opts: { junit?: string; report?: string }, verdict: number, suites: () => readonly Suite[], meta: HtmlMeta): Promise<number> {
  if (opts.junit === undefined && opts.report === undefined) return verdict;
  const { writeReports } = await import("./reports.js");
  return writeReports(opts, suites(), meta, verdict);
}

/** Checks every output option of `command` that has a value (src/output-file.ts): exit 2 before any work. */
function checkOutputs(command: Command): void {
  for (const option of command.options) {
    const output = outputs.get(option);
    const value: unknown = command.getOptionValue(option.attributeName());
    if (output === undefined || typeof value !== "string") continue;
    if (output.kind === "file") checkOutputPath(value);
    else checkOutputDirectory(value, option.short ?? option.long ?? "", output.role);
  }
}

/**
 * Commander keeps the last value of an option given twice (`--root a --root b` is `--root b`):
 * a slip that silently changes what is checked. Every option that is not variadic or
 * `repeatable` is refused the second time it appears: exit 2, `cbqs: error: option --root given
 * twice`. The check runs before commander's own handler (prependListener), which has not yet
 * recorded the second value.
 */
function refuseRepeats(command: Command): void {
  const addOption = command.addOption.bind(command);
  command.addOption = (option: Option) => {
    addOption(option);
    if (option.variadic || option.parseArg === repeatable) return command;
    const key = option.attributeName();
    // Command is an EventEmitter (its typings do not say so).
    (command as unknown as EventEmitter).prependListener(`option:${option.name()}`, () => {
      if (command.getOptionValueSource(key) === "cli") {
        command.error(`error: option ${option.long ?? option.short} given twice (give it once)`, { exitCode: EXIT_BAD_INPUT, code: "cbqs.repeatedOption" });
      }
    });
    return command;
  };
}

/**
 * Commander checks required options before unknown ones, so a typo (`trace f --blok 5`) would be
 * reported as the option it was meant to be, missing. Here a missing required option is held back
 * and reported in preAction, which commander runs after its unknown-option check: the typo wins,
 * with its "(Did you mean --block?)". The output options are checked there too, before the action
 * runs, and an option given twice is refused (refuseRepeats). Every subcommand is made this way
 * (createCommand).
 */
function unknownOptionsFirst(command: Command): Command {
  const reporter = command as unknown as MandatoryReport;
  const report = reporter.missingMandatoryOptionValue.bind(command);
  let missing: Option | undefined;
  reporter.missingMandatoryOptionValue = (option) => {
    missing ??= option;
  };
  command.hook("preAction", () => {
    if (missing !== undefined) report(missing);
    checkOutputs(command);
  });
  refuseRepeats(command);
  command.createCommand = (name?: string) => unknownOptionsFirst(new Command(name));
  return command;
}

/**
 * The top-level program's conventions: commander throws instead of exiting, its own usage
 * errors ("error: unknown option '--jsn' (Did you mean --json?)") come out as one
 * `cbqs: error: …` line like every other error, an unknown option is reported before a missing
 * required one, and --help marks each `requiredOption` as required (commander enforces it but does
 * not say so). Subcommands created after this inherit it.
 */
export function configureProgram(program: Command): Command {
  return unknownOptionsFirst(program)
    .exitOverride()
    .configureOutput({ outputError: (str, write) => write(`cbqs: ${boundedLine(str)}\n`) })
    .configureHelp({
      optionDescription(option) {
        const text = Help.prototype.optionDescription.call(this as Help, option) + (coreCounted.has(option) ? ` (${availableParallelism()} here)` : "");
        return option.mandatory ? `${text} (required)` : text;
      },
    });
}

/**
 * A reader that stops early (`cbqs replay --trace - | head -1`) closes stdout: the rest of the
 * output is dropped quietly and the exit code stays the one the command set
 * (docs/reference/formats/fixture.md); any other stream error still fails.
 */
export function ignoreEpipe(stream: NodeJS.WritableStream, fail: (err: unknown) => void): void {
  stream.on("error", (err: NodeJS.ErrnoException) => {
    if (err.code !== "EPIPE") fail(err);
  });
}

/** What a command's exit codes mean: 0, 1, 2 and, for a long-running command, what a SIGINT/SIGTERM leaves (src/steps.ts). */
export interface ExitCodes {
  readonly ok: string;
  readonly reject: string;
  readonly unusable: string;
  readonly stopped?: string;
}

/** A command's exit codes (src/cli/define.ts puts them at the end of its --help). */
export function exitCodes(ok: string, reject: string, unusable = "unusable input (one error line naming the file and JSON path)", stopped?: string): ExitCodes {
  return { ok, reject, unusable, ...(stopped === undefined ? {} : { stopped }) };
}

/** The `Exit codes:` section every command's --help ends with (test/cli/workflow.test.ts checks that each has one). */
export function exitCodesText(e: ExitCodes): string {
  return `\nExit codes:\n  0  ${e.ok}\n  1  ${e.reject}\n  2  ${e.unusable}${e.stopped === undefined ? "" : `\n  130/143  stopped by SIGINT/SIGTERM: ${e.stopped}`}`;
}

/** A decimal u64 option (`--to-height`, `--block`, `--index`). */
export function decimalOption(flag: string, text: string): bigint {
  if (!/^[0-9]+$/.test(text) || text.length > 20 || BigInt(text) >> 64n !== 0n) throw new UsageError(`${flag} must be a decimal integer up to 2^64 - 1 (got ${echo(text)})`);
  return BigInt(text);
}

/** A non-negative decimal integer option, at most `max`. */
export function intOption(name: string, text: string, max: number): number {
  if (!/^[0-9]{1,15}$/.test(text) || Number(text) > max) throw new UsageError(`${name} must be an integer from 0 to ${max} (got ${echo(text)})`);
  return Number(text);
}

/** The --jobs options, whose help ends with this machine's core count (configureProgram): not part of the description docs/reference/cli.md shows. */
const coreCounted = new WeakSet<Option>();

/** `--jobs <n>`: `what` runs in parallel, on as many as there are cores when not given. */
export function jobsOption(what: string): Option {
  const option = new Option("--jobs <n>", `${what}; the number of cores when not given`);
  coreCounted.add(option);
  return option;
}

/** `--jobs <n>`: 1 … 256, the number of cores when not given. */
export function jobsCount(text: string | undefined): number {
  if (text === undefined) return availableParallelism();
  if (!/^[0-9]{1,3}$/.test(text) || Number(text) < 1 || Number(text) > 256) throw new UsageError(`--jobs must be an integer from 1 to 256 (got ${echo(text)})`);
  return Number(text);
}
