// What a web page the developer visits can do to their devnet, run in a real headless Chromium
// (puppeteer-core driving Debian's chromium, as test/node/explorer.test.ts does; a missing
// Chromium fails the test in CI). The page is served by a second loopback server on another
// port — another origin — and tries, with no user action, what an attacker would: a precomputed
// transfer of dev0's whole balance as a text/plain POST /tx, a bodiless POST /mine, a snapshot and
// a revert to the developer's snapshot, each as a no-cors fetch, a cors-mode fetch, with the
// header writes need, and as a form submitted into a frame; and it reads the dev seeds, with CORS,
// as a no-cors fetch and GET /fixture as an image (no Origin: its browser's Sec-Fetch-Site names
// the page's site). The node must refuse every one (counted as 403 in its metrics, so each request
// did reach it), its state must not move, and the page must read nothing. A page of an origin
// given to --http-corsdomain writes, after a preflight, and reads the answers.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import puppeteer, { type Browser } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { devnetGenesisSource } from "../../src/harness/devnet.js";
import { cbqs } from "../cli/program.js";
import { chromiumMissing, chromiumPath, requireTool } from "../report/tools.js";
import { get, post, startNode, type TestNode } from "./helpers.js";

/** The default devnet's chain instance and dev0: public constants (docs/guides/run-a-devnet.md), the same on every developer's machine. */
const DEVNET_INSTANCE = "0x412b3b5430d4fa6f9d8e2ced01f155c3181289dda3fcab8d3622a3e07a1b95a9";
const DEV0 = "0xa05a065ba5d5888cc61c4e5ccfbd57f7bd9bbe99";
const THIEF = "0xbadbadbadbadbadbadbadbadbadbadbadbadbad0";
const BALANCE = "1000000000000000000";

let browser: Browser | null = null;
const servers: Server[] = [];
/** dev0's whole balance to THIEF, built offline by `cbqs tx` before any node runs. */
let drainTx: string;

