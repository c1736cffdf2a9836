// The HTML report as a person sees it: `cbqs replay --report` on a corpus with one fixture of
// each outcome, opened in a real headless Chromium (puppeteer-core driving Debian's chromium).
// It renders, loads nothing but itself, lists every fixture, a failed row shows its difference and
// the command that reproduces it, text echoed from a fixture stays text, and the filter works.
// Without a Chromium it is skipped saying so — and fails in CI (test/report/tools.ts).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cbqs } from "../cli/program.js";
import { mixedCorpus } from "./corpus.js";
import { chromiumMissing, chromiumPath, requireTool } from "./tools.js";

const dir = mkdtempSync(join(tmpdir(), "cbqs-browser-"));
const corpus = join(dir, "corpus");
const html = join(dir, "replay.html");
let browser: Browser | null = null;
let page: Page;
const requests: string[] = [];
let files: string[] = [];

beforeAll(async () => {
  files = mixedCorpus(corpus);
  expect((await cbqs("replay", corpus, "--quiet", "--report", html)).exitCode).toBe(1);
  const executablePath = chromiumPath();
  if (executablePath === null) return; // each test says so (requireTool)
  // Chromium's sandbox cannot start as root (CI runs as root).
  browser = await puppeteer.launch({ executablePath, headless: true, args: process.getuid?.() === 0 ? ["--no-sandbox"] : [] });
  page = await browser.newPage();
  page.on("request", (r) => void requests.push(r.url()));
  await page.goto(pathToFileURL(html).href, { waitUntil: "load" });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What the callbacks below read of an element, in the page (this project compiles without the DOM's types). */
interface Rendered {
  innerText: string;
  offsetHeight: number;
  dataset: Record<string, string>;
  getAttribute(name: string): string | null;
}

/** The rendered text of the first element matching `selector` (innerText: what is on screen). */
const shown = (selector: string): Promise<string> => page.$eval(selector, (e) => (e as unknown as Rendered).innerText);
/** Whether the element takes room on screen (a filtered row has display: none). */
const displayed = (selector: string): Promise<boolean> => page.$eval(selector, (e) => (e as unknown as Rendered).offsetHeight > 0);

describe("the HTML report in a headless Chromium", () => {
  it("renders: the title, the verdict and the summary numbers on screen; nothing loaded but the page itself; no script element", async (ctx) => {
    requireTool(ctx, chromiumMissing());
    expect(await page.title()).toBe("cbqs replay: FAILED");
    expect(await shown("h1")).toBe("cbqs replay");
    expect(await shown(".verdict")).toBe("FAILED: 2 failed, 2 errors of 5");
    const counts = await page.$$eval("[data-count]", (cells) => cells.map((c) => [(c as unknown as Rendered).dataset["count"], (c as unknown as Rendered).innerText]));
    expect(counts).toEqual([["tests", "5"], ["passed", "1"], ["failed", "2"], ["errors", "2"], ["skipped", "0"]]);
    expect(await displayed("table.summary")).toBe(true);
    expect(requests).toEqual([pathToFileURL(html).href]);
    expect(await page.$$eval("script", (s) => s.length)).toBe(0);
  });

  it("lists every fixture, a row each, by its name under the directory", async (ctx) => {
    requireTool(ctx, chromiumMissing());
    expect(await page.$$eval("table.cases td.id", (cells) => cells.map((c) => (c as unknown as Rendered).innerText))).toEqual(files);
  });

  it("a failed row shows its first difference, the differing key and the command that reproduces it; an unusable one its error, <script> as text", async (ctx) => {
    requireTool(ctx, chromiumMissing());
    const state = await shown("tr#case-1-3");
    expect(state).toMatch(/^failed\tc-state\.json\t2\t16\t[0-9.]+\t\n?block 5: state_root \(\$\.blocks\[1\]\.state_root\): expected 0x(cd){32} got 0x[0-9a-f]{64}\n/);
    expect(state).toMatch(/\nkey 0x01[0-9a-f]{106}: balance expected "\d+" got "\d+"\n/);
    expect(state).toContain(`reproduce: cbqs replay ${join(corpus, "c-state.json")}`);
    expect(await shown("tr#case-1-2")).toMatch(/block 5: receipt_root \(\$\.blocks\[1\]\.receipt_root\): expected 0x(ab){32} got 0x/);
    expect(await shown("tr#case-1-4")).toContain(`$.format: unexpected format "<script>alert(1)</script>" (expected "cbqs-fixture/v1")`);
    // The failure list links to the rows.
    expect(await page.$$eval("ol.problems a", (links) => links.map((a) => (a as unknown as Rendered).getAttribute("href")))).toEqual(["#case-1-2", "#case-1-3", "#case-1-4", "#case-1-5"]);
  });

  it("the filter shows only failures and errors, or only passed rows, without a script", async (ctx) => {
    requireTool(ctx, chromiumMissing());
    await page.click('label[for="show-problems"]');
    expect([await displayed("tr#case-1-1"), await displayed("tr#case-1-3")]).toEqual([false, true]);
    await page.click('label[for="show-passed"]');
    expect([await displayed("tr#case-1-1"), await displayed("tr#case-1-3")]).toEqual([true, false]);
    await page.click('label[for="show-all"]');
    expect([await displayed("tr#case-1-1"), await displayed("tr#case-1-3")]).toEqual([true, true]);
  });
});
