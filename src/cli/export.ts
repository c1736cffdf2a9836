// `cbqs fixture export --db <dir> [--from h] [--to h] [--post-state every|final|none] [-o <fixture>]`: a
// stored chain (a devnet session, a follower's store, replay --db's) as a cbqs-fixture/v1 that
// `cbqs replay` and a node team's consumer replay from genesis (docs/reference/formats/fixture.md §9). Exit 0
// written, 1 a stored block that re-executing the chain does not reproduce (nothing written),
// 2 unusable input: no store, a store in use, a snapshot-started store, a bad range.
import { echo } from "../bounds.js";
import type { PostStateMode } from "../harness/fill.js";
import { Progress, progressMode } from "../harness/progress.js";
import { Output, writingStoppable } from "../json/write.js";
import { ExportMismatch, ExportRefused, exportedText, exportSteps, planExport, POST_STATE_MODES, type ExportPlan } from "../chain-node/fixture-export.js";
import { writesToStdout } from "../output-file.js";
import { keeping, watchSignals } from "../steps.js";
import { decimalOption, EXIT_OK, EXIT_REJECT, exitCodes, oneLine, option, outputOption, requiredOption, UsageError } from "./common.js";
import type { CommandSpec } from "./define.js";
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

export const commands: Readonly<Record<string, CommandSpec>> = {
  export: {
    description: "write a stored chain (--db: a devnet's, a follower's, replay --db's) as a cbqs-fixture/v1, every block re-executed from genesis and checked against its record",
    options: () => [
      requiredOption("--db <dir>", "the store (opened read-only); it must hold the chain from genesis"),
      option("--to <h>", "the last height written (the last stored block at or below it); without it, the store's head"),
      option("--from <h>", "the first block that carries a post_state, with --post-state every; the blocks below it are still written (a fixture replays from genesis), without one"),
      option("--post-state <mode>", "which blocks carry a post_state dump, as fill writes them: every (each block from --from), final (the last block only) or none", "every"),
      option("--name <text>", "the fixture's name; without it, chain-<first 4 bytes of the chain instance>-to-<h>"),
      option("--description <text>", "the fixture's description; without it, one saying what it holds"),
      outputOption("-o, --output <file>", "fixture file (.gz: gzipped); - is stdout", "-"),
      option("--quiet", "no progress on stderr"),
    ],
    exits: exitCodes(
      "the fixture is written",
      "a stored block is not what re-executing the chain from genesis gives (named; nothing written)",
      "no store there, an empty or busy one, a store started from a snapshot, --from/--to outside the chain, a bad option, an unwritable output",
      "no file is written (on stdout, the blocks so far: an incomplete document); the store is closed unchanged",
    ),
    action: async (opts: ExportOpts) => {
      const request = exportRequest(opts);
      watchSignals();
      const db = openExistingStore(opts.db);
      try {
        process.exitCode = renderExport(await usingStore(opts.db, () => exportChain(db, request, opts)), opts);
      } finally {
        db.close();
      }
    },
  },
};

/** What to export, from the options (exit 2 naming a bad one). */
function exportRequest(opts: ExportOpts): Parameters<typeof planExport>[1] {
  if (!(POST_STATE_MODES as readonly string[]).includes(opts.postState)) throw new UsageError(`--post-state must be every, final or none (got ${echo(opts.postState)})`);
  return {
    postState: opts.postState as PostStateMode,
    names: { from: "--from", to: "--to", postState: "--post-state" },
    ...(opts.from === undefined ? {} : { from: decimalOption("--from", opts.from) }),
    ...(opts.to === undefined ? {} : { to: decimalOption("--to", opts.to) }),
    ...(opts.name === undefined ? {} : { name: opts.name }),
    ...(opts.description === undefined ? {} : { description: opts.description }),
  };
}

/** The export's outcome in words, beside the document (on stderr when the document is on stdout); the exit code. */
function renderExport(exported: { text: string } | { mismatch: string }, opts: ExportOpts): number {
  const toStdout = writesToStdout(opts.output);
  const aside = toStdout ? process.stderr : process.stdout;
  if ("mismatch" in exported) {
    aside.write(
      `${oneLine(`MISMATCH --db ${opts.db}: ${exported.mismatch}`)}\n` +
        `  (the store's record of that block is not what executing the chain from genesis gives: nothing written; cbqs store verify --db ${opts.db} looks for damage)\n`,
    );
    return EXIT_REJECT;
  }
  aside.write(`exported ${exported.text} to ${toStdout ? "stdout" : opts.output}\n`);
  return EXIT_OK;
}

/** The stored chain written as a fixture: what was exported in words, or the stored block re-execution does not reproduce (nothing written). */
async function exportChain(db: ReturnType<typeof openExistingStore>, request: Parameters<typeof planExport>[1], opts: ExportOpts): Promise<{ text: string } | { mismatch: string }> {
  const progress = new Progress(`export --db ${opts.db}`, progressMode(opts.quiet));
  try {
    let plan: ExportPlan;
    try {
      plan = planExport(db, request);
    } catch (err) {
      if (err instanceof ExportRefused) throw new UsageError(`--db ${opts.db}: ${err.message}`);
      throw err;
    }
    const toStdout = writesToStdout(opts.output);
    const summary = await keeping(
      () => (toStdout ? "stdout has the blocks so far (an incomplete document); the store is closed unchanged" : `${opts.output} is not written; the store is closed unchanged`),
      () => writingStoppable(new Output(opts.output), (out) => exportSteps(db, plan, out, (p) => progress.update({ done: p.blocks, unit: "blocks", height: { at: p.height, last: p.last }, txs: p.txs }))),
    );
    progress.end();
    return { text: exportedText(summary, plan) };
  } catch (err) {
    progress.end();
    if (!(err instanceof ExportMismatch)) throw err;
    return { mismatch: err.message };
  }
}
