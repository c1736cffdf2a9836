// Fixture replay (CIP-4 §6.1 step 5 "roots must match block header"): re-execute from genesis,
// block by block, and compare every expected value; stop at the first difference. Input that
// cannot be executed at all (undecodable envelopes, another chain's envelopes, an invalid
// genesis) is a ReplayInputError, distinct from a mismatch.
import { basename } from "node:path";
import { echo } from "../bounds.js";
import { bytesEqual, toHex } from "../bytes.js";
import { genesisHash, headerHash } from "../chain/block.js";
import type { TxEnvelope } from "../chain/envelope.js";
import { blockResults, type BlockResults, type TxReceipt } from "../chain/receipts.js";
import { Chain, type BlockOutcome, type TxOutcome } from "../engine/chain.js";
import { ALL_FAST_PATHS, enginePaths, type EngineChoice, type EnginePaths } from "../engine/fast-paths.js";
import { GenesisError } from "../engine/errors.js";
import { GAS_VECTORS_SHA256 } from "../scenario/run.js";
import type { StateStore } from "../../state/kv/interface.js";
import { diffDumps, type DumpEntry } from "../../state/kv/dump.js";
import { MemoryStateStore } from "../../state/store/store.js";
import { createStateCommitment } from "../../state/qmdb/index.js";
import { BatchRefused, WorkerCommitment } from "../../state/commitment/worker-commitment.js";
import { blockRoots, rootsJob, type BlockRoots, type Receipt } from "../../state/roots/roots.js";
import { allocateSignatureRing } from "../crypto/signature-ring.js";
import { SignatureCheckedStore, SpeculativeSignatures } from "./signatures.js";
import { decodeTransaction, firstNotIncludable, startNonces, TxInputError } from "./execute.js";
import type { Fixture, FixtureBlock } from "./fixture.js";
import { changedKey } from "./diff.js";
import { registryRecords } from "./records.js";
import { readFixtureSteps } from "./documents.js";
import { finish, type Steps } from "../steps.js";
import { InputError } from "../json/read.js";
import { Progress, type ProgressMode } from "./progress.js";

export interface Mismatch {
  /** 0 for genesis. */
  height: bigint;
  /** JSON path of the expected value in the fixture. */
  path: string;
  /** The field in words: "state_root", "receipts[2].error.code", … */
  field: string;
  expected: string;
  actual: string;
  /** For a state difference: the differing keys with decoded values. */
  details: string[];
}

export class ReplayInputError extends Error {
  override name = "ReplayInputError";
  constructor(
    readonly path: string,
    readonly height: bigint | null,
    readonly reason: string,
  ) {
    super(`${height === null ? "" : `block ${height} `}${path}: ${reason}`);
  }
}

/** What executing one fixture block produced, for comparison and for traces. */
export interface ExecutedBlock {
  envelopes: TxEnvelope[];
  outcomes: TxOutcome[];
  results: BlockResults;
  stateRoot: Uint8Array;
  effectiveRentHeight: bigint;
  blockHash: Uint8Array;
}

/** A block executed by `Replay.execute`, not yet compared (`Replay.check`). */
export interface ExecutedHalf {
  index: number;
  envelopes: TxEnvelope[];
  nonces: Map<string, bigint>;
  outcome: BlockOutcome;
  results: BlockResults;
}

export const newStore = (): MemoryStateStore => new MemoryStateStore(createStateCommitment());

export class Replay {
  private parent: Uint8Array;
  /** How `execute` gets a block's tx/receipt/logs roots (a pipelined replay defers them to its worker). */
  rootsOf: (txHashes: readonly Uint8Array[], receipts: readonly Receipt[]) => BlockRoots = blockRoots;

  private constructor(
    readonly fixture: Fixture,
    readonly chain: Chain,
    readonly store: StateStore,
  ) {
    this.parent = genesisHash(chain.chainInstanceId, fixture.genesis.config.timestamp, chain.genesisStateRoot);
  }

  /** The hash of the last block checked (genesis before any): the next block's parent. */
  get parentHash(): Uint8Array {
    return this.parent;
  }

