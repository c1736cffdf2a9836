// The pool's progress line (src/jobs/progress.ts), as a CI log shows it (plain lines; the interval
// set to 0 by CBQS_PROGRESS_MS so that every report writes one): jobs finished of the total, the
// transactions of the finished and the running jobs together, and where the biggest job under way
// is — only when it has 100 blocks or more.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { JobProgress } from "../../src/jobs/handlers.js";
import { PoolProgress } from "../../src/jobs/progress.js";

let lines: string[];
beforeEach(() => {
  lines = [];
  vi.stubEnv("CBQS_PROGRESS_MS", "0");
  vi.spyOn(process.stderr, "write").mockImplementation((c) => (lines.push(String(c)), true));
});
afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
});

/** A line without its rates and ETA, which depend on the clock. */
const shown = (line: string) => line.replace(/, [-0-9.,]+ (fixtures|tx)\/s/g, "").replace(/, ETA \d+ s/, "");
const running = (...jobs: Array<[number, JobProgress]>) => new Map(jobs);

describe("the pool's progress line", () => {
  it("counts the jobs finished of the total and the transactions of finished and running jobs", () => {
    const p = new PoolProgress("replay", "plain", 3, "fixtures", ["a.json", "b.json", "c.json"]);
    p.running(running([0, { blocks: 2, total: 10, txs: 5 }], [1, { blocks: 1, total: 20, txs: 7 }]));
    p.finished(11);
    p.running(running([1, { blocks: 3, total: 20, txs: 9 }]));
    expect(lines.map(shown)).toEqual(["replay: 0/3 fixtures\n", "replay: 1/3 fixtures\n", "replay: 1/3 fixtures\n"]);
  });

  it("names the biggest job under way, by its total, once it has 100 blocks or more", () => {
    const p = new PoolProgress("consume", "plain", 4, "fixtures", ["small.json", "long.json", "mid.json", "x.json"]);
    p.running(running([0, { blocks: 5, total: 99, txs: 0 }]));
    p.running(running([0, { blocks: 5, total: 99, txs: 0 }], [1, { blocks: 1234, total: 5000, txs: 0 }], [2, { blocks: 50, total: 100, txs: 0 }]));
    p.running(running([2, { blocks: 50, total: 100, txs: 0 }], [0, { blocks: 5, total: 99, txs: 0 }]));
    p.running(running([3, { blocks: 0, total: 1, txs: 0 }]));
    expect(lines.map(shown)).toEqual([
      "consume: 0/4 fixtures\n",
      "consume: 0/4 fixtures, long.json at block 1,234/5,000 blocks\n",
      "consume: 0/4 fixtures, mid.json at block 50/100 blocks\n",
      "consume: 0/4 fixtures\n",
    ]);
  });

  it("of two jobs under way with the same total, the one listed first is named", () => {
    const p = new PoolProgress("consume", "plain", 2, "fixtures", ["first.json", "second.json"]);
    p.running(running([0, { blocks: 10, total: 200, txs: 0 }], [1, { blocks: 20, total: 200, txs: 0 }]));
    expect(lines.map(shown)).toEqual(["consume: 0/2 fixtures, first.json at block 10/200 blocks\n"]);
  });

  it("adds the transactions of the jobs under way to those finished", () => {
    vi.spyOn(performance, "now").mockReturnValue(0);
    const p = new PoolProgress("replay", "plain", 2, "fixtures", ["a", "b"]);
    vi.spyOn(performance, "now").mockReturnValue(1000);
    p.finished(300);
    p.running(running([1, { blocks: 1, total: 2, txs: 200 }]));
    expect(lines).toEqual(["replay: 1/2 fixtures, 1.0 fixtures/s, 300 tx/s, ETA 1 s\n", "replay: 1/2 fixtures, 1.0 fixtures/s, 500 tx/s, ETA 1 s\n"]);
  });

  it("end() clears a terminal's line; with --quiet nothing is written", () => {
    vi.spyOn(performance, "now").mockReturnValue(0);
    const tty = new PoolProgress("fill", "tty", 1, "scenarios", ["s"]);
    vi.spyOn(performance, "now").mockReturnValue(1000);
    tty.running(running());
    expect(lines).toEqual(["\r\x1b[Kfill: 0/1 scenarios, 0.0 scenarios/s, 0.0 tx/s"]);
    tty.end();
    expect(lines.at(-1)).toBe("\r\x1b[K");
    lines.length = 0;
    const quiet = new PoolProgress("fill", "off", 1, "scenarios", ["s"]);
    quiet.finished(1);
    quiet.end();
    expect(lines).toEqual([]);
  });
});
