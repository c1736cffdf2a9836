// The chain a `cbqs node` serves: opened from a genesis file, a fixture (imported block by block,
// every root verified exactly as `cbqs replay` does) or its own store, then extended by the
// devnet (a transaction pool and block production). Every block runs through the engine's block
// execution (src/engine/chain.ts via src/harness/replay.ts and src/chain/*), so roots, receipts
// and block hashes are the ones `cbqs replay` and `cbqs fill` produce, and every block is one
// ChainDb commit (state/chain-db/chain-db.ts).
import { bytesEqual, toHex } from "../bytes.js";
import { genesisHash, headerHash } from "../chain/block.js";
import { MAX_ENVELOPE_BYTES, txHash, type TxEnvelope } from "../chain/envelope.js";
import { blockResults } from "../chain/receipts.js";
import type { GenesisConfig } from "../engine/inputs.js";
import { Chain, isKeylessAccount } from "../engine/chain.js";
import { GenesisError } from "../engine/errors.js";
import { U64_MAX } from "../engine/math.js";
import { decodeTransaction, firstNotIncludable, startNonces, TxInputError } from "../harness/execute.js";
import type { Fixture } from "../harness/fixture.js";
import { genesisFromSource } from "../harness/genesis.js";
import { Replay, ReplayInputError, type ExecutedBlock, type Mismatch } from "../harness/replay.js";
import type { BlockRecord, ChainDb, GenesisRecord } from "../../state/chain-db/chain-db.js";
import { blockRoots, logsRoot, receiptRoot, txRoot } from "../../state/roots/roots.js";
import { DryRunStore } from "../../state/chain-db/dry-run.js";
import { compareStoredChain, historyStart } from "./stored-chain.js";
import {
  InvalidBlockCount,
  InvalidHeight,
  InvalidTransaction,
  KeylessSender,
  NonceGap,
  NotRewindable,
  PoolFull,
  SnapshotNotFound,
  StoreFailed,
  TimestampBackwards,
  TransactionTooLarge,
} from "./errors.js";
import { finish, type Steps } from "../steps.js";
import { GAS_VECTORS_SHA256 } from "../gas/pinned.js";
import { MemoryChainDb } from "../../state/chain-db/memory.js";

/** Input the node cannot start from (an invalid genesis, a store holding another chain…): exit 2. */
export class NodeInputError extends Error {
  override name = "NodeInputError";
}

/** A fixture block whose execution differs from the fixture: the node refuses to serve it (exit 1). */
export class ImportMismatch extends Error {
  override name = "ImportMismatch";
  constructor(readonly mismatch: Mismatch) {
    super(`block ${mismatch.height}: ${mismatch.field} differs`);
  }
}

/** Devnet bounds: pending transactions, and transactions per produced block. */
export const MAX_POOL_TXS = 4_096;
export const MAX_BLOCK_TXS = 1_024;
/**
 * Bytes of transaction envelopes in one produced block: four envelopes of the largest size
 * (4,198,400). A block is served as JSON with its envelopes in hex (twice their size) and its
 * receipts: GET /block/{n}, a feed item and a fixture's block then stay below about 9 MB, far
 * from V8's longest string (2^29 − 24 characters) and the 512 MiB a client buffers
 * (MAX_BUFFERED_DOCUMENT_BYTES). A policy of block production, like MAX_BLOCK_TXS, not of
 * consensus: an imported fixture's blocks are not held to it.
 */
export const MAX_BLOCK_BYTES = 4 * MAX_ENVELOPE_BYTES;
/** Bytes of the pool's envelopes: four full blocks, as MAX_POOL_TXS is four blocks' count. */
export const MAX_POOL_BYTES = 4 * MAX_BLOCK_BYTES;

/** The byte bounds of block production (tests scale them down); a transaction is at most the smallest of them and MAX_ENVELOPE_BYTES. */
export interface ProductionLimits {
  blockBytes: number;
  poolBytes: number;
}

