// Executes a parsed scenario through the engine and builds the run document of
// scenario-format §4, checking §3 expectations as it goes (stops at the first failure).
// Per block: resolve its transactions (signed objects may need earlier block hashes),
// execute, then derive the envelopes (nonces), tx_root, receipt_root, logs_root and the
// emulator block hash (docs/reference/formats/transaction.md).
import { MAX_SYSTEM_PAYLOAD_BYTES } from "../bounds.js";
import { compareBytes, fromHex, toHex } from "../bytes.js";
import { genesisHash, headerHash } from "../chain/block.js";
import { encodeEnvelope } from "../chain/envelope.js";
import { envelopeNonces, startNonces } from "../chain/nonces.js";
import { blockResults, receiptJson, type BlockResults, type ReceiptJson } from "../chain/receipts.js";
import type { Transaction } from "../engine/inputs.js";
import { toJson } from "../codec/core.js";
import * as S from "../codec/schema.js";
import type { Address } from "../codec/types.js";
import { Chain, type BlockOutcome } from "../engine/chain.js";
import { GAS_VECTORS_SHA256 } from "../gas/pinned.js";
import { createStateCommitment } from "../../state/qmdb/index.js";
import { MemoryStateStore } from "../../state/store/store.js";
import { ExpectationFailed, partialMatch } from "./expect.js";
import { at, ScenarioError, type Json, type JsonObject } from "./json.js";
import type { Scenario, ScenarioBlock, ScenarioTx } from "./parse.js";
import { resolveStreamKey, type ChainIdentity } from "./refs.js";
import { resolveInstruction, servedAtHeights } from "./resolve.js";
import { finish, type Steps } from "../steps.js";

export const RUN_FORMAT = "cbqs-run/v1";
/** Every block of a run document (and so of a fixture) reports the pinned gas-vectors digest (§4). */
export { GAS_VECTORS_SHA256 };

export interface RunReceipt extends ReceiptJson {
  index: string;
}

export interface RunBlock {
  height: string;
  effective_rent_height: string;
  state_root: string;
  tx_root: string;
  receipt_root: string;
  logs_root: string;
  gas_vectors_sha256: string;
  receipts: RunReceipt[];
}

export interface RunDocument {
  format: typeof RUN_FORMAT;
  chain_instance_id: string;
  genesis_state_root: string;
  blocks: RunBlock[];
  state: JsonObject;
  /** Present only when an expectation failed (the run stopped there). */
  failure?: { path: string; expected: Json; actual: Json | null };
}

/** One executed block in bytes, for fixtures. */
export interface SealedBlock {
  envelopes: Uint8Array[];
  results: BlockResults;
  blockHash: Uint8Array;
}

export interface RunResult {
  document: RunDocument;
  /** The first failed expectation, if any. */
  failure: ExpectationFailed | null;
  /** Every executed block, in order. */
  blocks: SealedBlock[];
}

/** One executed block: its run-document entry and its bytes. */
export interface ExecutedScenarioBlock {
  run: RunBlock;
  sealed: SealedBlock;
}

/**
 * A scenario executing block by block (`cbqs run` writes each block as it is produced, so memory
 * does not grow with the number of blocks): iterate `blocks()`, then read `failure` and `state()`.
 * Block hashes are kept only for the heights a signed object's `served_at` will ask for.
 */
export class ScenarioRun {
  readonly chain: Chain;
  readonly id: ChainIdentity;
  readonly chainInstanceId: string;
  readonly genesisStateRoot: string;
  failure: ExpectationFailed | null = null;
  private parent: Uint8Array;
  private readonly hashes = new Map<bigint, Uint8Array>();
  private readonly wanted: Set<bigint>;

