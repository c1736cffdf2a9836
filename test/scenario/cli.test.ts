import { afterEach, describe, expect, it, vi } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command } from "commander";
import { defineAll } from "../../src/cli/define.js";
import { commands } from "../../src/cli/run.js";

const dir = mkdtempSync(join(tmpdir(), "cbqs-run-"));
const GOV = "0x00000000000000000000000000000000000000aa";
const P1 = "0x2222222222222222222222222222222222222222";

function file(name: string, doc: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof doc === "string" ? doc : JSON.stringify(doc));
  return path;
}

async function run(args: string[]): Promise<{ out: string; err: string; code: number | undefined }> {
  let out = "";
  let err = "";
  const o = vi.spyOn(process.stdout, "write").mockImplementation((s) => ((out += String(s)), true));
  const e = vi.spyOn(process.stderr, "write").mockImplementation((s) => ((err += String(s)), true));
  process.exitCode = undefined;
  try {
    const program = new Command().exitOverride();
    defineAll(program, commands);
    await program.parseAsync(["node", "cbqs", "run", ...args]);
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
  const code = process.exitCode as number | undefined;
  process.exitCode = undefined;
  return { out, err, code };
}

const scenario = (expectStatus: string) => ({
  format: "cbqs-scenario/v1",
  genesis: { chain_id: "7", timestamp: "0", block_time_seconds: "1", governance: GOV },
  blocks: [{ height: "1", txs: [{ from: P1, cbqs: { SetProviderStatus: { status: "Draining" } }, expect: { status: expectStatus } }] }],
});

afterEach(() => {
  process.exitCode = undefined;
});

describe("cbqs run (scenario-format §3, §4; exit codes of src/cli/common.ts)", () => {
  it("§4: --json prints the run document and exits 0 when every expectation holds", async () => {
    const r = await run([file("ok.json", scenario("rejected")), "--json"]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out);
    expect(doc.format).toBe("cbqs-run/v1");
    expect(doc.blocks[0].receipts[0].error.name).toBe("ProviderNotFound");
  });

  it("§3: a failed expectation exits 1 and prints its JSON path, expected and actual", async () => {
    const r = await run([file("fail.json", scenario("ok"))]);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/expectation failed at \$\.blocks\[0\]\.txs\[0\]\.expect\.status: expected "ok", actual "rejected \(ProviderNotFound/);
    expect(r.out).toMatch(/^FAILED: 1 block, /m);
  });

  it("unusable input is a one-line UsageError (exit 2) naming the JSON path", async () => {
    await expect(run([file("bad.json", { ...scenario("ok"), blocks: [{ height: "x" }] })])).rejects.toThrow(`${join(dir, "bad.json")}: $.blocks[0].height: expected an unsigned integer (decimal string or safe JSON integer)`);
    await expect(run([file("notjson.json", "{")])).rejects.toThrow(/\$: not valid JSON/);
    // §3: an expectation that can never hold is the scenario's defect (exit 2), not a failed run (exit 1)
    const withExpect = (expect: unknown) => ({ ...scenario("ok"), blocks: [{ height: "1", txs: [{ from: P1, transfer: { to: GOV, amount: "0" }, expect }] }] });
    await expect(run([file("unknown-error.json", withExpect({ status: "rejected", error: "Nope" }))])).rejects.toThrow(`${join(dir, "unknown-error.json")}: $.blocks[0].txs[0].expect.error: unknown error name "Nope" (docs/reference/errors.md lists them)`);
    // A near miss is named (the closest known names, at most three edits away).
    await expect(run([file("typo-error.json", withExpect({ status: "rejected", error: "InsuficientBalance" }))])).rejects.toThrow(
      `$.blocks[0].txs[0].expect.error: unknown error name "InsuficientBalance" (did you mean InsufficientBalance? docs/reference/errors.md lists them)`,
    );
    // A fixture given to run: what it is and which command takes it.
    await expect(run([file("a-fixture.json", { format: "cbqs-fixture/v1" })])).rejects.toThrow(
      `$.format: unexpected format "cbqs-fixture/v1" (expected "cbqs-scenario/v1"); this is a fixture: cbqs replay checks it, cbqs diff compares two`,
    );
    await expect(run([file("ok-error.json", withExpect({ status: "ok", error: "Unauthorized" }))])).rejects.toThrow(/\$\.blocks\[0\]\.txs\[0\]\.expect\.error: contradicts/);
    await expect(run([file("backwards.json", { ...scenario("ok"), blocks: [{ height: "1", timestamp: "5" }, { height: "2", timestamp: "4" }] })])).rejects.toThrow(
      /\$\.blocks\[1\]\.timestamp: 4 is earlier than the previous block's timestamp 5/,
    );
    await expect(run([file("no-blocks.json", { format: "cbqs-scenario/v1", genesis: scenario("ok").genesis })])).rejects.toThrow(/\$\.blocks: missing/);
    await expect(run([join(dir, "missing.json")])).rejects.toThrow(/cannot read .*ENOENT/);
    const badGenesis = { ...scenario("ok"), genesis: { ...scenario("ok").genesis, params: { "cbqs.rent.platform_bps": "1" } } };
    await expect(run([file("genesis.json", badGenesis)])).rejects.toThrow(/genesis\.json: \$\.genesis: invalid genesis: params: .*must be 10000/);
  });
});
