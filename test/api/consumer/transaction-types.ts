// buildTransaction's types as a consumer meets them: compiled against the packed declarations by
// test/api/package.test.ts under strict, noUncheckedIndexedAccess and exactOptionalPropertyTypes,
// then run. Each `@ts-expect-error` line is one mistake in an otherwise valid transaction; tsc
// fails the check when the types accept one (TS2578, an unused directive). Every transaction typed
// as valid builds.
import { createChain, type CreateStreamInput, type KeyBatchReceiptInput, type PriceQuoteInput, type TransactionInput } from "cbqs-emulator";

const owner = "0x1111111111111111111111111111111111111111";
const provider = "0x2222222222222222222222222222222222222222";
const governance = "0x00000000000000000000000000000000000000aa";
const registry = "0x0000000000000000000000000000000000000017";
const bytes32 = (byte: string) => "0x" + byte.repeat(32);
const stream = { owner, owner_nonce: 1n };

const create: CreateStreamInput = {
  owner_nonce: 1n,
  initial_escrow: "80000",
  admin_key: { ed25519_seed: bytes32("61") },
  rotation_key: null,
  delivery_class: "Standard",
  encrypted: false,
  provider,
  config: {
    retention_ms: 3_600_000n,
    retained_bytes_limit: "1073741824",
    max_message_bytes: 1024n,
    max_append_bytes_per_sec: 0n,
    max_delivered_bytes_per_sec: 0n,
    max_lanes: 1n,
    idempotency_horizon_ms: 60_000n,
    default_visibility_ms: 30_000n,
    max_visibility_ms: 30_000n,
    default_max_attempts: 10n,
    fast_batch_max_ms: 0n,
    fast_batch_max_records: 0n,
  },
};

const quote: PriceQuoteInput = {
  provider,
  owner,
  stream_id: { owner, owner_nonce: 2n },
  pricing_generation: 0n,
  delivery_class: "Standard",
  retained_bytes: 1_073_741_824n,
  append_bytes_sec: 0n,
  delivered_bytes_sec: 0n,
  rate_per_block: 3n,
  valid_until_block: 100n,
  signer_seed: bytes32("52"),
};

const receipt: KeyBatchReceiptInput = {
  served_at: { height: 2n, block_hash: bytes32("bb") },
  key_stream_id: { key_stream_of: stream },
  main_stream_id: stream,
  provider_epoch: "0",
  encryption_generation: 1n,
  batch_digest: bytes32("b1"),
  envelope_count: 1n,
  envelope_root: bytes32("e1"),
  first_sequence: 0n,
  last_sequence: 1n,
  previous_global_receipt: bytes32("00"),
  final_append_receipt: bytes32("f1"),
  signer_seed: bytes32("51"),
};

const valid: TransactionInput[] = [
  { from: owner, transfer: { to: provider, amount: 1000n } },
  { from: owner, transfer: { to: provider, amount: "1000" } },
  {
    from: provider,
    cbqs: {
      RegisterProvider: {
        signing_key: { ed25519_seed: bytes32("51") },
        endpoints: [{ transport: "WebSocketTls", uri: "wss://cbqs.example/stream" }],
        quote_key: { ed25519: bytes32("52") },
        base_rate_admission: {
          accepts_new: true,
          max_active_streams: 100n,
          max_total_retained_bytes: 107_374_182_400n,
          max_total_append_bytes_per_sec: 104_857_600n,
          max_total_delivered_bytes_per_sec: 104_857_600n,
        },
        metadata_hash: bytes32("0f"),
      },
    },
  },
  { from: provider, cbqs: { UpdateProvider: { metadata_hash: bytes32("0e"), endpoints: null, signing_key: undefined } } },
  { from: provider, cbqs: { SetProviderStatus: { status: "Draining" } } },
  { from: owner, cbqs: { CreateStream: create } },
  { from: owner, cbqs: { CreateStream: { ...create, owner_nonce: 2n, price_quote: quote } } },
  { from: owner, cbqs: { UpdateStream: { stream_id: stream, rotation_key: { Set: { ed25519_seed: bytes32("62") } }, bump_authorization_generation: true } } },
  { from: owner, cbqs: { UpdateStream: { stream_id: stream, rotation_key: "Keep", price_quote: { ...quote, stream_id: stream }, bump_authorization_generation: false } } },
  { from: owner, cbqs: { TopUpStream: { stream_id: bytes32("ab"), amount: 5n } } },
  { from: owner, cbqs: { SettleStreamRent: { stream_id: { key_stream_of: stream } } } },
  { from: owner, cbqs: { CloseStream: { stream_id: { owner, owner_nonce: "1" } } } },
  { from: provider, cbqs: { ActivateKeyGeneration: { receipt, bump_authorization_generation: false } } },
  { from: governance, gov: { SetParam: { name: "cbqs.suspend_grace_blocks", value: 500n } } },
  { from: governance, gov: { SetParams: { "cbqs.suspend_grace_blocks": "500", "cbqs.max_streams_per_owner": 16n } } },
  { from: governance, gov: { Pause: { actor: registry, blocks: 10n } } },
  { from: governance, gov: { ExtendPause: { actor: registry, blocks: 10n } } },
  { from: governance, gov: { Unpause: { actor: registry } } },
  { from: owner, raw: { opcode: 218n, payload: "0x0104" } },
];

