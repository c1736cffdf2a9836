// The persistent ChainDb (state/chain-db/chain-db.ts) on one LMDB environment (docs/spec/state.md "Persistent
// store"). Tables besides the QMDB's own (state/lmdb/qmdb-storage.ts):
//
//   meta      "format" → "cbqs-lmdb/v1"; "genesis" → genesis record (source, chain_instance_id, block 0)
//   blocks    u64be(height) → u64be(QMDB log size after the block) ‖ block record (header fields,
//             raw transactions, receipts with their events)   — the ledger, headers by height
//   hashes    block_hash → u64be(height)                        — blocks by hash (CIP-4 §7.1)
//   txs       tx_hash → u64be(height) ‖ varint(index)           — tx_index (§7.1); its receipt
//             is receipts[index] of that block (tx_receipts)
//   undo      state key ‖ u64be(height) → value before that block (0 = absent, 1 ‖ bytes)
//   undokeys  u64be(height) → the keys that block changed (54 bytes each); present exactly for
//             the retained blocks, so pinned reads never guess
//
// ONE LMDB write transaction per block (CIP-4 §6.2 allows one commit per database plus
// recovery; one transaction is simpler and strictly stronger): the block's QMDB operations, new
// MMR nodes, index changes and pruning, its record, its hash and transaction indexes, its
// reverse diff and the removal of the reverse diffs that left the retention window all commit
// together or not at all. Recovery is therefore opening: the store is at its last committed
// block, and replay, a node or a follower continues from the block after it.
import { echo } from "../../src/bounds.js";
import { bytesEqual, concatBytes, toHex } from "../../src/bytes.js";
import { BLAKE3 } from "../../src/crypto/hash.js";
import { QmdbChainDb } from "../chain-db/base.js";
import { ChainDbError, type PrunedUndo, type BlockQuery, type BlockRecord, type ChainDb, type GenesisRecord, type StateReader, type TxLocation } from "../chain-db/chain-db.js";
import { keyId, keyOfId, type Staged } from "../chain-db/staging.js";
import { STATE_KEY_LENGTH } from "../kv/interface.js";
import { createStateCommitment, STATE_CHUNK_BYTES } from "../qmdb/index.js";
import { buf, DamagedStoreError, Env, heightKey, plain, readU64Key, StoreError, u64Key, type EnvOptions, type Table } from "./env.js";
import { LmdbQmdbStorage } from "./qmdb-storage.js";
import { SnapshotError } from "./snapshot.js";
import { decodeBefore, decodeBlock, decodeGenesis, decodeTxLocation, encodeBefore, encodeBlock, encodeGenesis, encodeTxLocation } from "./records.js";

export const STORE_FORMAT = "cbqs-lmdb/v1";
const U64_MAX = (1n << 64n) - 1n;

export interface LmdbChainDbOptions extends EnvOptions {
  /** Blocks below the head whose state stays readable (default 128). */
  retainBlocks?: number;
  /** Called inside every block's write transaction, after the state is written (crash tests). */
  duringCommit?: () => void;
  /** Called after every committed block (snapshots every n blocks). */
  afterCommit?: (db: LmdbChainDb, block: BlockRecord) => void;
}

export class LmdbChainDb extends QmdbChainDb implements ChainDb {
  readonly retainBlocks: number;
  private readonly meta: Table;
  private readonly blockTable: Table;
  private readonly hashes: Table;
  private readonly txs: Table;
  private readonly undo: Table;
  private readonly undoKeys: Table;
  private genesisRecord: GenesisRecord | undefined;
  private headRecord: BlockRecord | undefined;
  /** Set when a write transaction failed: the in-memory QMDB is ahead of the disk. */
  private broken: string | undefined;

  private constructor(
    readonly env: Env,
    private readonly options: LmdbChainDbOptions,
    readonly storage: LmdbQmdbStorage,
  ) {
    super(createStateCommitment(BLAKE3, storage));
    this.retainBlocks = options.retainBlocks ?? 128;
    this.meta = env.table("meta");
    this.blockTable = env.table("blocks");
    this.hashes = env.table("hashes");
    this.txs = env.table("txs");
    this.undo = env.table("undo");
    this.undoKeys = env.table("undokeys");
    const genesis = this.meta.get(metaKey("genesis"));
    this.genesisRecord = genesis === undefined ? undefined : decodeGenesis(plain(genesis));
    this.headRecord = this.lastBlock();
    if (this.headRecord !== undefined && !bytesEqual(this.commitment.root(), this.headRecord.state_root)) {
      throw new DamagedStoreError(`its state root is not block ${this.headRecord.height}'s state_root`);
    }
  }

