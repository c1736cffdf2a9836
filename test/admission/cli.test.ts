import { afterEach, describe, expect, it, vi } from "vitest";
import { Command } from "commander";
import { register } from "../../src/cli/admission.js";
import { UsageError } from "../../src/cli/common.js";

// Runs `cbqs admit-endpoint …` in-process; thrown errors are what src/cli.ts turns into exit 2.
async function run(args: string[]): Promise<{ out: string; exitCode: number }> {
  const program = new Command().exitOverride();
  register(program);
  let out = "";
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((chunk) => {
    out += String(chunk);
    return true;
  });
  process.exitCode = 0;
  try {
    await program.parseAsync(["node", "cbqs", ...args]);
  } finally {
    spy.mockRestore();
  }
  return { out, exitCode: Number(process.exitCode) };
}

describe("cbqs admit-endpoint (CIP-39 §4.3)", () => {
  afterEach(() => {
    process.exitCode = 0;
  });

  it("§4.3 CLI accepts with exit 0", async () => {
    expect(await run(["admit-endpoint", "--transport", "WebSocketTls", "wss://cbqs.example/stream"])).toEqual({
      out: "accept\n",
      exitCode: 0,
    });
  });

  it("§4.3 CLI rejects with the rule number and exit 1", async () => {
    expect(await run(["admit-endpoint", "--transport", "Https", "https://2130706433/stream"])).toEqual({
      out: "reject: rule 5: IPv4 literal 127.0.0.1 is in 127.0.0.0/8\n",
      exitCode: 1,
    });
    expect(await run(["admit-endpoint", "--transport", "Https", "https://@cbqs.example/stream", "--json"])).toEqual({
      out: '{"ok":false,"rule":4,"reason":"raw authority contains @"}\n',
      exitCode: 1,
    });
  });

  it("§4.3 CLI treats an unknown transport as unusable input", async () => {
    await expect(run(["admit-endpoint", "--transport", "Tcp", "https://x.example/"])).rejects.toThrow(UsageError);
  });
});