export const DEFAULT_PRODUCTION: ProductionLimits = { blockBytes: MAX_BLOCK_BYTES, poolBytes: MAX_POOL_BYTES };
/** Snapshots kept for POST /devnet/revert; beyond it the oldest is forgotten (docs/guides/run-a-devnet.md "Snapshots"). */
export const MAX_SNAPSHOTS = 1_024;
/** Outcomes the devnet remembers for GET /tx beyond what the chain records: rejection messages, dropped transactions. */
const REMEMBERED_TXS = 4_096;

const ZERO_HASH = new Uint8Array(32);

export type NodeStart = { kind: "genesis"; source: Uint8Array } | { kind: "fixture"; fixture: Fixture } | { kind: "store" };

interface PoolTx {
  raw: Uint8Array;
  env: TxEnvelope;
  hash: Uint8Array;
}

/** A point POST /devnet/revert can return to: a committed block and the pool as it was then. */
interface Snapshot {
  id: bigint;
  height: bigint;
  block_hash: Uint8Array;
  pool: readonly PoolTx[];
}

/** Blocks produced by one POST /mine?blocks=N (or a part of them, if the node stopped). */
export interface MinedBatch {
  first: BlockRecord;
  last: BlockRecord;
  blocks: number;
  txs: number;
  /** The blocks that included or dropped a transaction, in order: an answer lists their receipts. */
  busy: MinedBlock[];
}

export interface MinedBlock {
  block: BlockRecord;
  /** Rejection messages of the block's transactions (receipts carry only code and name). */
  messages: Array<string | undefined>;
  /** Pool transactions left out because no block may contain them (a sender who cannot pay the fee at the reservation, a nonce another left-out transaction skipped). */
  dropped: Array<{ tx_hash: string; reason: string }>;
}

/**
 * Told of every change of the chain after it happened: a committed block (every block the devnet
 * produces, however it was asked for), or a rewind (a revert replaced the chain: `head` is the new
 * head, `from` the head before). GET /subscribe's hub is one (src/node/subscriptions.ts); a
 * listener only records what it is told and never throws.
 */
export interface ChainListener {
  block(block: BlockRecord): void;
  rewound(head: BlockRecord, from: BlockRecord): void;
}

export class CbqsNode {
  private pool: PoolTx[] = [];
  private readonly listeners = new Set<ChainListener>();
  private readonly snapshots = new Map<bigint, Snapshot>();
  private nextSnapshotId = 1n;
  /** Rejection messages of the transactions this node included (receipts keep only code and name). */
  private readonly messages = new Recent<string>(REMEMBERED_TXS);
  /** Transactions left out of a produced block, with the reason: GET /tx says so instead of "unknown". */
  private readonly droppedTxs = new Recent<{ reason: string; height: bigint }>(REMEMBERED_TXS);
  /** Told of every produced block, whoever asked for it (the timer or POST /mine): the node's log. */
  onMined: ((mined: MinedBlock) => void) | undefined;
  /**
   * Told when the store refused a produced block (a full disk, CIP-4 §6.4 — or, for an error that
   * is not a StoreError, a bug): the store is at the block before it and the ChainDb refuses every
   * further write (state/chain-db/chain-db.ts "Commit protocol"), so the node must stop.
   */
  onStoreFailed: ((err: Error) => void) | undefined;
  /** Set once the store refused a block: no block is produced after it. */
  private storeFailure: { height: bigint; err: Error } | undefined;
  /**
   * Told the milliseconds of every produced block: `applyMs` from the start of its production to
   * its record (selection, execution, roots, header hash), `commitMs` its ChainDb commit. GET
   * /metrics' block_apply_ms and batch_commit_ms (CIP-4 §9.2); the clock is read here, around
   * the engine's calls, never inside them.
   */
  onBlockTimed: ((applyMs: number, commitMs: number) => void) | undefined;
  /** What a produced block and the pool may hold in bytes (docs/guides/run-a-devnet.md "Devnet"). */
  production: ProductionLimits = DEFAULT_PRODUCTION;

