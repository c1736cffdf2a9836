// The files a divergence leaves behind (docs/reference/fuzzer.md "Reading a report"): the shrunk chain
// as a cbqs-fixture/v1 (replayable with `cbqs replay`), the diverging block's t8n inputs, both
// t8n outputs, and report.json (seed, run, sizes, the first difference, the chain in words).
// Each file is written by the CLI's one output rule (src/output-file.ts): to a temporary name and
// renamed, so an interrupt leaves none half-written.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fixtureJsonText } from "../harness/fixture.js";
import { registryRecords } from "../harness/records.js";
import { replayFixture } from "../harness/replay.js";
import { dumpEntries } from "../../state/kv/dump.js";
import { fromHex } from "../bytes.js";
import { count } from "../format.js";
import { FuzzInternalError, type BuiltBlock } from "./build.js";
import type { BlockSummary, Finding } from "./fuzz.js";
import { inputTexts } from "../target/target.js";
import { writeOutputFile } from "../output-file.js";

export const REPORT_FORMAT = "cbqs-fuzz-report/v1";

export interface ReportMeta {
  /** How the command is driven: a per-call t8n (--t8n) or a cbqs-t8n-server/v1 server (--t8n-server). */
  mode: "t8n" | "t8n-server";
  command: string;
  blocks: number;
  stateRoot: boolean;
}

/** The t8n inputs of one block (alloc.json, txs.json, env.json); returns the paths written. */
export function writeInputs(dir: string, block: BuiltBlock, stderr = ""): string[] {
  mkdirSync(dir, { recursive: true });
  const t = inputTexts(block.inputs);
  const files: Array<[string, string]> = [
    ["alloc.json", t.alloc],
    ["txs.json", t.txs],
    ["env.json", t.env],
  ];
  if (stderr !== "") files.push(["theirs.stderr.txt", stderr]);
  return files.map(([name, text]) => {
    writeOutputFile(join(dir, name), text);
    return join(dir, name);
  });
}

/** The reproduce command line of a finding. */
export function reproduceLine(meta: ReportMeta, seed: number, run: number): string {
  const quoted = `'${meta.command.replace(/'/g, `'\\''`)}'`;
  return `cbqs fuzz --${meta.mode} ${quoted} --seed ${seed} --run ${run} --blocks ${meta.blocks}${meta.stateRoot ? "" : " --no-state-root"}`;
}

/** Writes the report directory; returns the paths written. */
export function writeReport(dir: string, finding: Finding, meta: ReportMeta): string[] {
  const d = finding.divergence;
  const fixture = {
    ...d.fixture,
    name: `fuzz-seed-${finding.seed}-run-${finding.run}`,
    description: `cbqs fuzz seed ${finding.seed} run ${finding.run}, shrunk to ${count(finding.shrunk.blocks, "block")}; the last block diverged: ${d.text}`,
  };
  // Like `cbqs fill`: the fixture must replay against this emulator before it is written.
  const check = replayFixture(fixture);
  if (check.mismatch !== null) throw new FuzzInternalError(`the shrunk fixture does not replay: block ${check.mismatch.height} ${check.mismatch.field}`);
  const paths = writeInputs(dir, d.block, d.theirs.stderr);
  const oursAlloc = dumpEntries(d.block.postState, { height: d.block.height, stateRoot: fromHex(d.ours["state_root"] as string), decodeSlot: registryRecords });
  const json = (v: unknown) => JSON.stringify(v, null, 2) + "\n";
  const files: Array<[string, string]> = [
    ["fixture.json", fixtureJsonText(fixture)],
    ["ours.result.json", json(d.ours)],
    ["ours.alloc.json", json(oursAlloc)],
    ["theirs.result.json", d.theirs.resultText],
    ["theirs.alloc.json", d.theirs.allocText],
    ["report.json", json(reportJson(finding, meta))],
  ];
  for (const [name, text] of files) {
    writeOutputFile(join(dir, name), text);
    paths.push(join(dir, name));
  }
  return paths;
}

function reportJson(f: Finding, meta: ReportMeta): unknown {
  const d = f.divergence;
  return {
    format: REPORT_FORMAT,
    seed: String(f.seed),
    run: String(f.run),
    blocks_per_chain: String(meta.blocks),
    ...(meta.mode === "t8n" ? { t8n: meta.command } : { t8n_server: meta.command }),
    compared_state_root: meta.stateRoot,
    divergence: { height: d.block.height.toString(), first_difference: d.text },
    original: { blocks: String(f.original.blocks), txs: String(f.original.txs) },
    shrunk: { blocks: String(f.shrunk.blocks), txs: String(f.shrunk.txs), candidates: String(f.candidates) },
    chain: d.summary.map((b) => ({ height: b.height.toString(), txs: b.txs.map((t, i) => ({ index: String(i), kind: t.kind, ours: t.outcome })) })),
    reproduce: reproduceLine(meta, f.seed, f.run),
  };
}

/** The shrunk chain in words, one line per block ("block 7: SettleStreamRent ok, CreateStream rejected NoOpRejected"). */
export function chainLines(summary: readonly BlockSummary[]): string[] {
  return summary.map((b) => `block ${b.height}: ${b.txs.length === 0 ? "(no transactions)" : b.txs.map((t) => `${t.kind} ${t.outcome}`).join(", ")}`);
}
