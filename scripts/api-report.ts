// The public API report (docs/guides/use-the-library.md "The public surface"): one API Extractor report per entry
// point of package.json `exports`, committed under docs/api-report/, so a change to what the
// package exports shows in review. Reads the declarations `npm run build` emitted.
//
//   node dist/scripts/api-report.js            check: exit 1 naming each entry whose API changed
//   node dist/scripts/api-report.js --update   write the reports anew (then commit them)
import { existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { Extractor, ExtractorConfig, type ExtractorMessage } from "@microsoft/api-extractor";
import { scriptArgs, usageExit } from "./script-args.js";

/** The package root: the nearest folder up with a package.json (this runs compiled from dist/scripts/ and, in the test suite, from scripts/). */
function packageRoot(): string {
  let dir = import.meta.dirname;
  while (!existsSync(join(dir, "package.json"))) dir = dirname(dir);
  return dir;
}

const ROOT = packageRoot();

/** Entry points: the package subpath and the declaration file behind it. */
export const API_ENTRIES = [
  { subpath: "cbqs-emulator", file: "index" },
  { subpath: "cbqs-emulator/codec", file: "codec" },
  { subpath: "cbqs-emulator/state", file: "state" },
  { subpath: "cbqs-emulator/crypto", file: "crypto" },
  { subpath: "cbqs-emulator/client", file: "client" },
] as const;

export const REPORT_FOLDER = join(ROOT, "docs", "api-report");

/** The report file of an entry: cbqs-emulator.api.md, cbqs-emulator-codec.api.md, … */
export const reportName = (subpath: string) => `${subpath.replaceAll("/", "-")}.api.md`;

export interface EntryResult {
  subpath: string;
  /** The report differs from the committed one (check), or was rewritten (update). */
  changed: boolean;
  errors: string[];
}

/** Runs API Extractor on every entry; `update` writes the reports, otherwise they are compared. */
export function apiReports(update: boolean): EntryResult[] {
  if (update) mkdirSync(REPORT_FOLDER, { recursive: true });
  return API_ENTRIES.map(({ subpath, file }) => {
    const errors: string[] = [];
    const config = ExtractorConfig.prepare({
      configObject: {
        projectFolder: ROOT,
        mainEntryPointFilePath: join(ROOT, "dist", "src", "api", `${file}.d.ts`),
        compiler: {
          overrideTsconfig: {
            compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2022"], types: ["node"], strict: true, skipLibCheck: true },
            files: [join(ROOT, "dist", "src", "api", `${file}.d.ts`)],
          },
        },
        apiReport: {
          enabled: true,
          reportFileName: reportName(subpath),
          reportFolder: REPORT_FOLDER,
          reportTempFolder: join(ROOT, ".cache", "api-report"),
        },
        docModel: { enabled: false },
        dtsRollup: { enabled: false },
        tsdocMetadata: { enabled: false },
        messages: {
          // Release tags (@public/@beta) are not used: everything an entry point exports is public.
          extractorMessageReporting: { "ae-missing-release-tag": { logLevel: "none" as never }, "ae-forgotten-export": { logLevel: "none" as never, addToApiReportFile: true } },
          tsdocMessageReporting: { default: { logLevel: "none" as never } },
          compilerMessageReporting: { default: { logLevel: "error" as never } },
        },
      },
      configObjectFullPath: undefined,
      packageJsonFullPath: join(ROOT, "package.json"),
    });
    const result = Extractor.invoke(config, {
      localBuild: update,
      // Our own lines instead of API Extractor's console output; its errors and warnings fail the run.
      messageCallback: (m: ExtractorMessage) => {
        if ((m.logLevel === "error" || m.logLevel === "warning") && !m.messageId.startsWith("console-")) errors.push(m.text);
        m.handled = true;
      },
    });
    return { subpath, changed: result.apiReportChanged, errors: result.succeeded || result.apiReportChanged ? errors : [...errors, "API Extractor failed"] };
  });
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) {
  const USAGE = "usage: api-report [--update]\n  check the committed API reports (docs/api-report/) against the built declarations; --update rewrites them\n";
  let update = false;
  try {
    const args = scriptArgs(process.argv.slice(2), USAGE, [], ["update"]);
    if (args === null) process.exit(0);
    update = args.flag("update");
  } catch (err) {
    usageExit("api-report", (err as Error).message, USAGE);
  }
  let failed = false;
  for (const r of apiReports(update)) {
    for (const e of r.errors) process.stderr.write(`${r.subpath}: ${e}\n`);
    if (r.errors.length > 0) failed = true;
    else if (r.changed && !update) {
      failed = true;
      process.stdout.write(`${r.subpath}: its public API differs from docs/api-report/${reportName(r.subpath)} (run node dist/scripts/api-report.js --update and commit the report)\n`);
    } else process.stdout.write(`${r.subpath}: ${update && r.changed ? "report written" : "unchanged"}\n`);
  }
  process.exitCode = failed ? 1 : 0;
}
