// Interprets a fuzz plan block by block against a reference chain executed from genesis (the
// same engine the fixtures come from): each block's actions become transactions against the
// state before it, the reference chain executes them, their envelopes get the nonces of
// src/chain/nonces.ts, and junk envelopes are inserted. The result per block is what both t8n
// tools receive (alloc = the reference state before the block, txs, env), our own t8n result,
// and the cbqs-fixture/v1 block the chain so far replays to.
import { bytesEqual, compareBytes, fromHex, toHex } from "../bytes.js";
import { genesisHash, headerHash } from "../chain/block.js";
import { decodeEnvelope, encodeEnvelope, type TxEnvelope } from "../chain/envelope.js";
import { envelopeNonces, startNonces } from "../chain/nonces.js";
import { blockResults } from "../chain/receipts.js";
import type { Transaction } from "../engine/inputs.js";
import { Chain } from "../engine/chain.js";
import { ALL_FAST_PATHS, enginePaths, type EngineChoice } from "../engine/fast-paths.js";
import { DryRunStore } from "../../state/chain-db/dry-run.js";
import { GAS_VECTORS_SHA256 } from "../gas/pinned.js";
import type { Fixture, FixtureBlock } from "../harness/fixture.js";
import { blockResultJson, transition, type T8nEnv, type T8nRun } from "../harness/t8n.js";
import { txKind } from "../harness/trace.js";
import { createStateCommitment } from "../../state/qmdb/index.js";
import { MemoryStateStore } from "../../state/store/store.js";
import { ChainModel } from "./model.js";
import { TouchStore, type TxTouch } from "./observe.js";
import type { FuzzChain, Junk } from "./plan.js";
import { OWNERS, U64_MAX, worldFromJson, type World } from "./world.js";
import type { Entries, T8nInputs } from "../target/target.js";

export interface BuiltBlock {
  /** Position in the plan. */
  index: number;
  height: bigint;
  inputs: T8nInputs;
  /**
   * Our chain's result for this block as a cbqs-t8n-result/v1, its state_root the chain's: the
   * history from genesis, as a server session opened on the genesis state has it (docs/reference/formats/t8n-server.md).
   */
  result: Record<string, unknown>;
  /** The state after the block. */
  postState: Entries;
  /**
   * Our per-call t8n of `inputs` (its state_root commits the pre-state as one batch), checked
   * against the chain: run when first asked for, since a server target never needs it.
   */
  readonly ours: T8nRun;
  /** Per input transaction, what it is in words ("CreateStream", "junk: truncated envelope"). */
  kinds: string[];
  /** Per input transaction, the transaction it encodes (null: junk). */
  transactions: Array<Transaction | null>;
  /** Per receipt (the included transactions, in order), what it saw of the registry (the census's input). */
  touches: TxTouch[];
}

/** The fuzzer's own bookkeeping failed (never the implementation under test): a bug to report. */
export class FuzzInternalError extends Error {
  override name = "FuzzInternalError";
}

const JUNK_WORDS: Record<Junk["kind"], string> = {
  bytes: "random bytes",
  truncate: "truncated envelope",
  trailing: "envelope with a trailing byte",
  version: "envelope version 2",
  kind: "envelope of an unknown kind",
  chain: "envelope for another chain_id",
  nonce: "envelope with a nonce far ahead",
  replay: "replayed envelope (stale nonce)",
};

export class ChainBuilder {
  readonly world: World;
  readonly fixture: Fixture;
  private readonly model: ChainModel;
  private readonly chain: Chain;
  private readonly store: MemoryStateStore;
  /** The chain's view of the store: records each transaction's touches. */
  private readonly touchStore: TouchStore;
  private height = 0n;
  private parent: Uint8Array;
  private next = 0;
  /** Envelopes earlier blocks included: their nonces are consumed, so a replay is always stale. */
  private readonly consumed: Uint8Array[] = [];

  /** `engine`: the chain's fast paths (all unless told; src/engine/fast-paths.ts), the dry runs' too. */
  constructor(
    readonly plan: FuzzChain,
    private readonly engine: EngineChoice = ALL_FAST_PATHS,
  ) {
    this.world = worldFromJson(plan.genesis);
    this.model = new ChainModel(this.world);
    this.store = new MemoryStateStore(createStateCommitment());
    this.touchStore = new TouchStore(this.store, this.world.config.governance);
    this.chain = Chain.genesis(this.world.config, this.world.source, this.touchStore, enginePaths(engine));
    this.parent = genesisHash(this.chain.chainInstanceId, this.world.config.timestamp, this.chain.genesisStateRoot);
    this.fixture = {
      name: "fuzz",
      description: "",
      genesis: { source: this.world.source, config: this.world.config, chain_instance_id: this.chain.chainInstanceId, state_root: this.chain.genesisStateRoot },
      blocks: [],
    };
  }

