// Spec gaps (the decision records with spec_gap: yes, docs/decisions.md): each test pins
// what its record decides; the records name the tests that already pinned the others.
import { describe, expect, it } from "vitest";
import { toHex, utf8 } from "../../src/bytes.js";
import { decode, encode } from "../../src/codec/core.js";
import { keyStreamId } from "../../src/codec/derive.js";
import * as S from "../../src/codec/schema.js";
import type { CbqsInstructionV1, KeyRotationBatchV1, ProviderEndpointV1 } from "../../src/codec/types.js";
import { keccak256 } from "../../src/crypto/hash.js";
import { PLATFORM_ADDRESS, REGISTRY_ADDRESS, ZERO_ADDRESS, schedulesKey } from "../../src/engine/layout.js";
import { maxEndpoints } from "../../src/gas/builder.js";
import { pauseRecordKey } from "../../src/engine/pause.js";
import { parseStateKey, systemStateKey } from "../../state/kv/keys.js";
import { decodeStateValueAs } from "../../state/kv/value.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";
import { readFixture } from "../../src/harness/documents.js";
import { CbqsNode } from "../../src/chain-node/chain-node.js";
import { cbqs, genesisConfig, GOV, gov, ix, OTHER, OWNER, PROVIDER, pubKey, RICH, seed, standardConfig, STANDARD_ONE_UNIT_RATE, TestChain } from "./harness.js";

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

/** RegisterProvider with these endpoints (the harness's keys and open admission otherwise). */
function registerWith(endpoints: ProviderEndpointV1[]): CbqsInstructionV1 {
  const i = ix.registerProvider();
  if (i.type !== "RegisterProvider") throw new Error("unreachable");
  return { ...i, args: { ...i.args, endpoints } };
}

/** The sum of every account balance (the burn address included). */
const totalBalance = (t: TestChain): bigint => t.chain.accounts().reduce((sum, a) => sum + a.balance, 0n);

/** The bytes an actor stores in ActorStorage (its slots' values): CIP-4 §12.1's "actor storage". */
function actorStorageBytes(t: TestChain, actor: Uint8Array): bigint {
  let bytes = 0n;
  for (const [key, value] of t.store.entries()) {
    const parsed = parseStateKey(key);
    if (parsed.prefix === "ActorStorage" && parsed.layout === "addressSlot" && toHex(parsed.address) === toHex(actor)) {
      bytes += BigInt(decodeStateValueAs(value, "StorageSlot").bytes.length);
    }
  }
  return bytes;
}

// CIP-4 §12.1/§12.5 deployed defaults and §12.4 quotas: what a node applying §12 rent would use.
const RENT_GRACE_THRESHOLD_BYTES = 10_240n;
const RENT_EPOCH_BLOCKS = 86_400n;
const RENT_RATE_ATTO_PER_BYTE_EPOCH = 2_739_726_027_397_260n;
const ATTO_PER_UNIT = 10n ** 9n; // amounts here are nano-CBY (D-0004 "Amounts: one unit …")
const BASE_STORAGE_QUOTA_BYTES = 1_048_576n;
const BONDED_STORAGE_QUOTA_BYTES = 8n * 1_048_576n;
/** §12.1 rent_per_rent_epoch for `bytes`, in our unit (floored). */
const rentPerEpoch = (bytes: bigint): bigint =>
  ((bytes > RENT_GRACE_THRESHOLD_BYTES ? bytes - RENT_GRACE_THRESHOLD_BYTES : 0n) * RENT_RATE_ATTO_PER_BYTE_EPOCH) / ATTO_PER_UNIT;

