import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { Command } from "commander";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toHex } from "../../../src/bytes.js";
import { UsageError } from "../../../src/cli/common.js";
import { register } from "../../../src/cli/proof.js";
import { STATE_KEY_LENGTH } from "../../../state/interface.js";
import { createStateCommitment } from "../../../state/qmdb/index.js";
import { proveKey } from "../../../state/proof.js";

// Runs `cbqs verify-proof …` in-process; thrown errors are what src/cli.ts turns into exit 2.
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

const dir = mkdtempSync(join(tmpdir(), "cbqs-proof-"));
const sc = createStateCommitment();
const k = new Uint8Array(STATE_KEY_LENGTH).fill(4);
sc.commitBatch([[k, Uint8Array.of(1, 2, 3)]]);
const proofFile = join(dir, "proof.json");
writeFileSync(proofFile, JSON.stringify(proveKey(sc.db, k)));
const notJson = join(dir, "bad.json");
writeFileSync(notJson, "{");

describe("cbqs verify-proof (CIP-4 §5.4)", () => {
  afterEach(() => {
    process.exitCode = 0;
  });
  afterAll(() => rmSync(dir, { recursive: true }));

  it("§5.4 a valid proof prints valid and exits 0", async () => {
    expect(await run(["verify-proof", proofFile, "--root", toHex(sc.root())])).toEqual({ out: "valid\n", exitCode: 0 });
  });

  it("§5.4 a wrong root prints the reason and exits 1", async () => {
    expect(await run(["verify-proof", proofFile, "--root", "0x" + "00".repeat(32), "--json"])).toEqual({
      out: '{"valid":false,"reason":"root mismatch"}\n',
      exitCode: 1,
    });
    // The same proof read as a SHA-256 database proof does not verify either.
    expect((await run(["verify-proof", proofFile, "--root", toHex(sc.root()), "--hasher", "sha256"])).exitCode).toBe(1);
  });

  it("§5.4 unusable input (not JSON, missing file, bad root, unknown hasher) is a usage error", async () => {
    await expect(run(["verify-proof", notJson, "--root", toHex(sc.root())])).rejects.toThrow(UsageError);
    await expect(run(["verify-proof", join(dir, "missing.json"), "--root", toHex(sc.root())])).rejects.toThrow(UsageError);
    await expect(run(["verify-proof", proofFile, "--root", "0x00"])).rejects.toThrow(/--root/);
    await expect(run(["verify-proof", proofFile, "--root", toHex(sc.root()), "--hasher", "md5"])).rejects.toThrow(UsageError);
  });
});