  protected override get readOnly(): boolean {
    return this.env.readOnly;
  }

  /** Opens (creating if needed) the store in `dir`; one process at a time. */
  static open(dir: string, options: LmdbChainDbOptions = {}): LmdbChainDb {
    const retain = options.retainBlocks ?? 128;
    if (!Number.isSafeInteger(retain) || retain < 0) throw new ChainDbError(`retainBlocks must be a non-negative integer (got ${retain})`);
    const env = Env.open(dir, options);
    try {
      checkFormat(env);
      return new LmdbChainDb(env, options, new LmdbQmdbStorage(env, STATE_CHUNK_BYTES));
    } catch (err) {
      env.close();
      throw err;
    }
  }

  protected override checkOpen(): void {
    super.checkOpen();
    if (this.broken !== undefined) throw new ChainDbError(`a commit failed (${this.broken}): reopen the ChainDb`);
  }

  // ---- reads --------------------------------------------------------------------------------

  genesis(): GenesisRecord | undefined {
    this.checkOpen();
    return this.genesisRecord;
  }

  head(): BlockRecord | undefined {
    this.checkOpen();
    return this.headRecord;
  }

  blockByHeight(height: bigint): BlockRecord | undefined {
    this.checkOpen();
    if (height < 0n || height > U64_MAX) return undefined;
    const value = this.blockTable.get(heightKey(height));
    return value === undefined ? undefined : decodeBlock(plain(value).subarray(8));
  }

  blockByHash(hash: Uint8Array): BlockRecord | undefined {
    this.checkOpen();
    const height = this.hashes.get(buf(hash));
    return height === undefined ? undefined : this.blockByHeight(BigInt(readU64Key(height)));
  }

  protected hasBlockHash(hash: Uint8Array): boolean {
    return this.hashes.get(buf(hash)) !== undefined;
  }

  txLocation(txHash: Uint8Array): TxLocation | undefined {
    this.checkOpen();
    const value = this.txs.get(buf(txHash));
    return value === undefined ? undefined : decodeTxLocation(plain(value));
  }

  blocks(q: BlockQuery): BlockRecord[] {
    this.checkOpen();
    if (q.limit <= 0 || q.from > q.to) return [];
    const range =
      q.order === "asc"
        ? { start: heightKey(q.from), ...(q.to < U64_MAX ? { end: heightKey(q.to + 1n) } : {}), limit: q.limit }
        : { start: heightKey(q.to), ...(q.from > 0n ? { end: heightKey(q.from - 1n) } : {}), reverse: true, limit: q.limit };
    return [...this.blockTable.getRange(range)].map(({ value }) => decodeBlock(plain(value).subarray(8)));
  }

  /** QMDB log size after the committed block at `height` (snapshots of retained heights). */
  logSizeAt(height: bigint): number | undefined {
    const value = this.blockTable.get(heightKey(height));
    return value === undefined ? undefined : readU64Key(value);
  }

  private lastBlock(): BlockRecord | undefined {
    for (const { value } of this.blockTable.getRange({ reverse: true, limit: 1 })) return decodeBlock(plain(value).subarray(8));
    return undefined;
  }

  stateAt(height: bigint): StateReader | undefined {
    this.checkOpen();
    const head = this.headRecord;
    if (head === undefined || height > head.height || this.blockTable.get(heightKey(height)) === undefined) return undefined;
    if (height < head.height) {
      // Retained iff at most retainBlocks blocks lie above it and the lowest of them (the oldest
      // reverse diff needed) is still kept: diffs are dropped oldest first.
      const above = [...this.blockTable.getKeys({ start: heightKey(height + 1n), limit: this.retainBlocks + 1 })];
      if (above.length > this.retainBlocks || this.undoKeys.get(above[0]!) === undefined) return undefined;
    }
    const staged = this.staged?.undo;
    const store = this.store;
    const from = heightKey(height + 1n);
    // Just past the head's row (key ‖ head ‖ 0x00 sorts after key ‖ head and before key ‖ head + 1):
    // head + 1 would not fit in a u64 when the head is at the last height.
    const through = concatBytes(heightKey(head.height), Uint8Array.of(0));
    return {
      read: (key) => {
        if (height < head.height) {
          // The nearest block above `height` that changed the key holds its value at `height`.
          for (const { value } of this.undo.getRange({ start: buf(concatBytes(key, from)), end: buf(concatBytes(key, through)), limit: 1 })) {
            return decodeBefore(plain(value));
          }
        }
        if (staged !== undefined) {
          const id = keyId(key);
          if (staged.has(id)) return staged.get(id)?.slice();
        }
        return store.read(key);
      },
    };
  }

