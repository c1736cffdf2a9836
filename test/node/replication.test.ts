// The replication feed (CIP-16 §3 adapted to the chain's commit log) and service discovery:
// inclusive since/until heights, limit 10 by default clamped to [1, 100], order asc|desc (else
// 400), items/prev/next always present, total order by height, skipped heights are not items,
// and paging by the cursors visits every block exactly once in either direction.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { get, post, startNode, type TestNode } from "./helpers.js";

interface Page {
  items: Array<{ height: string; parent_hash: string; block_hash: string }>;
  prev: string | null;
  next: string | null;
  height: string;
}

const page = async (n: TestNode, query: string): Promise<Page> => {
  const r = await get(n.url, `/replication${query}`);
  expect(r.status, query).toBe(200);
  return r.body as unknown as Page;
};

describe("cbqs node: replication feed", () => {
  let n: TestNode;
  let heights: string[];
  beforeAll(async () => {
    // Heights 1, 2, 5, 8, 10, 12, 20, 21, 30 (pause-accounting), then 25 more mined blocks.
    n = await startNode("fixtures/corpus/pause-accounting.json");
    for (let i = 0; i < 25; i++) await post(n.url, "/mine", "");
    heights = n.db.blocks({ from: 1n, to: 1000n, order: "asc", limit: 1000 }).map((b) => b.height.toString());
  });
  afterAll(() => n.close());

  it("items are committed blocks in height order; skipped heights are not items; cursors are always present", async () => {
    const p = await page(n, "?since=3&until=20&limit=100");
    expect(p.items.map((i) => i.height)).toEqual(["5", "8", "10", "12", "20"]);
    expect(p).toHaveProperty("prev", "2");
    expect(p).toHaveProperty("next", null);
    const all = await page(n, "?limit=100");
    expect(all.items.map((i) => i.height)).toEqual(heights);
    expect(all.prev).toBeNull();
    // Each item chains to the previous one.
    all.items.slice(1).forEach((item, i) => expect(item.parent_hash).toBe(all.items[i]!.block_hash));
    expect(Object.keys(all.items[0]!)).toEqual([
      "height", "timestamp", "parent_hash", "transactions", "effective_rent_height", "state_root", "tx_root",
      "receipt_root", "logs_root", "block_hash", "gas_vectors_sha256", "receipts",
    ]);
  });

  it("limit: default 10, larger clamped to 100, smaller raised to 1; not an integer is 400", async () => {
    expect((await page(n, "")).items).toHaveLength(10);
    expect((await page(n, "?limit=1000000000000000000000")).items).toHaveLength(Math.min(100, heights.length));
    expect((await page(n, "?limit=0")).items).toHaveLength(1);
    for (const q of ["?limit=ten", "?limit=1.5", "?limit=", "?limit=-5"]) {
      const r = await get(n.url, `/replication${q}`);
      expect([r.status, (r.body["error"] as { code: string }).code], q).toEqual([400, "invalid_limit"]);
    }
    expect((await get(n.url, "/replication?limit=ten")).body["error"]).toEqual({
      code: "invalid_limit",
      message: 'limit must be an integer: decimal digits without sign or leading zeros (got "ten")',
    });
  });

  it("order asc (default) or desc; anything else, a bad height or since > until is 400", async () => {
    const desc = await page(n, "?order=desc&limit=3");
    expect(desc.items.map((i) => i.height)).toEqual(heights.slice(-3).reverse());
    const cases: Array<[string, string]> = [
      ["?order=DESC", "invalid_order"],
      ["?order=", "invalid_order"],
      ["?since=x", "invalid_since"],
      ["?until=18446744073709551616", "invalid_until"],
      ["?since=9&until=3", "invalid_range"],
      ["?owner=0x11", "unknown_parameter"],
    ];
    for (const [q, code] of cases) {
      const r = await get(n.url, `/replication${q}`);
      expect([r.status, (r.body["error"] as { code: string }).code], q).toEqual([400, code]);
    }
    const refused = await get(n.url, "/replication?order=DESC");
    expect((refused.body["error"] as { message: string }).message).toBe('order must be asc or desc (got "DESC")');
  });

  it("paging with next visits every block once, in both orders; prev points back across the page boundary", async () => {
    for (const order of ["asc", "desc"] as const) {
      const seen: string[] = [];
      let cursor: string | null = null;
      for (let guard = 0; guard < 100; guard++) {
        const q: string = `?order=${order}&limit=4${cursor === null ? "" : order === "asc" ? `&since=${cursor}` : `&until=${cursor}`}`;
        const p = await page(n, q);
        if (cursor !== null) {
          // prev is the nearest block on the other side of this page's start bound.
          const before = order === "asc" ? heights.filter((h) => BigInt(h) < BigInt(cursor!)).at(-1) : heights.find((h) => BigInt(h) > BigInt(cursor!));
          expect(p.prev, q).toBe(before ?? null);
        }
        seen.push(...p.items.map((i) => i.height));
        if (p.next === null) break;
        cursor = p.next;
      }
      expect(seen).toEqual(order === "asc" ? heights : [...heights].reverse());
    }
  });

  it("one rule for every numeric parameter — digits only, no sign or leading zeros; above the maximum 400, except limit, clamped (CIP-16 §3.1)", async () => {
    const d30 = "9".repeat(30);
    const d31 = "9".repeat(31);
    // The exact cases of the issue: limit of 30 and 31 digits are both clamped; until=0 alone and with since=0 are one empty range.
    expect((await page(n, `?limit=${d30}`)).items).toHaveLength(Math.min(100, heights.length));
    expect((await page(n, `?limit=${d31}`)).items).toHaveLength(Math.min(100, heights.length));
    expect((await page(n, `?limit=1${"0".repeat(2000)}`)).items).toHaveLength(Math.min(100, heights.length));
    for (const q of ["?until=0", "?since=0&until=0", "?until=0&order=desc", "?since=0&until=0&order=desc"]) {
      const p = await page(n, q);
      expect([p.items, p.next], q).toEqual([[], null]);
      expect(p.prev, q).toBe(q.includes("desc") ? heights[0] : null);
    }
    expect((await page(n, "?since=0&limit=100")).items.map((i) => i.height)).toEqual(heights);
    const refused = async (path: string, code: string, message?: string) => {
      const r = path.startsWith("/mine") ? await post(n.url, path, "") : await get(n.url, path);
      expect([r.status, (r.body["error"] as { code: string }).code], path).toEqual([400, code]);
      if (message !== undefined) expect((r.body["error"] as { message: string }).message, path).toBe(message);
    };
    await refused("/replication?since=1&until=0", "invalid_range", "since 1 is above until 0");
    // Malformed: the same refusal for every numeric parameter of every route.
    const malformed = ["", "-1", "%2B1", "+1", " 1", "1%20", "01", "00", "1.0", "1e3", "0x10", "%EF%BC%99", "1_000", "ten"];
    const numeric: Array<[string, string]> = [
      ["/replication?since=", "since"],
      ["/replication?until=", "until"],
      ["/replication?limit=", "limit"],
      ["/mine?height=", "height"],
    ];
    for (const [prefix, name] of numeric) {
      for (const v of malformed) await refused(prefix + v, `invalid_${name}`);
      // Well-formed but above the maximum: refused naming the parameter and its maximum, whatever the digits (limit clamps, above).
      if (name === "limit") continue;
      await refused(prefix + "18446744073709551616", `invalid_${name}`, `${name} must be a block height of at most 18446744073709551615 (got 18446744073709551616)`);
      await refused(prefix + d30, `invalid_${name}`);
      await refused(prefix + d31, `invalid_${name}`, `${name} must be a block height of at most 18446744073709551615 (got 31 digits)`);
    }
    await refused("/replication?since=01", "invalid_since", 'since must be a block height: decimal digits without sign or leading zeros (got "01")');
    // At the maximum: accepted.
    expect((await page(n, "?since=18446744073709551615")).items).toEqual([]);
    expect((await page(n, "?until=18446744073709551615&limit=100")).items.map((i) => i.height)).toEqual(heights);
    expect((await page(n, "?limit=100")).items).toHaveLength(Math.min(100, heights.length));
    expect((await page(n, "?limit=0")).items).toHaveLength(1);
    expect(n.db.head()!.height.toString()).toBe(heights.at(-1)); // no refused /mine produced a block
  });

  it("the feed never serves genesis (height 0) as an item: since=0 starts at block 1 (CIP-16 §3.1)", async () => {
    for (const q of ["?since=0&limit=1", "?since=0&until=1&order=desc&limit=100", "?since=0&order=desc&limit=100"]) {
      const p = await page(n, q);
      expect(p.items.map((i) => i.height), q).not.toContain("0");
    }
    expect((await page(n, "?since=0&limit=1")).items.map((i) => i.height)).toEqual(["1"]);
    // Walking back from block 1 finds nothing before it: genesis is not the prev of the first block either.
    expect((await page(n, "?since=1&limit=1")).prev).toBeNull();
  });

  it("the feed is advertised as net.concrnt.core.replication (CIP-16 §3) next to cbqs.replication, without owner", async () => {
    const endpoints = (await get(n.url, "/.well-known/cbqs")).body["endpoints"] as Record<string, string>;
    expect(endpoints["net.concrnt.core.replication"]).toBe("/replication{?since,until,limit,order}");
    expect(endpoints["cbqs.replication"]).toBe(endpoints["net.concrnt.core.replication"]);
    // owner is not a parameter here (D-0106): asked for, it is refused, not ignored.
    const r = await get(n.url, "/replication?owner=con1abc");
    expect([r.status, (r.body["error"] as { code: string }).code]).toEqual([400, "unknown_parameter"]);
  });

  it("service discovery lists every endpoint with its template", async () => {
    const r = await get(n.url, "/.well-known/cbqs");
    expect(r.status).toBe(200);
    expect(r.body["endpoints"]).toEqual({
      "cbqs.discovery": "/.well-known/cbqs",
      "cbqs.genesis": "/genesis",
      "cbqs.finalized-view": "/cbqs/finalized-view{?block}",
      "cbqs.broker-state": "/cbqs/broker-state{?stream,block}",
      "cbqs.replication": "/replication{?since,until,limit,order}",
      "net.concrnt.core.replication": "/replication{?since,until,limit,order}",
      "cbqs.subscribe": "/subscribe{?stream}",
      "cbqs.block": "/block/{height_or_hash}",
      "cbqs.search": "/search{?q}",
      "cbqs.fixture": "/fixture{?since,until,post_state}",
      "cip4.proof.account": "/proof/account/{address}",
      "cip4.proof.actor": "/proof/actor/{address}",
      "cip4.proof.storage": "/proof/storage/{address}/{key}",
      "cip4.proof.tx": "/proof/tx/{tx_hash}",
      "cip4.proof.receipt": "/proof/receipt/{tx_hash}",
      "cip4.proof.multi": "/proof/multi",
      "cbqs.account": "/account/{address}{?height,block,proof}",
      "cbqs.stream": "/cbqs/stream/{stream_id}{?height,block}",
      "cbqs.stream.history": "/cbqs/stream/{stream_id}/history{?from,to,points}",
      "cbqs.stream.events": "/cbqs/stream/{stream_id}/events{?until,limit}",
      "cbqs.latest": "/latest{?limit}",
      "cbqs.provider": "/cbqs/provider/{address}{?height,block}",
      "cbqs.tx": "/tx/{tx_hash}",
      "cbqs.metrics": "/metrics",
      "cbqs.devnet.tx": "/tx",
      "cbqs.devnet.mine": "/mine{?height,blocks,timestamp}",
      "cbqs.devnet.accounts": "/devnet/accounts",
      "cbqs.devnet.names": "/devnet/names",
      "cbqs.devnet.snapshot": "/devnet/snapshot",
      "cbqs.devnet.revert": "/devnet/revert{?id}",
    });
    // Every advertised template answers (not 404) once its variables are filled in.
    for (const template of Object.values(r.body["endpoints"] as Record<string, string>)) {
      const path = template.replace(/\{\?[^}]*\}/, "").replace(/\{[^}]*\}/g, "0x00");
      // A subscription never ends: HEAD answers its status without opening one.
      const method = ["/proof/multi", "/tx", "/mine", "/devnet/snapshot", "/devnet/revert"].includes(path) ? "POST" : path === "/subscribe" ? "HEAD" : "GET";
      const res = await fetch(n.url + path, { method });
      await res.text();
      expect(res.status, path).not.toBe(404);
    }
  });
});
