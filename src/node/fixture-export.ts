// A stored chain as a cbqs-fixture/v1 (docs/reference/formats/fixture.md §9): what `cbqs export --db` writes and
// `GET /fixture` on the node answers, one document from one producer. A fixture is replayed from
// genesis and has no pre-state, so it always holds genesis and every stored block from the first
// through `to`; `from` only chooses the first block that carries a post_state.
//
// Every block is re-executed from genesis on a fresh in-memory state while it is written: that
// state gives the post_state dumps (the store keeps only its head's state), and the block's
// receipts, roots, effective_rent_height and block hash must be the ones the store recorded, so
// an exported fixture is one `cbqs replay` accepts — as `fill` replays each fixture once before
// it writes it. A store whose record differs (damage, another build) is an ExportMismatch.
//
// Plan, then write (compute-then-commit): `planExport` makes every check a request can fail
// before a byte is written; `exportSteps` then streams the document block by block (a unit of
// src/steps.ts), never holding the whole chain or its text.
import { toHex } from "../bytes.js";
import type { GenesisConfig } from "../engine/inputs.js";
import { GAS_VECTORS_SHA256 } from "../gas/pinned.js";
import type { PostStateMode } from "../harness/fill.js";
import { blockJson, fixtureHeader, type Fixture, type FixtureBlock } from "../harness/fixture.js";
import { genesisFromSource } from "../harness/genesis.js";
import { count } from "../format.js";
import { newStore, Replay, ReplayInputError, type Mismatch } from "../harness/replay.js";
import { jsonDocumentSteps, Streamed, type TextSink } from "../json/write.js";
import type { Steps } from "../steps.js";
import type { BlockRecord, ChainDb, GenesisRecord } from "../../state/chain-db/chain-db.js";
import { historyStart, storedBlocks } from "./stored-chain.js";

export const POST_STATE_MODES: readonly PostStateMode[] = ["every", "final", "none"];

/** What is asked for. The names of `from` and `to` word the refusals: `--from`/`--to`, or `since`/`until`. */
export interface ExportRequest {
  from?: bigint;
  to?: bigint;
  postState: PostStateMode;
  name?: string;
  description?: string;
  names: { from: string; to: string; postState: string };
}

/** A request the store cannot answer (exit 2; 400 or 410 on the node). `kind` says which. */
export class ExportRefused extends Error {
  override name = "ExportRefused";
  constructor(
    readonly kind: "range" | "history",
    message: string,
  ) {
    super(message);
  }
}

/** A stored block (or genesis, height 0) that re-executing the chain from genesis does not reproduce (exit 1). */
export class ExportMismatch extends Error {
  override name = "ExportMismatch";
  constructor(
    readonly height: bigint,
    what: string,
  ) {
    super(`${height === 0n ? "genesis" : `block ${height}`}: ${what}`);
  }
}

/** A checked request: everything `exportSteps` needs, nothing written yet. */
export interface ExportPlan {
  genesis: GenesisRecord;
  config: GenesisConfig;
  /** The first block with a post_state under "every" (0: from the first block). */
  from: bigint;
  to: bigint;
  /** The last stored block at or below `to` (undefined: none, the fixture holds genesis only). */
  last: BlockRecord | undefined;
  postState: PostStateMode;
  name: string;
  description: string;
}

/** What was written. */
export interface ExportSummary {
  blocks: number;
  txs: number;
  /** Blocks that carry a post_state. */
  postStates: number;
}

export interface ExportProgress {
  blocks: number;
  txs: number;
  height: bigint;
  last: bigint;
}

