// What a replay reports, built in one place for every output: the mismatch lines (also of trace,
// state dump, proof state, node --fixture and follow), the summary line (also `npm start`'s), the
// cbqs-replay/v1 document of --json, and the suites of --junit and --report — for a corpus
// replayed in memory and for one fixture replayed into a store (--db) alike.
import type { IndexFailure } from "../harness/selection.js";
import type { FixtureReport, Mismatch, Shard } from "../harness/replay.js";
import { count, rate } from "../format.js";
import type { Suite, TestCase } from "../report/model.js";
import { oneLine } from "./common.js";

export const REPLAY_FORMAT = "cbqs-replay/v1";

/** The HTML report's title and what a row is (src/report/html.ts). */
export const REPLAY_REPORT = { title: "cbqs replay", caseLabel: "fixture" };

/** A mismatch in words, after the file: `block 5: receipts[2].cycles ($.blocks[1]…): expected 471 got 472`. */
function mismatchText(m: Mismatch): string {
  return `${m.height === 0n ? "genesis" : `block ${m.height}`}: ${m.field} (${m.path}): expected ${m.expected} got ${m.actual}`;
}

export function mismatchLines(file: string, m: Mismatch): string[] {
  // Values echo fixture content: terminal-safe like every error line.
  return [oneLine(`MISMATCH ${file}: ${mismatchText(m)}`), ...m.details.map((d) => `  ${oneLine(d)}`)];
}

/** The one summary line of a replay (also the basis of `npm start`'s verdict). */
export function replaySummary(reports: readonly FixtureReport[], seconds: number, shard?: Shard, indexFailures = 0): string {
  const n = (s: FixtureReport["status"]) => reports.filter((r) => r.status === s).length;
  const blocks = reports.reduce((x, r) => x + r.blocks, 0);
  const txs = reports.reduce((x, r) => x + r.txs, 0);
  return (
    `replay${shard === undefined ? "" : ` (shard ${shard.index}/${shard.count})`}: ${count(reports.length, "fixture")}: ` +
    `${n("ok")} ok, ${count(n("mismatch"), "mismatch", "mismatches")}, ${n("unusable")} unusable${indexFailures === 0 ? "" : `, ${count(indexFailures, "index failure")}`}; ` +
    `${count(blocks, "block")}, ${count(txs, "tx", "txs")} in ${seconds.toFixed(2)} s (${rate(blocks, seconds)} blocks/s, ${rate(txs, seconds)} tx/s)`
  );
}

/**
 * The cbqs-replay/v1 document (`replay --json`): the fixtures, the totals, the corpus-index
 * failures when there are any, and with --db what the store held (`store`). Integers are decimal
 * strings (scenario-format §1), per fixture as in the totals.
 */
export function replayDocument(reports: readonly FixtureReport[], more: { indexFailures?: readonly IndexFailure[]; store?: Record<string, unknown> } = {}): Record<string, unknown> {
  const fixtures = reports.map((r) => ({
    ...r,
    blocks: String(r.blocks),
    txs: String(r.txs),
    ...(r.mismatch === undefined ? {} : { mismatch: { ...r.mismatch, height: r.mismatch.height.toString() } }),
  }));
  return {
    format: REPLAY_FORMAT,
    fixtures,
    blocks: String(reports.reduce((x, r) => x + r.blocks, 0)),
    txs: String(reports.reduce((x, r) => x + r.txs, 0)),
    ...(more.indexFailures === undefined || more.indexFailures.length === 0 ? {} : { index_failures: more.indexFailures }),
    ...(more.store === undefined ? {} : { store: more.store }),
  };
}

/**
 * A fixture's outcome as a report's test case (docs/fixtures.md "Reports"): a mismatch is a
 * failure whose message is the first difference and whose details are the differing keys, an
 * unusable fixture an error; `reproduce` is the command line that shows it again.
 */
function fixtureCase(r: FixtureReport, id: string, seconds: number, reproduce: string): TestCase {
  const base = { id, seconds, blocks: r.blocks, txs: r.txs };
  if (r.mismatch !== undefined) return { ...base, status: "failed", type: "mismatch", message: oneLine(mismatchText(r.mismatch)), details: r.mismatch.details.map(oneLine), reproduce };
  if (r.status === "unusable") return { ...base, status: "error", type: "unusable", message: oneLine(r.error ?? "unusable"), reproduce };
  return { ...base, status: "passed" };
}

/** One fixture of a suite: its report, its time, its test id and the command that replays it again. */
export interface ReplayedCase {
  report: FixtureReport;
  seconds: number;
  id: string;
  reproduce: string;
}

/** A suite of a replay's --junit/--report: a case per fixture, its time the sum of theirs. */
export function replaySuite(name: string, cases: readonly ReplayedCase[], timestamp: Date, summary: string): Suite {
  return {
    name,
    classname: "cbqs.replay",
    cases: cases.map((c) => fixtureCase(c.report, c.id, c.seconds, c.reproduce)),
    seconds: cases.reduce((x, c) => x + c.seconds, 0),
    timestamp,
    summary,
  };
}
