// The shared ring of Ed25519 checks behind the pipelined replay (src/crypto/signature-ring.ts):
// whichever side verifies a check, the verdicts are ed25519VerifyStrict's, each check is verified
// exactly once, and a reused slot is never mistaken for the check that held it before. The two
// sides run here in one thread, interleaved in every order the test picks; the threaded run is
// test/harness/pipeline.test.ts (the corpus has invalid quote signatures).
import { describe, expect, it } from "vitest";
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

/** `n` checks: signatures by one key over distinct messages, every third one with a flipped bit, plus the speccheck edge cases. */
function checks(n: number): Check[] {
  const publicKey = ed25519.getPublicKey(SEED);
  const out: Check[] = SPECCHECK_VECTORS.map((v) => ({ publicKey: fromHex(v.publicKey), message: fromHex(v.message), signature: fromHex(v.signature) }));
  for (let i = 0; out.length < n; i++) {
    const message = new Uint8Array(1 + (i % 200)).fill(i & 0xff);
    const signature = ed25519Sign(SEED, message).slice();
    if (i % 3 === 0) signature[i % 64]! ^= 1 << (i % 8);
    out.push({ publicKey, message, signature });
  }
  return out;
}

/**
 * Posts every check, letting the helper serve after those `serveAfter` picks and taking the
 * verdicts every `takeEvery` posts; per post, how many invalid verdicts had been taken by then.
 */
function run(all: Check[], serveAfter: (i: number) => boolean, takeEvery = 7): { invalidSeen: number[]; wakes: number } {
  const shared = allocateSignatureRing();
  let wakes = 0;
  const ring = new SignatureRing(shared, () => wakes++);
  const server = new SignatureServer(shared);
  const invalidSeen: number[] = [];
  all.forEach((c, i) => {
    expect(ring.post(c.publicKey, c.message, c.signature)).toBe(true);
    if (serveAfter(i)) server.serve();
    if (i % takeEvery === takeEvery - 1) ring.verdicts(ring.size);
    invalidSeen.push(ring.invalid);
  });
  ring.verdicts(ring.size);
  invalidSeen.push(ring.invalid);
  return { invalidSeen, wakes };
}

/** The invalid counts `run` must see: the reference's verdicts of the checks taken by each post. */
function expectedSeen(all: Check[], takeEvery: number): number[] {
  const bad = all.map((c) => !ed25519VerifyStrict(c.publicKey, c.message, c.signature));
  const invalidBefore = (n: number) => bad.slice(0, n).filter(Boolean).length;
  const seen: number[] = [];
  let taken = 0;
  all.forEach((_, i) => {
    if (i + 1 - taken > SIGNATURE_RING) taken = i + 1 - SIGNATURE_RING; // a full ring: post took the oldest
    if (i % takeEvery === takeEvery - 1) taken = i + 1;
    seen.push(invalidBefore(taken));
  });
  seen.push(invalidBefore(all.length));
  return seen;
}

describe("Ed25519 signature ring (pipelined replay)", () => {
  const all = checks(3 * SIGNATURE_RING + 17);
  const invalidTotal = all.filter((c) => !ed25519VerifyStrict(c.publicKey, c.message, c.signature)).length;

  it("the speccheck vectors and the flipped signatures are the invalid ones, as ed25519VerifyStrict says", () => {
    expect(invalidTotal).toBeGreaterThan(all.length / 4);
    expect(invalidTotal).toBeLessThan(all.length / 2);
  });

  it("verdicts are the reference's whoever verifies: the poster alone, the helper for all, or each for some", () => {
    const expected = expectedSeen(all, 7);
    expect(expected.at(-1)).toBe(invalidTotal);
    expect(run(all, () => false).invalidSeen, "poster alone").toEqual(expected);
    expect(run(all, () => true).invalidSeen, "helper for all").toEqual(expected);
    expect(run(all, (i) => i % 5 < 2).invalidSeen, "each for some").toEqual(expected);
  });

  it("a full ring: the poster takes the oldest verdict before reusing its slot (and counts it), and a lagging helper skips what was reused", () => {
    const never = Number.MAX_SAFE_INTEGER;
    const expected = expectedSeen(all, never);
    // Some invalid checks are taken only by a post into a full ring: they must still be counted.
    expect(expected[all.length - 1]).toBeGreaterThan(0);
    expect(run(all, () => false, never).invalidSeen, "poster alone").toEqual(expected);
    expect(run(all, (i) => i % 97 === 0, never).invalidSeen, "helper now and then").toEqual(expected);
    expect(run(all, (i) => i === SIGNATURE_RING + 3 || i === all.length - 1, never).invalidSeen, "helper more than a ring behind").toEqual(expected);
  });

  it("each post tells the helper (wake), and a check that does not fit a slot is not posted", () => {
    const ring = new SignatureRing(allocateSignatureRing(), () => {});
    const c = all[20]!;
    expect(ring.post(c.publicKey.subarray(1), c.message, c.signature)).toBe(false);
    expect(ring.post(c.publicKey, c.message, c.signature.subarray(1))).toBe(false);
    expect(ring.post(c.publicKey, new Uint8Array(MAX_RING_MESSAGE + 1), c.signature)).toBe(false);
    expect(ring.size).toBe(0);
    expect(ring.post(c.publicKey, new Uint8Array(MAX_RING_MESSAGE), c.signature)).toBe(true);
    expect(run(all.slice(0, 10), () => false).wakes).toBe(10);
  });

  it("a check is judged once: a second take changes nothing, and the helper writes no verdict for a check the poster took", () => {
    const shared = allocateSignatureRing();
    const ring = new SignatureRing(shared, () => {});
    const server = new SignatureServer(shared);
    const bad = all[0]!; // speccheck vector 0: invalid
    ring.post(bad.publicKey, bad.message, bad.signature);
    server.serve();
    expect(server.pending()).toBe(false);
    ring.verdicts(1);
    ring.verdicts(1);
    expect(ring.invalid).toBe(1);
    const verdicts = new Int32Array(shared.verdicts);
    const before = verdicts.slice();
    ring.post(bad.publicKey, bad.message, bad.signature);
    ring.verdicts(2);
    expect(server.pending()).toBe(true);
    server.serve();
    expect(server.pending()).toBe(false);
    expect(verdicts).toEqual(before);
    expect(ring.invalid).toBe(2);
  });
});
