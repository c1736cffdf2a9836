// The suite Stryker runs against each mutant (docs/engineering/testing.md): the whole suite minus the tests
// that re-execute the filled corpus (replay, t8n, program, long chain, README and guide examples). Those
// corpora are filled from the scenarios that test/scenario/scenarios.test.ts already runs, so
// they would catch nothing more, at several seconds per mutant.
import { defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config.js";

// MUTATE_TESTS=<glob>[,<glob>…] narrows the suite to the tests that exercise the mutated files
// (test/node/** for src/node/): the dry run of the whole suite costs 10–15 minutes here, and a
// narrower suite can only miss kills — it lowers a score, never raises one.
const only = process.env.MUTATE_TESTS?.split(",").filter((g) => g !== "");
// Mutating the replay harness itself needs its own tests back.
const mutatingReplay = process.env.MUTATE === "replay" || (process.env.MUTATE_FILE ?? "").includes("src/harness/replay.ts");

const config = mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: [
        "**/node_modules/**",
        ...(mutatingReplay ? [] : ["test/harness/replay.test.ts"]),
        "test/harness/t8n.test.ts",
        "test/harness/program.test.ts",
        "test/harness/long-chain.test.ts",
        "test/cli/cli-tour.test.ts",
        "test/docs/readme.test.ts",
        "test/docs/guides.test.ts",
      ],
    },
  }),
);
// mergeConfig concatenates arrays: the narrowed list replaces the base's include, not adds to it.
if (only?.length) config.test!.include = only;

export default config;
