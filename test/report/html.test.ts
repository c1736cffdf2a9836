// The HTML writer (src/report/html.ts): one self-contained page — no script, no link to another
// file or site, nothing loaded — with the counts, a row per case, and for a failure its first
// difference, details and reproduce command, all echoed input escaped. (What a browser makes of
// it: test/report/browser.test.ts.)
import { describe, expect, it } from "vitest";
import { htmlReport } from "../../src/report/html.js";
import type { Suite, TestCase } from "../../src/report/model.js";

const at = new Date("2026-12-03T06:37:38Z");
const CASES: TestCase[] = [
  { id: "a-ok.json", status: "passed", seconds: 0.1, blocks: 3, txs: 18 },
  { id: "b-mismatch.json", status: "failed", seconds: 0.2, blocks: 2, txs: 16, type: "mismatch", message: "block 5: receipt_root: expected 0xab got 0xcd", details: ["key 0x03aa: balance expected \"1\" got \"2\""], reproduce: "cbqs replay corpus/b-mismatch.json" },
  { id: "c-unusable.json", status: "error", seconds: 0, message: "corpus/c-unusable.json: $: not valid JSON", reproduce: "cbqs replay corpus/c-unusable.json" },
  { id: "d-skipped.json", status: "skipped", seconds: 0 },
];
const suite = (cases: TestCase[], extra: Partial<Suite> = {}): Suite => ({ name: "cbqs replay corpus", classname: "cbqs.replay", cases, seconds: 0.3, timestamp: at, summary: "replay: 4 fixtures", ...extra });
const META = { title: "cbqs replay", caseLabel: "fixture" };

/** The text of the element with `attr` (a crude reader: the page is flat and written by us). */
const cell = (page: string, attr: string): string => new RegExp(`<td[^>]*${attr}[^>]*>([^<]*)</td>`).exec(page)![1]!;

/** The page with its stylesheet's text cut out (`<style>…</style>`), and that text. */
function withoutStyle(page: string): { page: string; css: string } {
  const [head, rest] = page.split("<style>");
  const [css, tail] = rest!.split("</style>");
  return { page: `${head}<style>…</style>${tail}`, css: css! };
}

/** The line of the case `id`'s row (a row is one line, a details block's line breaks aside). */
const row = (page: string, id: string): string => page.split("\n").find((l) => l.includes(`<td class="id">${id}</td>`))!;

