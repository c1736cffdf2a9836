// The explorer page as a person sees it: a devnet node (in-process, port 0) serving `/`, opened in
// a real headless Chromium (puppeteer-core driving Debian's chromium, found as the report tests
// find it: test/report/tools.ts; a missing Chromium fails the test in CI). The page loads with no
// console error and nothing from elsewhere, lists the blocks, follows a new block within a second
// of the POST /mine answer, leads with the latest transactions and streams too (dev accounts by
// name), leads a block's page with its neighbours and its transactions' outcomes, cycles, cells
// and fees, leads a stream's page with its summary (status, escrow, rate, funded until, provider,
// owner) before its chart and record, finds a provider by a dev account's name, and a revert
// makes it read the blocks again. Screenshots go to .cache/test-output/explorer/ (docs/node.md
// "The explorer") for a person to look at.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { devnetGenesisSource } from "../../src/harness/devnet.js";
import { cbqs } from "../cli/program.js";
import { requireFreshDist } from "../fuzz/dist.js";
import { chromiumMissing, chromiumPath, requireTool } from "../report/tools.js";
import { get, post, startNode, type TestNode } from "./helpers.js";

const OUTPUT = join(import.meta.dirname, "..", "..", ".cache", "test-output", "explorer");

let node: TestNode;
let browser: Browser | null = null;
let page: Page;
/** Every console error, uncaught exception, failed request and error status the page met. */
const problems: string[] = [];
const requested: string[] = [];

/** What the callbacks below read of an element, in the page (the tests compile without the DOM's types; conditions waited for are page expressions). */
interface Rendered {
  innerText: string;
  dataset: Record<string, string | undefined>;
  getAttribute(name: string): string | null;
}

const rowHeights = (): Promise<string[]> => page.$$eval("#blocks tr", (rows) => rows.map((r) => (r as unknown as Rendered).getAttribute("data-height") ?? ""));

async function tx(json: string): Promise<void> {
  const r = await cbqs("tx", json, "--node", node.url, "--send");
  expect(r.err).toBe("");
  expect(r.exitCode).toBe(0);
}

