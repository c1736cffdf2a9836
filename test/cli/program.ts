// Runs `cbqs` in-process the way src/cli.ts does (same program configuration, same registrars,
// same error line and exit code), capturing stdout and stderr. No build needed.
import { CommanderError } from "commander";
import { expect, vi } from "vitest";
import { errorLine, exitCodeOf } from "../../src/cli/common.js";
import { buildProgram } from "../../src/cli/program.js";

export interface CbqsRun {
  exitCode: number;
  out: string;
  err: string;
}

export async function cbqs(...args: string[]): Promise<CbqsRun> {
  const program = await buildProgram("test");
  let out = "";
  let err = "";
  const o = vi.spyOn(process.stdout, "write").mockImplementation((c) => ((out += String(c)), true));
  const e = vi.spyOn(process.stderr, "write").mockImplementation((c) => ((err += String(c)), true));
  process.exitCode = 0;
  let exitCode: number;
  try {
    await program.parseAsync(["node", "cbqs", ...args]);
    exitCode = Number(process.exitCode ?? 0);
  } catch (x) {
    if (!(x instanceof CommanderError)) err += errorLine(x);
    exitCode = exitCodeOf(x);
  } finally {
    o.mockRestore();
    e.mockRestore();
    process.exitCode = 0;
  }
  return { exitCode, out, err };
}

/**
 * What the user sees for unusable input, as a `toEqual` pattern for a CbqsRun: nothing on stdout,
 * exit 2, and exactly one `cbqs: error: …` line in which `problem` matches.
 */
export function unusableInput(problem: RegExp): CbqsRun {
  const oneErrorLine = new RegExp(`^cbqs: error: [^\\n]*(?:${problem.source})[^\\n]*\\n$`, problem.flags);
  return { exitCode: 2, out: "", err: expect.stringMatching(oneErrorLine) };
}
