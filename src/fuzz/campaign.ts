// A campaign over several lanes at once (`cbqs fuzz --jobs N`). Lanes take the next run index
// as they come free; a lane whose run diverges (or whose target fails) stops there, and from then
// on only runs below the lowest such run are started. When every lane is idle, the lowest one is
// the campaign's result: the same run, shrunk the same way, whatever N is and whichever lane
// got there first. Counts add up the runs up to and including it, so they do not depend on N
// either (with --runs; a --duration campaign ends when its time is up); so does the census of
// what those runs reached (src/fuzz/census.ts).
import { Census, type CensusJson } from "./census.js";
import type { RunOutcome } from "./fuzz.js";

/** A lane's work, in this process or on a worker thread (src/fuzz/lanes.ts). */
export interface Lane<F> {
  run(run: number): Promise<RunOutcome>;
  /** Shrinks the divergence of `run` (which this lane found) and reports it. */
  finish(run: number): Promise<F>;
  /** Forgets a divergence this lane holds: a lower run is the campaign's result. */
  drop(): void;
}

export interface CampaignOptions {
  firstRun: number;
  /** One past the last run index to start. */
  endRun: number;
  /** No run starts once this returns true (a --duration campaign); runs under way finish. */
  timeUp: () => boolean;
  stopped: () => boolean;
  /** Every run as it ends, with the totals so far (for progress). */
  onRun?: (outcome: RunOutcome, totals: Totals) => void;
}

export interface Totals {
  runs: number;
  blocks: number;
  txs: number;
}

export interface CampaignResult<F> extends Totals {
  finding: F | null;
  /** What the counted runs reached. */
  census: Census;
}

export async function campaign<F>(lanes: ReadonlyArray<Lane<F>>, o: CampaignOptions): Promise<CampaignResult<F>> {
  let next = o.firstRun;
  /** The lowest run that diverged or failed so far. */
  let bound = Infinity;
  const outcomes: Array<Omit<RunOutcome, "census">> = [];
  const census = new Census();
  /**
   * Censuses of finished runs wait here until every lower run has finished, then are merged:
   * a lower run may still diverge and leave them uncounted. So only about one per lane waits.
   */
  const waiting = new Map<number, CensusJson>();
  let unmerged = o.firstRun;
  const mergeReady = () => {
    for (let c = waiting.get(unmerged); c !== undefined && unmerged <= bound; c = waiting.get(unmerged)) {
      census.merge(c);
      waiting.delete(unmerged++);
    }
  };
  const diverged = new Map<number, Lane<F>>();
  const failures = new Map<number, unknown>();
  const live: Totals = { runs: 0, blocks: 0, txs: 0 };

  const work = async (lane: Lane<F>): Promise<void> => {
    while (next < o.endRun && next < bound && !o.stopped() && !o.timeUp()) {
      const run = next++;
      let outcome: RunOutcome;
      try {
        outcome = await lane.run(run);
      } catch (err) {
        failures.set(run, err);
        bound = Math.min(bound, run);
        return;
      }
      if (outcome.stopped) return;
      const { census: reached, ...counts } = outcome;
      outcomes.push(counts);
      live.runs++;
      live.blocks += outcome.blocks;
      live.txs += outcome.txs;
      o.onRun?.(outcome, { ...live });
      if (outcome.divergent) {
        diverged.set(run, lane);
        bound = Math.min(bound, run);
      }
      // After the bound moved: the runs after a divergent one are not merged.
      waiting.set(run, reached);
      mergeReady();
      if (outcome.divergent) return;
    }
  };
  await Promise.all(lanes.map(work));

  const counted = outcomes.filter((x) => x.run <= bound);
  const totals: Totals = {
    runs: counted.length,
    blocks: counted.reduce((n, x) => n + x.blocks, 0),
    txs: counted.reduce((n, x) => n + x.txs, 0),
  };
  // Runs after a gap (one stopped by a signal) were not merged yet.
  for (const [run, c] of waiting) if (run <= bound) census.merge(c);
  for (const [run, lane] of diverged) if (run !== bound) lane.drop();
  if (failures.has(bound)) throw failures.get(bound);
  const lane = diverged.get(bound);
  return { ...totals, census, finding: lane === undefined ? null : await lane.finish(bound) };
}
