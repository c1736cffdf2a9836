import { describe, expect, it } from "vitest";
import { encode } from "../../src/codec/core.js";
import * as S from "../../src/codec/schema.js";
import { BlockInputError } from "../../src/engine/errors.js";
import { cbqs, ix, OWNER, PROVIDER, snapshot, TestChain } from "./harness.js";

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

  it("§5 compute-then-commit: a rejected instruction changes no state, balance, nonce or event, and later txs in the block still run", () => {
    const t = new TestChain();
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    const before = snapshot(t);
    const block = t.block([cbqs(OWNER, ix.createStream({ initial_escrow: 1n << 62n }))]);
    expect(block.outcomes[0]!.status).toBe("rejected");
    expect(block.outcomes[0]!.events).toEqual([]);
    expect(snapshot(t)).toEqual(before);
    const mixed = t.block([cbqs(OWNER, ix.createStream({ initial_escrow: 1n << 62n })), cbqs(OWNER, ix.createStream())]);
    expect(mixed.outcomes.map((o) => o.status)).toEqual(["rejected", "ok"]);
    expect(t.chain.account(OWNER).nonce).toBe(1n);
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
