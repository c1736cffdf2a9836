// One progress line for a pool of jobs (src/jobs/pool.ts): fixtures finished of the total, the
// transactions executed so far (a tx/s rate), and the blocks of the biggest job under way — so a
// long chain on one worker shows where it is while small fixtures finish around it.
import { Progress, type ProgressMode } from "../harness/progress.js";
import { count, thousands } from "../format.js";
import type { JobProgress } from "./handlers.js";

export class PoolProgress {
  private readonly line: Progress;
  private done = 0;
  private doneTxs = 0;
  private jobs: ReadonlyMap<number, JobProgress> = new Map();

  constructor(
    label: string,
    mode: ProgressMode,
    private readonly total: number,
    private readonly unit: string,
    private readonly names: readonly string[],
  ) {
    this.line = new Progress(label, mode);
  }

  /** A job finished with `txs` transactions. */
  finished(txs: number): void {
    this.done++;
    this.doneTxs += txs;
    this.show();
  }

  /** The jobs under way reported. */
  running(jobs: ReadonlyMap<number, JobProgress>): void {
    this.jobs = jobs;
    this.show();
  }

  private show(): void {
    const jobs = this.jobs;
    let txs = this.doneTxs;
    let biggest: [number, JobProgress] | null = null;
    for (const [index, p] of jobs) {
      txs += p.txs;
      if (biggest === null || p.total > biggest[1].total) biggest = [index, p];
    }
    const detail = biggest === null || biggest[1].total < 100 ? undefined : `${this.names[biggest[0]]} at block ${thousands(biggest[1].blocks)}/${count(biggest[1].total, "block")}`;
    this.line.update({ done: this.done, total: this.total, unit: this.unit, txs, ...(detail === undefined ? {} : { detail }) });
  }

  end(): void {
    this.line.end();
  }
}
