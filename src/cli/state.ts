// `cbqs state dump <file> [--height N]` and `cbqs state diff <a.json> <b.json>` (docs/state.md §5).
// A dump's state comes from a dump or alloc file, from replaying a fixture (or a scenario, filled
// to one first) from genesis up to a height, or from a store (--db, its head).
// `cbqs verify-bmt-proof <proof.json> --root <hex>`: a CIP-4 §5.4 tx/receipt inclusion proof
// (docs/state.md §4.1) checked against a trusted tx_root or receipt_root.
import { writeFileSync } from "node:fs";
import type { Command } from "commander";
import { fromHex } from "../bytes.js";
import { GenesisError } from "../engine/errors.js";
import { FillError, fillScenario } from "../harness/fill.js";
import { readBytes } from "../harness/files.js";
import { FIXTURE_FORMAT, FixtureError, fixtureText, loadFixture, type Fixture } from "../harness/fixture.js";
import { registryRecords } from "../harness/records.js";
import { newStore, replayFixture, ReplayInputError } from "../harness/replay.js";
import { ScenarioError } from "../scenario/json.js";
import { parseScenario, SCENARIO_FORMAT } from "../scenario/parse.js";
import { diffDumps, diffIsEmpty, DUMP_FORMAT, dumpEntries, dumpState, loadDump, type DumpEntry, type StateDump } from "../../state/dump.js";
import { parseInclusionProof, verifyInclusionProof } from "../../state/roots.js";
import { EXIT_OK, EXIT_REJECT, jsonReplacer, oneLine, readTextFile, report, UsageError } from "./common.js";
import { mismatchLines } from "./harness.js";
import { openExistingStore } from "./store.js";

/** Reads `path` as JSON and hands it to `load`; any failure is unusable input (exit 2). */
function readJsonFile<T>(path: string, load: (json: unknown) => T): T {
  const text = readTextFile(path);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UsageError(`${path}: not valid JSON`);
  }
  try {
    return load(json);
  } catch (err) {
    throw new UsageError(`${path}: ${(err as Error).message}`);
  }
}

const readDumpFile = (path: string) => readJsonFile(path, loadDump);

const show = (e: DumpEntry) => JSON.stringify(e.decoded?.value ?? e.value);

/** `--height`: a decimal u64. */
function parseHeight(text: string): bigint {
  if (!/^[0-9]+$/.test(text)) throw new UsageError(`--height must be a decimal integer (got ${text})`);
  const height = BigInt(text);
  if (height > 0xffff_ffff_ffff_ffffn) throw new UsageError(`--height exceeds u64 (got ${text})`);
  return height;
}

/**
 * The JSON document of a dump, fixture or scenario file; `.json.gz` is gunzipped. The harness's
 * fixture reader does the bounded read and the gunzip.
 */
