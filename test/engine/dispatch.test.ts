import { describe, expect, it } from "vitest";
import { encode } from "../../src/codec/core.js";
import * as S from "../../src/codec/schema.js";
import { toHex } from "../../src/bytes.js";
import type { Transaction } from "../../src/engine/inputs.js";
import { BlockInputError } from "../../src/engine/errors.js";
import { accountKey, REGISTRY_ADDRESS, ZERO_ADDRESS } from "../../src/engine/layout.js";
import { U64_MAX } from "../../src/engine/math.js";
import { encodeStateValue } from "../../state/kv/value.js";
import { cbqs, genesisConfig, gov, ix, OTHER, OWNER, PROVIDER, RICH, rawSnapshot, snapshot, TestChain, transfer, writeOutOfBand } from "./harness.js";

describe("§3/§5 SYS_CBQS dispatch", () => {
  it("§3 an opcode other than 218 is rejected", () => {
    const t = new TestChain();
    const o = t.tx({ from: PROVIDER, body: { kind: "system", opcode: 217, payload: encode(S.CbqsInstructionV1, ix.registerProvider()) } });
    expect(o.error).toMatchObject({ name: "UnknownOpcode", code: 4100 });
  });

  it("§5 a payload version other than 1 is UnsupportedVersion (3937); other decode failures carry the codec's code", () => {
    const t = new TestChain();
    const payload = encode(S.CbqsInstructionV1, ix.registerProvider());
    payload[0] = 2;
    const o = t.tx({ from: PROVIDER, body: { kind: "system", opcode: 218, payload } });
    expect(o.error).toMatchObject({ name: "UnsupportedVersion", code: 3937 });
    const truncated = encode(S.CbqsInstructionV1, ix.registerProvider()).slice(0, 10);
    const o2 = t.tx({ from: PROVIDER, body: { kind: "system", opcode: 218, payload: truncated } });
    expect(o2.error).toMatchObject({ name: "InvalidEncoding", code: 4000 });
  });

  it("§5 compute-then-commit: a rejected instruction changes no registry state, balance or event (its sender's nonce advances: D-0013), and later txs in the block still run", () => {
    const t = new TestChain();
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    const before = snapshot(t);
    const block = t.block([cbqs(OWNER, ix.createStream({ initial_escrow: 1n << 62n }))]);
    expect(block.outcomes[0]!.status).toBe("rejected");
    expect(block.outcomes[0]!.events).toEqual([]);
    expect(snapshot(t)).toEqual(before);
    const mixed = t.block([cbqs(OWNER, ix.createStream({ initial_escrow: 1n << 62n })), cbqs(OWNER, ix.createStream())]);
    expect(mixed.outcomes.map((o) => o.status)).toEqual(["rejected", "ok"]);
    expect(t.chain.account(OWNER).nonce).toBe(3n);
  });

  it("heights strictly increase; a gap is free", () => {
    const t = new TestChain();
    t.block([], 1000n);
    expect(() => t.block([], 1000n)).toThrow(BlockInputError);
  });
});

describe("§9.3 structural receipt invariants are decode errors", () => {
  it("§9.3 last_sequence ≠ first_sequence + envelope_count rejects at decode (InvalidEncoding), before any state read", () => {
    const t = new TestChain();
    const payload = encode(S.CbqsInstructionV1, { type: "ActivateKeyGeneration", args: { receipt: t.receipt(), bump_authorization_generation: false } });
    const hex = Buffer.from(payload).toString("hex");
    const seq = "000000000000000a" + "000000000000000c"; // first_sequence 10, last_sequence 12
    const at = hex.indexOf(seq);
    expect(at).toBeGreaterThan(0);
    const patched = Buffer.from(hex.slice(0, at) + "000000000000000a" + "000000000000000d" + hex.slice(at + seq.length), "hex");
    const o = t.tx({ from: OWNER, body: { kind: "system", opcode: 218, payload: new Uint8Array(patched) } });
    expect(o.error).toMatchObject({ name: "InvalidEncoding", code: 4000 });
    expect(o.reads).toBe(0);
  });
});

