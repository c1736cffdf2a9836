// src/engine/accounts.ts, math.ts and pause.ts as plain functions over one block batch: every
// boundary of the checked arithmetic and of the ledger, and what each touches in state.
import { describe, expect, it } from "vitest";
import { toHex } from "../../src/bytes.js";
import { AccountLedger, readAccount, writeAccount } from "../../src/engine/accounts.js";
import { CbqsError } from "../../src/engine/errors.js";
import { REGISTRY_ADDRESS } from "../../src/engine/layout.js";
import { addU128, addU64, ceilDiv, mulU128, subU128, subU64, U128_MAX, U64_MAX } from "../../src/engine/math.js";
import { decodePauseRecord, encodePauseRecord, pauseRecordKey } from "../../src/engine/pause.js";
import { accountKey } from "../../state/kv/keys.js";
import { MemoryStateStore } from "../../state/store/store.js";
import { encodeStateValue } from "../../state/kv/value.js";

const addr = (b: number): Uint8Array => new Uint8Array(20).fill(b);
const A = addr(0xa1);
const B = addr(0xb2);
const C = addr(0xc3);

function outcome(f: () => unknown): string {
  try {
    f();
    return "ok";
  } catch (err) {
    if (err instanceof CbqsError) return `${err.errorName}: ${err.message}`;
    throw err;
  }
}

/** A batch over committed accounts A (nonce 1, 100), B (0, 50) and the registry (0, 30). */
function batchWithAccounts() {
  const store = MemoryStateStore.fromEntries(
    [
      [accountKey(A), encodeStateValue({ kind: "Account", nonce: 1n, balance: 100n })],
      [accountKey(B), encodeStateValue({ kind: "Account", nonce: 0n, balance: 50n })],
      [accountKey(REGISTRY_ADDRESS), encodeStateValue({ kind: "Account", nonce: 0n, balance: 30n })],
    ],
    1n,
  );
  return store.beginBlock(2n);
}

describe("§5 native balances (src/engine/accounts.ts)", () => {
  it("an absent account reads as nonce 0, balance 0; a malformed one fails closed", () => {
    const batch = batchWithAccounts();
    expect(readAccount(batch, C)).toEqual({ nonce: 0n, balance: 0n });
    expect(readAccount(batch, A)).toEqual({ nonce: 1n, balance: 100n });
    batch.put(accountKey(C), Uint8Array.of(0x01, 0x00));
    expect(outcome(() => readAccount(batch, C))).toBe(`RegistryStateInvalid: malformed account ${toHex(C)}`);
  });

  it("an all-zero account is deleted, anything else is written", () => {
    const batch = batchWithAccounts();
    writeAccount(batch, A, { nonce: 0n, balance: 0n });
    expect(batch.get(accountKey(A))).toBeUndefined();
    writeAccount(batch, B, { nonce: 1n, balance: 0n });
    writeAccount(batch, C, { nonce: 0n, balance: 1n });
    expect([readAccount(batch, B), readAccount(batch, C)]).toEqual([{ nonce: 1n, balance: 0n }, { nonce: 0n, balance: 1n }]);
  });

  it("debits: the whole balance may go, one more is InsufficientBalance; custody the same, as RegistryStateInvalid", () => {
    const batch = batchWithAccounts();
    const ledger = new AccountLedger(batch, A, readAccount(batch, A));
    expect(outcome(() => ledger.debit(B, 51n, "fee"))).toBe(`InsufficientBalance: fee: ${toHex(B)} holds 50, needs 51`);
    ledger.debit(B, 50n, "fee");
    expect(ledger.balance(B)).toBe(0n);
    expect(outcome(() => ledger.debit(B, U64_MAX + 1n, "escrow"))).toMatch(/^InsufficientBalance: escrow: /);
    expect(outcome(() => ledger.debitCustody(31n, "refund"))).toBe("RegistryStateInvalid: refund: custody holds 30, owes 31");
    ledger.debitCustody(30n, "refund");
    expect(ledger.balance(REGISTRY_ADDRESS)).toBe(0n);
  });

  it("zero amounts move nothing and read nothing", () => {
    const batch = batchWithAccounts();
    const ledger = new AccountLedger(batch, A, readAccount(batch, A));
    const reads = batch.counts.reads;
    ledger.debit(B, 0n, "x");
    ledger.credit(C, 0n, "x");
    ledger.debitCustody(0n, "x");
    expect(batch.counts.reads).toBe(reads);
    ledger.flush();
    expect(batch.counts.writes).toBe(0);
  });

  it("flush writes each changed non-sender account once, in first-touch order; the sender is left to the dispatcher", () => {
    const batch = batchWithAccounts();
    const ledger = new AccountLedger(batch, A, readAccount(batch, A));
    ledger.credit(C, 5n, "c");
    ledger.debit(A, 10n, "a");
    ledger.credit(B, 7n, "b");
    ledger.debit(B, 7n, "b"); // back to its loaded balance: not written
    const written: string[] = [];
    const put = batch.put.bind(batch);
    batch.put = (key, value) => {
      written.push(toHex(key));
      put(key, value);
    };
    ledger.flush();
    expect(written).toEqual([toHex(accountKey(C))]);
    expect(ledger.senderAccount()).toEqual({ nonce: 1n, balance: 90n });
    expect(readAccount(batch, A)).toEqual({ nonce: 1n, balance: 100n });
    expect(readAccount(batch, C)).toEqual({ nonce: 0n, balance: 5n });
    ledger.flush(); // nothing changed since
    expect(written).toHaveLength(1);
    expect(ledger.senderAddress).toEqual(A);
  });
});