describe("spec-gap decisions", () => {
  it("CIP-39 §4.2/§9.3 the key stream copies the main retention and max_message_bytes, and a maximum key-batch header (221 + 32·n = 2,097,373 bytes at n = 65,536) exceeds any max_message_bytes", () => {
    const { t, id } = encryptedStream();
    const main = t.chain.stream(id)!;
    const key = t.chain.stream(keyStreamId(id))!;
    // Equal retention and an equal message bound, by construction (D-0019, D-0020).
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

  it("CIP-39 §9.3 'within the batch bound' is the §18 Maximum 65,536 at decode; the live cbqs.max_key_envelopes_per_batch does not bind on chain", () => {
    const { t, id } = encryptedStream();
    t.ok(gov({ type: "SetParam", name: "cbqs.max_key_envelopes_per_batch", value: 1n }));
    expect(t.chain.params().get("cbqs.max_key_envelopes_per_batch")).toBe(1n);
    const o = t.ok(cbqs(OWNER, activate(t, { envelope_count: 65_536, first_sequence: 0n, last_sequence: 65_536n })));
    // §18.1: ActivateKeyGeneration's 4 reads are the pause record, the singleton and the pair —
    // no governance scalar, so the live row cannot be consulted within the reservation.
    expect(o.reads).toBe(4);
    expect(t.chain.stream(id)!.encryption_generation).toBe(1n);
  });

  it("CIP-39 §9.3 ActivateKeyGeneration takes exactly current + 1: current + 2 and current are rejected, nothing changes", () => {
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

  it("CIP-39 §4.5/§6 amounts are in one unit (nano-CBY, 10^9 per CBY): the floor-rate creation charge burns exactly 8,000 × 604,800 = 4,838,400,000 (≈ 4.84 CBY)", () => {
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

  it("CIP-39 Denial of service / CIP-4 §12.5 the pause record is ActorStorage 0x03 ‖ governance ‖ hashed slot, not SystemState 0x0A under 0x09", () => {
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

  it("CIP-39 §4.5 'the 0x03 record' is ActorStorage 0x03 ‖ 0x…17 ‖ slot(\"base-rate-schedules\"), 162 bytes", () => {
    const t = new TestChain();
    expect(toHex(schedulesKey())).toBe(
      "0x03" + "0000000000000000000000000000000000000017" + toHex(utf8("base-rate-schedules")).slice(2) + "00".repeat(13) + "13",
    );
    expect(decodeStateValueAs(t.store.read(schedulesKey())!, "StorageSlot").bytes).toHaveLength(162);
  });

  it("CIP-39 §4.1/§9.2 an encrypted stream without a rotation key is accepted; the chain never reads the rotation key", () => {
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

  it("CIP-4 §3/§7 tx_index and tx_receipts are rebuildable indexes outside state_db: no state key or value holds a tx hash, and the location is (height, index)", () => {
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
});

describe("CIP-4 §12 state rent and §12.4 storage quotas: not applied to the Stream Registry's system actors", () => {
  it("CIP-4 §12 state rent is not charged: after three rent epochs custody 0x17, 0x18 and the provider hold exactly the §6.1 settlement amounts, where §12.1 rent on 0x17's actual size or §12.4 rent on the 1 MiB quota would each have changed them", () => {
    const t = new TestChain(genesisConfig({ "cbqs.max_provider_endpoints": 8n }));
    const supply = totalBalance(t);
    t.ok(cbqs(PROVIDER, registerWith(maxEndpoints(8, 2_048)))); // a ~16 KiB provider record under 0x17
    const escrow = 1_000_000n * R;
    t.ok(cbqs(OWNER, ix.createStream({ initial_escrow: escrow })), 2n);
    const id = t.streamId();
    // The actors a §12 rent would bill: 0x17 holds more than §12.1's 10,240-byte grace threshold,
    // 0x18 holds no storage at all (only its balance).
    const registryBytes = actorStorageBytes(t, REGISTRY_ADDRESS);
    expect(registryBytes).toBe(17_302n); // > RENT_GRACE_THRESHOLD_BYTES
    expect(actorStorageBytes(t, PLATFORM_ADDRESS)).toBe(0n);

    // Heights 86,400, 172,800 and 259,200 each start a rent epoch; then the stream is settled.
    const H = 3n * RENT_EPOCH_BLOCKS + 2n;
    t.block([], H - 1n);
    t.ok(cbqs(OTHER, ix.settle(id)), H);
    const paid = (H - 2n) * R;
    const providerShare = (paid * 9_000n) / 10_000n;
    const chosen = { custody: escrow - paid, platform: paid - providerShare };
    const observed = { custody: t.balance(REGISTRY_ADDRESS), platform: t.balance(PLATFORM_ADDRESS) };
    expect(observed).toEqual(chosen);
    expect(t.chain.stream(id)!.escrow_balance).toBe(chosen.custody); // §5 custody = live escrow, exactly
    expect(t.balance(PROVIDER) - RICH).toBe(providerShare);
    expect(totalBalance(t)).toBe(supply); // nothing debited to anywhere
    // No RentConfig and no rent_debt: the only SystemState keys are the 25 live scalars.
    expect(t.store.read(systemStateKey("system:cip4:rent_config"))).toBeUndefined();
    expect(t.store.read(systemStateKey("system:cip4:rent_debt"))).toBeUndefined();
    expect([...t.store.entries()].filter(([k]) => parseStateKey(k).prefix === "SystemState")).toHaveLength(25);

    // What the two readings of CIP-4 §12 would have left (a debit capped at the balance, the rest
    // owed): both differ from the balances above, so a node applying either diverges here.
    const after = (balance: bigint, rent: bigint) => (balance > rent ? balance - rent : 0n);
    const actualSizeRent = 3n * rentPerEpoch(registryBytes); // §12.1: 0x17 only, 0x18 is below the threshold
    const quotaRent = 3n * rentPerEpoch(BASE_STORAGE_QUOTA_BYTES); // §12.4: every actor, on its full quota
    expect(rentPerEpoch(0n)).toBe(0n);
    expect(actualSizeRent).toBe(3n * 19_347_945_205n); // (17,302 − 10,240) bytes ≈ 19.35 CBY per epoch
    expect(quotaRent).toBe(3n * 2_844_756_164_383n); // ≈ 2,845 CBY per epoch for an actor that stores nothing
    expect({ custody: after(chosen.custody, actualSizeRent), platform: chosen.platform }).not.toEqual(chosen);
    expect({ custody: after(chosen.custody, quotaRent), platform: after(chosen.platform, quotaRent) }).not.toEqual(chosen);
  });

  it("CIP-4 §12.4 no storage quota binds the Stream Registry: its ActorStorage passes the 1 MiB base quota and the 8 MiB bonded ceiling, RegisterProvider and CreateStream are still accepted, and no account locks a storage bond", () => {
    // 520 providers with 8 × 2,048-byte endpoints each: ~16 KiB of registry storage apiece.
    const providers = Array.from({ length: 520 }, (_, i) => {
      const a = new Uint8Array(20);
      a[0] = 0xb0;
      a[18] = i >> 8;
      a[19] = i & 0xff;
      return a;
    });
    const accounts: Array<[Uint8Array, bigint]> = [[OWNER, RICH], [PROVIDER, RICH], ...providers.map((p): [Uint8Array, bigint] => [p, 1_000_000n])];
    const t = new TestChain(genesisConfig({ "cbqs.max_provider_endpoints": 8n }, accounts));
    const supply = totalBalance(t);
    const big = registerWith(maxEndpoints(8, 2_048));
    const sizes: bigint[] = []; // 0x17's storage after each block of 40 registrations
    for (let i = 0; i < providers.length; i += 40) {
      const outcomes = t.block(providers.slice(i, i + 40).map((p) => cbqs(p, big))).outcomes;
      expect(outcomes.map((o) => o.status)).toEqual(outcomes.map(() => "ok"));
      sizes.push(actorStorageBytes(t, REGISTRY_ADDRESS));
    }
    expect(sizes[0]).toBeLessThan(BASE_STORAGE_QUOTA_BYTES);
    expect(sizes.filter((b) => b > BASE_STORAGE_QUOTA_BYTES && b <= BONDED_STORAGE_QUOTA_BYTES).length).toBeGreaterThan(0);
    expect(sizes.at(-1)).toBeGreaterThan(BONDED_STORAGE_QUOTA_BYTES);
    expect(t.chain.providers()).toHaveLength(520);
    // Past both ceilings, new registry records are still admitted.
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    t.ok(cbqs(OWNER, ix.createStream({ initial_escrow: 1000n * R })));
    expect(t.chain.stream(t.streamId())!.status).toBe("Active");
    // No bond: every provider still holds its whole genesis balance, and nothing left the supply.
    for (const p of providers) expect(t.balance(p)).toBe(1_000_000n);
    expect(totalBalance(t)).toBe(supply);
  });
});
