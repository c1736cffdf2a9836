// The Stream Registry chain: genesis (CIP-39 §3, §4, §4.5, §18), block execution with
// compute-then-commit transactions (§5), and read views for the run document.
import { echo } from "../bounds.js";
import { bytesEqual, compareBytes, toHex } from "../bytes.js";
import type { BlockInput, GenesisConfig, Transaction } from "./inputs.js";
import { decode, encode } from "../codec/core.js";
import { chainInstanceId } from "../codec/derive.js";
import { DecodeError } from "../codec/errors.js";
import { genesisBaseRateSchedules } from "../codec/schedule.js";
import * as S from "../codec/schema.js";
import type { Address, Bytes32, CbqsInstructionV1, ProviderRecordV1, StreamRecordV1 } from "../codec/types.js";
import { LIVE_SCALARS, paramRow } from "../params.js";
import type { BlockBatch, StateStore } from "../../state/kv/interface.js";
import { parseStateKey, StatePrefix } from "../../state/kv/keys.js";
import type { Event } from "../../state/kv/event.js";
import { decodeStateValueAs, encodeStateValue } from "../../state/kv/value.js";
import { runInstruction } from "../../instructions/index.js";
import { AccountLedger, readAccount, writeAccount, type Account } from "./accounts.js";
import { decodeScalar, encodeScalar, encodeSingleton, type TxContext } from "./context.js";
import { BlockInputError, CbqsError, EngineDefect, ERRORS, GenesisError, reject, type ErrorName } from "./errors.js";
import { applyGovAction, bpsSumProblem, liveScalarProblem, readPauseRecord, readPauseRecordAt, writePauseRecord } from "./governance.js";
import {
  accountKey,
  classifyRegistryUserKey,
  paramKey,
  PLATFORM_ADDRESS,
  providerKey,
  REGISTRY_ADDRESS,
  schedulesKey,
  singletonKey,
  streamKey,
  ZERO_ADDRESS,
} from "./layout.js";
import { addU64, U64_MAX } from "./math.js";
import { cycleBound, Meter } from "./meter.js";
import { ALL_FAST_PATHS, enginePaths, type EnginePaths } from "./fast-paths.js";
import { effectiveRentHeight, isPaused, NEVER_PAUSED, pauseRecordKey, type PauseRecord } from "./pause.js";

const KEYLESS_ACCOUNTS: readonly Address[] = [REGISTRY_ADDRESS, PLATFORM_ADDRESS, ZERO_ADDRESS];

/** §5/§6.1: custody 0x17, the Platform Fee Account 0x18 and the burn address sign nothing. */
export const isKeylessAccount = (address: Address): boolean => KEYLESS_ACCOUNTS.some((a) => bytesEqual(a, address));

/** §3: the one top-level system-instruction opcode of CBQS. */
export const SYS_CBQS = 218;

export interface TxError {
  code: number;
  name: string;
  message: string;
}

export interface TxOutcome {
  /** `excluded`: not includable (D-0013 "Included transactions: nonce and fee"); no receipt. */
  status: "ok" | "rejected" | "excluded";
  error: TxError | null;
  events: Event[];
  cycles: bigint;
  cells: bigint;
  reads: number;
  writes: number;
  /** §18.1 detail of the CBQS portion: every handler keccak preimage length, in order. */
  hashPreimageLengths: number[];
  /** §18.1 detail: Ed25519 verifications performed. */
  signatures: number;
}

export interface BlockOutcome {
  height: bigint;
  effectiveRentHeight: bigint;
  stateRoot: Uint8Array;
  outcomes: TxOutcome[];
}

