// The in-memory ChainDb (state/chain-db.ts): the QMDB state store of state/store.ts plus the
// ledger and indexes in maps, and, for pinned reads, the reverse diff of each of the last
// `retainBlocks` blocks (every key the block changed → its value before the block). State at a
// retained height h is the head state with the reverse diffs of the blocks above h applied.
import { bytesEqual, toHex } from "../src/bytes.js";
import {
  ChainDbError,
  type BlockQuery,
  type BlockRecord,
  type ChainDb,
  type GenesisRecord,
  type StateReader,
  type TxLocation,
} from "./chain-db.js";
import { ForwardingBatch, ForwardingStore } from "./forwarding.js";
import type { BlockBatch, CommitResult } from "./interface.js";
import { proveKey, proveKeys, type ExclusionProof, type MultiStateProof, type StateProof } from "./proof.js";
import { createStateCommitment, type QmdbStateCommitment } from "./qmdb/index.js";
import { MemoryStateStore } from "./store.js";

export const DEFAULT_RETAIN_BLOCKS = 128;

/** Map key of a state key or hash. */
const id = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");

/** Values of the keys one block changed, before it (undefined = absent). */
type ReverseDiff = Map<string, Uint8Array | undefined>;

interface Staged {
  height: bigint;
  stateRoot: Uint8Array;
  undo: ReverseDiff;
}

/** Records every key a batch writes, so the commit can keep the values it replaces. */
class RecordingBatch extends ForwardingBatch {
  readonly written = new Map<string, Uint8Array>();
  override put(key: Uint8Array, value: Uint8Array): void {
    super.put(key, value);
    this.written.set(id(key), key.slice());
  }
  override delete(key: Uint8Array): void {
    super.delete(key);
    this.written.set(id(key), key.slice());
  }
}

/** The StateStore the engine sees: commits compute the root and stage the block in the db. */
class StagingStore extends ForwardingStore {
  constructor(
    inner: MemoryStateStore,
    private readonly db: MemoryChainDb,
  ) {
    super(inner);
  }

  override beginBlock(height: bigint): BlockBatch {
    this.db.checkWritable();
    return new RecordingBatch(this.inner.beginBlock(height));
  }

  override commitBlock(batch: BlockBatch): CommitResult {
    this.db.checkWritable();
    if (!(batch instanceof RecordingBatch)) throw new ChainDbError("batch was not begun by this ChainDb's state");
    const before = new Map<string, [Uint8Array, Uint8Array | undefined]>();
    for (const [k, key] of batch.written) before.set(k, [key, this.inner.read(key)]);
    const result = this.inner.commitBlock(batch.inner);
    const undo: ReverseDiff = new Map();
    for (const [k, [key, value]] of before) {
      const after = this.inner.read(key);
      const same = value === undefined ? after === undefined : after !== undefined && bytesEqual(value, after);
      if (!same) undo.set(k, value);
    }
    this.db.stage({ height: result.height, stateRoot: result.stateRoot, undo });
    return result;
  }
}

export class MemoryChainDb implements ChainDb {
  readonly state: StagingStore;
  private readonly commitment: QmdbStateCommitment = createStateCommitment();
  private readonly store = new MemoryStateStore(this.commitment);
  private genesisRecord: GenesisRecord | undefined;
  /** Committed blocks, ascending by height; genesis first. */
  private readonly ledger: BlockRecord[] = [];
  private readonly byHash = new Map<string, BlockRecord>();
  private readonly txIndex = new Map<string, TxLocation>();
  /** Reverse diffs of the last `retainBlocks` blocks, oldest first (diffs[i] undoes ledger[ledger.length - diffs.length + i]). */
  private readonly diffs: ReverseDiff[] = [];
  private staged: Staged | undefined;
  private closed = false;

  constructor(readonly retainBlocks: number = DEFAULT_RETAIN_BLOCKS) {
    if (!Number.isSafeInteger(retainBlocks) || retainBlocks < 0) throw new ChainDbError(`retainBlocks must be a non-negative integer (got ${retainBlocks})`);
    this.state = new StagingStore(this.store, this);
  }

  checkWritable(): void {
    this.checkOpen();
    if (this.staged !== undefined) throw new ChainDbError(`block ${this.staged.height} is staged and not committed: reopen the ChainDb`);
  }

  private checkOpen(): void {
    if (this.closed) throw new ChainDbError("the ChainDb is closed");
  }

  stage(staged: Staged): void {
    this.staged = staged;
  }

  genesis(): GenesisRecord | undefined {
    this.checkOpen();
    return this.genesisRecord;
  }

  head(): BlockRecord | undefined {
    this.checkOpen();
    return this.ledger[this.ledger.length - 1];
  }

