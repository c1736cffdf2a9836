// What the node scripts (bench-node, fuzz-node) share: integer options and a real `cbqs node`
// child process started on a loopback port of the system's choosing.
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

/** This build's CLI (dist/scripts/ → dist/src/cli.js), whatever the working directory. */
const CLI = fileURLToPath(new URL("../src/cli.js", import.meta.url));

/** `--<name> <positive integer>` from the command line, or `fallback`. */
export function intArg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!Number.isSafeInteger(v) || v < 1) throw new Error(`--${name} must be a positive integer`);
  return v;
}

/**
 * Starts `cbqs node <args> --host 127.0.0.1 --port 0` (rate limits off) and resolves once it
 * prints its "listening on" line. `stderr`: "pipe" collects it into the returned getter. `cli`:
 * another build's dist/src/cli.js (a baseline); `cpus`: run it on those cores only (taskset -c);
 * `nodeFlags`: node's own options (`--cpu-prof`).
 */
export async function startNode(
  args: readonly string[],
  stderr: "inherit" | "pipe",
  options: { cli?: string; cpus?: string; nodeFlags?: readonly string[] } = {},
): Promise<{ child: ChildProcess; url: URL; stderr: () => string }> {
  const command = [process.execPath, ...(options.nodeFlags ?? []), options.cli ?? CLI, "node", ...args, "--host", "127.0.0.1", "--port", "0", "--rate-limit", "0", "--proof-rate-limit", "0"];
  // taskset execs the node in its own process: the child's pid is the node's.
  const [file, ...rest] = options.cpus === undefined ? command : ["taskset", "-c", options.cpus, ...command];
  const child = spawn(file!, rest, {
    stdio: ["ignore", "pipe", stderr],
  });
  let err = "";
  child.stderr?.on("data", (d) => (err += String(d)));
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout!.on("data", (d) => {
      out += String(d);
      const m = /listening on (\S+)\n/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on("exit", (code) => reject(new Error(`the node exited (${code}) before serving${err === "" ? "" : `:\n${err}`}`)));
  });
  return { child, url: new URL(url), stderr: () => err };
}
