// The reads behind the explorer page (docs/node.md "The explorer"): GET /block with decoded
// transactions, a stream's history (its §6.1 settled escrow checked against what a real
// settlement left) and events (paged, bounded scan), GET /search, and the page's own files.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { devnetGenesisSource } from "../../src/harness/devnet.js";
import { EVENTS_SCAN_BLOCKS, MAX_HISTORY_POINTS } from "../../src/node/explorer-reads.js";
import { EXPLORER_MODULES } from "../../src/node/explorer.js";
import { cbqs } from "../cli/program.js";
import { requireFreshDist } from "../fuzz/dist.js";
import { get, post, startNode, type TestNode } from "./helpers.js";

const OWNER = "0xa05a065ba5d5888cc61c4e5ccfbd57f7bd9bbe99"; // dev0
const PROVIDER = "0x074b21343d43bffcb01084541b4f8dab844fdcaa"; // dev1
const STREAM_KEY = `owner:${OWNER}/nonce:1`;

let n: TestNode;
let streamId = "";
let createTx = "";
/** Heights of the two blocks that settled the stream's rent. */
const settledAt: number[] = [];

async function send(json: string): Promise<string> {
  const r = await cbqs("tx", json, "--node", n.url, "--send");
  expect(r.exitCode, r.err).toBe(0);
  return String((JSON.parse(r.out) as { tx_hash: string }).tx_hash);
}

const mine = async (blocks = 1): Promise<number> => Number((await post(n.url, blocks === 1 ? "/mine" : `/mine?blocks=${blocks}`, "")).body["height"]);

beforeAll(async () => {
  n = await startNode({ kind: "genesis", source: devnetGenesisSource(10) }, { retainBlocks: 64 });
  await send("@fixtures/devnet/register-provider.json");
  await mine(); // 1
  createTx = await send("@fixtures/devnet/create-stream.json");
  await mine(); // 2: created, rent from here
  streamId = String((await get(n.url, `/search?q=${encodeURIComponent(STREAM_KEY)}`)).body["id"]);
  const settle = JSON.stringify({ from: "dev2", cbqs: { SettleStreamRent: { stream_id: streamId } } });
  await mine(2); // 3, 4
  await send(settle);
  settledAt.push(await mine()); // 5
  await mine(); // 6
  await send(settle);
  settledAt.push(await mine()); // 7
  await mine(3); // 8–10
});

afterAll(async () => {
  await n?.close();
});

describe("GET /block/{height|hash}", () => {
  it("a block by height or hash: header, each transaction decoded to its instruction, its receipt, its events named", async () => {
    const byHeight = await get(n.url, "/block/2");
    expect(byHeight.status).toBe(200);
    const b = byHeight.body;
    expect(b).toMatchObject({ height: "2", effective_rent_height: "2" });
    const feed = ((await get(n.url, "/replication?since=2&until=2")).body["items"] as Array<Record<string, unknown>>)[0]!;
    for (const f of ["block_hash", "state_root", "parent_hash", "timestamp", "tx_root", "receipt_root", "logs_root"]) expect(b[f], f).toBe(feed[f]);
    const [tx] = b["transactions"] as Array<Record<string, unknown>>;
    expect(tx).toMatchObject({ index: 0, tx_hash: createTx, receipt: { status: "ok", error: null } });
    const decoded = tx!["transaction"] as Record<string, unknown>;
    expect(decoded).toMatchObject({ chain_id: "7", from: OWNER, nonce: "0", kind: "system", opcode: "218" });
    expect(decoded["payload"]).toHaveProperty("CreateStream.provider", PROVIDER);
    expect(tx!["events"]).toEqual([{ emitter: "0x0000000000000000000000000000000000000017", topic: "cbqs.stream.created", payload: streamId, stream_id: streamId }]);
    expect((await get(n.url, `/block/${String(b["block_hash"])}`)).body).toEqual(b);
    expect((await get(n.url, "/block/0")).body).toMatchObject({ height: "0", transactions: [] });
  });

  it("refuses an unknown block (404 block_not_found, naming the head) and a malformed one (400 invalid_block)", async () => {
    const missing = await get(n.url, "/block/999");
    expect([missing.status, missing.body["error"]]).toEqual([404, expect.objectContaining({ code: "block_not_found" })]);
    expect(missing.body["height"]).toBe("10");
    expect((await get(n.url, `/block/0x${"ab".repeat(32)}`)).status).toBe(404);
    for (const bad of ["01", "-1", "ten", "0x12"]) expect((await get(n.url, `/block/${bad}`)).body, bad).toMatchObject({ error: { code: "invalid_block" } });
  });
});

