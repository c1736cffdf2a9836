// Refusals and verdicts that name what is wrong — an option given twice (every
// command, centrally: src/cli/common.ts refuseRepeats), verify-bmt-proof's failed check, and
// verify-proof given a fixture or a state dump instead of a proof.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { cbqs, unusableInput } from "./program.js";

const dir = mkdtempSync(join(tmpdir(), "cbqs-refusals-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const FIXTURE = "fixtures/corpus/transfers.json";
const ROOT = "0x" + "11".repeat(32);

describe("an option given twice is refused", () => {
  it("a repeated option is exit 2 'option --x given twice' on verify-proof, trace, replay and state dump (a flag too)", async () => {
    const cases: Array<[string[], string]> = [
      [["verify-proof", "p.json", "--root", ROOT, "--root", ROOT], "--root"],
      [["trace", FIXTURE, "--block", "1", "--block", "2"], "--block"],
      [["replay", FIXTURE, "--to-height", "1", "--to-height", "9"], "--to-height"],
      [["replay", FIXTURE, "--quiet", "--quiet"], "--quiet"],
      [["state", "dump", "x.json", "-o", "a.json", "--output", "b.json"], "--output"],
      [["snapshot", "export", "--db", "a", "--db", "b", "-o", "s.bin"], "--db"],
    ];
    for (const [args, flag] of cases) {
      expect(await cbqs(...args), args.join(" ")).toEqual({ exitCode: 2, out: "", err: `cbqs: error: option ${flag} given twice (give it once)\n` });
    }
  });

  it("the user scripts refuse a repeated option too (npm start --corpus a --corpus b), before any work", () => {
    const r = spawnSync(process.execPath, [join("dist", "scripts", "start.js"), "--corpus", "a", "--corpus", "b"], { encoding: "utf8" });
    expect([r.status, r.stderr]).toEqual([2, "cbqs: error: option --corpus given twice (give it once)\n"]);
  });

  it("an option documented as repeatable (state dump --stream/--provider/--account/--owner) still takes every value", async () => {
    const dump = join(dir, "dump.json");
    expect((await cbqs("state", "dump", FIXTURE, "-o", dump)).exitCode).toBe(0);
    const a = "0x" + "aa".repeat(20);
    const b = "0x" + "bb".repeat(20);
    const r = await cbqs("state", "dump", dump, "--account", a, "--account", b);
    expect(r).toMatchObject({ exitCode: 0, err: "" });
    expect(JSON.parse(r.out)).toMatchObject({ format: "cbqs-state-dump/v1" });
  });
});

describe("verdicts name the failed check", () => {
  it("verify-bmt-proof invalid names the failed check on its verdict line, as verify-proof does", async () => {
    const proof = join(dir, "tx-proof.json");
    expect((await cbqs("prove-tx", FIXTURE, "--block", "1", "--index", "0", "-o", proof)).exitCode).toBe(0);
    const r = await cbqs("verify-bmt-proof", proof, "--root", ROOT);
    expect(r.exitCode).toBe(1);
    expect(r.out).toMatch(/^invalid: the leaf and siblings do not rebuild the given root\n  checked: leaf 0x[0-9a-f]{64} .* do not rebuild the root 0x(11){32}: they rebuild 0x[0-9a-f]{64}\n$/);
  });

  it("verify-proof <fixture> says it is a fixture and how to prove a key of it; a state dump likewise", async () => {
    expect(await cbqs("verify-proof", FIXTURE, "--root", ROOT)).toEqual(
      unusableInput(/fixtures\/corpus\/transfers\.json: this is a fixture \(cbqs-fixture\/v1\), not a proof: make a proof from it with cbqs prove-state fixtures\/corpus\/transfers\.json --height <h> --key <hex> -o proof\.json/),
    );
    const dump = join(dir, "for-proof.json");
    writeFileSync(dump, JSON.stringify({ format: "cbqs-state-dump/v1", entries: [] }));
    expect(await cbqs("verify-proof", dump, "--root", ROOT)).toEqual(unusableInput(/this is a state dump \(cbqs-state-dump\/v1\), not a proof: make a proof from it with cbqs prove-state .* --key <hex>/));
  });
});
