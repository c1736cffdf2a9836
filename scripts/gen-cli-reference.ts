// Writes docs/reference/cli.md from the command tree (src/cli/reference.ts).
// test/cli/reference.test.ts fails when the committed file is not this output, so re-run it after
// changing a command, an option, a help text or an exit code:
//
//   npm run build && node dist/scripts/gen-cli-reference.js
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { buildProgram } from "../src/cli/program.js";
import { CLI_REFERENCE_PATH, cliReference } from "../src/cli/reference.js";
import { checkScriptArgs } from "./script-args.js";

checkScriptArgs(process.argv.slice(2), `usage: gen-cli-reference (no options): writes ${CLI_REFERENCE_PATH}`, []);
mkdirSync(dirname(CLI_REFERENCE_PATH), { recursive: true });
writeFileSync(CLI_REFERENCE_PATH, cliReference(await buildProgram("reference")));
process.stderr.write(`wrote ${CLI_REFERENCE_PATH}\n`);
