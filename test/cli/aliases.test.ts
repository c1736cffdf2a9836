// The top-level names of earlier versions (src/cli/program.ts ALIASES) keep working until the next
// major version: each is its grouped command under another name, hidden from --help, with the same
// arguments, options and subcommands, and every invocation gives what the grouped command gives —
// stdout, stderr, exit code and the files written.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Command } from "commander";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { declaredOf } from "../../src/cli/define.js";
import { ALIASES, buildProgram, nodeAt, type TreeNode } from "../../src/cli/program.js";
import { cbqs } from "./program.js";

const dir = mkdtempSync(join(tmpdir(), "cbqs-aliases-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const at = (name: string) => join(dir, name);

const FIXTURE = "fixtures/corpus/create-quote.json";
const KEY = "0x011111111111111111111111111111111111111111000000000000000000000000000000000000000000000000000000000000000000";
const fixture = JSON.parse(readFileSync(FIXTURE, "utf8")) as { blocks: Array<{ height: string; state_root: string; tx_root: string; receipt_root: string }> };
const block5 = fixture.blocks.find((b) => b.height === "5")!;
const CHAIN_INSTANCE = "0x" + "c1".repeat(32);

/** The same arguments with the earlier name replaced by the command's path. */
function grouped(args: readonly string[]): string[] {
  const path = ALIASES.find(([old]) => old === args[0])![1];
  return [...path.split(" "), ...args.slice(1)];
}

/**
 * Invocations under an earlier name, each with the file it writes (if any): between them they use
 * every earlier name and every subcommand of an earlier group, succeed, reject and refuse.
 */
const CASES: ReadonlyArray<{ args: string[]; writes?: string }> = [
  { args: ["index", at("corpus")], writes: at("corpus/index.json") },
  { args: ["index", at("no-such-dir")] },
  { args: ["export", "--db", at("store"), "-o", at("exported.json")], writes: at("exported.json") },
  { args: ["export", "--db", at("store"), "--post-state", "sometimes"] },
  { args: ["genesis", FIXTURE] },
  { args: ["prove-state", FIXTURE, "--height", "5", "--key", KEY, "-o", at("proof.json")], writes: at("proof.json") },
  { args: ["prove-state", FIXTURE, "--db", at("store"), "--key", KEY] },
  { args: ["verify-proof", at("state-proof.json"), "--root", block5.state_root] },
  { args: ["verify-proof", at("state-proof.json"), "--root", block5.tx_root, "--json"] },
  { args: ["verify-proof", at("state-proof.json")] },
  { args: ["prove-tx", FIXTURE, "--block", "5", "--index", "1"] },
  { args: ["prove-tx", FIXTURE, "--block", "5", "--index", "99"] },
  { args: ["prove-receipt", FIXTURE, "--block", "5", "--index", "3", "-o", at("receipt-proof.json")], writes: at("receipt-proof.json") },
  { args: ["verify-bmt-proof", at("bmt-proof.json"), "--root", block5.receipt_root, "--json"] },
  { args: ["verify-bmt-proof", at("bmt-proof.json"), "--root", block5.tx_root] },
  { args: ["decode", "CbqsInstructionV1", "0x01085151515151515151515151515151515151515151515151515151515151515151"] },
  { args: ["decode", "CbqsInstructionV1", "0x01"] },
  { args: ["encode", "CbqsSigningContextV1", `{"version":"1","chain_id":"7","chain_instance_id":"${CHAIN_INSTANCE}"}`, "--json"] },
  { args: ["types", "--json"] },
  { args: ["types", "--bogus"] },
  { args: ["derive", "stream-id", "--chain-id", "7", "--chain-instance", CHAIN_INSTANCE, "--owner", "0x" + "11".repeat(20), "--nonce", "1"] },
  { args: ["derive", "key-stream-id", "--stream-id", "0x" + "22".repeat(32), "--json"] },
  { args: ["derive", "lane-id", "--stream-id", "0x" + "22".repeat(32), "--lane-nonce", "0x" + "33".repeat(32)] },
  { args: ["derive", "chain-instance-id", "--genesis-file", at("genesis.json")] },
  { args: ["derive", "signing-key-id", "--ed25519", "0x" + "44".repeat(32)] },
  { args: ["derive", "schedule-digest"] },
  { args: ["derive", "stream-id", "--chain-id", "7"] },
  {
    args: [
      "verify-sig",
      "--pub",
      "0xd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
      "--msg",
      "0x",
      "--sig",
      "0xe5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b",
    ],
  },
  { args: ["verify-sig", "--pub", "0x00", "--msg", "0x", "--sig", "0x00"] },
  { args: ["admit-endpoint", "--transport", "Https", "https://provider.example", "--json"] },
  { args: ["admit-endpoint", "--transport", "Https", "https://2130706433/stream"] },
  { args: ["verify-broker", "fixtures/broker/kit-fast.jsonl", "--fixture", "fixtures/broker/kit-chain.json"] },
  { args: ["verify-broker", "fixtures/broker/kit-fast.jsonl"] },
  { args: ["gas-vectors", "verify", "--json"] },
  { args: ["gas-vectors", "generate", "-o", at("vectors.json")], writes: at("vectors.json") },
  { args: ["gas-vectors", "schedule"] },
  { args: ["gas-vectors", "plans", "-o", at("plans.md")], writes: at("plans.md") },
  { args: ["conformance", "commonware", "--json"] },
  { args: ["conformance", "trace", "any-fixed", "3"] },
  { args: ["conformance", "trace", "sideways", "3"] },
];

beforeAll(async () => {
  mkdirSync(at("corpus"));
  copyFileSync(FIXTURE, at("corpus/create-quote.json"));
  expect((await cbqs("replay", FIXTURE, "--db", at("store"), "--quiet")).exitCode).toBe(0);
  expect((await cbqs("proof", "state", FIXTURE, "--height", "5", "--key", KEY, "-o", at("state-proof.json"))).exitCode).toBe(0);
  expect((await cbqs("proof", "receipt", FIXTURE, "--block", "5", "--index", "3", "-o", at("bmt-proof.json"))).exitCode).toBe(0);
  expect((await cbqs("fixture", "genesis", FIXTURE, "-o", at("genesis.json"))).exitCode).toBe(0);
});

/** A command as --help and the reference describe it: its help, arguments, options, rules, exit codes and subcommands. */
function shape(command: Command): unknown {
  return {
    description: command.description(),
    arguments: command.registeredArguments.map((a) => [a.name(), a.description, a.required, a.variadic]),
    options: command.options.map((o) => [o.flags, o.description, o.defaultValue, o.mandatory, o.hidden]),
    declared: declaredOf(command),
    commands: command.commands.map((c) => [c.name(), shape(c)]),
  };
}

function commandAt(program: Command, path: string): Command {
  return path.split(" ").reduce((c, name) => c.commands.find((s) => s.name() === name)!, program);
}

describe("earlier command names", () => {
  it("each is its grouped command, hidden: the same arguments, options, rules, exit codes and subcommands, and the same --help but for the usage line", async () => {
    const program = await buildProgram("test");
    const rootHelp = (await cbqs("--help")).out;
    for (const [old, path] of ALIASES) {
      const alias = commandAt(program, old);
      expect([old, (alias as unknown as { _hidden: boolean })._hidden]).toEqual([old, true]);
      expect(rootHelp, old).not.toMatch(new RegExp(`^  ${old} `, "m"));
      expect([old, shape(alias)]).toEqual([old, shape(commandAt(program, path))]);
      const help = await cbqs(old, "--help");
      expect(help.out.replace(`Usage: cbqs ${old} `, `Usage: cbqs ${path} `), old).toBe((await cbqs(...path.split(" "), "--help")).out);
      expect((await cbqs("help", old)).out, `help ${old}`).toBe(help.out);
    }
  });

  it("the invocations below use every earlier name and every subcommand of an earlier group (test precondition)", () => {
    const leaves = (node: TreeNode, path: string): string[] => ("area" in node ? [path] : node.children.flatMap((c) => leaves(c, `${path} ${c.name}`)));
    for (const [old, path] of ALIASES) {
      for (const leaf of leaves(nodeAt(path)!, old)) expect(CASES.some((c) => c.args.slice(0, leaf.split(" ").length).join(" ") === leaf), leaf).toBe(true);
    }
  });

  for (const { args, writes } of CASES) {
    it(`behaves as its grouped command: ${args.join(" ").slice(0, 100)}`, async () => {
      const run = async (argv: string[]) => {
        if (writes !== undefined) rmSync(writes, { force: true });
        const r = await cbqs(...argv);
        return { ...r, written: writes !== undefined && existsSync(writes) ? readFileSync(writes, "utf8") : null };
      };
      const old = await run(args);
      const now = await run(grouped(args));
      expect(old).toEqual(now);
      if (writes !== undefined) expect(old.written, writes).not.toBeNull();
    });
  }
});
