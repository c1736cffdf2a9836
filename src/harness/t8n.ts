// `t8n` (geth `evm t8n` convention): one block's state transition from an explicit pre-state
// (a cbqs-state-dump/v1 "alloc"), a list of raw envelopes and an env, to a result (roots,
// receipts, rejected transactions) and the post-state dump. Shapes: docs/reference/formats/fixture.md.
//
// The QMDB root depends on the history of batches, not only on the key set (CIP-4 §5.1,
// D-0074): t8n commits the whole pre-state as ONE batch at height − 1, so its
// state_root equals a chain's only when that chain reached the same state the same way.
// Compare t8n results across implementations by tx/receipt/logs roots, receipts and the
// post-state dump; compare state_root only between tools that both follow this convention.
import { MAX_BLOCK_TRANSACTIONS, MAX_ENVELOPE_BYTES } from "../bounds.js";
import { toHex } from "../bytes.js";
import { array, decimal, format, hex, object, sha256Hex, string } from "../json/fields.js";
import { JsonError, type Json } from "../json/parse.js";
import type { GenesisConfig } from "../engine/inputs.js";
import type { TxEnvelope } from "../chain/envelope.js";
import { Chain, type BlockOutcome, type TxOutcome } from "../engine/chain.js";
import { GAS_VECTORS_SHA256 } from "../scenario/run.js";
import type { BlockBatch, CommitResult, StateStore } from "../../state/kv/interface.js";
import { MemoryStateStore } from "../../state/store/store.js";
import { createStateCommitment } from "../../state/qmdb/index.js";
import { headerHash } from "../chain/block.js";
import { blockResults, loadReceiptJson, receiptJson, type BlockResults } from "../chain/receipts.js";
import { decodeTransaction, firstNotIncludable, startNonces, TxInputError } from "./execute.js";
import { finish, type Steps } from "../steps.js";

export const T8N_RESULT_FORMAT = "cbqs-t8n-result/v1";

export interface T8nEnv {
  height: bigint;
  timestamp: bigint;
  chain_id: bigint;
  chain_instance_id: Uint8Array;
  governance: Uint8Array;
  cycle_price: bigint;
  cell_price: bigint;
  /** When given, the result carries the emulator block hash (docs/reference/formats/transaction.md). */
  parent_hash: Uint8Array | null;
}

const ENV_REQUIRED = ["height", "timestamp", "chain_id", "chain_instance_id", "governance"];
const ENV_OPTIONAL = ["cycle_price", "cell_price", "parent_hash"];

/** The `--input.env` document; every problem is a JsonError at its path ($.height, …). */
export function parseEnv(v: unknown): T8nEnv {
  const o = object(v, "$", ENV_REQUIRED, ENV_OPTIONAL);
  const env: T8nEnv = {
    height: decimal(o["height"], "$.height"),
    timestamp: decimal(o["timestamp"], "$.timestamp"),
    chain_id: decimal(o["chain_id"], "$.chain_id"),
    chain_instance_id: hex(o["chain_instance_id"], "$.chain_instance_id", 32),
    governance: hex(o["governance"], "$.governance", 20),
    cycle_price: o["cycle_price"] === undefined ? 0n : decimal(o["cycle_price"], "$.cycle_price"),
    cell_price: o["cell_price"] === undefined ? 0n : decimal(o["cell_price"], "$.cell_price"),
    parent_hash: o["parent_hash"] === undefined || o["parent_hash"] === null ? null : hex(o["parent_hash"], "$.parent_hash", 32),
  };
  if (env.height === 0n) throw new JsonError("$.height", "block 0 is genesis; t8n executes a block at height >= 1");
  return env;
}

/** The `--input.txs` document: a JSON array of at most 65,536 0x-hex envelopes. */
export function parseTxs(v: unknown): Uint8Array[] {
  return array(v, "$", MAX_BLOCK_TRANSACTIONS).map((t, i) => hex(t, `$[${i}]`, undefined, MAX_ENVELOPE_BYTES));
}

/**
 * Chain over an existing pre-state (Chain.resume); executeBlock reads only governance,
 * cycle_price and cell_price from the config, so the rest is neutral.
 */
function resumeChain(env: T8nEnv, store: StateStore): Chain {
  const config: GenesisConfig = {
    chain_id: env.chain_id,
    timestamp: env.timestamp,
    block_time_seconds: 0n,
    governance: env.governance,
    params: new Map(),
    accounts: [],
    cycle_price: env.cycle_price,
    cell_price: env.cell_price,
  };
  return Chain.resume(config, env.chain_instance_id, store);
}

