// The HTML report: one self-contained page (inline CSS, no script, no link to any other file or
// site; its Content-Security-Policy forbids loading anything) that a CI job keeps as an artifact
// and anyone opens in a browser. A summary of the counts, the failures listed first with links to
// their rows, then a table per suite with a row per case; a failed or unusable case's row holds
// its first difference, the details and the command that reproduces it. Radio buttons filter the
// rows by CSS alone.
import { secondsText, tally, tallyAll, timestampText, type Suite, type Tally, type TestCase } from "./model.js";
import { html } from "./text.js";

export interface HtmlMeta {
  /** The page's heading: `cbqs replay`. */
  title: string;
  /** What a case is, for the column heading: "fixture", "vector", "campaign". */
  caseLabel: string;
}

const STYLE = `
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5rem; color: #1b1f24; background: #fff; }
h1 { font-size: 1.5rem; margin: 0 0 .5rem; }
h2 { font-size: 1.15rem; margin: 1.5rem 0 .25rem; overflow-wrap: anywhere; }
.verdict { font-size: 1.1rem; font-weight: 600; padding: .4rem .7rem; border-radius: 4px; display: inline-block; }
.verdict.ok { background: #dafbe1; color: #116329; }
.verdict.bad { background: #ffebe9; color: #a40e26; }
table { border-collapse: collapse; margin: .5rem 0; }
th, td { border: 1px solid #d0d7de; padding: .25rem .5rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
table.cases { width: 100%; }
td.id { font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
td.status { font-weight: 600; white-space: nowrap; }
tr.passed td.status { color: #116329; }
tr.failed td.status, tr.error td.status { color: #a40e26; }
tr.skipped td.status { color: #6e7781; }
tr.failed, tr.error { background: #fff8f7; }
.message { font-family: ui-monospace, monospace; overflow-wrap: anywhere; }
pre { margin: .3rem 0; white-space: pre-wrap; overflow-wrap: anywhere; font-size: 12px; }
.reproduce code { background: #f6f8fa; padding: 0 .2rem; overflow-wrap: anywhere; }
.note { color: #57606a; }
.show { position: absolute; opacity: 0; }
.filter { margin: 1rem 0 .25rem; }
.filter label { margin-right: .5rem; padding: .1rem .5rem; border: 1px solid #d0d7de; border-radius: 4px; cursor: pointer; }
#show-all:checked ~ .filter label[for="show-all"], #show-problems:checked ~ .filter label[for="show-problems"], #show-passed:checked ~ .filter label[for="show-passed"] { background: #1b1f24; color: #fff; }
#show-problems:checked ~ main tr.passed, #show-problems:checked ~ main tr.skipped { display: none; }
#show-passed:checked ~ main tr.failed, #show-passed:checked ~ main tr.error, #show-passed:checked ~ main tr.skipped { display: none; }
`;

const anchor = (suite: number, index: number): string => `case-${suite + 1}-${index + 1}`;

/** "1 error", "2 errors". */
const counted = (n: number, noun: string): string => `${n} ${n === 1 ? noun : `${noun}s`}`;

function verdictText(t: Tally): string {
  if (t.failed + t.errors === 0) return `PASSED: ${t.passed} of ${t.tests} passed${t.skipped === 0 ? "" : `, ${t.skipped} skipped`}`;
  return `FAILED: ${t.failed} failed, ${counted(t.errors, "error")} of ${t.tests}`;
}

function outcomeCell(c: TestCase): string {
  const parts: string[] = [];
  if (c.message !== undefined) parts.push(`<div class="message">${html(c.message)}</div>`);
  if (c.details !== undefined && c.details.length > 0) parts.push(`<pre class="details">${html(c.details.join("\n"))}</pre>`);
  if (c.reproduce !== undefined) parts.push(`<div class="reproduce">reproduce: <code>${html(c.reproduce)}</code></div>`);
  return `<td class="outcome">${parts.join("")}</td>`;
}