  /** Commits genesis; a genesis the engine refuses is unusable input. `paths`: the chain's fast paths. */
  static start(fixture: Fixture, store: StateStore = newStore(), paths: EnginePaths = enginePaths(ALL_FAST_PATHS)): { replay: Replay; mismatch: Mismatch | null } {
    let chain: Chain;
    try {
      chain = Chain.genesis(fixture.genesis.config, fixture.genesis.source, store, paths);
    } catch (err) {
      if (err instanceof GenesisError) throw new ReplayInputError("$.genesis.source", null, `invalid genesis: ${err.message}`);
      throw err;
    }
    const replay = new Replay(fixture, chain, store);
    const g = fixture.genesis;
    const mismatch =
      differs(0n, "$.genesis.chain_instance_id", "chain_instance_id", g.chain_instance_id, chain.chainInstanceId) ??
      differs(0n, "$.genesis.state_root", "genesis state_root", g.state_root, chain.genesisStateRoot);
    return { replay, mismatch };
  }

  /**
   * Continues on a store that already holds this chain up to its last commit, verified earlier
   * (a node or follower restarting from its store): the next block's parent is `parent`.
   */
  static resume(fixture: Fixture, store: StateStore, parent: Uint8Array, paths: EnginePaths = enginePaths(ALL_FAST_PATHS)): Replay {
    const replay = new Replay(fixture, Chain.resume(fixture.genesis.config, fixture.genesis.chain_instance_id, store, paths), store);
    replay.parent = parent;
    return replay;
  }

  /** Executes fixture block `index` and returns what it produced plus the first mismatch. */
  block(index: number): { executed: ExecutedBlock; mismatch: Mismatch | null } {
    return this.check(this.execute(index));
  }

  /**
   * The first half of `block`: decodes and executes block `index` and derives its receipts and
   * roots; nothing here reads the new state root (a deferred commitment may not know it yet).
   */
  execute(index: number): ExecutedHalf {
    const b = this.fixture.blocks[index]!;
    const path = `$.blocks[${index}]`;
    const chainId = this.fixture.genesis.config.chain_id;
    const envelopes = b.transactions.map((raw, i) => {
      try {
        return decodeTransaction(raw, i, chainId);
      } catch (err) {
        if (err instanceof TxInputError) throw new ReplayInputError(`${path}.transactions[${i}]`, b.height, err.message);
        throw err;
      }
    });
    const nonces = startNonces(this.chain, envelopes);
    const outcome = this.chain.executeBlock({ height: b.height, timestamp: b.timestamp, txs: envelopes.map((e) => e.tx) });
    // A transaction the engine excluded has no receipt; check() reports it before any receipt
    // or root is compared, so here it only needs a stand-in.
    const receiptable = outcome.outcomes.some((o) => o.status === "excluded")
      ? { ...outcome, outcomes: outcome.outcomes.map((o) => (o.status === "excluded" ? { ...o, status: "ok" as const, error: null } : o)) }
      : outcome;
    return { index, envelopes, nonces, outcome, results: blockResults(b.transactions, receiptable, this.rootsOf) };
  }

  /**
   * The second half: the block hash (from the new state root) and the comparison with the
   * fixture. Halves are checked in execution order (each block hash chains on the last).
   */
  check(half: ExecutedHalf): { executed: ExecutedBlock; mismatch: Mismatch | null } {
    const { index, envelopes, nonces, outcome, results } = half;
    const b = this.fixture.blocks[index]!;
    const path = `$.blocks[${index}]`;
    const blockHash = headerHash(this.chain.chainInstanceId, b.height, b.timestamp, this.parent, outcome.stateRoot, results);
    this.parent = blockHash;
    const executed: ExecutedBlock = { envelopes, outcomes: outcome.outcomes, results, stateRoot: outcome.stateRoot, effectiveRentHeight: outcome.effectiveRentHeight, blockHash };
    const bad = firstNotIncludable(envelopes, outcome, nonces);
    const at = bad === null ? "" : `${path}.transactions[${bad.index}]`;
    const mismatch =
      (bad === null
        ? null
        : bad.kind === "nonce"
          ? mismatchOf(b.height, at, `transactions[${bad.index}].nonce`, bad.envelope.toString(), bad.account.toString())
          : mismatchOf(b.height, at, `transactions[${bad.index}]`, "an includable transaction", bad.reason)) ?? this.compare(b, path, executed);
    return { executed, mismatch };
  }

