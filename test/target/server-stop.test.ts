// How long a t8n server has to exit when it is stopped (src/target/server-target.ts, D-0180): at
// the end of its work it gets EOF and as long as an answer may take (its --timeout), so its own
// clean-up (a trace, a profile, a database's close) is not cut; after a stop signal it gets
// STOP_GRACE_MS and then its process group is killed. The server here is ours, wrapped in a shell
// that cleans up for 3 s after the server ends and then leaves a marker.
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { STOP_GRACE_MS } from "../../src/target/bounded.js";
import { ServerTarget } from "../../src/target/server-target.js";
import { requireFreshDist } from "../fuzz/dist.js";

let scratch: string;
beforeAll(requireFreshDist);
beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), "cbqs-server-stop-"));
});
afterEach(() => rmSync(scratch, { recursive: true, force: true }));

/** Our server, then 3 s of clean-up after it ends, then `marker`. */
function slowToExit(marker: string): string {
  return `node dist/src/cli.js t8n --server; sleep 3; touch '${marker}'`;
}

describe("a t8n server asked to stop (src/target/server-target.ts close)", () => {
  it("at the end of its work: EOF, and as long to exit as to answer (--timeout), so its clean-up finishes", async () => {
    expect(STOP_GRACE_MS).toBeLessThan(3_000);
    const marker = join(scratch, "cleaned-up");
    const target = new ServerTarget(slowToExit(marker), 20_000);
    await target.startChain([], 0n);
    await target.close();
    expect(existsSync(marker)).toBe(true);
  });

  it("after a stop signal (interrupted): STOP_GRACE_MS, then its process group is killed", async () => {
    const marker = join(scratch, "cleaned-up");
    const target = new ServerTarget(slowToExit(marker), 20_000);
    await target.startChain([], 0n);
    await target.close(true);
    // The shell was killed with its group before its clean-up ended: nothing is left to write the marker.
    await new Promise((r) => setTimeout(r, 3_500));
    expect(existsSync(marker)).toBe(false);
  });

  it("an --timeout shorter than STOP_GRACE_MS still leaves STOP_GRACE_MS", async () => {
    const marker = join(scratch, "cleaned-up");
    // `sleep 1` fits in STOP_GRACE_MS (2 s) but not in the 0.5 s timeout.
    const target = new ServerTarget(`node dist/src/cli.js t8n --server; sleep 1; touch '${marker}'`, 500);
    await target.startChain([], 0n);
    await target.close();
    expect(existsSync(marker)).toBe(true);
  });
});
