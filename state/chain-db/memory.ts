// The in-memory ChainDb (state/chain-db/chain-db.ts): the QMDB state store of state/store/store.ts plus the
// ledger and indexes in maps, and, for pinned reads, the reverse diff of each of the last
// `retainBlocks` blocks (every key the block changed → its value before the block). State at a
// retained height h is the head state with the reverse diffs of the blocks above h applied.
import { QmdbChainDb } from "./base.js";
import { ChainDbError, type BlockQuery, type BlockRecord, type ChainDb, type GenesisRecord, type StateReader, type TxLocation } from "./chain-db.js";
import { keyId as id, type ReverseDiff } from "./staging.js";
import { createStateCommitment } from "../qmdb/index.js";

export const DEFAULT_RETAIN_BLOCKS = 128;

export class MemoryChainDb extends QmdbChainDb implements ChainDb {
  private genesisRecord: GenesisRecord | undefined;
  /** Committed blocks, ascending by height; genesis first. */
  private readonly ledger: BlockRecord[] = [];
  private readonly byHash = new Map<string, BlockRecord>();
  private readonly txIndex = new Map<string, TxLocation>();
  /** Reverse diffs of the last `retainBlocks` blocks, oldest first (diffs[i] undoes ledger[ledger.length - diffs.length + i]). */
  private readonly diffs: ReverseDiff[] = [];

  constructor(readonly retainBlocks: number = DEFAULT_RETAIN_BLOCKS) {
    super(createStateCommitment());
    if (!Number.isSafeInteger(retainBlocks) || retainBlocks < 0) throw new ChainDbError(`retainBlocks must be a non-negative integer (got ${retainBlocks})`);
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

  protected hasBlockHash(hash: Uint8Array): boolean {
    return this.byHash.has(id(hash));
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

  /** Never anything to prune: an in-memory store lives with one retainBlocks, and drops each diff as it leaves the window. */
  pruneUndo(): null {
    this.checkWritable();
    return null;
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
    return {
      read: (key) => {
        const k = id(key);
        for (const undo of undos) if (undo.has(k)) return undo.get(k)?.slice();
        return store.read(key);
      },
    };
  }

  commitGenesis(genesis: GenesisRecord): void {
    this.checkGenesis(genesis);
    this.staged = undefined;
    this.genesisRecord = genesis;
    this.append(genesis.block);
  }

  commitBlock(block: BlockRecord): void {
    const { undo } = this.checkNextBlock(block);
    this.staged = undefined;
    this.append(block);
    block.receipts.forEach((r, index) => this.txIndex.set(id(r.tx_hash), { height: block.height, index }));
    this.diffs.push(undo);
    if (this.diffs.length > this.retainBlocks) this.diffs.shift();
  }

  private append(block: BlockRecord): void {
    this.ledger.push(block);
    this.byHash.set(id(block.block_hash), block);
  }

  close(): void {
    this.closed = true;
  }
}
