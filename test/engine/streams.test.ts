// The stream-pair invariant of src/engine/streams.ts (CIP-39 §4.1; D-0054): the stored
// key stream of an encrypted main stream must be exactly deriveKeyStream(main), and a pair whose
// stored records break that (state corruption: no valid transaction writes one) fails closed
// with no mutation, whatever instruction names it.
import { describe, expect, it } from "vitest";
import { encode } from "../../src/codec/core.js";
import * as S from "../../src/codec/schema.js";
import type { StreamRecordV1 } from "../../src/codec/types.js";
import { CbqsError } from "../../src/engine/errors.js";
import { streamKey } from "../../src/engine/layout.js";
import { deriveKeyStream } from "../../src/engine/streams.js";
import { encodeStateValue } from "../../state/kv/value.js";
import { cbqs, ix, OWNER, PROVIDER, snapshot, TestChain, writeOutOfBand } from "./harness.js";

const slot = (record: StreamRecordV1) => encodeStateValue({ kind: "StorageSlot", bytes: encode(S.StreamRecordV1, record) });

function encryptedPair(): TestChain {
  const t = new TestChain();
  t.ok(cbqs(PROVIDER, ix.registerProvider()));
  t.ok(cbqs(OWNER, ix.createStream({ encrypted: true, initial_escrow: 1_000_000n })));
  return t;
}

/** The refusal of a TopUpStream and a CloseStream on the (corrupted) pair; neither may change state. */
function refusals(t: TestChain): string[] {
  const before = snapshot(t);
  const out = [ix.topUp(t.streamId(), 5n), ix.close(t.streamId())].map((i) => {
    const e = t.tx(cbqs(OWNER, i)).error;
    return `${e?.name}: ${e?.message}`;
  });
  expect(snapshot(t)).toEqual(before);
  return out;
}

describe("§4.1 stream pair loading fails closed on a corrupted pair", () => {
  it("a missing key stream, and a key stream that differs from deriveKeyStream(main) in one field, are RegistryStateInvalid", () => {
    const diverging = (t: TestChain) => `RegistryStateInvalid: key stream of 0x${Buffer.from(t.streamId()).toString("hex")} is missing or diverges from its main stream`;

    const missing = encryptedPair();
    writeOutOfBand(missing, streamKey(missing.keyStreamId()), null);
    expect(refusals(missing)).toEqual([diverging(missing), diverging(missing)]);

    const changed = encryptedPair();
    const key = changed.chain.stream(changed.keyStreamId())!;
    writeOutOfBand(changed, streamKey(key.stream_id), slot({ ...key, escrow_balance: 1n }));
    expect(refusals(changed)).toEqual([diverging(changed), diverging(changed)]);

    // the intact pair is accepted by the same instructions
    const intact = encryptedPair();
    intact.ok(cbqs(OWNER, ix.topUp(intact.streamId(), 5n)));
    intact.ok(cbqs(OWNER, ix.close(intact.streamId())));
  });

  it("an encrypted main record without a link is RegistryStateInvalid, on load and in deriveKeyStream", () => {
    const t = encryptedPair();
    const main = t.chain.stream(t.streamId())!;
    writeOutOfBand(t, streamKey(main.stream_id), slot({ ...main, linked_stream_id: null }));
    expect(refusals(t)).toEqual(Array(2).fill("RegistryStateInvalid: encrypted stream without link"));

    let thrown: unknown;
    try {
      deriveKeyStream({ ...main, linked_stream_id: null });
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(CbqsError);
    expect([(thrown as CbqsError).errorName, (thrown as CbqsError).message]).toEqual(["RegistryStateInvalid", "encrypted stream without a linked key stream"]);
  });
});