// Each dispatch-level refusal asserted with its reason (the name alone lets a check move or
// vanish while another refuses the same transaction); the overflow cases need state no valid
// chain produces and write it out of band.
describe("§3/§5 dispatch refusals name what failed", () => {
  const refusal = (t: TestChain, tx: Transaction) => {
    const before = snapshot(t);
    const e = t.tx(tx).error;
    expect(snapshot(t)).toEqual(before);
    return `${e?.name}: ${e?.message}`;
  };

  it("keyless senders, governance from another account, another opcode, and the breaker", () => {
    const t = new TestChain();
    // Not includable (D-0013 "Included transactions: nonce and fee"): no receipt, no effect.
    expect(refusal(t, transfer(REGISTRY_ADDRESS, OWNER, 1n))).toBe(`NotIncludable: ${toHex(REGISTRY_ADDRESS)} is a keyless system account and cannot send transactions`);
    expect(refusal(t, gov({ type: "Pause", actor: REGISTRY_ADDRESS, blocks: 5n }, OWNER))).toBe("Unauthorized: governance actions are valid only from the governance account");
    expect(refusal(t, { from: PROVIDER, body: { kind: "system", opcode: 217, payload: encode(S.CbqsInstructionV1, ix.registerProvider()) } })).toBe(
      "UnknownOpcode: opcode 217 is not SYS_CBQS (218)",
    );
    t.ok(gov({ type: "Pause", actor: REGISTRY_ADDRESS, blocks: 5n }));
    expect(refusal(t, cbqs(PROVIDER, ix.registerProvider()))).toBe("RegistryPaused: the emergency-pause breaker covers the Stream Registry (0x17)");
  });

  it("a block height not above the previous one is refused with both heights", () => {
    const t = new TestChain();
    t.block([], 7n);
    expect(() => t.block([], 7n)).toThrow("block height 7 is not above the previous height 7");
    expect(() => t.block([], 6n)).toThrow("block height 6 is not above the previous height 7");
    t.block([], 8n);
  });

  it("the sender's nonce step is checked: a sender at nonce u64::MAX (state corruption) is not includable", () => {
    const t = new TestChain();
    writeOutOfBand(t, accountKey(OWNER), encodeStateValue({ kind: "Account", nonce: U64_MAX, balance: 10n }));
    const before = rawSnapshot(t);
    expect(refusal(t, transfer(OWNER, OTHER, 1n))).toBe(`NotIncludable: ${toHex(OWNER)} has nonce u64::MAX: no nonce is left to use`);
    expect(rawSnapshot(t)).toEqual(before);
    writeOutOfBand(t, accountKey(OWNER), encodeStateValue({ kind: "Account", nonce: U64_MAX - 1n, balance: 10n }));
    t.ok(transfer(OWNER, OTHER, 1n));
    expect(t.chain.account(OWNER).nonce).toBe(U64_MAX);
  });

  it("the fee: a sender who cannot pay it, and a burn credit overflowing u64 (state corruption), are refused by name", () => {
    const priced = (accounts: Array<[Uint8Array, bigint]>) => new TestChain({ ...genesisConfig({}, accounts), cycle_price: 1n, cell_price: 1n });
    // Below the fee at the reservation: not includable. Above it but below the accepted fee (cells
    // priced too): rejected, paying the rejected charge.
    const poor = priced([[PROVIDER, 10n]]);
    expect(refusal(poor, cbqs(PROVIDER, ix.registerProvider()))).toMatch(/^NotIncludable: 0x[0-9a-f]{40} holds 10, less than the fee at the reservation 570 of RegisterProvider$/);
    const short = priced([[PROVIDER, 600n]]);
    const rejected = short.tx(cbqs(PROVIDER, ix.registerProvider()));
    expect(`${rejected.error?.name}: ${rejected.error?.message}`).toMatch(/^InsufficientBalance: transaction fee: 0x[0-9a-f]{40} holds 600, needs \d+$/);
    expect(short.chain.account(PROVIDER)).toEqual({ nonce: 1n, balance: 600n - 570n });
    const burn = priced([[PROVIDER, RICH]]);
    writeOutOfBand(burn, accountKey(ZERO_ADDRESS), encodeStateValue({ kind: "Account", nonce: 0n, balance: U64_MAX }));
    expect(refusal(burn, cbqs(PROVIDER, ix.registerProvider()))).toMatch(/^NotIncludable: the fee of the rejected transaction cannot be settled: transaction fee burn: credit to /);
  });
});
