// The pre-state of a gas vector or plan path, as exact bytes: a genesis (with the exact source
// bytes that define chain_instance_id, §3) plus setup blocks of SYS_CBQS transactions that must
// all be accepted, then one target transaction in its own block. Running it measures the CBQS
// portion of the target at the state interface (src/gas/observe.ts) and cross-checks the engine's
// own meter. Fee prices are zero: fees are platform charges and never change a CBQS number.
import type { GenesisConfig } from "../engine/inputs.js";
import { decode } from "../codec/core.js";
import * as S from "../codec/schema.js";
import type { Address, InstructionName } from "../codec/types.js";
import { Chain, SYS_CBQS, type TxOutcome } from "../engine/chain.js";
import { ALL_FAST_PATHS, enginePaths, type EngineChoice } from "../engine/fast-paths.js";
import { charge, COSTS, RESERVATIONS, type CostSchedule, type MeterUsage } from "../engine/meter.js";
import type { BlockBatch, StateAccess } from "../../state/kv/interface.js";
import { meteredEventBytes } from "../../state/kv/event.js";
import { MemoryStateStore } from "../../state/store/store.js";
import { ObservingStore } from "./observe.js";

export interface ScenarioTx {
  from: Address;
  payload: Uint8Array;
}

export interface GasScenario {
  genesis: {
    source: Uint8Array;
    chain_id: bigint;
    governance: Address;
    params: Array<[string, bigint]>;
    accounts: Array<[Address, bigint]>;
  };
  setup: Array<{ height: bigint; txs: ScenarioTx[] }>;
  target: ScenarioTx & { height: bigint };
}

/** The scenario cannot be run as written (a setup transaction rejected, a bad payload…). */
export class ScenarioError extends Error {
  override name = "ScenarioError";
}

export interface Measurement {
  instruction: InstructionName;
  status: "ok" | "rejected";
  error: string | null;
  payloadBytes: number;
  reserved: { reads: number; writes: number };
  actual: { reads: number; writes: number };
  charged: { reads: number; writes: number };
  hashPreimageLengths: number[];
  signatures: number;
  writtenBytes: number;
  eventBytes: number;
  cycles: bigint;
  cells: bigint;
  /** The metered accesses, in order (for plan classification). */
  accesses: StateAccess[];
  chain: Chain;
}

export function genesisConfig(s: GasScenario): GenesisConfig {
  return {
    chain_id: s.genesis.chain_id,
    timestamp: 0n,
    block_time_seconds: 1n,
    governance: s.genesis.governance,
    params: new Map(s.genesis.params),
    accounts: s.genesis.accounts.map(([address, balance]) => ({ address, balance })),
    cycle_price: 0n,
    cell_price: 0n,
  };
}

const systemTx = (tx: ScenarioTx) => ({ from: tx.from, body: { kind: "system" as const, opcode: SYS_CBQS, payload: tx.payload } });

/**
 * Runs `s` and measures its target. `costs` prices the measured usage (default: the engine's
 * COSTS, in which case the engine's own receipt numbers must agree exactly). `amplify` is the
 * test hook of ObservingStore; `paths` the chain's fast paths (src/engine/fast-paths.ts).
 */
export function runScenario(s: GasScenario, costs: CostSchedule = COSTS, amplify?: (batch: BlockBatch, key: Uint8Array) => void, paths: EngineChoice = ALL_FAST_PATHS): Measurement {
  let instruction: InstructionName;
  try {
    instruction = decode(S.CbqsInstructionV1, s.target.payload).type;
  } catch (err) {
    throw new ScenarioError(`target payload does not decode: ${(err as Error).message}`);
  }
  const store = new ObservingStore(new MemoryStateStore(), amplify);
  const chain = Chain.genesis(genesisConfig(s), s.genesis.source, store, enginePaths(paths));
  for (const block of s.setup) {
    const outcomes = chain.executeBlock({ height: block.height, timestamp: block.height, txs: block.txs.map(systemTx) }).outcomes;
    outcomes.forEach((o, i) => {
      if (o.status !== "ok") throw new ScenarioError(`setup transaction ${i} at height ${block.height} was rejected: ${o.error?.name}: ${o.error?.message}`);
    });
  }
  store.metered = [];
  const outcome: TxOutcome = chain.executeBlock({ height: s.target.height, timestamp: s.target.height, txs: [systemTx(s.target)] }).outcomes[0]!;
  if (outcome.status === "excluded") throw new ScenarioError(`target transaction is not includable: ${outcome.error?.message}`);
  const accesses = store.metered;
  const reads = accesses.filter((a) => a.op === "read").length;
  const writes = accesses.length - reads;
  let writtenBytes = 0;
  for (const a of accesses) if (a.op === "write") writtenBytes += a.key.length + (a.after?.length ?? 0);
  let eventBytes = 0;
  for (const e of outcome.events) eventBytes += meteredEventBytes(e);
  const usage: MeterUsage = {
    instruction,
    payloadBytes: s.target.payload.length,
    reads,
    writes,
    hashPreimageLengths: outcome.hashPreimageLengths,
    signatures: outcome.signatures,
    writtenBytes,
    eventBytes,
  };
  const accepted = outcome.status === "ok";
  const charged = charge(usage, accepted, costs);
  // The engine's receipt must agree with what the state interface saw (§18.1: counted there).
  const engine = charge(usage, accepted, COSTS);
  if (outcome.reads !== reads || outcome.writes !== writes || outcome.cycles !== engine.cycles || outcome.cells !== engine.cells) {
    throw new ScenarioError(
      `engine receipt (${outcome.reads} reads, ${outcome.writes} writes, ${outcome.cycles} cycles, ${outcome.cells} cells) disagrees with the state interface (${reads}, ${writes}, ${engine.cycles}, ${engine.cells})`,
    );
  }
  return {
    instruction,
    status: outcome.status,
    error: outcome.error?.name ?? null,
    payloadBytes: usage.payloadBytes,
    reserved: { ...RESERVATIONS[instruction] },
    actual: { reads, writes },
    charged: { reads: charged.chargedReads, writes: charged.chargedWrites },
    hashPreimageLengths: [...outcome.hashPreimageLengths],
    signatures: outcome.signatures,
    writtenBytes,
    eventBytes,
    cycles: charged.cycles,
    cells: charged.cells,
    accesses,
    chain,
  };
}