export interface T8nRun {
  result: Record<string, unknown>;
  store: MemoryStateStore;
  /** The included transactions' envelopes and results, for traces. */
  included: { envelopes: TxEnvelope[]; outcomes: TxOutcome[]; results: BlockResults; indices: number[] };
}

/**
 * Transactions that cannot be in the block (undecodable, another chain, wrong nonce, a keyless
 * sender, a sender who cannot pay the fee at the reservation) are "rejected" and left out; the
 * rest execute, and CBQS rejections are receipts (status rejected) as on chain. A wrong nonce
 * or an unpayable fee is only known after the earlier transactions ran, so the block is re-run
 * from the pre-state without it until every transaction is includable.
 */
export function transition(
  alloc: Iterable<readonly [Uint8Array, Uint8Array]>,
  txs: readonly Uint8Array[],
  env: T8nEnv,
  wrapStore: (s: MemoryStateStore) => StateStore = (s) => s,
  /** Sees the count of pre-state entries committed so far (a large alloc takes a while). */
  onPreState?: (entries: number) => void,
): T8nRun {
  return finish(transitionSteps(alloc, txs, env, wrapStore, onPreState));
}

/** transition unit by unit: a unit is a slice of the pre-state, its commit, or the block (src/steps.ts). */
export function* transitionSteps(
  alloc: Iterable<readonly [Uint8Array, Uint8Array]>,
  txs: readonly Uint8Array[],
  env: T8nEnv,
  wrapStore: (s: MemoryStateStore) => StateStore = (s) => s,
  onPreState?: (entries: number) => void,
): Steps<T8nRun> {
  let store: MemoryStateStore | null = null;
  // Each attempt commits the pre-state afresh: a one-shot iterator (a store's entries()) would be
  // empty the second time, so it is read into a list once.
  const oneShot = (alloc as { [Symbol.iterator]: () => unknown })[Symbol.iterator]() === alloc;
  const pre = oneShot ? [...alloc] : alloc;
  const block = yield* includableBlockSteps(txs, env, function* () {
    store = yield* MemoryStateStore.fromEntriesSteps(pre, env.height - 1n, createStateCommitment(), onPreState);
    yield;
    return wrapStore(store);
  });
  return { result: resultJson(env, block), store: store!, included: included(block) };
}

/**
 * One block of a t8n session (`cbqs t8n --server`, docs/reference/formats/t8n-server.md): the block executes on
 * `store` itself, which keeps its history, so the state_root is the one a chain reaching this
 * state block by block reports (not the one-batch pre-state root of transition). Until every
 * transaction is includable the block's batch is held, not committed, so a re-run without a
 * left-out transaction starts from the same state; a block that fails leaves `store` as it was.
 */
export function sessionBlock(store: MemoryStateStore, txs: readonly Uint8Array[], env: T8nEnv): Omit<T8nRun, "store"> {
  const held = new HeldCommitStore(store);
  const block = finish(
    includableBlockSteps(txs, env, function* () {
      held.held = null;
      return held;
    }),
  );
  const { stateRoot } = store.commitBlock(held.held!);
  const committed = { ...block, outcome: { ...block.outcome, stateRoot } };
  return { result: resultJson(env, committed), included: included(committed) };
}

/** Passes everything to `inner` except commitBlock, which keeps the batch for the caller to commit (or drop). */
class HeldCommitStore implements StateStore {
  held: BlockBatch | null = null;
  constructor(private readonly inner: MemoryStateStore) {}
  read(key: Uint8Array): Uint8Array | undefined {
    return this.inner.read(key);
  }
  root(): Uint8Array {
    return this.inner.root();
  }
  beginBlock(height: bigint): BlockBatch {
    return this.inner.beginBlock(height);
  }
  commitBlock(batch: BlockBatch): CommitResult {
    this.held = batch;
    // Not a root: sessionBlock replaces it with the root of the real commit.
    return { height: batch.height, stateRoot: new Uint8Array(32) };
  }
  entries(): Iterable<[Uint8Array, Uint8Array]> {
    return this.inner.entries();
  }
}

interface ExecutedBlock {
  outcome: BlockOutcome;
  candidates: Array<{ index: number; raw: Uint8Array; env: TxEnvelope }>;
  rejected: Array<{ index: number; error: string }>;
  results: BlockResults;
}

/**
 * Executes the block on the store `preState` gives (a fresh one per attempt), leaving out
 * transactions that cannot be included one at a time until every remaining one can.
 */
