// A finding whose report cannot be written for a reason of ours (src/fuzz/report.ts refuses a
// shrunk fixture that does not replay: a FuzzInternalError) is the fuzzer's own failure, thrown
// out of LocalLane.finish (exit 2 with our stack), never worded as "cannot write the report" like a
// full disk. Only an OutputError or a system error (one with a code) is a write error.
// Hand-reviewed mutants of src/fuzz/lanes.ts.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { FuzzInternalError } from "../../src/fuzz/build.js";
import { LaneFailure, LocalLane } from "../../src/fuzz/lanes.js";
import { zeroRootCommand } from "./commands.js";

vi.mock("../../src/fuzz/report.js", async (importOriginal) => {
  const report = await importOriginal<typeof import("../../src/fuzz/report.js")>();
  const { FuzzInternalError: Internal } = await import("../../src/fuzz/build.js");
  return {
    ...report,
    writeReport: () => {
      throw new Internal("the shrunk fixture does not replay: block 1 state_root");
    },
  };
});

let scratch: string;
beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), "cbqs-fuzz-lanes-report-"));
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

describe("our own failure writing a finding's report (src/fuzz/lanes.ts reportFinding)", () => {
  it("is thrown as it is, not reported as a write error", async () => {
    const l = new LocalLane(
      { meta: { mode: "t8n", command: zeroRootCommand(scratch), blocks: 1, stateRoot: true }, timeout: 60, seed: 1, shrinkBudget: 1, out: join(scratch, "report") },
      { onShrink: () => undefined },
    );
    try {
      expect(await l.run(0)).toMatchObject({ divergent: true });
      const err = await l.finish(0).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(FuzzInternalError);
      expect(err).not.toBeInstanceOf(LaneFailure);
      expect((err as Error).message).toBe("the shrunk fixture does not replay: block 1 state_root");
    } finally {
      await l.close();
    }
  }, 120_000);
});