  blockByHeight(height: bigint): BlockRecord | undefined {
    this.checkOpen();
    const i = this.indexAtOrAbove(height);
    const block = this.ledger[i];
    return block !== undefined && block.height === height ? block : undefined;
  }

  blockByHash(hash: Uint8Array): BlockRecord | undefined {
    this.checkOpen();
    return this.byHash.get(id(hash));
  }

  txLocation(txHash: Uint8Array): TxLocation | undefined {
    this.checkOpen();
    return this.txIndex.get(id(txHash));
  }

  blocks(q: BlockQuery): BlockRecord[] {
    this.checkOpen();
    if (q.limit <= 0 || q.from > q.to) return [];
    const first = this.indexAtOrAbove(q.from);
    const end = this.indexAtOrAbove(q.to + 1n); // exclusive
    if (q.order === "asc") return this.ledger.slice(first, Math.min(end, first + q.limit));
    return this.ledger.slice(Math.max(first, end - q.limit), end).reverse();
  }

  /** Index of the first block with height ≥ `height` (ledger.length if none). */
  private indexAtOrAbove(height: bigint): number {
    let lo = 0;
    let hi = this.ledger.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.ledger[mid]!.height < height) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  stateAt(height: bigint): StateReader | undefined {
    this.checkOpen();
    const i = this.indexAtOrAbove(height);
    if (this.ledger[i]?.height !== height) return undefined;
    const above = this.ledger.length - 1 - i;
    if (above > this.diffs.length) return undefined;
    // Undo, nearest block above h first; a staged block (not yet committed) is undone too.
    const undos = this.diffs.slice(this.diffs.length - above);
    if (this.staged !== undefined) undos.push(this.staged.undo);
    const store = this.store;
    if (undos.length === 0) return { read: (key) => store.read(key) };
    return {
      read: (key) => {
        const k = id(key);
        for (const undo of undos) if (undo.has(k)) return undo.get(k)?.slice();
        return store.read(key);
      },
    };
  }

  proveKey(key: Uint8Array): StateProof | ExclusionProof {
    this.checkWritable();
    return proveKey(this.commitment.db, key);
  }

  proveKeys(keys: readonly Uint8Array[]): MultiStateProof {
    this.checkWritable();
    return proveKeys(this.commitment.db, keys);
  }

  exclusionProofOps(): number {
    this.checkWritable();
    const any = this.commitment.db.any;
    return any.mmr.leaves - any.inactivityFloor;
  }

  commitGenesis(genesis: GenesisRecord): void {
    this.checkOpen();
    if (this.genesisRecord !== undefined) throw new ChainDbError("genesis is already committed");
    const b = genesis.block;
    if (b.height !== 0n || b.transactions.length !== 0) throw new ChainDbError("the genesis block has height 0 and no transactions");
    this.takeStaged(b);
    this.genesisRecord = genesis;
    this.append(b);
  }

  commitBlock(block: BlockRecord): void {
    this.checkOpen();
    const head = this.head();
    if (head === undefined) throw new ChainDbError("commit genesis first");
    if (block.height <= head.height) throw new ChainDbError(`block ${block.height} is not above the head ${head.height}`);
    if (!bytesEqual(block.parent_hash, head.block_hash)) throw new ChainDbError(`block ${block.height}: parent_hash is not the head's block_hash`);
    if (block.receipts.length !== block.transactions.length) throw new ChainDbError(`block ${block.height}: ${block.receipts.length} receipts for ${block.transactions.length} transactions`);
    const undo = this.takeStaged(block);
    this.append(block);
    block.receipts.forEach((r, index) => this.txIndex.set(id(r.tx_hash), { height: block.height, index }));
    this.diffs.push(undo);
    if (this.diffs.length > this.retainBlocks) this.diffs.shift();
  }

  private takeStaged(block: BlockRecord): ReverseDiff {
    const s = this.staged;
    if (s === undefined || s.height !== block.height) throw new ChainDbError(`block ${block.height}: no staged state at that height`);
    if (!bytesEqual(s.stateRoot, block.state_root)) {
      throw new ChainDbError(`block ${block.height}: state_root ${toHex(block.state_root)} is not the staged root ${toHex(s.stateRoot)}`);
    }
    if (this.byHash.has(id(block.block_hash))) throw new ChainDbError(`block ${block.height}: block_hash is already in the ledger`);
    this.staged = undefined;
    return s.undo;
  }

  private append(block: BlockRecord): void {
    this.ledger.push(block);
    this.byHash.set(id(block.block_hash), block);
  }

  close(): void {
    this.closed = true;
  }
}