  /** The genesis state and its height: where a server session of this chain starts (before the first build). */
  genesisState(): { alloc: Entries; height: bigint } {
    if (this.next !== 0) throw new FuzzInternalError("the genesis state is gone once a block is built");
    return { alloc: [...this.store.entries()], height: 0n };
  }

  get done(): boolean {
    return this.next >= this.plan.blocks.length;
  }

  /** Builds the next block of the plan. */
  build(): BuiltBlock {
    const index = this.next++;
    const p = this.plan.blocks[index]!;
    const chain = this.chain;
    const height = this.model.nextHeight(p.gap, chain, this.height);
    const timestamp = this.model.timestamp(height);
    const planned = p.actions.map((a) => this.model.toTransaction(a, chain, height));
    const alloc = [...this.store.entries()];
    // Transactions the engine excludes (a keyless sender, a fee the sender cannot pay at the
    // reservation) cannot be in the block: like junk, t8n must leave them out. Found on a dry run.
    const excluded = this.excluded(planned, height, timestamp);
    const txs = planned.filter((_, i) => !excluded.has(i));
    // An excluded transaction's envelope carries its sender's nonce at its place, so that only
    // the exclusion leaves it out: the block-start nonce plus the sender's included ones before it.
    const excludedNonce = (i: number): bigint => {
      const from = planned[i]!.from;
      const earlier = planned.slice(0, i).filter((t, k) => !excluded.has(k) && bytesEqual(t.from, from)).length;
      return chain.account(from).nonce + BigInt(earlier);
    };
    const excludedEnvelopes = new Map([...excluded].map((i) => [i, encodeEnvelope({ chain_id: this.world.config.chain_id, nonce: excludedNonce(i), tx: planned[i]! })]));
    const start = startNonces(
      chain,
      txs.map((t) => t.from),
    );
    const outcome = chain.executeBlock({ height, timestamp, txs });
    const touches = this.touchStore.take();
    if (touches.length !== txs.length) throw new FuzzInternalError(`${touches.length} transactions watched, ${txs.length} executed at height ${height}`);
    const { nonces } = envelopeNonces(
      txs.map((t) => t.from),
      outcome,
      start,
    );
    const chainId = this.world.config.chain_id;
    const envelopes = txs.map((tx, i) => encodeEnvelope({ chain_id: chainId, nonce: nonces[i]!, tx }));
    const results = blockResults(envelopes, outcome);
    this.parent = headerHash(chain.chainInstanceId, height, timestamp, this.parent, outcome.stateRoot, results);
    this.height = height;
    const fixtureBlock: FixtureBlock = {
      height,
      timestamp,
      transactions: envelopes,
      effective_rent_height: outcome.effectiveRentHeight,
      state_root: outcome.stateRoot,
      tx_root: results.tx_root,
      receipt_root: results.receipt_root,
      logs_root: results.logs_root,
      block_hash: this.parent,
      gas_vectors_sha256: GAS_VECTORS_SHA256,
      receipts: results.receipts,
      post_state: [...this.store.entries()],
    };
    this.fixture.blocks.push(fixtureBlock);

    // Excluded transactions keep their planned places; junk goes in at its positions; the valid
    // envelopes keep their relative order.
    const all: Array<{ raw: Uint8Array; junk: Junk | null; excluded: boolean; tx: Transaction | null }> = [];
    let next = 0;
    planned.forEach((tx, i) => {
      const raw = excludedEnvelopes.get(i);
      all.push(raw === undefined ? { raw: envelopes[next++]!, junk: null, excluded: false, tx } : { raw, junk: null, excluded: true, tx });
    });
    for (const j of p.junk) all.splice(j.at % (all.length + 1), 0, { raw: this.junkEnvelope(j, envelopes), junk: j, excluded: false, tx: null });
    // Every included envelope (accepted or rejected) used its nonce, so replaying it is stale.
    this.consumed.push(...envelopes);

    const env: T8nEnv = {
      height,
      timestamp,
      chain_id: chainId,
      chain_instance_id: chain.chainInstanceId,
      governance: this.world.config.governance,
      cycle_price: this.world.config.cycle_price,
      cell_price: this.world.config.cell_price,
      parent_hash: null,
    };
    const inputs: T8nInputs = { alloc, txs: all.map((t) => t.raw), env };
    const kinds = all.map((t) => (t.junk !== null ? `junk: ${JUNK_WORDS[t.junk.kind]}` : t.excluded ? `not includable: ${txKind(decodeEnvelope(t.raw))}` : txKind(decodeEnvelope(t.raw))));
    const indices = all.flatMap((t, i) => (t.junk === null && !t.excluded ? [i] : []));
    const leftOut = all.flatMap((t, i) => (t.junk !== null || t.excluded ? [{ index: i, error: kinds[i]! }] : []));
    const result = blockResultJson(env, outcome, results, indices, leftOut);
    let ours: T8nRun | null = null;
    const check = (run: T8nRun) => this.check(run, all, fixtureBlock);
    return {
      index,
      height,
      inputs,
      result,
      postState: fixtureBlock.post_state!,
      kinds,
      transactions: all.map((t) => t.tx),
      touches,
      get ours(): T8nRun {
        if (ours === null) check((ours = transition(inputs.alloc, inputs.txs, env)));
        return ours;
      },
    };
  }

