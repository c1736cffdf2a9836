// The `cbqs node` command itself: "listening on http://<host>:<port>" once it serves, a clean exit 0
// on SIGTERM/SIGINT (the store closed, nothing half-done), and one-line exit-2 errors for unusable
// input.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { buildProgram } from "../../src/cli/program.js";
import { cbqs, unusableInput } from "../cli/program.js";
import { get } from "./helpers.js";

const dir = mkdtempSync(join(tmpdir(), "cbqs-node-cli-"));

/** Runs `cbqs node …` in-process until it prints its URL, hands the URL to `use`, then sends `signal`. */
async function withNodeCommand(args: string[], signal: "SIGINT" | "SIGTERM", use: (url: string) => Promise<void>): Promise<{ out: string; err: string; exitCode: number }> {
  let out = "";
  let err = "";
  const o = vi.spyOn(process.stdout, "write").mockImplementation((c) => ((out += String(c)), true));
  const e = vi.spyOn(process.stderr, "write").mockImplementation((c) => ((err += String(c)), true));
  process.exitCode = 0;
  try {
    const running = buildProgram("test").parseAsync(["node", "cbqs", "node", ...args]);
    for (let i = 0; i < 500 && !/listening on /.test(out); i++) await new Promise((r) => setTimeout(r, 10));
    const url = /listening on (\S+)\n/.exec(out)?.[1];
    if (url !== undefined) await use(url);
    process.emit(signal, signal);
    await running;
    return { out, err, exitCode: Number(process.exitCode ?? 0) };
  } finally {
    o.mockRestore();
    e.mockRestore();
    process.exitCode = 0;
  }
}

describe("cbqs node (command)", () => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`prints "listening on" once serving, answers, and exits 0 on ${signal}`, async () => {
      let height = "";
      const r = await withNodeCommand(["--fixture", "fixtures/corpus/create-quote.json", "--host", "127.0.0.1", "--port", "0", "--db", join(dir, "db")], signal, async (url) => {
        height = (await get(url, "/cbqs/finalized-view")).body["height"] as string;
      });
      expect(r.exitCode).toBe(0);
      expect(r.out).toMatch(/^listening on http:\/\/127\.0\.0\.1:\d+\n$/);
      expect(height).toBe("6");
      expect(r.err).toMatch(new RegExp(`"msg":"stopping","signal":"${signal}","height":"6"`));
    });
  }

  it("unusable input is exit 2 with one error line", async () => {
    const genesisFile = join(dir, "genesis.json");
    writeFileSync(genesisFile, '{"chain_id": "x"}');
    const cases: Array<[string[], RegExp]> = [
      [["--port", "0"], /no chain to start from: give --genesis <file> or --fixture <file>/],
      [["--fixture", "fixtures/corpus/create-quote.json", "--genesis", genesisFile], /--fixture and --genesis are exclusive/],
      [["--genesis", genesisFile, "--port", "0"], /invalid genesis/],
      [["--genesis", join(dir, "missing.json")], /cannot read .*missing\.json: no such file or directory \(ENOENT\)/],
      [["--fixture", join(dir, "missing.json")], /cannot read .*missing\.json: no such file or directory \(ENOENT\)/],
      [["--fixture", "fixtures/corpus/create-quote.json", "--port", "70000"], /--port must be an integer from 0 to 65535/],
      [["--fixture", "fixtures/corpus/create-quote.json", "--block-time", "-1"], /--block-time must be seconds/],
      [["--fixture", "fixtures/corpus/create-quote.json", "--rate-limit", "many"], /--rate-limit must be an integer/],
    ];
    for (const [args, problem] of cases) expect(await cbqs("node", ...args), args.join(" ")).toEqual(unusableInput(problem));
  });

  it("a port in use is exit 2, one line", async () => {
    let busy = "";
    await withNodeCommand(["--fixture", "fixtures/corpus/create-quote.json", "--port", "0", "--quiet"], "SIGTERM", async (url) => {
      busy = new URL(url).port;
      expect(await cbqs("node", "--fixture", "fixtures/corpus/create-quote.json", "--port", busy, "--quiet")).toEqual(unusableInput(/cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE/));
    });
    expect(busy).not.toBe("");
  });
});
