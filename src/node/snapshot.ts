// Snapshots and fast sync (CIP-4 §8.1; the file format and what it carries: state/lmdb/snapshot.ts):
// import with every check a node can make before accepting — the checksum, the chain (genesis
// source → chain_instance_id → genesis state root and block hash; block H's transactions,
// receipts and events → its roots → its block hash), the rebuilt state root against block H's
// state_root, and H's effective_rent_height against that state — into an empty directory, built aside and renamed into place only when all hold;
// and snapshots written every n blocks as a store commits.
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { bytesEqual, toHex } from "../bytes.js";
import { headerHash } from "../chain/block.js";
import { txHash } from "../chain/envelope.js";
import { committedReceipt } from "../chain/receipts.js";
import { chainInstanceId } from "../codec/derive.js";
import { Chain } from "../engine/chain.js";
import { genesisFromSource } from "../harness/genesis.js";
import { newStore } from "../harness/replay.js";
import type { BlockRecord, GenesisRecord, StateReader } from "../../state/chain-db/chain-db.js";
import { readPauseRecord } from "../engine/governance.js";
import { REGISTRY_ADDRESS } from "../engine/layout.js";
import { effectiveRentHeight } from "../engine/pause.js";
import { LmdbChainDb } from "../../state/lmdb/chain-db.js";
import { hasEnv, StoreError } from "../../state/lmdb/env.js";
import { encodeBlock } from "../../state/lmdb/records.js";
import { exportSnapshot, exportSnapshotSteps, rebuildSnapshotStateSteps, SnapshotError, type SnapshotHead } from "../../state/lmdb/snapshot.js";
import { finish, type Steps } from "../steps.js";
import { blockRoots } from "../../state/roots/roots.js";
import { genesisRecord } from "./chain-node.js";

export { exportSnapshot, exportSnapshotSteps, SnapshotError };

export { SNAPSHOT_INTERVAL_BLOCKS } from "./snapshot-interval.js";

/** Checks that the snapshot's genesis and block H are one consistent chain (throws SnapshotError). */
export function verifySnapshotChain({ genesis, block }: SnapshotHead): void {
  const expected = verifyGenesisRecord(genesis);
  if (block.height === 0n) {
    if (!bytesEqual(encodeBlock(block), encodeBlock(expected))) throw new SnapshotError("block 0 is not the genesis block");
    return;
  }
  verifyBlockRecord(genesis.chain_instance_id, block);
}

/**
 * Checks a genesis record against its own source (chain_instance_id, the genesis block it
 * produces); returns that block. Throws SnapshotError.
 */
export function verifyGenesisRecord(genesis: GenesisRecord): BlockRecord {
  const cid = chainInstanceId(genesis.source);
  if (!bytesEqual(cid, genesis.chain_instance_id)) throw new SnapshotError("chain_instance_id is not keccak256 of the genesis source");
  let expected: BlockRecord;
  try {
    const config = genesisFromSource(genesis.source);
    const chain = Chain.genesis(config, genesis.source, newStore());
    expected = genesisRecord(genesis.source, cid, config.timestamp, chain.genesisStateRoot).block;
  } catch (err) {
    throw new SnapshotError(`invalid genesis: ${(err as Error).message}`);
  }
  if (!bytesEqual(encodeBlock(expected), encodeBlock(genesis.block))) throw new SnapshotError("the genesis block is not the one its genesis source produces");
  return expected;
}

/** Checks a block record against itself: its transactions and receipts give its roots, its header its block_hash. Throws SnapshotError. */
export function verifyBlockRecord(cid: Uint8Array, block: BlockRecord): void {
  // One receipt per transaction is the record format's own (state/lmdb/records.ts writes and reads one count for both).
  const hashes = block.transactions.map(txHash);
  block.receipts.forEach((r, i) => {
    if (!bytesEqual(r.tx_hash, hashes[i]!)) throw new SnapshotError(`block ${block.height}: receipt ${i} is not for transaction ${i}`);
  });
  const roots = blockRoots(hashes, block.receipts.map(committedReceipt));
  for (const name of ["tx_root", "receipt_root", "logs_root"] as const) {
    if (!bytesEqual(roots[name], block[name])) throw new SnapshotError(`block ${block.height}: ${name} does not match its transactions and receipts`);
  }
  const hash = headerHash(cid, block.height, block.timestamp, block.parent_hash, block.state_root, roots);
  if (!bytesEqual(hash, block.block_hash)) throw new SnapshotError(`block ${block.height}: block_hash does not match its header`);
}

/**
 * The snapshot's block is not the trusted one given on import (`--trusted-block-hash`): a
 * verification mismatch (exit 1), not unusable input. Checked before anything is written.
 */
export class AnchorMismatch extends Error {
  override name = "AnchorMismatch";
  constructor(
    readonly height: bigint,
    readonly trusted: Uint8Array,
    readonly actual: Uint8Array,
  ) {
    super(`block ${height}: block_hash: expected ${toHex(trusted)} (the trusted anchor) got ${toHex(actual)}`);
  }
}