function validateGenesis(config: GenesisConfig): void {
  const fail = (msg: string): never => {
    throw new GenesisError(msg);
  };
  if (config.chain_id < 0n || config.chain_id > U64_MAX) fail(`chain_id ${config.chain_id} is not a u64`);
  if (config.governance.length !== 20) fail("governance must be a 20-byte address");
  for (const [name, value] of config.params) {
    const row = paramRow(name) ?? fail(`params: unknown parameter ${echo(name)}`);
    if (row.class === "live") {
      const problem = liveScalarProblem(name, value);
      if (problem !== null) fail(`params: ${problem}`);
    } else if (value < 1n || value > row.maximum) {
      fail(`params: ${name} = ${value} is outside [1, ${row.maximum}] (§18)`);
    }
  }
  const live = (name: string) => config.params.get(name) ?? paramRow(name)!.default;
  const bps = bpsSumProblem(live("cbqs.rent.provider_bps"), live("cbqs.rent.platform_bps"));
  if (bps !== null) fail(`params: ${bps}`);
  let supply = 0n;
  // By hex (a set): comparing each address with every earlier one made a 100,000-account genesis take minutes.
  const seen = new Set<string>();
  config.accounts.forEach(({ address, balance }, i) => {
    if (address.length !== 20) fail(`accounts[${i}]: address must be 20 bytes`);
    const hex = toHex(address);
    if (seen.has(hex)) fail(`accounts[${i}]: ${hex} is listed twice`);
    seen.add(hex);
    if (balance < 0n || balance > U64_MAX) fail(`accounts[${i}]: balance ${balance} is not a u64`);
    supply += balance;
  });
  // §5: total supply fits u64, which is what makes every legitimate credit overflow-free.
  if (supply > U64_MAX) fail("accounts: total balance exceeds u64");
  for (const [what, v] of [["cycle_price", config.cycle_price], ["cell_price", config.cell_price]] as const) {
    if (v < 0n || v > U64_MAX) fail(`${what} ${v} is not a u64`);
  }
}

export class Chain {
  private lastHeight = 0n;
  /** Where the registry's pause record lives: read on every block and every CBQS transaction. */
  private readonly registryPauseKey: Uint8Array;

  /**
   * `paths`: the fast paths this chain takes, its own (src/engine/fast-paths.ts): the §9.1
   * verifier of every charged verification and the bounds memo.
   */
  private constructor(
    readonly config: GenesisConfig,
    readonly chainInstanceId: Bytes32,
    readonly genesisStateRoot: Uint8Array,
    private readonly store: StateStore,
    private readonly paths: EnginePaths,
  ) {
    this.registryPauseKey = pauseRecordKey(config.governance, REGISTRY_ADDRESS);
  }

  /**
   * Validates `config`, derives chain_instance_id from the exact `sourceBytes` given (§3: one
   * capture, never re-read), writes the genesis state and commits it as block 0. The chain takes
   * every fast path unless `paths` says otherwise (a spec-only run: enginePaths(SPEC_ONLY)).
   */
  static genesis(config: GenesisConfig, sourceBytes: Uint8Array, store: StateStore, paths: EnginePaths = enginePaths(ALL_FAST_PATHS)): Chain {
    validateGenesis(config);
    const instance = chainInstanceId(sourceBytes);
    const baseRates: Record<string, bigint> = {};
    for (const [name, value] of config.params) if (paramRow(name)?.class === "base_rate") baseRates[name] = value;
    // validateGenesis has checked every base-rate value against its §18 row, the bounds
    // genesisBaseRateSchedules checks, so it cannot refuse them here.
    const schedules = genesisBaseRateSchedules(baseRates);
    const batch = store.beginBlock(0n);
    const slot = (bytes: Uint8Array) => encodeStateValue({ kind: "StorageSlot", bytes });
    // §3/§4.1: the singleton carrying the chain instance (and the numeric chain id of §4 contexts).
    batch.put(singletonKey(), slot(encodeSingleton({ chain_id: config.chain_id, chain_instance_id: instance })));
    // §4.5: the frozen schedule v1, 162 canonical bytes.
    batch.put(schedulesKey(), slot(encode(S.BaseRateSchedulesV1, schedules)));
    // §18.1: the 25 live scalars, one SystemState key each.
    for (const name of LIVE_SCALARS) batch.put(paramKey(name), encodeScalar(config.params.get(name) ?? paramRow(name)!.default));
    // Denial of service: the registry's pause-accounting record, never paused.
    writePauseRecord(batch, config.governance, REGISTRY_ADDRESS, NEVER_PAUSED);
    for (const { address, balance } of config.accounts) writeAccount(batch, address, { nonce: 0n, balance });
    const { stateRoot } = store.commitBlock(batch);
    return new Chain(config, instance, stateRoot, store, paths);
  }

