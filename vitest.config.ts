import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 120_000,
    pool: "forks",
    // Vitest's default is one worker fewer than the cores: one on the 2-core CI machine, where the
    // suite then ran file after file (510 s). Many tests wait on child processes, sockets and disk,
    // so two workers finish it in 330 s on the same machine (docs/engineering/testing.md "Suite time").
    maxWorkers: 2,
  },
});