  private constructor(
    private store: ChainDb,
    readonly genesis: GenesisRecord,
    readonly config: GenesisConfig,
    private engine: Chain,
  ) {}

  /** The chain's store. A revert replaces it (POST /devnet/revert): read it anew for every answer. */
  get db(): ChainDb {
    return this.store;
  }

  /** The engine over the head state: reads of accounts, streams, providers. Replaced with the store. */
  get chain(): Chain {
    return this.engine;
  }

  /**
   * Opens the chain. A store that already holds a chain continues it (a restart): a genesis or
   * fixture given again must be that chain's. `onBlock` sees every block imported from a fixture.
   */
  static open(db: ChainDb, start: NodeStart, onBlock?: (block: BlockRecord) => void): CbqsNode {
    return finish(CbqsNode.openSteps(db, start, onBlock));
  }

  /** open unit by unit: a unit is one fixture block imported and committed (src/steps.ts). */
  static *openSteps(db: ChainDb, start: NodeStart, onBlock?: (block: BlockRecord) => void): Steps<CbqsNode> {
    const stored = db.genesis();
    if (stored === undefined) {
      if (start.kind === "store") throw new NodeInputError("the store is empty: start a chain with --genesis <file> or --fixture <file>");
      if (start.kind === "genesis") return CbqsNode.fromGenesis(db, start.source);
      return yield* CbqsNode.importFixture(db, start.fixture, onBlock);
    }
    const source = start.kind === "genesis" ? start.source : start.kind === "fixture" ? start.fixture.genesis.source : stored.source;
    if (!bytesEqual(source, stored.source)) {
      throw new NodeInputError(`the store holds another chain (chain_instance_id ${toHex(stored.chain_instance_id)}); use its genesis or another store`);
    }
    const config = configOf(stored.source);
    if (start.kind === "fixture") return yield* CbqsNode.continueFixture(db, stored, start.fixture, onBlock);
    return new CbqsNode(db, stored, config, Chain.resume(config, stored.chain_instance_id, db.state));
  }

  /** A chain from a genesis file: refusals name the path in the file ("$.chain_id"). */
  private static fromGenesis(db: ChainDb, source: Uint8Array): CbqsNode {
    const config = configOf(source, "$");
    let chain: Chain;
    try {
      chain = Chain.genesis(config, source, db.state);
    } catch (err) {
      if (err instanceof GenesisError) throw new NodeInputError(`invalid genesis: ${err.message}`);
      throw err;
    }
    const genesis = genesisRecord(source, chain.chainInstanceId, config.timestamp, chain.genesisStateRoot);
    db.commitGenesis(genesis);
    return new CbqsNode(db, genesis, config, chain);
  }

  /** Imports every fixture block, verifying each like `cbqs replay`; the first mismatch stops it. */
  private static *importFixture(db: ChainDb, fixture: Fixture, onBlock?: (block: BlockRecord) => void): Steps<CbqsNode> {
    const { replay, mismatch } = Replay.start(fixture, db.state);
    if (mismatch !== null) throw new ImportMismatch(mismatch);
    const g = fixture.genesis;
    const genesis = genesisRecord(g.source, g.chain_instance_id, g.config.timestamp, replay.chain.genesisStateRoot);
    db.commitGenesis(genesis);
    yield* importBlocks(db, replay, fixture, 0, onBlock);
    return new CbqsNode(db, genesis, g.config, replay.chain);
  }

  /**
   * A restart with the same fixture: every stored block must be the fixture's, field by field
   * (src/chain-node/stored-chain.ts; a difference is the replay mismatch, exit 1, nothing written);
   * the fixture's blocks above the store's head are then imported.
   */
  private static *continueFixture(db: ChainDb, genesis: GenesisRecord, fixture: Fixture, onBlock?: (block: BlockRecord) => void): Steps<CbqsNode> {
    const head = db.head()!;
    // The genesis source was checked by openSteps: compareStoredChain cannot find another chain here.
    const compared = compareStoredChain(fixture, db);
    if (compared.mismatch !== null) throw new ImportMismatch(compared.mismatch);
    const next = compared.next;
    const replay = Replay.resume(fixture, db.state, head.block_hash);
    yield* importBlocks(db, replay, fixture, next, onBlock);
    return new CbqsNode(db, genesis, fixture.genesis.config, replay.chain);
  }

