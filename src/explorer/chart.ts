// A stream's escrow over blocks, drawn by uPlot (loaded by the page as a classic script from the
// node, the global `uPlot`). Two lines: the escrow recorded in the stream's record, which changes
// when a transaction settles its rent or tops it up, and what a settlement at that block would
// leave (CIP-39 §6.1, computed by the node), which falls block by block while rent accrues.
import type { HistoryPoint } from "./api.js";
import { h } from "./dom.js";

type UPlot = typeof import("uplot");
declare const uPlot: UPlot;

/** Amounts as chart values: exact below 2^53 (nano-CBY amounts beyond that are drawn approximately). */
const value = (text: string | null | undefined): number | null => (text === null || text === undefined ? null : Number(text));

/**
 * Appends the chart to `parent`, as wide as it is. Its data is also on the element
 * (`data-heights`, `data-escrow`, `data-settled`, comma-separated, empty for a block without the
 * stream) for anyone reading the page without eyes: a screen reader's summary, a test.
 */
export function escrowChart(parent: HTMLElement, points: HistoryPoint[]): void {
  const heights = points.map((p) => Number(p.height));
  const escrow = points.map((p) => value(p.escrow_balance));
  const settled = points.map((p) => value(p.settled_escrow));
  const box = h("figure", {
    class: "chart",
    "data-heights": points.map((p) => p.height).join(","),
    "data-escrow": points.map((p) => p.escrow_balance ?? "").join(","),
    "data-settled": points.map((p) => p.settled_escrow ?? "").join(","),
  });
  parent.appendChild(box);
  const options: import("uplot").Options = {
    // The figure's inner width (its padding is 0.5rem each side).
    width: Math.max(320, box.clientWidth - 16),
    height: 260,
    scales: { x: { time: false } },
    series: [
      { label: "height" },
      { label: "escrow (recorded)", stroke: "#2457c5", width: 2 },
      { label: "escrow if settled at this block", stroke: "#c77d15", width: 2, dash: [6, 4] },
    ],
    axes: [{ label: "block height" }, { label: "nano-CBY", size: 80 }],
  };
  new uPlot(options, [heights, escrow, settled], box);
}
