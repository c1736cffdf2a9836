// Proof that `cbqs fuzz` finds real consensus bugs: every mutant of scripts/mutants.ts (a copy
// of dist/ with one plausible bug patched in) is found within a bounded number of runs and
// shrunk to a small chain whose fixture replays against this emulator. Each mutant runs as an
// external node would: its own `node <copy>/dist/src/cli.js t8n --server` (cbqs-t8n-server/v1).
// That is also the fast path here: the mutant works in its own process, in parallel with ours,
// and its modules skip vitest's transform (loaded in-process, the file took twice as long).
// docs/reference/fuzzer.md §8 measures every seed with scripts/fuzz-mutants.ts.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { fuzz, SHRINK_BUDGET } from "../../src/fuzz/fuzz.js";
import { writeReport } from "../../src/fuzz/report.js";
import { buildMutant, copyDist, mutantServer, mutantT8n, MUTANTS, removeMutant } from "../../scripts/mutants.js";
import { cbqs } from "../cli/program.js";
import { requireFreshDist } from "./dist.js";

/**
 * Seed 1 finds each mutant within 50 runs of 8 blocks (the two owner-limit mutants wait for a
 * small cbqs.max_streams_per_owner; docs/reference/fuzzer.md §8); the bound leaves room.
 */
const SEED = 1;
const MAX_RUNS = 60;
const BLOCKS = 8;
const options = { seed: SEED, firstRun: 0, runs: MAX_RUNS, blocks: BLOCKS, compare: { stateRoot: true }, shrinkBudget: SHRINK_BUDGET };

beforeAll(requireFreshDist);

describe("cbqs fuzz against mutants (scripts/mutants.ts)", () => {
  it("finds nothing in an unmutated copy of dist/ (the harness itself is faithful)", async () => {
    const dir = copyDist(process.cwd(), "unmutated");
    const server = mutantServer(dir);
    try {
      const r = await fuzz(server, { ...options, runs: 3 });
      expect(r.finding).toBeNull();
      expect(r.runsDone).toBe(3);
    } finally {
      await server.close();
      removeMutant(dir);
    }
  });

  for (const mutant of MUTANTS) {
    it(`finds and shrinks ${mutant.name}: ${mutant.bug}`, async () => {
      const dir = buildMutant(process.cwd(), mutant);
      const server = mutantServer(dir);
      const out = mkdtempSync(join(tmpdir(), "cbqs-fuzz-report-"));
      try {
        const r = await fuzz(server, options);
        const f = r.finding!;
        expect(f, "found").not.toBeNull();
        expect(f.run).toBeLessThan(MAX_RUNS);
        // Seed 1 shrinks each to at most 8 blocks and 8 transactions (a top-up past a deadline, or a
        // non-owner's update of a stream already Suspended, needs the blocks that reach that state).
        expect(f.shrunk.blocks).toBeLessThanOrEqual(8);
        expect(f.shrunk.txs).toBeLessThanOrEqual(8);
        expect(f.divergence.text).toMatch(/^block \d+/);
        // The shrunk chain is a fixture this emulator replays cleanly: the node under test is the one that differs.
        writeReport(out, f, { mode: "t8n-server", command: `${mutantT8n(dir)} --server`, blocks: BLOCKS, stateRoot: true });
        const replay = await cbqs("replay", join(out, "fixture.json"), "--quiet");
        expect(replay.exitCode, replay.out).toBe(0);
      } finally {
        await server.close();
        removeMutant(dir);
        rmSync(out, { recursive: true, force: true });
      }
    });
  }
});
