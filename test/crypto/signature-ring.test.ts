// The shared ring of Ed25519 checks behind the pipelined replay (src/crypto/signature-ring.ts):
// the helper's verdicts are ed25519VerifyStrict's, both sides answer "was a check in [from, to)
// invalid?" as the reference does, and a reused slot is never mistaken for the check that held it
// before. The two sides run here in one thread, interleaved as the test picks; the threaded run is
// test/harness/pipeline.test.ts (the corpus has invalid quote signatures, and blocks after them).
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { requireFreshDist } from "../fuzz/dist.js";
import { ed25519 } from "@noble/curves/ed25519.js";
import { fromHex } from "../../src/bytes.js";
import { ed25519Sign, ed25519VerifyStrict } from "../../src/crypto/ed25519.js";
import { allocateSignatureRing, MAX_RING_MESSAGE, SIGNATURE_RING, SignatureRing, SignatureServer } from "../../src/crypto/signature-ring.js";
import { SPECCHECK_VECTORS } from "./speccheck-vectors.js";

const SEED = fromHex("0x" + "3c".repeat(32));

interface Check {
  publicKey: Uint8Array;
  message: Uint8Array;
  signature: Uint8Array;
}

/** `n` checks: signatures by one key over distinct messages, every seventh one with a flipped bit, plus the speccheck edge cases. */
function checks(n: number): Check[] {
  const publicKey = ed25519.getPublicKey(SEED);
  const out: Check[] = SPECCHECK_VECTORS.map((v) => ({ publicKey: fromHex(v.publicKey), message: fromHex(v.message), signature: fromHex(v.signature) }));
  for (let i = 0; out.length < n; i++) {
    const message = new Uint8Array(1 + (i % 200)).fill(i & 0xff);
    const signature = ed25519Sign(SEED, message).slice();
    if (i % 7 === 0) signature[i % 64]! ^= 1 << (i % 8);
    out.push({ publicKey, message, signature });
  }
  return out;
}

/** Posts every check, the helper serving every `serveEvery` posts; per block of `blockSize` checks, whether one was invalid, as each side says. */
function run(all: Check[], serveEvery: number, blockSize: number): { poster: boolean[]; helper: boolean[] } {
  const shared = allocateSignatureRing();
  const ring = new SignatureRing(shared, () => {});
  const server = new SignatureServer(shared);
  const poster: boolean[] = [];
  const helper: boolean[] = [];
  all.forEach((c, i) => {
    expect(ring.post(c.publicKey, c.message, c.signature)).toBe(true);
    if (i % serveEvery === serveEvery - 1) server.serve();
    if ((i + 1) % blockSize === 0) {
      helper.push(server.anyInvalid(i + 1 - blockSize, i + 1));
      poster.push(ring.anyInvalid(i + 1 - blockSize, i + 1));
    }
  });
  return { poster, helper };
}

const reference = (all: Check[], blockSize: number): boolean[] => {
  const out: boolean[] = [];
  for (let at = 0; at + blockSize <= all.length; at += blockSize) out.push(all.slice(at, at + blockSize).some((c) => !ed25519VerifyStrict(c.publicKey, c.message, c.signature)));
  return out;
};

