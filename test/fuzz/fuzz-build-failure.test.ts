// Our own failure building the next block (src/fuzz/build.ts throws FuzzInternalError when our
// t8n and the reference chain disagree) while the target is still working on this one, and then
// fails too: the lane reports our failure, by seed and run, and the target's failure that comes
// after it is not left unhandled (in the CLI an unhandled rejection ends the process with a stack
// instead of the error line). Hand-reviewed mutants of src/fuzz/fuzz.ts.
import { describe, expect, it, vi } from "vitest";
import { FuzzLane } from "../../src/fuzz/fuzz.js";
import { perCall, TargetError, type T8nInputs, type TargetOutput } from "../../src/target/target.js";

const fail = vi.hoisted(() => ({ atBlock: null as number | null }));

vi.mock("../../src/fuzz/build.js", async (importOriginal) => {
  const build = await importOriginal<typeof import("../../src/fuzz/build.js")>();
  class FailingBuilder extends build.ChainBuilder {
    override build(): ReturnType<typeof build.ChainBuilder.prototype.build> {
      if (this.fixture.blocks.length === fail.atBlock) throw new build.FuzzInternalError("our builder's bug");
      return super.build();
    }
  }
  return { ...build, ChainBuilder: FailingBuilder };
});

describe("our failure building the next block while the target fails on this one (src/fuzz/fuzz.ts)", () => {
  it("the lane fails with our error, named by seed and run; the target's later failure is handled", async () => {
    fail.atBlock = 1; // the second block, built while the target works on the first
    let rejected = 0;
    const target = perCall({
      // The target fails only after our failure was thrown: a macrotask later.
      run: (_inputs: T8nInputs) =>
        new Promise<TargetOutput>((_resolve, reject) =>
          setTimeout(() => {
            rejected++;
            reject(new TargetError("exit 1", ""));
          }, 50),
        ),
      close: () => undefined,
    });
    try {
      const lane = new FuzzLane(target, { seed: 5, blocks: 3, compare: { stateRoot: true }, shrinkBudget: 1, stopped: () => false });
      await expect(lane.run(0)).rejects.toThrow(/^seed 5 run 0: our builder's bug$/);
      // Let the target's rejection happen while this test still runs.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(rejected).toBe(1);
    } finally {
      fail.atBlock = null;
    }
  });
});
