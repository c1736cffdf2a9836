// `cbqs conformance commonware`: recomputes commonware's published conformance digests for the
// Merkle roots we port (MMR, BMT, QMDB any/current) with SHA-256 and compares them with the
// values listed in docs/reference/anchors.md. Exit 0 only if every digest matches.
import { echo } from "../bounds.js";
import type { Command } from "commander";
import {
  COMMONWARE_WORKLOADS,
  conformanceDigest,
  traceKeyedWorkload,
  type QmdbEncoding,
  type QmdbVariant,
} from "../../state/qmdb/conformance.js";
import { count } from "../format.js";
import { EXIT_OK, EXIT_REJECT, exitCodes, UsageError, report } from "./common.js";
import { stoppable, watchSignals, type Steps } from "../steps.js";

const TRACEABLE: Record<string, [QmdbVariant, QmdbEncoding]> = {
  "any-variable": ["any", "variable"],
  "current-variable": ["current", "variable"],
  "any-fixed": ["any", "fixed"],
  "current-fixed": ["current", "fixed"],
};

interface ConformanceRow {
  name: string;
  /** A decimal string (scenario-format §1: integers are strings on output). */
  nCases: string;
  ours: string;
  published: string;
  match: boolean;
}

export function register(program: Command): void {
  const conformance = program
    .command("conformance")
    .description("external conformance checks")
    .addHelpText("after", exitCodes(
        "commonware: every digest matches the published value; trace: printed",
        "commonware: a digest differs",
        "trace: unknown workload or bad seed; an unknown subcommand",
      ));
  conformance
    .command("commonware")
    .description("recompute commonware storage conformance digests (SHA-256) and compare with the published values")
    .option("--json", "print the results as JSON")
    .addHelpText("after", exitCodes("all six digests match the published values", "a digest differs", "(not used: the command reads no input)", "after the digest in progress; nothing printed"))
    .action(async (opts: { json?: boolean }) => {
      watchSignals();
      // A unit is one workload's digest (src/steps.ts).
      const rows = await stoppable(
        (function* (): Steps<ConformanceRow[]> {
          const rows: ConformanceRow[] = [];
          for (const w of COMMONWARE_WORKLOADS) {
            const ours = conformanceDigest(w.nCases, w.commit);
            rows.push({ name: w.name, nCases: String(w.nCases), ours, published: w.published, match: ours === w.published });
            yield;
          }
          return rows;
        })(),
      );
      const human = rows
        .map((r) => `${r.match ? "MATCH " : "DIFFER"} ${r.name} (${count(Number(r.nCases), "seed")})\n  ours:      ${r.ours}\n  published: ${r.published}`)
        .join("\n");
      const allMatch = rows.every((r) => r.match);
      report(opts.json === true, human, { allMatch, results: rows });
      process.exitCode = allMatch ? EXIT_OK : EXIT_REJECT;
    });
  conformance
    .command("trace")
    .description("print the keyed QMDB workload of one seed batch by batch: encoded ops, floor, roots")
    .argument("<workload>", Object.keys(TRACEABLE).join(" | "))
    .argument("<seed>", "seed (0-199 in the published digests)")
    .option("--json", "print the trace as JSON")
    .addHelpText("after", exitCodes("printed", "(not used)", "unknown workload, bad seed"))
    .action((workload: string, seedText: string, opts: { json?: boolean }) => {
      const target = TRACEABLE[workload];
      if (target === undefined) throw new UsageError(`unknown workload ${echo(workload)}`);
      if (!/^\d{1,9}$/.test(seedText)) throw new UsageError(`seed must be a decimal integer from 0 to 999999999, got ${echo(seedText)}`);
      const steps = traceKeyedWorkload(target[0], target[1], Number(seedText));
      const human = steps
        .map((s) =>
          [
            `batch ${s.batch}: ops from location ${s.start}, floor ${s.floor}`,
            ...s.ops.map((op, i) => `  ${s.start + i}: ${op}`),
            `  ops_root ${s.opsRoot}`,
            `  root     ${s.root}`,
          ].join("\n"),
        )
        .join("\n");
      report(opts.json === true, human, steps);
    });
}
