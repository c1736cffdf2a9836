// Writing `--junit <file>` and `--report <file>` (docs/reference/formats/fixture.md "Reports: --junit and
// --report"): the command builds its suites (src/report/model.ts), this writes them by the one
// output rule (src/output-file.ts: a temporary name renamed into place, so a report is never
// half-written). Loaded only when one of the two options is given.
import { htmlReport, type HtmlMeta } from "../report/html.js";
import { junitXml } from "../report/junit.js";
import type { Suite } from "../report/model.js";
import { Output, OutputError, writing } from "../json/write.js";
import { errorLine, EXIT_BAD_INPUT, EXIT_REJECT } from "./common.js";

/**
 * Writes the reports asked for and returns the exit code: `verdict`, or 2 when a report could not
 * be written (one error line each; the disk filled up after the path was checked) — except that a
 * verdict of 1 stays 1: a finding is never hidden behind a failed write, as in `replay`.
 */
export function writeReports(files: { junit?: string; report?: string }, suites: readonly Suite[], meta: HtmlMeta, verdict: number): number {
  let failed = false;
  const write = (path: string | undefined, text: () => string): void => {
    if (path === undefined) return;
    try {
      writing(new Output(path), (out) => out.write(text()));
    } catch (err) {
      if (!(err instanceof OutputError)) throw err;
      process.stderr.write(errorLine(err));
      failed = true;
    }
  };
  write(files.junit, () => junitXml(suites));
  write(files.report, () => htmlReport(suites, meta));
  return failed && verdict !== EXIT_REJECT ? EXIT_BAD_INPUT : verdict;
}