  /**
   * A chain over a store that already holds a registry state (t8n, a pre-state from elsewhere):
   * nothing is written; `genesisStateRoot` is the store's current root. `config` is validated
   * like a genesis one, though only governance, cycle_price and cell_price are read when
   * executing blocks; `chainInstanceId` must be the one recorded in the store's singleton.
   * The store itself keeps block heights above its last commit.
   */
  static resume(config: GenesisConfig, chainInstanceId: Bytes32, store: StateStore, paths: EnginePaths = enginePaths(ALL_FAST_PATHS)): Chain {
    validateGenesis(config);
    return new Chain(config, chainInstanceId, store.root(), store, paths);
  }

  /** Executes one block; heights strictly increase and a gap is a run of free empty blocks. */
  executeBlock(block: BlockInput): BlockOutcome {
    if (block.height <= this.lastHeight) {
      throw new BlockInputError(`block height ${block.height} is not above the previous height ${this.lastHeight}`);
    }
    const batch = this.store.beginBlock(block.height);
    const outcomes = block.txs.map((tx) => this.executeTx(batch, block.height, tx));
    const pause = readPauseRecordAt((k) => batch.getView(k), this.registryPauseKey);
    const effective = effectiveRentHeight(pause, block.height);
    const { stateRoot } = this.store.commitBlock(batch);
    this.lastHeight = block.height;
    return { height: block.height, effectiveRentHeight: effective, stateRoot, outcomes };
  }

  // ---- transactions ---------------------------------------------------------------------------

  /**
   * One transaction (D-0013 "Included transactions: nonce and fee"). A transaction
   * the block cannot contain — a keyless sender, a malformed sender account, a sender who
   * cannot pay the most its instruction can be charged — is `excluded`: no effect, no receipt,
   * its nonce unused. Every other one is included: accepted, or rejected by its instruction
   * with every effect rolled back (§5 compute-then-commit) except the platform's: the sender's
   * nonce advances and the fee for what the meter charged is burned.
   */
  private executeTx(batch: BlockBatch, height: bigint, tx: Transaction): TxOutcome {
    // §5/§6.1: custody 0x17, the Platform Fee Account 0x18 and the burn address are keyless:
    // nothing they "sign" is valid, so no block contains a transaction from them.
    if (isKeylessAccount(tx.from)) {
      return excluded(`${toHex(tx.from)} is a keyless system account and cannot send transactions`);
    }
    // One outermost checkpoint per transaction (traces take it as the transaction's bounds); the
    // instruction's effects sit in an inner one, so a rejection undoes them but not the
    // platform's nonce and fee.
    const outer = batch.checkpoint();
    const run: { meter: Meter | null } = { meter: null };
    try {
      const sender = readAccount(batch, tx.from);
      // State corruption only (2^64 included transactions): no nonce is left to use.
      if (sender.nonce === U64_MAX) throw new NotIncludable(`${toHex(tx.from)} has nonce u64::MAX: no nonce is left to use`);
      const inner = batch.checkpoint();
      let outcome: TxOutcome;
      try {
        const events = this.applyTx(batch, height, tx, sender, run);
        batch.release(inner);
        outcome = { status: "ok", error: null, events, ...usage(run.meter, true) };
      } catch (err) {
        batch.observer = undefined;
        batch.rollback(inner);
        if (!(err instanceof CbqsError)) throw err;
        this.payRejected(batch, tx.from, sender, run.meter);
        outcome = { status: "rejected", error: { code: err.code, name: err.errorName, message: err.message }, events: [], ...usage(run.meter, false) };
      }
      batch.release(outer);
      return outcome;
    } catch (err) {
      batch.observer = undefined;
      batch.rollback(outer);
      if (err instanceof NotIncludable) return excluded(err.message);
      // A malformed sender account, or a burn credit overflowing u64 while settling a rejected
      // fee: state corruption, and the transaction is not includable.
      if (err instanceof CbqsError) return excluded(err.message);
      throw err;
    } finally {
      batch.observer = undefined;
    }
  }