  // ---- commits ------------------------------------------------------------------------------

  commitGenesis(genesis: GenesisRecord): void {
    this.checkGenesis(genesis);
    this.write(genesis.block, () => this.meta.putSync(metaKey("genesis"), buf(encodeGenesis(genesis))), undefined);
    this.genesisRecord = genesis;
  }

  commitBlock(block: BlockRecord): void {
    const staged = this.checkNextBlock(block);
    this.write(block, () => {
      block.receipts.forEach((r, index) => this.txs.putSync(buf(r.tx_hash), buf(encodeTxLocation({ height: block.height, index }))));
    }, staged);
    this.options.afterCommit?.(this, block);
  }

  /** The one write transaction of a block: state, record, indexes, reverse diffs. */
  private write(block: BlockRecord, indexes: () => void, staged: Staged | undefined): void {
    const h = heightKey(block.height);
    try {
      this.env.transaction(() => {
        this.storage.writePending();
        this.options.duringCommit?.();
        this.blockTable.putSync(h, buf(concatBytes(u64Key(this.commitment.db.any.size), encodeBlock(block))));
        this.hashes.putSync(buf(block.block_hash), h);
        indexes();
        if (staged !== undefined && this.retainBlocks > 0) this.writeUndo(block.height, staged);
        this.dropExpiredUndo();
      });
    } catch (err) {
      throw this.writeFailed(err, `block ${block.height}`);
    }
    this.storage.markWritten();
    this.staged = undefined;
    this.headRecord = block;
  }

  /**
   * A write transaction that failed (aborted whole by LMDB): the store refuses writes until
   * reopened, and a write the disk or the map refused is a StoreFullError naming `what` and the
   * block the store is left at. Every write transaction maps its error here.
   */
  private writeFailed(err: unknown, what: string): unknown {
    this.broken = (err as Error).message;
    if (err instanceof StoreError || !isWriteFailure(err)) return err;
    return new StoreFullError(what, this.headRecord?.height, this.env.freeBytes(), err as Error);
  }

  private writeUndo(height: bigint, staged: Staged): void {
    const h = heightKey(height);
    const keys: Uint8Array[] = [];
    for (const [id, before] of staged.undo) {
      const key = keyOfId(id);
      keys.push(key);
      this.undo.putSync(buf(concatBytes(key, h)), buf(encodeBefore(before)));
    }
    this.undoKeys.putSync(h, buf(concatBytes(...keys)));
  }

  /**
   * Removes the reverse diffs of the block that is now retainBlocks + 1 blocks from the top and of
   * every block below it (inside a write transaction); returns their height keys, ascending.
   * Usually that is the one block that just left the window; all of them when the store was kept
   * with a larger retainBlocks before. So the blocks with undo rows are always the top ones, with
   * no hole — stateAt relies on it (it checks only the lowest block above the height it reads).
   */
  private dropExpiredUndo(): Buffer[] {
    const [cut] = [...this.blockTable.getKeys({ reverse: true, offset: this.retainBlocks, limit: 1 })];
    if (cut === undefined) return [];
    const top = heightOf(cut);
    const expired = [...this.undoKeys.getKeys(top < U64_MAX ? { end: heightKey(top + 1n) } : {})].map((k) => Buffer.from(k));
    for (const h of expired) this.dropUndo(h);
    return expired;
  }

  /** Removes the reverse diff of the block at height key `h` (inside a write transaction). */
  private dropUndo(h: Buffer): void {
    const keys = this.undoKeys.get(h)!;
    for (let i = 0; i < keys.length; i += STATE_KEY_LENGTH) this.undo.removeSync(buf(concatBytes(keys.subarray(i, i + STATE_KEY_LENGTH), h)));
    this.undoKeys.removeSync(h);
  }