export function readDocument(file: string): unknown {
  let text: string;
  try {
    text = fixtureText(readBytes(file), file.endsWith(".gz"));
  } catch (err) {
    if (err instanceof FixtureError) throw new UsageError(`${file}: ${err.message}`);
    throw err; // HarnessInputError: already one line naming the file (exit 2)
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${file}: not valid JSON`);
  }
}

/** A scenario as a fixture (the same pipeline as `cbqs fill`), so both replay the same way. */
function scenarioFixture(file: string, doc: unknown): Fixture {
  try {
    return fillScenario(parseScenario(doc), "", "none");
  } catch (err) {
    if (err instanceof ScenarioError) throw new UsageError(`${file}: ${err.message}`);
    if (err instanceof GenesisError) throw new UsageError(`${file}: invalid genesis: ${err.message}`);
    throw err; // FillError: handled by the caller (exit 1)
  }
}

/**
 * Replays `fixture` from genesis through its last block at or below `height` (every block when
 * undefined) on a fresh store and dumps that store. Heights are sparse: the dump's `height` is
 * the block actually reached (0 = genesis). A mismatch on the way is returned instead.
 */
function dumpAtHeight(file: string, fixture: Fixture, height: bigint | undefined): StateDump | { mismatch: string[] } {
  const store = newStore();
  let outcome: ReturnType<typeof replayFixture>;
  try {
    outcome = replayFixture(fixture, { store, ...(height === undefined ? {} : { toHeight: height }) });
  } catch (err) {
    if (err instanceof ReplayInputError) throw new UsageError(`${file}: ${err.message}`);
    throw err;
  }
  if (outcome.mismatch !== null) return { mismatch: mismatchLines(file, outcome.mismatch) };
  const reached = outcome.blocks === 0 ? 0n : fixture.blocks[outcome.blocks - 1]!.height;
  return dumpState(store, { height: reached, decodeSlot: registryRecords });
}

function stateDumpOf(file: string, doc: unknown, height: bigint | undefined): StateDump | { mismatch: string[] } {
  const format = typeof doc === "object" && doc !== null && !Array.isArray(doc) ? (doc as { format?: unknown }).format : undefined;
  switch (format) {
    case DUMP_FORMAT:
      if (height !== undefined) throw new UsageError(`${file}: --height needs a fixture or scenario; a state dump has one height`);
      try {
        return dumpEntries(loadDump(doc), { decodeSlot: registryRecords });
      } catch (err) {
        throw new UsageError(`${file}: ${(err as Error).message}`);
      }
    case FIXTURE_FORMAT: {
      let fixture: Fixture;
      try {
        fixture = loadFixture(doc);
      } catch (err) {
        if (err instanceof FixtureError) throw new UsageError(`${file}: ${err.message}`);
        throw err;
      }
      return dumpAtHeight(file, fixture, height);
    }
    case SCENARIO_FORMAT:
      try {
        return dumpAtHeight(file, scenarioFixture(file, doc), height);
      } catch (err) {
        if (err instanceof FillError) return { mismatch: [oneLine(`MISMATCH ${file}: ${err.message}`)] };
        throw err;
      }
    default:
      throw new UsageError(
        `${file}: unknown format ${JSON.stringify(format ?? null)} (expected "${DUMP_FORMAT}", "${FIXTURE_FORMAT}" or "${SCENARIO_FORMAT}")`,
      );
  }
}

/** The committed state at a store's head. */
function storeDump(dir: string): StateDump {
  const db = openExistingStore(dir);
  try {
    return dumpState(db.state, { height: db.head()!.height, decodeSlot: registryRecords });
  } finally {
    db.close();
  }
}

export function register(program: Command): void {
  const state = program.command("state").description("state dumps (CIP-4 keys and values, decoded)");

  state
    .command("dump [file]")
    .description(
      "print the canonical dump (sorted keys, lowercase hex, decoded views) of a dump/alloc file, or of the state " +
        "a cbqs-fixture/v1 (.json or .json.gz) or cbqs-scenario/v1 reaches by replay from genesis",
    )
    .option(
      "--height <n>",
      "fixture/scenario: the state after the last block at or below this height (heights are sparse; " +
        "the dump's \"height\" names the block reached, 0 = genesis); default: the last block",
    )
    .option("--db <dir>", "dump the committed state of this store (its head) instead of a file")
    .option("-o, --output <file>", "write the dump to this file instead of stdout")
    .action((file: string | undefined, opts: { height?: string; output?: string; db?: string }) => {
      const height = opts.height === undefined ? undefined : parseHeight(opts.height);
      if ((file === undefined) === (opts.db === undefined)) throw new UsageError("give either a file or --db <dir>");
      if (opts.db !== undefined && height !== undefined) throw new UsageError("--height needs a fixture or scenario; --db dumps the store's head");
      const result = opts.db !== undefined ? storeDump(opts.db) : stateDumpOf(file!, readDocument(file!), height);
      if ("mismatch" in result) {
        // Like `cbqs replay`: the first mismatch, its differing keys indented below; nothing dumped.
        process.stderr.write(result.mismatch.join("\n") + "\n");
        process.exitCode = EXIT_REJECT;
        return;
      }
      // The docs/state.md §5 field order: height and root above the (long) entry list.
      const { format, height: reached, state_root, entries } = result;
      const text = JSON.stringify({ format, height: reached, state_root, entries }, jsonReplacer, 2) + "\n";
      if (opts.output === undefined) {
        process.stdout.write(text);
        return;
      }
      try {
        writeFileSync(opts.output, text);
      } catch (err) {
        throw new UsageError(`cannot write ${opts.output}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
      }
    });

  state
    .command("diff <a> <b>")
    .description("list keys added, removed and changed from dump <a> to dump <b>; exit 1 if they differ")
    .option("--json", "print the diff as JSON")
    .action((a: string, b: string, opts: { json?: boolean }) => {
      const diff = diffDumps(readDumpFile(a), readDumpFile(b), registryRecords);
      const lines = [
        ...diff.added.map((e) => `+ ${e.key} ${show(e)}`),
        ...diff.removed.map((e) => `- ${e.key} ${show(e)}`),
        ...diff.changed.map((c) => `~ ${c.key} ${show(c.before)} -> ${show(c.after)}`),
        diffIsEmpty(diff)
          ? "equal"
          : `${diff.added.length} added, ${diff.removed.length} removed, ${diff.changed.length} changed`,
      ];
      report(opts.json === true, lines.join("\n"), diff);
      process.exitCode = diffIsEmpty(diff) ? EXIT_OK : EXIT_REJECT;
    });

  program
    .command("verify-bmt-proof <proof>")
    .description("verify a CIP-4 §5.4 transaction or receipt inclusion proof (JSON) against a tx_root or receipt_root")
    .requiredOption("--root <hex>", "trusted tx_root or receipt_root, 0x-prefixed 32-byte hex")
    .option("--json", "print the result as JSON")
    .action((file: string, opts: { root: string; json?: boolean }) => {
      const root = fromHex(opts.root, 32, "--root");
      const proof = readJsonFile(file, parseInclusionProof);
      const valid = verifyInclusionProof(proof, root);
      report(opts.json === true, valid ? "valid" : "invalid", { valid });
      process.exitCode = valid ? EXIT_OK : EXIT_REJECT;
    });
}