  /**
   * An included rejected transaction, after its effects were rolled back: the nonce is used and
   * what the meter charged is paid. A rejection before the meter exists has no CBQS charge and
   * pays nothing (D-0013 "Included transactions: nonce and fee"). The reservation
   * check made the balance cover the fee: an InsufficientBalance here means cycleBound is not an
   * upper bound of the rejected charge, an engine bug (EngineDefect), never a silent exclusion.
   * Only a burn credit overflowing u64 (state corruption: ArithmeticOverflow) can fail here.
   */
  private payRejected(batch: BlockBatch, from: Address, sender: Account, meter: Meter | null): void {
    const ledger = new AccountLedger(batch, from, sender);
    if (meter !== null) {
      try {
        this.chargeFee(ledger, meter, false);
      } catch (err) {
        if (err instanceof CbqsError && err.errorName === "InsufficientBalance") {
          throw new EngineDefect(`${meter.instruction}: the rejected charge exceeds the fee at the reservation (cycleBound): ${err.message}`);
        }
        if (err instanceof CbqsError && err.errorName === "ArithmeticOverflow") {
          throw new NotIncludable(`the fee of the rejected transaction cannot be settled: ${err.message}`);
        }
        throw err;
      }
    }
    writeAccount(batch, from, { nonce: addU64(sender.nonce, 1n, "sender nonce"), balance: ledger.senderAccount().balance });
  }

  private applyTx(batch: BlockBatch, height: bigint, tx: Transaction, sender: Account, run: { meter: Meter | null }): Event[] {
    // Platform step (outside the CBQS meter): the sender's account.
    const ledger = new AccountLedger(batch, tx.from, sender);
    const events: Event[] = [];
    const body = tx.body;
    switch (body.kind) {
      case "transfer":
        ledger.debit(tx.from, body.amount, "transfer");
        ledger.credit(body.to, body.amount, "transfer");
        ledger.flush();
        break;
      case "gov":
        if (!bytesEqual(tx.from, this.config.governance)) reject("Unauthorized", "governance actions are valid only from the governance account");
        applyGovAction(batch, this.config.governance, height, body.action);
        break;
      case "system": {
        if (body.opcode !== SYS_CBQS) reject("UnknownOpcode", `opcode ${body.opcode} is not SYS_CBQS (${SYS_CBQS})`);
        // CIP-12 breaker: a paused 0x17 rejects every CBQS instruction before any registry read.
        if (isPaused(readPauseRecordAt((k) => batch.getView(k), this.registryPauseKey), height)) {
          reject("RegistryPaused", "the emergency-pause breaker covers the Stream Registry (0x17)");
        }
        const instruction = decodeInstruction(body.payload);
        // The fee at the reservation: the most this instruction can be charged on any path,
        // checked before its handler runs; a sender who cannot pay it is not included.
        const reservationFee = cycleBound(instruction.type, body.payload.length) * this.config.cycle_price;
        if (sender.balance < reservationFee) {
          throw new NotIncludable(`${toHex(tx.from)} holds ${sender.balance}, less than the fee at the reservation ${reservationFee} of ${instruction.type}`);
        }
        const meter = new Meter(instruction.type, body.payload.length, this.paths.verifySignature);
        run.meter = meter;
        const ctx: TxContext = {
          batch,
          meter,
          height,
          sender: tx.from,
          governance: this.config.governance,
          registryPauseKey: this.registryPauseKey,
          accounts: ledger,
          events,
          boundsMemo: this.paths.boundsMemo,
        };
        batch.observer = (access) => meter.observe(access);
        runInstruction(ctx, instruction);
        ledger.flush();
        batch.observer = undefined;
        this.chargeFee(ledger, meter, true);
        break;
      }
    }
    // Platform nonce step: every included transaction increments the sender's nonce.
    const after = ledger.senderAccount();
    writeAccount(batch, tx.from, { nonce: addU64(after.nonce, 1n, "sender nonce"), balance: after.balance });
    return events;
  }

  /**
   * Fees (the meter's charged cycles and cells of the path taken) are burned to the zero address;
   * zero prices (the default) charge nothing. An accepted instruction whose sender cannot pay
   * is rejected (InsufficientBalance) and pays its rejected charge instead.
   */
  private chargeFee(ledger: AccountLedger, meter: Meter, accepted: boolean): void {
    const fee = meter.cycles(accepted) * this.config.cycle_price + meter.cells(accepted) * this.config.cell_price;
    if (fee === 0n) return;
    ledger.debit(ledger.senderAddress, fee, "transaction fee");
    ledger.credit(ZERO_ADDRESS, fee, "transaction fee burn");
    ledger.flush();
  }

  // ---- read views (committed state) -------------------------------------------------------------

  private slot(key: Uint8Array): Uint8Array | undefined {
    const bytes = this.store.read(key);
    return bytes === undefined ? undefined : decodeStateValueAs(bytes, "StorageSlot").bytes;
  }

