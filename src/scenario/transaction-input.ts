// The transaction buildTransaction takes, as TypeScript types: a scenario's transaction
// (docs/reference/formats/scenario.md §1, §2) as a program writes it, so a misspelled kind, instruction or
// field, a missing one, or a JS number where an integer belongs does not compile. Integers are a
// bigint or a string of decimal digits (a number would lose precision above 2^53, so the types
// refuse it); bytes are "0x" + hex; an optional field (the codec's Option) may be absent,
// undefined or null, all meaning none. The runtime reads the same shapes from untyped JSON and
// refuses anything else with an error naming its JSON path (src/scenario/parse.ts, the codec's
// JSON mapping), and it stays the authority: these types cannot say "32 bytes" or "u64".
// test/api/transaction-input.test.ts checks each arguments type has exactly its codec struct's
// fields.
import type { DeliveryClass, ProviderEndpointTransportV1, ProviderStatus } from "../codec/types.js";

/** An unsigned integer: a bigint (`1000n`) or its decimal digits (`"1000"`). */
export type UintInput = bigint | string;
/** Bytes: "0x" + hex of the field's exact length (an `Address` 20 bytes, a `Bytes32` 32). */
export type HexInput = string;
/** Exactly one of `T`'s keys, with its value: `{ a: A } | { b: B }`, and `{ a, b }` refused. */
export type OneOf<T> = { [K in keyof T]: { [P in K]: T[P] } & { [P in Exclude<keyof T, K>]?: never } }[keyof T];

/** A `SigningPublicKey`: the key, or an RFC 8032 seed whose public key it is. */
export type SigningKeyInput = OneOf<{ ed25519: HexInput; ed25519_seed: HexInput }>;

/**
 * A stream id (`stream_id`, `key_stream_id`, `main_stream_id`): 32 bytes of hex, or a reference —
 * the main stream an owner created with `owner_nonce` (CIP-39 §4.1), or the key stream of one.
 */
export type StreamIdInput = HexInput | StreamReference;
export type StreamReference = { owner: HexInput; owner_nonce: UintInput } | { key_stream_of: StreamReference };

export interface ProviderEndpointInput {
  transport: ProviderEndpointTransportV1;
  uri: string;
}

export interface BaseRateAdmissionInput {
  accepts_new: boolean;
  max_active_streams: UintInput;
  max_total_retained_bytes: UintInput;
  max_total_append_bytes_per_sec: UintInput;
  max_total_delivered_bytes_per_sec: UintInput;
}

export interface StreamConfigInput {
  retention_ms: UintInput;
  retained_bytes_limit: UintInput;
  max_message_bytes: UintInput;
  max_append_bytes_per_sec: UintInput;
  max_delivered_bytes_per_sec: UintInput;
  max_lanes: UintInput;
  idempotency_horizon_ms: UintInput;
  default_visibility_ms: UintInput;
  max_visibility_ms: UintInput;
  default_max_attempts: UintInput;
  fast_batch_max_ms: UintInput;
  fast_batch_max_records: UintInput;
}

/** `CbqsSigningContextV1`; a signed object without one gets the chain's own. */
export interface SigningContextInput {
  version: "1" | 1n;
  chain_id: UintInput;
  chain_instance_id: HexInput;
}

/**
 * `PriceQuoteV1`, signed by buildTransaction with `signer_seed` (an RFC 8032 seed: it signs the
 * CIP-39 §14 signing digest, and `signing_key_id` may be left out: derived from the seed), or
 * carrying its `signing_key_id` and `signature` — not both.
 */
export type PriceQuoteInput = {
  context?: SigningContextInput | null | undefined;
  provider: HexInput;
  owner: HexInput;
  stream_id: StreamIdInput;
  pricing_generation: UintInput;
  delivery_class: DeliveryClass;
  retained_bytes: UintInput;
  append_bytes_sec: UintInput;
  delivered_bytes_sec: UintInput;
  rate_per_block: UintInput;
  valid_until_block: UintInput;
  signing_key_id?: HexInput | null | undefined;
} & ({ signer_seed: HexInput; signature?: null | undefined } | { signer_seed?: never; signing_key_id: HexInput; signature: HexInput });

/**
 * `KeyBatchReceiptV1`, signed with `signer_seed` or carrying its `signature`, as a quote.
 * `served_at.block_hash` must be given (buildTransaction has no chain to look it up in);
 * `served_at.chain_instance_id` may be left out (the chain's own).
 */
