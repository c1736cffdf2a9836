// `cbqs export --db <dir> [--from h] [--to h] [--post-state every|final|none] [-o <fixture>]`: a
// stored chain (a devnet session, a follower's store, replay --db's) as a cbqs-fixture/v1 that
// `cbqs replay` and a node team's consumer replay from genesis (docs/reference/formats/fixture.md §9). Exit 0
// written, 1 a stored block that re-executing the chain does not reproduce (nothing written),
// 2 unusable input: no store, a store in use, a snapshot-started store, a bad range.
import { echo } from "../bounds.js";
import type { Command } from "commander";
import type { PostStateMode } from "../harness/fill.js";
import { Progress, progressMode } from "../harness/progress.js";
import { Output, writingStoppable } from "../json/write.js";
import { ExportMismatch, ExportRefused, exportedText, exportSteps, planExport, POST_STATE_MODES, type ExportPlan } from "../node/fixture-export.js";
import { writesToStdout } from "../output-file.js";
import { keeping, watchSignals } from "../steps.js";
import { EXIT_OK, EXIT_REJECT, exitCodes, oneLine, outputOption, UsageError } from "./common.js";
import { decimalOption } from "./harness.js";
import { openExistingStore, usingStore } from "./store.js";

interface ExportOpts {
  db: string;
  from?: string;
  to?: string;
  postState: string;
  name?: string;
  description?: string;
  output: string;
  quiet?: boolean;
}

export function register(program: Command): void {
  program
    .command("export")
    .description("write a stored chain (--db: a devnet's, a follower's, replay --db's) as a cbqs-fixture/v1, every block re-executed from genesis and checked against its record")
    .requiredOption("--db <dir>", "the store (opened read-only); it must hold the chain from genesis")
    .option("--to <h>", "the last height written (the last stored block at or below it); without it, the store's head")
    .option("--from <h>", "the first block that carries a post_state, with --post-state every; the blocks below it are still written (a fixture replays from genesis), without one")
    .option("--post-state <mode>", "which blocks carry a post_state dump, as fill writes them: every (each block from --from), final (the last block only) or none", "every")
    .option("--name <text>", "the fixture's name; without it, chain-<first 4 bytes of the chain instance>-to-<h>")
    .option("--description <text>", "the fixture's description; without it, one saying what it holds")
    .addOption(outputOption("-o, --output <file>", "fixture file (.gz: gzipped); - is stdout", "-"))
    .option("--quiet", "no progress on stderr")
    .addHelpText(
      "after",
      exitCodes(
        "the fixture is written",
        "a stored block is not what re-executing the chain from genesis gives (named; nothing written)",
        "no store there, an empty or busy one, a store started from a snapshot, --from/--to outside the chain, a bad option, an unwritable output",
        "no file is written (on stdout, the blocks so far: an incomplete document); the store is closed unchanged",
      ),
    )
    .action(async (opts: ExportOpts) => {
      if (!(POST_STATE_MODES as readonly string[]).includes(opts.postState)) throw new UsageError(`--post-state must be every, final or none (got ${echo(opts.postState)})`);
      const request = {
        postState: opts.postState as PostStateMode,
        names: { from: "--from", to: "--to", postState: "--post-state" },
        ...(opts.from === undefined ? {} : { from: decimalOption("--from", opts.from) }),
        ...(opts.to === undefined ? {} : { to: decimalOption("--to", opts.to) }),
        ...(opts.name === undefined ? {} : { name: opts.name }),
        ...(opts.description === undefined ? {} : { description: opts.description }),
      };
      watchSignals();
      const toStdout = writesToStdout(opts.output);
      // What is printed beside the document goes to stderr when the document is on stdout.
      const aside = toStdout ? process.stderr : process.stdout;
      const db = openExistingStore(opts.db);
      try {
        await usingStore(opts.db, async () => {
          const progress = new Progress(`export --db ${opts.db}`, progressMode(opts.quiet));
          try {
            let plan: ExportPlan;
            try {
              plan = planExport(db, request);
            } catch (err) {
              if (err instanceof ExportRefused) throw new UsageError(`--db ${opts.db}: ${err.message}`);
              throw err;
            }
            const summary = await keeping(
              () => (toStdout ? "stdout has the blocks so far (an incomplete document); the store is closed unchanged" : `${opts.output} is not written; the store is closed unchanged`),
              () =>
                writingStoppable(new Output(opts.output), (out) =>
                  exportSteps(db, plan, out, (p) => progress.update({ done: p.blocks, unit: "blocks", height: { at: p.height, last: p.last }, txs: p.txs })),
                ),
            );
            progress.end();
            aside.write(`exported ${exportedText(summary, plan)} to ${toStdout ? "stdout" : opts.output}\n`);
            process.exitCode = EXIT_OK;
          } catch (err) {
            progress.end();
            if (!(err instanceof ExportMismatch)) throw err;
            aside.write(
              `${oneLine(`MISMATCH --db ${opts.db}: ${err.message}`)}\n` +
                `  (the store's record of that block is not what executing the chain from genesis gives: nothing written; cbqs store verify --db ${opts.db} looks for damage)\n`,
            );
            process.exitCode = EXIT_REJECT;
          }
        });
      } finally {
        db.close();
      }
    });
}
