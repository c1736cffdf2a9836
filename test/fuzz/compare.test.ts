// Comparing our t8n with theirs (src/fuzz/compare.ts): only consensus counts, and the first
// difference is named the way a reader looks for it — left-out transactions, then receipts, then
// the post-state key by key, then the roots.
import { describe, expect, it } from "vitest";
import { toHex } from "../../src/bytes.js";
import { ChainBuilder, type BuiltBlock } from "../../src/fuzz/build.js";
import { firstDifference } from "../../src/fuzz/compare.js";
import { generateChain } from "../../src/fuzz/plan.js";
import { parseTargetOutput, TargetError, type TargetOutput } from "../../src/target/target.js";

type Json = Record<string, unknown> & { receipts: Array<Record<string, unknown>>; rejected: Array<Record<string, unknown>> };

/** A block with receipts, a CBQS rejection and a left-out (junk) transaction. */
function interestingBlock(): BuiltBlock {
  for (let run = 0; run < 50; run++) {
    const builder = new ChainBuilder(generateChain(3, run, 4));
    while (!builder.done) {
      const b = builder.build();
      const r = b.ours.result as Json;
      if (r.rejected.length > 0 && r.receipts.some((x) => x["status"] === "rejected") && r.receipts.some((x) => x["status"] === "ok")) return b;
    }
  }
  throw new Error("no block with ok, rejected and left-out transactions (test precondition)");
}

const block = interestingBlock();
const oursResult = (): Json => structuredClone(block.ours.result) as Json;
const oursAlloc = () => ({ format: "cbqs-state-dump/v1", entries: [...block.ours.store.entries()].map(([k, v]) => ({ key: toHex(k), value: toHex(v) })) });
const theirs = (result: unknown, alloc: unknown = oursAlloc()): TargetOutput => parseTargetOutput(JSON.stringify(result), JSON.stringify(alloc), "");
const diff = (t: TargetOutput, stateRoot = true) => firstDifference(block, t, { stateRoot });

describe("firstDifference (src/fuzz/compare.ts)", () => {
  it("the same outputs do not differ; rejection messages and left-out reasons are not consensus", () => {
    expect(diff(theirs(oursResult()))).toBeNull();
    const r = oursResult();
    for (const x of r.receipts) if (x["error"] !== null) (x["error"] as Record<string, unknown>)["message"] = "their own words";
    for (const x of r.rejected) x["error"] = "bad envelope";
    // Key order is not consensus either.
    const reordered = Object.fromEntries(Object.entries(r).reverse());
    expect(diff(theirs(reordered))).toBeNull();
  });

  it("names a receipt field with the block, transaction position and instruction", () => {
    const r = oursResult();
    const i = r.receipts.findIndex((x) => x["status"] === "ok");
    const receipt = r.receipts[i]!;
    receipt["cycles"] = String(BigInt(receipt["cycles"] as string) + 1n);
    const tx = Number(receipt["index"]);
    expect(diff(theirs(r))).toBe(
      `block ${block.height} tx ${tx} ${block.kinds[tx]}: t8n result: receipts[${i}].cycles expected "${BigInt(receipt["cycles"] as string) - 1n}" got "${receipt["cycles"]}"`,
    );
  });

  it("names a rejection code, and a transaction they did not leave out", () => {
    const r = oursResult();
    const i = r.receipts.findIndex((x) => x["status"] === "rejected");
    const error = r.receipts[i]!["error"] as Record<string, unknown>;
    const code = error["code"];
    error["code"] = "1";
    expect(diff(theirs(r))).toMatch(new RegExp(`^block ${block.height} tx \\d+ \\S+: t8n result: receipts\\[${i}\\]\\.error\\.code expected "${code}" got "1"$`));
    const s = oursResult();
    s.rejected.pop();
    expect(diff(theirs(s))).toMatch(new RegExp(`^block ${block.height}: t8n result: rejected`));
  });

  it("issue 22: a receipt's error name is consensus like its code: a rejection with the same code and another name is a difference", () => {
    const r = oursResult();
    const i = r.receipts.findIndex((x) => x["status"] === "rejected");
    const error = r.receipts[i]!["error"] as Record<string, unknown>;
    const name = error["name"];
    error["name"] = "SomeOtherError";
    expect(diff(theirs(r))).not.toBeNull();
    expect(diff(theirs(r))).toMatch(new RegExp(`^block ${block.height} tx \\d+ \\S+: t8n result: receipts\\[${i}\\]\\.error\\.name expected "${name}" got "SomeOtherError"$`));
  });

  it("names the first differing state key with its decoded field, before any root", () => {
    const alloc = oursAlloc();
    // Keys sort by prefix, accounts (0x01) first: drop the first account.
    const dropped = alloc.entries.shift()!;
    const r = oursResult();
    r["state_root"] = "0x" + "00".repeat(32);
    expect(diff(theirs(r, alloc))).toMatch(new RegExp(`^block ${block.height}: state: key ${dropped.key}: expected .+ got \\(absent\\)`));
  });

  it("compares state_root unless told not to (docs/fixtures.md §4), and every other root always", () => {
    const r = oursResult();
    r["state_root"] = "0x" + "00".repeat(32);
    expect(diff(theirs(r))).toMatch(/^block \d+: t8n result: state_root expected "0x[0-9a-f]{64}" got "0x0{64}"$/);
    expect(diff(theirs(r), false)).toBeNull();
    r["logs_root"] = "0x" + "11".repeat(32);
    expect(diff(theirs(r), false)).toMatch(/: t8n result: logs_root expected/);
  });

  it("a missing field is a difference; output that is not a t8n result or a state dump is unusable", () => {
    const r = oursResult();
    delete r["effective_rent_height"];
    expect(diff(theirs(r))).toMatch(/effective_rent_height expected "\d+" got \(absent\)$/);
    expect(() => parseTargetOutput("not json", JSON.stringify(oursAlloc()), "")).toThrow(TargetError);
    expect(() => parseTargetOutput(JSON.stringify({ format: "x" }), JSON.stringify(oursAlloc()), "")).toThrow(/--output.result is not a cbqs-t8n-result\/v1 document/);
    expect(() => parseTargetOutput(JSON.stringify(oursResult()), JSON.stringify({ format: "cbqs-state-dump/v1", entries: [{ key: "0x01", value: "0x" }] }), "")).toThrow(
      /--output.alloc: \$\.entries\[0\]\.key: /,
    );
  });
});
