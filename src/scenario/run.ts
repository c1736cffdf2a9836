// Executes a parsed scenario through the engine and builds the run document of
// scenario-format §4, checking §3 expectations as it goes (stops at the first failure).
// Per block: resolve its transactions (signed objects may need earlier block hashes),
// execute, then derive the envelopes (nonces), tx_root, receipt_root, logs_root and the
// emulator block hash (docs/transactions.md).
import { compareBytes, fromHex, toHex } from "../bytes.js";
import { blockHash } from "../chain/block.js";
import { encodeEnvelope, txHash } from "../chain/envelope.js";
import type { Transaction } from "../chain/types.js";
import { toJson } from "../codec/core.js";
import * as S from "../codec/schema.js";
import type { Address } from "../codec/types.js";
import { Chain, type BlockOutcome } from "../engine/chain.js";
import { logsRoot, receiptRoot, txRoot, type Event, type Receipt } from "../../state/roots.js";
import { createStateCommitment } from "../../state/qmdb/index.js";
import { MemoryStateStore } from "../../state/store.js";
import { ExpectationFailed, partialMatch } from "./expect.js";
import { at, type Json, type JsonObject } from "./json.js";
import type { Scenario, ScenarioBlock, ScenarioTx } from "./parse.js";
import { resolveStreamKey, type ChainIdentity } from "./refs.js";
import { resolveInstruction } from "./resolve.js";

export const RUN_FORMAT = "cbqs-run/v1";
/**
 * Placeholder until the switch to src/gas/pinned.ts lands together with a re-fill of
 * fixtures/corpus, whose stored run data carry this value (docs/decisions.md).
 */
export const GAS_VECTORS_SHA256 = "unpinned";

