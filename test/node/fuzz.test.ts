// The CI-sized run of scripts/fuzz-node.ts: malformed requests over every endpoint on loopback.
// The node never answers 500 (every malformed input is a typed refusal), never hangs, and keeps
// answering well-formed requests afterwards.
import { Agent } from "node:http";
import { describe, expect, it } from "vitest";
import { fuzzCase, sendCase, type Outcome } from "../../scripts/fuzz-node-cases.js";
import { Rng } from "../../scripts/rng.js";
import { get, startNode } from "./helpers.js";

const CASES = 1_500;
const CONCURRENCY = 8;

describe("cbqs node under malformed requests", () => {
  it(`${CASES} seeded malformed requests: no 500, no hang, still serving`, async () => {
    const n = await startNode("fixtures/corpus/create-quote.json");
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    try {
      const rng = new Rng(0xc0ffee);
      const cases = Array.from({ length: CASES }, () => fuzzCase(rng));
      // The /proof/multi class with keys of every prefix byte and wrong lengths is in the mix.
      expect(cases.filter((c) => c.kind === "http" && c.class === "multi-keys").length).toBeGreaterThan(50);
      const outcomes = new Map<Outcome, number>();
      let next = 0;
      const base = new URL(n.url);
      await Promise.all(
        Array.from({ length: CONCURRENCY }, async () => {
          while (next < cases.length) {
            const c = cases[next++]!;
            const o = await sendCase(base, c, agent);
            outcomes.set(o, (outcomes.get(o) ?? 0) + 1);
            if (o === 500 || o === "timeout") throw new Error(`${String(o)} for ${JSON.stringify(c).slice(0, 300)}`);
          }
        }),
      );
      expect(outcomes.get(500)).toBeUndefined();
      expect(outcomes.get("timeout")).toBeUndefined();
      // A real mix of refusals was exercised, and some requests were fine.
      for (const status of [200, 400, 404, 405, 413]) expect(outcomes.get(status), `status ${status}`).toBeGreaterThan(0);
      expect((await get(n.url, "/cbqs/finalized-view")).status).toBe(200);
      expect(n.logs.filter((e) => e["level"] === "error")).toEqual([]);
    } finally {
      agent.destroy();
      await n.close();
    }
  });
});
