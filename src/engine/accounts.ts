// Native balances (CIP-4 Account 0x01: nonce u64, balance u64) and the in-memory ledger a
// handler moves value through. Compute-then-commit (§5): nothing reaches the batch until
// flush(), which the dispatcher calls only after the handler succeeded.
//
// The transaction sender's account is platform state: the dispatcher loads it before the
// handler (nonce check) and writes it once after (nonce increment), both outside the CBQS
// meter, so a handler debiting or refunding its own sender costs no extra state I/O.
import { bytesEqual, toHex } from "../bytes.js";
import type { Address } from "../codec/types.js";
import type { BlockBatch } from "../../state/kv/interface.js";
import { decodeStateValueAs, encodeStateValue } from "../../state/kv/value.js";
import { reject } from "./errors.js";
import { accountKey, REGISTRY_ADDRESS } from "./layout.js";
import { U64_MAX } from "./math.js";

export interface Account {
  nonce: bigint;
  balance: bigint;
}

/** Reads an account; absent means nonce 0, balance 0; a malformed value fails closed. */
export function readAccount(batch: BlockBatch, address: Address): Account {
  const bytes = batch.getView(accountKey(address)); // decoded at once: no copy needed
  if (bytes === undefined) return { nonce: 0n, balance: 0n };
  try {
    const v = decodeStateValueAs(bytes, "Account");
    return { nonce: v.nonce, balance: v.balance };
  } catch {
    return reject("RegistryStateInvalid", `malformed account ${toHex(address)}`);
  }
}

/** Writes an account; an all-zero account is deleted, so absent and zero are one state. */
export function writeAccount(batch: BlockBatch, address: Address, account: Account): void {
  if (account.nonce === 0n && account.balance === 0n) batch.delete(accountKey(address));
  else batch.put(accountKey(address), encodeStateValue({ kind: "Account", ...account }));
}

interface Entry {
  address: Address;
  loaded: bigint;
  balance: bigint;
  nonce: bigint;
}

export class AccountLedger {
  private readonly entries: Entry[] = [];
  private readonly sender: Entry;

  constructor(
    private readonly batch: BlockBatch,
    sender: Address,
    senderAccount: Account,
  ) {
    this.sender = { address: sender, loaded: senderAccount.balance, balance: senderAccount.balance, nonce: senderAccount.nonce };
    this.entries.push(this.sender);
  }

  private entry(address: Address): Entry {
    const found = this.entries.find((e) => bytesEqual(e.address, address));
    if (found) return found;
    const account = readAccount(this.batch, address);
    const created = { address, loaded: account.balance, balance: account.balance, nonce: account.nonce };
    this.entries.push(created);
    return created;
  }

  get senderAddress(): Address {
    return this.sender.address;
  }

  balance(address: Address): bigint {
    return this.entry(address).balance;
  }

  // Zero amounts move nothing and touch no state.

  /**
   * §5: a u128 wire amount is checked into u64; exceeding u64 or the balance is insufficient
   * balance. One comparison does both: every balance is a u64 (decoded as one, credited checked).
   */
  debit(address: Address, amount: bigint, what: string): void {
    if (amount === 0n) return;
    const e = this.entry(address);
    if (amount > e.balance) {
      reject("InsufficientBalance", `${what}: ${toHex(address)} holds ${e.balance}, needs ${amount}`);
    }
    e.balance -= amount;
  }

  /** §5: every escrow debit asserts custody first; an underfunded registry account fails closed. */
  debitCustody(amount: bigint, what: string): void {
    if (amount === 0n) return;
    const e = this.entry(REGISTRY_ADDRESS);
    if (amount > e.balance) reject("RegistryStateInvalid", `${what}: custody holds ${e.balance}, owes ${amount}`);
    e.balance -= amount;
  }

  /** §5: every credit is checked u64 addition; an overflow is state corruption and fails. */
  credit(address: Address, amount: bigint, what: string): void {
    if (amount === 0n) return;
    const e = this.entry(address);
    if (e.balance + amount > U64_MAX) reject("ArithmeticOverflow", `${what}: credit to ${toHex(address)} overflows u64`);
    e.balance += amount;
  }

  /** The sender's account after this transaction's movements (the dispatcher persists it). */
  senderAccount(): Account {
    return { nonce: this.sender.nonce, balance: this.sender.balance };
  }

  /** Writes every changed non-sender account, in first-touch order. */
  flush(): void {
    for (const e of this.entries) {
      if (e === this.sender || e.balance === e.loaded) continue;
      writeAccount(this.batch, e.address, { nonce: e.nonce, balance: e.balance });
      e.loaded = e.balance;
    }
  }
}