/** A loopback server answering `/` with `html()`; another port is another origin. */
async function pageServer(html: () => string): Promise<string> {
  const server = createServer((req, res) => {
    if (req.url !== "/") {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(html());
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The attacker's page: every attempt against `node`, its outcome as the page saw it in `window.results`. */
function attackPage(node: string, snapshotId: string): string {
  const forms: Array<[name: string, action: string, enctype: string, fields: Array<[string, string]>]> = [
    // A text/plain form's body is `name=value`: this name and value make it the JSON {"envelope": …} POST /tx reads.
    ["form tx", "/tx", "text/plain", [[`{"envelope":"${drainTx}","pad":"`, '"}']]],
    ["form mine", "/mine", "application/x-www-form-urlencoded", []],
    ["form snapshot", "/devnet/snapshot", "application/x-www-form-urlencoded", []],
    ["form revert", `/devnet/revert?id=${snapshotId}`, "text/plain", []],
  ];
  return `<!doctype html><meta charset="utf-8"><title>nothing to see</title><iframe name="sink"></iframe>
<script>
const NODE = ${JSON.stringify(node)}, TX = ${JSON.stringify(drainTx)}, SNAP = ${JSON.stringify(snapshotId)}, FORMS = ${JSON.stringify(forms)};
const out = {};
async function run(name, path, init) {
  try {
    const r = await fetch(NODE + path, init);
    out[name] = { type: r.type, status: r.status, body: await r.text() };
  } catch (e) {
    out[name] = { error: e.name };
  }
}
(async () => {
  await run("no-cors text/plain POST /tx", "/tx", { method: "POST", mode: "no-cors", headers: { "content-type": "text/plain" }, body: TX });
  await run("no-cors POST /mine", "/mine", { method: "POST", mode: "no-cors" });
  await run("no-cors POST /devnet/snapshot", "/devnet/snapshot", { method: "POST", mode: "no-cors" });
  await run("no-cors POST /devnet/revert", "/devnet/revert?id=" + SNAP, { method: "POST", mode: "no-cors" });
  await run("cors text/plain POST /tx", "/tx", { method: "POST", headers: { "content-type": "text/plain" }, body: TX });
  await run("cors POST /mine", "/mine", { method: "POST" });
  await run("POST /tx with X-Cbqs-Client", "/tx", { method: "POST", headers: { "x-cbqs-client": "page" }, body: TX });
  await run("POST /mine with X-Cbqs-Client", "/mine", { method: "POST", headers: { "x-cbqs-client": "page" } });
  await run("GET /devnet/accounts", "/devnet/accounts", {});
  await run("GET /account/dev0", "/account/dev0", {});
  // Reads whose answers the page cannot see, which would still cost the node: a no-cors fetch, an image.
  await run("no-cors GET /devnet/accounts", "/devnet/accounts", { mode: "no-cors" });
  out["img GET /fixture"] = await new Promise((resolve) => {
    const img = new Image();
    img.onload = () => resolve({ loaded: true });
    img.onerror = () => resolve({ loaded: false });
    img.src = NODE + "/fixture";
  });
  const frame = document.querySelector("iframe");
  for (const [name, action, enctype, fields] of FORMS) {
    const form = document.createElement("form");
    Object.assign(form, { method: "POST", action: NODE + action, enctype, target: "sink" });
    for (const [n, v] of fields) form.append(Object.assign(document.createElement("input"), { type: "hidden", name: n, value: v }));
    document.body.append(form);
    const loaded = new Promise((resolve) => frame.addEventListener("load", resolve, { once: true }));
    form.submit();
    await loaded;
    let readable;
    try { readable = frame.contentDocument !== null && frame.contentDocument.body.innerText; } catch (e) { readable = false; }
    out[name] = { readable };
  }
  window.results = out;
})();
</script>`;
}

/** Opens `url` in a fresh tab and returns what its script put in `window.results`. */
async function resultsOf(url: string): Promise<Record<string, unknown>> {
  const page = await browser!.newPage();
  try {
    await page.goto(url, { waitUntil: "load" });
    await page.waitForFunction("window.results !== undefined", { timeout: 20_000 });
    return (await page.evaluate("window.results")) as Record<string, unknown>;
  } finally {
    await page.close();
  }
}

/** The node's request count for `route` answered `status` (GET /metrics). */
async function answered(n: TestNode, route: string, status: number): Promise<number> {
  const text = await (await fetch(n.url + "/metrics")).text();
  const m = new RegExp(`^cbqs_http_requests_total\\{route="${route.replaceAll(".", "\\.")}",status="${status}"\\} (\\d+)$`, "m").exec(text);
  return m === null ? 0 : Number(m[1]);
}

/** What the attacker's page must have seen: opaque answers, network errors, frames it cannot read. */
const NOTHING_READ = {
  "no-cors text/plain POST /tx": { type: "opaque", status: 0, body: "" },
  "no-cors POST /mine": { type: "opaque", status: 0, body: "" },
  "no-cors POST /devnet/snapshot": { type: "opaque", status: 0, body: "" },
  "no-cors POST /devnet/revert": { type: "opaque", status: 0, body: "" },
  "cors text/plain POST /tx": { error: "TypeError" },
  "cors POST /mine": { error: "TypeError" },
  "POST /tx with X-Cbqs-Client": { error: "TypeError" },
  "POST /mine with X-Cbqs-Client": { error: "TypeError" },
  "GET /devnet/accounts": { error: "TypeError" },
  "GET /account/dev0": { error: "TypeError" },
  "no-cors GET /devnet/accounts": { type: "opaque", status: 0, body: "" },
  "img GET /fixture": { loaded: false },
  "form tx": { readable: false },
  "form mine": { readable: false },
  "form snapshot": { readable: false },
  "form revert": { readable: false },
};

/** Every attempt reached the node and was refused 403: per endpoint, how many (a preflight counts under its path). */
const REFUSED = { "cbqs.devnet.tx": 4, "cbqs.devnet.mine": 4, "cbqs.devnet.snapshot": 2, "cbqs.devnet.revert": 2, "cbqs.devnet.accounts": 2, "cbqs.account": 1, "cbqs.fixture": 1 };

/** A developer's devnet mid-session: three blocks, a snapshot at block 2 (id 1). */
async function developersNode(options: { corsOrigins?: string[] } = {}): Promise<TestNode> {
  const n = await startNode({ kind: "genesis", source: devnetGenesisSource(10) }, options);
  expect((await post(n.url, "/mine?blocks=2", "")).status).toBe(200);
  expect((await post(n.url, "/devnet/snapshot", "")).body["id"]).toBe("1");
  expect((await post(n.url, "/mine", "")).body["height"]).toBe("3");
  return n;
}

/** The node's state is the developer's: block 3, dev0's balance untouched, nothing queued, no snapshot but theirs. */
async function expectUntouched(n: TestNode): Promise<void> {
  const dev0 = await get(n.url, `/account/${DEV0}`);
  expect([dev0.body["height"], dev0.body["balance"], dev0.body["nonce"], dev0.body["pending"]]).toEqual(["3", BALANCE, "0", 0]);
  expect((await get(n.url, `/account/${THIEF}`)).body["balance"]).toBe("0");
  // The next snapshot is the developer's second: none was taken by the page.
  expect((await post(n.url, "/devnet/snapshot", "")).body["id"]).toBe("2");
}

beforeAll(async () => {
  const built = await cbqs("tx", JSON.stringify({ from: DEV0, transfer: { to: THIEF, amount: BALANCE } }), "--chain-id", "7", "--chain-instance", DEVNET_INSTANCE, "--nonce", "0");
  expect([built.exitCode, built.err]).toEqual([0, ""]);
  drainTx = built.out.trim();
  const executablePath = chromiumPath();
  if (executablePath === null) return; // each test says so (requireTool)
  // Chromium's sandbox cannot start as root (CI runs as root).
  browser = await puppeteer.launch({ executablePath, headless: true, args: process.getuid?.() === 0 ? ["--no-sandbox"] : [] });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  for (const s of servers) s.close();
});

describe("a web page of another origin against the devnet, in a headless Chromium", () => {
  it("cannot drain dev0, mine, snapshot or revert, nor read any answer: every attempt is refused and the chain is unchanged", async (ctx) => {
    requireTool(ctx, chromiumMissing());
    const n = await developersNode();
    try {
      const attacker = await pageServer(() => attackPage(n.url, "1"));
      expect(await resultsOf(attacker)).toEqual(NOTHING_READ);
      for (const [route, count] of Object.entries(REFUSED)) expect([route, await answered(n, route, 403)]).toEqual([route, count]);
      expect([await answered(n, "cbqs.devnet.tx", 200), await answered(n, "cbqs.devnet.accounts", 200), await answered(n, "cbqs.fixture", 200)]).toEqual([0, 0, 0]);
      await expectUntouched(n);
    } finally {
      await n.close();
    }
  }, 60_000);

  it("a page of an origin given to --http-corsdomain writes after a preflight and reads the answers; a page of any other origin still cannot", async (ctx) => {
    requireTool(ctx, chromiumMissing());
    let nodeUrl = "";
    const app = await pageServer(
      () => `<!doctype html><meta charset="utf-8"><title>a broker's dashboard</title><script>
const NODE = ${JSON.stringify(nodeUrl)};
const json = async (r) => ({ status: r.status, body: await r.json() });
(async () => {
  const out = {};
  out.tx = await fetch(NODE + "/tx", { method: "POST", headers: { "content-type": "text/plain", "x-cbqs-client": "dashboard" }, body: ${JSON.stringify(drainTx)} }).then(json);
  out.mine = await fetch(NODE + "/mine", { method: "POST", headers: { "x-cbqs-client": "dashboard" } }).then(json);
  out.account = await fetch(NODE + "/account/${THIEF}").then(json);
  out.bare = await fetch(NODE + "/mine", { method: "POST" }).then(json);
  window.results = out;
})();
</script>`,
    );
    const n = await developersNode({ corsOrigins: [app] });
    nodeUrl = n.url;
    try {
      const attacker = await pageServer(() => attackPage(n.url, "1"));
      expect(await resultsOf(attacker)).toEqual(NOTHING_READ);
      await expectUntouched(n);
      const seen = (await resultsOf(app)) as Record<string, { status: number; body: Record<string, unknown> }>;
      expect([seen["tx"]!.status, seen["tx"]!.body["nonce"]]).toEqual([200, "0"]);
      expect([seen["mine"]!.status, seen["mine"]!.body["height"], (seen["mine"]!.body["receipts"] as Array<{ status: string }>).map((r) => r.status)]).toEqual([200, "4", ["ok"]]);
      expect([seen["account"]!.status, seen["account"]!.body["balance"]]).toEqual([200, BALANCE]);
      // Its origin is allowed, yet a write without the header is still refused — and it may read why.
      expect([seen["bare"]!.status, (seen["bare"]!.body["error"] as { code: string }).code]).toEqual([403, "missing_client_header"]);
      // The two writes were preflighted (a 204 each) before they were sent.
      expect([await answered(n, "cbqs.devnet.tx", 204), await answered(n, "cbqs.devnet.mine", 204)]).toEqual([1, 1]);
    } finally {
      await n.close();
    }
  }, 60_000);
});
