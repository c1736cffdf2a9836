import { afterAll, describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { encodeReceipt, inclusionProofToJson, parseInclusionProof, proveReceipt, proveTx, receiptRoot, txRoot, verifyInclusionProof, type InclusionProof, type Receipt } from "../../../state/roots/roots.js";
import { EncodingError } from "../../../state/kv/event.js";
import { toHex } from "../../../src/bytes.js";
import { cbqs, unusableInput } from "../../cli/program.js";

// Independent reference of commonware's BMT levels with keccak nodes (CIP-4 §5.2): leaf node i is
// H(u32 i ‖ leaf), an odd last node pairs with itself.
const cat = (...p: Uint8Array[]) => Uint8Array.from(p.flatMap((x) => [...x]));
const be32 = (n: number) => Uint8Array.of(n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff);
const k = (...p: Uint8Array[]) => keccak_256(cat(...p));
function refSiblings(leaves: Uint8Array[], index: number): string[] {
  let level: Uint8Array[] = leaves.map((l, i) => k(be32(i), l));
  const siblings: string[] = [];
  while (level.length > 1) {
    const sibling = index ^ 1;
    if (sibling < level.length) siblings.push(toHex(level[sibling]!));
    const next: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2) next.push(k(level[i]!, level[i + 1] ?? level[i]!));
    level = next;
    index >>= 1;
  }
  return siblings;
}

const txs = (n: number) => Array.from({ length: n }, (_, i) => Uint8Array.of(0xa0, i, i * 3));
const receipts = (n: number): Receipt[] =>
  Array.from({ length: n }, (_, i) =>
    i % 3 === 2
      ? { status: "rejected", errorCode: 3900 + i, cycles: BigInt(i), cells: 0n, events: [] }
      : { status: "ok", errorCode: 0, cycles: BigInt(10 * i), cells: BigInt(i), events: [{ emitter: new Uint8Array(20).fill(0x17), topic: `t${i}`, payload: Uint8Array.of(i) }] },
  );

const flip = (b: Uint8Array) => {
  const c = b.slice();
  c[c.length - 1]! ^= 1;
  return c;
};

/** Every single-field change of a valid proof that keeps it well-formed. */
function tamperings(p: InclusionProof): Array<[string, InclusionProof]> {
  const out: Array<[string, InclusionProof]> = [
    ["leaf_hash flipped", { ...p, leafHash: flip(p.leafHash) }],
    ["root field flipped", { ...p, root: flip(p.root) }],
    ["leaf_count + 1", { ...p, leafCount: p.leafCount + 1 }],
    ["leaf_index past the end", { ...p, leafIndex: p.leafCount }],
    ["extra sibling", { ...p, siblings: [...p.siblings, p.leafHash] }],
  ];
  if (p.leafCount > 1) {
    out.push(["leaf_count - 1", { ...p, leafCount: p.leafCount - 1 }]);
    out.push(["other leaf_index", { ...p, leafIndex: (p.leafIndex + 1) % p.leafCount }]);
  }
  p.siblings.forEach((_, i) => {
    out.push([`siblings[${i}] flipped`, { ...p, siblings: p.siblings.map((s, j) => (j === i ? flip(s) : s)) }]);
    out.push([`siblings[${i}] dropped`, { ...p, siblings: p.siblings.filter((_, j) => j !== i) }]);
  });
  if (p.siblings.length > 1) out.push(["siblings reversed", { ...p, siblings: [...p.siblings].reverse() }]);
  return out;
}

describe("tx and receipt inclusion proofs (CIP-4 §5.4, docs/spec/state.md §4.1)", () => {
  it("CIP-4 §5.4/§5.2: a tx proof verifies for every index of trees of 1..17 leaves, with commonware's siblings", () => {
    for (let n = 1; n <= 17; n++) {
      const list = txs(n);
      const root = txRoot(list);
      for (let i = 0; i < n; i++) {
        const p = proveTx(list, i);
        expect(toHex(p.leafHash)).toBe(toHex(keccak_256(list[i]!)));
        expect([p.leafIndex, p.leafCount, toHex(p.root)]).toEqual([i, n, toHex(root)]);
        expect(p.siblings.map(toHex)).toEqual(refSiblings(list.map((t) => keccak_256(t)), i));
        expect(verifyInclusionProof(p, root)).toBe(true);
      }
      expect(() => proveTx(list, n)).toThrow(/invalid position/);
    }
  });

  it("CIP-4 §5.4/§5.3: a receipt proof verifies for every index of trees of 1..17 leaves", () => {
    for (let n = 1; n <= 17; n++) {
      const list = receipts(n);
      const root = receiptRoot(list);
      for (let i = 0; i < n; i++) {
        const p = proveReceipt(list, i);
        expect(toHex(p.leafHash)).toBe(toHex(keccak_256(encodeReceipt(list[i]!))));
        expect(toHex(p.root)).toBe(toHex(root));
        expect(verifyInclusionProof(p, root)).toBe(true);
        // A receipt proof does not verify against the tx_root of the same block size.
        expect(verifyInclusionProof(p, txRoot(txs(n)))).toBe(false);
      }
    }
    expect(() => proveReceipt([], 0)).toThrow(/invalid position/);
  });

  it("CIP-4 §5.4: each field of a proof tampered is rejected (sizes 1..17, every index)", () => {
    for (let n = 1; n <= 17; n++) {
      const list = txs(n);
      const root = txRoot(list);
      for (let i = 0; i < n; i++) {
        const p = proveTx(list, i);
        for (const [what, bad] of tamperings(p)) {
          expect(verifyInclusionProof(bad, root), `n=${n} i=${i}: ${what}`).toBe(false);
        }
        expect(verifyInclusionProof(p, flip(root))).toBe(false);
      }
    }
  });

  it("docs/spec/state.md §4.1: the JSON form round-trips and malformed JSON is refused before verification", () => {
    const p = proveTx(txs(5), 3);
    const json = JSON.parse(JSON.stringify(inclusionProofToJson(p)));
    expect(Object.keys(json)).toEqual(["leaf_index", "leaf_count", "leaf_hash", "siblings", "root"]);
    expect(parseInclusionProof(json)).toEqual(p);
    const malformed: unknown[] = [
      null,
      [],
      { ...json, extra: 1 },
      { ...json, leaf_index: undefined },
      { ...json, leaf_index: -1 },
      { ...json, leaf_count: 1.5 },
      { ...json, leaf_count: 2 ** 32 },
      { ...json, leaf_count: "5" },
      { ...json, leaf_hash: json.leaf_hash.slice(0, -2) },
      { ...json, root: 7 },
      { ...json, siblings: "0x00" },
      { ...json, siblings: [...json.siblings, "0x1"] },
      { ...json, siblings: Array.from({ length: 33 }, () => json.root) },
    ];
    for (const bad of malformed) expect(() => parseInclusionProof(bad), JSON.stringify(bad)).toThrow(EncodingError);
  });
});

