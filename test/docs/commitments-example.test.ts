// The worked MMR example of docs/spec/commitments.md: every digest it prints is recomputed here from
// the preimage its row names (CIP-4 §5.1: position-prefixed leaves and nodes, peaks bagged, the root
// committing to the leaf count and, when nonzero, the inactive peak count), and the roots are the
// ones state/qmdb/mmr.ts computes for the same three elements.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BLAKE3 } from "../../src/crypto/hash.js";
import { Mmr } from "../../state/qmdb/mmr.js";

const DOC = readFileSync(join(import.meta.dirname, "..", "..", "docs", "spec", "commitments.md"), "utf8");

/** The example's digests, by the first cell of their row, in order. */
function rows(): Map<string, string> {
  const table = DOC.split("<!-- worked-example: mmr -->\n")[1]!.split("\n\n")[0]!;
  return new Map([...table.matchAll(/^\| ([^|]+?) \| [^|]+ \| `(0x[0-9a-f]{64})` \|$/gm)].map((m) => [m[1]!, m[2]!]));
}

const hex = (b: Uint8Array): string => "0x" + Buffer.from(b).toString("hex");
const u64 = (n: number): Uint8Array => {
  const b = new Uint8Array(8);
  new DataView(b.buffer).setBigUint64(0, BigInt(n));
  return b;
};
const H = (...parts: Uint8Array[]): Uint8Array => BLAKE3.hash(Buffer.concat(parts));

describe("docs/spec/commitments.md: the worked MMR example", () => {
  const elements = [Uint8Array.of(0xa0), Uint8Array.of(0xa1), Uint8Array.of(0xa2)];
  const leaf0 = H(u64(0), elements[0]!);
  const leaf1 = H(u64(1), elements[1]!);
  const parent = H(u64(2), leaf0, leaf1);
  const leaf2 = H(u64(3), elements[2]!);
  const bagged = H(parent, leaf2);

  it("every row's digest is the Blake3 of the preimage it names", () => {
    expect([...rows().entries()]).toEqual([
      ["leaf 0, position 0", hex(leaf0)],
      ["leaf 1, position 1", hex(leaf1)],
      ["parent, position 2 (peak)", hex(parent)],
      ["leaf 2, position 3 (peak)", hex(leaf2)],
      ["bagged peaks", hex(bagged)],
      ["root", hex(H(u64(3), bagged))],
      ["root, first peak inactive", hex(H(u64(3), u64(1), bagged))],
    ]);
  });

  it("the roots are what the emulator's MMR computes for the same elements, bagged either way", () => {
    const mmr = new Mmr(BLAKE3);
    expect(elements.map((e) => mmr.append(e))).toEqual([0, 1, 3]);
    expect(mmr.size).toBe(4);
    expect(mmr.peakDigests().map(hex)).toEqual([hex(parent), hex(leaf2)]);
    expect(hex(mmr.root("forward"))).toBe(rows().get("root"));
    expect(hex(mmr.root("backward"))).toBe(rows().get("root"));
    expect(hex(mmr.root("backward", 1))).toBe(rows().get("root, first peak inactive"));
  });
});
