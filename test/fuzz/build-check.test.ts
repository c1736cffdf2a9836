// The builder's cross-check of our per-call t8n against the reference chain (src/fuzz/build.ts
// check): a t8n that leaves out other transactions, reports another receipt or another
// post-state is the fuzzer's own bug (FuzzInternalError), named, never a finding. Our t8n agrees
// with the chain, so it is tampered with here, one way per test.
import { describe, expect, it, vi } from "vitest";
import { ChainBuilder, FuzzInternalError, type BuiltBlock } from "../../src/fuzz/build.js";
import { SETUP_ACTIONS } from "../../src/fuzz/model.js";
import type { FuzzChain } from "../../src/fuzz/plan.js";
import { PLAIN_GENESIS } from "../../src/fuzz/world.js";
import type { T8nRun } from "../../src/harness/t8n.js";

const tamper = vi.hoisted(() => ({ with: null as ((run: T8nRun) => void) | null }));

vi.mock("../../src/harness/t8n.js", async (importOriginal) => {
  const t8n = await importOriginal<typeof import("../../src/harness/t8n.js")>();
  return {
    ...t8n,
    transition: (...args: Parameters<typeof t8n.transition>): T8nRun => {
      const run = t8n.transition(...args);
      tamper.with?.(run);
      return run;
    },
  };
});

/** The setup block with one junk envelope at position 2 (index 2 is left out). */
function block(): BuiltBlock {
  const plan: FuzzChain = {
    genesis: PLAIN_GENESIS,
    blocks: [{ gap: { k: "step", blocks: 1 }, actions: [...SETUP_ACTIONS], junk: [{ kind: "bytes", at: 2, pick: 0, bytes: Uint8Array.of(9) }] }],
  };
  return new ChainBuilder(plan).build();
}

function oursWith(change: (run: T8nRun) => void): () => unknown {
  const b = block();
  return () => {
    tamper.with = change;
    try {
      return b.ours;
    } finally {
      tamper.with = null;
    }
  };
}

const disagree = (what: string) => new FuzzInternalError(`t8n and the reference chain disagree at height 1: ${what}`);

describe("our t8n checked against the reference chain (src/fuzz/build.ts)", () => {
  it("untouched, they agree, and our run is kept (asked once)", () => {
    const b = block();
    let runs = 0;
    tamper.with = () => void runs++;
    try {
      expect(b.ours).toBe(b.ours);
    } finally {
      tamper.with = null;
    }
    expect(runs).toBe(1);
    expect((b.ours.result["rejected"] as Array<{ index: string }>).map((r) => r.index)).toEqual(["2"]);
  });

  it("other transactions left out: named with both lists", () => {
    expect(oursWith((run) => void (run.result["rejected"] = [{ index: "3", error: "x" }]))).toThrow(disagree("rejected [3], junk and excluded at [2]"));
    expect(oursWith((run) => void (run.result["rejected"] = []))).toThrow(disagree("rejected [], junk and excluded at [2]"));
  });

  it("a receipt fewer, another transaction hash or another status: the receipts", () => {
    expect(oursWith((run) => void run.included.results.receipts.pop())).toThrow(disagree("receipts"));
    expect(oursWith((run) => void (run.included.results.receipts[1]!.tx_hash = new Uint8Array(32)))).toThrow(disagree("receipts"));
    expect(
      oursWith((run) => {
        const r = run.included.results.receipts[0]!;
        (r as { status: string }).status = r.status === "ok" ? "rejected" : "ok";
      }),
    ).toThrow(disagree("receipts"));
  });

  it("an entry fewer or more, another key or another value: the post-state", () => {
    const replace = (run: T8nRun, f: (e: Array<[Uint8Array, Uint8Array]>) => Array<[Uint8Array, Uint8Array]>) => {
      const entries = f([...run.store.entries()].map(([k, v]) => [k, v]));
      (run as { store: unknown }).store = { entries: () => entries.values() };
    };
    expect(oursWith((run) => replace(run, (e) => e.slice(1)))).toThrow(disagree("post-state"));
    // An entry more after ours, all of ours the same: the count tells.
    expect(oursWith((run) => replace(run, (e) => [...e, [Uint8Array.of(0xff, ...e.at(-1)![0]), e.at(-1)![1]]]))).toThrow(disagree("post-state"));
    expect(oursWith((run) => replace(run, (e) => e.map(([k, v], i) => (i === 0 ? [Uint8Array.of(...k.subarray(0, -1), k.at(-1)! ^ 1), v] : [k, v]))))).toThrow(disagree("post-state"));
    expect(oursWith((run) => replace(run, (e) => e.map(([k, v], i) => (i === e.length - 1 ? [k, Uint8Array.of(...v, 0)] : [k, v]))))).toThrow(disagree("post-state"));
  });
});
