// `cbqs state dump <file> [--height N]` and `cbqs state diff <a.json> <b.json>` (docs/state.md §5).
// There is no persistent node store: a dump's state comes from a dump or alloc file, or from
// replaying a fixture (or a scenario, filled to one first) from genesis up to a height.
// `cbqs verify-bmt-proof <proof.json> --root <hex>`: a CIP-4 §5.4 tx/receipt inclusion proof
// (docs/state.md §4.1) checked against a trusted tx_root or receipt_root.
import type { Command } from "commander";
import { fromHex } from "../bytes.js";
import { GenesisError } from "../engine/errors.js";
import { FillError, fillScenario } from "../harness/fill.js";
import { inFile, readDocument, readDump, readJson } from "../harness/documents.js";
import type { Fixture } from "../harness/fixture.js";
import { registryRecords } from "../harness/records.js";
import { newStore, replayFixture, ReplayInputError } from "../harness/replay.js";
import { InputError } from "../json/read.js";
import { Output, Streamed, writeJsonDocument, writing } from "../json/write.js";
import type { Scenario } from "../scenario/parse.js";
import { diffDumps, diffIsEmpty, dumpEntryViews, dumpHeader, type DumpEntry } from "../../state/dump.js";
import { parseInclusionProof, verifyInclusionProof } from "../../state/roots.js";
import type { StateStore } from "../../state/interface.js";
import { EXIT_OK, EXIT_REJECT, exitCodes, jsonReplacer, oneLine, report, UsageError } from "./common.js";
import { mismatchLines } from "./harness.js";

const show = (e: DumpEntry) => JSON.stringify(e.decoded?.value ?? e.value);

/** `--height`: a decimal u64. */
function parseHeight(text: string): bigint {
  if (!/^[0-9]+$/.test(text)) throw new UsageError(`--height must be a decimal integer (got ${text})`);
  const height = BigInt(text);
  if (height > 0xffff_ffff_ffff_ffffn) throw new UsageError(`--height exceeds u64 (got ${text})`);
  return height;
}

/** A scenario as a fixture (the same pipeline as `cbqs fill`), so both replay the same way. */
function scenarioFixture(file: string, scenario: Scenario): Fixture {
  try {
    return inFile(file, () => fillScenario(scenario, "none"));
  } catch (err) {
    if (err instanceof GenesisError) throw new UsageError(`${file}: invalid genesis: ${err.message}`);
    throw err; // FillError: handled by the caller (exit 1)
  }
}

/** What `state dump` writes: the dump's header and its entries, produced one at a time. */
interface DumpSource {
  height?: bigint;
  stateRoot?: Uint8Array;
  entries: Iterable<readonly [Uint8Array, Uint8Array]>;
}

/**
 * Replays `fixture` from genesis through its last block at or below `height` (every block when
 * undefined) on a fresh store and dumps that store. Heights are sparse: the dump's `height` is
 * the block actually reached (0 = genesis). A mismatch on the way is returned instead.
 */
function dumpAtHeight(file: string, fixture: Fixture, height: bigint | undefined): DumpSource | { mismatch: string[] } {
  const store: StateStore = newStore();
  let outcome: ReturnType<typeof replayFixture>;
  try {
    outcome = replayFixture(fixture, { store, ...(height === undefined ? {} : { toHeight: height }) });
  } catch (err) {
    if (err instanceof ReplayInputError) throw new InputError(file, err.path, err.message);
    throw err;
  }
  if (outcome.mismatch !== null) return { mismatch: mismatchLines(file, outcome.mismatch) };
  const reached = outcome.blocks === 0 ? 0n : fixture.blocks[outcome.blocks - 1]!.height;
  return { height: reached, stateRoot: store.root(), entries: store.entries() };
}

function stateDumpOf(file: string, height: bigint | undefined): DumpSource | { mismatch: string[] } {
  const doc = readDocument(file, ["dump", "fixture", "scenario"]);
  switch (doc.kind) {
    case "dump":
      if (height !== undefined) throw new UsageError(`${file}: --height needs a fixture or scenario; a state dump has one height`);
      return { entries: doc.entries };
    case "fixture":
      return dumpAtHeight(file, doc.fixture, height);
    case "scenario":
      try {
        return dumpAtHeight(file, scenarioFixture(file, doc.scenario), height);
      } catch (err) {
        if (err instanceof FillError) return { mismatch: [oneLine(`MISMATCH ${file}: ${err.message}`)] };
        throw err;
      }
    default:
      throw new Error("unreachable");
  }
}

export function register(program: Command): void {
  const state = program.command("state").description("state dumps (CIP-4 keys and values, decoded)");

  state
    .command("dump <file>")
    .description(
      "print the canonical dump (sorted keys, lowercase hex, decoded views) of a dump/alloc file, or of the state " +
        "a cbqs-fixture/v1 (.json or .json.gz) or cbqs-scenario/v1 reaches by replay from genesis",
    )
    .option(
      "--height <n>",
      "fixture/scenario: the state after the last block at or below this height (heights are sparse; " +
        "the dump's \"height\" names the block reached, 0 = genesis); default: the last block",
    )
    .option("-o, --output <file>", "output file; - is stdout", "-")
    .addHelpText("after", exitCodes("the dump is written", "a fixture or scenario does not replay to its own expected values before the height", "unreadable or malformed input, bad --height, unwritable output"))
    .action((file: string, opts: { height?: string; output: string }) => {
      const height = opts.height === undefined ? undefined : parseHeight(opts.height);
      const result = stateDumpOf(file, height);
      if ("mismatch" in result) {
        // Like `cbqs replay`: the first mismatch, its differing keys indented below; nothing dumped.
        process.stderr.write(result.mismatch.join("\n") + "\n");
        process.exitCode = EXIT_REJECT;
        return;
      }
      // The docs/state.md §5 field order (height and root above the long entry list), written
      // entry by entry: a 1.25 M-entry dump is never one string.
      const header = dumpHeader({ ...(result.height === undefined ? {} : { height: result.height }), ...(result.stateRoot === undefined ? {} : { stateRoot: result.stateRoot }) });
      writing(new Output(opts.output), (out) =>
        writeJsonDocument(out, { ...header, entries: new Streamed(dumpEntryViews(result.entries, registryRecords)) }, jsonReplacer),
      );
      process.exitCode = EXIT_OK;
    });

  state
    .command("diff <a> <b>")
    .description("list keys added, removed and changed from dump <a> to dump <b>; exit 1 if they differ")
    .option("--json", "print the diff as JSON")
    .action((a: string, b: string, opts: { json?: boolean }) => {
      const diff = diffDumps(readDump(a), readDump(b), registryRecords);
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
      const json = readJson(file);
      const proof = inFile(file, () => {
        try {
          return parseInclusionProof(json);
        } catch (err) {
          throw new InputError(file, "", (err as Error).message);
        }
      });
      const valid = verifyInclusionProof(proof, root);
      report(opts.json === true, valid ? "valid" : "invalid", { valid });
      process.exitCode = valid ? EXIT_OK : EXIT_REJECT;
    });
}
