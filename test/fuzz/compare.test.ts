// Comparing our t8n with theirs (src/fuzz/compare.ts): only consensus counts, and the first
// difference is named the way a reader looks for it — left-out transactions, then receipts, then
// the post-state key by key, then the roots.
import { describe, expect, it } from "vitest";
import { toHex } from "../../src/bytes.js";
import { ChainBuilder, type BuiltBlock } from "../../src/fuzz/build.js";
import { firstDifference, oursResult as oursResultOf, resultDiffers, type ComparedBlock } from "../../src/fuzz/compare.js";
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

  it("a receipt's error name is consensus like its code: a rejection with the same code and another name is a difference", () => {
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

  it("compares state_root unless told not to (docs/reference/formats/fixture.md §4), and every other root always", () => {
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

describe("each consensus field of a t8n result (src/fuzz/compare.ts)", () => {
  const opts = { stateRoot: true };
  /** Every change that is a consensus difference, with the words that name it. */
  const changes: Array<[string, (r: Json) => void, RegExp]> = [
    ["height", (r) => void (r["height"] = "999"), /: t8n result: height expected/],
    ["a left-out transaction's index", (r) => void (r.rejected[0]!["index"] = 99), /: t8n result: rejected\[0\]\.index expected/],
    ["a receipt's index", (r) => void (r.receipts[0]!["index"] = 99), /tx \d+ .*receipts\[0\]\.index expected/],
    ["a receipt's tx_hash", (r) => void (r.receipts[0]!["tx_hash"] = "0x" + "ab".repeat(32)), /receipts\[0\]\.tx_hash expected/],
    ["a receipt's status", (r) => void (r.receipts[0]!["status"] = "odd"), /receipts\[0\]\.status expected/],
    ["a receipt's cells", (r) => void (r.receipts[0]!["cells"] = "12345678"), /receipts\[0\]\.cells expected/],
    ["an error that is not an object", (r) => void (r.receipts.find((x) => x["error"] !== null)!["error"] = "Unauthorized"), /\.error expected \{/],
    ["an event's emitter", (r) => void (event(r)["emitter"] = "0x99"), /\.events\[\d+\]\.emitter expected/],
    ["an event's topic", (r) => void (event(r)["topic"] = "0x99"), /\.events\[\d+\]\.topic expected/],
    ["an event's payload", (r) => void (event(r)["payload"] = "0x99"), /\.events\[\d+\]\.payload expected/],
    ["tx_root", (r) => void (r["tx_root"] = "0x" + "00".repeat(32)), /: t8n result: tx_root expected/],
    ["receipt_root", (r) => void (r["receipt_root"] = "0x" + "00".repeat(32)), /: t8n result: receipt_root expected/],
    ["effective_rent_height", (r) => void (r["effective_rent_height"] = "77"), /: t8n result: effective_rent_height expected/],
    ["gas_vectors_sha256", (r) => void (r["gas_vectors_sha256"] = "00".repeat(32)), /: t8n result: gas_vectors_sha256 expected/],
  ];
  const event = (r: Json): Record<string, unknown> => r.receipts.flatMap((x) => x["events"] as Array<Record<string, unknown>>)[0]!;

  for (const [what, change, words] of changes) {
    it(`${what}: a difference, named, and resultDiffers agrees`, () => {
      const r = oursResult();
      change(r);
      expect(diff(theirs(r))).toMatch(words);
      expect(resultDiffers(block, r, opts)).toBe(true);
    });
  }

  it("format: a difference (a target's output is refused before, by parseTargetOutput)", () => {
    const r = oursResult();
    r["format"] = "cbqs-t8n-result/v9";
    expect(resultDiffers(block, r, opts)).toBe(true);
    expect(firstDifference(block, { ...theirs(oursResult()), result: r }, opts)).toMatch(new RegExp(`^block ${block.height}: t8n result: format expected`));
  });

  it("resultDiffers: false for our own result, key order and each tool's own words aside", () => {
    const r = oursResult();
    for (const x of r.rejected) x["error"] = "bad envelope";
    expect(resultDiffers(block, Object.fromEntries(Object.entries(r).reverse()), opts)).toBe(false);
  });

  it("state_root and block_hash count only when state roots are compared; block_hash only when theirs and ours have one", () => {
    const r = oursResult();
    r["state_root"] = "0x" + "00".repeat(32);
    expect(resultDiffers(block, r, opts)).toBe(true);
    expect(resultDiffers(block, r, { stateRoot: false })).toBe(false);
    // A block hash is there when the env gave the parent hash (the fuzzer's blocks have none).
    const hashed: ComparedBlock = { ...block, ours: { result: { ...block.ours.result, block_hash: "0x" + "11".repeat(32) } } };
    const h = oursResult();
    expect(resultDiffers(hashed, h, opts)).toBe(true);
    expect(firstDifference(hashed, theirs(h), opts)).toMatch(/: t8n result: block_hash expected "0x(11){32}" got \(absent\)$/);
    h["block_hash"] = "0x" + "00".repeat(32);
    expect(firstDifference(hashed, theirs(h), opts)).toMatch(/: t8n result: block_hash expected "0x(11){32}" got "0x(00){32}"$/);
    expect(resultDiffers(hashed, h, { stateRoot: false })).toBe(false);
    expect(firstDifference(hashed, theirs(h), { stateRoot: false })).toBeNull();
    h["block_hash"] = "0x" + "11".repeat(32);
    expect(resultDiffers(hashed, h, opts)).toBe(false);
  });

  it("which state root ours is: the chain's (\"chain\") or our per-call t8n's (\"per_block\", the default)", () => {
    // After the first block the two differ: the chain's root has the history, the per-call t8n's commits the pre-state as one batch.
    const builder = new ChainBuilder(generateChain(3, 0, 4));
    builder.build();
    const later = builder.build();
    expect(oursResultOf(later, "chain")).toBe(later.result);
    expect(oursResultOf(later, "per_block")).toBe(later.ours.result);
    expect(later.result["state_root"]).not.toBe(later.ours.result["state_root"]);
    const chain = structuredClone(later.result);
    const alloc = { format: "cbqs-state-dump/v1", entries: [...later.ours.store.entries()].map(([k, v]) => ({ key: toHex(k), value: toHex(v) })) };
    const output = parseTargetOutput(JSON.stringify(chain), JSON.stringify(alloc), "");
    expect(resultDiffers(later, chain, opts, "chain")).toBe(false);
    expect(resultDiffers(later, chain, opts)).toBe(true);
    expect(firstDifference(later, output, opts, "chain")).toBeNull();
    expect(firstDifference(later, output, opts)).toMatch(/state_root expected/);
  });

  it("a receipt difference names no transaction when the format, the height or the left-out list differs too (those come first)", () => {
    for (const other of [(r: Json) => void (r["format"] = "x/v1"), (r: Json) => void (r["height"] = "999"), (r: Json) => void r.rejected.pop()]) {
      const r = oursResult();
      r.receipts[0]!["cycles"] = "1";
      other(r);
      expect(firstDifference(block, { ...theirs(oursResult()), result: r }, opts)).toMatch(new RegExp(`^block ${block.height}: t8n result: `));
    }
    // Their receipts not a list: the first receipt is the one that differs.
    const r = oursResult() as Record<string, unknown>;
    r["receipts"] = "none";
    const tx = Number(oursResult().receipts[0]!["index"]);
    expect(firstDifference(block, { ...theirs(oursResult()), result: r }, opts)).toMatch(new RegExp(`^block ${block.height} tx ${tx} ${block.kinds[tx]}: t8n result: receipts expected`));
  });

  it("a list element or an error that is not an object is compared as it is (not read as one)", () => {
    const r = oursResult() as Record<string, unknown> & Json;
    const ok = r.receipts.findIndex((x) => x["error"] === null);
    r.receipts[ok]!["error"] = "Unauthorized";
    expect(diff(theirs(r))).toMatch(new RegExp(`receipts\\[${ok}\\]\\.error expected null got "Unauthorized"$`));
    const s = oursResult() as Record<string, unknown> & Json;
    (s.receipts as unknown[])[0] = null;
    expect(diff(theirs(s))).toMatch(/receipts\[0\] expected \{.* got null$/);
    (s.receipts as unknown[])[0] = [1, 2];
    expect(diff(theirs(s))).toMatch(/receipts\[0\] expected \{.* got \[1,2\]$/);
    const t = oursResult();
    const e = t.receipts.findIndex((x) => x["error"] !== null);
    t.receipts[e]!["error"] = ["code"];
    expect(diff(theirs(t))).toMatch(new RegExp(`receipts\\[${e}\\]\\.error expected \\{.*\\} got \\["code"\\]$`));
  });

  it("their receipts absent: the first receipt differs; one receipt more than ours: no transaction to name", () => {
    const r = oursResult() as Record<string, unknown>;
    delete r["receipts"];
    const tx = Number(oursResult().receipts[0]!["index"]);
    expect(firstDifference(block, { ...theirs(oursResult()), result: r }, opts)).toMatch(new RegExp(`^block ${block.height} tx ${tx} ${block.kinds[tx]}: t8n result: receipts expected`));
    const more = oursResult();
    more.receipts.push({ ...more.receipts[0]!, index: 99 });
    expect(diff(theirs(more))).toBe(`block ${block.height}: t8n result: receipts.length expected ${more.receipts.length - 1} got ${more.receipts.length}`);
  });

  it("the post-state: an entry more than ours, or a value changed, is a difference even when every root agrees", () => {
    // A key after our last one (its last byte raised), of the same kind and value.
    const alloc = oursAlloc();
    const last = alloc.entries[alloc.entries.length - 1]!;
    expect(last.key.endsWith("ff")).toBe(false);
    const extra = last.key.slice(0, -2) + "ff";
    alloc.entries.push({ key: extra, value: last.value });
    expect(diff(theirs(oursResult(), alloc), false)).toMatch(new RegExp(`^block ${block.height}: state: key ${extra}.*: expected \\(absent\\)`));
    // Our last value with its last hex digit changed.
    const changed = oursAlloc();
    const flipped = last.value.slice(0, -1) + (last.value.endsWith("0") ? "1" : "0");
    changed.entries[changed.entries.length - 1] = { key: last.key, value: flipped };
    expect(diff(theirs(oursResult(), changed), false)).toMatch(new RegExp(`^block ${block.height}: state: key ${last.key}`));
  });

  it("a transaction whose kind is unknown is named by its position alone", () => {
    const r = oursResult();
    r.receipts[0]!["cycles"] = "1";
    const tx = Number(r.receipts[0]!["index"]);
    const kinds = [...block.kinds];
    const unnamed = { ...block, kinds: [] as string[] } as typeof block;
    expect(firstDifference(unnamed, theirs(r), opts)).toMatch(new RegExp(`^block ${block.height} tx ${tx}: t8n result: receipts\\[0\\]\\.cycles`));
    expect(block.kinds).toEqual(kinds);
  });
});