describe("cbqs verify-bmt-proof (CIP-4 §5.4)", () => {
  const dir = mkdtempSync(join(tmpdir(), "cbqs-bmt-proof-"));
  const list = receipts(6);
  const root = toHex(receiptRoot(list));
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  const valid = file("valid.json", JSON.stringify(inclusionProofToJson(proveReceipt(list, 4))));
  afterAll(() => rmSync(dir, { recursive: true }));

  it("CIP-4 §5.4: a valid proof prints valid and exits 0", async () => {
    const proof = inclusionProofToJson(proveReceipt(list, 4));
    const human = await cbqs("verify-bmt-proof", valid, "--root", root);
    expect(human).toMatchObject({ exitCode: 0, err: "" });
    expect(human.out).toBe(`valid\n  checked: leaf ${proof.leaf_hash} (index 4 of ${list.length} leaves) and ${proof.siblings.length} siblings rebuild the root ${root}\n`);
    const json = await cbqs("verify-bmt-proof", valid, "--root", root, "--json");
    expect(JSON.parse(json.out)).toEqual({ valid: true, leaf_hash: proof.leaf_hash, leaf_index: "4", leaf_count: String(list.length), root });
  });

  it("CIP-4 §5.4: a tampered proof or another root is invalid, exit 1", async () => {
    const json = inclusionProofToJson(proveReceipt(list, 4));
    const tampered = file("tampered.json", JSON.stringify({ ...json, leaf_index: 5 }));
    const r = await cbqs("verify-bmt-proof", tampered, "--root", root);
    expect(r).toMatchObject({ exitCode: 1, err: "" });
    expect(r.out).toMatch(/^invalid: the leaf and siblings do not rebuild the given root\n  checked: leaf 0x[0-9a-f]{64} \(index 5 of \d+ leaves\) and \d+ siblings do not rebuild the root 0x[0-9a-f]{64}: they rebuild 0x[0-9a-f]{64}\n$/);
    expect(r.out).not.toContain(`they rebuild ${root}`);
    // A good proof against another root: what it rebuilds is its own root, shown next to the given one.
    const other = toHex(txRoot(txs(6)));
    const against = await cbqs("verify-bmt-proof", valid, "--root", other);
    expect(against).toMatchObject({ exitCode: 1, err: "" });
    expect(against.out).toMatch(new RegExp(`do not rebuild the root ${other}: they rebuild ${root}\n$`));
    expect(JSON.parse((await cbqs("verify-bmt-proof", valid, "--root", other, "--json")).out)).toMatchObject({ valid: false, root: other, rebuilt: root });
    // Siblings that are no path of the tree rebuild nothing.
    const short = file("short.json", JSON.stringify({ ...json, siblings: json.siblings.slice(1) }));
    expect((await cbqs("verify-bmt-proof", short, "--root", root)).out).toMatch(/: they are not a path of a tree of that many leaves\n$/);
  });

  it("CIP-4 §5.4: unusable input (missing file, not JSON, malformed proof, bad --root) is an error, exit 2", async () => {
    const notJson = file("bad.json", "{");
    const malformed = file("malformed.json", JSON.stringify({ leaf_index: 0 }));
    expect(await cbqs("verify-bmt-proof", join(dir, "missing.json"), "--root", root)).toEqual(unusableInput(/cannot read/));
    expect(await cbqs("verify-bmt-proof", notJson, "--root", root)).toEqual(unusableInput(/not valid JSON/));
    expect(await cbqs("verify-bmt-proof", malformed, "--root", root)).toEqual(unusableInput(/inclusion proof/));
    expect(await cbqs("verify-bmt-proof", valid, "--root", "0x12")).toEqual(unusableInput(/--root/));
  });
});
