// A minimal SVG line chart for the benchmark scripts (docs/engineering/performance.md, docs/spec/state.md embed
// the files they write), so a reader sees whether a cost grows with history. No dependencies;
// the output depends only on the data.

export interface Series {
  name: string;
  points: ReadonlyArray<readonly [x: number, y: number]>;
}

export interface ChartSpec {
  title: string;
  xLabel: string;
  yLabel: string;
  series: readonly Series[];
  /** Free text under the title (machine, load, date). */
  note?: string;
}

const WIDTH = 760;
const HEIGHT = 360;
const M = { left: 76, right: 20, top: 56, bottom: 52 };
const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"];

/** A round step giving about `target` ticks over [0, max]. */
function tickStep(max: number, target = 5): number {
  if (!(max > 0)) return 1;
  const raw = max / target;
  const power = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}

const fmt = (n: number): string =>
  n >= 1e6 ? `${+(n / 1e6).toFixed(2)}M` : n >= 1e3 ? `${+(n / 1e3).toFixed(1)}k` : `${+n.toFixed(2)}`;

const esc = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

export function lineChartSvg(spec: ChartSpec): string {
  const all = spec.series.flatMap((s) => s.points);
  const xMax = Math.max(1, ...all.map((p) => p[0]));
  const yStep = tickStep(Math.max(1, ...all.map((p) => p[1])) * 1.05);
  const yMax = yStep * Math.ceil((Math.max(1, ...all.map((p) => p[1])) * 1.05) / yStep);
  const xStep = tickStep(xMax);
  const pw = WIDTH - M.left - M.right;
  const ph = HEIGHT - M.top - M.bottom;
  const X = (x: number) => (M.left + (x / xMax) * pw).toFixed(1);
  const Y = (y: number) => (M.top + ph - (y / yMax) * ph).toFixed(1);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="20" text-anchor="middle" font-size="15" font-weight="bold">${esc(spec.title)}</text>`,
  ];
  if (spec.note !== undefined) out.push(`<text x="${WIDTH / 2}" y="38" text-anchor="middle" fill="#555">${esc(spec.note)}</text>`);
  for (let y = 0; y <= yMax + 1e-9; y += yStep) {
    out.push(`<line x1="${M.left}" x2="${WIDTH - M.right}" y1="${Y(y)}" y2="${Y(y)}" stroke="#ddd"/>`);
    out.push(`<text x="${M.left - 6}" y="${Y(y)}" text-anchor="end" dominant-baseline="middle">${fmt(y)}</text>`);
  }
  for (let x = 0; x <= xMax + 1e-9; x += xStep) {
    out.push(`<line x1="${X(x)}" x2="${X(x)}" y1="${M.top + ph}" y2="${M.top + ph + 4}" stroke="#333"/>`);
    out.push(`<text x="${X(x)}" y="${M.top + ph + 18}" text-anchor="middle">${fmt(x)}</text>`);
  }
  out.push(`<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${M.top + ph}" stroke="#333"/>`);
  out.push(`<line x1="${M.left}" x2="${WIDTH - M.right}" y1="${M.top + ph}" y2="${M.top + ph}" stroke="#333"/>`);
  out.push(`<text x="${M.left + pw / 2}" y="${HEIGHT - 10}" text-anchor="middle">${esc(spec.xLabel)}</text>`);
  out.push(`<text transform="translate(16 ${M.top + ph / 2}) rotate(-90)" text-anchor="middle">${esc(spec.yLabel)}</text>`);
  spec.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length]!;
    out.push(`<polyline fill="none" stroke="${color}" stroke-width="1.8" points="${s.points.map((p) => `${X(p[0])},${Y(p[1])}`).join(" ")}"/>`);
    out.push(`<rect x="${M.left + 10}" y="${M.top + 8 + i * 18}" width="12" height="3" fill="${color}"/>`);
    out.push(`<text x="${M.left + 28}" y="${M.top + 12 + i * 18}">${esc(s.name)}</text>`);
  });
  out.push("</svg>");
  return out.join("\n") + "\n";
}
