// The library's in-process chain (src/api/local-chain.ts): nonces filled in, typed refusals, the
// genesis forms, and proofs that verify against the head. Its blocks are the devnet node's
// (test/node/devnet.test.ts checks those against a replay).
import { describe, expect, it } from "vitest";
import { createChain, GenesisError, replayFixture, TransactionRefused } from "../../src/api/index.js";
import { DEFAULT_GENESIS } from "../../src/harness/genesis.js";
import { fromHex } from "../../src/bytes.js";
import { accountKey, verifyStateProof } from "../../src/api/state.js";

const A = "0x1111111111111111111111111111111111111111";
const B = "0x2222222222222222222222222222222222222222";
const transfer = (amount: string) => ({ from: A, transfer: { to: B, amount } });

describe("createChain (cbqs-emulator)", () => {
  it("buildTransaction takes the next nonce, counting the sender's transactions sent and not mined", () => {
    const chain = createChain();
    expect(chain.send(chain.buildTransaction(transfer("1"))).nonce).toBe(0n);
    expect(chain.send(chain.buildTransaction(transfer("2"))).nonce).toBe(1n);
    const { block } = chain.mine();
    expect(block.receipts.map((r) => r.status)).toEqual(["ok", "ok"]);
    expect(chain.account(fromHex(A, 20)).nonce).toBe(2n);
    expect(chain.account(fromHex(B, 20)).balance).toBe(1_000_000_000_000_000_003n);
    expect(chain.send(chain.buildTransaction(transfer("1"))).nonce).toBe(2n);
  });

  it("a transaction no block may contain is TransactionRefused with the node's code", () => {
    const chain = createChain();
    const wrongNonce = chain.buildTransaction(transfer("1"), { nonce: 5n });
    expect(() => chain.send(wrongNonce)).toThrow(TransactionRefused);
    try {
      chain.send(wrongNonce);
    } catch (err) {
      expect((err as TransactionRefused).code).toBe("invalid_nonce");
      expect((err as Error).name).toBe("TransactionRefused");
    }
    expect(() => chain.send(new Uint8Array([1, 2, 3]))).toThrow(expect.objectContaining({ code: "invalid_transaction" }));
  });

  it("mine({ height }) skips heights; a height not above the head is a RangeError, a number a TypeError", () => {
    const chain = createChain();
    expect(chain.mine({ height: 10n }).block.height).toBe(10n);
    expect(chain.head().height).toBe(10n);
    expect(() => chain.mine({ height: 10n })).toThrow(RangeError);
    expect(() => chain.mine({ height: 12 as unknown as bigint })).toThrow(/height must be a bigint \(12n\)/);
  });

  it("executeBlock is all or nothing: a refused envelope leaves none of its block queued", () => {
    const chain = createChain();
    const good = chain.buildTransaction(transfer("1"));
    const bad = chain.buildTransaction(transfer("1"), { nonce: 9n });
    expect(() => chain.executeBlock([good, bad])).toThrow(TransactionRefused);
    expect(chain.head().height).toBe(0n);
    expect(chain.mine().block.receipts).toEqual([]);
  });

  it("send() gives the transaction hash as bytes, the receipt's tx_hash", () => {
    const chain = createChain();
    const { txHash } = chain.send(chain.buildTransaction(transfer("1")));
    expect(txHash).toBeInstanceOf(Uint8Array);
    expect(chain.mine().block.receipts[0]!.tx_hash).toEqual(txHash);
  });

  it("toFixture(): the chain so far replays clean, and a changed root is found", () => {
    const chain = createChain();
    chain.executeBlock([chain.buildTransaction(transfer("1"))]);
    chain.mine({ height: 5n });
    const fixture = chain.toFixture({ name: "t" });
    expect(fixture.blocks.map((b) => b.height)).toEqual([1n, 5n]);
    expect(replayFixture(fixture).mismatch).toBeNull();
    fixture.blocks[1]!.state_root = new Uint8Array(32);
    expect(replayFixture(fixture).mismatch?.field).toBe("state_root");
  });

  it("toFixture(): the name and description given are the fixture's; without them, the export's own", () => {
    const chain = createChain();
    chain.mine();
    expect(chain.toFixture({ name: "t", description: "one empty block" })).toMatchObject({ name: "t", description: "one empty block" });
    const named = chain.toFixture({ name: "t" });
    const unnamed = chain.toFixture();
    expect(unnamed.name).toBe(`chain-${Buffer.from(chain.chainInstanceId).toString("hex").slice(0, 8)}-to-1`);
    expect(named.description).toBe(unnamed.description);
    expect(unnamed.description).not.toBe("");
  });

  it("the genesis: the default, an object (its canonical serialization), or exact bytes; an invalid one is refused", () => {
    const byDefault = createChain();
    const byObject = createChain({ genesis: DEFAULT_GENESIS });
    expect(byObject.chainInstanceId).toEqual(byDefault.chainInstanceId);
    const other = createChain({ genesis: { ...DEFAULT_GENESIS, chain_id: "8" } });
    expect(other.chainId).toBe(8n);
    expect(other.chainInstanceId).not.toEqual(byDefault.chainInstanceId);
    expect(() => createChain({ genesis: { ...DEFAULT_GENESIS, governance: "0x12" } })).toThrow(GenesisError);
    expect(() => createChain({ genesis: { ...DEFAULT_GENESIS, accounts: { [A]: { balance: "18446744073709551616" } } } })).toThrow(GenesisError);
  });

  it("prove(): the head's state_root, and an absent key is an exclusion proof", () => {
    const chain = createChain();
    chain.executeBlock([chain.buildTransaction(transfer("9"))]);
    const absent = new Uint8Array(54).fill(0xee);
    expect(chain.prove(absent)).toMatchObject({ value: null });
    const present = chain.prove(accountKey(fromHex(B, 20)));
    expect(typeof present.value).toBe("string");
    expect(verifyStateProof(present, chain.head().state_root)).toEqual({ valid: true });
    expect(verifyStateProof(chain.prove(absent), chain.head().state_root)).toEqual({ valid: true });
  });
});