function suiteSection(s: Suite, k: number, meta: HtmlMeta): string {
  const t = tally(s.cases);
  const sized = s.cases.some((c) => c.blocks !== undefined || c.txs !== undefined);
  const num = (v: number | undefined) => `<td class="num">${v === undefined ? "" : v.toLocaleString("en-US")}</td>`;
  const head = `<tr><th>status</th><th>${html(meta.caseLabel)}</th>${sized ? '<th class="num">blocks</th><th class="num">txs</th>' : ""}<th class="num">seconds</th><th>difference</th></tr>`;
  const rows = s.cases.map(
    (c, i) =>
      `<tr class="${c.status}" id="${anchor(k, i)}"><td class="status">${c.status}</td><td class="id">${html(c.id)}</td>` +
      `${sized ? num(c.blocks) + num(c.txs) : ""}<td class="num">${secondsText(c.seconds)}</td>${outcomeCell(c)}</tr>`,
  );
  const started = s.timestamp === undefined ? "" : `, started ${timestampText(s.timestamp)}`;
  return [
    `<section class="suite">`,
    `<h2>${html(s.name)}</h2>`,
    `<p class="note">${html(counted(t.tests, meta.caseLabel))}: ${t.passed} passed, ${t.failed} failed, ${counted(t.errors, "error")}, ${t.skipped} skipped; ${secondsText(s.seconds)} s${started}</p>`,
    ...(s.summary === undefined ? [] : [`<pre class="summary-line">${html(s.summary)}</pre>`]),
    `<table class="cases"><thead>${head}</thead><tbody>`,
    ...rows,
    `</tbody></table>`,
    `</section>`,
  ].join("\n");
}

/** The page for `suites` (UTF-8 text, ending in a newline). */
export function htmlReport(suites: readonly Suite[], meta: HtmlMeta): string {
  const t = tallyAll(suites);
  const ok = t.failed + t.errors === 0;
  const seconds = suites.reduce((x, s) => x + s.seconds, 0);
  const problems = suites.flatMap((s, k) =>
    s.cases.flatMap((c, i) => (c.status === "failed" || c.status === "error" ? [`<li><a href="#${anchor(k, i)}">${html(c.id)}</a> (${c.status}): <span class="message">${html(c.message ?? "")}</span></li>`] : [])),
  );
  const count = (key: string, n: number) => `<td class="num" data-count="${key}">${n}</td>`;
  return [
    "<!DOCTYPE html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${html(meta.title)}: ${ok ? "passed" : "FAILED"}</title>`,
    `<style>${STYLE}</style>`,
    "</head>",
    "<body>",
    `<h1>${html(meta.title)}</h1>`,
    `<p class="verdict ${ok ? "ok" : "bad"}">${verdictText(t)}</p>`,
    '<table class="summary"><thead><tr><th class="num">tests</th><th class="num">passed</th><th class="num">failed</th><th class="num">errors</th><th class="num">skipped</th><th class="num">seconds</th></tr></thead>',
    `<tbody><tr>${count("tests", t.tests)}${count("passed", t.passed)}${count("failed", t.failed)}${count("errors", t.errors)}${count("skipped", t.skipped)}<td class="num">${secondsText(seconds)}</td></tr></tbody></table>`,
    ...(problems.length === 0 ? [] : ['<h2>Failures</h2>', `<ol class="problems">`, ...problems, "</ol>"]),
    // The radio buttons are siblings of <main>, so the CSS above can hide rows by which is checked.
    '<input class="show" type="radio" name="show" id="show-all" checked>',
    '<input class="show" type="radio" name="show" id="show-problems">',
    '<input class="show" type="radio" name="show" id="show-passed">',
    `<p class="filter">show: <label for="show-all">all (${t.tests})</label><label for="show-problems">failed and errors (${t.failed + t.errors})</label><label for="show-passed">passed (${t.passed})</label></p>`,
    "<main>",
    ...suites.map((s, k) => suiteSection(s, k, meta)),
    "</main>",
    "</body>",
    "</html>",
    "",
  ].join("\n");
}
