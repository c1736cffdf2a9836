// What the tests that execute the documentation's shell blocks share: a line of a block is a
// command, optionally followed by `# →` and the pieces of its expected output (`…` between them
// standing for any text), and a block runs in bash with -e and pipefail from the repository root.
import { spawn } from "node:child_process";
import { join } from "node:path";

const ROOT = join(import.meta.dirname, "..", "..");

export interface BlockLine {
  command: string;
  /** The expected output's pieces, in order; empty when the line states none. */
  pieces: string[];
}

export function blockLines(block: string): BlockLine[] {
  return block.split("\n").map((line) => {
    const at = line.indexOf("# →");
    return at < 0 ? { command: line, pieces: [] } : { command: line.slice(0, at).trimEnd(), pieces: line.slice(at + 3).split("…").map((p) => p.trim()) };
  });
}

/** Output is collected whole: the blocks print a few lines, and the timeout bounds the rest. */
export function bash(script: string, env: NodeJS.ProcessEnv): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const child = spawn("bash", ["-e", "-o", "pipefail", "-c", script], { cwd: ROOT, timeout: 120_000, env });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) => child.on("close", (status) => resolve({ status, stdout, stderr })));
}
