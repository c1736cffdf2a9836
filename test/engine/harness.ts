// Test harness: a Chain over the in-memory store, and the fixed identities, keys and instruction
// builders of src/gas/builder.ts encoded with the real codec (so every test also exercises
// canonical decode).
import { utf8 } from "../../src/bytes.js";
import type { GenesisConfig, GovAction, Transaction } from "../../src/engine/inputs.js";
import { encode } from "../../src/codec/core.js";
import { keyStreamId, streamId } from "../../src/codec/derive.js";
import * as S from "../../src/codec/schema.js";
import type { Address, Bytes32, CbqsInstructionV1, KeyBatchReceiptV1, PriceQuoteV1 } from "../../src/codec/types.js";
import { keccak256 } from "../../src/crypto/hash.js";
import { Chain, type BlockOutcome, type TxOutcome } from "../../src/engine/chain.js";
import {
  address,
  CHAIN_ID,
  GOVERNANCE,
  ix as gasIx,
  OPEN_ADMISSION,
  OWNER,
  PROVIDER,
  SEEDS,
  signedQuote,
  signedReceipt,
  signingContext,
  SPONSOR,
} from "../../src/gas/builder.js";
import { StatePrefix } from "../../state/kv/keys.js";
import { MemoryStateStore } from "../../state/store/store.js";
import { decodeStateValueAs } from "../../state/kv/value.js";

export { OPEN_ADMISSION, OWNER, PROVIDER, pubKey, standardConfig } from "../../src/gas/builder.js";
export { BASE_RATE as STANDARD_ONE_UNIT_RATE } from "../../src/gas/builder.js";
export const GOV = GOVERNANCE;
export const OTHER = SPONSOR;
export const PROVIDER2 = address(4);

/** Further keys for tests that need one the fixed identities do not hold. */
export const seed = (n: number): Uint8Array => keccak256(utf8(`seed-${n}`));
export const SIGNING_SEED = SEEDS.signing;
export const QUOTE_SEED = SEEDS.quote;

export const RICH = 10n ** 18n;

export function genesisConfig(params: Record<string, bigint> = {}, accounts?: Array<[Address, bigint]>): GenesisConfig {
  return {
    chain_id: CHAIN_ID,
    timestamp: 0n,
    block_time_seconds: 1n,
    governance: GOV,
    params: new Map(Object.entries(params)),
    accounts: (accounts ?? [[OWNER, RICH], [OTHER, RICH], [PROVIDER, RICH], [PROVIDER2, RICH]]).map(([a, balance]) => ({ address: a, balance })),
    cycle_price: 0n,
    cell_price: 0n,
  };
}

export const ix = {
  ...gasIx,
  registerProvider: (admission = OPEN_ADMISSION): CbqsInstructionV1 => gasIx.registerProvider({ base_rate_admission: admission }),
};

export const cbqs = (from: Address, instruction: CbqsInstructionV1): Transaction => ({
  from,
  body: { kind: "system", opcode: 218, payload: encode(S.CbqsInstructionV1, instruction) },
});
export const gov = (action: GovAction, from: Address = GOV): Transaction => ({ from, body: { kind: "gov", action } });
export const transfer = (from: Address, to: Address, amount: bigint): Transaction => ({ from, body: { kind: "transfer", to, amount } });

export class TestChain {
  readonly chain: Chain;
  readonly store: MemoryStateStore;
  height = 0n;

  constructor(config: GenesisConfig = genesisConfig(), source = utf8("test-genesis")) {
    this.store = new MemoryStateStore();
    this.chain = Chain.genesis(config, source, this.store);
  }

  /** Executes one block at `height` (default: the next height). */
  block(txs: Transaction[], height = this.height + 1n): BlockOutcome {
    this.height = height;
    const outcome = this.chain.executeBlock({ height, timestamp: height, txs });
    // Every rejection names its reason in words (docs/reference/errors.md), never an empty message.
    for (const o of outcome.outcomes) {
      if (o.status !== "ok" && !o.error?.message) throw new Error(`${o.error?.name} rejection without a reason`);
    }
    return outcome;
  }

  /** One transaction in its own block; returns its outcome. */
  tx(t: Transaction, height = this.height + 1n): TxOutcome {
    return this.block([t], height).outcomes[0]!;
  }

  /** Like tx() but throws with the error when rejected. */
  ok(t: Transaction, height = this.height + 1n): TxOutcome {
    const o = this.tx(t, height);
    if (o.status !== "ok") throw new Error(`expected ok, got ${o.error?.name}: ${o.error?.message}`);
    return o;
  }

  streamId(owner: Address = OWNER, nonce = 0n): Bytes32 {
    return streamId(CHAIN_ID, this.chain.chainInstanceId, owner, nonce);
  }

  keyStreamId(owner: Address = OWNER, nonce = 0n): Bytes32 {
    return keyStreamId(this.streamId(owner, nonce));
  }

  balance(a: Address): bigint {
    return this.chain.account(a).balance;
  }

  context() {
    return signingContext(this.chain.chainInstanceId);
  }

  quote(over: Partial<PriceQuoteV1> = {}, signer = QUOTE_SEED): PriceQuoteV1 {
    return signedQuote(this.chain.chainInstanceId, this.streamId(), over, signer);
  }

  receipt(over: Partial<KeyBatchReceiptV1> = {}, signer = SIGNING_SEED): KeyBatchReceiptV1 {
    return signedReceipt(this.chain.chainInstanceId, this.height, this.streamId(), over, signer);
  }
}

/**
 * Every committed key and value, as hex (the root also commits the block, so compare this) —
 * except that an account shows only its balance (absent when 0): §5's "registry, balance, and
 * linked-stream state". The nonce is the platform's, and an included rejected transaction
 * advances it (D-0013 "Included transactions: nonce and fee"); rawSnapshot keeps it,
 * and test/engine/meter-conservation.test.ts asserts exactly what a rejection changes.
 */
export function snapshot(t: TestChain): string[] {
  return [...t.store.entries()].flatMap(([k, v]) => {
    const key = Buffer.from(k).toString("hex");
    if (k[0] !== StatePrefix.Account) return [`${key}=${Buffer.from(v).toString("hex")}`];
    const balance = decodeStateValueAs(v, "Account").balance;
    return balance === 0n ? [] : [`${key}=balance:${balance}`];
  });
}

/** Every committed key and value, as hex, nonces included. */
export function rawSnapshot(t: TestChain): string[] {
  return [...t.store.entries()].map(([k, v]) => `${Buffer.from(k).toString("hex")}=${Buffer.from(v).toString("hex")}`);
}

/**
 * Writes `key → value` (or deletes it) in a block of its own, outside any transaction: the
 * state corruption a valid genesis and valid transactions never produce, for the checks that
 * guard against it.
 */
export function writeOutOfBand(t: TestChain, key: Uint8Array, value: Uint8Array | null): void {
  t.height += 1n;
  const batch = t.store.beginBlock(t.height);
  if (value === null) batch.delete(key);
  else batch.put(key, value);
  t.store.commitBlock(batch);
}
