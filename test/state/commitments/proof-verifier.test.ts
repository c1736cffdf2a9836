// The standalone state-proof verifier (state/proof.ts) against proofs that are well formed and
// authentic in every part but one: each case names the check that must refuse it, and asserts
// that check's reason, so a verifier that skipped it would be caught even when a later check
// happened to fail too.
import { describe, expect, it } from "vitest";
import { toHex } from "../../../src/bytes.js";
import { STATE_KEY_LENGTH } from "../../../state/interface.js";
import { buildRangeProof } from "../../../state/mmr.js";
import { CurrentDb } from "../../../state/qmdb/current.js";
import { stateDbConfig, type Write } from "../../../state/qmdb/index.js";
import { proveInclusion, verifyStateProof, type StateProof } from "../../../state/proof.js";

const key = (i: number): Uint8Array => {
  const k = new Uint8Array(STATE_KEY_LENGTH);
  k[0] = 0x03;
  k[51] = i;
  return k;
};

/**
 * An Appendix C proof of the operation at `loc`, built exactly as proveInclusion builds one for
 * a current value (real range proof, real bitmap chunk), but for any Update of the log.
 */
function proofAt(db: CurrentDb, loc: number): StateProof {
  const op = db.any.operation(loc);
  if (op.kind !== "update") throw new Error(`operation ${loc} is not an update`);
  const current = proveInclusion(db, op.key);
  const range = buildRangeProof(db.config.hasher, db.any.mmr.leaves, db.graftedInactivePeaks(), "backward", loc, loc + 1, (pos) =>
    db.graftedNode(pos),
  );
  return {
    ...current,
    value: toHex(op.value),
    loc,
    chunk: toHex(db.any.bitmap.chunk(Math.floor(loc / db.any.bitmap.chunkBits))),
    mmr_leaves: range.leaves,
    inactive_peaks: range.inactivePeaks,
    digests: range.digests.map(toHex),
  };
}

describe("state proof verifier: each check refuses on its own (CIP-4 §5.4, Appendix C)", () => {
  it("activity bit: a proof of a key's OVERWRITTEN value, with the real bitmap chunk, does not verify as current", () => {
    const db = new CurrentDb(stateDbConfig());
    // Key 1 is written twice: its first Update stays in the log, inactive.
    db.applyBatch([[key(1), Uint8Array.of(0xaa)], [key(2), Uint8Array.of(2)], [key(3), Uint8Array.of(3)]]);
    db.applyBatch([[key(1), Uint8Array.of(0xbb)], [key(4), Uint8Array.of(4)]] satisfies Write[]);
    const root = db.root();
    const overwritten = Array.from({ length: db.any.size }, (_, loc) => loc).find((loc) => {
      const op = db.any.operation(loc);
      return op.kind === "update" && op.key[51] === 1 && op.value[0] === 0xaa;
    })!;
    const stale = proofAt(db, overwritten);
    expect(stale.value).toBe("0xaa");
    // The construction is authentic: at the key's current location it is a valid proof.
    const current = proofAt(db, db.any.locationOf(key(1))!);
    expect([current.value, verifyStateProof(current, root)]).toEqual(["0xbb", { valid: true }]);
    expect(verifyStateProof(stale, root)).toEqual({ valid: false, reason: "operation is not active in its chunk" });
  });
});
