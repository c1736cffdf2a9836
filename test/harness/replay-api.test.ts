// src/harness/replay.ts's small pieces in process (the CLI tests run them only through the
// compiled `cbqs`): the receipt comparison field by field and in its order, `replayFile`'s report
// for each kind of input, the exit code of a set of reports, and `--shard`'s form and bounds.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { TxReceipt } from "../../src/chain/receipts.js";
import { parseShard, receiptsMismatch, replayExitCode, replayFile } from "../../src/harness/replay.js";
import { flipHex, readDoc } from "./helpers.js";

const SMALL = "fixtures/corpus/provider-lifecycle.json";

const receipt = (): TxReceipt => ({
  tx_hash: new Uint8Array(32).fill(1),
  status: "rejected",
  error: { code: 3, name: "Unauthorized" },
  events: [
    { emitter: new Uint8Array(20).fill(0x17), topic: "A", payload: Uint8Array.of(1, 2) },
    { emitter: new Uint8Array(20).fill(0x17), topic: "B", payload: Uint8Array.of(3) },
  ],
  cycles: 100n,
  cells: 7n,
});

describe("receiptsMismatch: the first differing field of the first differing receipt", () => {
  // [what, change, field (after "receipts[1]"), expected, actual, path where it differs from the field]
  const cases: Array<[string, (r: TxReceipt) => void, string, string, string, string?]> = [
    ["tx_hash", (r) => (r.tx_hash = new Uint8Array(32).fill(2)), ".tx_hash", "0x" + "01".repeat(32), "0x" + "02".repeat(32)],
    ["status", (r) => (r.status = "ok"), ".status", "rejected", "ok"],
    ["error code", (r) => (r.error = { code: 4, name: "Unauthorized" }), ".error.code", "3", "4"],
    ["no error", (r) => (r.error = null), ".error.code", "3", "none"],
    ["error name", (r) => (r.error = { code: 3, name: "Other" }), ".error.name", "Unauthorized", "Other"],
    ["event count", (r) => r.events.pop(), ".events.length", "2", "1", ".events"],
    ["an event's emitter", (r) => (r.events[1]!.emitter = new Uint8Array(20)), ".events[1].emitter", "0x" + "17".repeat(20), "0x" + "00".repeat(20)],
    ["an event's topic", (r) => (r.events[1]!.topic = "C"), ".events[1].topic", "B", "C"],
    ["an event's payload", (r) => (r.events[0]!.payload = Uint8Array.of(1)), ".events[0].payload", "0x0102", "0x01"],
    ["cycles", (r) => (r.cycles = 101n), ".cycles", "100", "101"],
    ["cells", (r) => (r.cells = 8n), ".cells", "7", "8"],
  ];
  for (const [what, change, field, expected, actual, path = field] of cases) {
    it(`${what} alone: named with its path, expected and actual`, () => {
      const ours = receipt();
      change(ours);
      expect(receiptsMismatch(5n, "$.blocks[2]", [receipt(), receipt()], [receipt(), ours])).toEqual({
        height: 5n,
        path: `$.blocks[2].receipts[1]${path}`,
        field: `receipts[1]${field}`,
        expected,
        actual,
        details: [],
      });
    });
  }

  it("equal receipts: none; an earlier field wins over a later one, an earlier receipt over a later one", () => {
    expect(receiptsMismatch(1n, "$.blocks[0]", [receipt(), receipt()], [receipt(), receipt()])).toBeNull();
    const both = receipt();
    both.cells = 0n;
    both.status = "ok";
    expect(receiptsMismatch(1n, "$.blocks[0]", [receipt()], [both])?.field).toBe("receipts[0].status");
    const first = receipt();
    first.cycles = 0n;
    const second = receipt();
    second.tx_hash = new Uint8Array(32);
    expect(receiptsMismatch(1n, "$.blocks[0]", [receipt(), receipt()], [first, second])?.field).toBe("receipts[0].cycles");
  });
});

