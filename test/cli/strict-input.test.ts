// Strict input on the command line: every command refuses what it cannot read
// with exit 2 and one line naming the file and JSON path — nesting that once overflowed the
// stack, bounds that run/fill once exceeded, numbers that were echoed whole — and keeps exit 1
// for verdicts.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cbqs, unusableInput } from "./program.js";

const dir = mkdtempSync(join(tmpdir(), "cbqs-strict-"));
const put = (name: string, text: string): string => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const GOV = "0x00000000000000000000000000000000000000aa";
const P1 = "0x1111111111111111111111111111111111111111";
const scenario = (blocks: unknown[]) => ({
  format: "cbqs-scenario/v1",
  name: "strict",
  genesis: { chain_id: "7", timestamp: "2026-01-01T00:00:00Z", block_time_seconds: "1", governance: GOV, accounts: { [P1]: { balance: "100" } } },
  blocks,
});
const nested = "[".repeat(100_000) + "]".repeat(100_000);

describe("nothing recurses on input depth", () => {
  it("100,000 nested arrays are one exit-2 line in run, diff, t8n, state dump and verify-proof", async () => {
    const deep = put("deep.json", `{"format": "cbqs-run/v1", "blocks": ${nested}}`);
    const ok = put("env.json", "{}");
    const runs = [
      await cbqs("run", deep),
      await cbqs("diff", deep, deep),
      await cbqs("t8n", "--input.alloc", deep, "--input.txs", ok, "--input.env", ok),
      await cbqs("state", "dump", deep),
      await cbqs("verify-proof", deep, "--root", "0x" + "00".repeat(32)),
    ];
    for (const r of runs) expect(r).toEqual(unusableInput(/deep\.json: \$\.blocks\[0\]\[0\].*: nesting deeper than 64 levels/));
    for (const r of runs) expect(r.err.length).toBeLessThan(400);
  });

  it("a 5 MB proof value gets a verdict (root mismatch, exit 1), not a stack overflow reported as one", async () => {
    const fixture = JSON.parse(readFileSync("fixtures/corpus/create-quote.json", "utf8")) as { blocks: Array<{ post_state: unknown }> };
    const dump = put("dump.json", JSON.stringify(fixture.blocks[1]!.post_state));
    const entries = (fixture.blocks[1]!.post_state as { entries: Array<{ key: string }> }).entries;
    const proofFile = join(dir, "proof.json");
    const root = (await cbqs("prove-state", dump, "--key", entries[0]!.key, "-o", proofFile)).out.trim();
    const proof = JSON.parse(readFileSync(proofFile, "utf8")) as Record<string, unknown>;
    const big = put("big-proof.json", JSON.stringify({ ...proof, value: "0x" + "ab".repeat(2_600_000) }));
    const r = await cbqs("verify-proof", big, "--root", root);
    expect(r.exitCode).toBe(1);
    expect(r.out).toMatch(/^invalid: root mismatch\n/);
    expect(r.out).not.toMatch(/stack/);
  });
});

