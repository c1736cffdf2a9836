// `cbqs node …` of a compiled CLI in a child process, for the tests that run documented shell
// sessions or an installed package against it: resolves with its URL once it prints it, rejects
// if it exits first. The caller stops it (`stop()`: SIGTERM, then waits for the exit).
import { spawn, type ChildProcess } from "node:child_process";

export interface SpawnedNode {
  child: ChildProcess;
  url: string;
  stop: () => Promise<void>;
}

/** Loopback, a free port, every rate limit off (the tests drive it as fast as they like). */
export async function spawnNode(cli: string, args: readonly string[], options: { cwd?: string } = {}): Promise<SpawnedNode> {
  const child = spawn(process.execPath, [cli, "node", ...args, "--host", "127.0.0.1", "--port", "0", "--rate-limit", "0", "--proof-rate-limit", "0"], {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /listening on (\S+)\n/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.once("exit", (code) => reject(new Error(`cbqs node exited (${code}) before serving: ${err.slice(0, 2000)}`)));
  });
  return {
    child,
    url,
    stop: async () => {
      child.kill("SIGTERM");
      await exited;
    },
  };
}
