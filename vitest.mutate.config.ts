// The suite Stryker runs against each mutant (docs/testing.md): the whole suite minus the tests
// that re-execute the filled corpus (replay, t8n, program, long chain, README examples). Those
// corpora are filled from the scenarios that test/scenario/scenarios.test.ts already runs, so
// they would catch nothing more, at several seconds per mutant.
import { defineConfig, mergeConfig } from "vitest/config";
import base from "./vitest.config.js";

// Mutating the replay harness itself needs its own tests back.
const mutatingReplay = process.env.MUTATE === "replay" || (process.env.MUTATE_FILE ?? "").includes("src/harness/replay.ts");

export default mergeConfig(
  base,
  defineConfig({
    test: {
      exclude: [
        "**/node_modules/**",
        ...(mutatingReplay ? [] : ["test/harness/replay.test.ts"]),
        "test/harness/t8n.test.ts",
        "test/harness/program.test.ts",
        "test/harness/long-chain.test.ts",
        "test/cli/readme.test.ts",
      ],
    },
  }),
);
