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
  try {
    values = parseArgs({ args: argv, options, strict: true }).values;
  } catch (err) {
    // Worded like the CLI's own usage errors: "unknown option '--x'".
    const message = (err as Error).message;
    throw new UsageError(`${message.charAt(0).toLowerCase()}${message.slice(1)} (see --help)`);
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