// A misspelled kind, instruction, argument or variant.
// @ts-expect-error
export const kindTypo: TransactionInput = { from: owner, transfr: { to: provider, amount: 1000n } };
// @ts-expect-error
export const instructionTypo: TransactionInput = { from: owner, cbqs: { CreateStrem: create } };
// @ts-expect-error
export const fieldTypo: TransactionInput = { from: owner, cbqs: { SettleStreamRent: { stream_idd: stream } } };
// @ts-expect-error
export const enumTypo: TransactionInput = { from: owner, cbqs: { CreateStream: { ...create, delivery_class: "Standart" } } };
// @ts-expect-error
export const govTypo: TransactionInput = { from: governance, gov: { SetParm: { name: "cbqs.suspend_grace_blocks", value: 500n } } };

// A JS number where an integer belongs.
// @ts-expect-error
export const numberAmount: TransactionInput = { from: owner, transfer: { to: provider, amount: 1000 } };
// @ts-expect-error
export const numberEscrow: TransactionInput = { from: owner, cbqs: { CreateStream: { ...create, initial_escrow: 80000 } } };
// @ts-expect-error
export const numberInConfig: TransactionInput = { from: owner, cbqs: { CreateStream: { ...create, config: { ...create.config, max_lanes: 1 } } } };

// A missing field, or not exactly one kind, instruction or key form.
// @ts-expect-error
export const missingAmount: TransactionInput = { from: owner, cbqs: { TopUpStream: { stream_id: stream } } };
// @ts-expect-error
export const missingFrom: TransactionInput = { transfer: { to: provider, amount: 1000n } };
// @ts-expect-error
export const noKind: TransactionInput = { from: owner };
// @ts-expect-error
export const twoKinds: TransactionInput = { from: owner, transfer: { to: provider, amount: 1n }, raw: { opcode: 218n, payload: "0x0104" } };
// @ts-expect-error
export const twoInstructions: TransactionInput = { from: owner, cbqs: { SettleStreamRent: { stream_id: stream }, CloseStream: { stream_id: stream } } };
// @ts-expect-error
export const twoKeyForms: TransactionInput = { from: owner, cbqs: { CreateStream: { ...create, admin_key: { ed25519: bytes32("61"), ed25519_seed: bytes32("61") } } } };

// An expectation (a scenario's, not a transaction's).
// @ts-expect-error
export const withExpect: TransactionInput = { from: owner, transfer: { to: provider, amount: 1n }, expect: { status: "ok" } };

// A signed object signed twice, or not at all; a receipt without the block hash it was served at.
// @ts-expect-error
export const signedTwice: PriceQuoteInput = { ...quote, signature: "0x" + "00".repeat(64) };
const { signer_seed: _seed, ...unsigned } = quote;
// @ts-expect-error
export const notSigned: PriceQuoteInput = unsigned;
// @ts-expect-error
export const noBlockHash: KeyBatchReceiptInput = { ...receipt, served_at: { height: 2n } };

const chain = createChain();
const built = valid.map((tx) => chain.buildTransaction(tx, { nonce: 0n }));
console.log(`built ${built.length} transactions`);