  /**
   * Removes the undo rows of every block below the window of the top retainBlocks blocks, in one
   * write transaction (see dropExpiredUndo): those a store written with a larger retainBlocks
   * still holds. A node or `replay --db` calls it on opening a store, to say what it removed.
   */
  pruneUndo(): PrunedUndo | null {
    this.checkWritable();
    let pruned: Buffer[] = [];
    try {
      this.env.transaction(() => {
        pruned = this.dropExpiredUndo();
      });
    } catch (err) {
      throw this.writeFailed(err, "the removal of the undo rows below the --retain-blocks window");
    }
    return pruned.length === 0 ? null : { from: heightOf(pruned[0]!), to: heightOf(pruned[pruned.length - 1]!), blocks: pruned.length };
  }

  /**
   * Makes a store rebuilt from a snapshot (state/lmdb/snapshot.ts) hold that snapshot's chain:
   * its genesis record and block H become the ledger, H the head. Refused unless the store is
   * empty of records and its rebuilt state root is block H's state_root. Blocks between genesis
   * and H are not held, nor is the state of any block before H.
   */
  adoptSnapshot(genesis: GenesisRecord, block: BlockRecord): void {
    this.checkWritable();
    if (this.genesisRecord !== undefined) throw new ChainDbError("the store already holds a chain");
    const root = this.commitment.root();
    if (!bytesEqual(root, block.state_root)) {
      throw new SnapshotError(`the rebuilt state root ${toHex(root)} is not block ${block.height}'s state_root ${toHex(block.state_root)}`);
    }
    this.env.transaction(() => {
      this.meta.putSync(metaKey("genesis"), buf(encodeGenesis(genesis)));
      // Genesis's log size is not known (that history is pruned): 0 marks it as not exportable.
      this.blockTable.putSync(heightKey(0n), buf(concatBytes(u64Key(0), encodeBlock(genesis.block))));
      this.hashes.putSync(buf(genesis.block.block_hash), heightKey(0n));
      this.blockTable.putSync(heightKey(block.height), buf(concatBytes(u64Key(this.commitment.db.any.size), encodeBlock(block))));
      this.hashes.putSync(buf(block.block_hash), heightKey(block.height));
      block.receipts.forEach((r, index) => this.txs.putSync(buf(r.tx_hash), buf(encodeTxLocation({ height: block.height, index }))));
    });
    this.genesisRecord = genesis;
    this.headRecord = block;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.env.close();
  }
}

const metaKey = (name: string): Buffer => Buffer.from(name, "utf8");
const heightOf = (key: Buffer): bigint => key.readBigUInt64BE(0);

/**
 * A block's write transaction that the disk refused (CIP-4 §6.4 resource exhaustion). LMDB
 * aborts the whole transaction, so the store stays at its previous block. A short write —
 * how a full disk or a file-size limit usually shows — LMDB reports as EIO, so the free space
 * on the store's disk is given to tell which.
 */
export class StoreFullError extends StoreError {
  /** `what` could not be written: "block 5", or the removal of old undo rows. */
  constructor(what: string, left: bigint | undefined, free: number | undefined, cause: Error) {
    const bytes = free?.toLocaleString("en-US");
    const text = free !== undefined && free < 1 << 20 ? `the disk is full (${bytes} bytes free): ${what} could not be written (${cause.message})` : `${what} could not be written (${cause.message}${bytes === undefined ? "" : `; ${bytes} bytes free on its disk`})`;
    super(`${text}; the store is left ${left === undefined ? "empty" : `at block ${left}`}`);
  }
}

/** Errors of a write the disk or the map refused (lmdb-js gives LMDB's and the system's error text). */
function isWriteFailure(err: unknown): boolean {
  const e = err as NodeJS.ErrnoException;
  const text = `${e.code ?? ""} ${e.message ?? ""}`;
  return /ENOSPC|EDQUOT|EFBIG|EIO|MDB_MAP_FULL|No space left|Disk quota|File too large|Input\/output error/i.test(text);
}

/** Refuses a directory that holds something other than a store of this format; marks a new one. */
function checkFormat(env: Env): void {
  const meta = env.table("meta");
  const format = meta.get(metaKey("format"));
  if (format === undefined) {
    if (env.readOnly || [...env.table("blocks").getKeys({ limit: 1 })].length > 0) throw new StoreError("not a cbqs store (no format record)");
    env.transaction(() => meta.putSync(metaKey("format"), Buffer.from(STORE_FORMAT)));
  } else if (format.toString() !== STORE_FORMAT) {
    throw new StoreError(`a store of format ${JSON.stringify(echo(format.toString(), 60))}, not ${STORE_FORMAT}`);
  }
}
