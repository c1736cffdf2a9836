// Per-transaction execution traces (goevmlab convention: compare two traces step by step and
// report the first divergence). A TracingStore wraps the state store and sees every access
// through the BlockBatch observer (state/interface.ts) while passing the engine's own observer
// (the gas meter) through untouched. Transaction boundaries are the engine's outermost
// checkpoints (one per transaction, src/engine/chain.ts executeTx). One JSON line per
// transaction plus one "block" line for accesses outside any transaction.
import { toHex } from "../bytes.js";
import type { TxEnvelope } from "../chain/envelope.js";
import { eventJson, type TxReceipt } from "../chain/receipts.js";
import { decode } from "../codec/core.js";
import * as S from "../codec/schema.js";
import { SYS_CBQS, type TxOutcome } from "../engine/chain.js";
import type { BlockBatch, StateAccess } from "../../state/interface.js";
import { ForwardingStore, WatchingBatch } from "../../state/forwarding.js";
import { dumpEntry } from "../../state/dump.js";
import { registryRecords } from "./records.js";

export const TRACE_FORMAT = "cbqs-trace/v1";

export interface TraceStep {
  op: "read" | "write";
  key: string;
  key_decoded: unknown;
  /** read: the value returned; write: the value before and after (null = absent/deleted). */
  value?: string | null;
  before?: string | null;
  after?: string | null;
  value_decoded?: unknown;
  before_decoded?: unknown;
  after_decoded?: unknown;
  /** Whether the CBQS meter counted this access (platform steps like the nonce are outside it). */
  metered: boolean;
  /** The CBQS meter's state/IO counts after this step. */
  meter: { reads: number; writes: number };
}

const decodedValue = (key: Uint8Array, value: Uint8Array | undefined): unknown =>
  value === undefined ? null : dumpEntry(key, value, registryRecords).decoded?.value;

class StepRecorder {
  /** Off while replaying up to the block of interest (`cbqs trace --block`). */
  active = true;
  /** Steps per transaction, in order; `outside` collects accesses between transactions. */
  readonly txs: TraceStep[][] = [];
  outside: TraceStep[] = [];
  private current: TraceStep[] | null = null;
  private meter = { reads: 0, writes: 0 };

  startTx(): void {
    this.current = [];
    this.txs.push(this.current);
    this.meter = { reads: 0, writes: 0 };
  }

  endTx(): void {
    this.current = null;
    this.meter = { reads: 0, writes: 0 };
  }

  record(a: StateAccess, metered: boolean): void {
    if (metered) this.meter = a.op === "read" ? { ...this.meter, reads: this.meter.reads + 1 } : { ...this.meter, writes: this.meter.writes + 1 };
    const { decoded } = dumpEntry(a.key, new Uint8Array(0));
    const step: TraceStep =
      a.op === "read"
        ? { op: "read", key: toHex(a.key), key_decoded: decoded?.key, value: hexOrNull(a.value), value_decoded: decodedValue(a.key, a.value), metered, meter: this.meter }
        : {
            op: "write",
            key: toHex(a.key),
            key_decoded: decoded?.key,
            before: hexOrNull(a.before),
            after: hexOrNull(a.after),
            before_decoded: decodedValue(a.key, a.before),
            after_decoded: decodedValue(a.key, a.after),
            metered,
            meter: this.meter,
          };
    (this.current ?? this.outside).push(step);
  }

  reset(): void {
    this.txs.length = 0;
    this.outside = [];
    this.endTx();
  }
}

const hexOrNull = (v: Uint8Array | undefined): string | null => (v === undefined ? null : toHex(v));

class TracingBatch extends WatchingBatch {
  private depth = 0;

  constructor(
    inner: BlockBatch,
    private readonly recorder: StepRecorder,
  ) {
    super(inner);
  }

  protected seen(a: StateAccess, metered: boolean): void {
    if (this.recorder.active) this.recorder.record(a, metered);
  }

  override checkpoint(): number {
    if (this.depth === 0) this.recorder.startTx();
    this.depth++;
    return this.inner.checkpoint();
  }
  override rollback(token: number): void {
    this.inner.rollback(token);
    this.close();
  }
  override release(token: number): void {
    this.inner.release(token);
    this.close();
  }
  private close(): void {
    this.depth--;
    if (this.depth === 0) this.recorder.endTx();
  }
}

/** A StateStore that records every access of the batches it hands out. */
export class TracingStore extends ForwardingStore {
  readonly recorder = new StepRecorder();

  override beginBlock(height: bigint): BlockBatch {
    this.recorder.reset();
    return new TracingBatch(this.inner.beginBlock(height), this.recorder);
  }
}

/** What the transaction is, in words: the CBQS instruction name, governance action or transfer. */
export function txKind(env: TxEnvelope): string {
  const body = env.tx.body;
  switch (body.kind) {
    case "transfer":
      return "Transfer";
    case "gov":
      return `Gov.${body.action.type}`;
    case "system":
      if (body.opcode !== SYS_CBQS) return `System(${body.opcode})`;
      try {
        return decode(S.CbqsInstructionV1, body.payload).type;
      } catch {
        return "CbqsInstructionV1(undecodable)";
      }
  }
}

/**
 * The trace lines of one executed block (call right after the engine executed it on a
 * TracingStore): one per transaction, then the block's accesses outside any transaction.
 */
export function blockTraceLines(
  height: bigint,
  recorder: StepRecorder,
  envelopes: readonly TxEnvelope[],
  receipts: readonly TxReceipt[],
  outcomes: readonly TxOutcome[],
  /** Positions in the caller's transaction list when some were left out (t8n `rejected`). */
  indices?: readonly number[],
): string[] {
  const lines = envelopes.map((env, i) => {
    const r = receipts[i]!;
    const o = outcomes[i]!;
    return JSON.stringify({
      format: TRACE_FORMAT,
      height: height.toString(),
      tx_index: indices?.[i] ?? i,
      tx_hash: toHex(r.tx_hash),
      from: toHex(env.tx.from),
      kind: txKind(env),
      steps: recorder.txs[i] ?? [],
      status: r.status,
      error: r.error === null ? null : { code: r.error.code.toString(), name: r.error.name },
      events: r.events.map(eventJson),
      // §18.1 meter detail of the CBQS portion (hashes charged by preimage length, signatures).
      hash_preimage_lengths: o.hashPreimageLengths,
      signatures: o.signatures,
      cycles: r.cycles.toString(),
      cells: r.cells.toString(),
    });
  });
  lines.push(JSON.stringify({ format: TRACE_FORMAT, height: height.toString(), tx_index: null, kind: "BlockEnd", steps: recorder.outside }));
  return lines;
}

export type { StepRecorder };