  get chainInstanceId(): Uint8Array {
    return this.genesis.chain_instance_id;
  }

  /** Adds a listener of committed blocks and rewinds; returns its removal. */
  listen(listener: ChainListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  head(): BlockRecord {
    return this.db.head()!;
  }

  /**
   * The block the node's history starts at (docs/guides/run-a-devnet.md "history_start"): the feed has nothing a
   * follower could verify below it.
   */
  historyStart(): BlockRecord {
    return historyStart(this.db);
  }

  get pending(): number {
    return this.pool.length;
  }

  /** Bytes of the queued envelopes. */
  get pendingBytes(): number {
    return this.pool.reduce((sum, t) => sum + t.raw.length, 0);
  }

  /** The largest envelope POST /tx takes: one that fits in a block (and the pool). */
  get maxTxBytes(): number {
    return Math.min(MAX_ENVELOPE_BYTES, this.production.blockBytes, this.production.poolBytes);
  }

  /**
   * Refuses an envelope of `size` bytes that no block could take (TransactionTooLarge) or that the
   * pool has no room for (PoolFull), counting `ahead` transactions not yet in the pool
   * (those waiting for their turn in the devnet's queue).
   */
  checkRoom(size: number, ahead: { txs: number; bytes: number } = { txs: 0, bytes: 0 }): void {
    const max = this.maxTxBytes;
    if (size > max) throw new TransactionTooLarge(size, max);
    if (this.pool.length + ahead.txs >= MAX_POOL_TXS) throw new PoolFull(`the pool holds ${MAX_POOL_TXS} transactions; mine a block first`);
    const bytes = this.pendingBytes + ahead.bytes;
    if (bytes + size > this.production.poolBytes) {
      throw new PoolFull(`the pool holds ${bytes} bytes of transactions and takes at most ${this.production.poolBytes}; mine a block first`);
    }
  }

  /** Drops the queued transactions from position `index` on (a library caller's all-or-nothing block). */
  dropPendingFrom(index: number): void {
    this.pool.length = Math.min(this.pool.length, Math.max(0, index));
  }

  /** Transactions of `sender` queued for the next block. */
  pendingFrom(sender: Uint8Array): number {
    return this.pool.filter((t) => bytesEqual(t.env.tx.from, sender)).length;
  }

  // ---- devnet ---------------------------------------------------------------------------------

  /**
   * Queues a raw envelope (docs/reference/formats/transaction.md) after checking it fits (checkRoom), decodes, names this chain, is
   * not from a keyless account (no block may contain it) and carries its sender's next nonce
   * (account nonce plus the sender's queued transactions). Returns its hash and nonce.
   */
  submit(raw: Uint8Array): { txHash: Uint8Array; nonce: bigint } {
    this.checkRoom(raw.length);
    let env: TxEnvelope;
    try {
      env = decodeTransaction(raw, 0, this.config.chain_id);
    } catch (err) {
      if (err instanceof TxInputError) throw new InvalidTransaction(err.message);
      throw err;
    }
    if (isKeylessAccount(env.tx.from)) throw new KeylessSender(toHex(env.tx.from));
    const queued = this.pendingFrom(env.tx.from);
    const expected = this.chain.account(env.tx.from).nonce + BigInt(queued);
    if (env.nonce !== expected) throw new NonceGap(env.nonce, expected, queued);
    const hash = txHash(raw);
    this.pool.push({ raw, env, hash });
    return { txHash: hash, nonce: env.nonce };
  }

  /**
   * Produces the next block (or the block at `height`, skipping the heights between, as fixtures
   * may) from the pool, in arrival order, at `timestamp` if given (never before the head's), else
   * by the devnet's timestamp rule (timestampOf): deterministic, no wall clock.
   */
  mine(height?: bigint, timestamp?: bigint): MinedBlock {
    const mined = this.produce(height, timestamp);
    this.onMined?.(mined);
    return mined;
  }

  /**
   * `count` blocks, one unit each (src/steps.ts): the first at `height` (default: the head's
   * next) and `timestamp` (default: the rule), each later one at the next height by the rule.
   * Every bound is checked before the first block, so a batch is refused whole or produced whole;
   * only a stop (`stopped()`, checked between blocks) or a store refusing a block ends it early.
   */
  *mineSteps(count: number, height?: bigint, timestamp?: bigint, stopped: () => boolean = () => false): Steps<MinedBatch> {
    const head = this.head();
    const first = height ?? head.height + 1n;
    this.checkHeight(head, first);
    const last = first + BigInt(count - 1);
    if (last > U64_MAX) throw new InvalidBlockCount(`${count} blocks from height ${first} would pass the last u64 height`);
    const start = this.timestampOf(head, first, timestamp);
    if (start + BigInt(count - 1) * this.config.block_time_seconds > U64_MAX) {
      throw new InvalidBlockCount(`the timestamp of height ${last} would exceed u64`);
    }
    const batch: Partial<MinedBatch> & { blocks: number; txs: number; busy: MinedBlock[] } = { blocks: 0, txs: 0, busy: [] };
    for (let i = 0; i < count && !(i > 0 && stopped()); i++) {
      const mined = i === 0 ? this.produce(first, timestamp) : this.produce();
      batch.first ??= mined.block;
      batch.last = mined.block;
      batch.blocks++;
      batch.txs += mined.block.transactions.length;
      if (mined.block.transactions.length > 0 || mined.dropped.length > 0) batch.busy.push(mined);
      yield;
    }
    return batch as MinedBatch;
  }

  private checkHeight(head: BlockRecord, h: bigint): void {
    if (h <= head.height || h > U64_MAX) throw new InvalidHeight(`height ${h} is not above the head ${head.height} (and a u64)`);
  }

  /**
   * A block's timestamp (D-0135 "Devnet time: a block's timestamp follows its
   * parent's"): the parent's plus block_time_seconds per height, so a chain from genesis keeps
   * genesis timestamp + height × block_time_seconds, and after a block given a timestamp the
   * next ones continue from it. A given timestamp may repeat the head's, never precede it.
   */
  private timestampOf(head: BlockRecord, h: bigint, given: bigint | undefined): bigint {
    if (given !== undefined) {
      if (given < head.timestamp) throw new TimestampBackwards(given, head);
      return given;
    }
    const derived = head.timestamp + (h - head.height) * this.config.block_time_seconds;
    if (derived > U64_MAX) throw new InvalidHeight(`the timestamp of height ${h} exceeds u64`);
    return derived;
  }

  private produce(height?: bigint, given?: bigint): MinedBlock {
    if (this.storeFailure !== undefined) {
      throw new StoreFailed(this.storeFailure.height, this.storeFailure.err);
    }
    const started = performance.now();
    const head = this.head();
    const h = height ?? head.height + 1n;
    this.checkHeight(head, h);
    const timestamp = this.timestampOf(head, h, given);
    // An empty pool needs no dry run, and an empty block's roots never change: the two costs an
    // empty block used to pay on top of its state commit (docs/engineering/performance.md "Devnet mining").
    const { included, dropped } = this.pool.length === 0 ? { included: [], dropped: [] } : this.selectTxs(head, h, timestamp);
    const envelopes = included.map((t) => t.env);
    const nonces = included.length === 0 ? undefined : startNonces(this.chain, envelopes);
    const outcome = this.chain.executeBlock({ height: h, timestamp, txs: envelopes.map((e) => e.tx) });
    if (nonces !== undefined && firstNotIncludable(envelopes, outcome, nonces) !== null) throw new Error("internal: the produced block disagrees with its dry run");
    const raws = included.map((t) => t.raw);
    const results = raws.length === 0 ? { receipts: [], ...emptyBlockRoots() } : blockResults(raws, outcome);
    const block: BlockRecord = {
      height: h,
      timestamp,
      block_hash: headerHash(this.chainInstanceId, h, timestamp, head.block_hash, outcome.stateRoot, results),
      parent_hash: head.block_hash,
      state_root: outcome.stateRoot,
      tx_root: results.tx_root,
      receipt_root: results.receipt_root,
      logs_root: results.logs_root,
      effective_rent_height: outcome.effectiveRentHeight,
      transactions: raws,
      receipts: results.receipts,
    };
    const built = performance.now();
    try {
      this.db.commitBlock(block);
    } catch (err) {
      // The block was executed and staged: whatever the error, the store takes no further block.
      const failure = err instanceof Error ? err : new Error(String(err));
      this.storeFailure = { height: h, err: failure };
      this.onStoreFailed?.(failure);
      throw err;
    }
    this.onBlockTimed?.(built - started, performance.now() - built);
    const messages = outcome.outcomes.map((o) => o.error?.message);
    messages.forEach((m, i) => m !== undefined && this.messages.set(toHex(results.receipts[i]!.tx_hash), m));
    for (const d of dropped) this.droppedTxs.set(d.tx_hash, { reason: d.reason, height: h });
    for (const l of this.listeners) l.block(block);
    return { block, messages, dropped };
  }

  /**
   * The pool's first transactions, as many as fit in MAX_BLOCK_TXS and `production.blockBytes`
   * (the first that does not fit waits for the next block), minus those no block may contain: one the engine
   * excludes (a sender who cannot pay the fee at the reservation) and every later one of the same
   * sender, whose nonce it skipped (the t8n rule, src/harness/t8n.ts). Found by running the block
   * on a throwaway overlay and dropping, after each run, every such transaction whose verdict
   * cannot change, then running it again: about two runs however many are dropped, instead of one
   * per dropped transaction. An excluded transaction has no effect, so dropping it changes no
   * other verdict; a dropped transaction that did execute in the run (its nonce skipped, accepted
   * or rejected) had effects a later one may depend on, so the exclusions after it wait for the
   * next run.
   * A rejected transaction is included and uses its nonce, so the sender's next one stays valid.
   */
  private selectTxs(head: BlockRecord, height: bigint, timestamp: bigint): { included: PoolTx[]; dropped: MinedBlock["dropped"] } {
    let included = this.pool.splice(0, this.fitting());
    const dropped: MinedBlock["dropped"] = [];
    const base = this.db.stateAt(head.height)!;
    for (;;) {
      const dry = Chain.resume(this.config, this.chainInstanceId, new DryRunStore(base));
      const envelopes = included.map((t) => t.env);
      const nonces = startNonces(dry, envelopes);
      const outcome = dry.executeBlock({ height, timestamp, txs: envelopes.map((e) => e.tx) });
      if (firstNotIncludable(envelopes, outcome, nonces) === null) return { included, dropped };
      // One pass in block order; a sender's nonce advances with each of its kept transactions.
      const next = new Map(nonces);
      const kept: PoolTx[] = [];
      let settled = true; // no executed transaction dropped so far: every exclusion is final
      for (const [i, t] of included.entries()) {
        const from = toHex(t.env.tx.from);
        const o = outcome.outcomes[i]!;
        const expected = next.get(from)!;
        let reason: string | null = null;
        if (t.env.nonce !== expected) reason = `nonce ${t.env.nonce} is not the sender's account nonce ${expected}`;
        else if (o.status === "excluded" && settled) reason = o.error!.message;
        if (reason === null) {
          kept.push(t);
          next.set(from, expected + 1n);
        } else {
          dropped.push({ tx_hash: toHex(t.hash), reason });
          if (o.status !== "excluded") settled = false;
        }
      }
      included = kept;
    }
  }

  /** How many of the pool's first transactions fit in one block, by count and by bytes. */
  private fitting(): number {
    let n = 0;
    for (let bytes = 0; n < this.pool.length && n < MAX_BLOCK_TXS; n++) {
      bytes += this.pool[n]!.raw.length;
      if (bytes > this.production.blockBytes) break;
    }
    return n;
  }

  // ---- snapshots (POST /devnet/snapshot, POST /devnet/revert) ----------------------------------

  /**
   * Only the in-memory store can be rewound (D-0139 "Devnet snapshots: a revert
   * replays the chain"): an LMDB store's blocks are durable, and its followers' feed must never
   * lose them behind a restart.
   */
  private checkRewindable(): MemoryChainDb {
    const db = this.db;
    if (!(db instanceof MemoryChainDb)) {
      throw new NotRewindable("snapshots and reverts need the in-memory store: this node keeps its chain in a --db store (LMDB), whose committed blocks are never rewound; run the devnet without --db to use them");
    }
    return db;
  }

  /** Records the head block and the pool; the id is what POST /devnet/revert takes. */
  snapshot(): { id: bigint; block: BlockRecord; pending: number } {
    this.checkRewindable();
    const head = this.head();
    const id = this.nextSnapshotId++;
    if (this.snapshots.size >= MAX_SNAPSHOTS) this.snapshots.delete(this.snapshots.keys().next().value!);
    this.snapshots.set(id, { id, height: head.height, block_hash: head.block_hash, pool: [...this.pool] });
    return { id, block: head, pending: this.pool.length };
  }

  /**
   * Rewinds the chain to snapshot `id`'s block, exactly: a new in-memory store is filled by
   * replaying the chain's own blocks from genesis through that block, each verified as `cbqs
   * replay` verifies a fixture (so every root after the revert is a fresh replay's), then it
   * replaces the store in one step; the pool becomes what it held at the snapshot. One unit per
   * replayed block (src/steps.ts): readers see the old chain, whole, until the swap. The snapshot
   * stays (revert to it again); those taken after it go, with the blocks they named.
   */
  *revertSteps(id: bigint): Steps<{ block: BlockRecord; from: BlockRecord; pending: number }> {
    const old = this.checkRewindable();
    const snap = this.snapshots.get(id);
    if (snap === undefined) {
      throw new SnapshotNotFound(id, MAX_SNAPSHOTS);
    }
    const from = this.head();
    const g = this.genesis;
    const fixture: Fixture = {
      name: "devnet-revert",
      description: "",
      genesis: { source: g.source, config: this.config, chain_instance_id: g.chain_instance_id, state_root: g.block.state_root },
      blocks: storedThrough(old, snap.height).map((b) => ({ ...b, gas_vectors_sha256: GAS_VECTORS_SHA256 })),
    };
    const db = new MemoryChainDb(old.retainBlocks);
    const rebuilt = yield* CbqsNode.importFixture(db, fixture);
    const block = db.head()!;
    if (!bytesEqual(block.block_hash, snap.block_hash)) throw new Error(`internal: the replayed chain ends at ${toHex(block.block_hash)}, not snapshot ${id}'s block`);
    this.store = db;
    this.engine = rebuilt.chain;
    this.pool = [...snap.pool];
    for (const later of [...this.snapshots.keys()]) if (later > id) this.snapshots.delete(later);
    // What they say was decided on the chain just rewound.
    this.messages.clear();
    this.droppedTxs.clear();
    // The old store is not closed: a GET /fixture still streaming reads its blocks to the end
    // (blocks never change once committed), and it is garbage once that answer is done.
    for (const l of this.listeners) l.rewound(block, from);
    return { block, from, pending: this.pool.length };
  }

  // ---- transactions by hash (GET /tx) -----------------------------------------------------------

  /** A queued transaction: its place in the pool (0 = next to be mined) and envelope. */
  pooled(hash: Uint8Array): { position: number; env: TxEnvelope } | undefined {
    const position = this.pool.findIndex((t) => bytesEqual(t.hash, hash));
    return position < 0 ? undefined : { position, env: this.pool[position]!.env };
  }

  /** The rejection message of a transaction this node included, while remembered. */
  rejectionMessage(hash: Uint8Array): string | undefined {
    return this.messages.get(toHex(hash));
  }

  /** Why a transaction was left out of the block at `height`, while remembered. */
  droppedTx(hash: Uint8Array): { reason: string; height: bigint } | undefined {
    return this.droppedTxs.get(toHex(hash));
  }
}

/** Every stored block from 1 through `height`, ascending. */
function storedThrough(db: ChainDb, height: bigint): BlockRecord[] {
  return height === 0n ? [] : db.blocks({ from: 1n, to: height, order: "asc", limit: Number.MAX_SAFE_INTEGER });
}

let emptyRoots: { tx_root: Uint8Array; receipt_root: Uint8Array; logs_root: Uint8Array } | undefined;

/** The roots of a block without transactions, computed once: blockRoots of nothing, as blockResults computes them. */
function emptyBlockRoots(): { tx_root: Uint8Array; receipt_root: Uint8Array; logs_root: Uint8Array } {
  const r = (emptyRoots ??= blockRoots([], []));
  // Copies: a record's roots are its own, whatever a reader of one does with it.
  return { tx_root: r.tx_root.slice(), receipt_root: r.receipt_root.slice(), logs_root: r.logs_root.slice() };
}

/** A map that forgets its oldest entry beyond `size`. */
class Recent<V> {
  private readonly entries = new Map<string, V>();
  constructor(private readonly size: number) {}
  get(key: string): V | undefined {
    return this.entries.get(key);
  }
  set(key: string, value: V): void {
    this.entries.delete(key);
    if (this.entries.size >= this.size) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, value);
  }
  clear(): void {
    this.entries.clear();
  }
}

