import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { spawnSync } from "node:child_process";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ARTIFACT_PATH } from "../../src/gas/artifact.js";
import { cbqs, unusableInput } from "../cli/program.js";

const dir = mkdtempSync(join(tmpdir(), "cbqs-gas-"));

describe("cbqs gas-vectors (CIP-39 §18.1)", () => {
  it("§18.1 verify exits 0 on the committed artifact and prints the pinned digest", async () => {
    const { out, exitCode } = await cbqs("gas-vectors", "verify");
    expect(exitCode).toBe(0);
    expect(out).toMatch(/^ok: 13 vectors re-executed, sha256 [0-9a-f]{64}\n$/);
  });

  it("§18.1 verify without a file checks this installation's artifact from any working directory", () => {
    // The compiled CLI run from another directory (no process.chdir: tests may run in worker threads).
    const r = spawnSync(process.execPath, [resolve("dist/src/cli.js"), "gas-vectors", "verify"], { cwd: dir, encoding: "utf8" });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^ok: 13 vectors re-executed/);
  });

  it("§18.1 verify exits 1 with the first differing number in words", async () => {
    const file = join(dir, "tampered.json");
    writeFileSync(file, readFileSync(ARTIFACT_PATH, "utf8").replace('"payload_bytes": 3,', '"payload_bytes": 4,'));
    const { out, exitCode } = await cbqs("gas-vectors", "verify", file);
    expect(exitCode).toBe(1);
    expect(out).toBe("mismatch: vector set-provider-status: payload_bytes: expected 4, actual 3 (expected: the file's value, actual: the engine's)\n");
  });

  it("§18.1 verify reports unusable input on one error line, exit 2", async () => {
    const file = join(dir, "broken.json");
    writeFileSync(file, "not json");
    expect(await cbqs("gas-vectors", "verify", file)).toEqual(unusableInput(/broken\.json: \$: not valid JSON/));
    const artifact = JSON.parse(readFileSync(ARTIFACT_PATH, "utf8")) as { vectors: Array<Record<string, unknown>> };
    artifact.vectors[0]!["note"] = "x";
    const extra = join(dir, "extra.json");
    writeFileSync(extra, JSON.stringify(artifact));
    expect(await cbqs("gas-vectors", "verify", extra)).toEqual(unusableInput(/extra\.json: \$\.vectors\[0\]\.note: unknown field/));
    expect(await cbqs("gas-vectors", "verify", join(dir, "missing.json"))).toEqual(unusableInput(/cannot read \S*missing\.json/));
  });

  it("§18.1 generate -o writes exactly the committed bytes", async () => {
    const file = join(dir, "generated.json");
    expect((await cbqs("gas-vectors", "generate", "-o", file)).exitCode).toBe(0);
    expect(readFileSync(file, "utf8")).toBe(readFileSync(ARTIFACT_PATH, "utf8"));
  });
});
