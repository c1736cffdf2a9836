// Test harness: a Chain over the in-memory store, deterministic keys, and instruction builders
// encoded with the real codec (so every test also exercises canonical decode).
import { utf8 } from "../../src/bytes.js";
import type { GenesisConfig, GovAction, Transaction } from "../../src/chain/types.js";
import { encode } from "../../src/codec/core.js";
import { keyStreamId, signingKeyId, streamId } from "../../src/codec/derive.js";
import * as S from "../../src/codec/schema.js";
import { key_batch_receipt_signing_bytes_v1, price_quote_signing_bytes_v1 } from "../../src/codec/signing.js";
import type {
  Address,
  BaseRateAdmissionV1,
  Bytes32,
  CbqsInstructionV1,
  CreateStreamArgsV1,
  KeyBatchReceiptV1,
  PriceQuoteV1,
  SigningPublicKey,
  StreamConfigV1,
} from "../../src/codec/types.js";
import { keccak256 } from "../../src/crypto/hash.js";
import { ed25519PublicKeyFromSeed, ed25519Sign } from "../../src/crypto/ed25519.js";
import { Chain, type BlockOutcome, type TxOutcome } from "../../src/engine/chain.js";
import { MemoryStateStore } from "../../state/store.js";

export const address = (n: number): Address => {
  const a = new Uint8Array(20);
  a[0] = 0xa0;
  a[19] = n;
  return a;
};
export const GOV = address(0xaa);
export const OWNER = address(1);
export const OTHER = address(2);
export const PROVIDER = address(3);
export const PROVIDER2 = address(4);

export const seed = (n: number): Uint8Array => keccak256(utf8(`seed-${n}`));
export const pubKey = (s: Uint8Array): SigningPublicKey => ({ algorithm: "Ed25519", key: ed25519PublicKeyFromSeed(s) });
export const SIGNING_SEED = seed(1);
export const QUOTE_SEED = seed(2);
export const ADMIN_SEED = seed(3);

export const RICH = 10n ** 18n;

export function genesisConfig(params: Record<string, bigint> = {}, accounts?: Array<[Address, bigint]>): GenesisConfig {
  return {
    chain_id: 7n,
    timestamp: 0n,
    block_time_seconds: 1n,
    governance: GOV,
    params: new Map(Object.entries(params)),
    accounts: (accounts ?? [[OWNER, RICH], [OTHER, RICH], [PROVIDER, RICH], [PROVIDER2, RICH]]).map(([a, balance]) => ({ address: a, balance })),
    cycle_price: 0n,
    cell_price: 0n,
  };
}

export const OPEN_ADMISSION: BaseRateAdmissionV1 = {
  accepts_new: true,
  max_active_streams: 100n,
  max_total_retained_bytes: 1n << 60n,
  max_total_append_bytes_per_sec: 1n << 40n,
  max_total_delivered_bytes_per_sec: 1n << 40n,
};

export function standardConfig(over: Partial<StreamConfigV1> = {}): StreamConfigV1 {
  return {
    retention_ms: 3_600_000n,
    retained_bytes_limit: 1n << 30n, // 1 GiB: one retained unit
    max_message_bytes: 65_536,
    max_append_bytes_per_sec: 1n << 20n, // one throughput unit
    max_delivered_bytes_per_sec: 1n << 20n, // one delivered unit
    max_lanes: 16,
    idempotency_horizon_ms: 60_000n,
    default_visibility_ms: 30_000n,
    max_visibility_ms: 60_000n,
    default_max_attempts: 5,
    fast_batch_max_ms: 0,
    fast_batch_max_records: 0,
    ...over,
  };
}

/** Standard default schedule: 67 + 13,300 + 66,700 for one unit of each dimension. */
export const STANDARD_ONE_UNIT_RATE = 67n + 13_300n + 66_700n;

