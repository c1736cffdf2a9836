// `cbqs gas-vectors …`: the CIP-39 §18.1 gas schedule, canonical plans and vectors.
//   generate [-o file]   re-derive cip-39-gas-vectors-v1.json from the engine
//   verify [file]        re-execute every vector, compare every number, check the pinned SHA-256
//   schedule [-o file]   print gas-vectors/SCHEDULE.md (generated from the cost module)
//   plans [-o file]      print docs/canonical-plans.md (observed per-path state-I/O plans)
import type { Command } from "commander";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { InputError, readFileBytes } from "../json/read.js";
import { Output, writing } from "../json/write.js";
import { ARTIFACT_PATH, ArtifactError, generateArtifact, verifyArtifact, type VerifyResult } from "../gas/artifact.js";
import { plansMarkdown } from "../gas/plans.js";
import { count } from "../harness/progress.js";
import { scheduleMarkdown } from "../gas/schedule.js";
import { EXIT_OK, EXIT_REJECT, exitCodes, report, outputOption } from "./common.js";

export function output(text: string, file: string): void {
  writing(new Output(file), (out) => out.write(text));
}

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** `verifyArtifact` of a file (as `npm start` checks it too); unusable input is an InputError naming it. */
export function verifyArtifactFile(file: string): VerifyResult {
  try {
    // The SHA-256 is over the file's exact bytes: they are read as they are (gzip aside).
    return verifyArtifact(STRICT_UTF8.decode(readFileBytes(file)));
  } catch (err) {
    if (err instanceof ArtifactError) throw new InputError(file, "", err.message);
    if (err instanceof TypeError) throw new InputError(file, "", "not valid UTF-8");
    throw err;
  }
}

export function register(program: Command): void {
  const gas = program
    .command("gas-vectors")
    .description("CIP-39 §18.1 gas schedule, canonical plans and gas vectors")
    .addHelpText("after", exitCodes(
        "generate, schedule, plans: written; verify: every vector re-executes to its recorded numbers and the file hashes to the pinned SHA-256",
        "verify: a number or the digest differs",
        "verify: unreadable or malformed artifact; generate, schedule, plans: unwritable output; an unknown subcommand",
      ));
  gas
    .command("generate")
    .description("re-derive the gas-vector artifact from the engine")
    .addOption(outputOption("-o, --output <file>", "output file; - is stdout", "-"))
    .addHelpText("after", exitCodes("the artifact is written", "(not used)", "unwritable output"))
    .action((opts: { output: string }) => output(generateArtifact(), opts.output));
  gas
    .command("verify")
    .description("re-execute every vector, compare every number, and check the file's SHA-256 against the pinned digest")
    .argument("[file]", `the artifact; when omitted, this installation's ${ARTIFACT_PATH} (from any working directory)`)
    .option("--json", "print the result as JSON")
    .addHelpText("after", exitCodes("every vector re-executes to its recorded numbers and the file hashes to the pinned SHA-256", "a number or the digest differs", "unreadable or malformed artifact"))
    .action((given: string | undefined, opts: { json?: boolean }) => {
      const file = given ?? bundledArtifact();
      const result = verifyArtifactFile(file);
      const human = result.ok ? `ok: ${count(result.vectors, "vector")} re-executed, sha256 ${result.sha256}` : `mismatch: ${result.reason}`;
      // scenario-format §1: integers are decimal strings on output.
      report(opts.json === true, human, result.ok ? { ...result, vectors: String(result.vectors) } : result);
      process.exitCode = result.ok ? EXIT_OK : EXIT_REJECT;
    });
  gas
    .command("schedule")
    .description("print gas-vectors/SCHEDULE.md, generated from the cost module")
    .addOption(outputOption("-o, --output <file>", "output file; - is stdout", "-"))
    .addHelpText("after", exitCodes("the schedule is written", "(not used)", "unwritable output"))
    .action((opts: { output: string }) => output(scheduleMarkdown(), opts.output));
  gas
    .command("plans")
    .description("print docs/canonical-plans.md: every instruction path's observed state-I/O plan")
    .addOption(outputOption("-o, --output <file>", "output file; - is stdout", "-"))
    .addHelpText("after", exitCodes("the plans are written", "(not used)", "unwritable output"))
    .action((opts: { output: string }) => output(plansMarkdown(), opts.output));
}

/** The artifact shipped with this installation: found from this module's location, not the working directory. */
function bundledArtifact(): string {
  // The package root is 2 (src/cli/gas.ts) or 3 (dist/src/cli/gas.js) folders up.
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 4; up++, dir = dirname(dir)) {
    const candidate = join(dir, ARTIFACT_PATH);
    if (existsSync(candidate)) return candidate;
  }
  return ARTIFACT_PATH;
}
