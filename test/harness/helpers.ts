// Shared by the harness tests: the bundled corpus, tampering helpers and an in-process CLI.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Command } from "commander";
import { vi } from "vitest";
import { defineAll } from "../../src/cli/define.js";
import { commands as fill } from "../../src/cli/fill.js";
import { commands as replay } from "../../src/cli/replay.js";
import { commands as t8n } from "../../src/cli/t8n.js";
import { commands as trace } from "../../src/cli/trace.js";
import { commands as diff } from "../../src/cli/diff.js";
import type { Fixture } from "../../src/harness/fixture.js";
import type { T8nEnv } from "../../src/harness/t8n.js";

export const CORPUS = "fixtures/corpus";
export const SCENARIOS = "fixtures/scenarios";

/** The corpus fixtures (index.json beside them is the corpus index, not a fixture). */
export const corpusFiles = (): string[] =>
  readdirSync(CORPUS)
    .filter((f) => f.endsWith(".json") && f !== "index.json")
    .sort()
    .map((f) => join(CORPUS, f));

export type Doc = {
  genesis: Record<string, string>;
  blocks: Array<{
    height: string;
    transactions: string[];
    receipts: Array<{ status: string; error: { code: string; name: string } | null; events: Array<{ topic: string; payload: string }>; cycles: string; cells: string; tx_hash: string }>;
    [k: string]: unknown;
  }>;
  [k: string]: unknown;
};

export const readDoc = (file: string): Doc => JSON.parse(readFileSync(file, "utf8")) as Doc;

/** Flips the last hex digit of a 0x string, keeping its length. */
export const flipHex = (h: string): string => h.slice(0, -1) + (h.endsWith("0") ? "1" : "0");

export interface CliRun {
  out: string;
  err: string;
  exitCode: number;
  /** The message of a thrown error (src/cli.ts prints it as one line, exit 2). */
  thrown: string | null;
}

/** Runs a harness command in-process, capturing stdout/stderr and the exit code. */
export async function cli(args: string[]): Promise<CliRun> {
  const program = new Command().exitOverride();
  for (const area of [fill, replay, t8n, trace, diff]) defineAll(program, area);
  let out = "";
  let err = "";
  const o = vi.spyOn(process.stdout, "write").mockImplementation((c) => ((out += String(c)), true));
  const e = vi.spyOn(process.stderr, "write").mockImplementation((c) => ((err += String(c)), true));
  process.exitCode = 0;
  let thrown: string | null = null;
  try {
    await program.parseAsync(["node", "cbqs", ...args]);
  } catch (x) {
    thrown = (x as Error).message;
  } finally {
    o.mockRestore();
    e.mockRestore();
  }
  const exitCode = thrown === null ? Number(process.exitCode ?? 0) : 2;
  process.exitCode = 0;
  return { out, err, exitCode, thrown };
}

/** The t8n env of a fixture's block i, as a chain implementer would build it from the fixture. */
export function envOf(f: Fixture, i: number): T8nEnv {
  const b = f.blocks[i]!;
  return {
    height: b.height,
    timestamp: b.timestamp,
    chain_id: f.genesis.config.chain_id,
    chain_instance_id: f.genesis.chain_instance_id,
    governance: f.genesis.config.governance,
    cycle_price: f.genesis.config.cycle_price,
    cell_price: f.genesis.config.cell_price,
    parent_hash: i === 0 ? null : f.blocks[i - 1]!.block_hash,
  };
}
