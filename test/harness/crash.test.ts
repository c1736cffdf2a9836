// The persistent store survives SIGKILL (the CI-sized version of scripts/crash-replay.ts): a
// real `cbqs replay --db` process (the built CLI, as after `npm ci`) kills itself inside a block
// commit (CBQS_CRASH_IN_COMMIT, after the state is written into the open LMDB transaction),
// three times; each restart resumes, and the final state equals an uninterrupted replay's.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const CLI = "dist/src/cli.js";
const FIXTURE = "fixtures/corpus/create-quote.json"; // genesis and blocks 1, 5, 6: four commits
const root = mkdtempSync(join(tmpdir(), "cbqs-crash-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, encoding: "utf8" });

describe("crash safety (CIP-4 §6.2)", () => {
  it("killed inside three commits and restarted each time: nothing lost, nothing applied twice", () => {
    const store = join(root, "store");
    // Each run dies in its second commit: run 1 keeps genesis and loses block 1, run 2 commits
    // block 1 and loses block 5, run 3 commits block 5 and loses block 6.
    for (const head of ["0", "1", "5"]) {
      const killed = run(["replay", FIXTURE, "--db", store, "--quiet"], { CBQS_CRASH_IN_COMMIT: "2" });
      expect(killed.signal).toBe("SIGKILL");
      expect(JSON.parse(run(["state", "dump", "--db", store]).stdout).height).toBe(head);
    }
    const last = run(["replay", FIXTURE, "--db", store, "--quiet"]);
    expect(last.status, last.stderr).toBe(0);
    expect(last.stdout).toMatch(/: ok; resumed after height \d+, \d+ blocks?,/);
    const persisted = JSON.parse(run(["state", "dump", "--db", store]).stdout);
    const uninterrupted = JSON.parse(run(["state", "dump", FIXTURE]).stdout);
    expect(persisted).toEqual(uninterrupted);
  });
});
