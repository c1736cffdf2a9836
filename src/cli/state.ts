// `cbqs state dump <file>` and `cbqs state diff <a.json> <b.json>` (docs/state.md §5). There is no
// persistent node store: a dump's state comes from a dump or alloc file (the scenario runner
// produces dumps of its runs with state/dump.ts).
// `cbqs verify-bmt-proof <proof.json> --root <hex>`: a CIP-4 §5.4 tx/receipt inclusion proof
// (docs/state.md §4.1) checked against a trusted tx_root or receipt_root.
import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { fromHex } from "../bytes.js";
import { registryRecords } from "../harness/records.js";
import { diffDumps, diffIsEmpty, dumpEntries, loadDump, type DumpEntry } from "../../state/dump.js";
import { parseInclusionProof, verifyInclusionProof } from "../../state/roots.js";
import { EXIT_OK, EXIT_REJECT, jsonReplacer, report, UsageError } from "./common.js";

/** Reads `path` as JSON and hands it to `load`; any failure is unusable input (exit 2). */
function readJsonFile<T>(path: string, load: (json: unknown) => T): T {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
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

export function register(program: Command): void {
  const state = program.command("state").description("state dumps (CIP-4 keys and values, decoded)");

  state
    .command("dump <file>")
    .description("print the canonical dump (sorted keys, lowercase hex, decoded views) of a dump or alloc file")
    .action((file: string) => {
      const dump = dumpEntries(readDumpFile(file), { decodeSlot: registryRecords });
      process.stdout.write(JSON.stringify(dump, jsonReplacer, 2) + "\n");
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
