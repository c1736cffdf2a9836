// `cbqs check conformance commonware`: recomputes commonware's published conformance digests for the
// Merkle roots we port (MMR, BMT, QMDB any/current) with SHA-256 and compares them with the
// values listed in docs/reference/anchors.md. Exit 0 only if every digest matches.
import { echo } from "../bounds.js";
import {
  COMMONWARE_WORKLOADS,
  conformanceDigest,
  traceKeyedWorkload,
  type QmdbEncoding,
  type QmdbVariant,
} from "../../state/qmdb/conformance.js";
import { count } from "../format.js";
import { EXIT_OK, EXIT_REJECT, exitCodes, option, report, UsageError } from "./common.js";
import type { CommandSpec } from "./define.js";
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

export const commands: Readonly<Record<string, CommandSpec>> = {
  commonware: {
    description: "recompute commonware storage conformance digests (SHA-256) and compare with the published values",
    options: () => [option("--json", "print the results as JSON")],
    exits: exitCodes("all six digests match the published values", "a digest differs", "(not used: the command reads no input)", "after the digest in progress; nothing printed"),
    action: async (opts: { json?: boolean }) => {
      watchSignals();
      const rows = await stoppable(digestRows());
      const human = rows
        .map((r) => `${r.match ? "MATCH " : "DIFFER"} ${r.name} (${count(Number(r.nCases), "seed")})\n  ours:      ${r.ours}\n  published: ${r.published}`)
        .join("\n");
      const allMatch = rows.every((r) => r.match);
      report(opts.json === true, human, { allMatch, results: rows });
      process.exitCode = allMatch ? EXIT_OK : EXIT_REJECT;
    },
  },

  trace: {
    description: "print the keyed QMDB workload of one seed batch by batch: encoded ops, floor, roots",
    arguments: [
      ["<workload>", Object.keys(TRACEABLE).join(" | ")],
      ["<seed>", "seed (0-199 in the published digests)"],
    ],
    options: () => [option("--json", "print the trace as JSON")],
    exits: exitCodes("printed", "(not used)", "unknown workload, bad seed"),
    action: (workload: string, seedText: string, opts: { json?: boolean }) => {
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
    },
  },
};

/** Each published workload's digest recomputed and compared; a unit is one workload (src/steps.ts). */
function* digestRows(): Steps<ConformanceRow[]> {
  const rows: ConformanceRow[] = [];
  for (const w of COMMONWARE_WORKLOADS) {
    const ours = conformanceDigest(w.nCases, w.commit);
    rows.push({ name: w.name, nCases: String(w.nCases), ours, published: w.published, match: ours === w.published });
    yield;
  }
  return rows;
}
