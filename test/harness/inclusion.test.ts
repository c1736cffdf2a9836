// `cbqs prove-tx` / `cbqs prove-receipt` → `cbqs verify-bmt-proof`: inclusion proofs of a fixture
// block's transactions and receipts verify against the block's tx_root / receipt_root (CIP-4 §5.4).
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cbqs } from "../cli/program.js";
import { flipHex, readDoc } from "./helpers.js";

const FIXTURE = "fixtures/corpus/create-quote.json";
const dir = mkdtempSync(join(tmpdir(), "cbqs-inclusion-"));
const doc = readDoc(FIXTURE);

describe("cbqs prove-tx / prove-receipt (CIP-4 §5.4 inclusion proofs)", () => {
  for (const kind of ["tx", "receipt"] as const) {
    it(`§5.4 every ${kind} of every block proves into the block's ${kind}_root and into no other root`, async () => {
      for (const block of doc.blocks) {
        const root = block[`${kind}_root`] as string;
        for (let i = 0; i < block.transactions.length; i++) {
          const file = join(dir, `${kind}-${block.height}-${i}.json`);
          const made = await cbqs(`prove-${kind}`, FIXTURE, "--block", block.height, "--index", String(i), "-o", file);
          expect(made).toEqual({ exitCode: 0, out: `${root}\n`, err: "" });
          expect(JSON.parse(readFileSync(file, "utf8"))).toMatchObject({ leaf_index: i, leaf_count: block.transactions.length, root });
          const verified = await cbqs("verify-bmt-proof", file, "--root", root);
          expect(verified).toMatchObject({ exitCode: 0, err: "" });
          expect(verified.out).toMatch(new RegExp(`^valid\n  checked: leaf 0x[0-9a-f]{64} \\(index ${i} of ${block.transactions.length} (?:leaf|leaves)\\) and \\d+ siblings? rebuild the root ${root}\n$`));
          expect((await cbqs("verify-bmt-proof", file, "--root", flipHex(root))).exitCode).toBe(1);
        }
      }
    });
  }

  it("§5.4 a tx proof is not a receipt proof: leaf hashes differ", async () => {
    const tx = JSON.parse((await cbqs("prove-tx", FIXTURE, "--block", doc.blocks[0]!.height, "--index", "0")).out);
    const receipt = JSON.parse((await cbqs("prove-receipt", FIXTURE, "--block", doc.blocks[0]!.height, "--index", "0")).out);
    expect(tx.leaf_hash).not.toBe(receipt.leaf_hash);
    expect(tx.root).toBe(doc.blocks[0]!.tx_root);
  });

  it("unknown block, index out of range or a non-decimal option is exit 2, one line", async () => {
    const last = doc.blocks[0]!;
    for (const [args, message] of [
      [["--block", "4", "--index", "0"], /no block at height 4/],
      [["--block", last.height, "--index", String(last.transactions.length)], /has 2 transactions; --index 2 is out of range/],
      [["--block", "x", "--index", "0"], /--block must be a decimal integer/],
      [["--block", last.height, "--index", "-1"], /--index must be a decimal integer/],
    ] as const) {
      const r = await cbqs("prove-tx", FIXTURE, ...args);
      expect(r.exitCode).toBe(2);
      expect(r.err).toMatch(message);
      expect(r.err.trimEnd().split("\n")).toHaveLength(1);
    }
  });

  it("a fixture whose stated root its own contents do not give is exit 1 (no proof written)", async () => {
    const tampered = readDoc(FIXTURE);
    tampered.blocks[0]!.receipts[0]!.cycles = "1";
    const file = join(dir, "tampered.json");
    writeFileSync(file, JSON.stringify(tampered));
    const r = await cbqs("prove-receipt", file, "--block", tampered.blocks[0]!.height, "--index", "0");
    expect(r.exitCode).toBe(1);
    expect(r.out).toBe("");
    expect(r.err).toMatch(/the fixture's receipt_root 0x[0-9a-f]{64} is not the root of its own receipts/);
  });
});
