// The package's main entry point, `cbqs-emulator` (docs/guides/use-the-library.md): the engine and the chain — a
// genesis, blocks executed with their receipts, events and roots, and the conformance tools run
// in process (replay of a fixture, the t8n transition). Everything exported here is public API
// (the semver policy in the README); nothing else of src/ is.
export {
  createChain,
  LocalChain,
  TransactionRefused,
  InvalidTransaction,
  KeylessSender,
  NonceGap,
  TransactionTooLarge,
  PoolFull,
  InvalidHeight,
  InvalidBlockCount,
  TimestampBackwards,
  type ChainOptions,
  type BlockRecord,
  type MinedBlock,
} from "./local-chain.js";
export { buildTransaction, type TransactionContext } from "../scenario/transaction.js";
export type {
  TransactionInput,
  CbqsInstructionInput,
  CbqsInstructions,
  GovInput,
  TransferInput,
  RawInput,
  RegisterProviderInput,
  UpdateProviderInput,
  SetProviderStatusInput,
  CreateStreamInput,
  UpdateStreamInput,
  TopUpStreamInput,
  SettleStreamRentInput,
  CloseStreamInput,
  ActivateKeyGenerationInput,
  ProviderEndpointInput,
  BaseRateAdmissionInput,
  StreamConfigInput,
  SigningKeyInput,
  SigningContextInput,
  PriceQuoteInput,
  KeyBatchReceiptInput,
  RotationKeyUpdateInput,
  StreamIdInput,
  StreamReference,
  UintInput,
  HexInput,
  OneOf,
} from "../scenario/transaction-input.js";
export { DEFAULT_GENESIS, DEFAULT_GENESIS_SOURCE, genesisFromSource } from "../harness/genesis.js";
export type { GenesisConfig, Transaction, BlockInput } from "../engine/inputs.js";
export type { Account } from "../engine/accounts.js";
export { Chain, SYS_CBQS, type BlockOutcome, type TxOutcome, type TxError } from "../engine/chain.js";
export { ERRORS, CbqsError, GenesisError, BlockInputError, type ErrorName } from "../engine/errors.js";
export { GAS_VECTORS_SHA256 } from "../gas/pinned.js";
export { REGISTRY_ADDRESS, PLATFORM_ADDRESS, streamKey, providerKey, singletonKey } from "../engine/layout.js";
export { ScenarioError } from "../scenario/json.js";
export { InputError } from "../json/read.js";
export { encodeEnvelope, decodeEnvelope, txHash, EnvelopeError, type TxEnvelope } from "../chain/envelope.js";
export { blockHash, headerHash, genesisHash, type BlockHeader } from "../chain/block.js";
export { receiptJson, loadReceiptJson, committedReceipt, type TxReceipt, type ReceiptJson, type EventJson, type LoadedReceipt } from "../chain/receipts.js";
export { readFixture } from "../harness/documents.js";
export { FIXTURE_FORMAT, loadFixture, type Fixture, type FixtureBlock } from "../harness/fixture.js";
export { replayFixture, type ReplayOutcome, type ReplayOptions } from "./replay.js";
export type { Mismatch } from "../harness/replay.js";
export { transition, parseEnv, parseTxs, T8N_RESULT_FORMAT, type T8nEnv, type T8nRun } from "../harness/t8n.js";
// Types the signatures above name.
export type { Address, Bytes32, StreamRecordV1, ProviderRecordV1 } from "../codec/types.js";
export type { BlockResults } from "../chain/receipts.js";
export { CborError } from "../chain/cbor.js";
export type { Event } from "../../state/kv/event.js";
export type { StateProof, ExclusionProof } from "../../state/qmdb/proof.js";
export type { ExecutedBlock, ReplayProgress } from "../harness/replay.js";
export { ALL_FAST_PATHS, SPEC_ONLY, enginePaths, type EnginePaths, type FastPathChoice } from "../engine/fast-paths.js";
export { JsonError, type Json, type JsonObject } from "../json/parse.js";
export type { MemoryStateStore } from "../../state/store/store.js";
export type { StateStore } from "../../state/kv/interface.js";
export type { ParamOverrides, TxBody } from "../engine/inputs.js";
export type { PauseRecord } from "../engine/pause.js";
export type { SignatureVerifier } from "../engine/meter.js";
export type { ReceiptRecord } from "../../state/chain-db/chain-db.js";
