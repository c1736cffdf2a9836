// `cbqs run <scenario.json> [--json]`: execute a scenario (docs/scenario-format.md) and print
// its run document (§4) or a short human summary. Exit 0 when every expectation holds, 1 on
// the first failed expectation (its JSON path, expected, actual), 2 for unusable input.

import type { Command } from "commander";
import { GenesisError } from "../engine/errors.js";
import { inFile, readScenario } from "../harness/documents.js";
import { runScenario, type RunDocument } from "../scenario/run.js";
import { EXIT_OK, EXIT_REJECT, oneLine, UsageError } from "./common.js";

export function register(program: Command): void {
  program
    .command("run")
    .description("execute a cbqs-scenario/v1 document and print its cbqs-run/v1 run document")
    .argument("<scenario>", "scenario JSON file")
    .option("--json", "print the run document as JSON")
    .action((file: string, opts: { json?: boolean }) => {
      const scenario = readScenario(file);
      let result: ReturnType<typeof runScenario>;
      try {
        result = inFile(file, () => runScenario(scenario));
      } catch (err) {
        if (err instanceof GenesisError) throw new UsageError(`${file}: invalid genesis: ${err.message}`);
        throw err;
      }
      if (opts.json) process.stdout.write(JSON.stringify(result.document, null, 2) + "\n");
      else process.stdout.write(summary(result.document));
      if (result.failure !== null) {
        process.stderr.write(`cbqs: ${oneLine(result.failure.message)}\n`);
        process.exitCode = EXIT_REJECT;
      } else process.exitCode = EXIT_OK;
    });
}

function summary(doc: RunDocument): string {
  const lines = [`chain_instance_id ${doc.chain_instance_id}  genesis_state_root ${doc.genesis_state_root}`];
  for (const b of doc.blocks) {
    const ok = b.receipts.filter((r) => r.status === "ok").length;
    const events = b.receipts.reduce((n, r) => n + r.events.length, 0);
    lines.push(
      `block ${b.height} (rent height ${b.effective_rent_height}): ${b.receipts.length} txs, ${ok} ok, ` +
        `${b.receipts.length - ok} rejected, ${events} events, state_root ${b.state_root}`,
    );
  }
  const state = doc.state as { streams?: object; providers?: object; accounts?: object };
  lines.push(
    `${doc.failure ? "FAILED" : "ok"}: ${doc.blocks.length} blocks, ${Object.keys(state.streams ?? {}).length} streams, ` +
      `${Object.keys(state.providers ?? {}).length} providers, ${Object.keys(state.accounts ?? {}).length} accounts`,
  );
  return lines.join("\n") + "\n";
}
