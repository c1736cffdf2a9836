// The spec path and every fast path give the same bytes (docs/engineering/performance.md "Fast paths";
// D-0169 "Fast paths: the spec path and the seams"): the corpus, a bounded prefix of
// the long chain, a fuzz campaign and the gas-vector artifact, each executed spec-only
// (@noble/hashes, pure-JS Ed25519, no bounds memo, the plain replay) and with every fast path
// (hash-wasm, OpenSSL Ed25519, the bounds memo; plain and traced, then pipelined: the worker
// commitment and speculative signatures). scripts/fast-paths-differential.ts runs the same on
// the whole long chain and a longer campaign. The pipelined replay's worker thread runs compiled
// JavaScript, so these tests run dist/ (the script and everything it reaches).
import { beforeAll, describe, expect, it } from "vitest";
import { requireFreshDist } from "../fuzz/dist.js";

type Differential = typeof import("../../scripts/fast-paths-differential.js");
type Hashing = typeof import("../../src/crypto/hash.js");
type Paths = typeof import("../../src/engine/fast-paths.js");
type Documents = typeof import("../../src/harness/documents.js");
let d: Differential;
let hash: Hashing;
let paths: Paths;
let corpus: ReturnType<Documents["readFixture"]>[];
let GAS_VECTORS_SHA256: string;

const dist = (path: string) => import(new URL(`../../dist/${path}`, import.meta.url).href);

beforeAll(async () => {
  requireFreshDist();
  d = (await dist("scripts/fast-paths-differential.js")) as Differential;
  hash = (await dist("src/crypto/hash.js")) as Hashing;
  paths = (await dist("src/engine/fast-paths.js")) as Paths;
  const documents = (await dist("src/harness/documents.js")) as Documents;
  corpus = documents.fixtureFiles("fixtures/corpus").map(documents.readFixture);
  GAS_VECTORS_SHA256 = ((await dist("src/gas/pinned.js")) as typeof import("../../src/gas/pinned.js")).GAS_VECTORS_SHA256;
}, 120_000);

describe("fast paths: spec-only and every fast path, byte for byte", () => {
  it("SPEC_ONLY takes the spec path of every seam: the reference hashing, the pure-JS §9.1 verifier, no bounds memo; the fast hashing is back afterwards", () => {
    const spec = paths.enginePaths(paths.SPEC_ONLY);
    expect(spec.verifySignature).toBe(paths.verifyStrictReference);
    expect(spec.boundsMemo).toBeNull();
    expect(paths.enginePaths(paths.ALL_FAST_PATHS).boundsMemo).not.toBeNull();
    const preimage = new TextEncoder().encode("empty_receipts");
    const digest = d.withHashing(paths.SPEC_ONLY, () => {
      expect(hash.hashingPath()).toBe("reference");
      return hash.keccak256(preimage);
    });
    expect(hash.hashingPath()).toBe("fast");
    expect(digest).toEqual(hash.keccak256(preimage));
  });

  it("the corpus: every block's roots, block hash and receipts, every transaction's gas and trace, and each fixture still matches", { timeout: 300_000 }, () => {
    expect(corpus.length).toBeGreaterThan(10);
    for (const fixture of corpus) {
      const { difference } = d.compareReplay(fixture);
      expect({ fixture: fixture.name, difference }).toEqual({ fixture: fixture.name, difference: null });
    }
    // Each replay checked its fixture too: the outcome line names no mismatch.
    const last = d.replayOutput(corpus[0]!, paths.SPEC_ONLY).lines.at(-1)!;
    expect(JSON.parse(last)).toMatchObject({ mismatch: null });
  });

  it("the long chain's first 150 blocks (pauses, suspensions, expiries, every instruction)", { timeout: 300_000 }, () => {
    const fixture = d.longChainFixture(150);
    const { difference } = d.compareReplay(fixture);
    expect(difference).toBeNull();
  });

  it("a fuzz campaign (seed 7, 4 runs of 10 blocks): the chains built (t8n results, fixtures), then each replayed with its traces", { timeout: 300_000 }, () => {
    const spec = d.fuzzOutput(7, 0, 4, 10, paths.SPEC_ONLY);
    const fast = d.fuzzOutput(7, 0, 4, 10, paths.ALL_FAST_PATHS);
    expect(spec.lines.length).toBeGreaterThan(40);
    expect(d.firstDifference(spec, fast)).toBeNull();
    for (const fixture of spec.fixtures) expect(d.compareReplay(fixture).difference).toBeNull();
  });

  it("the gas-vector artifact: the pinned SHA-256 on both paths", { timeout: 300_000 }, () => {
    expect(d.gasOutput(paths.SPEC_ONLY).lines).toEqual([GAS_VECTORS_SHA256]);
    expect(d.gasOutput(paths.ALL_FAST_PATHS).lines).toEqual([GAS_VECTORS_SHA256]);
  });

  it("the comparison sees one differing byte (a receipt's, a trace's)", () => {
    const a = { lines: ['{"x":"0x00"}'], traces: ["t"], seconds: 0 };
    expect(d.firstDifference(a, { ...a, lines: ['{"x":"0x01"}'] })).toMatch(/^line 0: /);
    expect(d.firstDifference(a, { ...a, traces: ["u"] })).toMatch(/^trace line 0: /);
    expect(d.firstDifference(a, { ...a, lines: [] })).toMatch(/\(none\)/);
    expect(d.firstDifference(a, a)).toBeNull();
  });
});