export interface RunReceipt {
  index: string;
  tx_hash: string;
  status: "ok" | "rejected";
  error: { code: string; name: string; message: string } | null;
  events: { emitter: string; topic: string; payload: string }[];
  cycles: string;
  cells: string;
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

export interface RunResult {
  document: RunDocument;
  /** The first failed expectation, if any. */
  failure: ExpectationFailed | null;
  /** Envelope bytes per executed block, for fixtures. */
  transactions: Uint8Array[][];
}

export function runScenario(scenario: Scenario): RunResult {
  const chain = Chain.genesis(scenario.config, scenario.sourceBytes, new MemoryStateStore(createStateCommitment()));
  const id: ChainIdentity = { chainId: scenario.config.chain_id, chainInstanceId: chain.chainInstanceId };
  const emptyRoots = { tx_root: txRoot([]), receipt_root: receiptRoot([]), logs_root: logsRoot([]) };
  let parent = blockHash({
    chain_instance_id: chain.chainInstanceId,
    height: 0n,
    timestamp: scenario.config.timestamp,
    parent_hash: new Uint8Array(32),
    state_root: chain.genesisStateRoot,
    ...emptyRoots,
  });
  const hashes = new Map<bigint, Uint8Array>([[0n, parent]]);
  const document: RunDocument = {
    format: RUN_FORMAT,
    chain_instance_id: toHex(chain.chainInstanceId),
    genesis_state_root: toHex(chain.genesisStateRoot),
    blocks: [],
    state: {},
  };
  const transactions: Uint8Array[][] = [];
  let failure: ExpectationFailed | null = null;

  for (const block of scenario.blocks) {
    const txs = block.txs.map((t) => resolveTx(t, { ...id, blockHashAt: (h) => hashes.get(h) }));
    const startNonces = senderNonces(chain, txs);
    const outcome = chain.executeBlock({ height: block.height, timestamp: block.timestamp, txs });
    const envelopes = envelopesOf(chain, scenario.config.chain_id, txs, outcome, startNonces);
    const run = runBlock(outcome, envelopes);
    parent = blockHash({
      chain_instance_id: chain.chainInstanceId,
      height: block.height,
      timestamp: block.timestamp,
      parent_hash: parent,
      state_root: outcome.stateRoot,
      tx_root: fromHex(run.tx_root),
      receipt_root: fromHex(run.receipt_root),
      logs_root: fromHex(run.logs_root),
    });
    hashes.set(block.height, parent);
    transactions.push(envelopes);
    document.blocks.push(run);
    failure = checkTxExpectations(block, run) ?? checkStateExpectations(block, outcome, chain, id);
    if (failure !== null) break;
  }
  document.state = stateJson(chain);
  if (failure !== null) {
    const m = failure.mismatch;
    document.failure = { path: m.path, expected: m.expected, actual: m.actual ?? null };
  }
  return { document, failure, transactions };
}

/** One block of the run document: CIP-4 §5.2/§5.3 roots over the envelopes and receipts. */
function runBlock(outcome: BlockOutcome, envelopes: Uint8Array[]): RunBlock {
  const receipts: Receipt[] = outcome.outcomes.map((o) => ({
    status: o.status,
    errorCode: o.error === null ? 0 : o.error.code,
    cycles: o.cycles,
    cells: o.cells,
    events: o.events,
  }));
  return {
    height: outcome.height.toString(),
    effective_rent_height: outcome.effectiveRentHeight.toString(),
    state_root: toHex(outcome.stateRoot),
    tx_root: toHex(txRoot(envelopes)),
    receipt_root: toHex(receiptRoot(receipts)),
    logs_root: toHex(logsRoot(outcome.outcomes.flatMap((o) => o.events))),
    gas_vectors_sha256: GAS_VECTORS_SHA256,
    receipts: outcome.outcomes.map((o, i) => ({
      index: i.toString(),
      tx_hash: toHex(txHash(envelopes[i]!)),
      status: o.status,
      error: o.error === null ? null : { code: o.error.code.toString(), name: o.error.name, message: o.error.message },
      events: o.events.map(eventJson),
      cycles: o.cycles.toString(),
      cells: o.cells.toString(),
    })),
  };
}

function resolveTx(t: ScenarioTx, ctx: Parameters<typeof resolveInstruction>[2]): Transaction {
  if (t.body.kind === "cbqs") {
    const payload = resolveInstruction(t.body.instruction, at(t.path, "cbqs"), ctx);
    return { from: t.from, body: { kind: "system", opcode: 218, payload } };
  }
  return { from: t.from, body: t.body };
}

/** Account nonce of every sender at the start of the block, keyed by hex address. */
function senderNonces(chain: Chain, txs: readonly Transaction[]): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const tx of txs) {
    const k = toHex(tx.from);
    if (!out.has(k)) out.set(k, chain.account(tx.from).nonce);
  }
  return out;
}

/**
 * Envelope bytes per transaction. The nonce is the sender's account nonce before the
 * transaction (docs/transactions.md): the block-start nonce plus the sender's earlier
 * transactions in the block that advanced it (docs/decisions.md "Envelope nonce").
 */
function envelopesOf(chain: Chain, chainId: bigint, txs: readonly Transaction[], outcome: BlockOutcome, start: Map<string, bigint>): Uint8Array[] {
  const next = new Map(start);
  const envelopes = txs.map((tx, i) => {
    const k = toHex(tx.from);
    const nonce = next.get(k)!;
    if (outcome.outcomes[i]!.status === "ok") next.set(k, nonce + 1n);
    return encodeEnvelope({ chain_id: chainId, nonce, tx });
  });
  // The rule above must be the engine's: each sender ends the block at the nonce we derived.
  for (const tx of txs) {
    const k = toHex(tx.from);
    if (chain.account(tx.from).nonce !== next.get(k)) throw new Error(`internal: account nonce of ${k} disagrees with the envelope nonce rule`);
  }
  return envelopes;
}

function eventJson(e: Event): RunReceipt["events"][number] {
  return { emitter: toHex(e.emitter), topic: e.topic, payload: toHex(e.payload) };
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