  private compare(b: FixtureBlock, path: string, x: ExecutedBlock): Mismatch | null {
    const h = b.height;
    const receipts = receiptsMismatch(h, path, b.receipts, x.results.receipts);
    if (receipts !== null) return receipts;
    const state = differs(h, `${path}.state_root`, "state_root", b.state_root, x.stateRoot);
    if (state !== null) {
      if (b.post_state === undefined) state.details = ["(the fixture has no post_state at this block to name the differing keys)"];
      else {
        const keys = this.stateDiff(b.post_state);
        state.details = keys.length > 0 ? keys : ["(our state equals the fixture's post_state: only the expected root differs)"];
      }
      return state;
    }
    return (
      differs(h, `${path}.tx_root`, "tx_root", b.tx_root, x.results.tx_root) ??
      differs(h, `${path}.receipt_root`, "receipt_root", b.receipt_root, x.results.receipt_root) ??
      differs(h, `${path}.logs_root`, "logs_root", b.logs_root, x.results.logs_root) ??
      (b.effective_rent_height === x.effectiveRentHeight
        ? null
        : mismatchOf(h, `${path}.effective_rent_height`, "effective_rent_height", b.effective_rent_height.toString(), x.effectiveRentHeight.toString())) ??
      (b.gas_vectors_sha256 === GAS_VECTORS_SHA256
        ? null
        : mismatchOf(h, `${path}.gas_vectors_sha256`, "gas_vectors_sha256", b.gas_vectors_sha256, GAS_VECTORS_SHA256)) ??
      differs(h, `${path}.block_hash`, "block_hash", b.block_hash, x.blockHash) ??
      (b.post_state === undefined ? null : this.postStateMismatch(h, `${path}.post_state`, b.post_state))
    );
  }

  /** Differing keys from the fixture's post-state to ours, decoded (STORE's diffDumps). */
  private stateDiff(expected: ReadonlyArray<readonly [Uint8Array, Uint8Array]>): string[] {
    const d = diffDumps(expected, [...this.store.entries()], registryRecords);
    return [
      ...d.added.map((e) => `unexpected key ${e.key} = ${view(e)}`),
      ...d.removed.map((e) => `missing key ${e.key} (expected ${view(e)})`),
      ...d.changed.map((c) => changedKey(c.key, c.before, c.after)),
    ];
  }

  /** The state root matched but the dump differs: the fixture's dump is inconsistent. */
  private postStateMismatch(h: bigint, path: string, expected: ReadonlyArray<readonly [Uint8Array, Uint8Array]>): Mismatch | null {
    const actual = [...this.store.entries()];
    const same = actual.length === expected.length && actual.every(([k, v], i) => bytesEqual(k, expected[i]![0]) && bytesEqual(v, expected[i]![1]));
    if (same) return null;
    const details = this.stateDiff(expected);
    return { height: h, path, field: "post_state", expected: "the fixture's post_state dump", actual: `${details.length} ${details.length === 1 ? "key differs" : "keys differ"}`, details };
  }
}

const view = (e: DumpEntry): string => JSON.stringify(e.decoded?.value ?? e.value);

export function mismatchOf(height: bigint, path: string, field: string, expected: string, actual: string): Mismatch {
  return { height, path, field, expected, actual, details: [] };
}

export function differs(height: bigint, path: string, field: string, expected: Uint8Array, actual: Uint8Array): Mismatch | null {
  return bytesEqual(expected, actual) ? null : mismatchOf(height, path, field, toHex(expected), toHex(actual));
}

/**
 * The first of a block's receipts (`actual`, as many as the fixture's `expected`) that differs
 * from the fixture's, field by field: tx_hash, status, error code and name, events, cycles, cells.
 */
export function receiptsMismatch(h: bigint, blockPath: string, expected: readonly TxReceipt[], actual: readonly TxReceipt[]): Mismatch | null {
  for (let i = 0; i < expected.length; i++) {
    const [e, a] = [expected[i]!, actual[i]!];
    if (sameReceipt(e, a)) continue;
    const m = compareReceipt(h, `${blockPath}.receipts[${i}]`, `receipts[${i}]`, e, a);
    if (m !== null) return m;
  }
  return null;
}