function* includableBlockSteps(txs: readonly Uint8Array[], env: T8nEnv, preState: () => Steps<StateStore>): Steps<ExecutedBlock> {
  const rejected: Array<{ index: number; error: string }> = [];
  let candidates: Array<{ index: number; raw: Uint8Array; env: TxEnvelope }> = [];
  txs.forEach((raw, index) => {
    try {
      candidates.push({ index, raw, env: decodeTransaction(raw, index, env.chain_id) });
    } catch (err) {
      if (!(err instanceof TxInputError)) throw err;
      rejected.push({ index, error: err.message });
    }
  });
  for (;;) {
    const chain = resumeChain(env, yield* preState());
    const envelopes = candidates.map((c) => c.env);
    const nonces = startNonces(chain, envelopes);
    const outcome = chain.executeBlock({ height: env.height, timestamp: env.timestamp, txs: envelopes.map((e) => e.tx) });
    const bad = firstNotIncludable(envelopes, outcome, nonces);
    if (bad !== null) {
      const c = candidates[bad.index]!;
      rejected.push({ index: c.index, error: bad.reason });
      candidates = candidates.filter((_, i) => i !== bad.index);
      continue;
    }
    return { outcome, candidates, rejected, results: blockResults(candidates.map((c) => c.raw), outcome) };
  }
}

/** The cbqs-t8n-result/v1 document of an executed block. */
function resultJson(env: T8nEnv, block: ExecutedBlock): Record<string, unknown> {
  return blockResultJson(env, block.outcome, block.results, block.candidates.map((c) => c.index), block.rejected);
}

/**
 * The cbqs-t8n-result/v1 document of a block `outcome` whose receipts are `results`, where the
 * i-th included transaction was input number `indices[i]` and `rejected` were left out.
 */
export function blockResultJson(env: T8nEnv, outcome: BlockOutcome, results: BlockResults, indices: readonly number[], rejected: ReadonlyArray<{ index: number; error: string }>): Record<string, unknown> {
  const result: Record<string, unknown> = {
    format: T8N_RESULT_FORMAT,
    height: env.height.toString(),
    state_root: toHex(outcome.stateRoot),
    tx_root: toHex(results.tx_root),
    receipt_root: toHex(results.receipt_root),
    logs_root: toHex(results.logs_root),
    effective_rent_height: outcome.effectiveRentHeight.toString(),
    gas_vectors_sha256: GAS_VECTORS_SHA256,
  };
  if (env.parent_hash !== null) {
    result["block_hash"] = toHex(headerHash(env.chain_instance_id, env.height, env.timestamp, env.parent_hash, outcome.stateRoot, results));
  }
  result["receipts"] = results.receipts.map((r, i) => ({ index: indices[i]!.toString(), ...receiptJson(r, outcome.outcomes[i]!.error?.message) }));
  result["rejected"] = [...rejected].sort((a, b) => a.index - b.index).map((r) => ({ index: r.index.toString(), error: r.error }));
  return result;
}

function included(block: ExecutedBlock): T8nRun["included"] {
  return { envelopes: block.candidates.map((c) => c.env), outcomes: block.outcome.outcomes, results: block.results, indices: block.candidates.map((c) => c.index) };
}

const RESULT_REQUIRED = ["format", "height", "state_root", "tx_root", "receipt_root", "logs_root", "effective_rent_height", "gas_vectors_sha256", "receipts", "rejected"];

/** Reads a cbqs-t8n-result/v1 document back (`cbqs diff`), strictly; returns it as read. */
export function loadT8nResult(doc: unknown): Record<string, Json> {
  const r = object(doc, "$", RESULT_REQUIRED, ["block_hash"]);
  format(r, T8N_RESULT_FORMAT);
  decimal(r["height"], "$.height");
  decimal(r["effective_rent_height"], "$.effective_rent_height");
  for (const root of ["state_root", "tx_root", "receipt_root", "logs_root"]) hex(r[root], `$.${root}`, 32);
  if (r["block_hash"] !== undefined) hex(r["block_hash"], "$.block_hash", 32);
  sha256Hex(r["gas_vectors_sha256"], "$.gas_vectors_sha256");
  array(r["receipts"], "$.receipts", MAX_BLOCK_TRANSACTIONS).forEach((x, i) => loadReceiptJson(x, `$.receipts[${i}]`, true));
  array(r["rejected"], "$.rejected", MAX_BLOCK_TRANSACTIONS).forEach((x, i) => {
    const o = object(x, `$.rejected[${i}]`, ["index", "error"]);
    decimal(o["index"], `$.rejected[${i}].index`, BigInt(MAX_BLOCK_TRANSACTIONS - 1));
    string(o["error"], `$.rejected[${i}].error`);
  });
  return r;
}