  constructor(private readonly scenario: Scenario) {
    this.chain = Chain.genesis(scenario.config, scenario.sourceBytes, new MemoryStateStore(createStateCommitment()));
    this.id = { chainId: scenario.config.chain_id, chainInstanceId: this.chain.chainInstanceId };
    this.chainInstanceId = toHex(this.chain.chainInstanceId);
    this.genesisStateRoot = toHex(this.chain.genesisStateRoot);
    this.parent = genesisHash(this.chain.chainInstanceId, scenario.config.timestamp, this.chain.genesisStateRoot);
    this.wanted = new Set(scenario.blocks.flatMap((b) => b.txs.flatMap((t) => (t.body.kind === "cbqs" ? servedAtHeights(t.body.instruction) : []))));
    this.remember(0n, this.parent);
  }

  private remember(height: bigint, hash: Uint8Array): void {
    if (this.wanted.has(height)) this.hashes.set(height, hash);
  }

  /** Executes the blocks in order, yielding each; stops after the first failed expectation. */
  *blocks(): Generator<ExecutedScenarioBlock> {
    for (const block of this.scenario.blocks) {
      const txs = block.txs.map((t) => resolveTx(t, { ...this.id, blockHashAt: (h) => this.hashes.get(h) }));
      const start = startNonces(
        this.chain,
        txs.map((tx) => tx.from),
      );
      const outcome = this.chain.executeBlock({ height: block.height, timestamp: block.timestamp, txs });
      // A transaction no block may contain (a keyless sender, a sender who cannot pay the fee at
      // the reservation) has no receipt to expect: the scenario is wrong, not the chain.
      const excluded = outcome.outcomes.findIndex((o) => o.status === "excluded");
      if (excluded >= 0) {
        throw new ScenarioError(block.txs[excluded]!.path, `no block can contain this transaction: ${outcome.outcomes[excluded]!.error!.message}`);
      }
      const envelopes = envelopesOf(this.chain, this.scenario.config.chain_id, txs, outcome, start);
      const results = blockResults(envelopes, outcome);
      this.parent = headerHash(this.chain.chainInstanceId, block.height, block.timestamp, this.parent, outcome.stateRoot, results);
      this.remember(block.height, this.parent);
      const run = runBlock(outcome, results);
      this.failure = checkTxExpectations(block, run) ?? checkStateExpectations(block, outcome, this.chain, this.id);
      yield { run, sealed: { envelopes, results, blockHash: this.parent } };
      if (this.failure !== null) return;
    }
  }

  /** The document's `state` (call after the blocks). */
  state(): JsonObject {
    return stateJson(this.chain);
  }

  /** The document's `failure`, if an expectation failed. */
  failureJson(): RunDocument["failure"] {
    if (this.failure === null) return undefined;
    const m = this.failure.mismatch;
    return { path: m.path, expected: m.expected, actual: m.actual ?? null };
  }
}

/** Runs the whole scenario and keeps everything (fill and tests; `cbqs run` streams instead). */
export function runScenario(scenario: Scenario, onBlock?: (b: ExecutedScenarioBlock) => void): RunResult {
  return finish(runScenarioSteps(scenario, onBlock));
}

/** runScenario unit by unit: a unit is one block (src/steps.ts). */
export function* runScenarioSteps(scenario: Scenario, onBlock?: (b: ExecutedScenarioBlock) => void): Steps<RunResult> {
  const run = new ScenarioRun(scenario);
  const runBlocks: RunBlock[] = [];
  const blocks: SealedBlock[] = [];
  for (const b of run.blocks()) {
    runBlocks.push(b.run);
    blocks.push(b.sealed);
    onBlock?.(b);
    yield;
  }
  const document: RunDocument = runDocument(run, { blocks: runBlocks, state: run.state(), failure: run.failureJson() });
  return { document, failure: run.failure, blocks };
}

/**
 * The cbqs-run/v1 document (§4), in its member order. Its parts are values (runScenario), or for a
 * document written as the scenario runs (`cbqs run --json`) a Streamed of the blocks and Later
 * state and failure (src/json/write.ts), read once the blocks are done; a failure that is
 * undefined leaves its member out.
 */
