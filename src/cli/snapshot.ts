// `cbqs snapshot export --db <dir> -o <file> [--height <h>]` and `cbqs snapshot import <file|-> --db <dir>`
// (CIP-4 §8.1 fast sync; docs/spec/state.md "Snapshots"). Exit 0 done, 2 unusable input: no store, a
// height whose state is no longer held, an unwritable file, or a snapshot refused on import
// (corrupt, truncated, foreign, or its rebuilt root is not its block's state_root) — the target
// is then left exactly as it was.
import { echo } from "../bounds.js";
import { fromHex, toHex } from "../bytes.js";
import type { LmdbChainDb } from "../../state/lmdb/chain-db.js";
import { AnchorMismatch, exportSnapshotSteps, importSnapshotSteps, SnapshotError } from "../store-tools/snapshot.js";
import { stoppable, watchSignals } from "../steps.js";
import { EXIT_OK, EXIT_REJECT, exitCodes, option, outputOption, requiredOption, UsageError } from "./common.js";
import type { CommandSpec } from "./define.js";
import { openExistingStore, storeUsageError } from "./store.js";
import { writesToStdout } from "../output-file.js";

/** Runs `run`; a refusal becomes one exit-2 line naming the file or store it concerns. */
async function refused<T>(subject: string, dir: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    const store = storeUsageError(dir, err);
    if (store !== undefined) throw store;
    if (err instanceof SnapshotError) throw new UsageError(err.message.includes(subject) ? err.message : `${subject}: ${err.message}`);
    // A system error's message names its own path ("ENOENT: no such file or directory, open '…'").
    const code = (err as NodeJS.ErrnoException).code;
    if (typeof code === "string" && /^E[A-Z]+$/.test(code)) throw new UsageError((err as Error).message);
    throw err;
  }
}

export const TRUSTED_BLOCK_HASH_HELP =
  "the hash of the snapshot's block, from a source you trust (a node, a published checkpoint): import refuses a snapshot whose block is another (exit 1)";

/** `--trusted-block-hash` as 32 bytes (undefined when not given). */
export function trustedBlockHash(text: string | undefined): Uint8Array | undefined {
  if (text === undefined) return undefined;
  if (!/^0x[0-9a-fA-F]{64}$/.test(text)) throw new UsageError(`--trusted-block-hash must be a 0x-prefixed 32-byte hex block hash (got ${echo(text)})`);
  return fromHex(text, 32, "--trusted-block-hash");
}

/**
 * `cbqs snapshot import` and `cbqs follow --snapshot`: imports with every check, prints what was
 * imported and what it was checked against. A snapshot that is not the trusted block prints
 * replay's MISMATCH form and sets exit 1; returns whether the import happened.
 */
export async function importSnapshotCli(file: string, db: string, trusted: Uint8Array | undefined, prefix = "", shown = file): Promise<boolean> {
  try {
    const block = await refused(shown, db, () => stoppable(importSnapshotSteps(file, db, trusted)));
    process.stdout.write(`${prefix}imported block ${block.height} (state_root ${toHex(block.state_root)}) into ${db}\n`);
    process.stdout.write(
      trusted === undefined
        ? `${prefix}no trusted anchor given: the snapshot is checked only against its own block record\n`
        : `${prefix}block ${block.height}'s hash is the trusted ${toHex(trusted)}\n`,
    );
    return true;
  } catch (err) {
    if (!(err instanceof AnchorMismatch)) throw err;
    process.stdout.write(`MISMATCH ${shown}: ${err.message}\n${prefix}snapshot refused; ${db} is left as it was\n`);
    process.exitCode = EXIT_REJECT;
    return false;
  }
}

export const commands: Readonly<Record<string, CommandSpec>> = {
  export: {
    description: "write the snapshot of the store's head (or of a retained block) to a file",
    options: () => [
      requiredOption("--db <dir>", "the store"),
      outputOption("-o, --output <file>", "snapshot file to write (a binary file; a new or regular file is written to a temporary name and renamed into place)").makeOptionMandatory(),
      option("--height <h>", "a committed block whose operations are not pruned yet; without it, the head"),
    ],
    exits: exitCodes("the snapshot is written", "(not used)", "no store or an empty one, a store in use, a block whose state is pruned, an unwritable file", "no snapshot file is written; the store is closed unchanged"),
    action: async (opts: { db: string; output: string; height?: string }) => {
      watchSignals();
      if (opts.height !== undefined && !/^[0-9]{1,20}$/.test(opts.height)) throw new UsageError(`--height must be a block height (got ${echo(opts.height)})`);
      const db = openExistingStore(opts.db) as LmdbChainDb;
      try {
        const block = await refused(`--db ${opts.db}`, opts.db, () => stoppable(exportSnapshotSteps(db, opts.output, opts.height === undefined ? undefined : BigInt(opts.height))));
        (writesToStdout(opts.output) ? process.stderr : process.stdout).write(`snapshot of block ${block.height} (state_root ${toHex(block.state_root)}) written to ${opts.output}\n`);
      } finally {
        db.close();
      }
      process.exitCode = EXIT_OK;
    },
  },

  import: {
    description: "rebuild a store from a snapshot after checking its checksum, its chain and its state root; replay --db then continues from the block after it",
    arguments: [["<file>", "snapshot file; - is the standard input (read once, in order)"]],
    options: () => [requiredOption("--db <dir>", "target store: absent, empty, or not yet holding a chain"), option("--trusted-block-hash <0x…>", TRUSTED_BLOCK_HASH_HELP)],
    exits: exitCodes(
      "the snapshot is imported",
      "the snapshot's block is not --trusted-block-hash (nothing is written)",
      "unreadable, corrupt, truncated or foreign snapshot, a rebuilt root that is not its block's state_root, a target holding a chain (the target is left as it was)",
      "the target is left as it was (the partly rebuilt store is removed)",
    ),
    action: async (file: string, opts: { db: string; trustedBlockHash?: string }) => {
      const trusted = trustedBlockHash(opts.trustedBlockHash);
      watchSignals();
      if (await importSnapshotCli(file, opts.db, trusted)) process.exitCode = EXIT_OK;
    },
  },
};