  stream(id: Bytes32): StreamRecordV1 | null {
    const bytes = this.slot(streamKey(id));
    return bytes === undefined ? null : decode(S.StreamRecordV1, bytes);
  }

  provider(address: Address): ProviderRecordV1 | null {
    const bytes = this.slot(providerKey(address));
    return bytes === undefined ? null : decode(S.ProviderRecordV1, bytes);
  }

  account(address: Address): Account {
    const bytes = this.store.read(accountKey(address));
    if (bytes === undefined) return { nonce: 0n, balance: 0n };
    const v = decodeStateValueAs(bytes, "Account");
    return { nonce: v.nonce, balance: v.balance };
  }

  /** The Stream Registry's pause accounting. */
  pause(): PauseRecord {
    return readPauseRecord((k) => this.store.read(k), this.config.governance, REGISTRY_ADDRESS);
  }

  /** The 25 live governance scalars, in §18.1 order. */
  params(): Map<string, bigint> {
    return new Map(LIVE_SCALARS.map((name) => [name, decodeScalar(this.store.read(paramKey(name)), name)]));
  }

  /** Every stream record, ascending by stream id. */
  streams(): StreamRecordV1[] {
    return this.registryEntries("stream").map((bytes) => decode(S.StreamRecordV1, bytes));
  }

  /** Every provider record, ascending by provider address. */
  providers(): ProviderRecordV1[] {
    return this.registryEntries("provider").map((bytes) => decode(S.ProviderRecordV1, bytes));
  }

  /** Every account with a nonzero balance or nonce, ascending by address. */
  accounts(): Array<{ address: Address } & Account> {
    const out: Array<{ address: Address } & Account> = [];
    for (const [key, value] of this.store.entries()) {
      if (key[0] !== StatePrefix.Account) continue;
      const parsed = parseStateKey(key);
      if (parsed.layout !== "address") continue;
      const v = decodeStateValueAs(value, "Account");
      out.push({ address: parsed.address, nonce: v.nonce, balance: v.balance });
    }
    return out.sort((a, b) => compareBytes(a.address, b.address));
  }

  private registryEntries(kind: "stream" | "provider"): Uint8Array[] {
    const found: Array<[Uint8Array, Uint8Array]> = [];
    for (const [key, value] of this.store.entries()) {
      if (key[0] !== StatePrefix.ActorStorage) continue;
      const parsed = parseStateKey(key);
      if (parsed.layout !== "addressSlot" || !bytesEqual(parsed.address, REGISTRY_ADDRESS) || parsed.slot.hashed) continue;
      const entry = classifyRegistryUserKey(parsed.slot.userKey);
      if (entry?.kind !== kind) continue;
      found.push([parsed.slot.userKey, decodeStateValueAs(value, "StorageSlot").bytes]);
    }
    return found.sort((a, b) => compareBytes(a[0], b[0])).map(([, bytes]) => bytes);
  }
}

type Usage = Pick<TxOutcome, "cycles" | "cells" | "reads" | "writes" | "hashPreimageLengths" | "signatures">;

function usage(meter: Meter | null, accepted: boolean): Usage {
  if (meter === null) return { cycles: 0n, cells: 0n, reads: 0, writes: 0, hashPreimageLengths: [], signatures: 0 };
  return {
    cycles: meter.cycles(accepted),
    cells: meter.cells(accepted),
    reads: meter.reads,
    writes: meter.writes,
    hashPreimageLengths: [...meter.hashPreimageLengths],
    signatures: meter.signatures,
  };
}

/** A transaction no block can contain; executeTx turns it into an `excluded` outcome. */
class NotIncludable extends Error {
  override name = "NotIncludable";
}

function excluded(message: string): TxOutcome {
  return { status: "excluded", error: { code: 0, name: "NotIncludable", message }, events: [], ...usage(null, false) };
}

/** §5: canonical decode; a DecodeError is a rejection carrying its own code (e.g. 3937). */
function decodeInstruction(payload: Uint8Array): CbqsInstructionV1 {
  try {
    return decode(S.CbqsInstructionV1, payload);
  } catch (err) {
    if (!(err instanceof DecodeError)) throw err;
    const name: ErrorName = err.code === ERRORS.UnsupportedVersion.code ? "UnsupportedVersion" : "InvalidEncoding";
    throw new CbqsError(name, err.message, err.code);
  }
}

