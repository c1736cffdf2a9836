import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadFixture } from "../../src/harness/fixture.js";
import { newStore, replayFixture } from "../../src/harness/replay.js";
import { blockTraceLines, TracingStore } from "../../src/harness/trace.js";
import { cli, readDoc } from "./helpers.js";

type Line = {
  tx_index: number | null;
  kind: string;
  status?: string;
  steps: Array<{ op: string; key: string; metered: boolean; meter: { reads: number; writes: number }; before?: string | null; after?: string | null; value?: string | null }>;
};

function traceAll(file: string): { lines: Line[]; unTraced: ReturnType<typeof replayFixture>; traced: ReturnType<typeof replayFixture> } {
  const f = loadFixture(readDoc(file));
  const store = new TracingStore(newStore());
  const lines: Line[] = [];
  const traced = replayFixture(f, {
    store,
    onBlock: (p, x) => lines.push(...blockTraceLines(p.height, store.recorder, x.envelopes, x.results.receipts, x.outcomes).map((l) => JSON.parse(l) as Line)),
  });
  return { lines, traced, unTraced: replayFixture(f) };
}

describe("traces (CIP-4 §6.3: identical block + state → identical accesses)", () => {
  it("tracing does not change execution: the replay outcome is the same with a tracing store", () => {
    for (const file of ["fixtures/corpus/provider-lifecycle.json", "fixtures/corpus/pause-accounting.json", "fixtures/corpus/create-quote.json"]) {
      const { traced, unTraced } = traceAll(file);
      expect(traced, file).toEqual(unTraced);
    }
  });

  it("one line per transaction plus one block line; the meter counts only metered steps, in order", () => {
    const { lines } = traceAll("fixtures/corpus/provider-lifecycle.json");
    const doc = readDoc("fixtures/corpus/provider-lifecycle.json");
    const txCount = doc.blocks.reduce((n, b) => n + b.transactions.length, 0);
    expect(lines.filter((l) => l.tx_index !== null)).toHaveLength(txCount);
    expect(lines.filter((l) => l.tx_index === null)).toHaveLength(doc.blocks.length);
    for (const l of lines) {
      let reads = 0;
      let writes = 0;
      for (const s of l.steps) {
        if (s.metered) (s.op === "read" ? reads++ : writes++);
        expect(s.meter).toEqual({ reads, writes });
      }
    }
    // An accepted CBQS transaction reads under the meter and ends with the platform nonce write.
    const ok = lines.find((l) => l.status === "ok" && l.kind === "RegisterProvider")!;
    expect(ok.steps.some((s) => s.metered && s.op === "read")).toBe(true);
    expect(ok.steps[ok.steps.length - 1]!.op).toBe("write");
    expect(ok.steps[ok.steps.length - 1]!.key.startsWith("0x01")).toBe(true);
  });

  it("a write's before is the value the previous access of that key saw", () => {
    const { lines } = traceAll("fixtures/corpus/provider-lifecycle.json");
    let seen = new Map<string, string | null>();
    for (const l of lines) {
      const before = new Map(seen);
      for (const s of l.steps) {
        const known = seen.has(s.key);
        if (s.op === "write") {
          if (known) expect(s.before).toBe(seen.get(s.key));
          seen.set(s.key, s.after ?? null);
        } else {
          if (known) expect(s.value).toBe(seen.get(s.key));
          seen.set(s.key, s.value ?? null);
        }
      }
      // A rejected transaction's instruction effects are rolled back; what persists is the
      // platform settlement that follows the rollback (the zero address's fee
      // credit, then the sender's nonce and fee), the unmetered steps at the end of its trace.
      if (l.status === "rejected") {
        seen = before;
        let from = l.steps.length;
        while (from > 0 && !l.steps[from - 1]!.metered) from--;
        for (const s of l.steps.slice(from)) seen.set(s.key, (s.op === "write" ? s.after : s.value) ?? null);
        expect(l.steps[l.steps.length - 1]).toMatchObject({ op: "write", metered: false });
      }
    }
  });

  it("cbqs trace --block prints only that block; cbqs replay --trace writes every block", async () => {
    const dir = mkdtempSync(join(tmpdir(), "cbqs-trace-"));
    const file = "fixtures/corpus/provider-lifecycle.json";
    const doc = readDoc(file);
    const one = await cli(["trace", file, "--block", doc.blocks[1]!.height]);
    expect(one.exitCode).toBe(0);
    const oneLines = one.out.trimEnd().split("\n").map((l) => JSON.parse(l));
    expect(oneLines.every((l) => l.height === doc.blocks[1]!.height)).toBe(true);
    expect(oneLines).toHaveLength(doc.blocks[1]!.transactions.length + 1);
    const all = await cli(["replay", file, "--quiet", "--trace", join(dir, "all.trace")]);
    expect(all.exitCode).toBe(0);
    const allText = readFileSync(join(dir, "all.trace"), "utf8");
    expect(allText).toContain(one.out);
    expect((await cli(["trace", file, "--block", "999"])).thrown).toMatch(/no block at height 999 \(the fixture's \d+ blocks are at \d+, /);
    expect((await cli(["replay", "fixtures/corpus", "--trace", join(dir, "x")])).thrown).toMatch(/--trace needs a single fixture/);
  });
});
