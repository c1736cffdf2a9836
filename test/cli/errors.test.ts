// The CLI error contract (src/cli/common.ts): exit 2 and exactly one terminal-safe line that
// names the problem — never a stack trace, never a silently cut message.
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Command } from "commander";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { oneLine } from "../../src/cli/common.js";
import { buildProgram } from "../../src/cli/program.js";
import { cbqs, unusableInput } from "./program.js";

const dir = mkdtempSync(join(tmpdir(), "cbqs-cli-"));
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/;

function expectOneErrorLine(stderr: string, ...fragments: (string | RegExp)[]): void {
  expect(stderr.endsWith("\n")).toBe(true);
  const line = stderr.slice(0, -1);
  expect(line).not.toMatch(CONTROL);
  expect(line.startsWith("cbqs: error: ")).toBe(true);
  for (const f of fragments) expect(line).toMatch(f);
}

describe("oneLine", () => {
  it("joins the lines of a multi-line message instead of dropping all but the first", () => {
    expect(oneLine("error: unknown command 'rn'\n(Did you mean run?)\n")).toBe("error: unknown command 'rn' (Did you mean run?)");
  });

  it("shows control characters (ESC sequences, NUL, DEL, C1) as \\xNN", () => {
    expect(oneLine("bad \u001b[31mred\u0000\u007f\u009b")).toBe("bad \\x1b[31mred\\x00\\x7f\\x9b");
  });

  it("shows a byte-order mark and the Unicode line separators as \\uNNNN", () => {
    expect(oneLine("token '\ufeff' a\u2028b\u2029")).toBe("token '\\ufeff' a\\u2028b\\u2029");
  });

  it("property: the result is one line without control characters, and printable single-line text is unchanged", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (s) => {
        const line = oneLine(s);
        expect(line).not.toMatch(CONTROL);
      }),
    );
    fc.assert(
      fc.property(fc.string({ unit: "grapheme" }), (s) => {
        fc.pre(!CONTROL.test(s) && s.trim() === s);
        expect(oneLine(s)).toBe(s);
      }),
    );
  });
});

describe("cbqs errors: exit 2 and one line", () => {
  it("commander's usage errors keep their hint and carry the cbqs prefix", async () => {
    const r = await cbqs("rn", "x.json");
    expect(r.exitCode).toBe(2);
    expect(r.out).toBe("");
    expectOneErrorLine(r.err, /unknown command 'rn'/, /Did you mean run\?/);
    const o = await cbqs("run", "x.json", "--jsn");
    expect(o.exitCode).toBe(2);
    expectOneErrorLine(o.err, /unknown option '--jsn'/, /Did you mean --json\?/);
  });

  it("cbqs with no command is exit 2 with one line, not the whole help on stderr", () => {
    const r = spawnSync(process.execPath, ["dist/src/cli.js"], { encoding: "utf8" });
    expect(r.status).toBe(2);
    expect(r.stdout).toBe("");
    expectOneErrorLine(r.stderr, /no command given/, /cbqs --help/);
  });

  it("a misspelled option is reported as unknown, not as the required option it was meant to be", async () => {
    expect(await cbqs("trace", "fixtures/corpus/create-quote.json", "--blok", "5")).toEqual(unusableInput(/unknown option '--blok' \(Did you mean --block\?\)/));
    expect(await cbqs("t8n", "--input-alloc", "a.json")).toEqual(unusableInput(/unknown option '--input-alloc' \(Did you mean --input\.alloc\?\)/));
    expect(await cbqs("prove-tx", "f.json", "--block", "1", "--idx", "1")).toEqual(unusableInput(/unknown option '--idx' \(Did you mean --index\?\)/));
    // Every command with a required option: the unknown one wins over the required ones missing.
    const withRequired: string[][] = [];
    const walk = (command: Command, path: string[]): void => {
      if (command.options.some((o) => o.mandatory)) withRequired.push(path);
      for (const sub of command.commands) walk(sub, [...path, sub.name()]);
    };
    walk(await buildProgram("test"), []);
    expect(withRequired.length).toBeGreaterThan(10);
    for (const path of withRequired) {
      expect(await cbqs(...path, "--no-such-option"), path.join(" ")).toEqual(unusableInput(/unknown option '--no-such-option'/));
    }
    // Without a typo, a missing required option is still named.
    expect(await cbqs("trace", "fixtures/corpus/create-quote.json")).toEqual(unusableInput(/required option '--block <n>' not specified/));
  });

  it("missing required options and extra positional arguments are exit 2", async () => {
    const missing = await cbqs("verify-sig", "--pub", "0x00", "--msg", "0x");
    expect(missing.exitCode).toBe(2);
    expectOneErrorLine(missing.err, /--sig/);
    const extra = await cbqs("decode", "SetProviderStatusArgsV1", "0x01", "extra");
    expect(extra.exitCode).toBe(2);
    expectOneErrorLine(extra.err, /too many arguments/);
  });

  it("a UTF-8 byte-order mark before the JSON is named visibly", async () => {
    const file = join(dir, "bom.json");
    writeFileSync(file, "\ufeff{}");
    const r = await cbqs("run", file);
    expect(r.exitCode).toBe(2);
    expectOneErrorLine(r.err, /not valid JSON/, /\\ufeff/);
  });

  it("binary garbage echoed back from a file never reaches the terminal raw", async () => {
    const file = join(dir, "garbage.json");
    writeFileSync(file, Buffer.from([0x1b, 0x5b, 0x32, 0x4a, 0x0a, 0x00, 0xff, 0x07]));
    const r = await cbqs("run", file);
    expect(r.exitCode).toBe(2);
    expectOneErrorLine(r.err, file, /not valid JSON/);
  });

  it("a failed scenario expectation is exit 1 with one line", async () => {
    const file = join(dir, "expect.json");
    writeFileSync(
      file,
      JSON.stringify({
        format: "cbqs-scenario/v1",
        name: "expect-newline",
        description: "an expected value with a newline and an ESC in it",
        genesis: {
          chain_id: "7",
          timestamp: "2026-01-01T00:00:00Z",
          block_time_seconds: "1",
          governance: "0x00000000000000000000000000000000000000aa",
          params: {},
          accounts: { "0x1111111111111111111111111111111111111111": { balance: "5" } },
        },
        blocks: [
          {
            height: "1",
            txs: [],
            expect_state: { accounts: { "0x1111111111111111111111111111111111111111": { balance: "6\n\u001b[2J" } } },
          },
        ],
      }),
    );
    const r = await cbqs("run", file);
    expect(r.exitCode).toBe(1);
    const lines = r.err.split("\n").filter((l) => l !== "");
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toMatch(CONTROL);
    expect(lines[0]).toMatch(/expectation failed at \$\.blocks\[0\]\.expect_state\.accounts/);
  });
});

