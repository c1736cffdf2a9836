// The chain a `cbqs node` serves: opened from a genesis file, a fixture (imported block by block,
// every root verified exactly as `cbqs replay` does) or its own store, then extended by the
// devnet (a transaction pool and block production). Every block runs through the engine's block
// execution (src/engine/chain.ts via src/harness/replay.ts and src/chain/*), so roots, receipts
// and block hashes are the ones `cbqs replay` and `cbqs fill` produce, and every block is one
// ChainDb commit (state/chain-db/chain-db.ts).
import { StoreError } from "../../state/lmdb/errors.js";
import { bytesEqual, toHex } from "../bytes.js";
import { genesisHash, headerHash } from "../chain/block.js";
import { txHash, type TxEnvelope } from "../chain/envelope.js";
import { blockResults, receiptJson } from "../chain/receipts.js";
import type { GenesisConfig } from "../engine/inputs.js";
import { Chain, isKeylessAccount } from "../engine/chain.js";
import { GenesisError } from "../engine/errors.js";
import { U64_MAX } from "../engine/math.js";
import { decodeTransaction, firstNotIncludable, startNonces, TxInputError } from "../harness/execute.js";
import type { Fixture } from "../harness/fixture.js";
import { genesisFromSource } from "../harness/genesis.js";
import { Replay, ReplayInputError, type ExecutedBlock, type Mismatch } from "../harness/replay.js";
import type { BlockRecord, ChainDb, GenesisRecord } from "../../state/chain-db/chain-db.js";
import { logsRoot, receiptRoot, txRoot } from "../../state/roots/roots.js";
import { DryRunStore } from "../../state/chain-db/dry-run.js";
import { compareStoredChain, historyStart } from "./stored-chain.js";
import { badRequest, RequestError } from "./errors.js";
import { finish, type Steps } from "../steps.js";

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

const ZERO_HASH = new Uint8Array(32);

export type NodeStart = { kind: "genesis"; source: Uint8Array } | { kind: "fixture"; fixture: Fixture } | { kind: "store" };

interface PoolTx {
  raw: Uint8Array;
  env: TxEnvelope;
  hash: Uint8Array;
}

export interface MinedBlock {
  block: BlockRecord;
  /** Rejection messages of the block's transactions (receipts carry only code and name). */
  messages: Array<string | undefined>;
  /** Pool transactions left out because no block may contain them (a sender who cannot pay the fee at the reservation, a nonce another left-out transaction skipped). */
  dropped: Array<{ tx_hash: string; reason: string }>;
}

export class CbqsNode {
  private readonly pool: PoolTx[] = [];
  /** Told of every produced block, whoever asked for it (the timer or POST /mine): the node's log. */
  onMined: ((mined: MinedBlock) => void) | undefined;
  /**
   * Told when the store refused a produced block (a full disk, CIP-4 §6.4): the store is at the
   * block before it and the ChainDb refuses every further write, so the node must stop.
   */
  onStoreFailed: ((err: StoreError) => void) | undefined;

  private constructor(
    readonly db: ChainDb,
    readonly genesis: GenesisRecord,
    readonly config: GenesisConfig,
    /** The engine over the head state: reads of accounts, streams, providers. */
    readonly chain: Chain,
  ) {}

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
   * (src/node/stored-chain.ts; a difference is the replay mismatch, exit 1, nothing written);
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

  head(): BlockRecord {
    return this.db.head()!;
  }

  /**
   * The block the node's history starts at (docs/node.md "history_start"): the feed has nothing a
   * follower could verify below it.
   */
  historyStart(): BlockRecord {
    return historyStart(this.db);
  }

  get pending(): number {
    return this.pool.length;
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
   * Queues a raw envelope (docs/transactions.md) after checking it decodes, names this chain, is
   * not from a keyless account (no block may contain it) and carries its sender's next nonce
   * (account nonce plus the sender's queued transactions).
   */
  submit(raw: Uint8Array): { tx_hash: string; nonce: string } {
    if (this.pool.length >= MAX_POOL_TXS) throw new RequestError(503, "tx_pool_full", `the pool holds ${MAX_POOL_TXS} transactions; mine a block first`);
    let env: TxEnvelope;
    try {
      env = decodeTransaction(raw, 0, this.config.chain_id);
    } catch (err) {
      if (err instanceof TxInputError) throw badRequest("invalid_transaction", err.message);
      throw err;
    }
    if (isKeylessAccount(env.tx.from)) {
      throw badRequest("not_includable", `${toHex(env.tx.from)} is a keyless system account and cannot send transactions`);
    }
    const queued = this.pendingFrom(env.tx.from);
    const expected = this.chain.account(env.tx.from).nonce + BigInt(queued);
    if (env.nonce !== expected) {
      throw badRequest("invalid_nonce", `nonce ${env.nonce} is not the sender's next nonce ${expected} (account nonce plus ${queued} queued)`);
    }
    const hash = txHash(raw);
    this.pool.push({ raw, env, hash });
    return { tx_hash: toHex(hash), nonce: env.nonce.toString() };
  }

  /**
   * Produces the next block (or the block at `height`, skipping the heights between, as fixtures
   * may) from the pool, in arrival order. Its timestamp is the genesis timestamp + height ×
   * block_time_seconds, never earlier than the head's: deterministic, no wall clock.
   */
  mine(height?: bigint): MinedBlock {
    const head = this.head();
    const h = height ?? head.height + 1n;
    if (h <= head.height || h > U64_MAX) throw badRequest("invalid_height", `height ${h} is not above the head ${head.height} (and a u64)`);
    const derived = this.config.timestamp + h * this.config.block_time_seconds;
    if (derived > U64_MAX) throw badRequest("invalid_height", `the timestamp of height ${h} exceeds u64`);
    const timestamp = derived < head.timestamp ? head.timestamp : derived;
    const { included, dropped } = this.selectTxs(head, h, timestamp);
    const envelopes = included.map((t) => t.env);
    const nonces = startNonces(this.chain, envelopes);
    const outcome = this.chain.executeBlock({ height: h, timestamp, txs: envelopes.map((e) => e.tx) });
    if (firstNotIncludable(envelopes, outcome, nonces) !== null) throw new Error("internal: the produced block disagrees with its dry run");
    const raws = included.map((t) => t.raw);
    const results = blockResults(raws, outcome);
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
    try {
      this.db.commitBlock(block);
    } catch (err) {
      if (err instanceof StoreError) this.onStoreFailed?.(err);
      throw err;
    }
    const mined = { block, messages: outcome.outcomes.map((o) => o.error?.message), dropped };
    this.onMined?.(mined);
    return mined;
  }

  /**
   * The pool's first MAX_BLOCK_TXS transactions, minus those no block may contain: one the engine
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
    let included = this.pool.splice(0, MAX_BLOCK_TXS);
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

  /** The mined block as the devnet reports it (POST /mine). */
  static minedJson(m: MinedBlock): Record<string, unknown> {
    return {
      height: m.block.height.toString(),
      block_hash: toHex(m.block.block_hash),
      state_root: toHex(m.block.state_root),
      timestamp: m.block.timestamp.toString(),
      effective_rent_height: m.block.effective_rent_height.toString(),
      receipts: m.block.receipts.map((r, i) => receiptJson(r, m.messages[i])),
      dropped: m.dropped,
    };
  }
}

function configOf(source: Uint8Array, path?: string): GenesisConfig {
  try {
    return genesisFromSource(source, path);
  } catch (err) {
    throw new NodeInputError(`invalid genesis: ${(err as Error).message}`);
  }
}

/** Height 0: the genesis header (docs/transactions.md "Block hash"), no transactions. */
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