function configOf(source: Uint8Array, path?: string): GenesisConfig {
  try {
    return genesisFromSource(source, path);
  } catch (err) {
    throw new NodeInputError(`invalid genesis: ${(err as Error).message}`);
  }
}

/** Height 0: the genesis header (docs/reference/formats/transaction.md "Block hash"), no transactions. */
export function genesisRecord(source: Uint8Array, chainInstanceId: Uint8Array, timestamp: bigint, stateRoot: Uint8Array): GenesisRecord {
  return {
    source,
    chain_instance_id: chainInstanceId,
    block: {
      height: 0n,
      timestamp,
      block_hash: genesisHash(chainInstanceId, timestamp, stateRoot),
      parent_hash: ZERO_HASH,
      state_root: stateRoot,
      tx_root: txRoot([]),
      receipt_root: receiptRoot([]),
      logs_root: logsRoot([]),
      // effective_rent_height(0) = 0 − coverage(0) = 0: genesis is never paused.
      effective_rent_height: 0n,
      transactions: [],
      receipts: [],
    },
  };
}

/** The record of a block the replay executed and verified. */
export function executedRecord(height: bigint, timestamp: bigint, parent: Uint8Array, raws: Uint8Array[], x: ExecutedBlock): BlockRecord {
  return {
    height,
    timestamp,
    block_hash: x.blockHash,
    parent_hash: parent,
    state_root: x.stateRoot,
    tx_root: x.results.tx_root,
    receipt_root: x.results.receipt_root,
    logs_root: x.results.logs_root,
    effective_rent_height: x.effectiveRentHeight,
    transactions: raws,
    receipts: x.results.receipts,
  };
}

function* importBlocks(db: ChainDb, replay: Replay, fixture: Fixture, from: number, onBlock?: (block: BlockRecord) => void): Steps<void> {
  for (let i = from; i < fixture.blocks.length; i++) {
    const b = fixture.blocks[i]!;
    let result: ReturnType<Replay["block"]>;
    try {
      result = replay.block(i);
    } catch (err) {
      if (err instanceof ReplayInputError) throw new NodeInputError(err.message);
      throw err;
    }
    if (result.mismatch !== null) throw new ImportMismatch(result.mismatch);
    const record = executedRecord(b.height, b.timestamp, db.head()!.block_hash, b.transactions, result.executed);
    db.commitBlock(record);
    onBlock?.(record);
    yield;
  }
}