describe("GET /cbqs/stream/{id}/history", () => {
  it("by default every retained height, the stream absent before its creation; the settled escrow is what the next settlement really left", async () => {
    const h = (await get(n.url, `/cbqs/stream/${streamId}/history`)).body;
    expect(h).toMatchObject({ height: "10", stream_id: streamId, from: "0", to: "10" });
    const points = h["points"] as Array<Record<string, string | null>>;
    expect(points.map((p) => p["height"])).toEqual(Array.from({ length: 11 }, (_, i) => String(i)));
    expect(points.slice(0, 2)).toEqual([
      { height: "0", status: null },
      { height: "1", status: null },
    ]);
    expect(points[2]).toEqual({ height: "2", status: "Active", escrow_balance: "80000", settled_escrow: "80000", last_settled_block: "2", rate_per_block: "8000" });
    // A settlement at h leaves exactly what the point before it predicted for h, and records it.
    for (const s of settledAt) {
      const before = points[s - 1]!;
      const at = points[s]!;
      expect(at["last_settled_block"]).toBe(String(s));
      expect(at["escrow_balance"]).toBe(at["settled_escrow"]);
      expect(BigInt(before["settled_escrow"]!) - BigInt(at["escrow_balance"]!)).toBe(8000n);
      expect(BigInt(before["escrow_balance"]!)).toBeGreaterThan(BigInt(at["escrow_balance"]!));
    }
    // Rent accrues block by block: what a settlement would leave falls by the rate each block.
    const settled = points.slice(2).map((p) => BigInt(p["settled_escrow"]!));
    expect(settled.every((v, i) => i === 0 || settled[i - 1]! - v === 8000n)).toBe(true);
  });

  it("?from&to&points samples the range evenly, one point per block, ends included; the stream-key form works as the id", async () => {
    const h = (await get(n.url, `/cbqs/stream/${encodeURIComponent(STREAM_KEY)}/history?from=2&to=10&points=3`)).body;
    expect((h["points"] as Array<{ height: string }>).map((p) => p.height)).toEqual(["2", "6", "10"]);
    expect((await get(n.url, `/cbqs/stream/${streamId}/history?from=4&to=4`)).body["points"]).toHaveLength(1);
    // points is clamped into [2, MAX_HISTORY_POINTS].
    expect(((await get(n.url, `/cbqs/stream/${streamId}/history?points=1`)).body["points"] as unknown[]).length).toBe(2);
    expect(((await get(n.url, `/cbqs/stream/${streamId}/history?points=${"9".repeat(30)}`)).body["points"] as unknown[]).length).toBe(11);
    expect(MAX_HISTORY_POINTS).toBe(256);
  });

  it("refuses a range it cannot serve: from above to (400), to above the head (404), below the retained state (410)", async () => {
    expect((await get(n.url, `/cbqs/stream/${streamId}/history?from=5&to=4`)).body).toMatchObject({ error: { code: "invalid_range" } });
    expect((await get(n.url, `/cbqs/stream/${streamId}/history?to=11`)).body).toMatchObject({ error: { code: "block_not_found" } });
    expect((await get(n.url, `/cbqs/stream/${streamId}/history?from=x`)).body).toMatchObject({ error: { code: "invalid_from" } });
    const short = await startNode({ kind: "genesis", source: devnetGenesisSource(10) }, { retainBlocks: 3 });
    try {
      await post(short.url, "/mine?blocks=10", "");
      const id = `0x${"11".repeat(32)}`;
      const window = (await get(short.url, `/cbqs/stream/${id}/history`)).body;
      expect([window["from"], window["to"], (window["points"] as unknown[]).length]).toEqual(["7", "10", 4]);
      const old = await get(short.url, `/cbqs/stream/${id}/history?from=6`);
      expect([old.status, old.body["error"]]).toEqual([410, expect.objectContaining({ code: "block_not_retained" })]);
    } finally {
      await short.close();
    }
  });
});

