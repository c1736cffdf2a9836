import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ignoreEpipe } from "../../src/cli/common.js";
import { fromHex, toHex } from "../../src/bytes.js";
import { decodeEnvelope, encodeEnvelope } from "../../src/chain/envelope.js";
import { REGISTRY_ADDRESS } from "../../src/engine/layout.js";
import { loadFixture } from "../../src/harness/fixture.js";
import { replayFixture } from "../../src/harness/replay.js";
import { cli, CORPUS, corpusFiles, flipHex, readDoc, SCENARIOS, type Doc } from "./helpers.js";

const SMALL = "fixtures/corpus/provider-lifecycle.json";

function replayDoc(doc: Doc) {
  return replayFixture(loadFixture(JSON.parse(JSON.stringify(doc))));
}

/** First block index with a receipt satisfying `pred`, and that receipt's index. */
function findReceipt(doc: Doc, pred: (r: Doc["blocks"][number]["receipts"][number]) => boolean): [number, number] {
  for (let b = 0; b < doc.blocks.length; b++) {
    const r = doc.blocks[b]!.receipts.findIndex(pred);
    if (r >= 0) return [b, r];
  }
  throw new Error("corpus has no such receipt");
}

describe("replay of the bundled corpus (CIP-4 §6.1 root verification)", () => {
  it("has fixtures", () => {
    expect(corpusFiles().length).toBeGreaterThan(0);
  });

  for (const file of corpusFiles()) {
    it(`§6.1 ${file} replays with every root, receipt and digest matching`, () => {
      const doc = readDoc(file);
      const outcome = replayDoc(doc);
      expect(outcome.mismatch).toBeNull();
      expect(outcome.blocks).toBe(doc.blocks.length);
    });
  }
});

