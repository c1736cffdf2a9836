// `cbqs run <scenario.json> [--json] [-o file]`: execute a scenario (docs/reference/formats/scenario.md) and
// print its run document (§4) or a short human summary, block by block as the blocks execute, so
// output appears at once and memory does not grow with the number of blocks. Exit 0 when every
// expectation holds, 1 on the first failed expectation (its JSON path, expected and actual), 2 for
// unusable input (then a run document already begun on stdout is incomplete; a file is not written).
import { GenesisError } from "../engine/errors.js";
import { inFile, readScenario } from "../harness/documents.js";
import { Progress, progressMode } from "../harness/progress.js";
import { count } from "../format.js";
import { jsonDocumentSteps, Later, Output, Streamed, writingStoppable } from "../json/write.js";
import { keeping, watchSignals } from "../steps.js";
import { runDocument, ScenarioRun, type ExecutedScenarioBlock, type RunBlock } from "../scenario/run.js";
import { InputError } from "../json/read.js";
import { EXIT_OK, EXIT_REJECT, exitCodes, oneLine, option, outputOption } from "./common.js";
import type { CommandSpec } from "./define.js";
import { writesToStdout } from "../output-file.js";

export const commands: Readonly<Record<string, CommandSpec>> = {
  run: {
    description: "execute a cbqs-scenario/v1 document, printing block by block: one line per block and a summary, or with --json its cbqs-run/v1 run document",
    arguments: [["<scenario>", "scenario file (.json or .json.gz)"]],
    options: () => [
      option("--json", "print the run document as JSON (else one line per block and a summary)"),
      outputOption("-o, --output <file>", "output file; - is stdout", "-"),
      option("--quiet", "no progress on stderr"),
    ],
    exits: exitCodes(
      "every expectation holds",
      "an expectation failed (its JSON path, expected and actual on stderr)",
      undefined,
      "after the block in progress; no file is written (on stdout, the blocks so far)",
    ),
    action: async (file: string, opts: { json?: boolean; output: string; quiet?: boolean }) => {
      watchSignals();
      const scenario = readScenario(file);
      let run: ScenarioRun;
      try {
        run = inFile(file, () => new ScenarioRun(scenario));
      } catch (err) {
        if (err instanceof GenesisError) throw new InputError(file, scenario.genesisPath, `invalid genesis: ${err.message}`);
        throw err;
      }
      await writeRun(file, run, scenario.blocks, opts);
      if (run.failure !== null) process.stderr.write(`cbqs: ${oneLine(run.failure.message)}\n`);
      process.exitCode = run.failure !== null ? EXIT_REJECT : EXIT_OK;
    },
  },
};

/** The run written as it executes, block by block: its run document (--json), or a line per block and a summary. */
async function writeRun(file: string, run: ScenarioRun, scenarioBlocks: ReadonlyArray<{ height: bigint }>, opts: { json?: boolean; output: string; quiet?: boolean }): Promise<void> {
  const progress = new Progress(`run ${file}`, progressMode(opts.quiet));
  const total = scenarioBlocks.length;
  const last = total === 0 ? 0n : scenarioBlocks[total - 1]!.height;
  let done = 0;
  let txs = 0;
  const blocks = function* (): Generator<ExecutedScenarioBlock> {
    for (const b of run.blocks()) {
      done++;
      txs += b.run.receipts.length;
      progress.update({ done, total, unit: "blocks", height: { at: BigInt(b.run.height), last }, txs });
      yield b;
    }
  };
  const kept = () => `after ${count(done, "block")}; ${writesToStdout(opts.output) ? "stdout has the blocks so far" : `${opts.output} is not written`}`;
  await keeping(kept, () =>
    writingStoppable(new Output(opts.output), function* (out) {
      if (opts.json) {
        yield* jsonDocumentSteps(out, runDocument(run, { blocks: new Streamed(runBlocks(file, blocks())), state: new Later(() => run.state()), failure: new Later(() => run.failureJson()) }));
        return;
      }
      out.write(`chain_instance_id ${run.chainInstanceId}  genesis_state_root ${run.genesisStateRoot}\n`);
      for (const b of runBlocks(file, blocks())) {
        out.write(blockLine(b) + "\n");
        yield;
      }
      out.write(summary(run, done) + "\n");
    }),
  ).finally(() => progress.end());
}

/**
 * The run-document blocks of a running scenario. Resolution errors (a signed object naming a block
 * that does not exist, …) surface while running: they are reported against `file`.
 */
function* runBlocks(file: string, blocks: Iterator<ExecutedScenarioBlock>): Generator<RunBlock> {
  for (;;) {
    const next = inFile(file, () => blocks.next());
    if (next.done === true) return;
    yield next.value.run;
  }
}

function blockLine(b: RunBlock): string {
  const ok = b.receipts.filter((r) => r.status === "ok").length;
  const events = b.receipts.reduce((n, r) => n + r.events.length, 0);
  return (
    `block ${b.height} (rent height ${b.effective_rent_height}): ${count(b.receipts.length, "tx", "txs")}, ${ok} ok, ` +
    `${b.receipts.length - ok} rejected, ${count(events, "event")}, state_root ${b.state_root}`
  );
}

function summary(run: ScenarioRun, blocks: number): string {
  const state = run.state() as { streams?: object; providers?: object; accounts?: object };
  return (
    `${run.failure !== null ? "FAILED" : "ok"}: ${count(blocks, "block")}, ${count(Object.keys(state.streams ?? {}).length, "stream")}, ` +
    `${count(Object.keys(state.providers ?? {}).length, "provider")}, ${count(Object.keys(state.accounts ?? {}).length, "account")}`
  );
}
