// docs/reference/cli.md is generated from the command tree: the committed file must be exactly
// what the tree gives, list every command and group --help lists and no hidden alias, and its
// generator behaves like the other scripts (--help, unknown options refused).
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { ALIASES, buildProgram } from "../../src/cli/program.js";
import { CLI_REFERENCE_PATH, cliReference } from "../../src/cli/reference.js";

const reference = readFileSync(CLI_REFERENCE_PATH, "utf8");
const headings = [...reference.matchAll(/^## `([^`]+)`$/gm)].map((m) => m[1]!);

describe("docs/reference/cli.md", () => {
  it("is exactly what the command tree generates (node dist/scripts/gen-cli-reference.js)", async () => {
    expect(reference).toBe(cliReference(await buildProgram("test")));
  });

  it("has a section for the program and every command and group --help lists, and none for a hidden alias", async () => {
    const listed = (c: Command, path: string): string[] =>
      c.commands.filter((s) => !(s as unknown as { _hidden: boolean })._hidden).flatMap((s) => [`${path} ${s.name()}`, ...listed(s, `${path} ${s.name()}`)]);
    expect(headings).toEqual(["cbqs", ...listed(await buildProgram("test"), "cbqs")]);
    for (const [old] of ALIASES) expect(headings).not.toContain(`cbqs ${old}`);
  });

  it("gives each option its help, default and whether it is required, each option rule, and each exit code", () => {
    const section = (path: string) => reference.split(`## \`${path}\`\n`)[1]!.split("\n## ")[0]!;
    expect(section("cbqs t8n")).toContain("| `--input.alloc <file>` | pre-state: a cbqs-state-dump/v1 file (required) |");
    expect(section("cbqs t8n")).toContain("| `--output.result <file>` | result JSON; - is stdout (default: `-`) |");
    expect(section("cbqs replay")).toContain("- `--snapshot-interval` only with `--db`");
    expect(section("cbqs check broker")).toContain("- exactly one of `--node` and `--fixture`");
    expect(section("cbqs proof verify")).toMatch(/\| 0 \| the proof verifies \|\n\| 1 \| a well-formed proof that does not verify \|\n\| 2 \| /);
    // The core count of this machine is --help's, not the reference's: the file is the same everywhere.
    expect(section("cbqs replay")).toContain("| `--jobs <n>` | fixtures replayed in parallel on worker threads, reported in order (1 with --trace or --pipeline); the number of cores when not given |");
  });

  it("gen-cli-reference takes --help and refuses an unknown option (exit 2) before writing anything", () => {
    const script = (...args: string[]) => spawnSync(process.execPath, ["dist/scripts/gen-cli-reference.js", ...args], { encoding: "utf8" });
    expect(script("--help")).toMatchObject({ status: 0, stdout: `usage: gen-cli-reference (no options): writes ${CLI_REFERENCE_PATH}\n` });
    expect(script("--bogus")).toMatchObject({ status: 2, stderr: `unknown option --bogus\nusage: gen-cli-reference (no options): writes ${CLI_REFERENCE_PATH}\n` });
    expect(readFileSync(CLI_REFERENCE_PATH, "utf8")).toBe(reference);
  });
});