/** Checks `request` against the store in `db` (which holds a chain); every refusal comes before any output. */
export function planExport(db: ChainDb, request: ExportRequest): ExportPlan {
  const genesis = db.genesis()!;
  const head = db.head()!;
  const start = historyStart(db);
  if (start.height > 0n) {
    throw new ExportRefused(
      "history",
      `the store's history starts at block ${start.height} (history_start: it was started from a snapshot of that block) and holds no block between genesis and it; ` +
        "a cbqs-fixture/v1 is replayed from genesis, so only a store holding the chain from genesis can be exported",
    );
  }
  const { names } = request;
  const to = request.to ?? head.height;
  if (to > head.height) throw new ExportRefused("range", `${names.to} ${to} is above the chain's head, block ${head.height}`);
  const from = request.from ?? 0n;
  if (request.from !== undefined) {
    if (request.postState !== "every") {
      throw new ExportRefused("range", `${names.from} chooses the first block that carries a post_state: it needs ${names.postState} every (got ${request.postState}, which writes ${request.postState === "final" ? "one on the last block only" : "none"})`);
    }
    if (from > to) throw new ExportRefused("range", `${names.from} ${from} is above ${request.to === undefined ? `the chain's head, block ${to}` : `${names.to} ${to}`}`);
  }
  let config: GenesisConfig;
  try {
    config = genesisFromSource(genesis.source);
  } catch (err) {
    throw new ExportMismatch(0n, `the stored genesis source is not a valid genesis: ${(err as Error).message}`);
  }
  const last = to === 0n ? undefined : db.blocks({ from: 1n, to, order: "desc", limit: 1 })[0];
  const chainInstance = toHex(genesis.chain_instance_id);
  return {
    genesis,
    config,
    from,
    to,
    last,
    postState: request.postState,
    name: request.name ?? `chain-${chainInstance.slice(2, 10)}-to-${to}`,
    description: request.description ?? defaultDescription(chainInstance, to, from, request.postState, last),
  };
}

/**
 * The description when none is given: what the fixture holds, from the chain alone (no path, no
 * time), so `cbqs export` and `GET /fixture` write the same bytes for the same chain and range.
 */
function defaultDescription(chainInstance: string, to: bigint, from: bigint, postState: PostStateMode, last: BlockRecord | undefined): string {
  const blocks = last === undefined ? `genesis only (no block at or below height ${to})` : `genesis and every stored block through height ${to}`;
  const states = postState === "none" ? "no post_state" : postState === "final" ? "post_state on the last block" : from > 1n ? `post_state on every block from height ${from}` : "post_state on every block";
  return `Chain instance ${chainInstance}: ${blocks}, exported from a store and re-executed from genesis; ${states}`;
}

/** The plan's fixture, written to `out` block by block (a unit is one block: src/steps.ts). */
export function* exportSteps(db: ChainDb, plan: ExportPlan, out: TextSink, onBlock?: (p: ExportProgress) => void): Steps<ExportSummary> {
  const g = plan.genesis;
  // One block at a time: the replay reads the block it executes from `fixture.blocks[0]`.
  const fixture: Fixture = {
    name: plan.name,
    description: plan.description,
    genesis: { source: g.source, config: plan.config, chain_instance_id: g.chain_instance_id, state_root: g.block.state_root },
    blocks: [],
  };
  const store = newStore();
  let started: ReturnType<typeof Replay.start>;
  try {
    started = Replay.start(fixture, store);
  } catch (err) {
    // A genesis the engine refuses: the store holds one no chain can have started from.
    if (err instanceof ReplayInputError) throw new ExportMismatch(0n, err.reason);
    throw err;
  }
  if (started.mismatch !== null) throw mismatchOf(started.mismatch);
  const replay = started.replay;
  const summary: ExportSummary = { blocks: 0, txs: 0, postStates: 0 };
  const lastHeight = plan.last?.height ?? 0n;
  const withState = (height: bigint): boolean => (plan.postState === "every" ? height >= plan.from : plan.postState === "final" && height === lastHeight);

  function* blocks(): Generator<unknown> {
    for (const record of storedBlocks(db, plan.to)) {
      const block: FixtureBlock = { ...record, gas_vectors_sha256: GAS_VECTORS_SHA256 };
      fixture.blocks[0] = block;
      let result: ReturnType<Replay["block"]>;
      try {
        result = replay.block(0);
      } catch (err) {
        // A stored transaction that does not decode: the store holds what no block may.
        if (err instanceof ReplayInputError) throw new ExportMismatch(record.height, `${err.path.replace("$.blocks[0].", "")}: ${err.reason}`);
        throw err;
      }
      if (result.mismatch !== null) throw mismatchOf(result.mismatch);
      if (withState(record.height)) {
        block.post_state = [...store.entries()];
        summary.postStates++;
      }
      summary.blocks++;
      summary.txs += record.transactions.length;
      onBlock?.({ blocks: summary.blocks, txs: summary.txs, height: record.height, last: lastHeight });
      yield blockJson(block);
    }
  }

  yield* jsonDocumentSteps(out, { ...fixtureHeader(fixture), blocks: new Streamed(blocks()) });
  return summary;
}

/** A replay mismatch as what the store holds against what executing it gives (the "fixture" replayed is the store's record). */
function mismatchOf(m: Mismatch): ExportMismatch {
  return new ExportMismatch(m.height, `${m.field}: stored ${m.expected}, re-executed from genesis ${m.actual}`);
}

/** "3 blocks (6 txs), post_state on 3" — what an export wrote, in words. */
export function exportedText(s: ExportSummary, plan: ExportPlan): string {
  const through = plan.last === undefined ? "genesis only" : `genesis through height ${plan.last.height}`;
  return `${count(s.blocks, "block")} (${through}; ${count(s.txs, "tx", "txs")}), post_state on ${count(s.postStates, "block")}`;
}
