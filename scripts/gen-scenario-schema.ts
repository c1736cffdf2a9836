// Writes fixtures/schema/cbqs-scenario-v1.schema.json from the codec declarations
// (src/scenario/schema.ts). test/scenario/schema.test.ts fails when the committed file is not
// this output, so re-run it after changing an instruction's arguments:
//
//   npm run build && node dist/scripts/gen-scenario-schema.js
import { writeFileSync } from "node:fs";
import { scenarioSchemaText } from "../src/scenario/schema.js";
import { checkScriptArgs } from "./script-args.js";

export const SCENARIO_SCHEMA_PATH = "fixtures/schema/cbqs-scenario-v1.schema.json";

checkScriptArgs(process.argv.slice(2), `usage: gen-scenario-schema (no options): writes ${SCENARIO_SCHEMA_PATH}`, []);
writeFileSync(SCENARIO_SCHEMA_PATH, scenarioSchemaText());
process.stderr.write(`wrote ${SCENARIO_SCHEMA_PATH}\n`);
