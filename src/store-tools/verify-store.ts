// `cbqs store verify --db <dir>`: everything a store holds that can be derived again is derived
// again and compared (docs/spec/state.md §6.7). Per record: the genesis record against its own
// source (chain_instance_id, the genesis block it produces); every block record against
// itself (its transactions' hashes are its receipts' tx_hash, they give its tx/receipt/logs
// roots, its header its block_hash), its table key, its parent (the block below it, where the
// ledger is contiguous) and its QMDB log size; the hash and transaction indexes both ways; the
// undo rows of pinned reads (index against rows both ways, each decoded, no hole). The
// state: the head's operations are rebuilt into a fresh QMDB exactly as a snapshot import does
// (every operation from the inactivity floor re-hashed onto the pinned peaks of the pruned
// prefix, the index and bitmap replayed from them) and its root must be the head's state_root.
// The first inconsistency found is the answer.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bytesEqual, toHex } from "../bytes.js";
import type { BlockRecord } from "../../state/chain-db/chain-db.js";
import { LmdbChainDb } from "../../state/lmdb/chain-db.js";
import { DamagedStoreError, plain, readU64Key, type Table } from "../../state/lmdb/env.js";
import { decodeBefore, decodeBlock, decodeTxLocation } from "../../state/lmdb/records.js";
import { STATE_KEY_LENGTH } from "../../state/kv/interface.js";
import { exportSnapshot, rebuildSnapshotState, SnapshotError } from "../../state/lmdb/snapshot.js";
import { verifyBlockRecord, verifyGenesisRecord } from "./snapshot.js";

/** An inconsistency `store verify` found (exit 1). */
export class StoreInconsistency extends Error {
  override name = "StoreInconsistency";
}

function fail(what: string): never {
  throw new StoreInconsistency(what);
}

/** A check of one record: its own SnapshotError or DamagedStoreError becomes the inconsistency. */
function check(where: string, run: () => void): void {
  try {
    run();
  } catch (err) {
    if (err instanceof SnapshotError || err instanceof DamagedStoreError) {
      const what = err instanceof DamagedStoreError ? err.detail : err.message;
      fail(what.startsWith(`${where}:`) ? what : `${where}: ${what}`);
    }
    throw err;
  }
}

/** Verifies the open store; returns what was checked, or throws StoreInconsistency. */
export function verifyStore(db: LmdbChainDb): string {
  const genesis = db.genesis();
  const head = db.head();
  if (genesis === undefined || head === undefined) return fail("the store holds no chain");
  check("the genesis record", () => void verifyGenesisRecord(genesis));
  const cid = genesis.chain_instance_id;

  // Opened once: lmdb-js opening a table inside an iteration of another crashes natively.
  const blockTable = db.env.table("blocks");
  const hashTable = db.env.table("hashes");
  const txTable = db.env.table("txs");
  let blocks = 0;
  let txs = 0;
  let previous: { record: BlockRecord; logSize: number } | undefined;
  for (const { key, value } of blockTable.getRange({})) {
    const height = Buffer.from(key).readBigUInt64BE(0);
    const where = `block ${height}`;
    let record: BlockRecord | undefined;
    check(where, () => {
      record = decodeBlock(plain(value).subarray(8));
    });
    const b = record!;
    const logSize = readU64Key(value);
    if (b.height !== height) fail(`${where}: its record says height ${b.height}`);
    if (height === 0n) {
      if (!bytesEqual(b.block_hash, genesis.block.block_hash) || !bytesEqual(b.state_root, genesis.block.state_root)) fail(`${where} is not the genesis record's block`);
    } else check(where, () => verifyBlockRecord(cid, b));
    if (previous !== undefined) {
      if (height === previous.record.height + 1n && !bytesEqual(b.parent_hash, previous.record.block_hash)) fail(`${where}: parent_hash is not block ${previous.record.height}'s block_hash`);
      // Every block appends at least its commit operation: the log grows with every block.
      if (logSize <= previous.logSize) fail(`${where}: its QMDB log size ${logSize} is not above block ${previous.record.height}'s ${previous.logSize}`);
    }
    const byHash = hashTable.get(Buffer.from(b.block_hash));
    if (byHash === undefined || readU64Key(byHash) !== Number(height)) fail(`${where}: the hash index does not lead to it (${toHex(b.block_hash)})`);
    b.receipts.forEach((r, i) => {
      const loc = txTable.get(Buffer.from(r.tx_hash));
      if (loc === undefined) fail(`${where}: transaction ${i} (${toHex(r.tx_hash)}) is not in the transaction index`);
      check(`the transaction index entry of ${toHex(r.tx_hash)}`, () => {
        if (decodeTxLocation(plain(loc!)).height < height) fail(`${where}: the transaction index puts transaction ${i} (${toHex(r.tx_hash)}) in an earlier block`);
      });
    });
    blocks++;
    txs += b.transactions.length;
    previous = { record: b, logSize };
  }
  // The last block listed is the head: the store's head is read from the end of this same table.

  let hashes = 0;
  for (const { key, value } of hashTable.getRange({})) {
    const b = db.blockByHeight(BigInt(readU64Key(value)));
    if (b === undefined || !bytesEqual(b.block_hash, key)) fail(`the hash index entry ${toHex(key)} leads to no block of that hash`);
    hashes++;
  }
  let indexed = 0;
  for (const { key, value } of txTable.getRange({})) {
    let at: { height: bigint; index: number } | undefined;
    check(`the transaction index entry of ${toHex(key)}`, () => {
      at = decodeTxLocation(plain(value));
    });
    const b = db.blockByHeight(at!.height);
    if (b === undefined || b.receipts[at!.index] === undefined || !bytesEqual(b.receipts[at!.index]!.tx_hash, key)) {
      fail(`the transaction index entry of ${toHex(key)} leads to no such transaction (block ${at!.height}, index ${at!.index})`);
    }
    indexed++;
  }

  const undo = verifyUndo(db, blockTable);

  const logSize = db.logSizeAt(head.height)!;
  if (logSize !== db.commitment.db.any.size) fail(`the head's QMDB log size ${logSize} is not the stored log's ${db.commitment.db.any.size}`);
  const rebuilt = rebuildRoot(db);
  if (!bytesEqual(rebuilt.root, head.state_root)) {
    fail(`the state root rebuilt from the stored operations, ${toHex(rebuilt.root)}, is not block ${head.height}'s state_root ${toHex(head.state_root)}`);
  }
  return (
    `format, genesis record, ${blocks} block records (transaction hashes, roots, block hashes, parents), ` +
    `${hashes} block-hash and ${indexed} transaction index entries (${txs} transactions), ` +
    `${undo.rows} undo rows of ${undo.blocks} blocks (index and rows both ways, each decoded), ` +
    `state root rebuilt from ${rebuilt.ops} operations = block ${head.height}'s state_root ${toHex(head.state_root)}`
  );
}

