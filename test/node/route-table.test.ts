// The route table as data (src/node/routes.ts routeTable()): each endpoint declared once, its
// discovery template derived from its path and query, its parameters typed, its answer kind
// named — the data docs/reference/http.md's endpoint table is generated from (scripts/gen-reference.ts;
// test/docs/reference.test.ts fails when it is stale).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { PARAM_TYPES, routeTable, templateOf } from "../../src/node/routes.js";
import { get, startNode } from "./helpers.js";

const FIXTURE = "fixtures/corpus/create-quote.json";

describe("the route table", () => {
  it("a template is the path, then the query parameters; a path parameter is a segment in braces", () => {
    expect(templateOf({ path: "/mine", query: ["height", "blocks", "timestamp"] })).toBe("/mine{?height,blocks,timestamp}");
    expect(templateOf({ path: "/block/{height_or_hash}", query: [] })).toBe("/block/{height_or_hash}");
    const account = routeTable().find((r) => r.name === "cbqs.account")!;
    expect(account).toMatchObject({
      method: "GET",
      template: "/account/{address}{?height,block,proof}",
      answer: "json",
      proof: "when-asked",
      params: [
        { name: "address", in: "path", type: PARAM_TYPES.address },
        { name: "height", in: "query", type: PARAM_TYPES.height },
        { name: "block", in: "query", type: PARAM_TYPES.block },
        { name: "proof", in: "query", type: PARAM_TYPES.proof },
      ],
    });
  });

  it("every endpoint is data: a method, a unique name, a template, typed parameters, an answer kind and a summary; the fixture is streamed, the subscription an event stream, the metrics text", () => {
    const table = routeTable();
    expect(new Set(table.map((r) => r.name)).size).toBe(table.length);
    for (const r of table) {
      expect([r.name, r.summary.length > 0, r.params.every((p) => p.type.length > 0)]).toEqual([r.name, true, true]);
      expect(JSON.parse(JSON.stringify(r))).toEqual(r);
    }
    const kinds = Object.fromEntries(table.filter((r) => r.answer !== "json").map((r) => [r.name, r.answer]));
    expect(kinds).toEqual({ "cbqs.subscribe": "events", "cbqs.fixture": "streamed", "cbqs.metrics": "text" });
    expect(table.filter((r) => r.write).map((r) => r.name)).toEqual(["cbqs.devnet.tx", "cbqs.devnet.mine", "cbqs.devnet.snapshot", "cbqs.devnet.revert"]);
    expect(table.filter((r) => r.seeds).map((r) => r.name)).toEqual(["cbqs.devnet.accounts"]);
  });

  it("discovery serves the derived templates, and docs/reference/http.md's endpoint table names each endpoint by its method and template", async () => {
    const n = await startNode(FIXTURE);
    try {
      const endpoints = (await get(n.url, "/.well-known/cbqs")).body["endpoints"] as Record<string, string>;
      const expected: Record<string, string> = {};
      for (const r of routeTable()) for (const name of [r.name, ...r.aliases]) expected[name] = r.template;
      expect(endpoints).toEqual(expected);
    } finally {
      await n.close();
    }
    const doc = readFileSync("docs/reference/http.md", "utf8");
    const missing = routeTable()
      .filter((r) => !doc.includes(`| ${r.method} | \`${r.template}\` |`))
      .map((r) => `${r.method} ${r.template}`);
    expect(missing).toEqual([]);
  });
});
