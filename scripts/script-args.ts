// Options of the scripts a user runs (npm start, the long-chain generator): node's strict
// parseArgs, so an unknown option, a missing value or a stray argument is refused as unusable
// input (one error line, exit 2) instead of being ignored; --help prints the script's usage.
import { parseArgs } from "node:util";
import { UsageError } from "../src/cli/common.js";

export interface ScriptArgs {
  /** `--name <value>`, or undefined when not given. */
  value(name: string): string | undefined;
  /** `--name <n>`: an integer of at least `min`, or `fallback` when not given. */
  integer(name: string, fallback: number, min: number): number;
  /** A `--name` switch. */
  flag(name: string): boolean;
}

/** The options of `argv` (`valued` take a value, `switches` none), or null when --help printed `usage`. */
export function scriptArgs(argv: string[], usage: string, valued: readonly string[], switches: readonly string[]): ScriptArgs | null {
  const options: Record<string, { type: "string" | "boolean"; short?: string }> = Object.fromEntries([
    ...valued.map((n) => [n, { type: "string" }] as const),
    ...switches.map((n) => [n, { type: "boolean" }] as const),
  ]);
  options["help"] = { type: "boolean", short: "h" };
  let values: Record<string, string | boolean | undefined>;
  let tokens: Array<{ kind: string; name?: string }>;
  try {
    ({ values, tokens } = parseArgs({ args: argv, options, strict: true, tokens: true }));
  } catch (err) {
    // Worded like the CLI's own usage errors: "unknown option '--x'".
    const message = (err as Error).message;
    throw new UsageError(`${message.charAt(0).toLowerCase()}${message.slice(1)} (see --help)`);
  }
  // As on the CLI (src/cli/common.ts refuseRepeats): an option given twice is refused, not "the last one wins".
  const seen = new Set<string>();
  for (const t of tokens) {
    if (t.kind !== "option" || t.name === undefined) continue;
    if (seen.has(t.name)) throw new UsageError(`option --${t.name} given twice (give it once)`);
    seen.add(t.name);
  }
  if (values["help"] === true) {
    process.stdout.write(usage);
    return null;
  }
  const value = (name: string) => values[name] as string | undefined;
  return {
    value,
    integer: (name, fallback, min) => {
      const text = value(name);
      if (text === undefined) return fallback;
      if (!/^[0-9]{1,9}$/.test(text) || Number(text) < min) throw new UsageError(`--${name} must be an integer of at least ${min} (got ${text})`);
      return Number(text);
    },
    flag: (name) => values[name] === true,
  };
}

/**
 * For the developer scripts that read their own options (benches, fuzzers, generators): `--help`
 * or `-h` prints `usage` and exits 0; an option not in `valued` or `switches`, a valued option
 * without its value, or more than `positionals` other arguments print the problem and `usage`
 * on stderr and exit 2 — before the script does anything.
 */
export function checkScriptArgs(argv: readonly string[], usage: string, valued: readonly string[], switches: readonly string[] = [], positionals = 0): void {
  exitOnHelp(argv, usage);
  const text = usage.endsWith("\n") ? usage : `${usage}\n`;
  let extra = 0;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    let problem: string | undefined;
    if (valued.includes(arg)) {
      if (argv[i + 1] === undefined || argv[i + 1]!.startsWith("--")) problem = `${arg} needs a value`;
      i++;
    } else if (arg.startsWith("-") && arg !== "-") {
      if (!switches.includes(arg)) problem = `unknown option ${arg}`;
    } else if (++extra > positionals) problem = `unexpected argument ${arg}`;
    if (problem !== undefined) {
      process.stderr.write(`${problem}\n${text}`);
      process.exit(2);
    }
  }
}

/** `--help` or `-h` in `argv`: prints `usage` on stdout and exits 0 (for scripts whose own parser checks the rest). */
export function exitOnHelp(argv: readonly string[], usage: string): void {
  if (!argv.includes("--help") && !argv.includes("-h")) return;
  process.stdout.write(usage.endsWith("\n") ? usage : `${usage}\n`);
  process.exit(0);
}

/** A usage error of a developer script: the problem and `usage` on stderr, exit 2 (as the CLI's usage errors). */
export function usageExit(script: string, problem: string, usage: string): never {
  process.stderr.write(`${script}: ${problem}\n${usage.endsWith("\n") ? usage : `${usage}\n`}`);
  process.exit(2);
}