export type KeyBatchReceiptInput = {
  context?: SigningContextInput | null | undefined;
  served_at: { height: UintInput; block_hash: HexInput; chain_instance_id?: HexInput | null | undefined };
  key_stream_id: StreamIdInput;
  main_stream_id: StreamIdInput;
  provider_epoch: "0" | 0n;
  encryption_generation: UintInput;
  batch_digest: HexInput;
  envelope_count: UintInput;
  envelope_root: HexInput;
  first_sequence: UintInput;
  last_sequence: UintInput;
  previous_global_receipt: HexInput;
  final_append_receipt: HexInput;
} & ({ signer_seed: HexInput; signature?: null | undefined } | { signer_seed?: never; signature: HexInput });

/** `RotationKeyUpdateV1`: keep the rotation key, clear it, or set a new one. */
export type RotationKeyUpdateInput = "Keep" | "Clear" | { Set: SigningKeyInput };

export interface RegisterProviderInput {
  signing_key: SigningKeyInput;
  endpoints: readonly ProviderEndpointInput[];
  quote_key: SigningKeyInput;
  base_rate_admission: BaseRateAdmissionInput;
  metadata_hash: HexInput;
}

export interface UpdateProviderInput {
  endpoints?: readonly ProviderEndpointInput[] | null | undefined;
  signing_key?: SigningKeyInput | null | undefined;
  quote_key?: SigningKeyInput | null | undefined;
  base_rate_admission?: BaseRateAdmissionInput | null | undefined;
  metadata_hash?: HexInput | null | undefined;
}

export interface SetProviderStatusInput {
  status: ProviderStatus;
}

export interface CreateStreamInput {
  owner_nonce: UintInput;
  initial_escrow: UintInput;
  admin_key: SigningKeyInput;
  rotation_key?: SigningKeyInput | null | undefined;
  delivery_class: DeliveryClass;
  encrypted: boolean;
  provider: HexInput;
  config: StreamConfigInput;
  price_quote?: PriceQuoteInput | null | undefined;
}

export interface UpdateStreamInput {
  stream_id: StreamIdInput;
  config?: StreamConfigInput | null | undefined;
  admin_key?: SigningKeyInput | null | undefined;
  rotation_key: RotationKeyUpdateInput;
  price_quote?: PriceQuoteInput | null | undefined;
  bump_authorization_generation: boolean;
}

export interface TopUpStreamInput {
  stream_id: StreamIdInput;
  amount: UintInput;
}

export interface SettleStreamRentInput {
  stream_id: StreamIdInput;
}

export interface CloseStreamInput {
  stream_id: StreamIdInput;
}

export interface ActivateKeyGenerationInput {
  receipt: KeyBatchReceiptInput;
  bump_authorization_generation: boolean;
}

/** The nine CIP-39 §5 instructions by name, each with its arguments. */
export interface CbqsInstructions {
  RegisterProvider: RegisterProviderInput;
  UpdateProvider: UpdateProviderInput;
  SetProviderStatus: SetProviderStatusInput;
  CreateStream: CreateStreamInput;
  UpdateStream: UpdateStreamInput;
  TopUpStream: TopUpStreamInput;
  SettleStreamRent: SettleStreamRentInput;
  CloseStream: CloseStreamInput;
  ActivateKeyGeneration: ActivateKeyGenerationInput;
}

/** One instruction: `{ CreateStream: { … } }`. */
export type CbqsInstructionInput = OneOf<CbqsInstructions>;

/** A governance action (valid only from the genesis `governance` account). */
export type GovInput = OneOf<{
  SetParam: { name: string; value: UintInput };
  /** One atomic proposal: parameter name → value, in the order written. */
  SetParams: Readonly<Record<string, UintInput>>;
  Pause: { actor: HexInput; blocks: UintInput };
  ExtendPause: { actor: HexInput; blocks: UintInput };
  Unpause: { actor: HexInput };
}>;

/** A native transfer of `amount` to `to`. */
export interface TransferInput {
  to: HexInput;
  amount: UintInput;
}

/** A system transaction's exact payload bytes (at most 1,048,576), for malformed-input tests. */
export interface RawInput {
  opcode: UintInput;
  payload: HexInput;
}

/** A transaction: its sender and exactly one kind. */
export type TransactionInput = { from: HexInput } & OneOf<{ cbqs: CbqsInstructionInput; gov: GovInput; transfer: TransferInput; raw: RawInput }>;