export const ix = {
  registerProvider: (admission = OPEN_ADMISSION): CbqsInstructionV1 => ({
    type: "RegisterProvider",
    args: {
      signing_key: pubKey(SIGNING_SEED),
      endpoints: [{ transport: "Https", uri: "https://provider.example" }],
      quote_key: pubKey(QUOTE_SEED),
      base_rate_admission: admission,
      metadata_hash: new Uint8Array(32),
    },
  }),
  createStream: (over: Partial<CreateStreamArgsV1> = {}): CbqsInstructionV1 => ({
    type: "CreateStream",
    args: {
      owner_nonce: 0n,
      initial_escrow: 0n,
      admin_key: pubKey(ADMIN_SEED),
      rotation_key: null,
      delivery_class: "Standard",
      encrypted: false,
      provider: PROVIDER,
      config: standardConfig(),
      price_quote: null,
      ...over,
    },
  }),
  topUp: (id: Bytes32, amount: bigint): CbqsInstructionV1 => ({ type: "TopUpStream", args: { stream_id: id, amount } }),
  settle: (id: Bytes32): CbqsInstructionV1 => ({ type: "SettleStreamRent", args: { stream_id: id } }),
  close: (id: Bytes32): CbqsInstructionV1 => ({ type: "CloseStream", args: { stream_id: id } }),
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
    return this.chain.executeBlock({ height, timestamp: height, txs });
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
    return streamId(7n, this.chain.chainInstanceId, owner, nonce);
  }

  keyStreamId(owner: Address = OWNER, nonce = 0n): Bytes32 {
    return keyStreamId(this.streamId(owner, nonce));
  }

  balance(a: Address): bigint {
    return this.chain.account(a).balance;
  }

  context() {
    return { version: 1, chain_id: 7n, chain_instance_id: this.chain.chainInstanceId };
  }

  quote(over: Partial<PriceQuoteV1> = {}, signer = QUOTE_SEED): PriceQuoteV1 {
    const cfg = standardConfig();
    const q: PriceQuoteV1 = {
      context: this.context(),
      provider: PROVIDER,
      owner: OWNER,
      stream_id: this.streamId(),
      pricing_generation: 1n,
      delivery_class: "Standard",
      retained_bytes: cfg.retained_bytes_limit,
      append_bytes_sec: cfg.max_append_bytes_per_sec,
      delivered_bytes_sec: cfg.max_delivered_bytes_per_sec,
      rate_per_block: 10_000n,
      valid_until_block: 1_000n,
      signing_key_id: signingKeyId(pubKey(QUOTE_SEED)),
      signature: new Uint8Array(64),
      ...over,
    };
    return { ...q, signature: over.signature ?? ed25519Sign(signer, keccak256(price_quote_signing_bytes_v1(q))) };
  }

  receipt(over: Partial<KeyBatchReceiptV1> = {}, signer = SIGNING_SEED): KeyBatchReceiptV1 {
    const r: KeyBatchReceiptV1 = {
      context: this.context(),
      served_at: { chain_instance_id: this.chain.chainInstanceId, height: this.height, block_hash: new Uint8Array(32).fill(9) },
      key_stream_id: this.keyStreamId(),
      main_stream_id: this.streamId(),
      provider_epoch: 0n,
      encryption_generation: 1n,
      batch_digest: new Uint8Array(32).fill(1),
      envelope_count: 2,
      envelope_root: new Uint8Array(32).fill(2),
      first_sequence: 10n,
      last_sequence: 12n,
      previous_global_receipt: new Uint8Array(32).fill(3),
      final_append_receipt: new Uint8Array(32).fill(4),
      signature: new Uint8Array(64),
      ...over,
    };
    return { ...r, signature: over.signature ?? ed25519Sign(signer, keccak256(key_batch_receipt_signing_bytes_v1(r))) };
  }
}

/** Every committed key and value, as hex (the root also commits the block, so compare this). */
export function snapshot(t: TestChain): string[] {
  return [...t.store.entries()].map(([k, v]) => `${Buffer.from(k).toString("hex")}=${Buffer.from(v).toString("hex")}`);
}
