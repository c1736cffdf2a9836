// `cbqs gas-vectors …`: the CIP-39 §18.1 gas schedule, canonical plans and vectors.
//   generate [-o file]   re-derive cip-39-gas-vectors-v1.json from the engine
//   verify [file]        re-execute every vector, compare every number, check the pinned SHA-256
//   schedule [-o file]   print gas-vectors/SCHEDULE.md (generated from the cost module)
//   plans [-o file]      print docs/reference/canonical-plans.md (observed per-path state-I/O plans)
import type { Command } from "commander";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { InputError, readFileBytes } from "../json/read.js";
import { Output, writing } from "../json/write.js";
import { ARTIFACT_PATH, ArtifactError, artifactChecks, artifactVerdict, generateArtifact, type ArtifactCheck, type CheckResult, type VerifyResult } from "../gas/artifact.js";
import { plansMarkdown } from "../gas/plans.js";
import { Stopwatch } from "../harness/progress.js";
import { count } from "../format.js";
import { scheduleMarkdown } from "../gas/schedule.js";
import { checkReportFiles, EXIT_OK, EXIT_REJECT, exitCodes, report, outputOption, reportOptions, withReports } from "./common.js";
import type { Suite } from "../report/model.js";
import { shellWord } from "../report/text.js";

export function output(text: string, file: string): void {
  writing(new Output(file), (out) => out.write(text));
}

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** `artifactChecks` of a file; unusable input is an InputError naming it. */
function artifactChecksOfFile(file: string): { sha256: string; checks: ArtifactCheck[] } {
  try {
    // The SHA-256 is over the file's exact bytes: they are read as they are (gzip aside).
    return artifactChecks(STRICT_UTF8.decode(readFileBytes(file)));
  } catch (err) {
    if (err instanceof ArtifactError) throw new InputError(file, "", err.message);
    if (err instanceof TypeError) throw new InputError(file, "", "not valid UTF-8");
    throw err;
  }
}

/** Every check of the artifact `file`, each timed (a report's seconds). */
function runChecks(file: string): { sha256: string; results: Array<CheckResult & { seconds: number }> } {
  const { sha256, checks } = artifactChecksOfFile(file);
  const results = checks.map((check) => {
    const watch = new Stopwatch();
    const difference = check.run();
    return { check, difference, seconds: watch.seconds() };
  });
  return { sha256, results };
}

/** The artifact `file` verified (as `npm start` checks it too); unusable input is an InputError naming it. */
export function verifyArtifactFile(file: string): VerifyResult {
  const { sha256, results } = runChecks(file);
  return artifactVerdict(sha256, results);
}

/** `verify`'s report: one suite, a case per check — the cost table, each vector by its id, the canonical form, the digest. */
function verifySuite(file: string, given: string | undefined, results: ReadonlyArray<CheckResult & { seconds: number }>, summary: string, started: Date): Suite {
  const reproduce = `cbqs gas-vectors verify${given === undefined ? "" : ` ${shellWord(given)}`}`;
  return {
    name: `cbqs gas-vectors verify ${file}`,
    classname: "cbqs.gas-vectors",
    cases: results.map((r) =>
      r.difference === null
        ? { id: r.check.name, status: "passed", seconds: r.seconds }
        : { id: r.check.name, status: "failed", seconds: r.seconds, type: "mismatch", message: r.difference, reproduce },
    ),
    seconds: results.reduce((x, r) => x + r.seconds, 0),
    timestamp: started,
    summary,
  };
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
  const verify = gas
    .command("verify")
    .description("re-execute every vector, compare every number, and check the file's SHA-256 against the pinned digest")
    .argument("[file]", `the artifact; when omitted, this installation's ${ARTIFACT_PATH} (from any working directory)`)
    .option("--json", "print the result as JSON");
  reportOptions(verify, "a testcase per vector, and one each for the cost table, the canonical form and the pinned SHA-256")
    .addHelpText("after", exitCodes("every vector re-executes to its recorded numbers and the file hashes to the pinned SHA-256", "a number or the digest differs", "unreadable or malformed artifact; a --junit/--report file that cannot be written"))
    .action(async (given: string | undefined, opts: { json?: boolean; junit?: string; report?: string }) => {
      const started = new Date();
      checkReportFiles(opts);
      const file = given ?? bundledArtifact();
      const { sha256, results } = runChecks(file);
      const result = artifactVerdict(sha256, results);
      const human = result.ok ? `ok: ${count(result.vectors, "vector")} re-executed, sha256 ${result.sha256}` : `mismatch: ${result.reason}`;
      // scenario-format §1: integers are decimal strings on output.
      report(opts.json === true, human, result.ok ? { ...result, vectors: String(result.vectors) } : result);
      const verdict = result.ok ? EXIT_OK : EXIT_REJECT;
      process.exitCode = await withReports(opts, verdict, () => [verifySuite(file, given, results, human, started)], { title: "cbqs gas-vectors verify", caseLabel: "check" });
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