beforeAll(async () => {
  // The node serves the compiled page (dist/src/explorer/): it must be this source's.
  requireFreshDist();
  node = await startNode({ kind: "genesis", source: devnetGenesisSource(10) });
  const executablePath = chromiumPath();
  if (executablePath === null) return; // each test says so (requireTool)
  // Chromium's sandbox cannot start as root (CI runs as root).
  browser = await puppeteer.launch({ executablePath, headless: true, args: process.getuid?.() === 0 ? ["--no-sandbox"] : [] });
  page = await browser.newPage();
  await page.setViewport({ width: 1200, height: 900 });
  page.on("console", (m) => void (m.type() === "error" && problems.push(`console: ${m.text()}`)));
  page.on("pageerror", (e) => void problems.push(`exception: ${(e as Error).message}`));
  page.on("requestfailed", (r) => void (!r.url().endsWith("/subscribe") && problems.push(`failed: ${r.url()} ${r.failure()?.errorText ?? ""}`)));
  page.on("response", (r) => void (r.status() >= 400 && problems.push(`HTTP ${r.status()}: ${r.url()}`)));
  page.on("request", (r) => void requested.push(r.url()));
  mkdirSync(OUTPUT, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await node?.close();
});

describe("the explorer page in a headless Chromium", () => {
  it("loads with no console error, loading nothing but the node's files, and lists the blocks, newest first", async (ctx) => {
    requireTool(ctx, chromiumMissing());
    expect((await post(node.url, "/mine?blocks=3", "")).status).toBe(200);
    await page.goto(`${node.url}/`, { waitUntil: "load" });
    await page.waitForFunction(`document.querySelectorAll("#blocks tr").length === 3 && document.querySelector("#live").classList.contains("on")`);
    expect(await rowHeights()).toEqual(["3", "2", "1"]);
    expect(await page.title()).toBe("Latest · cbqs explorer");
    expect(requested.filter((u) => !u.startsWith(`${node.url}/`))).toEqual([]);
    expect(requested).toContain(`${node.url}/explorer/uPlot.iife.min.js`);
    // The node's style sheet applies (its Content-Security-Policy allows it): the header sticks, the text is the page's colour.
    expect(await page.evaluate(`[getComputedStyle(document.querySelector("header")).position, getComputedStyle(document.body).color]`)).toEqual(["sticky", "rgb(29, 35, 48)"]);
    expect(problems).toEqual([]);
  });

  it("follows a new block: it is listed within a second of the POST /mine answer", async (ctx) => {
    requireTool(ctx, chromiumMissing());
    const mined = await post(node.url, "/mine", "");
    const answered = performance.now();
    expect(mined.body["height"]).toBe("4");
    // Within 1,000 ms of the answer (the explorer's one-second bound), with the time it took kept in the log.
    await page.waitForFunction(`document.querySelector("#blocks tr")?.getAttribute("data-height") === "4"`, { timeout: 1_000, polling: "raf" });
    console.info(`explorer: block 4 listed ${Math.round(performance.now() - answered)} ms after the POST /mine answer`);
    expect(await rowHeights()).toEqual(["4", "3", "2", "1"]);
    expect(await page.$eval("#live", (e) => (e as unknown as Rendered).innerText)).toBe("head 4");
    await page.screenshot({ path: join(OUTPUT, "home-new-block.png") });
    expect(problems).toEqual([]);
  });

  it("a stream's page: its record, a chart whose data shows the escrow falling as rent settles, its status over time and events", async (ctx) => {
    requireTool(ctx, chromiumMissing());
    // dev1 registers as a provider; dev0 opens a stream with it (fixtures/devnet/, docs/guides/run-a-devnet.md).
    await tx("@fixtures/devnet/register-provider.json");
    await post(node.url, "/mine", "");
    await tx("@fixtures/devnet/create-stream.json");
    const created = Number((await post(node.url, "/mine", "")).body["height"]);
    const found = await get(node.url, `/search?q=${encodeURIComponent("owner:0xa05a065ba5d5888cc61c4e5ccfbd57f7bd9bbe99/nonce:1")}`);
    const id = String(found.body["id"]);
    expect(found.body["kind"]).toBe("stream");
    // Rent accrues block by block; two settlements (by dev2: SettleStreamRent is permissionless) take it.
    const settle = JSON.stringify({ from: "dev2", cbqs: { SettleStreamRent: { stream_id: id } } });
    await post(node.url, "/mine?blocks=3", "");
    await tx(settle);
    await post(node.url, "/mine", "");
    await post(node.url, "/mine", "");
    await tx(settle);
    await post(node.url, "/mine", "");
    const head = Number((await post(node.url, "/mine", "")).body["height"]);

    await page.goto(`${node.url}/#/stream/${id}`, { waitUntil: "load" });
    await page.waitForSelector("figure.chart canvas");
    const chart = await page.$eval("figure.chart", (e) => ({ ...(e as unknown as Rendered).dataset }));
    const heights = chart["heights"]!.split(",").map(Number);
    const escrow = chart["escrow"]!.split(",");
    const settled = chart["settled"]!.split(",");
    // One point per block from genesis to the head (all retained), the stream absent before it was created.
    expect(heights).toEqual(Array.from({ length: head + 1 }, (_, h) => h));
    const since = (series: string[]) => series.slice(created).map(BigInt);
    expect(escrow.slice(0, created).every((v) => v === "")).toBe(true);
    const recorded = since(escrow);
    // The recorded escrow: the initial 80,000, then lower after each settlement, never higher.
    expect(recorded[0]).toBe(80_000n);
    expect(recorded.every((v, i) => i === 0 || v <= recorded[i - 1]!)).toBe(true);
    expect(new Set(recorded).size).toBe(3);
    // What a settlement would leave falls at every block while the stream can pay.
    const wouldLeave = since(settled);
    expect(wouldLeave.every((v, i) => i === 0 || v < wouldLeave[i - 1]! || v === 0n)).toBe(true);
    expect(wouldLeave[wouldLeave.length - 1]! < recorded[recorded.length - 1]!).toBe(true);
    const text = await page.$eval("main", (e) => (e as unknown as Rendered).innerText);
    expect(text).toContain("cbqs.stream.rent_settled");
    expect(text).toContain("cbqs.stream.created");
    expect(await page.$eval("#status-spans", (e) => (e as unknown as Rendered).innerText)).toMatch(new RegExp(`^absent: blocks 0–${created - 1}\\nActive: blocks ${created}–`));
    // The page leads with the stream's summary, before the chart and the record: the figures a person came for, with units and names.
    const record = (await get(node.url, `/cbqs/stream/${id}`)).body["stream"] as Record<string, string>;
    const order = await page.evaluate(`[...document.querySelectorAll("main > table, main > figure, main > h2")].map((e) => e.tagName === "TABLE" ? e.className : e.tagName === "FIGURE" ? "chart" : e.textContent)`);
    expect(order).toEqual(["fields summary", "Escrow over blocks", "chart", "Status over time", "Events", "events", "Record", "fields"]);
    const summary = await page.$$eval("main > table.summary tr", (rows) => rows.map((r) => (r as unknown as Rendered).innerText.split("\t")));
    const grouped = (n: bigint) => n.toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    const fundedUntil = BigInt(record["last_settled_block"]!) + BigInt(record["escrow_balance"]!) / BigInt(record["rate_per_block"]!);
    expect(summary).toEqual([
      ["status", "Active"],
      ["escrow", `${grouped(BigInt(record["escrow_balance"]!))} nano-CBY`],
      ["rate", "8,000 nano-CBY per block"],
      ["funded until", `block ${grouped(fundedUntil)} (${grouped(fundedUntil - BigInt(head))} blocks after the head)`],
      ["provider", "dev1 0x074b21343d43bffcb01084541b4f8dab844fdcaa"],
      ["owner", "dev0 0xa05a065ba5d5888cc61c4e5ccfbd57f7bd9bbe99"],
      ["created at", grouped(BigInt(created))],
    ]);
    // The record's nested fields are tables of their own, not JSON text.
    expect(await page.$$eval("main > table.fields:not(.summary) table.nested", (t) => t.length)).toBeGreaterThan(0);
    expect(await page.$$eval("main > table.fields:not(.summary) pre", (t) => t.length)).toBe(0);
    await page.screenshot({ path: join(OUTPUT, "stream.png"), fullPage: true });
    expect(problems).toEqual([]);
  });

  it("the home page lists the latest transactions and streams beside the blocks, dev accounts by name, amounts with their unit", async (ctx) => {
    requireTool(ctx, chromiumMissing());
    await page.goto(`${node.url}/`, { waitUntil: "load" });
    await page.waitForSelector("#latest-streams table");
    const cells = (selector: string) => page.$$eval(`${selector} tbody tr`, (rows) => rows.map((r) => (r as unknown as Rendered).innerText.split("\t")));
    const txs = await cells("#latest-txs");
    // Newest first: the second settlement (by dev2), the first, the stream's creation (dev0), the provider's registration (dev1).
    expect(txs.map((r) => [r[2], r[3], r[4], r[5]])).toEqual([
      ["dev2", "SettleStreamRent", "ok", "0 nano-CBY"],
      ["dev2", "SettleStreamRent", "ok", "0 nano-CBY"],
      ["dev0", "CreateStream", "ok", "0 nano-CBY"],
      ["dev1", "RegisterProvider", "ok", "0 nano-CBY"],
    ]);
    const streams = await cells("#latest-streams");
    expect(streams).toHaveLength(1);
    expect(streams[0]!.slice(1, 4)).toEqual(["dev0", "dev1", "Active"]);
    expect(streams[0]![4]).toMatch(/^[\d,]+ nano-CBY$/);
    expect(streams[0]![5]).toBe("8,000 nano-CBY / block");
    await page.screenshot({ path: join(OUTPUT, "home.png"), fullPage: true });
    expect(problems).toEqual([]);
  });

  it("a stream whose escrow no longer covers the blocks since its last settlement says rent is owed", async (ctx) => {
    requireTool(ctx, chromiumMissing());
    const id = String((await get(node.url, `/search?q=${encodeURIComponent("owner:0xa05a065ba5d5888cc61c4e5ccfbd57f7bd9bbe99/nonce:1")}`)).body["id"]);
    const record = (await get(node.url, `/cbqs/stream/${id}`)).body["stream"] as Record<string, string>;
    const until = BigInt(record["last_settled_block"]!) + BigInt(record["escrow_balance"]!) / BigInt(record["rate_per_block"]!);
    const head = BigInt(String((await post(node.url, `/mine?height=${until + 2n}`, "")).body["height"]));
    await page.goto(`${node.url}/#/stream/${id}`, { waitUntil: "load" });
    await page.waitForSelector("figure.chart canvas");
    const row = await page.$$eval("main > table.summary tr", (rows) => rows.map((r) => (r as unknown as Rendered).innerText.split("\t")).find((r) => r[0] === "funded until"));
    expect(row).toEqual(["funded until", `block ${until} (${head - until} blocks before the head: rent is owed, and the next settlement suspends it)`]);
    expect(problems).toEqual([]);
  });

  it("a block's page leads with its neighbours and totals, then each transaction's outcome, cycles, cells and fee, decoded, with its named events", async (ctx) => {
    requireTool(ctx, chromiumMissing());
    await page.goto(`${node.url}/#/block/6`, { waitUntil: "load" });
    await page.waitForSelector("table.txs");
    expect(await page.$eval("nav.pager", (e) => (e as unknown as Rendered).innerText.split("\n"))).toEqual(["← block 5", "block 7 →"]);
    const block = (await get(node.url, "/block/6")).body;
    const [tx] = block["transactions"] as Array<{ receipt: { cycles: string; cells: string } }>;
    const grouped = (n: string) => n.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    const summary = await page.$$eval("main > table.summary tr", (rows) => rows.map((r) => (r as unknown as Rendered).innerText.split("\t")));
    expect(summary.map((r) => r[0])).toEqual(["time (UTC)", "transactions", "cycles", "cells", "fees"]);
    expect(summary.slice(1)).toEqual([
      ["transactions", "1: 1 ok, 0 rejected"],
      ["cycles", grouped(tx!.receipt.cycles)],
      ["cells", grouped(tx!.receipt.cells)],
      ["fees", "0 nano-CBY"],
    ]);
    const row = await page.$eval("table.txs tbody tr", (e) => (e as unknown as Rendered).innerText.split("\t"));
    expect(row[2]).toBe("dev0");
    expect(row[3]!.trim()).toMatch(/^CreateStream\b/);
    expect(row.slice(4, 8)).toEqual(["ok", grouped(tx!.receipt.cycles), grouped(tx!.receipt.cells), "0 nano-CBY"]);
    expect(row[8]).toContain("cbqs.stream.created");
    await page.screenshot({ path: join(OUTPUT, "block.png"), fullPage: true });
    expect(problems).toEqual([]);
  });

  it("a malformed or unknown fragment shows a page that says so, with no uncaught error; the next link works again", async (ctx) => {
    requireTool(ctx, chromiumMissing());
    await page.goto(`${node.url}/#/stream/%E0%A4%A`, { waitUntil: "load" });
    await page.waitForSelector("#error");
    expect(await page.$eval("#error", (e) => (e as unknown as Rendered).innerText)).toBe('the link\'s id "%E0%A4%A" is not valid %-encoding');
    expect(await page.title()).toBe("Not shown · cbqs explorer");
    await page.goto(`${node.url}/#/block/6`, { waitUntil: "load" });
    await page.waitForSelector("table.txs");
    expect(problems).toEqual([]);
  });

  it("search: a dev account's name finds its provider page", async (ctx) => {
    requireTool(ctx, chromiumMissing());
    await page.goto(`${node.url}/`, { waitUntil: "load" });
    await page.type("#q", "dev1");
    await page.keyboard.press("Enter");
    await page.waitForFunction(`location.hash.startsWith("#/provider/") && document.querySelector("main h1")?.textContent.startsWith("Provider")`);
    const text = await page.$eval("main", (e) => (e as unknown as Rendered).innerText);
    expect(text).toContain("0x074b21343d43bffcb01084541b4f8dab844fdcaa");
    expect(text.split("\n")[0]).toBe("Provider dev1 Active");
    const summary = await page.$$eval("main > table.summary tr", (rows) => rows.map((r) => (r as unknown as Rendered).innerText.split("\t")));
    expect(summary).toEqual([
      ["account", "dev1 0x074b21343d43bffcb01084541b4f8dab844fdcaa"],
      ["status", "Active"],
      ["live streams", "1"],
      ["registered at", "5"],
    ]);
    await page.screenshot({ path: join(OUTPUT, "provider.png"), fullPage: true });
    expect(problems).toEqual([]);
  });

  it("a devnet revert's rewind event makes the page read the blocks again: the abandoned ones are gone", async (ctx) => {
    requireTool(ctx, chromiumMissing());
    await page.goto(`${node.url}/`, { waitUntil: "load" });
    const snapshot = await post(node.url, "/devnet/snapshot", "");
    const at = String(snapshot.body["height"]);
    const mined = String((await post(node.url, "/mine?blocks=2", "")).body["height"]);
    await page.waitForFunction(`document.querySelector("#blocks tr")?.getAttribute("data-height") === "${mined}"`);
    await post(node.url, `/devnet/revert?id=${String(snapshot.body["id"])}`, "");
    await page.waitForFunction(`document.querySelector("#blocks tr")?.getAttribute("data-height") === "${at}"`);
    expect((await rowHeights())[0]).toBe(at);
    expect(await page.$eval("#live", (e) => (e as unknown as Rendered).innerText)).toBe(`head ${at}`);
    expect(problems).toEqual([]);
  });
});