/**
 * The reverse diffs pinned reads use (state/lmdb/chain-db.ts stateAt): every block in the undo
 * index is a stored block, lists whole state keys, and each listed key has its undo row; every
 * undo row is listed by its block's index entry and decodes; and the blocks with undo rows are
 * the top ones with no hole (stateAt checks only the lowest block above the height it reads).
 */
function verifyUndo(db: LmdbChainDb, blockTable: Table): { rows: number; blocks: number } {
  const undoKeys = db.env.table("undokeys");
  const undoTable = db.env.table("undo");
  const listed = new Map<bigint, Set<string>>();
  for (const { key, value } of undoKeys.getRange({})) {
    const k = Buffer.from(key);
    if (k.length !== 8) fail(`the undo index entry ${toHex(k)} is not a block height`);
    const height = k.readBigUInt64BE(0);
    const where = `the undo index of block ${height}`;
    if (db.blockByHeight(height) === undefined) fail(`${where}: no such block is stored`);
    const keys = plain(value);
    if (keys.length % STATE_KEY_LENGTH !== 0) fail(`${where}: ${keys.length} bytes, not a list of ${STATE_KEY_LENGTH}-byte state keys`);
    const set = new Set<string>();
    for (let i = 0; i < keys.length; i += STATE_KEY_LENGTH) {
      const stateKey = keys.subarray(i, i + STATE_KEY_LENGTH);
      const row = undoTable.get(Buffer.concat([stateKey, k]));
      if (row === undefined) fail(`${where}: the undo row of key ${toHex(stateKey)} is missing`);
      set.add(toHex(stateKey));
    }
    listed.set(height, set);
  }
  let rows = 0;
  for (const { key, value } of undoTable.getRange({})) {
    const k = Buffer.from(key);
    if (k.length !== STATE_KEY_LENGTH + 8) fail(`the undo row ${toHex(k)} has no state key and block height`);
    const stateKey = toHex(k.subarray(0, STATE_KEY_LENGTH));
    const height = k.readBigUInt64BE(STATE_KEY_LENGTH);
    const where = `the undo row of key ${stateKey} at block ${height}`;
    if (listed.get(height)?.has(stateKey) !== true) fail(`${where}: not in block ${height}'s undo index`);
    check(where, () => void decodeBefore(plain(value)));
    rows++;
  }
  // No hole: from the head down, the blocks with undo rows come first.
  let gap: bigint | undefined;
  for (const key of blockTable.getKeys({ reverse: true })) {
    const height = Buffer.from(key).readBigUInt64BE(0);
    if (!listed.has(height)) gap ??= height;
    else if (gap !== undefined) fail(`the undo index of block ${height}: block ${gap} above it has none (a hole pinned reads would read through)`);
  }
  return { rows, blocks: listed.size };
}

/** The head's state rebuilt the way a snapshot import rebuilds it, in a scratch directory. */
function rebuildRoot(db: LmdbChainDb): { root: Uint8Array; ops: number } {
  const scratch = mkdtempSync(join(tmpdir(), "cbqs-verify-"));
  try {
    const file = join(scratch, "head.cbqs");
    exportSnapshot(db, file);
    rebuildSnapshotState(file, join(scratch, "state"), () => {});
    const rebuilt = LmdbChainDb.open(join(scratch, "state"));
    try {
      const any = rebuilt.commitment.db.any;
      return { root: rebuilt.commitment.root(), ops: any.size - any.mmr.prunedBelow };
    } finally {
      rebuilt.close();
    }
  } catch (err) {
    if (err instanceof SnapshotError || err instanceof DamagedStoreError) return fail(`the stored state: ${err instanceof DamagedStoreError ? err.detail : err.message}`);
    throw err;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
