// `cbqs snapshot export --db <dir> -o <file> [--height <h>]` and `cbqs snapshot import <file> --db <dir>`
// (CIP-4 §8.1 fast sync; docs/state.md "Snapshots"). Exit 0 done, 2 unusable input: no store, a
// height whose state is no longer held, an unwritable file, or a snapshot refused on import
// (corrupt, truncated, foreign, or its rebuilt root is not its block's state_root) — the target
// is then left exactly as it was.
import { echo } from "../bounds.js";
import type { Command } from "commander";
import { toHex } from "../bytes.js";
import type { LmdbChainDb } from "../../state/lmdb/chain-db.js";
import { exportSnapshotSteps, importSnapshotSteps, SnapshotError } from "../node/snapshot.js";
import { stoppable, watchSignals } from "../steps.js";
import { EXIT_OK, exitCodes, UsageError } from "./common.js";
import { openExistingStore, storeUsageError } from "./store.js";

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

export function register(program: Command): void {
  const snapshot = program
    .command("snapshot")
    .description("state snapshots for fast sync (CIP-4 §8.1): export from a store, import into an empty one")
    .addHelpText("after", exitCodes(
        "export: the snapshot is written; import: the store is rebuilt from it",
        "(not used)",
        "export: no store, an empty or busy one, a pruned block, an unwritable file; import: an unusable or foreign snapshot, a target holding a chain; an unknown subcommand",
        "no snapshot file is written and no store is changed",
      ));

  snapshot
    .command("export")
    .description("write the snapshot of the store's head (or of a retained block) to a file")
    .requiredOption("--db <dir>", "the store")
    .requiredOption("-o, --output <file>", "snapshot file to write (a binary file, written to a temporary name and renamed into place; never stdout)")
    .option("--height <h>", "a committed block whose operations are not pruned yet; without it, the head")
    .addHelpText(
      "after",
      exitCodes("the snapshot is written", "(not used)", "no store or an empty one, a store in use, a block whose state is pruned, an unwritable file", "no snapshot file is written; the store is closed unchanged"),
    )
    .action(async (opts: { db: string; output: string; height?: string }) => {
      watchSignals();
      if (opts.height !== undefined && !/^[0-9]{1,20}$/.test(opts.height)) throw new UsageError(`--height must be a block height (got ${echo(opts.height)})`);
      const db = openExistingStore(opts.db) as LmdbChainDb;
      try {
        const block = await refused(`--db ${opts.db}`, opts.db, () => stoppable(exportSnapshotSteps(db, opts.output, opts.height === undefined ? undefined : BigInt(opts.height))));
        process.stdout.write(`snapshot of block ${block.height} (state_root ${toHex(block.state_root)}) written to ${opts.output}\n`);
      } finally {
        db.close();
      }
      process.exitCode = EXIT_OK;
    });

  snapshot
    .command("import")
    .description("rebuild a store from a snapshot after checking its checksum, its chain and its state root; replay --db then continues from the block after it")
    .argument("<file>", "snapshot file")
    .requiredOption("--db <dir>", "target store: absent, empty, or not yet holding a chain")
    .addHelpText(
      "after",
      exitCodes(
        "the snapshot is imported",
        "(not used)",
        "unreadable, corrupt, truncated or foreign snapshot, a rebuilt root that is not its block's state_root, a target holding a chain (the target is left as it was)",
        "the target is left as it was (the partly rebuilt store is removed)",
      ),
    )
    .action(async (file: string, opts: { db: string }) => {
      watchSignals();
      const block = await refused(file, opts.db, () => stoppable(importSnapshotSteps(file, opts.db)));
      process.stdout.write(`imported block ${block.height} (state_root ${toHex(block.state_root)}) into ${opts.db}\n`);
      process.exitCode = EXIT_OK;
    });
}