describe("CIP-39 §9.1 strict Ed25519 through the signature ring (pipelined replay)", () => {
  const all = checks(3 * SIGNATURE_RING + 17);
  const invalidTotal = all.filter((c) => !ed25519VerifyStrict(c.publicKey, c.message, c.signature)).length;

  it("the speccheck vectors and the flipped signatures are the invalid ones, as ed25519VerifyStrict says", () => {
    expect(invalidTotal).toBeGreaterThan(all.length / 8);
    expect(invalidTotal).toBeLessThan(all.length / 4);
  });

  it("both sides say which ranges held an invalid check, as the reference does, through three wraps of the ring", () => {
    // Blocks of 1 check: every answer; blocks of 3 and 5 mix valid-only and invalid blocks.
    for (const [serveEvery, blockSize] of [[1, 1], [7, 1], [2, 3], [SIGNATURE_RING - 1, 5]] as const) {
      const expected = reference(all, blockSize);
      expect(expected).toContain(true);
      if (blockSize > 1) expect(expected).toContain(false);
      const got = run(all, serveEvery, blockSize);
      expect(got.helper, `helper, serving every ${serveEvery}`).toEqual(expected);
      expect(got.poster, `poster, serving every ${serveEvery}`).toEqual(expected);
    }
  });

  it("a poster that never asks: a full ring takes the verdicts already written before reusing a slot, and remembers the invalid ones", () => {
    // The helper serves every 100 posts, the poster asks nothing until the end: from the 257th post
    // on every post finds the ring full and must take verdicts (never overwrite an unread slot).
    const shared = allocateSignatureRing();
    const ring = new SignatureRing(shared, () => {});
    const server = new SignatureServer(shared);
    all.forEach((c, i) => {
      ring.post(c.publicKey, c.message, c.signature);
      if (i % 100 === 99) server.serve();
    });
    server.serve();
    const poster: boolean[] = [];
    for (let at = 0; at + 5 <= all.length; at += 5) poster.push(ring.anyInvalid(at, at + 5));
    expect(poster).toEqual(reference(all, 5));
  });

  it("a helper thread that lags a whole ring behind: the 257th post waits for it instead of overwriting an unverified check (compiled build)", async () => {
    requireFreshDist();
    const ringUrl = new URL("../../dist/src/crypto/signature-ring.js", import.meta.url).href;
    const { allocateSignatureRing: allocate, SignatureRing: Ring } = (await import(ringUrl)) as typeof import("../../src/crypto/signature-ring.js");
    const shared = allocate();
    // The helper sleeps 300 ms before serving anything, then serves every millisecond until terminated.
    const helper = new Worker(
      `const { workerData } = require("node:worker_threads");
       import(workerData.ringUrl).then(({ SignatureServer }) => {
         const server = new SignatureServer(workerData.shared);
         const pause = new Int32Array(new SharedArrayBuffer(4));
         Atomics.wait(pause, 0, 0, 300);
         for (;;) { server.serve(); Atomics.wait(pause, 0, 0, 1); }
       });`,
      { eval: true, workerData: { ringUrl, shared } },
    );
    try {
      const ring = new Ring(shared, () => {});
      // Checks 0 … 255 fill the ring unverified; check 256 has the opposite validity of check 0.
      const checksOf = all.slice(0, SIGNATURE_RING);
      const bad = all.find((c) => !ed25519VerifyStrict(c.publicKey, c.message, c.signature))!;
      const good = all.find((c) => ed25519VerifyStrict(c.publicKey, c.message, c.signature))!;
      checksOf[0] = good;
      for (const c of checksOf) ring.post(c.publicKey, c.message, c.signature);
      const started = Date.now();
      ring.post(bad.publicKey, bad.message, bad.signature); // waits for check 0's verdict
      expect(Date.now() - started).toBeGreaterThan(100);
      expect(ring.anyInvalid(0, 1)).toBe(false); // check 0 was verified as posted, not as overwritten
      expect(ring.anyInvalid(SIGNATURE_RING, SIGNATURE_RING + 1)).toBe(true);
    } finally {
      await helper.terminate();
    }
  });

  it("each post tells the helper (wake), and a check that does not fit a slot is not posted", () => {
    const ring = new SignatureRing(allocateSignatureRing(), () => {});
    const c = all[20]!;
    expect(ring.post(c.publicKey.subarray(1), c.message, c.signature)).toBe(false);
    expect(ring.post(c.publicKey, c.message, c.signature.subarray(1))).toBe(false);
    expect(ring.post(c.publicKey, new Uint8Array(MAX_RING_MESSAGE + 1), c.signature)).toBe(false);
    expect(ring.size).toBe(0);
    expect(ring.post(c.publicKey, new Uint8Array(MAX_RING_MESSAGE), c.signature)).toBe(true);
    let wakes = 0;
    const counted = new SignatureRing(allocateSignatureRing(), () => wakes++);
    for (const x of all.slice(0, 10)) counted.post(x.publicKey, x.message, x.signature);
    expect(wakes).toBe(10);
  });

  it("a fresh ring holds no verdict: no word reads as a verdict on check 0 before the helper wrote one", () => {
    expect([...new Int32Array(allocateSignatureRing().verdicts)].every((w) => w === -1)).toBe(true);
  });

  it("the helper verifies each check once and says when it has none left; an empty range holds nothing invalid", () => {
    const shared = allocateSignatureRing();
    const ring = new SignatureRing(shared, () => {});
    const server = new SignatureServer(shared);
    const bad = all[0]!; // speccheck vector 0: invalid
    expect(server.pending()).toBe(false);
    ring.post(bad.publicKey, bad.message, bad.signature);
    expect(server.pending()).toBe(true);
    server.serve();
    expect(server.pending()).toBe(false);
    const verdicts = new Int32Array(shared.verdicts).slice();
    server.serve();
    expect(new Int32Array(shared.verdicts)).toEqual(verdicts);
    expect(server.anyInvalid(0, 0)).toBe(false);
    expect(server.anyInvalid(0, 1)).toBe(true);
    expect(ring.anyInvalid(0, 1)).toBe(true);
    expect(ring.anyInvalid(1, 1)).toBe(false);
  });
});