describe("bounds enforced at the earliest point, errors short and in words", () => {
  it("run and fill refuse a block of 70,000 transactions (the fixture bound is 65,536) before executing anything", async () => {
    const txs = Array.from({ length: 70_000 }, () => ({ from: P1, transfer: { to: GOV, amount: "0" } }));
    const file = put("big-block.json", JSON.stringify(scenario([{ height: "1", txs }])));
    const problem = /big-block\.json: \$\.blocks\[0\]\.txs: 70000 transactions exceed the bound of 65536 per block/;
    expect(await cbqs("run", file)).toEqual(unusableInput(problem));
    expect(await cbqs("fill", file, "-o", join(dir, "out"))).toEqual(unusableInput(problem));
  });

  it("a 100,000-digit number is echoed cut (≤ ~200 characters of input), with the file and JSON path", async () => {
    const text = JSON.stringify(scenario([{ height: "1" }])).replace('"height":"1"', `"height":${"9".repeat(100_000)}`);
    const r = await cbqs("run", put("digits.json", text));
    expect(r).toEqual(unusableInput(/digits\.json: \$\.blocks\[0\]\.height: number 9{24}… \(100000 characters\) is not an unsigned integer/));
    expect(r.err.length).toBeLessThan(400);
  });

  it("the echo class: every reader and argument check shows a 100,000-character input cut, with its length, path and reason", async () => {
    const D = "9".repeat(100_000);
    const K = "k".repeat(100_000);
    const root = "0x" + "00".repeat(32);
    const transfer = (amount: string) => scenario([{ height: "1", txs: [{ from: P1, transfer: { to: GOV, amount } }] }]);
    const withGenesis = (extra: object) => ({ ...scenario([]), genesis: { ...scenario([]).genesis, ...extra } });
    const cases: Array<[string[], RegExp]> = [
      // The scenario reader's integers (once echoed whole, cut only by the 600-character backstop).
      [["run", put("amount.json", JSON.stringify(transfer(D)))], /\$\.blocks\[0\]\.txs\[0\]\.transfer\.amount: 9{200}… \(100000 characters\) exceeds the maximum 18446744073709551615/],
      [["run", put("chain-id.json", JSON.stringify(withGenesis({ chain_id: D })))], /\$\.genesis\.chain_id: 9{200}… \(100000 characters\) exceeds the maximum/],
      // The genesis validation's parameter name, a scenario's expected error name.
      [["run", put("param.json", JSON.stringify(withGenesis({ params: { [K]: "1" } })))], /unknown parameter k{200}… \(100000 characters\)/],
      [["run", put("error-name.json", JSON.stringify(scenario([{ height: "1", txs: [{ from: P1, transfer: { to: GOV, amount: "1" }, expect: { status: "rejected", error: K } }] }])))], /\$\.blocks\[0\]\.txs\[0\]\.expect\.error: unknown error name "k{200}… \(100000 characters\)"/],
      // Unknown member names in a dump, a state proof and an inclusion proof.
      [["state", "dump", put("dump-key.json", JSON.stringify({ format: "cbqs-state-dump/v1", entries: [{ key: "0x00", value: "0x00", [K]: 1 }] }))], /dump-key\.json: \$\.entries\[0\]\["k{120}… \(100000 characters\)"\]: unknown field/],
      [["verify-proof", put("proof-key.json", JSON.stringify({ [K]: 1 })), "--root", root], /proof-key\.json: \$\["k{120}… \(100000 characters\)"\]: unknown field/],
      [["verify-bmt-proof", put("bmt-key.json", JSON.stringify({ [K]: 1 })), "--root", root], /bmt-key\.json: .*unknown field "k{200}… \(100000 characters\)"/],
      // Arguments.
      [["state", "dump", put("empty.json", "{}"), "--height", D], /--height exceeds u64 \(got 9{200}… \(100000 characters\)\)/],
      [["decode", K, "0x00"], /unknown type "k{200}… \(100000 characters\)"/],
    ];
    for (const [args, problem] of cases) {
      const r = await cbqs(...args);
      expect(r, args[0]).toEqual(unusableInput(problem));
      expect(r.err.length, args.join(" ").slice(0, 80)).toBeLessThan(400);
    }
  });

  it("a 300-character unknown key is echoed cut in the JSON path", async () => {
    const text = JSON.stringify({ ...scenario([]), ["k".repeat(300)]: 1 });
    const r = await cbqs("run", put("long-key.json", text));
    expect(r).toEqual(unusableInput(/long-key\.json: \$\["k{120}… \(300 characters\)"\]: unknown field/));
  });

  it("fill -o naming an existing file says so in words (not EEXIST)", async () => {
    const file = put("not-a-dir", "x");
    const r = await cbqs("fill", "fixtures/scenarios/transfers.json", "-o", file);
    expect(r).toEqual(unusableInput(/-o .*not-a-dir: a file with that name exists; -o names the directory the fixtures are written into/));
  });

  it("diff of a well-formed document with a truncated copy is exit 2 for the truncated one, not a verdict", async () => {
    const good = put("good.json", readFileSync("fixtures/corpus/transfers.json", "utf8"));
    const text = readFileSync("fixtures/corpus/transfers.json", "utf8");
    const cut = put("cut.json", text.slice(0, text.length / 2));
    expect(await cbqs("diff", good, cut)).toEqual(unusableInput(/cut\.json: \$\.blocks\[\d+\].*: not valid JSON: unexpected end of input/));
  });
});