describe("cbqs derive: u64 options (scenario-format §1: decimal digits, any length)", () => {
  const base = ["derive", "stream-id", "--chain-id", "7", "--chain-instance", "0x" + "c1".repeat(32), "--owner", "0x" + "11".repeat(20)];

  it("§4.1 leading zeros are the same integer; 2^64 - 1 is accepted", async () => {
    const plain = await cbqs(...base, "--nonce", "7");
    const padded = await cbqs(...base, "--nonce", "0".repeat(30) + "7");
    expect(plain.exitCode).toBe(0);
    expect(padded.exitCode).toBe(0);
    expect(padded.out).toBe(plain.out);
    expect((await cbqs(...base, "--nonce", "18446744073709551615")).exitCode).toBe(0);
  });

  it("§4.1 2^64, 2^128, negative, exponent, padded and hex nonces are exit 2 naming --nonce", async () => {
    for (const nonce of ["18446744073709551616", "340282366920938463463374607431768211456", "-1", "1e3", " 1", "0x10", ""]) {
      const r = await cbqs(...base, "--nonce", nonce);
      expect(r.exitCode, nonce).toBe(2);
      expectOneErrorLine(r.err, /--nonce/);
    }
    const big = await cbqs(...base, "--nonce", "18446744073709551616");
    expect(big.err).toMatch(/exceeds the u64 maximum 18446744073709551615/);
  });
});

describe("output files and arguments of the other commands", () => {
  it("gas-vectors schedule -o into a directory or a missing folder is exit 2 'cannot write'", async () => {
    for (const target of [dir, join(dir, "no", "such", "folder.md")]) {
      const r = await cbqs("gas-vectors", "schedule", "-o", target);
      expect(r.exitCode).toBe(2);
      expectOneErrorLine(r.err, `cannot write ${target}`);
    }
  });

  it("conformance trace names the accepted seed range", async () => {
    const r = await cbqs("conformance", "trace", "any-fixed", "99999999999");
    expect(r.exitCode).toBe(2);
    expectOneErrorLine(r.err, /seed must be a decimal integer from 0 to 999999999/);
  });
});
