// `cbqs gas-vectors …`: the CIP-39 §18.1 gas schedule, canonical plans and vectors.
//   generate [-o file]   re-derive cip-39-gas-vectors-v1.json from the engine
//   verify [file]        re-execute every vector, compare every number, check the pinned SHA-256
//   schedule [-o file]   print gas-vectors/SCHEDULE.md (generated from the cost module)
//   plans [-o file]      print docs/canonical-plans.md (observed per-path state-I/O plans)
import { writeFileSync } from "node:fs";
import type { Command } from "commander";
import { ARTIFACT_PATH, ArtifactError, generateArtifact, verifyArtifact } from "../gas/artifact.js";
import { plansMarkdown } from "../gas/plans.js";
import { scheduleMarkdown } from "../gas/schedule.js";
import { EXIT_OK, EXIT_REJECT, readTextFile, UsageError, report } from "./common.js";

export function output(text: string, file: string | undefined): void {
  if (file === undefined) {
    process.stdout.write(text);
    return;
  }
  try {
    writeFileSync(file, text);
  } catch (err) {
    throw new UsageError(`cannot write ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

export function register(program: Command): void {
  const gas = program.command("gas-vectors").description("CIP-39 §18.1 gas schedule, canonical plans and gas vectors");
  gas
    .command("generate")
    .description("re-derive the gas-vector artifact from the engine")
    .option("-o, --output <file>", "write to this file instead of stdout")
    .action((opts: { output?: string }) => output(generateArtifact(), opts.output));
  gas
    .command("verify")
    .description("re-execute every vector, compare every number, and check the file's SHA-256 against the pinned digest")
    .argument("[file]", "the artifact", ARTIFACT_PATH)
    .option("--json", "print the result as JSON")
    .action((file: string, opts: { json?: boolean }) => {
      const text = readTextFile(file);
      let result;
      try {
        result = verifyArtifact(text);
      } catch (err) {
        if (err instanceof ArtifactError) throw new UsageError(`${file}: ${err.message}`);
        throw err;
      }
      const human = result.ok ? `ok: ${result.vectors} vectors re-executed, sha256 ${result.sha256}` : `mismatch: ${result.reason}`;
      // scenario-format §1: integers are decimal strings on output.
      report(opts.json === true, human, result.ok ? { ...result, vectors: String(result.vectors) } : result);
      process.exitCode = result.ok ? EXIT_OK : EXIT_REJECT;
    });
  gas
    .command("schedule")
    .description("print gas-vectors/SCHEDULE.md, generated from the cost module")
    .option("-o, --output <file>", "write to this file instead of stdout")
    .action((opts: { output?: string }) => output(scheduleMarkdown(), opts.output));
  gas
    .command("plans")
    .description("print docs/canonical-plans.md: every instruction path's observed state-I/O plan")
    .option("-o, --output <file>", "write to this file instead of stdout")
    .action((opts: { output?: string }) => output(plansMarkdown(), opts.output));
}
