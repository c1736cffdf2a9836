// Per-transaction execution traces (goevmlab convention: compare two traces step by step and
// report the first divergence). A TracingStore wraps the state store and sees every access
// through the BlockBatch observer (state/kv/interface.ts) while passing the engine's own observer
// (the gas meter) through untouched. Transaction boundaries are the engine's outermost
// checkpoints (one per transaction, src/engine/chain.ts executeTx). One JSON line per
// transaction plus one "block" line for accesses outside any transaction.
import { MAX_RECEIPT_EVENTS, MAX_TRACE_STEPS } from "../bounds.js";
import { toHex } from "../bytes.js";
import { array, count, decimal, formatProblem, hex, object, oneOf, string } from "../json/fields.js";
import { JsonError, type JsonObject } from "../json/parse.js";
import type { TxEnvelope } from "../chain/envelope.js";
import { eventJson, type TxReceipt } from "../chain/receipts.js";
import { decode } from "../codec/core.js";
import * as S from "../codec/schema.js";
import { SYS_CBQS, type TxOutcome } from "../engine/chain.js";
import type { BlockBatch, StateAccess } from "../../state/kv/interface.js";
import { ForwardingStore, TxWatchingBatch } from "../../state/store/forwarding.js";
import { dumpEntry } from "../../state/kv/dump.js";
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

class TracingBatch extends TxWatchingBatch {

  constructor(
    inner: BlockBatch,
    private readonly recorder: StepRecorder,
  ) {
    super(inner);
  }

  protected seen(a: StateAccess, metered: boolean): void {
    if (this.recorder.active) this.recorder.record(a, metered);
  }

  protected txStart(): void {
    this.recorder.startTx();
  }
  protected txEnd(): void {
    this.recorder.endTx();
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

const TX_LINE = ["format", "height", "tx_index", "tx_hash", "from", "kind", "steps", "status", "error", "events", "hash_preimage_lengths", "signatures", "cycles", "cells"];
const BLOCK_END_LINE = ["format", "height", "tx_index", "kind", "steps"];

function loadStep(v: unknown, path: string): void {
  const op = (v as { op?: unknown } | null)?.op;
  const s =
    op === "write"
      ? object(v, path, ["op", "key", "before", "after", "metered", "meter"], ["key_decoded", "before_decoded", "after_decoded"])
      : object(v, path, ["op", "key", "value", "metered", "meter"], ["key_decoded", "value_decoded"]);
  oneOf(s["op"], `${path}.op`, ["read", "write"] as const);
  hex(s["key"], `${path}.key`);
  for (const k of ["value", "before", "after"]) if (s[k] !== undefined && s[k] !== null) hex(s[k], `${path}.${k}`);
  if (typeof s["metered"] !== "boolean") throw new JsonError(`${path}.metered`, "expected true or false");
  const m = object(s["meter"], `${path}.meter`, ["reads", "writes"]);
  count(m["reads"], `${path}.meter.reads`);
  count(m["writes"], `${path}.meter.writes`);
}

/** Reads one cbqs-trace/v1 line back (`cbqs diff`), strictly, at JSON path `path`. */
export function loadTraceLine(v: unknown, path: string): JsonObject {
  const blockEnd = (v as { tx_index?: unknown } | null)?.tx_index === null;
  const o = object(v, path, blockEnd ? BLOCK_END_LINE : TX_LINE);
  if (o["format"] !== TRACE_FORMAT) throw new JsonError(`${path}.format`, formatProblem(o["format"], [TRACE_FORMAT]));
  decimal(o["height"], `${path}.height`);
  array(o["steps"], `${path}.steps`, MAX_TRACE_STEPS).forEach((s, i) => loadStep(s, `${path}.steps[${i}]`));
  if (blockEnd) {
    if (o["kind"] !== "BlockEnd") throw new JsonError(`${path}.kind`, 'expected "BlockEnd" on the line with tx_index null');
    return o;
  }
  count(o["tx_index"], `${path}.tx_index`);
  hex(o["tx_hash"], `${path}.tx_hash`, 32);
  hex(o["from"], `${path}.from`, 20);
  string(o["kind"], `${path}.kind`);
  const status = oneOf(o["status"], `${path}.status`, ["ok", "rejected"] as const);
  if (status === "ok" && o["error"] !== null) throw new JsonError(`${path}.error`, "must be null when status is ok");
  if (status === "rejected") {
    const e = object(o["error"], `${path}.error`, ["code", "name"]);
    decimal(e["code"], `${path}.error.code`, 0xffffn);
    string(e["name"], `${path}.error.name`);
  }
  array(o["events"], `${path}.events`, MAX_RECEIPT_EVENTS).forEach((ev, i) => {
    const e = object(ev, `${path}.events[${i}]`, ["emitter", "topic", "payload"]);
    hex(e["emitter"], `${path}.events[${i}].emitter`, 20);
    string(e["topic"], `${path}.events[${i}].topic`);
    hex(e["payload"], `${path}.events[${i}].payload`);
  });
  array(o["hash_preimage_lengths"], `${path}.hash_preimage_lengths`, MAX_TRACE_STEPS).forEach((n, i) => count(n, `${path}.hash_preimage_lengths[${i}]`));
  count(o["signatures"], `${path}.signatures`);
  decimal(o["cycles"], `${path}.cycles`);
  decimal(o["cells"], `${path}.cells`);
  return o;
}
