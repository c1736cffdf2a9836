// What the client returns and takes. Conventions (docs/guides/use-the-library.md "cbqs-emulator/client"): integers
// the node writes as decimal strings (u64, u128) are bigint; bytes are Uint8Array, as in the
// codec's types (src/codec/types.ts), whose CIP-39 records are returned unchanged with the spec's
// snake_case field names; the client's own shapes are camelCase. Inputs take bytes as Uint8Array
// or 0x-prefixed hex, and heights as bigint or a non-negative safe integer.
import type { BaseRateScheduleV1, FinalizedViewV1, ProviderRecordV1, StreamRecordV1 } from "../codec/types.js";
import type { ExclusionProof, MultiStateProof, StateProof } from "../../state/qmdb/proof.js";
import type { InclusionProofJson } from "../../state/roots/roots.js";

export type { BaseRateScheduleV1, ExclusionProof, FinalizedViewV1, InclusionProofJson, MultiStateProof, ProviderRecordV1, StateProof, StreamRecordV1 };

/** Bytes as given to the client: a Uint8Array or "0x"-prefixed hex. */
export type BytesLike = Uint8Array | string;
/** A height as given to the client. */
export type HeightLike = bigint | number;

/** The block an answer was read at: every node answer names it. */
export interface ReadPoint {
  height: bigint;
  blockHash: Uint8Array;
  stateRoot: Uint8Array;
}

export interface Genesis extends ReadPoint {
  chainId: bigint;
  chainInstanceId: Uint8Array;
  timestamp: bigint;
  /** The exact genesis source bytes (CIP-39 §3): chainInstanceId is their fingerprint. */
  source: Uint8Array;
  view: FinalizedViewV1;
  /** The first block the node holds: genesis, or the block of the snapshot it was started from. */
  historyStart: { height: bigint; blockHash: Uint8Array };
}

export interface FinalizedView extends ReadPoint {
  view: FinalizedViewV1;
}

export interface Event {
  emitter: Uint8Array;
  topic: string;
  payload: Uint8Array;
}

export interface Receipt {
  txHash: Uint8Array;
  status: "ok" | "rejected";
  /** A rejection's code and name; null when accepted. */
  error: { code: number; name: string } | null;
  events: Event[];
  cycles: bigint;
  cells: bigint;
}

/** A committed block as the replication feed serves it: header fields, raw envelopes, receipts. */
export interface Block {
  height: bigint;
  timestamp: bigint;
  parentHash: Uint8Array;
  blockHash: Uint8Array;
  stateRoot: Uint8Array;
  txRoot: Uint8Array;
  receiptRoot: Uint8Array;
  logsRoot: Uint8Array;
  effectiveRentHeight: bigint;
  /** SHA-256 of the gas-vector artifact the block was executed under (64 hex digits). */
  gasVectorsSha256: string;
  /** Raw CBOR transaction envelopes, in block order. */
  transactions: Uint8Array[];
  receipts: Receipt[];
}

export interface FeedQuery {
  since?: HeightLike;
  until?: HeightLike;
  /** Items per page: the node clamps it into [1, 100] (default 10). */
  limit?: HeightLike;
  order?: "asc" | "desc";
}

/** One page of GET /replication: its items are checked for form only (feed() verifies them). */
export interface FeedPage extends ReadPoint {
  /** The page's URL, query included. */
  url: string;
  items: Block[];
  /** Cursors (docs/guides/run-a-devnet.md "Replication feed"): block heights or null. */
  prev: bigint | null;
  next: bigint | null;
}

export interface BrokerState extends ReadPoint {
  view: FinalizedViewV1;
  stream: StreamRecordV1;
  /** A main stream's linked key stream, when it has one. */
  keyStream?: StreamRecordV1;
  /** A key stream's main stream. */
  mainStream?: StreamRecordV1;
  provider: ProviderRecordV1 | null;
  schedule: { active: BaseRateScheduleV1; scheduleDigest: Uint8Array };
  /** The §18.1 live governance scalars by name. */
  bounds: Record<string, bigint>;
  effectiveRentHeight: bigint;
}

/** A state proof verified against the state root of the block it names. */
export interface VerifiedStateProof extends ReadPoint {
  key: Uint8Array;
  /** The key's current value (a CIP-4 §4.3 state value), or null: proven absent. */
  value: Uint8Array | null;
  /** The proof as served, for a third party to check again (cbqs verify-proof). */
  proof: StateProof | ExclusionProof;
}

export interface VerifiedAccountProof extends VerifiedStateProof {
  /** The account decoded from `value`; null when proven absent. */
  account: { nonce: bigint; balance: bigint } | null;
}

export interface VerifiedStorageProof extends VerifiedStateProof {
  /** The stored bytes (the StorageSlot value's payload); null when proven absent. */
  data: Uint8Array | null;
}

export interface VerifiedMultiProof extends ReadPoint {
  /** One entry per requested key, in the order requested. */
  entries: Array<{ key: Uint8Array; value: Uint8Array }>;
  proof: MultiStateProof;
}

export interface VerifiedTxProof extends ReadPoint {
  txHash: Uint8Array;
  txRoot: Uint8Array;
  txIndex: number;
  /** The raw envelope. */
  transaction: Uint8Array;
  proof: InclusionProofJson;
}

export interface VerifiedReceiptProof extends ReadPoint {
  txHash: Uint8Array;
  receiptRoot: Uint8Array;
  txIndex: number;
  receipt: Receipt;
  proof: InclusionProofJson;
}

export interface Sent {
  txHash: Uint8Array;
  nonce: bigint;
  /** Transactions waiting in the node's pool, this one included. */
  pending: number;
  /** The node's head when it queued the transaction. */
  height: bigint;
}

export interface Mined extends ReadPoint {
  timestamp: bigint;
  effectiveRentHeight: bigint;
  /** The block's receipts, each rejection with the node's message (not consensus data). */
  receipts: Array<Receipt & { message?: string }>;
  /** Queued transactions no block may contain, left out with the reason. */
  dropped: Array<{ txHash: Uint8Array; reason: string }>;
}