describe("tampered expectations fail at exactly that block and field (CIP-4 §6.4 root mismatch)", () => {
  const base = readDoc(SMALL);
  const last = base.blocks.length - 1;

  const cases: Array<[string, (d: Doc) => [number, string]]> = [
    ["state_root", (d) => ((d.blocks[last]!.state_root = flipHex(d.blocks[last]!.state_root as string)), [last, "state_root"])],
    ["tx_root", (d) => ((d.blocks[1]!.tx_root = flipHex(d.blocks[1]!.tx_root as string)), [1, "tx_root"])],
    ["receipt_root", (d) => ((d.blocks[0]!.receipt_root = flipHex(d.blocks[0]!.receipt_root as string)), [0, "receipt_root"])],
    ["logs_root", (d) => ((d.blocks[last]!.logs_root = flipHex(d.blocks[last]!.logs_root as string)), [last, "logs_root"])],
    ["block_hash", (d) => ((d.blocks[1]!.block_hash = flipHex(d.blocks[1]!.block_hash as string)), [1, "block_hash"])],
    ["gas_vectors_sha256", (d) => ((d.blocks[1]!.gas_vectors_sha256 = "00".repeat(32)), [1, "gas_vectors_sha256"])],
    ["effective_rent_height", (d) => ((d.blocks[0]!.effective_rent_height = "999"), [0, "effective_rent_height"])],
    [
      "receipt status",
      (d) => {
        const [b, r] = findReceipt(d, (x) => x.status === "rejected");
        Object.assign(d.blocks[b]!.receipts[r]!, { status: "ok", error: null });
        return [b, `receipts[${r}].status`];
      },
    ],
    [
      "error code",
      (d) => {
        const [b, r] = findReceipt(d, (x) => x.status === "rejected");
        d.blocks[b]!.receipts[r]!.error!.code = "3901";
        return [b, `receipts[${r}].error.code`];
      },
    ],
    [
      "error name",
      (d) => {
        const [b, r] = findReceipt(d, (x) => x.status === "rejected");
        d.blocks[b]!.receipts[r]!.error!.name = "SomethingElse";
        return [b, `receipts[${r}].error.name`];
      },
    ],
    [
      "event topic",
      (d) => {
        const [b, r] = findReceipt(d, (x) => x.events.length > 0);
        d.blocks[b]!.receipts[r]!.events[0]!.topic = "cbqs.other";
        return [b, `receipts[${r}].events[0].topic`];
      },
    ],
    [
      "event payload",
      (d) => {
        const [b, r] = findReceipt(d, (x) => x.events.length > 0 && x.events[0]!.payload.length > 2);
        d.blocks[b]!.receipts[r]!.events[0]!.payload = flipHex(d.blocks[b]!.receipts[r]!.events[0]!.payload);
        return [b, `receipts[${r}].events[0].payload`];
      },
    ],
    [
      "event count",
      (d) => {
        const [b, r] = findReceipt(d, (x) => x.events.length > 0);
        d.blocks[b]!.receipts[r]!.events.pop();
        return [b, `receipts[${r}].events.length`];
      },
    ],
    [
      "cycles",
      (d) => {
        const [b, r] = findReceipt(d, (x) => x.status === "ok" && x.cycles !== "0");
        d.blocks[b]!.receipts[r]!.cycles = (BigInt(d.blocks[b]!.receipts[r]!.cycles) + 1n).toString();
        return [b, `receipts[${r}].cycles`];
      },
    ],
    [
      "cells",
      (d) => {
        const [b, r] = findReceipt(d, (x) => x.status === "ok" && x.cells !== "0");
        d.blocks[b]!.receipts[r]!.cells = "0";
        return [b, `receipts[${r}].cells`];
      },
    ],
    [
      "tx_hash",
      (d) => {
        d.blocks[2]!.receipts[1]!.tx_hash = flipHex(d.blocks[2]!.receipts[1]!.tx_hash);
        return [2, "receipts[1].tx_hash"];
      },
    ],
    [
      "genesis state_root",
      (d) => {
        d.genesis["state_root"] = flipHex(d.genesis["state_root"]!);
        return [-1, "genesis state_root"];
      },
    ],
  ];

  for (const [what, tamper] of cases) {
    it(`§6.4 a tampered ${what} is reported at its block with the field named`, () => {
      const doc = JSON.parse(JSON.stringify(base)) as Doc;
      const [block, field] = tamper(doc);
      const { mismatch, blocks } = replayDoc(doc);
      expect(mismatch).not.toBeNull();
      expect(mismatch!.field).toBe(field);
      const height = block < 0 ? 0n : BigInt(doc.blocks[block]!.height);
      expect(mismatch!.height).toBe(height);
      expect(blocks).toBe(block + 1);
      expect(mismatch!.expected).not.toBe(mismatch!.actual);
    });
  }

  it("a fixture block carrying a transaction no block may contain (a keyless sender) is a mismatch at that transaction", () => {
    const doc = JSON.parse(JSON.stringify(base)) as Doc;
    const first = decodeEnvelope(fromHex(doc.blocks[0]!.transactions[0]!));
    const keyless = encodeEnvelope({ ...first, nonce: 0n, tx: { from: REGISTRY_ADDRESS, body: { kind: "transfer", to: first.tx.from, amount: 1n } } });
    doc.blocks[0]!.transactions.unshift(toHex(keyless));
    doc.blocks[0]!.receipts.unshift(doc.blocks[0]!.receipts[0]!);
    const { mismatch } = replayDoc(doc);
    expect(mismatch).toMatchObject({
      height: BigInt(doc.blocks[0]!.height),
      path: "$.blocks[0].transactions[0]",
      field: "transactions[0]",
      expected: "an includable transaction",
      actual: `${toHex(REGISTRY_ADDRESS)} is a keyless system account and cannot send transactions`,
    });
  });

  it("§6.4 a state_root mismatch names the differing keys with decoded values from the post-state dump", () => {
    const doc = JSON.parse(JSON.stringify(base)) as Doc;
    const b = doc.blocks[last]! as Doc["blocks"][number] & { post_state: { entries: Array<{ key: string; value: string }> } };
    b.state_root = flipHex(b.state_root as string);
    // Pretend the other implementation has one more key and a different account balance.
    const entries = b.post_state.entries;
    const account = entries.findIndex((e) => e.key.startsWith("0x01"));
    entries[account]!.value = flipHex(entries[account]!.value);
    const { mismatch } = replayDoc(doc);
    expect(mismatch!.field).toBe("state_root");
    expect(mismatch!.details).toHaveLength(1);
    expect(mismatch!.details[0]).toMatch(new RegExp(`^key ${entries[account]!.key}: balance expected "\\d+" got "\\d+"$`));
  });

  it("§6.1 --to-height stops after the last block at or below it", () => {
    const outcome = replayFixture(loadFixture(base), { toHeight: BigInt(base.blocks[1]!.height) });
    expect(outcome).toMatchObject({ blocks: 2, mismatch: null });
  });
});