describe("replayFile: one fixture file's report", () => {
  const dir = mkdtempSync(join(tmpdir(), "cbqs-replay-api-"));
  const write = (name: string, text: string): string => {
    const file = join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  it("ok: its name, blocks and transactions, every block seen by onBlock; --to-height stops early", () => {
    const doc = readDoc(SMALL);
    const seen: number[] = [];
    const report = replayFile(SMALL, { onBlock: (p) => seen.push(p.blocksDone) });
    const txs = doc.blocks.reduce((n, b) => n + b.transactions.length, 0);
    expect(report).toEqual({ file: SMALL, name: doc.name, status: "ok", blocks: doc.blocks.length, txs });
    expect(seen).toEqual(doc.blocks.map((_, i) => i + 1));
    const first = BigInt(doc.blocks[0]!.height as string);
    expect(replayFile(SMALL, { toHeight: first })).toMatchObject({ status: "ok", blocks: 1, txs: doc.blocks[0]!.transactions.length });
  });

  it("mismatch: the status and the mismatch, blocks counted to it", () => {
    const doc = readDoc(SMALL);
    doc.blocks[1]!.tx_root = flipHex(doc.blocks[1]!.tx_root as string);
    const report = replayFile(write("mismatch.json", JSON.stringify(doc)));
    expect(report.status).toBe("mismatch");
    expect(report.blocks).toBe(2);
    expect(report.mismatch).toMatchObject({ path: "$.blocks[1].tx_root", field: "tx_root" });
    expect(report.error).toBeUndefined();
  });

  it("unusable input is reported, not thrown: a file that is not JSON by its reader's words; an unexecutable block with the file named first", () => {
    const bad = write("bad.json", "{");
    const notJson = replayFile(bad);
    expect(notJson).toMatchObject({ file: bad, name: null, status: "unusable", blocks: 0, txs: 0 });
    expect(notJson.error).toMatch(/^.+bad\.json/);
    const doc = readDoc(SMALL);
    doc.blocks[0]!.transactions[0] = "0x00";
    const file = write("undecodable.json", JSON.stringify(doc));
    const report = replayFile(file);
    expect(report.status).toBe("unusable");
    expect(report.name).toBe(doc.name);
    expect(report.error).toMatch(new RegExp(`^${file.replaceAll(/[.*+?^${}()|[\]\\/]/g, "\\$&")}: block \\d+ \\$\\.blocks\\[0\\]\\.transactions\\[0\\]: `));
  });
});

describe("replayExitCode: 1 when any fixture mismatched, else 2 when any was unusable, else 0", () => {
  it("each case, a mismatch never hidden by an unusable fixture", () => {
    expect(replayExitCode([])).toBe(0);
    expect(replayExitCode([{ status: "ok" }, { status: "ok" }])).toBe(0);
    expect(replayExitCode([{ status: "ok" }, { status: "unusable" }])).toBe(2);
    expect(replayExitCode([{ status: "unusable" }, { status: "mismatch" }, { status: "ok" }])).toBe(1);
    expect(replayExitCode([{ status: "mismatch" }])).toBe(1);
  });
});

describe("parseShard: i/n with 1 ≤ i ≤ n, each at most six digits without a leading zero", () => {
  it("accepts the bounds", () => {
    expect(parseShard("1/1")).toEqual({ index: 1, count: 1 });
    expect(parseShard("3/3")).toEqual({ index: 3, count: 3 });
    expect(parseShard("2/10")).toEqual({ index: 2, count: 10 });
    expect(parseShard("999999/999999")).toEqual({ index: 999999, count: 999999 });
  });

  for (const text of ["0/3", "4/3", "1/0", "01/3", "1/03", "1000000/1000000", "1/", "/3", "1/3 ", " 1/3", "1:3", "a/b", "1/3/3", ""]) {
    it(`refuses ${JSON.stringify(text)} by name`, () => {
      expect(() => parseShard(text)).toThrow(new RangeError(`--shard must be i/n with 1 ≤ i ≤ n (got ${text})`));
    });
  }
});
