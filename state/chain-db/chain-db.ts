// The storage contract of a CBQS node (docs/reference/storage-contract.md): everything `cbqs node`
// and `cbqs follow` keep, behind one small interface so the in-memory implementation
// (chain-db/memory.ts) and a persistent one run the same conformance suite.
//
// CIP-4 §3: the ledger (blocks, with their raw transactions and receipts), the canonical state
// (a StateStore whose root is every header's state_root) and the auxiliary indexes (block hash →
// block, tx_hash → location, §7.1) — written by ONE commit per block (§6.2), so a reader never
// sees a block whose state, record or indexes are only partly there.
//
// Commit protocol (one block):
//   1. the engine executes the block against `state`; `state.commitBlock(batch)` computes the
//      new root and STAGES the batch (nothing is visible to readers or durable yet);
//   2. `commitBlock(record)` — same height, same state_root — makes the staged state, the block
//      record and its indexes visible (and, for a persistent store, durable) at once.
// A staged batch that is never committed (a block that failed verification) leaves the ChainDb
// refusing further writes: reopen it (a persistent store never wrote the staged batch).
//
// Every method is synchronous: a caller that reads a header and then state without yielding
// to the event loop reads one consistent block (CIP-39 §3 atomic broker-state response).
import type { StateStore } from "../kv/interface.js";
import type { ExclusionProof, MultiStateProof, StateProof } from "../qmdb/proof.js";
import type { Event } from "../kv/event.js";

/** One transaction's receipt as committed with its block (the fields receipt_root covers, plus names). */
export interface ReceiptRecord {
  tx_hash: Uint8Array;
  status: "ok" | "rejected";
  /** Code and name of a rejection (the message is not kept: it is not consensus data). */
  error: { code: number; name: string } | null;
  events: Event[];
  cycles: bigint;
  cells: bigint;
}

/** One committed block: its header fields, raw transaction envelopes and receipts. */
export interface BlockRecord {
  height: bigint;
  timestamp: bigint;
  block_hash: Uint8Array;
  /** Hash of the previous committed block (zero for genesis; skipped heights have no block). */
  parent_hash: Uint8Array;
  state_root: Uint8Array;
  tx_root: Uint8Array;
  receipt_root: Uint8Array;
  logs_root: Uint8Array;
  effective_rent_height: bigint;
  transactions: Uint8Array[];
  receipts: ReceiptRecord[];
}

/** The chain's identity: the exact genesis source bytes (CIP-39 §3) and the genesis block (height 0). */
export interface GenesisRecord {
  source: Uint8Array;
  chain_instance_id: Uint8Array;
  /** Height 0: the genesis header, no transactions. */
  block: BlockRecord;
}

export interface TxLocation {
  height: bigint;
  index: number;
}

/** Committed blocks with from ≤ height ≤ to, in `order`, at most `limit` of them: none when to < from (to may be -1n) or limit ≤ 0. */
export interface BlockQuery {
  from: bigint;
  to: bigint;
  order: "asc" | "desc";
  limit: number;
}

/** Read-only state at one block. Valid until the next commit (read it without yielding). */
export interface StateReader {
  read(key: Uint8Array): Uint8Array | undefined;
}

export interface ChainDb {
  /** How many blocks below the head keep their state readable (pinned reads); the head always is. */
  readonly retainBlocks: number;

  genesis(): GenesisRecord | undefined;
  /** The last committed block (the genesis block right after genesis); undefined before genesis. */
  head(): BlockRecord | undefined;
  blockByHeight(height: bigint): BlockRecord | undefined;
  blockByHash(hash: Uint8Array): BlockRecord | undefined;
  /** Where a transaction was included; a hash included twice resolves to its latest inclusion. */
  txLocation(txHash: Uint8Array): TxLocation | undefined;
  /** Range scan for the replication feed, both bounds inclusive; an empty range (from > to, limit ≤ 0) is []. */
  blocks(query: BlockQuery): BlockRecord[];

  /** The canonical state the engine executes against; `commitBlock(batch)` stages (see above). */
  readonly state: StateStore;
  /**
   * State after the committed block at `height`: the head, or one of the `retainBlocks` blocks
   * below it. Undefined when no block has that height or it is no longer retained.
   */
  stateAt(height: bigint): StateReader | undefined;

  /** CIP-4 Appendix C proof of one key against the head's state_root (exclusion proof when absent). */
  proveKey(key: Uint8Array): StateProof | ExclusionProof;
  /** CIP-4 §8.2 batch proof (≤ 256 distinct keys, each with a current value) against the head. */
  proveKeys(keys: readonly Uint8Array[]): MultiStateProof;
  /** Operations an exclusion proof at the head lists now (it grows with the live state). */
  exclusionProofOps(): number;

  /**
   * Removes, in one commit, the reverse diffs (undo rows) of blocks below the retention window:
   * those a store kept with a larger `retainBlocks` than it is opened with now. Afterwards the
   * blocks with undo rows are exactly the retained ones (at most the top `retainBlocks`). Null
   * when there was nothing to remove.
   */
  pruneUndo(): PrunedUndo | null;

  /** Commits the staged genesis state (height 0) with the genesis record. */
  commitGenesis(genesis: GenesisRecord): void;
  /** Commits the staged state of `block.height` with its record and indexes, atomically. */
  commitBlock(block: BlockRecord): void;
  /** Releases the store; every later call throws. */
  close(): void;
}

/** Undo rows removed by `pruneUndo`: those of `blocks` blocks, heights from..to. */
export interface PrunedUndo {
  from: bigint;
  to: bigint;
  blocks: number;
}

/** A call the contract forbids (wrong order, mismatched root, a closed db…). */
export class ChainDbError extends Error {
  override name = "ChainDbError";
}
