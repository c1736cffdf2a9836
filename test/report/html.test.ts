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
  });

  it("is self-contained: no script, no src, every href a link within the page, no url() or @import, and a CSP that forbids loading anything", () => {
    const page = htmlReport([suite(CASES), suite(CASES, { name: "second" })], META);
    expect(page).not.toMatch(/<script|<link|<img|<iframe|<object|<embed|\bsrc\s*=|url\(|@import/i);
    expect([...page.matchAll(/href="([^"]*)"/g)].map((m) => m[1]!).every((h) => /^#case-\d+-\d+$/.test(h))).toBe(true);
    expect(page).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`);
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

  it("control characters are shown as the CLI shows them (\\x1b), never written", () => {
    const page = htmlReport([suite([{ id: "e\u0001.json", status: "error", seconds: 0, message: "\u001b[31mred \ud800" }])], META);
    expect(page).toContain("e\\x01.json");
    expect(page).toContain("\\x1b[31mred \\ud800");
    expect(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/.test(page)).toBe(false);
  });
});
