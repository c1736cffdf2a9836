// Builds GasScenarios from readable steps: fixed identities and keys (deterministic seeds), the
// real codec for every payload, and signed quotes/receipts bound to the scenario's chain. Used by
// the gas-vector definitions, the canonical-plan paths and the engine tests' harness alike.
import { utf8 } from "../bytes.js";
import { encode } from "../codec/core.js";
import { chainInstanceId, keyStreamId, signingKeyId, streamId } from "../codec/derive.js";
import * as S from "../codec/schema.js";
import { key_batch_receipt_signing_bytes_v1, price_quote_signing_bytes_v1 } from "../codec/signing.js";
import type {
  Address,
  BaseRateAdmissionV1,
  Bytes32,
  CbqsInstructionV1,
  CbqsSigningContextV1,
  CreateStreamArgsV1,
  KeyBatchReceiptV1,
  PriceQuoteV1,
  ProviderEndpointV1,
  RegisterProviderArgsV1,
  SigningPublicKey,
  StreamConfigV1,
  UpdateStreamArgsV1,
} from "../codec/types.js";
import { keccak256 } from "../crypto/hash.js";
import { ed25519PublicKeyFromSeed, ed25519Sign } from "../crypto/ed25519.js";
import type { GasScenario, ScenarioTx } from "./scenario.js";

/** A readable fixed account: 0xa0, zeros, then `n`. */
export const address = (n: number): Address => {
  const a = new Uint8Array(20);
  a[0] = 0xa0;
  a[19] = n;
  return a;
};
export const GOVERNANCE = address(0xaa);
export const OWNER = address(1);
export const SPONSOR = address(2);
export const PROVIDER = address(3);

const seed = (name: string): Uint8Array => keccak256(utf8(`cbqs-emulator/gas-vectors/seed/${name}`));
/** Ed25519 seeds of the fixed keys: the provider's signing and quote keys, the stream's admin and rotation keys. */
export const SEEDS = { signing: seed("provider-signing"), quote: seed("provider-quote"), admin: seed("stream-admin"), rotation: seed("stream-rotation"), signing2: seed("provider-signing-2"), quote2: seed("provider-quote-2") };
export const pubKey = (seed: Uint8Array): SigningPublicKey => ({ algorithm: "Ed25519", key: ed25519PublicKeyFromSeed(seed) });
export const key = (which: keyof typeof SEEDS): SigningPublicKey => pubKey(SEEDS[which]);

const BALANCE = 10n ** 18n;
export const GENESIS_SOURCE = utf8("cbqs-emulator gas vectors v1 genesis");
export const CHAIN_ID = 7n;
/** A quote's rate (wei per block), above CBQS_MIN_RATE_PER_BLOCK. */
export const QUOTE_RATE = 10_000n;
/** Standard default schedule, one unit of each dimension: 67 + 13,300 + 66,700 (§4.5). */
export const BASE_RATE = 67n + 13_300n + 66_700n;

export const OPEN_ADMISSION: BaseRateAdmissionV1 = {
  accepts_new: true,
  max_active_streams: 100n,
  max_total_retained_bytes: 1n << 60n,
  max_total_append_bytes_per_sec: 1n << 40n,
  max_total_delivered_bytes_per_sec: 1n << 40n,
};

