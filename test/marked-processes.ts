// Processes a test started through a command, found by a mark in their environment, so a test
// can check that stopping the command left none of them running (Linux /proc).
import { readdirSync, readFileSync } from "node:fs";

/** Processes other than this one whose environment carries CBQS_TEST_MARK=`mark`, except those whose command line contains `except` (the command itself). */
export function marked(mark: string, except: string): string[] {
  return readdirSync("/proc").filter((pid) => {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) return false;
    try {
      return readFileSync(`/proc/${pid}/environ`, "latin1").includes(`CBQS_TEST_MARK=${mark}`) && !readFileSync(`/proc/${pid}/cmdline`, "latin1").includes(except);
    } catch {
      return false;
    }
  });
}