  /** The planned transactions the engine excludes, by index: dry runs over the current state until none is left. */
  private excluded(planned: readonly Transaction[], height: bigint, timestamp: bigint): Set<number> {
    const out = new Set<number>();
    for (;;) {
      const left = [...planned.keys()].filter((i) => !out.has(i));
      const dry = Chain.resume(this.world.config, this.chain.chainInstanceId, new DryRunStore(this.store), enginePaths(this.engine));
      const outcome = dry.executeBlock({ height, timestamp, txs: left.map((i) => planned[i]!) });
      const first = outcome.outcomes.findIndex((o) => o.status === "excluded");
      if (first < 0) return out;
      out.add(left[first]!);
    }
  }

  /** Our t8n must leave out exactly the junk and the excluded, and agree with the reference chain on everything else. */
  private check(ours: T8nRun, all: Array<{ junk: Junk | null; excluded: boolean }>, block: FixtureBlock): void {
    const fail = (what: string): never => {
      throw new FuzzInternalError(`t8n and the reference chain disagree at height ${block.height}: ${what}`);
    };
    const rejected = (ours.result["rejected"] as Array<{ index: string }>).map((r) => Number(r.index));
    const junk = all.flatMap((t, i) => (t.junk === null && !t.excluded ? [] : [i]));
    if (JSON.stringify(rejected) !== JSON.stringify(junk)) fail(`rejected ${JSON.stringify(rejected)}, junk and excluded at ${JSON.stringify(junk)}`);
    const receipts = ours.included.results.receipts;
    if (receipts.length !== block.receipts.length || receipts.some((r, i) => !bytesEqual(r.tx_hash, block.receipts[i]!.tx_hash) || r.status !== block.receipts[i]!.status)) {
      fail("receipts");
    }
    const post = [...ours.store.entries()];
    const want = block.post_state!;
    if (post.length !== want.length || post.some(([k, v], i) => compareBytes(k, want[i]![0]) !== 0 || !bytesEqual(v, want[i]![1]))) fail("post-state");
  }

  private junkEnvelope(j: Junk, envelopes: readonly Uint8Array[]): Uint8Array {
    const chainId = this.world.config.chain_id;
    const base: Uint8Array =
      envelopes.length > 0
        ? envelopes[j.pick % envelopes.length]!
        : encodeEnvelope({ chain_id: chainId, nonce: 0n, tx: { from: fromHex(OWNERS[0]!), body: { kind: "transfer", to: fromHex(OWNERS[1]!), amount: 1n } } });
    const decoded = (): TxEnvelope => decodeEnvelope(base);
    switch (j.kind) {
      case "bytes":
        return j.bytes;
      case "truncate":
        return base.subarray(0, j.pick % base.length);
      case "trailing":
        return Uint8Array.of(...base, j.pick & 0xff);
      case "version":
        // a7/a8, 67 "version", then the version byte at offset 9 (docs/reference/formats/transaction.md).
        return Uint8Array.of(...base.subarray(0, 9), 2, ...base.subarray(10));
      case "kind": {
        // The kind text follows the "kind" key (64 6b 69 6e 64) and its own head byte.
        const at = indexOf(base, [0x64, 0x6b, 0x69, 0x6e, 0x64]) + 6;
        const out = base.slice();
        out[at] = 0x58; // "X": "system" → "Xystem"
        return out;
      }
      case "chain": {
        const e = decoded();
        return encodeEnvelope({ ...e, chain_id: e.chain_id === U64_MAX ? 0n : e.chain_id + 1n });
      }
      case "replay":
      case "nonce": {
        if (j.kind === "replay" && this.consumed.length > 0) return this.consumed[j.pick % this.consumed.length]!;
        // A nonce no sender reaches within a block (also a replay before anything was consumed).
        const e = decoded();
        return encodeEnvelope({ ...e, nonce: e.nonce + 1_000n });
      }
    }
  }
}

function indexOf(haystack: Uint8Array, needle: number[]): number {
  for (let i = 0; i + needle.length <= haystack.length; i++) if (needle.every((b, k) => haystack[i + k] === b)) return i;
  throw new FuzzInternalError(`envelope without the byte pattern ${toHex(Uint8Array.from(needle))}`);
}