/** Quick equality of every field compareReceipt checks (it builds its messages only on a difference). */
function sameReceipt(e: TxReceipt, a: TxReceipt): boolean {
  if (!bytesEqual(e.tx_hash, a.tx_hash) || e.status !== a.status || e.cycles !== a.cycles || e.cells !== a.cells) return false;
  if ((e.error?.code ?? null) !== (a.error?.code ?? null) || (e.error?.name ?? null) !== (a.error?.name ?? null)) return false;
  if (e.events.length !== a.events.length) return false;
  return e.events.every((ee, k) => {
    const ae = a.events[k]!;
    return ee.topic === ae.topic && bytesEqual(ee.emitter, ae.emitter) && bytesEqual(ee.payload, ae.payload);
  });
}

function compareReceipt(h: bigint, path: string, field: string, e: TxReceipt, a: TxReceipt): Mismatch | null {
  const text = (p: string, f: string, ev: string, av: string) => (ev === av ? null : mismatchOf(h, `${path}${p}`, `${field}${f}`, ev, av));
  const m =
    differs(h, `${path}.tx_hash`, `${field}.tx_hash`, e.tx_hash, a.tx_hash) ??
    text(".status", ".status", e.status, a.status) ??
    text(".error.code", ".error.code", String(e.error?.code ?? "none"), String(a.error?.code ?? "none")) ??
    text(".error.name", ".error.name", e.error?.name ?? "none", a.error?.name ?? "none") ??
    text(".events", ".events.length", String(e.events.length), String(a.events.length));
  if (m !== null) return m;
  for (let k = 0; k < e.events.length; k++) {
    const ee = e.events[k]!;
    const ae = a.events[k]!;
    const p = `.events[${k}]`;
    const em =
      differs(h, `${path}${p}.emitter`, `${field}${p}.emitter`, ee.emitter, ae.emitter) ??
      text(`${p}.topic`, `${p}.topic`, ee.topic, ae.topic) ??
      differs(h, `${path}${p}.payload`, `${field}${p}.payload`, ee.payload, ae.payload);
    if (em !== null) return em;
  }
  return text(".cycles", ".cycles", e.cycles.toString(), a.cycles.toString()) ?? text(".cells", ".cells", e.cells.toString(), a.cells.toString());
}

export interface ReplayProgress {
  blocksDone: number;
  blocksTotal: number;
  txsDone: number;
  height: bigint;
  lastHeight: bigint;
}

export interface ReplayOutcome {
  blocks: number;
  txs: number;
  mismatch: Mismatch | null;
}

export interface ReplayOptions {
  toHeight?: bigint;
  store?: StateStore;
  onBlock?: (p: ReplayProgress, executed: ExecutedBlock) => void;
  /**
   * Merkleize the state on a second thread while the next block executes (see
   * `replayPipelined`); same outcome, same mismatch, same `onBlock` calls. Not with `store`.
   * A ReplayPipeline is that thread kept for consecutive replays (`true` starts and stops one).
   */
  pipeline?: boolean | ReplayPipeline;
  /** The engine's fast paths of a plain replay (src/engine/fast-paths.ts); all unless told. A pipelined replay takes them all. */
  engine?: EngineChoice;
  /** Pipelined only: block index `i` was executed again because a signature answered valid ahead of its check was invalid. */
  onReexecute?: (i: number) => void;
}

/** Replays `fixture` up to `toHeight` (inclusive), stopping at the first mismatch. */
export function replayFixture(fixture: Fixture, options: ReplayOptions = {}): ReplayOutcome {
  return finish(replayFixtureSteps(fixture, options));
}