describe("GET /cbqs/stream/{id}/events", () => {
  it("the stream's events newest first, each with its block and transaction; ?limit pages with next", async () => {
    const all = (await get(n.url, `/cbqs/stream/${streamId}/events`)).body;
    expect(all).toMatchObject({ stream_id: streamId, until: "10", next: null });
    const events = all["events"] as Array<Record<string, unknown>>;
    expect(events.map((e) => [e["height"], e["topic"]])).toEqual([
      [String(settledAt[1]), "cbqs.stream.rent_settled"],
      [String(settledAt[0]), "cbqs.stream.rent_settled"],
      ["2", "cbqs.stream.created"],
    ]);
    expect(events[2]).toMatchObject({ tx_hash: createTx, index: 0, stream_id: streamId });
    const first = (await get(n.url, `/cbqs/stream/${streamId}/events?limit=1`)).body;
    expect((first["events"] as unknown[]).length).toBe(1);
    expect(first["next"]).toBe(String(settledAt[1]! - 1));
    const rest = (await get(n.url, `/cbqs/stream/${streamId}/events?until=${String(first["next"])}`)).body;
    expect((rest["events"] as Array<{ height: string }>).map((e) => e.height)).toEqual([String(settledAt[0]), "2"]);
  });

  it("scans at most EVENTS_SCAN_BLOCKS blocks per answer: next continues below them", async () => {
    const many = await startNode({ kind: "genesis", source: devnetGenesisSource(10) });
    try {
      await post(many.url, `/mine?blocks=${EVENTS_SCAN_BLOCKS + 10}`, "");
      const id = `0x${"22".repeat(32)}`;
      const page = (await get(many.url, `/cbqs/stream/${id}/events`)).body;
      expect(page["events"]).toEqual([]);
      expect(page["next"]).toBe("10");
      expect((await get(many.url, `/cbqs/stream/${id}/events?until=${String(page["next"])}`)).body["next"]).toBe(null);
    } finally {
      await many.close();
    }
  });
});

describe("GET /search?q=", () => {
  it("says what a height, a transaction, block or stream id, a stream key, an address or a dev account's name is", async () => {
    const block5 = String((await get(n.url, "/block/5")).body["block_hash"]);
    const cases: Array<[string, string, string]> = [
      ["7", "block", "7"],
      [createTx, "tx", createTx],
      [block5, "block", "5"],
      [streamId, "stream", streamId],
      [STREAM_KEY, "stream", streamId],
      ["dev1", "provider", PROVIDER],
      [PROVIDER.toUpperCase().replace("0X", "0x"), "provider", PROVIDER],
      ["dev0", "account", OWNER],
      [` ${OWNER} `, "account", OWNER],
    ];
    for (const [q, kind, id] of cases) {
      const r = await get(n.url, `/search?q=${encodeURIComponent(q)}`);
      expect([r.status, r.body["kind"], r.body["id"]], q).toEqual([200, kind, id]);
    }
  });

  it("404 not_found when nothing has it; 400 for text that names nothing", async () => {
    for (const q of ["99", `0x${"cd".repeat(32)}`, `owner:${OWNER}/nonce:7`]) expect((await get(n.url, `/search?q=${encodeURIComponent(q)}`)).body, q).toMatchObject({ error: { code: "not_found" } });
    expect((await get(n.url, "/search?q=hello")).body).toMatchObject({ error: { code: "invalid_q" } });
    expect((await get(n.url, "/search")).body).toMatchObject({ error: { code: "missing_q" } });
  });
});

describe("the page's files", () => {
  it("/ is the page, with a Content-Security-Policy allowing the node's own files only; every module, the style sheet and uPlot are served; nothing else under /explorer/", async () => {
    requireFreshDist();
    const page = await fetch(`${n.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toMatch(/^default-src 'self';/);
    const html = await page.text();
    expect(html).toContain('<script type="module" src="/explorer/main.js"></script>');
    for (const file of [...EXPLORER_MODULES.map((m) => `${m}.js`), "style.css", "uPlot.iife.min.js", "uPlot.min.css"]) {
      const r = await fetch(`${n.url}/explorer/${file}`);
      expect(r.status, file).toBe(200);
      expect(r.headers.get("content-type"), file).toMatch(file.endsWith(".js") ? /^text\/javascript/ : /^text\/css/);
    }
    for (const path of ["/explorer/", "/explorer/../package.json", "/explorer/main.ts", "/explorer/uPlot.cjs.js"]) expect((await fetch(n.url + path)).status, path).toBe(404);
  });

  it("an unchanged file is 304 to a conditional request; HEAD has the headers only", async () => {
    requireFreshDist();
    const first = await fetch(`${n.url}/explorer/main.js`);
    const etag = first.headers.get("etag")!;
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect((await fetch(`${n.url}/explorer/main.js`, { headers: { "if-none-match": etag } })).status).toBe(304);
    const head = await fetch(`${n.url}/`, { method: "HEAD" });
    expect([head.status, await head.text()]).toEqual([200, ""]);
  });

  it("discovery lists the explorer's reads", async () => {
    expect((await get(n.url, "/.well-known/cbqs")).body["endpoints"]).toMatchObject({
      "cbqs.block": "/block/{height_or_hash}",
      "cbqs.stream.history": "/cbqs/stream/{stream_id}/history{?from,to,points}",
      "cbqs.stream.events": "/cbqs/stream/{stream_id}/events{?until,limit}",
      "cbqs.search": "/search{?q}",
      "cbqs.subscribe": "/subscribe{?stream}",
    });
  });
});