/**
 * Imports the snapshot at `file` into `dir`, which must be absent, empty, or not yet hold a
 * chain. Built in a sibling directory and renamed into place once every check held: a refused
 * snapshot leaves `dir` exactly as it was. Returns the imported head block.
 *
 * Every check but `trustedBlockHash` is against the snapshot's own records: a consistent snapshot
 * of another history of the same genesis passes them. The trusted block hash (obtained out of
 * band: a node you trust, a published checkpoint) ties it to the chain meant: block H's hash
 * commits to its state_root, which the rebuilt state must reproduce.
 */
export function importSnapshot(file: string, dir: string, trustedBlockHash?: Uint8Array): BlockRecord {
  return finish(importSnapshotSteps(file, dir, trustedBlockHash));
}

/** importSnapshot unit by unit: a unit is one ops record rebuilt (src/steps.ts); stopped, the target is untouched. */
export function* importSnapshotSteps(file: string, dir: string, trustedBlockHash?: Uint8Array): Steps<BlockRecord> {
  const held = storedChain(dir);
  const tmp = `${dir.replace(/\/+$/, "")}.import-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  try {
    const head = yield* rebuildSnapshotStateSteps(file, tmp, (snapshot) => {
      if (held !== undefined) {
        if (!bytesEqual(held.source, snapshot.genesis.source)) {
          throw new SnapshotError(
            `foreign snapshot: it is of chain ${toHex(snapshot.genesis.chain_instance_id)}, the store in ${dir} holds chain ${toHex(held.chainInstanceId)}`,
          );
        }
        throw new SnapshotError(`${dir} already holds this chain (head ${held.head}); import into an empty directory`);
      }
      verifySnapshotChain(snapshot);
      const { block } = snapshot;
      if (trustedBlockHash !== undefined && !bytesEqual(block.block_hash, trustedBlockHash)) throw new AnchorMismatch(block.height, trustedBlockHash, block.block_hash);
    });
    const db = LmdbChainDb.open(tmp);
    try {
      db.adoptSnapshot(head.genesis, head.block);
      verifyEffectiveRentHeight(head, db.stateAt(head.block.height)!);
    } finally {
      db.close();
    }
    if (existsSync(dir)) rmSync(dir, { recursive: true });
    renameSync(tmp, dir);
    return head.block;
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
}

/**
 * Block H's effective_rent_height is not covered by its block hash: it is checked against the
 * rebuilt state it comes from (H − coverage(H), from the registry's pause record after block H,
 * as the engine derives it). Throws SnapshotError.
 */
function verifyEffectiveRentHeight({ genesis, block }: SnapshotHead, state: StateReader): void {
  if (block.height === 0n) return; // the genesis block is checked whole against its source
  let expected: bigint;
  try {
    const pause = readPauseRecord((k) => state.read(k), genesisFromSource(genesis.source).governance, REGISTRY_ADDRESS);
    expected = effectiveRentHeight(pause, block.height);
  } catch (err) {
    throw new SnapshotError(`block ${block.height}: the registry's pause record in the rebuilt state does not decode (${(err as Error).message})`);
  }
  if (expected !== block.effective_rent_height) {
    throw new SnapshotError(`block ${block.height}: effective_rent_height ${block.effective_rent_height} is not the ${expected} its rebuilt state gives (H − pause coverage)`);
  }
}

/** The chain a target directory already holds (undefined: absent or empty); anything else there is refused. */
function storedChain(dir: string): { source: Uint8Array; chainInstanceId: Uint8Array; head: bigint } | undefined {
  if (!existsSync(dir)) return undefined;
  if (!statSync(dir).isDirectory()) throw new StoreError("not a directory");
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch (err) {
    throw new SnapshotError(`cannot use ${dir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  if (entries.length === 0) return undefined;
  if (!hasEnv(dir)) throw new SnapshotError(`${dir} is not empty and holds no cbqs store`);
  const db = LmdbChainDb.open(dir);
  try {
    const g = db.genesis();
    if (g === undefined) return undefined;
    return { source: g.source, chainInstanceId: g.chain_instance_id, head: db.head()!.height };
  } finally {
    db.close();
  }
}

/** Where a store's periodic snapshots go: `<dir>/snapshots/snapshot-<height>.cbqs`. */
export function snapshotPath(dir: string, height: bigint): string {
  return join(dir, "snapshots", `snapshot-${height}.cbqs`);
}

/**
 * The afterCommit hook writing a snapshot whenever a committed block crosses a multiple of
 * `interval` (heights may skip: the block at or first above each multiple is snapshotted).
 */
export function snapshotEvery(dir: string, interval: bigint): (db: LmdbChainDb, block: BlockRecord) => void {
  return (db, block) => {
    const parent = db.blockByHash(block.parent_hash);
    if (parent === undefined || parent.height / interval === block.height / interval) return;
    try {
      mkdirSync(join(dir, "snapshots"), { recursive: true });
      exportSnapshot(db, snapshotPath(dir, block.height));
    } catch (err) {
      // The block is committed; only its snapshot is missing (a full disk, most likely).
      const code = (err as NodeJS.ErrnoException).code;
      if (typeof code !== "string") throw err;
      throw new StoreError(`block ${block.height} is committed, but its snapshot could not be written (${code}); the store is at block ${block.height}`);
    }
  };
}
