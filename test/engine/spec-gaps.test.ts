// Issue 22 §1: spec gaps decided in docs/decisions.md ("Spec-gap decisions (issue 22)"). Each test
// pins what the entry decides; the entries name the tests that already pinned the others.
import { describe, expect, it } from "vitest";
import { toHex, utf8 } from "../../src/bytes.js";
import { decode, encode } from "../../src/codec/core.js";
import { keyStreamId } from "../../src/codec/derive.js";
import * as S from "../../src/codec/schema.js";
import type { CbqsInstructionV1, KeyRotationBatchV1 } from "../../src/codec/types.js";
import { keccak256 } from "../../src/crypto/hash.js";
import { REGISTRY_ADDRESS, ZERO_ADDRESS, schedulesKey } from "../../src/engine/layout.js";
import { pauseRecordKey } from "../../src/engine/pause.js";
import { parseStateKey, systemStateKey } from "../../state/kv/keys.js";
import { decodeStateValueAs } from "../../state/kv/value.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";
import { readFixture } from "../../src/harness/documents.js";
import { CbqsNode } from "../../src/node/chain-node.js";
import { cbqs, genesisConfig, GOV, gov, ix, OWNER, PROVIDER, pubKey, seed, standardConfig, STANDARD_ONE_UNIT_RATE, TestChain } from "./harness.js";

const R = STANDARD_ONE_UNIT_RATE;
const activate = (t: TestChain, over: Parameters<TestChain["receipt"]>[0] = {}): CbqsInstructionV1 => ({
  type: "ActivateKeyGeneration",
  args: { receipt: t.receipt(over), bump_authorization_generation: false },
});

function encryptedStream(params: Record<string, bigint> = {}, over: Parameters<typeof ix.createStream>[0] = {}) {
  const t = new TestChain(genesisConfig(params));
  t.ok(cbqs(PROVIDER, ix.registerProvider()));
  t.ok(cbqs(OWNER, ix.createStream({ initial_escrow: 1000n * R, encrypted: true, ...over })));
  return { t, id: t.streamId() };
}

/** A KeyRotationBatchV1 with `n` envelope digests (the §9.3 KeyBatchHeader record's payload). */
function batchHeader(t: TestChain, n: number): KeyRotationBatchV1 {
  return {
    context: t.context(),
    stream_id: t.streamId(),
    encryption_generation: 1n,
    previous_batch_digest: new Uint8Array(32).fill(1),
    sorted_envelope_digests: Array.from({ length: n }, () => new Uint8Array(32).fill(2)),
    membership_set_digest: new Uint8Array(32).fill(3),
    created_at_ms: 0n,
    signature: new Uint8Array(64),
  };
}