describe("HTML report (src/report/html.ts)", () => {
  it("a page with the title, the verdict, the counts, a row per case in order, and each failure's difference, details and reproduce command", () => {
    const page = htmlReport([suite(CASES)], META);
    expect(page.startsWith("<!DOCTYPE html>\n<html lang=\"en\">")).toBe(true);
    expect(page).toContain("<title>cbqs replay: FAILED</title>");
    expect(page).toContain('<p class="verdict bad">FAILED: 1 failed, 1 error of 4</p>');
    expect(["tests", "passed", "failed", "errors", "skipped"].map((k) => cell(page, `data-count="${k}"`))).toEqual(["4", "1", "1", "1", "1"]);
    expect([...page.matchAll(/<tr class="(\w+)" id="case-1-(\d)"><td class="status">\w+<\/td><td class="id">([^<]*)</g)].map((m) => [m[1], m[2], m[3]])).toEqual([
      ["passed", "1", "a-ok.json"],
      ["failed", "2", "b-mismatch.json"],
      ["error", "3", "c-unusable.json"],
      ["skipped", "4", "d-skipped.json"],
    ]);
    const failed = /<tr class="failed"[^\n]*<\/tr>/.exec(page)![0];
    expect(failed).toContain('<td class="num">2</td><td class="num">16</td><td class="num">0.200</td>');
    expect(failed).toContain('<div class="message">block 5: receipt_root: expected 0xab got 0xcd</div>');
    expect(failed).toContain('<pre class="details">key 0x03aa: balance expected &quot;1&quot; got &quot;2&quot;</pre>');
    expect(failed).toContain('<div class="reproduce">reproduce: <code>cbqs replay corpus/b-mismatch.json</code></div>');
    // The failures are listed first, each linking to its row.
    expect(page).toMatch(/<li><a href="#case-1-2">b-mismatch\.json<\/a> \(failed\): <span class="message">block 5: /);
    expect(page).toMatch(/<li><a href="#case-1-3">c-unusable\.json<\/a> \(error\): /);
    expect(page).toContain("started 2026-12-03T06:37:38Z");
  });

  it("all passed: PASSED, no failure list; blocks and txs columns only when a case has them", () => {
    const page = htmlReport([suite([{ id: "create-stream", status: "passed", seconds: 0.01 }])], { title: "cbqs gas-vectors verify", caseLabel: "check" });
    expect(page).toContain('<p class="verdict ok">PASSED: 1 of 1 passed</p>');
    expect(page).toContain("<title>cbqs gas-vectors verify: passed</title>");
    expect(page).not.toMatch(/Failures|<th class="num">blocks/);
    expect(page).toContain("<th>check</th>");
    // Nothing at all between the counts and the filter where the failure list would be.
    const lines = page.split("\n");
    const counts = lines.findIndex((l) => l.startsWith('<tbody><tr><td class="num" data-count="tests">'));
    expect(lines[counts + 1]).toBe('<input class="show" type="radio" name="show" id="show-all" checked>');
  });

  it("is self-contained: no script, no src, every href a link within the page, no url() or @import, and a CSP that forbids loading anything", () => {
    const page = htmlReport([suite(CASES), suite(CASES, { name: "second" })], META);
    expect(page).not.toMatch(/<script|<link|<img|<iframe|<object|<embed|\bsrc\s*=|url\(|@import/i);
    expect([...page.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!).every((h) => /^#case-\d+-\d+$/.test(h))).toBe(true);
    expect(page).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`);
  });

  it("the whole page, byte for byte (stylesheet aside): head, verdict, counts, failure list, filter, then per suite its name, counts, start time, summary line and a row per case", () => {
    const page = htmlReport(
      [
        suite(
          [
            { id: "a-ok.json", status: "passed", seconds: 0.1, blocks: 12345, txs: 18 },
            { ...CASES[1]!, details: ['key 0x03aa: balance expected "1" got "2"', 'key 0x03ab: nonce expected "0" got "1"'] },
            { ...CASES[2]!, details: [] },
            { id: "d-skipped.json", status: "skipped", seconds: 0, message: "not in this shard" },
          ],
          { seconds: 0.25 },
        ),
        {
          name: "cbqs gas-vectors verify vectors.json",
          classname: "cbqs.gas-vectors",
          seconds: 0.5,
          cases: [
            { id: "cost table", status: "passed", seconds: 0.01 },
            { id: "create-stream", status: "failed", seconds: 0 },
            { id: "pinned SHA-256", status: "error", seconds: 0.02, message: "artifact unreadable" },
          ],
        },
      ],
      { title: "cbqs check", caseLabel: "check" },
    );
    expect(withoutStyle(page).page).toBe(
      [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>cbqs check: FAILED</title>",
        "<style>…</style>",
        "</head>",
        "<body>",
        "<h1>cbqs check</h1>",
        '<p class="verdict bad">FAILED: 2 failed, 2 errors of 7</p>',
        '<table class="summary"><thead><tr><th class="num">tests</th><th class="num">passed</th><th class="num">failed</th><th class="num">errors</th><th class="num">skipped</th><th class="num">seconds</th></tr></thead>',
        '<tbody><tr><td class="num" data-count="tests">7</td><td class="num" data-count="passed">2</td><td class="num" data-count="failed">2</td><td class="num" data-count="errors">2</td><td class="num" data-count="skipped">1</td><td class="num">0.750</td></tr></tbody></table>',
        "<h2>Failures</h2>",
        '<ol class="problems">',
        '<li><a href="#case-1-2">b-mismatch.json</a> (failed): <span class="message">block 5: receipt_root: expected 0xab got 0xcd</span></li>',
        '<li><a href="#case-1-3">c-unusable.json</a> (error): <span class="message">corpus/c-unusable.json: $: not valid JSON</span></li>',
        '<li><a href="#case-2-2">create-stream</a> (failed): <span class="message"></span></li>',
        '<li><a href="#case-2-3">pinned SHA-256</a> (error): <span class="message">artifact unreadable</span></li>',
        "</ol>",
        '<input class="show" type="radio" name="show" id="show-all" checked>',
        '<input class="show" type="radio" name="show" id="show-problems">',
        '<input class="show" type="radio" name="show" id="show-passed">',
        '<p class="filter">show: <label for="show-all">all (7)</label><label for="show-problems">failed and errors (4)</label><label for="show-passed">passed (2)</label></p>',
        "<main>",
        '<section class="suite">',
        "<h2>cbqs replay corpus</h2>",
        '<p class="note">4 checks: 1 passed, 1 failed, 1 error, 1 skipped; 0.250 s, started 2026-12-03T06:37:38Z</p>',
        '<pre class="summary-line">replay: 4 fixtures</pre>',
        '<table class="cases"><thead><tr><th>status</th><th>check</th><th class="num">blocks</th><th class="num">txs</th><th class="num">seconds</th><th>difference</th></tr></thead><tbody>',
        '<tr class="passed" id="case-1-1"><td class="status">passed</td><td class="id">a-ok.json</td><td class="num">12,345</td><td class="num">18</td><td class="num">0.100</td><td class="outcome"></td></tr>',
        '<tr class="failed" id="case-1-2"><td class="status">failed</td><td class="id">b-mismatch.json</td><td class="num">2</td><td class="num">16</td><td class="num">0.200</td><td class="outcome"><div class="message">block 5: receipt_root: expected 0xab got 0xcd</div><pre class="details">key 0x03aa: balance expected &quot;1&quot; got &quot;2&quot;',
        'key 0x03ab: nonce expected &quot;0&quot; got &quot;1&quot;</pre><div class="reproduce">reproduce: <code>cbqs replay corpus/b-mismatch.json</code></div></td></tr>',
        '<tr class="error" id="case-1-3"><td class="status">error</td><td class="id">c-unusable.json</td><td class="num"></td><td class="num"></td><td class="num">0.000</td><td class="outcome"><div class="message">corpus/c-unusable.json: $: not valid JSON</div><div class="reproduce">reproduce: <code>cbqs replay corpus/c-unusable.json</code></div></td></tr>',
        '<tr class="skipped" id="case-1-4"><td class="status">skipped</td><td class="id">d-skipped.json</td><td class="num"></td><td class="num"></td><td class="num">0.000</td><td class="outcome"><div class="message">not in this shard</div></td></tr>',
        "</tbody></table>",
        "</section>",
        '<section class="suite">',
        "<h2>cbqs gas-vectors verify vectors.json</h2>",
        '<p class="note">3 checks: 1 passed, 1 failed, 1 error, 0 skipped; 0.500 s</p>',
        '<table class="cases"><thead><tr><th>status</th><th>check</th><th class="num">seconds</th><th>difference</th></tr></thead><tbody>',
        '<tr class="passed" id="case-2-1"><td class="status">passed</td><td class="id">cost table</td><td class="num">0.010</td><td class="outcome"></td></tr>',
        '<tr class="failed" id="case-2-2"><td class="status">failed</td><td class="id">create-stream</td><td class="num">0.000</td><td class="outcome"></td></tr>',
        '<tr class="error" id="case-2-3"><td class="status">error</td><td class="id">pinned SHA-256</td><td class="num">0.020</td><td class="outcome"><div class="message">artifact unreadable</div></td></tr>',
        "</tbody></table>",
        "</section>",
        "</main>",
        "</body>",
        "</html>",
        "",
      ].join("\n"),
    );
  });

  it("the filter needs no script: the page's stylesheet hides passed and skipped rows under 'failed and errors', failed, error and skipped rows under 'passed'", () => {
    const { css } = withoutStyle(htmlReport([suite(CASES)], META));
    const lines = css.split("\n");
    expect(lines).toContain("#show-problems:checked ~ main tr.passed, #show-problems:checked ~ main tr.skipped { display: none; }");
    expect(lines).toContain("#show-passed:checked ~ main tr.failed, #show-passed:checked ~ main tr.error, #show-passed:checked ~ main tr.skipped { display: none; }");
  });

  it("the verdict: PASSED names the skipped cases when there are any; FAILED counts errors in the singular and plural", () => {
    const verdict = (cases: TestCase[]) => htmlReport([suite(cases)], META).split("\n").find((l) => l.startsWith('<p class="verdict'));
    const ok: TestCase = { id: "a", status: "passed", seconds: 0 };
    const skipped: TestCase = { id: "s", status: "skipped", seconds: 0 };
    const error: TestCase = { id: "e", status: "error", seconds: 0 };
    const failed: TestCase = { id: "f", status: "failed", seconds: 0 };
    expect(verdict([ok, skipped, skipped])).toBe('<p class="verdict ok">PASSED: 1 of 3 passed, 2 skipped</p>');
    expect(verdict([ok])).toBe('<p class="verdict ok">PASSED: 1 of 1 passed</p>');
    expect(verdict([])).toBe('<p class="verdict ok">PASSED: 0 of 0 passed</p>');
    expect(verdict([failed, ok])).toBe('<p class="verdict bad">FAILED: 1 failed, 0 errors of 2</p>');
    expect(verdict([error, error, failed])).toBe('<p class="verdict bad">FAILED: 1 failed, 2 errors of 3</p>');
  });

  it("blocks and txs columns appear when any case of the suite has either count; a case without one has an empty cell", () => {
    const blocksOnly = htmlReport([suite([{ id: "b", status: "passed", seconds: 0, blocks: 3 }])], META);
    expect(blocksOnly).toContain('<th class="num">blocks</th><th class="num">txs</th>');
    expect(row(blocksOnly, "b")).toContain('<td class="id">b</td><td class="num">3</td><td class="num"></td><td class="num">0.000</td>');
    const txsOnly = htmlReport([suite([{ id: "t", status: "passed", seconds: 0, txs: 4 }, { id: "n", status: "passed", seconds: 0 }])], META);
    expect(txsOnly).toContain('<th class="num">blocks</th><th class="num">txs</th>');
    expect(row(txsOnly, "t")).toContain('<td class="id">t</td><td class="num"></td><td class="num">4</td><td class="num">0.000</td>');
    expect(row(txsOnly, "n")).toContain('<td class="id">n</td><td class="num"></td><td class="num"></td><td class="num">0.000</td>');
    // Each suite decides for itself: a suite without counts has no such columns beside one with them.
    const mixed = htmlReport([suite([{ id: "b", status: "passed", seconds: 0, blocks: 3 }]), suite([{ id: "c", status: "passed", seconds: 0 }])], META);
    expect(mixed.match(/<th class="num">blocks<\/th>/g)).toHaveLength(1);
    expect(row(mixed, "c")).toContain('<td class="id">c</td><td class="num">0.000</td>');
  });

  it("a failure's details are one <pre>, a line each; an empty details list writes no <pre>", () => {
    const page = htmlReport([suite([{ id: "f", status: "failed", seconds: 0, message: "m", details: ["one", "two"] }, { id: "g", status: "failed", seconds: 0, message: "m", details: [] }])], META);
    expect(page).toContain('<pre class="details">one\ntwo</pre>');
    expect(row(page, "g")).toContain('<td class="outcome"><div class="message">m</div></td></tr>');
  });

  it("escapes a fixture name, message, details, reproduce command and suite name holding <script>: text, never markup", () => {
    const evil = '<script>alert("x")</script>';
    const page = htmlReport(
      [suite([{ id: `a${evil}.json`, status: "failed", seconds: 0, message: `expected ${evil}`, details: [evil], reproduce: `cbqs replay 'a${evil}.json'` }], { name: evil, summary: evil })],
      { title: `t${evil}`, caseLabel: evil },
    );
    expect(page).not.toMatch(/<script/i);
    expect(page).toContain("a&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;.json");
    expect(page).toContain("cbqs replay &#39;a&lt;script&gt;");
    expect(page.match(/&lt;script&gt;/g)!.length).toBeGreaterThanOrEqual(9);
  });

  it("every text echoed into the page is escaped where it is written (&, <, >, both quotes): title, case label, suite name, summary line, case name, message, details, reproduce command", () => {
    const raw = (k: string) => `<${k}>&"'`;
    const esc = (k: string) => `&lt;${k}&gt;&amp;&quot;&#39;`;
    const page = htmlReport(
      [suite([{ id: raw("id"), status: "failed", seconds: 0, message: raw("message"), details: [raw("detail")], reproduce: raw("reproduce") }], { name: raw("suite"), summary: raw("summary") })],
      { title: raw("title"), caseLabel: raw("label") },
    );
    for (const k of ["title", "label", "suite", "summary", "id", "message", "detail", "reproduce"]) expect(page).not.toContain(raw(k));
    const lines = page.split("\n");
    expect(lines).toContain(`<title>${esc("title")}: FAILED</title>`);
    expect(lines).toContain(`<h1>${esc("title")}</h1>`);
    expect(lines).toContain(`<li><a href="#case-1-1">${esc("id")}</a> (failed): <span class="message">${esc("message")}</span></li>`);
    expect(lines).toContain(`<h2>${esc("suite")}</h2>`);
    expect(lines).toContain(`<p class="note">1 ${esc("label")}: 0 passed, 1 failed, 0 errors, 0 skipped; 0.300 s, started 2026-12-03T06:37:38Z</p>`);
    expect(lines).toContain(`<pre class="summary-line">${esc("summary")}</pre>`);
    expect(page).toContain(`<th>${esc("label")}</th>`);
    expect(row(page, esc("id"))).toContain(
      `<td class="outcome"><div class="message">${esc("message")}</div><pre class="details">${esc("detail")}</pre><div class="reproduce">reproduce: <code>${esc("reproduce")}</code></div></td>`,
    );
  });

  it("control characters are shown as the CLI shows them (\\x1b), never written", () => {
    const page = htmlReport([suite([{ id: "e\u0001.json", status: "error", seconds: 0, message: "\u001b[31mred \ud800" }])], META);
    expect(page).toContain("e\\x01.json");
    expect(page).toContain("\\x1b[31mred \\ud800");
    expect(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/.test(page)).toBe(false);
  });
});
