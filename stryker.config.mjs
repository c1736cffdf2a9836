// Mutation testing (docs/engineering/testing.md): `npm run mutate` mutates every module below; one module at
// a time with `MUTATE=<name> npm run mutate`. Not part of `npm test` or CI.
const MODULES = {
  instructions: ["instructions/**/*.ts"],
  engine: ["src/engine/**/*.ts"],
  proof: ["state/qmdb/proof.ts"],
  crypto: ["src/crypto/**/*.ts"],
  node: ["src/node/**/*.ts"],
  store: ["state/lmdb/**/*.ts", "state/chain-db/**/*.ts", "state/commitment/worker-commitment.ts", "state/commitment/commit-worker.ts"],
  replay: ["src/harness/replay.ts"],
  fuzz: ["src/fuzz/**/*.ts"],
  client: ["src/client/**/*.ts"],
  consume: ["src/consume/**/*.ts"],
  jobs: ["src/jobs/**/*.ts"],
  report: ["src/report/**/*.ts"],
  "broker-kit": ["src/broker-kit/**/*.ts"],
  api: ["src/api/**/*.ts"],
  // The node's services added with the devnet (a subset of `node`, for runs narrowed to their tests).
  "node-services": ["src/node/subscriptions.ts", "src/node/metrics.ts", "src/node/explorer-reads.ts", "src/chain-node/devnet.ts", "src/chain-node/fixture-export.ts"],
  "corpus-index": ["src/harness/corpus-index.ts"],
};

const name = process.env.MUTATE ?? "all";
if (name !== "all" && !(name in MODULES)) {
  throw new Error(`MUTATE=${name}: expected one of ${Object.keys(MODULES).join(", ")} (or unset for all)`);
}
// MUTATE_FILE=<path>[,<path>…]: mutate those files only, with their own incremental file and
// reports, so per-file runs neither overwrite each other's reports nor invalidate each other's
// incremental results. Several small files in one run share one dry run.
const files = process.env.MUTATE_FILE?.split(",").filter((f) => f !== "");
const tag = files?.length ? `file/${files.map((f) => f.replace(/\.ts$/, "").replaceAll("/", "_")).join("+")}` : name;

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  mutate: files?.length ? files : name === "all" ? Object.values(MODULES).flat() : MODULES[name],
  // The tests that run the compiled `cbqs` check that dist/ (explorer included) is newer than the sources: build in the sandbox.
  buildCommand: "npm run build",
  testRunner: "vitest",
  vitest: { configFile: "vitest.mutate.config.ts" },
  checkers: ["typescript"],
  tsconfigFile: "tsconfig.json",
  // Two cores, shared: one test runner (plus the type checker) unless MUTATE_CONCURRENCY says more.
  concurrency: Number(process.env.MUTATE_CONCURRENCY ?? 1),
  // Generous: the machine is shared, and a slow run must not pass for a killed mutant.
  timeoutFactor: 3,
  timeoutMS: 30_000,
  dryRunTimeoutMinutes: 60,
  // A static mutant (module-level tables and constants) re-runs the whole suite; those tables are
  // pinned by the gas-vector digest and the errors/params documentation tests instead.
  ignoreStatic: true,
  incremental: true,
  incrementalFile: `.cache/stryker/${tag}.incremental.json`,
  reporters: ["clear-text", "progress-append-only", "html", "json"],
  htmlReporter: { fileName: `.cache/stryker/${tag}.html` },
  jsonReporter: { fileName: `.cache/stryker/${tag}.json` },
  tempDirName: ".cache/stryker-tmp",
  cleanTempDir: "always",
};