describe("cbqs replay CLI", () => {
  const dir = mkdtempSync(join(tmpdir(), "cbqs-replay-"));
  const write = (name: string, content: string | Doc): string => {
    const path = join(dir, name);
    writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
    return path;
  };

  it("exit 0 and a summary line with counts and throughput for the corpus directory", async () => {
    const r = await cli(["replay", "fixtures/corpus", "--quiet"]);
    expect(r.exitCode).toBe(0);
    expect(r.out).toMatch(new RegExp(`^replay: ${corpusFiles().length} fixtures: ${corpusFiles().length} ok, 0 mismatches, 0 unusable; [0-9,]+ blocks, [0-9,]+ txs in [0-9.]+ s \\(.* blocks/s, .* tx/s\\)\\n$`));
  });

  it("exit 1 with fixture, height, field, expected and actual on a mismatch", async () => {
    const doc = readDoc(SMALL);
    doc.blocks[1]!.receipt_root = flipHex(doc.blocks[1]!.receipt_root as string);
    const file = write("mismatch.json", doc);
    const r = await cli(["replay", file]);
    expect(r.exitCode).toBe(1);
    expect(r.out.split("\n")[0]).toBe(
      `MISMATCH ${file}: block ${doc.blocks[1]!.height}: receipt_root ($.blocks[1].receipt_root): expected ${doc.blocks[1]!.receipt_root} got ${readDoc(SMALL).blocks[1]!.receipt_root}`,
    );
  });

  it("--json reports the mismatch as data", async () => {
    const doc = readDoc(SMALL);
    doc.blocks[0]!.receipts[0]!.cells = "1";
    const r = await cli(["replay", write("json.json", doc), "--json"]);
    expect(r.exitCode).toBe(1);
    const report = JSON.parse(r.out);
    expect(report.fixtures[0]).toMatchObject({ status: "mismatch", mismatch: { height: doc.blocks[0]!.height, field: "receipts[0].cells", expected: "1" } });
  });

  const bad: Array<[string, (d: Doc) => Doc | string, RegExp]> = [
    ["not JSON", () => "{", /bad\.json: \$: not valid JSON/],
    ["unknown format", (d) => ({ ...d, format: "cbqs-fixture/v0" }), /\$\.format: unexpected format "cbqs-fixture\/v0" \(expected "cbqs-fixture\/v1"\)/],
    ["missing field", (d) => (delete d.blocks[1]!.tx_root, d), /\$\.blocks\[1\]\.tx_root: missing/],
    ["unknown field", (d) => ((d.blocks[0]!["extra"] = 1), d), /\$\.blocks\[0\]\.extra: unknown field/],
    ["bad hex", (d) => ((d.blocks[0]!.state_root = "0x12"), d), /\$\.blocks\[0\]\.state_root: expected 32 bytes, got 1/],
    ["number instead of decimal string", (d) => ((d.blocks[0]!.height = 1 as unknown as string), d), /\$\.blocks\[0\]\.height: expected an unsigned integer/],
    ["heights going backwards", (d) => ((d.blocks[2]!.height = d.blocks[0]!.height), d), /\$\.blocks\[2\]\.height: heights must strictly increase/],
    [
      "truncated tx bytes",
      (d) => ((d.blocks[1]!.transactions[0] = d.blocks[1]!.transactions[0]!.slice(0, -6)), d),
      /block \d+ \$\.blocks\[1\]\.transactions\[0\]: invalid transaction envelope: Truncated/,
    ],
    [
      "oversize tx bytes",
      (d) => ((d.blocks[1]!.transactions[0] = "0x" + "00".repeat(1_049_601)), d),
      /\$\.blocks\[1\]\.transactions\[0\]: 1049601 bytes exceed the bound of 1049600 bytes/,
    ],
    ["receipts count", (d) => (d.blocks[0]!.receipts.pop(), d), /\$\.blocks\[0\]\.receipts: \d+ receipts for \d+ transactions/],
    ["ok with an error", (d) => ((d.blocks[0]!.receipts[0]!.error = { code: "1", name: "x" }), d), /\$\.blocks\[0\]\.receipts\[0\]\.error: must be null/],
    [
      "genesis failing validation",
      (d) => {
        const g = JSON.parse(Buffer.from(d.genesis["source"]!.slice(2), "hex").toString("utf8"));
        g.params = { "cbqs.rent.provider_bps": "1" };
        d.genesis["source"] = "0x" + Buffer.from(JSON.stringify(g)).toString("hex");
        return d;
      },
      /\$\.genesis\.source: invalid genesis: params: /,
    ],
    [
      "CIP-39 §3: a genesis source with a repeated key is refused",
      (d) => {
        const text = Buffer.from(d.genesis["source"]!.slice(2), "hex").toString("utf8");
        d.genesis["source"] = "0x" + Buffer.from(text.replace("{", '{"chain_id":"8",')).toString("hex");
        return d;
      },
      /\$\.genesis\.source: genesis source: \$\.chain_id: duplicate key/,
    ],
    ["genesis source not JSON", (d) => ((d.genesis["source"] = "0x7b"), d), /\$\.genesis\.source: genesis source: \$: not valid JSON: unexpected end of input/],
  ];

  for (const [what, make, message] of bad) {
    it(`exit 2 with one line naming file, block and field: ${what}`, async () => {
      const content = make(readDoc(SMALL));
      const file = write("bad.json", content);
      const r = await cli(["replay", file, "--quiet"]);
      expect(r.exitCode).toBe(2);
      const lines = r.err.trimEnd().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^cbqs: error: .*bad\.json: /);
      expect(lines[0]).toMatch(message);
      expect(r.err).not.toMatch(/\n\s+at /);
    });
  }

  it("fill --gzip writes byte-stable .json.gz fixtures that replay reads", async () => {
    const out1 = mkdtempSync(join(tmpdir(), "cbqs-gz-"));
    const out2 = mkdtempSync(join(tmpdir(), "cbqs-gz-"));
    const scenario = join(SCENARIOS, "provider-lifecycle.json");
    expect((await cli(["fill", scenario, "-o", out1, "--gzip", "--post-state", "final"])).exitCode).toBe(0);
    expect((await cli(["fill", scenario, "-o", out2, "--gzip", "--post-state", "final"])).exitCode).toBe(0);
    const gz = join(out1, "provider-lifecycle.json.gz");
    expect(readFileSync(gz)).toEqual(readFileSync(join(out2, "provider-lifecycle.json.gz")));
    const r = await cli(["replay", out1, "--quiet"]);
    expect(r.exitCode).toBe(0);
    expect(r.out).toMatch(/^replay: 1 fixture: 1 ok/);
  });

  it("fill: a scenario failing its own expectations is reported and skipped (exit 1); a malformed one is exit 2", async () => {
    const out = mkdtempSync(join(tmpdir(), "cbqs-fill-bad-"));
    const scenario = JSON.parse(readFileSync(join(SCENARIOS, "provider-lifecycle.json"), "utf8"));
    scenario.blocks[0].txs[0].expect = { status: "rejected" };
    const failing = write("failing.json", JSON.stringify({ ...scenario, name: "failing" }));
    const r = await cli(["fill", failing, join(SCENARIOS, "transfers.json"), "-o", out]);
    expect(r.exitCode).toBe(1);
    expect(r.err).toMatch(/failing\.json: scenario failing fails its own expectations: .*\$\.blocks\[0\]\.txs\[0\]\.expect\.status/);
    expect(readdirSync(out).sort()).toEqual(["index.json", "transfers.json"]);
    const bad = await cli(["fill", write("bad-scenario.json", "{"), "-o", out]);
    expect(bad.exitCode).toBe(2);
    expect(bad.thrown).toMatch(/bad-scenario\.json: \$: not valid JSON/);
  });

  it("--json: per-fixture blocks and txs are decimal strings like the totals (scenario-format §1)", async () => {
    const r = await cli(["replay", SMALL, "--json", "--quiet"]);
    expect(r.exitCode).toBe(0);
    const report = JSON.parse(r.out);
    expect(report.fixtures[0]).toMatchObject({ status: "ok", blocks: String(readDoc(SMALL).blocks.length) });
    expect(typeof report.fixtures[0].txs).toBe("string");
    expect(report.blocks).toBe(report.fixtures[0].blocks);
  });

  it("an unusable fixture's error line is terminal-safe (control characters from the file name shown as \\xNN)", async () => {
    const r = await cli(["replay", write("evil\u001b[31m\u0007.json", "{"), "--quiet"]);
    expect(r.exitCode).toBe(2);
    expect(r.err).toMatch(/^cbqs: error: .*evil\\x1b\[31m\\x07\.json: \$: not valid JSON/);
    expect(r.err.trimEnd()).not.toMatch(/[\u0000-\u001f]/);
  });

  it("a reader closing stdout early (EPIPE) is quiet and keeps the verification's exit code (docs/reference/formats/fixture.md)", async () => {
    const r = await cli(["replay", SMALL, "--trace", "-", "--quiet"]);
    expect(r.exitCode).toBe(0);
    // What `| head -1` causes once the synchronous replay has finished: an EPIPE error event on stdout.
    const stream = new PassThrough();
    const failures: unknown[] = [];
    ignoreEpipe(stream, (err) => failures.push(err));
    stream.emit("error", Object.assign(new Error("write EPIPE"), { code: "EPIPE" }));
    expect(failures).toEqual([]);
    stream.emit("error", Object.assign(new Error("write EIO"), { code: "EIO" }));
    expect(failures).toHaveLength(1);
    expect(String(failures[0])).toMatch(/EIO/);
  });

  it("exit 2 for a missing file", async () => {
    const r = await cli(["replay", join(dir, "nope.json")]);
    expect(r.exitCode).toBe(2);
    expect(r.thrown).toMatch(/cannot read .*nope\.json: no such file or directory \(ENOENT\)/);
  });

  it("the corpus files are byte-identical to a fresh fill of fixtures/scenarios (deterministic, up to date)", async () => {
    const out = mkdtempSync(join(tmpdir(), "cbqs-fill-"));
    const scenarios = readdirSync(SCENARIOS).filter((f) => f.endsWith(".json")).map((f) => join(SCENARIOS, f));
    const r = await cli(["fill", ...scenarios, "-o", out]);
    expect(r.exitCode).toBe(0);
    const filled = readdirSync(out).sort();
    // index.json too: the corpus index (test ids, SHA-256 of each file) is part of the corpus.
    expect(filled).toEqual(readdirSync(CORPUS).sort());
    expect(filled).toContain("index.json");
    for (const f of filled) expect(readFileSync(join(out, f), "utf8"), f).toBe(readFileSync(join(CORPUS, f), "utf8"));
  });
});

