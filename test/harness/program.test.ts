// Whole-program conventions the QA pass found broken (src/cli/common.ts: exit 2 = unusable input,
// one line; scenario-format §1: integers are decimal strings on output).
import { describe, expect, it } from "vitest";
import { cbqs, unusableInput } from "../cli/program.js";

describe("cbqs help", () => {
  it("help <unknown> is exit 2 with one 'unknown command' line, not the whole help", async () => {
    expect(await cbqs("help", "nope")).toEqual(unusableInput(/unknown command 'nope'/));
    expect(await cbqs("help", "gas-vectors", "nope")).toEqual(unusableInput(/unknown command 'gas-vectors nope'/));
  });

  it("help, help <command> and help <command> <subcommand> print that help, exit 0", async () => {
    const top = await cbqs("help");
    expect(top).toMatchObject({ exitCode: 0, err: "" });
    expect(top.out).toMatch(/Usage: cbqs /);
    expect(top.out).toMatch(/help \[command\.\.\.\]/);
    expect((await cbqs("help", "replay")).out).toMatch(/Usage: cbqs replay /);
    expect((await cbqs("help", "gas-vectors", "verify")).out).toMatch(/Usage: cbqs gas-vectors verify /);
  });
});

describe("--json integers are decimal strings (scenario-format §1)", () => {
  it("conformance commonware --json: nCases", async () => {
    const r = await cbqs("conformance", "commonware", "--json");
    const rows = JSON.parse(r.out).results as Array<{ nCases: unknown }>;
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row.nCases).toMatch(/^[0-9]+$/);
  });

  it("gas-vectors verify --json: vectors", async () => {
    const r = await cbqs("gas-vectors", "verify", "--json");
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ ok: true, vectors: "13" });
  });
});
