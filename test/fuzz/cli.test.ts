// `cbqs fuzz` end to end through a real t8n command (a child per block): our own t8n runs clean;
// a command that does not follow the convention is unusable input (exit 2, one line); a command
// that differs is found, shrunk and reported (exit 1); SIGINT stops it cleanly.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { cbqs, unusableInput } from "../cli/program.js";
import { requireFreshDist } from "./dist.js";
import { OURS, zeroRootCommand } from "./commands.js";

let scratch: string;
let savedTmp: string | undefined;

beforeAll(requireFreshDist);
beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), "cbqs-fuzz-cli-"));
  // The fuzzer's own temporary directory goes here, so the tests can see it removed.
  savedTmp = process.env["TMPDIR"];
  process.env["TMPDIR"] = mkdtempSync(join(scratch, "tmp-"));
});
afterEach(() => {
  const leftovers = readdirSync(process.env["TMPDIR"]!);
  if (savedTmp === undefined) delete process.env["TMPDIR"];
  else process.env["TMPDIR"] = savedTmp;
  rmSync(scratch, { recursive: true, force: true });
  expect(leftovers, "temporary files left behind").toEqual([]);
});

describe("cbqs fuzz", () => {
  it("finds no divergence between our t8n and itself as a command; --quiet prints only the summary", async () => {
    const r = await cbqs("fuzz", "--jobs", "1", "--t8n", OURS, "--seed", "5", "--runs", "2", "--blocks", "2", "--quiet");
    expect(r).toEqual({ exitCode: 0, out: expect.stringMatching(/^fuzz: 2 runs \(seed 5\), 4 blocks, [\d,]+ txs in [\d.]+ s \([\d.,]+ runs\/s, [\d.,]+ blocks\/s, [\d.,]+ tx\/s\): [\d,]+ states? reached, no divergence\n$/), err: "" });
  });

  it("runs the wrapper script of docs/reference/fuzzer.md §2 as documented", async () => {
    const docs = readFileSync("docs/reference/fuzzer.md", "utf8");
    const script = /```sh\n(#!\/bin\/sh\n# my-node-t8n\.sh[^`]*)```/.exec(docs)![1]!;
    const wrapper = join(scratch, "my-node-t8n.sh");
    writeFileSync(wrapper, script, { mode: 0o755 });
    const r = await cbqs("fuzz", "--jobs", "1", "--t8n", wrapper, "--seed", "3", "--runs", "1", "--blocks", "2", "--quiet");
    expect(r).toEqual({ exitCode: 0, out: expect.stringMatching(/ states? reached, no divergence\n$/), err: "" });
  });

  it("refuses unusable options with one line", async () => {
    expect(await cbqs("fuzz", "--jobs", "1", "--t8n", OURS, "--seed", "-1")).toEqual(unusableInput(/--seed must be an integer from 0 to 4294967295/));
    expect(await cbqs("fuzz", "--jobs", "1", "--t8n", OURS, "--blocks", "0")).toEqual(unusableInput(/--blocks must be an integer from 1 to 1000/));
    expect(await cbqs("fuzz", "--jobs", "1", "--t8n", OURS, "--run", "3", "--runs", "5")).toEqual(unusableInput(/give one of --run \(one chain\), --runs \(many\) or --duration \(for a time\), not --run and --runs/));
    expect(await cbqs("fuzz", "--jobs", "1", "--t8n", " ")).toEqual(unusableInput(/--t8n must name a command/));
  });

  it("a command that is not found, fails without output, hangs or writes no t8n result is unusable input (exit 2), with the block's inputs kept", async () => {
    const out = join(scratch, "report");
    const run = (command: string) => cbqs("fuzz", "--jobs", "1", "--t8n", command, "--seed", "1", "--runs", "1", "--blocks", "2", "--quiet", "--out", out);
    // Run 0 of seed 1 starts with a directed scenario (src/fuzz/scenarios.ts) whose first block is at height 4.
    expect(await run("cbqs-no-such-command-anywhere")).toEqual(unusableInput(/--t8n command failed on block 4 of run 0 \(seed 1\): command not found \(exit 127\): .*not found/));
    expect(readdirSync(out).sort()).toEqual(["alloc.json", "env.json", "theirs.stderr.txt", "txs.json"]);
    expect(await run("false")).toEqual(unusableInput(/exit 1 without writing --output\.result/));
    expect(await cbqs("fuzz", "--jobs", "1", "--t8n", "sh -c 'sleep 30' sh", "--seed", "1", "--runs", "1", "--quiet", "--timeout", "1", "--out", out)).toEqual(
      unusableInput(/--t8n command failed on block 4 of run 0 \(seed 1\): did not finish within 1 s/),
    );
    expect(await run(`sh -c 'echo garbage > "$8"; echo "{}" > "\${10}"' sh`)).toEqual(unusableInput(/--output\.result is not strict JSON/));
    expect(await run(`sh -c 'node dist/src/cli.js t8n "$@" && echo "{}" > "\${10}"' sh`)).toEqual(
      unusableInput(/--output\.alloc is not a cbqs-state-dump\/v1 document: missing \(expected "cbqs-state-dump\/v1"\)/),
    );
  });

  it("finds, shrinks and reports a command whose first receipt's cycles are one too many", async () => {
    const tamper = join(scratch, "tamper.cjs");
    writeFileSync(
      tamper,
      `const fs = require("fs"); const f = process.argv[2]; const r = JSON.parse(fs.readFileSync(f, "utf8"));
       if (r.receipts.length > 0) r.receipts[0].cycles = String(BigInt(r.receipts[0].cycles) + 1n);
       fs.writeFileSync(f, JSON.stringify(r));`,
    );
    const out = join(scratch, "report");
    const command = `f() { node dist/src/cli.js t8n "$@" && node ${tamper} "$8"; }; f`;
    const r = await cbqs("fuzz", "--jobs", "1", "--t8n", command, "--seed", "9", "--runs", "5", "--blocks", "1", "--quiet", "--out", out);
    expect(r.exitCode, r.err).toBe(1);
    const lines = r.out.trimEnd().split("\n");
    const m = /^DIVERGENCE seed 9 run 0: block 1 tx 0 (\S+): t8n result: receipts\[0\]\.cycles expected "(\d+)" got "(\d+)"$/.exec(lines[0]!);
    expect(m, lines[0]).not.toBeNull();
    expect(BigInt(m![3]!)).toBe(BigInt(m![2]!) + 1n);
    expect(lines[1]).toMatch(/^ {2}shrunk from 1 block, (1 tx|\d+ txs) to 1 block, 1 tx \((1 candidate chain|\d+ candidate chains)\)$/);
    expect(lines[2]).toMatch(new RegExp(`^ {2}block 1: ${m![1]} (ok|rejected [A-Za-z]+)$`));
    expect(lines.at(-2)).toBe(`  reproduce: cbqs fuzz --t8n '${command}' --seed 9 --run 0 --blocks 1`);
    expect(lines.at(-1)).toMatch(/^fuzz: 1 run \(seed 9\), 1 block, (1 tx|\d+ txs) in [\d.]+ s \([\d.,]+ runs\/s, [\d.,]+ blocks\/s, [\d.,]+ tx\/s\): [\d,]+ states? reached, divergence in run 0$/);
    expect(readdirSync(out).sort()).toEqual(["alloc.json", "env.json", "fixture.json", "ours.alloc.json", "ours.result.json", "report.json", "theirs.alloc.json", "theirs.result.json", "txs.json"]);
    const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8"));
    expect(report).toMatchObject({ format: "cbqs-fuzz-report/v1", seed: "9", run: "0", shrunk: { blocks: "1", txs: "1" }, divergence: { height: "1" } });
    expect(report.divergence.first_difference).toBe(lines[0]!.replace("DIVERGENCE seed 9 run 0: ", ""));
    // The shrunk chain replays against this emulator; the t8n inputs reproduce our result with `cbqs t8n`.
    expect((await cbqs("replay", join(out, "fixture.json"), "--quiet")).exitCode).toBe(0);
    const again = await cbqs("t8n", "--input.alloc", join(out, "alloc.json"), "--input.txs", join(out, "txs.json"), "--input.env", join(out, "env.json"));
    expect(JSON.parse(again.out)).toEqual(JSON.parse(readFileSync(join(out, "ours.result.json"), "utf8")));
    // `cbqs diff` says the same thing about the two results.
    const diff = await cbqs("diff", join(out, "ours.result.json"), join(out, "theirs.result.json"));
    expect(diff.out).toMatch(/receipts\[0\]\.cycles expected/);
  });

  it("--no-state-root leaves state_root out of the comparison (a t8n that does not commit its alloc as one batch)", async () => {
    const command = zeroRootCommand(scratch);
    const r = await cbqs("fuzz", "--jobs", "1", "--t8n", command, "--seed", "2", "--runs", "1", "--blocks", "1", "--quiet", "--no-state-root");
    expect(r).toEqual({ exitCode: 0, out: expect.stringMatching(/ states? reached, no divergence\n$/), err: "" });
  });

  it("stops on SIGINT, killing the running command: exit 130, summary printed, the shared stopped line, temporary directory removed", async () => {
    const child = spawn(process.execPath, ["dist/src/cli.js", "fuzz", "--t8n", OURS, "--seed", "1", "--runs", "1000"], { env: { ...process.env }, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (c) => (out += String(c)));
    child.stderr.on("data", (c) => (err += String(c)));
    const tmp = process.env["TMPDIR"]!;
    // Interrupt while a t8n child is running (its temporary directory exists).
    for (let i = 0; i < 600 && !(readdirSync(tmp).length > 0 && existsSync(join(tmp, readdirSync(tmp)[0]!, "alloc.json"))); i++) await new Promise((r) => setTimeout(r, 50));
    child.kill("SIGINT");
    const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
    expect(code, err).toBe(130);
    expect(out).toMatch(/^fuzz: (1 run|[\d,]+ runs) \(seed 1\), [\d,]+ blocks, [\d,]+ txs in [\d.]+ s \([\d.,]+ runs\/s, [\d.,]+ blocks\/s, [\d.,]+ tx\/s\): [\d,]+ states? reached, no divergence so far\n$/);
    expect(err).toMatch(/^fuzz: seed 1, runs 0…999, 8 blocks per chain, \d+ jobs?, t8n: node dist\/src\/cli\.js t8n\n/);
    // The line every stopped command ends with (docs/reference/cli-conventions.md "Signals", src/steps.ts).
    expect(err).toMatch(/\ncbqs: stopped by SIGINT; after (1 run|[\d,]+ runs): no divergence so far, nothing written\n$/);
  });
});
