// `cbqs-emulator/state` (docs/guides/use-the-library.md): the CIP-4 state model — 54-byte keys, values, the QMDB
// commitment behind `state_root`, state proofs and their verifiers, block roots and inclusion
// proofs, events, dumps.
export {
  STATE_KEY_LENGTH,
  ADDRESS_LENGTH,
  SLOT_LENGTH,
  StatePrefix,
  StateKeyError,
  checkStateKey,
  parseStateKey,
  encodeSlot,
  decodeSlot,
  accountKey,
  actorKey,
  actorStorageKey,
  systemStateKey,
  type StateKey,
  type StatePrefixName,
  type ParsedStateKey,
  type DecodedSlot,
} from "../../state/kv/keys.js";
export { encodeStateValue, decodeStateValue, decodeStateValueAs, StateValueError, ValueTag, type StateValue, type StateValueKind } from "../../state/kv/value.js";
export { encodeEvent, decodeEventAt, EncodingError, type Event } from "../../state/kv/event.js";
export type { StateStore, BlockBatch, CommitResult } from "../../state/kv/interface.js";
export { createStateCommitment, QmdbStateCommitment } from "../../state/qmdb/index.js";
export { MemoryStateStore, StateStoreError } from "../../state/store/store.js";
export {
  PROOF_VERSION,
  MAX_MULTI_PROOF_KEYS,
  proveKey,
  proveKeys,
  verifyStateProof,
  verifyStateProofDetailed,
  ProofFormatError,
  type StateProof,
  type ExclusionProof,
  type MultiStateProof,
  type VerifyResult,
  type DetailedVerifyResult,
} from "../../state/qmdb/proof.js";
export {
  txRoot,
  receiptRoot,
  logsRoot,
  encodeReceipt,
  proveTx,
  proveReceipt,
  verifyInclusionProof,
  parseInclusionProof,
  inclusionProofToJson,
  type Receipt,
  type InclusionProof,
  type InclusionProofJson,
} from "../../state/roots/roots.js";
export { DUMP_FORMAT, DumpError, dumpState, loadDump, diffDumps, type StateDump, type DumpEntry, type DumpDiff } from "../../state/kv/dump.js";
// Types the signatures above name.
export type { CurrentDb } from "../../state/qmdb/current.js";
export type { DumpEntries, DumpOptions, SlotDecoder } from "../../state/kv/dump.js";
export type { Hasher } from "../crypto/hash.js";
export type { IoCounts, StateAccess } from "../../state/kv/interface.js";
export type { KeyChange, StateCommitment } from "../../state/kv/commitment.js";
export type { MultiProofEntry, ProofOp, Reconstruction } from "../../state/qmdb/proof.js";
export { ProofError } from "../../state/qmdb/mmr.js";
export type { QmdbConfig } from "../../state/qmdb/any.js";
export type { QmdbStorage } from "../../state/qmdb/storage.js";
export type { ScalarKind } from "../../state/kv/value.js";
export { JsonError } from "../json/parse.js";
export type { Steps } from "../steps.js";
