// The explorer page's files (docs/guides/run-a-devnet.md "The explorer"): `/` is the page, `/explorer/*` its
// script modules (compiled from src/explorer/ by tsconfig.explorer.json into dist/src/explorer/),
// its style sheet, and uPlot from the installed `uplot` package. A fixed list, read once and kept
// in memory: no path from a request ever reaches the file system. Everything the page loads comes
// from the node (its Content-Security-Policy allows nothing else), so it works offline.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { RequestError } from "./errors.js";

export interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

/** The page's script modules, as src/explorer/ has them. */
export const EXPLORER_MODULES = ["main", "api", "dom", "format", "names", "views", "chart"] as const;

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>cbqs explorer</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/explorer/uPlot.min.css">
<link rel="stylesheet" href="/explorer/style.css">
<script src="/explorer/uPlot.iife.min.js" defer></script>
<script type="module" src="/explorer/main.js"></script>
</head>
<body>
<header>
  <a class="brand" href="#/">cbqs explorer</a>
  <form id="search" role="search">
    <input name="q" id="q" autocomplete="off" spellcheck="false" placeholder="block height, tx hash, block hash, stream id, address or dev0…" aria-label="search">
    <button type="submit">Search</button>
  </form>
  <span id="live" class="live" title="new blocks arrive through GET /subscribe">connecting…</span>
</header>
<main id="view"><p class="muted">Loading…</p></main>
</body>
</html>
`;

const STYLE = `:root { --fg: #1d2330; --muted: #6b7385; --line: #e3e6ec; --accent: #2457c5; --ok: #1b7f3b; --bad: #b3261e; --bg: #fafbfc; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; gap: 1rem; align-items: center; padding: .6rem 1rem; background: #fff; border-bottom: 1px solid var(--line); position: sticky; top: 0; }
.brand { font-weight: 600; color: var(--fg); text-decoration: none; }
#search { flex: 1; display: flex; gap: .4rem; }
#search input { flex: 1; padding: .35rem .5rem; font: inherit; border: 1px solid var(--line); border-radius: 4px; }
#search button { padding: .35rem .8rem; font: inherit; }
.live { font-size: 12px; color: var(--muted); white-space: nowrap; }
.live.on::before { content: "● "; color: var(--ok); }
main { padding: 1rem; max-width: 1200px; margin: 0 auto; }
h1 { font-size: 1.25rem; margin: .2rem 0 1rem; }
h2 { font-size: 1.05rem; margin: 1.5rem 0 .5rem; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-weight: 600; color: var(--muted); }
table.fields th { width: 14rem; }
.hash { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: 12.5px; word-break: break-all; }
a { color: var(--accent); }
.muted { color: var(--muted); }
.ok { color: var(--ok); }
.bad { color: var(--bad); }
pre { margin: 0; font-size: 12px; white-space: pre-wrap; word-break: break-all; }
tr.new { animation: flash 1.5s ease-out; }
@keyframes flash { from { background: #fff6c8; } to { background: #fff; } }
.chart { background: #fff; border: 1px solid var(--line); padding: .5rem; margin: 0; }
.error { color: var(--bad); }
ul.spans { padding-left: 1.2rem; margin: .3rem 0; }
table.summary { font-size: 15px; margin-bottom: .6rem; border: 1px solid var(--line); }
table.summary th { width: 10rem; }
table.nested { background: transparent; margin: 0; }
table.nested th { width: 12rem; font-weight: 500; }
table.nested th, table.nested td { padding: .1rem .4rem; border-bottom: 1px dotted var(--line); }
ol.values { margin: 0; padding-left: 1.2rem; }
.badge { display: inline-block; padding: 0 .45rem; border-radius: 9px; font-size: 12px; font-weight: 600; background: #eef1f6; color: var(--muted); vertical-align: middle; }
.badge.active, .badge.included { background: #e3f4e8; color: var(--ok); }
.badge.suspended, .badge.pending, .badge.draining { background: #fff2d6; color: #8a5a00; }
.badge.closed, .badge.dataexpired, .badge.dropped, .badge.deregistered { background: #f9e3e1; color: var(--bad); }
a.name { font-weight: 600; }
.columns { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1.4fr); gap: 1.5rem; }
.columns h2 { margin-top: 0; }
@media (max-width: 900px) { .columns { grid-template-columns: minmax(0, 1fr); } }
nav.pager { display: flex; justify-content: space-between; margin-bottom: .3rem; }
`;

/** Where the compiled modules are: beside this module's own folder in dist/, or dist/ itself when run from the sources (the tests). */
function compiledDir(): string {
  const here = fileURLToPath(import.meta.url);
  const fromSources = here.endsWith(".ts");
  return fromSources ? join(dirname(here), "..", "..", "dist", "src", "explorer") : join(dirname(here), "..", "explorer");
}

const asset = (body: Buffer | string, type: string): Asset => {
  const bytes = typeof body === "string" ? Buffer.from(body, "utf8") : body;
  return { body: bytes, type, etag: `"${createHash("sha256").update(bytes).digest("hex").slice(0, 32)}"` };
};

let assets: Map<string, Asset> | undefined;

/** Every file of the page by its path; read on first use. A file missing (an incomplete build) is 503, naming it. */
function load(): Map<string, Asset> {
  if (assets !== undefined) return assets;
  const files = new Map<string, Asset>([
    ["/", asset(PAGE, "text/html; charset=utf-8")],
    ["/explorer/style.css", asset(STYLE, "text/css; charset=utf-8")],
  ]);
  const uplot = createRequire(import.meta.url);
  const read = (path: string) => {
    try {
      return readFileSync(path);
    } catch (err) {
      throw new RequestError(503, "explorer_unavailable", `the explorer's file ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? "error"}): run npm run build`);
    }
  };
  files.set("/explorer/uPlot.iife.min.js", asset(read(uplot.resolve("uplot/dist/uPlot.iife.min.js")), "text/javascript; charset=utf-8"));
  files.set("/explorer/uPlot.min.css", asset(read(uplot.resolve("uplot/dist/uPlot.min.css")), "text/css; charset=utf-8"));
  for (const name of EXPLORER_MODULES) files.set(`/explorer/${name}.js`, asset(read(join(compiledDir(), `${name}.js`)), "text/javascript; charset=utf-8"));
  return (assets = files);
}

/** Whether a path is the page's (the server answers it with explorerAsset, not a route). */
export const isExplorerPath = (pathname: string): boolean => pathname === "/" || pathname.startsWith("/explorer/");

/** The file at `pathname`; 404 for a path under /explorer/ that is not one. */
export function explorerAsset(pathname: string): Asset {
  const found = load().get(pathname);
  if (found === undefined) throw new RequestError(404, "not_found", `no explorer file at ${JSON.stringify(pathname.slice(0, 120))}`);
  return found;
}

/** The page may load only what the node serves, and may be framed by nobody. */
export const EXPLORER_HEADERS = {
  "content-security-policy": "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  // Revalidated on every load (a 304 when unchanged): a node upgraded in place never serves a stale page.
  "cache-control": "no-cache",
};