/** replayFixture unit by unit: a unit is one block (src/steps.ts), also when pipelined. */
export function* replayFixtureSteps(fixture: Fixture, options: ReplayOptions = {}): Steps<ReplayOutcome> {
  if (options.pipeline !== undefined && options.pipeline !== false) {
    if (options.store !== undefined) throw new TypeError("a pipelined replay keeps its own store");
    if (options.pipeline instanceof ReplayPipeline) return yield* replayPipelined(fixture, options, options.pipeline);
    const pipeline = new ReplayPipeline();
    try {
      return yield* replayPipelined(fixture, options, pipeline);
    } finally {
      pipeline.close();
    }
  }
  const { replay, mismatch } = Replay.start(fixture, options.store, enginePaths(options.engine ?? ALL_FAST_PATHS));
  if (mismatch !== null) return { blocks: 0, txs: 0, mismatch };
  const blocks = blocksUpTo(fixture, options.toHeight);
  const lastHeight = blocks.length === 0 ? 0n : blocks[blocks.length - 1]!.height;
  let txs = 0;
  for (let i = 0; i < blocks.length; i++) {
    const { executed, mismatch } = replay.block(i);
    txs += blocks[i]!.transactions.length;
    options.onBlock?.({ blocksDone: i + 1, blocksTotal: blocks.length, txsDone: txs, height: blocks[i]!.height, lastHeight }, executed);
    if (mismatch !== null) return { blocks: i + 1, txs, mismatch };
    yield;
  }
  return { blocks: blocks.length, txs, mismatch: null };
}

const blocksUpTo = (fixture: Fixture, toHeight: bigint | undefined): FixtureBlock[] =>
  toHeight === undefined ? fixture.blocks : fixture.blocks.filter((b) => b.height <= toHeight);

/** Blocks a pipelined replay may execute ahead of the oldest block whose root is not known. */
const PIPELINE_DEPTH = 16;

/**
 * The replay with the state commitment's merkleization, the hashing of the tx/receipt/logs
 * roots and the Ed25519 checks on a worker thread (WorkerCommitment): the main thread executes
 * block N+1 — which needs block N's values, not its roots — while the worker computes block N's
 * roots. Blocks are checked strictly in order once their root is in, each with `Replay.check`, as
 * in the plain replay; the outcome depends on no thread timing.
 *
 * Signature checks answer "valid" at once (src/harness/signatures.ts). When the worker refuses a
 * block's state batch because one of its checks was invalid, the blocks before it are checked,
 * that block and every later one executed so far are undone (WorkerCommitment.rewind), and the
 * replay goes on from that block, executed again with the real verifier.
 *
 * The pipeline only vouches for blocks that match completely. At the first block that does not
 * (or whose post_state must be compared), it stops, and a mismatch is reported by the plain
 * replay run again from genesis to that block, so the report — state diff included, which needs
 * the state exactly at that block — is the plain replay's own.
 */