describe("issue 22 §1: spec-gap decisions", () => {
  it("issue 22: CIP-39 §4.2/§9.3 the key stream copies the main retention and max_message_bytes, and a maximum key-batch header (221 + 32·n = 2,097,373 bytes at n = 65,536) exceeds any max_message_bytes", () => {
    const { t, id } = encryptedStream();
    const main = t.chain.stream(id)!;
    const key = t.chain.stream(keyStreamId(id))!;
    // Equal retention and an equal message bound, by construction (see decisions).
    expect(key.config.retention_ms).toBe(main.config.retention_ms);
    expect(key.config.retained_bytes_limit).toBe(main.config.retained_bytes_limit);
    expect(key.config.max_message_bytes).toBe(main.config.max_message_bytes);
    // The header is 221 + 32·n canonical bytes and the codec admits it at n = 65,536 …
    expect(encode(S.KeyRotationBatchV1, batchHeader(t, 1))).toHaveLength(221 + 32);
    const max = encode(S.KeyRotationBatchV1, batchHeader(t, 65_536));
    expect(max).toHaveLength(2_097_373);
    expect(decode(S.KeyRotationBatchV1, max).sorted_envelope_digests).toHaveLength(65_536);
    // … but no StreamConfigV1 can hold it: max_message_bytes is bounded by the §18 Maximum of
    // cbqs.max_inline_message_bytes (1,048,576), and a create at that Maximum still copies it.
    expect(max.length).toBeGreaterThan(1_048_576);
    const big = new TestChain(genesisConfig({ "cbqs.max_inline_message_bytes": 1_048_576n }));
    big.ok(cbqs(PROVIDER, ix.registerProvider()));
    big.ok(cbqs(OWNER, ix.createStream({ initial_escrow: 1000n * R, encrypted: true, config: standardConfig({ max_message_bytes: 1_048_576 }) })));
    expect(big.chain.stream(keyStreamId(big.streamId()))!.config.max_message_bytes).toBe(1_048_576);
    expect(big.tx(cbqs(OWNER, ix.createStream({ owner_nonce: 1n, encrypted: true, config: standardConfig({ max_message_bytes: 1_048_577 }) }))).error!.name).toBe("InvalidStreamConfig");
  });

  it("issue 22: CIP-39 §9.3 'within the batch bound' is the §18 Maximum 65,536 at decode; the live cbqs.max_key_envelopes_per_batch does not bind on chain", () => {
    const { t, id } = encryptedStream();
    t.ok(gov({ type: "SetParam", name: "cbqs.max_key_envelopes_per_batch", value: 1n }));
    expect(t.chain.params().get("cbqs.max_key_envelopes_per_batch")).toBe(1n);
    const o = t.ok(cbqs(OWNER, activate(t, { envelope_count: 65_536, first_sequence: 0n, last_sequence: 65_536n })));
    // §18.1: ActivateKeyGeneration's 4 reads are the pause record, the singleton and the pair —
    // no governance scalar, so the live row cannot be consulted within the reservation.
    expect(o.reads).toBe(4);
    expect(t.chain.stream(id)!.encryption_generation).toBe(1n);
  });

  it("issue 22: CIP-39 §9.3 ActivateKeyGeneration takes exactly current + 1: current + 2 and current are rejected, nothing changes", () => {
    const { t, id } = encryptedStream();
    const before = t.chain.stream(id)!;
    expect(before.encryption_generation).toBe(0n);
    expect(t.tx(cbqs(OWNER, activate(t, { encryption_generation: 2n }))).error!.name).toBe("InvalidKeyBatch");
    expect(t.tx(cbqs(OWNER, activate(t, { encryption_generation: 0n }))).error!.name).toBe("InvalidKeyBatch");
    expect(t.chain.stream(id)!).toEqual(before);
    t.ok(cbqs(OWNER, activate(t, { encryption_generation: 1n })));
    expect(t.tx(cbqs(OWNER, activate(t, { encryption_generation: 3n }))).error!.name).toBe("InvalidKeyBatch");
    expect(t.chain.stream(id)!.encryption_generation).toBe(1n);
  });

  it("issue 22: CIP-39 §4.5/§6 amounts are in one unit (nano-CBY, 10^9 per CBY): the floor-rate creation charge burns exactly 8,000 × 604,800 = 4,838,400,000 (≈ 4.84 CBY)", () => {
    const t = new TestChain();
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    const owner0 = t.balance(OWNER);
    const burn0 = t.balance(ZERO_ADDRESS);
    // Retained-only: a derived 67 per block, clamped to the 8,000 floor (§4.5).
    const config = standardConfig({ max_append_bytes_per_sec: 0n, max_delivered_bytes_per_sec: 0n });
    t.ok(cbqs(OWNER, ix.createStream({ initial_escrow: 5n, config })));
    expect(t.chain.stream(t.streamId())!.rate_per_block).toBe(8_000n);
    expect(t.balance(ZERO_ADDRESS) - burn0).toBe(4_838_400_000n);
    expect(owner0 - t.balance(OWNER)).toBe(4_838_400_005n);
    expect(Number(4_838_400_000n) / 1e9).toBeCloseTo(4.84, 2); // §6 "≈ 4.84 CBY" holds only at 10^9 units per CBY
    expect(t.balance(REGISTRY_ADDRESS)).toBe(5n);
  });

  it("issue 22: CIP-39 Denial of service / CIP-4 §12.5 the pause record is ActorStorage 0x03 ‖ governance ‖ hashed slot, not SystemState 0x0A under 0x09", () => {
    const t = new TestChain();
    const key = pauseRecordKey(GOV, REGISTRY_ADDRESS);
    expect(toHex(key)).toBe(
      "0x03" + "a0000000000000000000000000000000000000aa" + "c7382467dc1d4a6c248c0fb293aaf133e1baca4feca943991e7c918df3c6dfa6" + "80",
    );
    expect(key.subarray(21, 53)).toEqual(keccak256(new Uint8Array([...utf8("system:gov:pause-accounting:"), ...REGISTRY_ADDRESS])));
    expect(parseStateKey(key).prefix).toBe("ActorStorage");
    expect(decodeStateValueAs(t.store.read(key)!, "StorageSlot").bytes).toEqual(new Uint8Array(9)); // never paused
    // Nothing is written where a CIP-4 §12.5 reading would put it.
    const cip4Name = "system:gov:pause-accounting:" + toHex(REGISTRY_ADDRESS).slice(2);
    expect(t.store.read(systemStateKey(cip4Name))).toBeUndefined();
    expect([...t.store.entries()].filter(([k]) => parseStateKey(k).prefix === "SystemState")).toHaveLength(25); // the live scalars only
  });

  it("issue 22: CIP-39 §4.5 'the 0x03 record' is ActorStorage 0x03 ‖ 0x…17 ‖ slot(\"base-rate-schedules\"), 162 bytes", () => {
    const t = new TestChain();
    expect(toHex(schedulesKey())).toBe(
      "0x03" + "0000000000000000000000000000000000000017" + toHex(utf8("base-rate-schedules")).slice(2) + "00".repeat(13) + "13",
    );
    expect(decodeStateValueAs(t.store.read(schedulesKey())!, "StorageSlot").bytes).toHaveLength(162);
  });

  it("issue 22: CIP-39 §4.1/§9.2 an encrypted stream without a rotation key is accepted; the chain never reads the rotation key", () => {
    const { t, id } = encryptedStream();
    expect(t.chain.stream(id)!.rotation_key).toBeNull();
    expect(t.chain.stream(keyStreamId(id))!.rotation_key).toBeNull();
    t.ok(cbqs(OWNER, activate(t)));
    expect(t.chain.stream(id)!.encryption_generation).toBe(1n);
    // Set, then Clear again, on an encrypted stream: both accepted.
    t.ok(cbqs(OWNER, ix.updateStream(id, { rotation_key: { type: "Set", key: pubKey(seed(7)) } })));
    t.ok(cbqs(OWNER, ix.updateStream(id, { rotation_key: { type: "Clear" } })));
    expect(t.chain.stream(keyStreamId(id))!.rotation_key).toBeNull();
  });

  it("issue 22: CIP-4 §3/§7 tx_index and tx_receipts are rebuildable indexes outside state_db: no state key or value holds a tx hash, and the location is (height, index)", () => {
    const db = new MemoryChainDb();
    CbqsNode.open(db, { kind: "fixture", fixture: readFixture("fixtures/corpus/create-quote.json") });
    const state = [...db.state.entries()].map(([k, v]) => toHex(k) + toHex(v).slice(2)).join();
    let txs = 0;
    for (const block of db.blocks({ from: 1n, to: db.head()!.height, order: "asc", limit: 100 })) {
      block.receipts.forEach((r, index) => {
        txs += 1;
        expect(db.txLocation(r.tx_hash)).toEqual({ height: block.height, index });
        expect(state).not.toContain(toHex(r.tx_hash).slice(2));
      });
    }
    expect(txs).toBeGreaterThan(0);
    // state_db is what the header's state_root commits to; the indexes are not part of it.
    expect(db.state.root()).toEqual(db.head()!.state_root);
    db.close();
  });

  it("issue 22: CIP-4 §12 state rent does not apply to the system actors: custody 0x17 keeps its escrow across rent epochs", () => {
    const t = new TestChain();
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    t.ok(cbqs(OWNER, ix.createStream({ initial_escrow: 1000n * R })));
    const custody = t.balance(REGISTRY_ADDRESS);
    expect(custody).toBe(1000n * R);
    t.block([], 3n * 86_400n + 1n); // three CIP-4 rent epochs later, no transaction
    expect(t.balance(REGISTRY_ADDRESS)).toBe(custody);
    expect(t.chain.stream(t.streamId())!.escrow_balance).toBe(custody);
    expect(t.store.read(systemStateKey("system:cip4:rent_debt"))).toBeUndefined();
  });
});