export function runDocument<B, S, F>(run: ScenarioRun, parts: { blocks: B; state: S; failure: F }): { format: typeof RUN_FORMAT; chain_instance_id: string; genesis_state_root: string; blocks: B; state: S; failure?: F } {
  return {
    format: RUN_FORMAT,
    chain_instance_id: run.chainInstanceId,
    genesis_state_root: run.genesisStateRoot,
    blocks: parts.blocks,
    state: parts.state,
    ...(parts.failure === undefined ? {} : { failure: parts.failure }),
  };
}

/** One block of the run document. */
function runBlock(outcome: BlockOutcome, results: BlockResults): RunBlock {
  return {
    height: outcome.height.toString(),
    effective_rent_height: outcome.effectiveRentHeight.toString(),
    state_root: toHex(outcome.stateRoot),
    tx_root: toHex(results.tx_root),
    receipt_root: toHex(results.receipt_root),
    logs_root: toHex(results.logs_root),
    gas_vectors_sha256: GAS_VECTORS_SHA256,
    receipts: results.receipts.map((r, i) => ({ index: i.toString(), ...receiptJson(r, outcome.outcomes[i]!.error?.message) })),
  };
}

/** A scenario transaction as the engine takes it: a `cbqs` instruction resolved and encoded as the system payload. */
export function resolveTx(t: ScenarioTx, ctx: Parameters<typeof resolveInstruction>[2]): Transaction {
  if (t.body.kind === "cbqs") {
    const payload = resolveInstruction(t.body.instruction, at(t.path, "cbqs"), ctx);
    if (payload.length > MAX_SYSTEM_PAYLOAD_BYTES) {
      throw new ScenarioError(at(t.path, "cbqs"), `the instruction encodes to ${payload.length} bytes, above the envelope's payload bound of ${MAX_SYSTEM_PAYLOAD_BYTES}`);
    }
    return { from: t.from, body: { kind: "system", opcode: 218, payload } };
  }
  return { from: t.from, body: t.body };
}

/** Envelope bytes per transaction, with the nonces of src/chain/nonces.ts. */
function envelopesOf(chain: Chain, chainId: bigint, txs: readonly Transaction[], outcome: BlockOutcome, start: Map<string, bigint>): Uint8Array[] {
  const { nonces, after } = envelopeNonces(
    txs.map((tx) => tx.from),
    outcome,
    start,
  );
  // The rule must be the engine's: each sender ends the block at the nonce we derived.
  for (const [k, nonce] of after) {
    if (chain.account(fromHex(k, 20)).nonce !== nonce) throw new Error(`internal: account nonce of ${k} disagrees with the envelope nonce rule`);
  }
  return txs.map((tx, i) => encodeEnvelope({ chain_id: chainId, nonce: nonces[i]!, tx }));
}

function checkTxExpectations(block: ScenarioBlock, run: RunBlock): ExpectationFailed | null {
  for (let i = 0; i < block.txs.length; i++) {
    const expect = block.txs[i]!.expect;
    if (expect === undefined) continue;
    const r = run.receipts[i]!;
    const path = at(block.txs[i]!.path, "expect");
    const actual = {
      status: r.status,
      error: r.error === null ? null : r.error.name,
      events: r.events.map((e) => e.topic),
    } as const;
    const detail = r.error === null ? actual.status : `${actual.status} (${r.error.name}: ${r.error.message})`;
    if (expect.status !== undefined && expect.status !== actual.status) {
      return new ExpectationFailed({ path: at(path, "status"), expected: expect.status, actual: detail });
    }
    if (expect.error !== undefined && expect.error !== actual.error) {
      return new ExpectationFailed({ path: at(path, "error"), expected: expect.error, actual: r.error === null ? null : detail });
    }
    if (expect.events !== undefined && JSON.stringify(expect.events) !== JSON.stringify(actual.events)) {
      return new ExpectationFailed({ path: at(path, "events"), expected: expect.events, actual: actual.events });
    }
  }
  return null;
}