function* replayPipelined(fixture: Fixture, options: ReplayOptions, pipeline: ReplayPipeline): Steps<ReplayOutcome> {
  const { commitment, signatures } = pipeline;
  // A pipeline used before (or a replay abandoned half way) starts from an empty state again.
  if (pipeline.used) commitment.reset();
  pipeline.used = true;
  const storeOverCommitment = () => new SignatureCheckedStore(new MemoryStateStore(commitment), signatures, commitment);
  // The chain's verifier is the speculative one (signatures.speculating says whether it answers ahead).
  const paths = () => enginePaths(ALL_FAST_PATHS, signatures.verify);
  // Genesis verifies nothing: its batch carries no checks (not the last ones of a replay before).
  signatures.beginBlock();
  const started = Replay.start(fixture, storeOverCommitment(), paths());
  if (started.mismatch !== null) return { blocks: 0, txs: 0, mismatch: started.mismatch };
  let replay = started.replay;
  commitment.deferred = true;
  const speculate = (r: Replay): void => {
    r.rootsOf = (txHashes, receipts) => commitment.deferRoots(rootsJob(txHashes, receipts));
  };
  speculate(replay);
  const blocks = blocksUpTo(fixture, options.toHeight);
  const lastHeight = blocks.length === 0 ? 0n : blocks[blocks.length - 1]!.height;
  /** Executed blocks not yet checked, oldest first: the block, its state batch's job and its last job. */
  const queue: { half: ExecutedHalf; batchJob: number; lastJob: number }[] = [];
  let txs = 0;
  /** Executes block i (speculatively, or with the real verifier) and queues it. */
  const execute = (i: number, verified: boolean): void => {
    signatures.beginBlock();
    const batchJob = commitment.jobs;
    signatures.speculating = !verified;
    try {
      queue.push({ half: replay.execute(i), batchJob, lastJob: commitment.jobs - 1 });
    } finally {
      signatures.speculating = true;
    }
  };
  /** Checks the oldest executed block; false when it does not match. */
  const checkOldest = (): boolean => {
    commitment.settle(queue[0]!.lastJob + 1);
    const { half } = queue.shift()!;
    const { executed, mismatch } = replay.check(half);
    if (mismatch !== null) return false;
    const i = half.index;
    txs += blocks[i]!.transactions.length;
    options.onBlock?.({ blocksDone: i + 1, blocksTotal: blocks.length, txsDone: txs, height: blocks[i]!.height, lastHeight }, executed);
    return true;
  };
  /** Checks queued blocks until at most `depth` wait (and none whose root is in); the first mismatching index, or -1. */
  const drain = (depth: number): number => {
    while (queue.length > depth || (queue.length > 0 && commitment.ready(queue[0]!.lastJob))) {
      const index = queue[0]!.half.index;
      if (!checkOldest()) return index;
    }
    return -1;
  };
  /**
   * The worker refused a state batch (`refused`; `current`: the block being executed when it
   * was noticed): checks the blocks before the refused one, undoes it and everything after it,
   * and continues on the state before it. The refused block's index, or a mismatch before it.
   */
  const rewind = (refused: BatchRefused, current: number): { index: number } | { mismatchAt: number } => {
    const index = queue.find((q) => q.batchJob === refused.job)?.half.index ?? current;
    while (queue.length > 0 && queue[0]!.half.index < index) {
      const at = queue[0]!.half.index;
      if (!checkOldest()) return { mismatchAt: at };
    }
    const parent = replay.parentHash;
    commitment.rewind(refused.job);
    queue.length = 0;
    replay = Replay.resume(fixture, storeOverCommitment(), parent, paths());
    speculate(replay);
    return { index };
  };
  let i = 0;
  let verified = false;
  while (i < blocks.length) {
    try {
      try {
        execute(i, verified);
      } catch (err) {
        if (err instanceof BatchRefused) throw err;
        // Only a wrong speculative answer (an earlier block's, which settling everything brings
        // out as BatchRefused, or this block's own) can make a block fail that the plain replay runs.
        commitment.settle(commitment.jobs);
        if (!verified && signatures.blockInvalid()) {
          options.onReexecute?.(i);
          verified = true;
          continue;
        }
        // Unusable input (or an engine failure): unless an earlier block mismatched, the plain replay throws it too.
        const bad = drain(0);
        if (bad >= 0) return referenceAt(fixture, blocks, bad, options);
        throw err;
      }
      verified = false;
      // A post_state dump is compared with the live state, so that block is checked before the next executes.
      const bad = drain(blocks[i]!.post_state === undefined && i + 1 < blocks.length ? PIPELINE_DEPTH : 0);
      if (bad >= 0) return referenceAt(fixture, blocks, bad, options);
    } catch (err) {
      if (!(err instanceof BatchRefused)) throw err;
      const r = rewind(err, i);
      if ("mismatchAt" in r) return referenceAt(fixture, blocks, r.mismatchAt, options);
      options.onReexecute?.(r.index);
      i = r.index;
      verified = true;
      continue;
    }
    i++;
    // A stop here abandons the blocks in flight (the worker is closed, or reset by its next replay): nothing is written.
    yield;
  }
  return { blocks: blocks.length, txs, mismatch: null };
}

/**
 * The worker thread of pipelined replays (state root, block roots, signature checks) with its
 * signature ring, kept across replays so that a run over many fixtures starts it once — and
 * can start it before it reads the first fixture. One replay at a time; `close` stops it.
 */
export class ReplayPipeline {
  private readonly ring = allocateSignatureRing();
  readonly commitment = new WorkerCommitment(this.ring);
  readonly signatures = new SpeculativeSignatures(this.ring, this.commitment.wake);
  /** A replay has run on it: the next one resets it first. */
  used = false;

  close(): void {
    this.commitment.close();
  }
}

/**
 * The plain replay from genesis to block `index` (a fresh store), which must find its first
 * mismatch exactly there; `onBlock` sees only that block (the pipeline reported the others).
 */
