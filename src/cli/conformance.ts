// `cbqs conformance commonware`: recomputes commonware's published conformance digests for the
// Merkle roots we port (MMR, BMT, QMDB any/current) with SHA-256 and compares them with the
// values of shared/anchors.md. Exit 0 only if every digest matches.
import type { Command } from "commander";
import { COMMONWARE_WORKLOADS, conformanceDigest } from "../../state/conformance.js";
import { EXIT_OK, EXIT_REJECT, report } from "./common.js";

interface ConformanceRow {
  name: string;
  nCases: number;
  ours: string;
  published: string;
  match: boolean;
}

export function register(program: Command): void {
  const conformance = program.command("conformance").description("external conformance checks");
  conformance
    .command("commonware")
    .description("recompute commonware storage conformance digests (SHA-256) and compare with the published values")
    .option("--json", "print the results as JSON")
    .action((opts: { json?: boolean }) => {
      const rows: ConformanceRow[] = COMMONWARE_WORKLOADS.map((w) => {
        const ours = conformanceDigest(w.nCases, w.commit);
        return { name: w.name, nCases: w.nCases, ours, published: w.published, match: ours === w.published };
      });
      const human = rows
        .map((r) => `${r.match ? "MATCH " : "DIFFER"} ${r.name} (${r.nCases} seeds)\n  ours:      ${r.ours}\n  published: ${r.published}`)
        .join("\n");
      const allMatch = rows.every((r) => r.match);
      report(opts.json === true, human, { allMatch, results: rows });
      process.exitCode = allMatch ? EXIT_OK : EXIT_REJECT;
    });
}
