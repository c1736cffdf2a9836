// What the corpus catches (docs/reference/formats/fixture.md §12): every planted mutant of scripts/mutants.ts
// (the fuzzer's table) run through `cbqs consume fixtures/corpus --t8n-server` as an external
// node would be. Prints, per mutant, the fixtures it fails and the first difference, or "not
// covered by the corpus". Exit 0 either way: the list measures the corpus; 2 on a broken run.
//
//   npm run build && node dist/scripts/consume-mutants.js [--corpus fixtures/corpus]
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { buildMutant, MUTANTS, removeMutant } from "./mutants.js";
import { scriptArgs, usageExit } from "./script-args.js";

const USAGE = `usage: consume-mutants [--corpus <dir>]
  --corpus <dir>   the corpus consumed (default fixtures/corpus)
`;

function corpusOption(): string {
  try {
    const args = scriptArgs(process.argv.slice(2), USAGE, ["corpus"], []);
    if (args === null) process.exit(0);
    return args.value("corpus") ?? "fixtures/corpus";
  } catch (err) {
    return usageExit("consume-mutants", (err as Error).message, USAGE);
  }
}

const corpus = corpusOption();
const root = fileURLToPath(new URL("../..", import.meta.url));
const CLI = join(root, "dist", "src", "cli.js");
const out = (line: string) => process.stdout.write(line + "\n");
let uncovered = 0;
out(`| mutant | bug | fixtures failed | first difference |`);
out(`| --- | --- | --- | --- |`);
for (const mutant of MUTANTS) {
  const dir = buildMutant(root, mutant);
  try {
    const r = spawnSync(process.execPath, [CLI, "consume", corpus, "--t8n-server", `node ${dir}/dist/src/cli.js t8n --server`, "--quiet"], { encoding: "utf8" });
    if (r.status !== 0 && r.status !== 1) throw new Error(`${mutant.name}: consume exit ${r.status}\n${r.stdout}${r.stderr}`);
    const failed = [...r.stdout.matchAll(/^MISMATCH ([^:]+): (.*)$/gm)].map((m) => ({ id: m[1]!, text: m[2]! }));
    if (failed.length === 0) uncovered++;
    const first = failed[0]?.text.replace(/\|/g, "\\|").replace(/0x([0-9a-f]{8})[0-9a-f]{40,}/g, "0x$1…") ?? "";
    out(`| ${mutant.name} | ${mutant.bug} | ${failed.length === 0 ? "**not covered by the corpus**" : failed.map((f) => f.id).join(", ")} | ${first} |`);
  } finally {
    removeMutant(dir);
  }
}
out(`\n${MUTANTS.length - uncovered} of ${MUTANTS.length} mutants fail at least one fixture; ${uncovered} not covered by the corpus`);
