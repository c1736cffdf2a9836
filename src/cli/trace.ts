// `cbqs trace <fixture> --block N` (docs/fixtures.md §5): the fixture replayed up to block N, and
// that block's cbqs-trace/v1 lines written. Exit 1 when the fixture does not replay to its own
// values before or at the block (the mismatch on stderr, no trace written).
import { readFixtureSteps } from "../harness/documents.js";
import { noBlockAt, type Fixture } from "../harness/fixture.js";
import type { Mismatch } from "../harness/replay.js";
import { blockTraceLines, TracingStore } from "../harness/trace.js";
import { InputError } from "../json/read.js";
import { stoppable, watchSignals } from "../steps.js";
import { decimalOption, EXIT_OK, EXIT_REJECT, exitCodes, outputOption, requiredOption, UsageError } from "./common.js";
import type { CommandSpec } from "./define.js";
import { mismatchLines } from "./replay-report.js";
import { withTrace } from "./trace-output.js";

export const commands: Readonly<Record<string, CommandSpec>> = {
  trace: {
    description: "replay a fixture up to block N and print the cbqs-trace/v1 lines of that block",
    arguments: [["<fixture>", "fixture file (.json or .json.gz)"]],
    options: () => [requiredOption("--block <n>", "height of the block to trace"), outputOption("-o, --output <file>", "trace file; - is stdout", "-")],
    exits: exitCodes(
      "the block replays to the fixture's values and its trace is written",
      "the fixture does not replay to its own values before or at the block (the mismatch on stderr)",
      undefined,
      "no trace file is written",
    ),
    action: async (file: string, opts: { block: string; output: string }) => {
      watchSignals();
      const height = decimalOption("--block", opts.block);
      const fixture = await stoppable(readFixtureSteps(file));
      if (!fixture.blocks.some((b) => b.height === height)) throw new UsageError(`${file}: ${noBlockAt(fixture, height)}`);
      const mismatch = await traceBlock(file, fixture, height, opts.output);
      if (mismatch !== null) process.stderr.write(mismatchLines(file, mismatch).join("\n") + "\n");
      process.exitCode = mismatch === null ? EXIT_OK : EXIT_REJECT;
    },
  },
};

/** Replays `fixture` through block `height`, writing that block's trace to `output`; the first mismatch on the way, or null. */
async function traceBlock(file: string, fixture: Fixture, height: bigint, output: string): Promise<Mismatch | null> {
  const { newStore, replayFixtureSteps, ReplayInputError } = await import("../harness/replay.js");
  const tracing = new TracingStore(newStore());
  tracing.recorder.active = fixture.blocks[0]!.height === height;
  const outcome = await withTrace(output, async (trace) => {
    try {
      return await stoppable(
        replayFixtureSteps(fixture, {
          toHeight: height,
          store: tracing,
          onBlock: (p, executed) => {
            if (p.height === height) trace!.write(blockTraceLines(height, tracing.recorder, executed.envelopes, executed.results.receipts, executed.outcomes));
            // Record only the traced block: the next block to begin is the one after p.
            const next = fixture.blocks[p.blocksDone];
            tracing.recorder.active = next !== undefined && next.height === height;
          },
        }),
      );
    } catch (err) {
      if (err instanceof ReplayInputError) throw new InputError(file, err.path, err.message);
      throw err;
    }
  });
  return outcome.mismatch;
}
