// Conventions shared by every `cbqs` command: exit 0 = success/accept/match,
// 1 = reject/verification mismatch, 2 = unusable input. Errors are one line, never a stack.
import type { Command } from "commander";

export const EXIT_OK = 0;
export const EXIT_REJECT = 1;
export const EXIT_BAD_INPUT = 2;

/** Unusable input (bad hex, unknown type, malformed file…): reported as one line, exit 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

export type Registrar = (program: Command) => void;

/** Prints a result either as one human line or as JSON (`--json`). */
export function report(json: boolean, human: string, data: unknown): void {
  if (json) process.stdout.write(JSON.stringify(data, jsonReplacer) + "\n");
  else process.stdout.write(human + "\n");
}

/** JSON.stringify replacer for the scenario-format conventions: bigint → decimal string. */
export function jsonReplacer(_key: string, value: unknown): unknown {
  return typeof value === "bigint" ? value.toString() : value;
}