describe("§4.5/§5/§6 checked arithmetic (src/engine/math.ts)", () => {
  it("each operation accepts its type's maximum and zero, and refuses one past either end", () => {
    expect(addU64(U64_MAX - 1n, 1n, "x")).toBe(U64_MAX);
    expect(outcome(() => addU64(U64_MAX, 1n, "sum"))).toBe("ArithmeticOverflow: sum overflows");
    expect(subU64(1n, 1n, "x")).toBe(0n);
    expect(outcome(() => subU64(0n, 1n, "diff"))).toBe("ArithmeticOverflow: diff overflows");
    expect(addU128(U128_MAX - 1n, 1n, "x")).toBe(U128_MAX);
    expect(outcome(() => addU128(U128_MAX, 1n, "x"))).toMatch(/^ArithmeticOverflow/);
    expect(subU128(5n, 5n, "x")).toBe(0n);
    expect(outcome(() => subU128(4n, 5n, "x"))).toMatch(/^ArithmeticOverflow/);
    expect(mulU128(1n << 64n, U64_MAX, "x")).toBe((1n << 64n) * U64_MAX);
    expect(outcome(() => mulU128(1n << 64n, 1n << 64n, "x"))).toMatch(/^ArithmeticOverflow/);
    expect([U64_MAX, U128_MAX]).toEqual([2n ** 64n - 1n, 2n ** 128n - 1n]);
  });

  it("ceilDiv rounds up exactly when there is a remainder", () => {
    expect([ceilDiv(0n, 7n), ceilDiv(1n, 7n), ceilDiv(7n, 7n), ceilDiv(8n, 7n), ceilDiv(14n, 7n)]).toEqual([0n, 1n, 1n, 2n, 2n]);
  });
});

describe("CIP-12 pause record encoding (src/engine/pause.ts)", () => {
  it("round-trips both forms, byte for byte", () => {
    const idle = { completed_pause_blocks: 0x0102n, active: null };
    expect(toHex(encodePauseRecord(idle))).toBe("0x000000000000010200");
    const running = { completed_pause_blocks: 3n, active: { paused_at_block: 0x10n, expires_at_block: 0x0120n } };
    const bytes = encodePauseRecord(running);
    expect(toHex(bytes)).toBe("0x" + "0000000000000003" + "01" + "0000000000000010" + "0000000000000120");
    expect(decodePauseRecord(bytes)).toEqual(running);
    expect(decodePauseRecord(encodePauseRecord(idle))).toEqual(idle);
  });

  it("anything malformed fails closed: lengths, flag byte, an interval that does not end after it starts", () => {
    const running = encodePauseRecord({ completed_pause_blocks: 3n, active: { paused_at_block: 5n, expires_at_block: 6n } });
    const malformed = [
      running.subarray(0, 24),
      Uint8Array.of(...running, 0),
      Uint8Array.of(...running.subarray(0, 8), 0, ...running.subarray(9)), // 25 bytes, flag 0
      Uint8Array.of(...running.subarray(0, 8), 2), // 9 bytes, flag 2
      Uint8Array.of(...running.subarray(0, 8), 1), // 9 bytes, flag 1
      encodePauseRecord({ completed_pause_blocks: 3n, active: { paused_at_block: 6n, expires_at_block: 6n } }),
      new Uint8Array(0),
    ];
    for (const bytes of malformed) {
      expect(outcome(() => decodePauseRecord(bytes)), toHex(bytes)).toBe("RegistryStateInvalid: malformed pause-accounting record");
    }
  });

  it("the record key depends on governance and actor, and no caller's array can corrupt the cached one", () => {
    const k1 = pauseRecordKey(A, REGISTRY_ADDRESS);
    const again = pauseRecordKey(A, REGISTRY_ADDRESS); // served from the cache
    expect(again).toEqual(k1);
    k1.fill(0);
    again.fill(0);
    expect(pauseRecordKey(A, REGISTRY_ADDRESS)).toEqual(pauseRecordKey(addr(0xa1), REGISTRY_ADDRESS.slice()));
    expect(pauseRecordKey(A, REGISTRY_ADDRESS).some((b) => b !== 0)).toBe(true);
    // The caller's governance and actor arrays, changed after the call, do not change what is cached.
    const fresh = (g: Uint8Array, a: Uint8Array) => {
      pauseRecordKey(C, C); // evict
      return pauseRecordKey(g, a);
    };
    const gov = addr(0x01);
    const keyOf01 = pauseRecordKey(gov, REGISTRY_ADDRESS);
    gov.fill(0x02);
    expect(pauseRecordKey(addr(0x02), REGISTRY_ADDRESS)).toEqual(fresh(addr(0x02), REGISTRY_ADDRESS));
    expect(pauseRecordKey(addr(0x02), REGISTRY_ADDRESS)).not.toEqual(keyOf01);
    const actor = addr(0x03);
    const keyOf03 = pauseRecordKey(A, actor);
    actor.fill(0x04);
    expect(pauseRecordKey(A, addr(0x04))).not.toEqual(keyOf03);
    expect(pauseRecordKey(A, addr(0x04))).toEqual(fresh(A, addr(0x04)));
    const keys = [pauseRecordKey(B, REGISTRY_ADDRESS), pauseRecordKey(A, C), pauseRecordKey(A, REGISTRY_ADDRESS)].map(toHex);
    expect(new Set(keys).size).toBe(3);
    expect(keys[2]).toBe(toHex(fresh(A, REGISTRY_ADDRESS)));
  });
});
