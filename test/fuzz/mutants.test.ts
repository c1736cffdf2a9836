// Proof that `cbqs fuzz` finds real consensus bugs: every mutant of scripts/mutants.ts (a copy
// of dist/ with one plausible bug patched in) is found within a bounded number of runs and
// shrunk to a small chain whose fixture replays against this emulator. The mutant's t8n runs
// in this process (scripts/mutants.ts moduleTarget) to keep the suite fast; the chains and the
// comparison are the ones a `node <copy>/dist/src/cli.js t8n` child gets (docs/fuzzing.md
// measures that path with scripts/fuzz-mutants.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { fuzz, SHRINK_BUDGET } from "../../src/fuzz/fuzz.js";
import { writeReport } from "../../src/fuzz/report.js";
import { buildMutant, copyDist, moduleTarget, MUTANTS, removeMutant } from "../../scripts/mutants.js";
import { cbqs } from "../cli/program.js";
import { requireFreshDist } from "./dist.js";

/**
 * Seed 1 finds each mutant within 50 runs of 8 blocks (the two owner-limit mutants wait for a
 * small cbqs.max_streams_per_owner; docs/fuzzing.md §8); the bound leaves room.
 */
const SEED = 1;
const MAX_RUNS = 60;
const BLOCKS = 8;
const options = { seed: SEED, firstRun: 0, runs: MAX_RUNS, blocks: BLOCKS, compare: { stateRoot: true }, shrinkBudget: SHRINK_BUDGET };

beforeAll(requireFreshDist);

describe("cbqs fuzz against mutants (scripts/mutants.ts)", () => {
  it("finds nothing in an unmutated copy of dist/ (the harness itself is faithful)", async () => {
    const dir = copyDist(process.cwd(), "unmutated");
    try {
      const r = await fuzz(await moduleTarget(dir), { ...options, runs: 3 });
      expect(r.finding).toBeNull();
      expect(r.runsDone).toBe(3);
    } finally {
      removeMutant(dir);
    }
  });

  for (const mutant of MUTANTS) {
    it(`finds and shrinks ${mutant.name}: ${mutant.bug}`, async () => {
      const dir = buildMutant(process.cwd(), mutant);
      const out = mkdtempSync(join(tmpdir(), "cbqs-fuzz-report-"));
      try {
        const r = await fuzz(await moduleTarget(dir), options);
        const f = r.finding!;
        expect(f, "found").not.toBeNull();
        expect(f.run).toBeLessThan(MAX_RUNS);
        // Seed 1 shrinks each to at most 5 blocks and 5 transactions (a top-up past a deadline needs the blocks that reach it).
        expect(f.shrunk.blocks).toBeLessThanOrEqual(5);
        expect(f.shrunk.txs).toBeLessThanOrEqual(5);
        expect(f.divergence.text).toMatch(/^block \d+/);
        // The shrunk chain is a fixture this emulator replays cleanly: the node under test is the one that differs.
        writeReport(out, f, { mode: "t8n", command: "in-process mutant", blocks: BLOCKS, stateRoot: true });
        const replay = await cbqs("replay", join(out, "fixture.json"), "--quiet");
        expect(replay.exitCode, replay.out).toBe(0);
      } finally {
        removeMutant(dir);
        rmSync(out, { recursive: true, force: true });
      }
    });
  }
});