function referenceAt(fixture: Fixture, blocks: readonly FixtureBlock[], index: number, options: ReplayOptions): ReplayOutcome {
  const outcome = replayFixture(fixture, {
    toHeight: blocks[index]!.height,
    onBlock: (p, executed) => {
      if (p.blocksDone === index + 1) options.onBlock?.({ ...p, blocksTotal: blocks.length, lastHeight: blocks[blocks.length - 1]!.height }, executed);
    },
  });
  if (outcome.mismatch === null || outcome.blocks !== index + 1) {
    const plain = outcome.mismatch === null ? "found no mismatch" : `found its first at block ${outcome.mismatch.height} (${outcome.mismatch.path})`;
    throw new Error(`pipelined replay: block ${blocks[index]!.height} did not match, but the plain replay ${plain}`);
  }
  return outcome;
}

// ---- replaying files (cbqs replay, npm start) ---------------------------------------------------

/** One fixture file's outcome. A mismatch never hides behind another file's unusable input. */
export interface FixtureReport {
  file: string;
  name: string | null;
  status: "ok" | "mismatch" | "unusable";
  blocks: number;
  txs: number;
  mismatch?: Mismatch;
  error?: string;
}

/**
 * Replays one fixture file; unusable input (unreadable, malformed, unexecutable) is reported, not
 * thrown, so a directory's other fixtures still run. `onBlock` sees every executed block.
 */
export function replayFile(file: string, options: ReplayOptions & { progress?: ProgressMode } = {}): FixtureReport {
  return finish(replayFileSteps(file, options));
}

/** replayFile unit by unit: a unit is a chunk of the file read or one block replayed (src/steps.ts). */
export function* replayFileSteps(file: string, options: ReplayOptions & { progress?: ProgressMode } = {}): Steps<FixtureReport> {
  const report: FixtureReport = { file, name: null, status: "ok", blocks: 0, txs: 0 };
  const progress = new Progress(`replay ${file}`, options.progress ?? "off");
  try {
    const fixture = yield* readFixtureSteps(file);
    report.name = fixture.name;
    const outcome = yield* replayFixtureSteps(fixture, {
      ...(options.toHeight === undefined ? {} : { toHeight: options.toHeight }),
      ...(options.store === undefined ? {} : { store: options.store }),
      ...(options.pipeline === undefined ? {} : { pipeline: options.pipeline }),
      onBlock: (p, executed) => {
        progress.update({ done: p.blocksDone, total: p.blocksTotal, unit: "blocks", height: { at: p.height, last: p.lastHeight }, txs: p.txsDone });
        options.onBlock?.(p, executed);
      },
    });
    report.blocks = outcome.blocks;
    report.txs = outcome.txs;
    if (outcome.mismatch !== null) {
      report.status = "mismatch";
      report.mismatch = outcome.mismatch;
    }
  } catch (err) {
    if (!(err instanceof InputError) && !(err instanceof ReplayInputError)) throw err;
    report.status = "unusable";
    report.error = err instanceof ReplayInputError ? `${file}: ${err.message}` : err.message;
  } finally {
    progress.end();
  }
  return report;
}

/**
 * The exit code of a set of replays: 1 when any fixture mismatched (a mismatch is never hidden,
 * even beside unusable fixtures), else 2 when any was unusable, else 0.
 */
export function replayExitCode(reports: readonly Pick<FixtureReport, "status">[]): 0 | 1 | 2 {
  if (reports.some((r) => r.status === "mismatch")) return 1;
  return reports.some((r) => r.status === "unusable") ? 2 : 0;
}

/** `--shard i/n`: shard i (1-based) of n. */
export interface Shard {
  index: number;
  count: number;
}

export function parseShard(text: string): Shard {
  const m = /^([1-9][0-9]{0,5})\/([1-9][0-9]{0,5})$/.exec(text);
  if (m === null || Number(m[1]) > Number(m[2])) throw new RangeError(`--shard must be i/n with 1 ≤ i ≤ n (got ${echo(text)})`);
  return { index: Number(m[1]), count: Number(m[2]) };
}

/** UTF-16 code-unit order: the same on every machine and in every locale. */
const codeUnitOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The files of shard i/n: every n-th file of the list sorted by file name (equal names in
 * different directories by full path), starting at the i-th, so the n shards are disjoint, cover
 * every file exactly once, and differ in size by at most one.
 */
export function shardOf(files: readonly string[], shard: Shard): string[] {
  return [...files]
    .sort((a, b) => codeUnitOrder(basename(a), basename(b)) || codeUnitOrder(a, b))
    .filter((_, k) => k % shard.count === shard.index - 1);
}
