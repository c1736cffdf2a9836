// `cbqs node …` run in-process as src/cli.ts runs it, for the tests of what the command itself
// prints and refuses: until it prints its URL, then `use(url)`, then a signal ends it.
import { vi } from "vitest";
import { buildProgram } from "../../src/cli/program.js";

export async function withNodeCommand(args: string[], use: (url: string) => Promise<void>, signal: "SIGINT" | "SIGTERM" = "SIGTERM"): Promise<{ out: string; err: string; exitCode: number }> {
  let out = "";
  let err = "";
  const o = vi.spyOn(process.stdout, "write").mockImplementation((c) => ((out += String(c)), true));
  const e = vi.spyOn(process.stderr, "write").mockImplementation((c) => ((err += String(c)), true));
  process.exitCode = 0;
  try {
    const running = (await buildProgram("test")).parseAsync(["node", "cbqs", "node", ...args]);
    for (let i = 0; i < 1000 && !/listening on /.test(out); i++) await new Promise((r) => setTimeout(r, 10));
    const url = /listening on (\S+)\n/.exec(out)?.[1];
    if (url === undefined) throw new Error(`the node did not start: ${out}${err}`);
    try {
      await use(url);
    } finally {
      process.emit(signal, signal);
      await running;
    }
    return { out, err, exitCode: Number(process.exitCode ?? 0) };
  } finally {
    o.mockRestore();
    e.mockRestore();
    process.exitCode = 0;
  }
}