describe("property: a single tampered expected value is reported at exactly its JSON path (CIP-4 §6.4)", () => {
  const base = readDoc("fixtures/corpus/rent-settle-suspend-expire.json");
  // Every comparable expected value of the fixture, as [block index, path inside the block, setter].
  type Site = { block: number; path: string; tamper: (d: Doc) => void };
  const sites: Site[] = [];
  base.blocks.forEach((b, bi) => {
    for (const f of ["state_root", "tx_root", "receipt_root", "logs_root", "block_hash"]) {
      sites.push({ block: bi, path: f, tamper: (d) => void (d.blocks[bi]![f] = flipHex(d.blocks[bi]![f] as string)) });
    }
    b.receipts.forEach((r, ri) => {
      sites.push({ block: bi, path: `receipts[${ri}].tx_hash`, tamper: (d) => void (d.blocks[bi]!.receipts[ri]!.tx_hash = flipHex(r.tx_hash)) });
      sites.push({ block: bi, path: `receipts[${ri}].cycles`, tamper: (d) => void (d.blocks[bi]!.receipts[ri]!.cycles = `${BigInt(r.cycles) + 1n}`) });
      sites.push({ block: bi, path: `receipts[${ri}].cells`, tamper: (d) => void (d.blocks[bi]!.receipts[ri]!.cells = `${BigInt(r.cells) + 7n}`) });
      r.events.forEach((e, ei) => {
        sites.push({ block: bi, path: `receipts[${ri}].events[${ei}].topic`, tamper: (d) => void (d.blocks[bi]!.receipts[ri]!.events[ei]!.topic = `${e.topic}.x`) });
      });
    });
  });

  it("§6.4 for any one site: the first mismatch is that block and that path", () => {
    fc.assert(
      fc.property(fc.constantFrom(...sites), (site) => {
        const doc = JSON.parse(JSON.stringify(base)) as Doc;
        site.tamper(doc);
        const { mismatch } = replayFixture(loadFixture(doc));
        expect(mismatch?.path).toBe(`$.blocks[${site.block}].${site.path}`);
        expect(mismatch?.height).toBe(BigInt(base.blocks[site.block]!.height));
      }),
      { numRuns: 40, seed: 39 },
    );
  });
});