/** One unit of each priced dimension (Standard). */
export function standardConfig(over: Partial<StreamConfigV1> = {}): StreamConfigV1 {
  return {
    retention_ms: 3_600_000n,
    retained_bytes_limit: 1n << 30n,
    max_message_bytes: 65_536,
    max_append_bytes_per_sec: 1n << 20n,
    max_delivered_bytes_per_sec: 1n << 20n,
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

/** `count` endpoints whose URIs are exactly `bytes` long and pass §4.3 admission (distinct hosts). */
export function maxEndpoints(count: number, bytes: number): ProviderEndpointV1[] {
  return Array.from({ length: count }, (_, i) => {
    const head = `https://p${i}.provider.example/`;
    return { transport: "Https" as const, uri: head + "a".repeat(bytes - head.length) };
  });
}

export const ix = {
  registerProvider: (over: Partial<RegisterProviderArgsV1> = {}): CbqsInstructionV1 => ({
    type: "RegisterProvider",
    args: {
      signing_key: key("signing"),
      endpoints: [{ transport: "Https", uri: "https://provider.example" }],
      quote_key: key("quote"),
      base_rate_admission: OPEN_ADMISSION,
      metadata_hash: new Uint8Array(32),
      ...over,
    },
  }),
  updateProvider: (endpoints: ProviderEndpointV1[] | null): CbqsInstructionV1 => ({
    type: "UpdateProvider",
    args: {
      endpoints,
      signing_key: key("signing2"),
      quote_key: key("quote2"),
      base_rate_admission: { ...OPEN_ADMISSION, max_active_streams: 200n },
      metadata_hash: new Uint8Array(32).fill(0x11),
    },
  }),
  setProviderStatus: (status: "Active" | "Draining" | "Deregistered"): CbqsInstructionV1 => ({ type: "SetProviderStatus", args: { status } }),
  createStream: (over: Partial<CreateStreamArgsV1> = {}): CbqsInstructionV1 => ({
    type: "CreateStream",
    args: {
      owner_nonce: 0n,
      initial_escrow: 0n,
      admin_key: key("admin"),
      rotation_key: null,
      delivery_class: "Standard",
      encrypted: false,
      provider: PROVIDER,
      config: standardConfig(),
      price_quote: null,
      ...over,
    },
  }),
  updateStream: (stream_id: Bytes32, over: Partial<UpdateStreamArgsV1> = {}): CbqsInstructionV1 => ({
    type: "UpdateStream",
    args: { stream_id, config: null, admin_key: null, rotation_key: { type: "Keep" }, price_quote: null, bump_authorization_generation: false, ...over },
  }),
  topUp: (stream_id: Bytes32, amount: bigint): CbqsInstructionV1 => ({ type: "TopUpStream", args: { stream_id, amount } }),
  settle: (stream_id: Bytes32): CbqsInstructionV1 => ({ type: "SettleStreamRent", args: { stream_id } }),
  close: (stream_id: Bytes32): CbqsInstructionV1 => ({ type: "CloseStream", args: { stream_id } }),
  activate: (receipt: KeyBatchReceiptV1, bump = false): CbqsInstructionV1 => ({ type: "ActivateKeyGeneration", args: { receipt, bump_authorization_generation: bump } }),
};

/** The §4 signing context that binds a quote or receipt to the chain `chain_instance_id` (chain id CHAIN_ID). */
export const signingContext = (chain_instance_id: Bytes32): CbqsSigningContextV1 => ({ version: 1, chain_id: CHAIN_ID, chain_instance_id });

/** The three priced dimensions of `config` as a PriceQuoteV1 names them (§4.5). */
export const quotedCapacity = (config: StreamConfigV1): Pick<PriceQuoteV1, "retained_bytes" | "append_bytes_sec" | "delivered_bytes_sec"> => ({
  retained_bytes: config.retained_bytes_limit,
  append_bytes_sec: config.max_append_bytes_per_sec,
  delivered_bytes_sec: config.max_delivered_bytes_per_sec,
});

/**
 * A PriceQuoteV1 from PROVIDER to OWNER for `stream_id` on chain `chain_instance_id`: generation 1,
 * the standard config's capacity at QUOTE_RATE, signed by `signer` (default: the provider's quote
 * key). `over` replaces fields before signing; a signature in `over` is kept as given.
 */
export function signedQuote(chain_instance_id: Bytes32, stream_id: Bytes32, over: Partial<PriceQuoteV1> = {}, signer = SEEDS.quote): PriceQuoteV1 {
  const q: PriceQuoteV1 = {
    context: signingContext(chain_instance_id),
    provider: PROVIDER,
    owner: OWNER,
    stream_id,
    pricing_generation: 1n,
    delivery_class: "Standard",
    ...quotedCapacity(standardConfig()),
    rate_per_block: QUOTE_RATE,
    valid_until_block: 1_000n,
    signing_key_id: signingKeyId(key("quote")),
    signature: new Uint8Array(64),
    ...over,
  };
  return { ...q, signature: over.signature ?? ed25519Sign(signer, keccak256(price_quote_signing_bytes_v1(q))) };
}

/**
 * A KeyBatchReceiptV1 for generation 1 of the stream `main_stream_id`, served at `height` of chain
 * `chain_instance_id`, signed by `signer` (default: the provider's signing key). `over` replaces
 * fields before signing; a signature in `over` is kept as given.
 */
export function signedReceipt(
  chain_instance_id: Bytes32,
  height: bigint,
  main_stream_id: Bytes32,
  over: Partial<KeyBatchReceiptV1> = {},
  signer = SEEDS.signing,
): KeyBatchReceiptV1 {
  const r: KeyBatchReceiptV1 = {
    context: signingContext(chain_instance_id),
    served_at: { chain_instance_id, height, block_hash: new Uint8Array(32).fill(9) },
    key_stream_id: keyStreamId(main_stream_id),
    main_stream_id,
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

export class ScenarioBuilder {
  readonly instance = chainInstanceId(GENESIS_SOURCE);
  private readonly setup: GasScenario["setup"] = [];
  private height = 0n;

  constructor(private readonly params: Record<string, bigint> = {}) {}

  /** Appends a setup transaction in its own block at `height` (default: the next height). */
  tx(from: Address, instruction: CbqsInstructionV1, height = this.height + 1n): this {
    this.height = height;
    this.setup.push({ height, txs: [{ from, payload: encode(S.CbqsInstructionV1, instruction) }] });
    return this;
  }

  /** The finished scenario with its target transaction (default: the next height). */
  target(from: Address, instruction: CbqsInstructionV1, height = this.height + 1n): GasScenario {
    const t: ScenarioTx & { height: bigint } = { from, payload: encode(S.CbqsInstructionV1, instruction), height };
    return {
      genesis: {
        source: GENESIS_SOURCE,
        chain_id: CHAIN_ID,
        governance: GOVERNANCE,
        params: Object.entries(this.params),
        accounts: [OWNER, SPONSOR, PROVIDER].map((a): [Address, bigint] => [a, BALANCE]),
      },
      setup: this.setup.map((b) => ({ height: b.height, txs: [...b.txs] })),
      target: t,
    };
  }

  streamId(nonce = 0n): Bytes32 {
    return streamId(CHAIN_ID, this.instance, OWNER, nonce);
  }

  keyStreamId(nonce = 0n): Bytes32 {
    return keyStreamId(this.streamId(nonce));
  }

  /** A PriceQuoteV1 for the owner's stream `nonce`, signed by the provider's quote key. */
  quote(generation = 1n, config = standardConfig(), nonce = 0n): PriceQuoteV1 {
    return signedQuote(this.instance, this.streamId(nonce), { pricing_generation: generation, ...quotedCapacity(config) });
  }

  /** A KeyBatchReceiptV1 for generation 1 of stream 0, served at the last setup height. */
  receipt(): KeyBatchReceiptV1 {
    return signedReceipt(this.instance, this.height, this.streamId());
  }
}
