import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Command } from "commander";
import { register } from "../../src/cli/gas.js";
import { UsageError } from "../../src/cli/common.js";
import { ARTIFACT_PATH } from "../../src/gas/artifact.js";

// Runs `cbqs gas-vectors …` in-process; a thrown UsageError is what src/cli.ts turns into exit 2.
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

const dir = mkdtempSync(join(tmpdir(), "cbqs-gas-"));

describe("cbqs gas-vectors (CIP-39 §18.1)", () => {
  afterEach(() => {
    process.exitCode = 0;
  });

  it("§18.1 verify exits 0 on the committed artifact and prints the pinned digest", async () => {
    const { out, exitCode } = await run(["gas-vectors", "verify"]);
    expect(exitCode).toBe(0);
    expect(out).toMatch(/^ok: 13 vectors re-executed, sha256 [0-9a-f]{64}\n$/);
  });

  it("§18.1 verify exits 1 with the first differing number in words", async () => {
    const file = join(dir, "tampered.json");
    writeFileSync(file, readFileSync(ARTIFACT_PATH, "utf8").replace('"payload_bytes": 3,', '"payload_bytes": 4,'));
    const { out, exitCode } = await run(["gas-vectors", "verify", file]);
    expect(exitCode).toBe(1);
    expect(out).toBe("mismatch: vector set-provider-status: payload_bytes: expected 4, actual 3\n");
  });

  it("§18.1 verify reports unusable input as a UsageError (exit 2)", async () => {
    const file = join(dir, "broken.json");
    writeFileSync(file, "not json");
    await expect(run(["gas-vectors", "verify", file])).rejects.toThrow(UsageError);
    await expect(run(["gas-vectors", "verify", join(dir, "missing.json")])).rejects.toThrow(UsageError);
  });

  it("§18.1 generate -o writes exactly the committed bytes", async () => {
    const file = join(dir, "generated.json");
    expect((await run(["gas-vectors", "generate", "-o", file])).exitCode).toBe(0);
    expect(readFileSync(file, "utf8")).toBe(readFileSync(ARTIFACT_PATH, "utf8"));
  });
});
