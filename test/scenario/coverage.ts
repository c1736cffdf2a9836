// The scenario suite's coverage matrix (docs/reference/scenarios.md "Coverage"): for every transaction of
// every fixtures/scenarios/*.json, the (instruction, outcome) pair its `expect` asserts. The
// outcome is the error name of a rejection, or "ok" followed by the exact event topics of an
// acceptance (so the success branches — status edges, expiry, close — are cells of their own).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fromHex } from "../../src/bytes.js";
import { decode } from "../../src/codec/core.js";
import * as S from "../../src/codec/schema.js";

export const SCENARIO_DIR = join(import.meta.dirname, "../../fixtures/scenarios");
export const SCENARIOS_DOC = join(import.meta.dirname, "../../docs/reference/scenarios.md");

const SYS_CBQS = 218;

interface Expect {
  status?: string;
  error?: string;
  events?: string[];
}

interface Tx {
  cbqs?: Record<string, unknown>;
  gov?: Record<string, unknown>;
  transfer?: unknown;
  raw?: { opcode: string | number; payload: string };
  expect?: Expect;
}

export interface Cell {
  instruction: string;
  outcome: string;
}

/**
 * The row a transaction belongs to: the CBQS instruction (a raw payload counts as the
 * instruction it decodes to), "Governance.<Action>", "Transfer", or "Dispatcher" for a raw
 * transaction rejected before any instruction exists (wrong opcode, undecodable payload).
 */
export function instructionOf(tx: Tx): string {
  if (tx.cbqs !== undefined) return Object.keys(tx.cbqs)[0]!;
  if (tx.gov !== undefined) return `Governance.${Object.keys(tx.gov)[0]!}`;
  if (tx.transfer !== undefined) return "Transfer";
  if (tx.raw !== undefined) {
    if (Number(tx.raw.opcode) !== SYS_CBQS) return "Dispatcher";
    try {
      return decode(S.CbqsInstructionV1, fromHex(tx.raw.payload)).type;
    } catch {
      return "Dispatcher";
    }
  }
  throw new Error("transaction of no known kind");
}

/** A transaction without a full expectation (status, events, and error when rejected) is a problem. */
export function outcomeOf(tx: Tx): string | null {
  const e = tx.expect;
  if (e === undefined || e.events === undefined) return null;
  if (e.status === "ok") return e.events.length === 0 ? "ok" : `ok: ${e.events.map((t) => t.replace(/^cbqs\./, "")).join(", ")}`;
  if (e.status === "rejected" && e.error !== undefined && e.events.length === 0) return e.error;
  return null;
}

export interface Coverage {
  /** "instruction\u0000outcome" → the scenario files (sorted) asserting it. */
  cells: Map<string, Set<string>>;
  /** "file: block H tx i" of every transaction lacking a full expectation. */
  incomplete: string[];
}

export function scenarioFiles(): string[] {
  return readdirSync(SCENARIO_DIR).filter((f) => f.endsWith(".json")).sort();
}

export function computeCoverage(): Coverage {
  const cells = new Map<string, Set<string>>();
  const incomplete: string[] = [];
  for (const file of scenarioFiles()) {
    const doc = JSON.parse(readFileSync(join(SCENARIO_DIR, file), "utf8")) as { blocks: Array<{ height: string | number; txs?: Tx[] }> };
    for (const block of doc.blocks) {
      (block.txs ?? []).forEach((tx, i) => {
        const outcome = outcomeOf(tx);
        if (outcome === null) {
          incomplete.push(`${file}: block ${block.height} tx ${i}`);
          return;
        }
        const key = `${instructionOf(tx)}\u0000${outcome}`;
        if (!cells.has(key)) cells.set(key, new Set());
        cells.get(key)!.add(file);
      });
    }
  }
  return { cells, incomplete };
}

const ROW_ORDER = [
  "RegisterProvider",
  "UpdateProvider",
  "SetProviderStatus",
  "CreateStream",
  "UpdateStream",
  "TopUpStream",
  "SettleStreamRent",
  "CloseStream",
  "ActivateKeyGeneration",
  "Governance.SetParam",
  "Governance.SetParams",
  "Governance.Pause",
  "Governance.ExtendPause",
  "Governance.Unpause",
  "Transfer",
  "Dispatcher",
];

const rank = (instruction: string): number => {
  const i = ROW_ORDER.indexOf(instruction);
  return i === -1 ? ROW_ORDER.length : i;
};

/** The markdown table docs/reference/scenarios.md carries between the coverage markers. */
export function coverageTable(coverage: Coverage): string {
  const rows = [...coverage.cells.entries()].map(([key, files]) => {
    const [instruction, outcome] = key.split("\u0000") as [string, string];
    return { instruction, outcome, files: [...files].sort() };
  });
  rows.sort((a, b) => rank(a.instruction) - rank(b.instruction) || a.instruction.localeCompare(b.instruction) || a.outcome.localeCompare(b.outcome));
  const lines = ["| Instruction | Outcome | Scenarios |", "| --- | --- | --- |"];
  for (const r of rows) lines.push(`| ${r.instruction} | ${r.outcome} | ${r.files.map((f) => f.replace(/\.json$/, "")).join(", ")} |`);
  return lines.join("\n");
}

export const TABLE_BEGIN = "<!-- coverage-table:begin (generated from fixtures/scenarios by test/scenario/coverage.test.ts) -->";
export const TABLE_END = "<!-- coverage-table:end -->";

/** The table currently documented in docs/reference/scenarios.md, or null when the markers are missing. */
export function documentedTable(): string | null {
  const text = readFileSync(SCENARIOS_DOC, "utf8");
  const begin = text.indexOf(TABLE_BEGIN);
  const end = text.indexOf(TABLE_END);
  if (begin === -1 || end === -1 || end < begin) return null;
  return text.slice(begin + TABLE_BEGIN.length, end).trim();
}
