// src/harness/replay.ts's small pieces in process (the CLI tests run them only through the
// compiled `cbqs`): the receipt comparison field by field and in its order, `replayFile`'s report
// for each kind of input, the exit code of a set of reports, and `--shard`'s form and bounds.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bytesEqual, fromHex } from "../../src/bytes.js";
import { decodeEnvelope } from "../../src/chain/envelope.js";
import type { TxReceipt } from "../../src/chain/receipts.js";
import { loadFixture } from "../../src/harness/fixture.js";
import { newStore, parseShard, receiptsMismatch, replayExitCode, replayFile, replayFixture, ReplayInputError, shardOf } from "../../src/harness/replay.js";
import { corpusFiles, flipHex, readDoc, type Doc } from "./helpers.js";

const SMALL = "fixtures/corpus/provider-lifecycle.json";

const replayDoc = (doc: Doc) => replayFixture(loadFixture(JSON.parse(JSON.stringify(doc))));
type Entry = { key: string; value: string };
const postState = (doc: Doc, block: number): Entry[] => (doc.blocks[block]!["post_state"] as { entries: Entry[] }).entries;

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

describe("a mismatch's words: where it is and what differs", () => {
  const base = readDoc(SMALL);
  const last = base.blocks.length - 1;
  const tampered = (change: (d: Doc) => void): Doc => {
    const d = JSON.parse(JSON.stringify(base)) as Doc;
    change(d);
    return d;
  };

  it("at genesis: the chain_instance_id, then the genesis state_root, each with its path", () => {
    const id = replayDoc(tampered((d) => (d.genesis["chain_instance_id"] = flipHex(d.genesis["chain_instance_id"]!))));
    expect(id).toMatchObject({ blocks: 0, mismatch: { height: 0n, path: "$.genesis.chain_instance_id", field: "chain_instance_id" } });
    const root = replayDoc(tampered((d) => (d.genesis["state_root"] = flipHex(d.genesis["state_root"]!))));
    expect(root).toMatchObject({ blocks: 0, mismatch: { height: 0n, path: "$.genesis.state_root", field: "genesis state_root", expected: flipHex(base.genesis["state_root"]!) } });
  });

  it("a genesis the engine refuses is unusable input, named at $.genesis.source with no block", () => {
    const err = (() => {
      try {
        replayDoc(
          tampered((d) => {
            const g = JSON.parse(Buffer.from(d.genesis["source"]!.slice(2), "hex").toString("utf8"));
            g.params = { "cbqs.rent.provider_bps": "1" };
            d.genesis["source"] = "0x" + Buffer.from(JSON.stringify(g)).toString("hex");
          }),
        );
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(ReplayInputError);
    expect((err as ReplayInputError).name).toBe("ReplayInputError");
    expect((err as ReplayInputError).message).toMatch(/^\$\.genesis\.source: invalid genesis: params: /);
    expect(new ReplayInputError("$.blocks[0]", 7n, "why").message).toBe("block 7 $.blocks[0]: why");
  });

  it("a state_root mismatch where the fixture has no post_state says so in its details", () => {
    const { mismatch } = replayDoc(
      tampered((d) => {
        delete d.blocks[last]!["post_state"];
        d.blocks[last]!["state_root"] = flipHex(d.blocks[last]!["state_root"] as string);
      }),
    );
    expect(mismatch).toMatchObject({ path: `$.blocks[${last}].state_root`, field: "state_root", details: ["(the fixture has no post_state at this block to name the differing keys)"] });
  });

  it("a state_root mismatch whose post_state equals our state says that only the expected root differs", () => {
    const { mismatch } = replayDoc(tampered((d) => (d.blocks[last]!["state_root"] = flipHex(d.blocks[last]!["state_root"] as string))));
    expect(mismatch!.details).toEqual(["(our state equals the fixture's post_state: only the expected root differs)"]);
  });

  it("a state_root mismatch names a key we have and the fixture lacks, and one the fixture has and we lack", () => {
    const extra = { key: "0x01" + "ab".repeat(20) + "00".repeat(33), value: "0x01" + "00".repeat(15) + "07" };
    let dropped: Entry | undefined;
    const { mismatch } = replayDoc(
      tampered((d) => {
        d.blocks[last]!["state_root"] = flipHex(d.blocks[last]!["state_root"] as string);
        const entries = postState(d, last);
        dropped = entries.splice(entries.findIndex((e) => e.key.startsWith("0x03")), 1)[0];
        entries.push(extra);
        entries.sort((a, b) => (a.key < b.key ? -1 : 1));
      }),
    );
    expect(mismatch!.details).toHaveLength(2);
    expect(mismatch!.details[0]).toMatch(new RegExp(`^unexpected key ${dropped!.key} = \\{`));
    expect(mismatch!.details[1]).toMatch(new RegExp(`^missing key ${extra.key} \\(expected \\{.*\\}\\)$`));
  });

  it("post_state alone (every root matches): one key or several, by count, each named", () => {
    const changed = replayDoc(
      tampered((d) => {
        const entries = postState(d, last);
        const account = entries.findIndex((e) => e.key.startsWith("0x01"));
        entries[account]!.value = flipHex(entries[account]!.value);
      }),
    );
    expect(changed.mismatch).toMatchObject({ path: `$.blocks[${last}].post_state`, field: "post_state", expected: "the fixture's post_state dump", actual: "1 key differs" });
    expect(changed.mismatch!.details).toHaveLength(1);
    // Same length, one key renamed: a key compared, not only the values.
    const renamed = replayDoc(
      tampered((d) => {
        const entries = postState(d, last);
        const account = entries.findIndex((e) => e.key.startsWith("0x01"));
        entries[account]!.key = "0x01" + "00".repeat(20) + entries[account]!.key.slice(44);
        entries.sort((a, b) => (a.key < b.key ? -1 : 1));
      }),
    );
    expect(renamed.mismatch).toMatchObject({ field: "post_state", actual: "2 keys differ" });
    // Our state a prefix of the fixture's dump (one more key at its end): the lengths are compared too.
    const longer = replayDoc(tampered((d) => void postState(d, last).push({ key: "0x0a" + "ff".repeat(32) + "00".repeat(21), value: postState(d, last).at(-1)!.value })));
    expect(longer.mismatch).toMatchObject({ field: "post_state", actual: "1 key differs" });
  });

  it("effective_rent_height and gas_vectors_sha256: each at its path", () => {
    const rent = replayDoc(tampered((d) => (d.blocks[1]!["effective_rent_height"] = "999")));
    expect(rent.mismatch).toMatchObject({ path: "$.blocks[1].effective_rent_height", field: "effective_rent_height", expected: "999" });
    const gas = replayDoc(tampered((d) => (d.blocks[1]!["gas_vectors_sha256"] = "00".repeat(32))));
    expect(gas.mismatch).toMatchObject({ path: "$.blocks[1].gas_vectors_sha256", field: "gas_vectors_sha256", expected: "00".repeat(32) });
  });

  it("two transactions of one sender swapped in their block: the first is named with its envelope nonce against the account's", () => {
    for (const file of corpusFiles()) {
      const doc = readDoc(file);
      for (const [b, block] of doc.blocks.entries()) {
        const senders = block.transactions.map((raw) => decodeEnvelope(fromHex(raw)));
        const i = senders.findIndex((e, k) => senders.some((o, j) => j > k && bytesEqual(o.tx.from, e.tx.from)));
        if (i < 0) continue;
        const j = senders.findIndex((o, k) => k > i && bytesEqual(o.tx.from, senders[i]!.tx.from));
        [block.transactions[i], block.transactions[j]] = [block.transactions[j]!, block.transactions[i]!];
        const { mismatch, blocks } = replayDoc(doc);
        expect(blocks).toBe(b + 1);
        expect(mismatch).toMatchObject({
          path: `$.blocks[${b}].transactions[${i}]`,
          field: `transactions[${i}].nonce`,
          expected: senders[j]!.nonce.toString(),
          actual: senders[i]!.nonce.toString(),
        });
        return;
      }
    }
    throw new Error("the corpus has no block with two transactions of one sender");
  });
});

describe("replay's options", () => {
  it("a pipelined replay refuses a store of the caller's: it keeps its own (also through replayFile)", () => {
    const store = newStore();
    expect(() => replayFixture(loadFixture(readDoc(SMALL)), { pipeline: true, store })).toThrow(new TypeError("a pipelined replay keeps its own store"));
    expect(() => replayFile(SMALL, { pipeline: true, store })).toThrow(new TypeError("a pipelined replay keeps its own store"));
  });

  it("replayFile replays into the caller's store", () => {
    const store = newStore();
    expect(replayFile(SMALL, { store }).status).toBe("ok");
    expect(store.root()).toEqual(fromHex(readDoc(SMALL).blocks.at(-1)!["state_root"] as string));
    // `pipeline: false` is the plain replay, which takes the caller's store.
    const plain = newStore();
    expect(replayFile(SMALL, { pipeline: false, store: plain }).status).toBe("ok");
    expect(plain.root()).toEqual(store.root());
  });

  it("shardOf: files of one name in several directories are ordered by full path, whatever order they come in", () => {
    const files = ["y/s.json", "x/s.json", "z/s.json", "w/a.json"];
    const expected = ["w/a.json", "x/s.json", "y/s.json", "z/s.json"];
    for (const order of [files, [...files].reverse(), [files[2]!, files[0]!, files[3]!, files[1]!]]) expect(shardOf(order, { index: 1, count: 1 })).toEqual(expected);
  });
});
