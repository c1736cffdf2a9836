import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { toHex } from "../../src/bytes.js";
import { encodeEnvelope, decodeEnvelope } from "../../src/chain/envelope.js";
import { loadFixture, type Fixture } from "../../src/harness/fixture.js";
import { Replay } from "../../src/harness/replay.js";
import { parseEnv, transition } from "../../src/harness/t8n.js";
import { cli, corpusFiles, envOf, readDoc } from "./helpers.js";


const genesisState = (f: Fixture) => [...Replay.start(f).replay.store.entries()];
const hexEntries = (e: Iterable<readonly [Uint8Array, Uint8Array]>) => [...e].map(([k, v]) => [toHex(k), toHex(v)]);

describe("t8n equals the fixture's block (CIP-4 §5.2/§5.3 roots, §6.3 identical block + state → identical results)", () => {
  for (const file of corpusFiles()) {
    it(`§6.3 every block of ${file} from the previous post-state`, () => {
      const f = loadFixture(readDoc(file));
      let pre = genesisState(f);
      f.blocks.forEach((b, i) => {
        const { result, store } = transition(pre, b.transactions, envOf(f, i));
        expect(result["rejected"]).toEqual([]);
        expect(result["tx_root"]).toBe(toHex(b.tx_root));
        expect(result["receipt_root"]).toBe(toHex(b.receipt_root));
        expect(result["logs_root"]).toBe(toHex(b.logs_root));
        expect(result["effective_rent_height"]).toBe(b.effective_rent_height.toString());
        const receipts = result["receipts"] as Array<Record<string, unknown>>;
        expect(receipts.map((r) => [r["tx_hash"], r["status"], (r["error"] as { code: string } | null)?.code ?? null, r["cycles"], r["cells"]])).toEqual(
          b.receipts.map((r) => [toHex(r.tx_hash), r.status, r.error?.code.toString() ?? null, r.cycles.toString(), r.cells.toString()]),
        );
        if (b.post_state !== undefined) expect(hexEntries(store.entries())).toEqual(hexEntries(b.post_state));
        pre = [...store.entries()];
      });
    });
  }

  it("§5.1 from the genesis state, t8n's one-batch pre-state has the genesis history, so block 1's state_root matches", () => {
    const f = loadFixture(readDoc(corpusFiles()[0]!));
    const env = { ...envOf(f, 0), parent_hash: null };
    const { result } = transition(genesisState(f), f.blocks[0]!.transactions, env);
    expect(result["state_root"]).toBe(toHex(f.blocks[0]!.state_root));
  });

  it("envelopes that cannot be in the block are listed as rejected and left out (bad bytes, other chain, stale nonce)", () => {
    const f = loadFixture(readDoc("fixtures/corpus/provider-lifecycle.json"));
    const first = f.blocks[0]!.transactions[0]!;
    const env0 = decodeEnvelope(first);
    const otherChain = encodeEnvelope({ ...env0, chain_id: env0.chain_id + 1n });
    const txs = [first, first.slice(0, 5), otherChain, first];
    const { result } = transition(genesisState(f), txs, envOf(f, 0));
    const rejected = result["rejected"] as Array<{ index: string; error: string }>;
    expect(rejected.map((r) => r.index)).toEqual(["1", "2", "3"]);
    expect(rejected[0]!.error).toMatch(/invalid transaction envelope/);
    expect(rejected[1]!.error).toMatch(/chain_id/);
    expect(rejected[2]!.error).toMatch(/nonce 0 is not the sender's account nonce 1/);
    expect((result["receipts"] as unknown[]).length).toBe(1);
  });

  it("env is validated field by field", () => {
    expect(() => parseEnv({ height: "0" })).toThrow(/\$\.timestamp: missing/);
    expect(() => parseEnv({ height: "1", timestamp: "1", chain_id: "7", chain_instance_id: "0x00", governance: "0x" + "aa".repeat(20) })).toThrow(
      /\$\.chain_instance_id: expected 32 bytes/,
    );
    expect(() => parseEnv({ height: "1", extra: 1 })).toThrow(/\$\.extra: unknown field/);
    const ok = { height: "1", timestamp: "1", chain_id: "7", chain_instance_id: "0x" + "00".repeat(32), governance: "0x" + "aa".repeat(20) };
    expect(() => parseEnv({ ...ok, height: "0" })).toThrow(/\$\.height: block 0 is genesis/);
    expect(() => parseEnv({ ...ok, cycle_price: 1 })).toThrow(/\$\.cycle_price: expected an unsigned integer as a decimal string/);
  });
});

describe("cbqs t8n CLI", () => {
  const dir = mkdtempSync(join(tmpdir(), "cbqs-t8n-"));
  const f = loadFixture(readDoc("fixtures/corpus/provider-lifecycle.json"));
  const doc = readDoc("fixtures/corpus/provider-lifecycle.json");
  const put = (name: string, v: unknown) => {
    const p = join(dir, name);
    writeFileSync(p, typeof v === "string" ? v : JSON.stringify(v));
    return p;
  };
  const env = (i: number) => {
    const e = envOf(f, i);
    return {
      height: e.height.toString(),
      timestamp: e.timestamp.toString(),
      chain_id: e.chain_id.toString(),
      chain_instance_id: toHex(e.chain_instance_id),
      governance: toHex(e.governance),
      parent_hash: e.parent_hash === null ? null : toHex(e.parent_hash),
    };
  };

  it("writes the result and the post-state dump (equal to the fixture's post_state)", async () => {
    const alloc = put("alloc.json", doc.blocks[1]!["post_state"]);
    const r = await cli([
      "t8n",
      "--input.alloc", alloc,
      "--input.txs", put("txs.json", doc.blocks[2]!.transactions),
      "--input.env", put("env.json", env(2)),
      "--output.result", join(dir, "result.json"),
      "--output.alloc", join(dir, "post.json"),
    ]);
    expect(r.exitCode).toBe(0);
    const result = JSON.parse(readFileSync(join(dir, "result.json"), "utf8"));
    expect(result.format).toBe("cbqs-t8n-result/v1");
    expect(result.receipt_root).toBe(doc.blocks[2]!["receipt_root"]);
    const post = JSON.parse(readFileSync(join(dir, "post.json"), "utf8"));
    expect(post.entries.map((e: { key: string; value: string }) => [e.key, e.value])).toEqual(
      (doc.blocks[2]!["post_state"] as { entries: Array<{ key: string; value: string }> }).entries.map((e) => [e.key, e.value]),
    );
    expect(post.state_root).toBe(result.state_root);
  });

  it("--trace gives the same per-transaction trace as replaying the fixture to that block (diff: same)", async () => {
    const t8nTrace = join(dir, "t8n.trace");
    const r = await cli([
      "t8n",
      "--input.alloc", put("alloc1.json", doc.blocks[0]!["post_state"]),
      "--input.txs", put("txs1.json", doc.blocks[1]!.transactions),
      "--input.env", put("env1.json", env(1)),
      "--output.result", join(dir, "result1.json"),
      "--trace", t8nTrace,
    ]);
    expect(r.exitCode).toBe(0);
    const replayTrace = join(dir, "replay.trace");
    expect((await cli(["trace", "fixtures/corpus/provider-lifecycle.json", "--block", doc.blocks[1]!.height, "-o", replayTrace])).exitCode).toBe(0);
    expect(await cli(["diff", replayTrace, t8nTrace])).toMatchObject({ exitCode: 0, out: "same\n" });
  });

  it("an unwritable --output.result or --output.alloc is exit 2 'cannot write <file>: <reason>'", async () => {
    const args = ["t8n", "--input.alloc", put("wa.json", doc.blocks[0]!["post_state"]), "--input.txs", put("wt.json", doc.blocks[1]!.transactions), "--input.env", put("we.json", env(1))];
    const toDir = await cli([...args, "--output.result", dir]);
    expect(toDir.exitCode).toBe(2);
    expect(toDir.thrown).toBe(`cannot write ${dir}: it is a directory (give a file name)`);
    const missing = join(dir, "no-such-folder", "post.json");
    const alloc = await cli([...args, "--output.result", join(dir, "ok.json"), "--output.alloc", missing]);
    expect(alloc.thrown).toBe(`cannot write ${missing}: no such file or directory (ENOENT)`);
  });

  it("exit 2 with one line naming the file for a bad alloc, txs or env", async () => {
    const good = { alloc: put("a.json", doc.blocks[0]!["post_state"]), txs: put("t.json", doc.blocks[1]!.transactions), env: put("e.json", env(1)) };
    const cases: Array<[Partial<typeof good>, RegExp]> = [
      [{ alloc: put("bad-alloc.json", { format: "nope" }) }, /bad-alloc\.json: \$\.format: unexpected format "nope" \(expected "cbqs-state-dump\/v1"\)/],
      [{ alloc: put("extra-alloc.json", { ...(doc.blocks[0]!["post_state"] as object), extra: 1 }) }, /extra-alloc\.json: \$\.extra: unknown field/],
      [{ txs: put("bad-txs.json", ["0x1"]) }, /bad-txs\.json: \$\[0\]: expected 0x-prefixed hex/],
      [{ txs: put("many-txs.json", Array(65_537).fill("0x00")) }, /many-txs\.json: \$: 65537 entries exceed the bound 65536/],
      [{ env: put("bad-env.json", { ...env(1), height: "x" }) }, /bad-env\.json: \$\.height: expected an unsigned integer/],
      [{ env: put("dup-env.json", JSON.stringify(env(1)).replace("{", '{"chain_id":"8",')) }, /dup-env\.json: \$\.chain_id: duplicate key/],
      [{ env: put("not-json.json", "{") }, /not-json\.json: \$: not valid JSON/],
    ];
    for (const [override, message] of cases) {
      const i = { ...good, ...override };
      const r = await cli(["t8n", "--input.alloc", i.alloc, "--input.txs", i.txs, "--input.env", i.env, "--output.result", join(dir, "r.json")]);
      expect(r.exitCode).toBe(2);
      expect(r.thrown).toMatch(message);
      expect(r.thrown!.split("\n")).toHaveLength(1);
    }
  });
});