function checkStateExpectations(block: ScenarioBlock, outcome: BlockOutcome, chain: Chain, id: ChainIdentity): ExpectationFailed | null {
  const e = block.expectState;
  if (e === undefined) return null;
  const base = at(block.path, "expect_state");
  if (e.effective_rent_height !== undefined && e.effective_rent_height !== outcome.effectiveRentHeight) {
    return new ExpectationFailed({
      path: at(base, "effective_rent_height"),
      expected: e.effective_rent_height.toString(),
      actual: outcome.effectiveRentHeight.toString(),
    });
  }
  if (e.pause !== undefined) {
    const m = partialMatch(e.pause, pauseJson(chain), at(base, "pause"), id);
    if (m !== null) return new ExpectationFailed(m);
  }
  if (Object.keys(e.params).length > 0) {
    const m = partialMatch(e.params, paramsJson(chain), at(base, "params"), id);
    if (m !== null) return new ExpectationFailed(m);
  }
  for (const key of Object.keys(e.streams)) {
    const path = at(at(base, "streams"), key);
    const record = chain.stream(resolveStreamKey(key, path, id));
    const m = partialMatch(e.streams[key]!, record === null ? null : toJson(S.StreamRecordV1, record), path, id);
    if (m !== null) return new ExpectationFailed(m);
  }
  for (const key of Object.keys(e.providers)) {
    const path = at(at(base, "providers"), key);
    const record = chain.provider(hexAddress(key));
    const m = partialMatch(e.providers[key]!, record === null ? null : toJson(S.ProviderRecordV1, record), path, id);
    if (m !== null) return new ExpectationFailed(m);
  }
  for (const key of Object.keys(e.accounts)) {
    const path = at(at(base, "accounts"), key);
    const a = chain.account(hexAddress(key));
    const m = partialMatch(e.accounts[key]!, { balance: a.balance.toString(), nonce: a.nonce.toString() }, path, id);
    if (m !== null) return new ExpectationFailed(m);
  }
  return null;
}

/** Keys were validated as addresses by the parser. */
const hexAddress = (key: string): Address => fromHex(key, 20);

/** §4 `state`: every stream, provider, nonzero account, the 0x17 pause record and the live params. */
function stateJson(chain: Chain): JsonObject {
  const streams: JsonObject = {};
  for (const s of [...chain.streams()].sort((a, b) => compareBytes(a.stream_id, b.stream_id))) {
    streams[toHex(s.stream_id)] = toJson(S.StreamRecordV1, s);
  }
  const providers: JsonObject = {};
  for (const p of [...chain.providers()].sort((a, b) => compareBytes(a.provider, b.provider))) {
    providers[toHex(p.provider)] = toJson(S.ProviderRecordV1, p);
  }
  const accounts: JsonObject = {};
  for (const a of [...chain.accounts()].sort((x, y) => compareBytes(x.address, y.address))) {
    if (a.balance === 0n && a.nonce === 0n) continue;
    accounts[toHex(a.address)] = { balance: a.balance.toString(), nonce: a.nonce.toString() };
  }
  return { streams, providers, accounts, pause: pauseJson(chain), params: paramsJson(chain) };
}

function pauseJson(chain: Chain): JsonObject {
  const pause = chain.pause();
  return {
    completed_pause_blocks: pause.completed_pause_blocks.toString(),
    active:
      pause.active === null
        ? null
        : { paused_at_block: pause.active.paused_at_block.toString(), expires_at_block: pause.active.expires_at_block.toString() },
  };
}

function paramsJson(chain: Chain): JsonObject {
  const params: JsonObject = {};
  for (const [name, value] of chain.params()) params[name] = value.toString();
  return params;
}
