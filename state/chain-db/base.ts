// What the in-memory and the LMDB ChainDb (state/chain-db/chain-db.ts) share: the QMDB state commitment
// behind the staging store (chain-db/staging.ts), the checks every commit makes before it writes
// anything, and proofs against the head. Each subclass keeps its ledger and indexes its own way.
import { bytesEqual, toHex } from "../../src/bytes.js";
import { ChainDbError, type BlockRecord, type GenesisRecord } from "./chain-db.js";
import { StagingStore, type Staged, type Stager } from "./staging.js";
import { proveKey, proveKeys, type ExclusionProof, type MultiStateProof, type StateProof } from "../qmdb/proof.js";
import type { QmdbStateCommitment } from "../qmdb/index.js";
import { MemoryStateStore } from "../store/store.js";

export abstract class QmdbChainDb implements Stager {
  readonly state: StagingStore;
  protected readonly store: MemoryStateStore;
  protected staged: Staged | undefined;
  protected closed = false;

  constructor(readonly commitment: QmdbStateCommitment) {
    this.store = new MemoryStateStore(commitment);
    this.state = new StagingStore(this.store, this);
  }

  abstract head(): BlockRecord | undefined;
  abstract genesis(): GenesisRecord | undefined;
  /** Whether a committed block has this block_hash. */
  protected abstract hasBlockHash(hash: Uint8Array): boolean;

  /** A store opened for reading only (the read commands) refuses to begin or commit a block. */
  protected get readOnly(): boolean {
    return false;
  }

  checkWritable(): void {
    this.checkCommitted();
    if (this.readOnly) throw new ChainDbError("the store is open read-only: no block can be written");
  }

  /** Open, and nothing staged: the commitment is the head's (what a proof or a snapshot export needs). */
  checkCommitted(): void {
    this.checkOpen();
    if (this.staged !== undefined) throw new ChainDbError(`block ${this.staged.height} is staged and not committed: reopen the ChainDb`);
  }

  protected checkOpen(): void {
    if (this.closed) throw new ChainDbError("the ChainDb is closed");
  }

  /** Blocks staged and not yet committed: 0 or 1 (CIP-4 §9.1's speculative cache holds at most one block here). */
  get stagedBlocks(): number {
    return this.staged === undefined ? 0 : 1;
  }

  stage(staged: Staged): void {
    this.staged = staged;
  }

  proveKey(key: Uint8Array): StateProof | ExclusionProof {
    this.checkCommitted();
    return proveKey(this.commitment.db, key);
  }

  proveKeys(keys: readonly Uint8Array[]): MultiStateProof {
    this.checkCommitted();
    return proveKeys(this.commitment.db, keys);
  }

  exclusionProofOps(): number {
    this.checkCommitted();
    const any = this.commitment.db.any;
    return any.mmr.leaves - any.inactivityFloor;
  }

  /** The checks of commitGenesis before anything is written; returns the staged genesis state. */
  protected checkGenesis(genesis: GenesisRecord): Staged {
    this.checkOpen();
    if (this.genesis() !== undefined) throw new ChainDbError("genesis is already committed");
    const b = genesis.block;
    if (b.height !== 0n || b.transactions.length !== 0) throw new ChainDbError("the genesis block has height 0 and no transactions");
    return this.checkStaged(b);
  }

  /** The checks of commitBlock before anything is written; returns the block's staged state. */
  protected checkNextBlock(block: BlockRecord): Staged {
    this.checkOpen();
    const head = this.head();
    if (head === undefined) throw new ChainDbError("commit genesis first");
    if (block.height <= head.height) throw new ChainDbError(`block ${block.height} is not above the head ${head.height}`);
    if (!bytesEqual(block.parent_hash, head.block_hash)) throw new ChainDbError(`block ${block.height}: parent_hash is not the head's block_hash`);
    if (block.receipts.length !== block.transactions.length) throw new ChainDbError(`block ${block.height}: ${block.receipts.length} receipts for ${block.transactions.length} transactions`);
    return this.checkStaged(block);
  }

  private checkStaged(block: BlockRecord): Staged {
    const s = this.staged;
    if (s === undefined || s.height !== block.height) throw new ChainDbError(`block ${block.height}: no staged state at that height`);
    if (!bytesEqual(s.stateRoot, block.state_root)) {
      throw new ChainDbError(`block ${block.height}: state_root ${toHex(block.state_root)} is not the staged root ${toHex(s.stateRoot)}`);
    }
    if (this.hasBlockHash(block.block_hash)) throw new ChainDbError(`block ${block.height}: block_hash is already in the ledger`);
    return s;
  }
}
