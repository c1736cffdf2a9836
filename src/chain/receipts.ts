// What a block header commits to, derived from an executed block: one receipt per
// transaction and the tx_root, receipt_root and logs_root (CIP-4 §5.2/§5.3, state/roots/roots.ts).
// The one mapping from engine outcomes to receipts, shared by the scenario runner, the fixture
// replayer and t8n; plus the receipts' JSON shape (scenario-format §4 output conventions).
import { MAX_BLOCK_TRANSACTIONS, MAX_RECEIPT_EVENTS } from "../bounds.js";
import { toHex } from "../bytes.js";
import { array, decimal, hex, object, oneOf, string } from "../json/fields.js";
import { JsonError } from "../json/parse.js";
import type { BlockOutcome, TxOutcome } from "../engine/chain.js";
import type { ReceiptRecord } from "../../state/chain-db/chain-db.js";
import { blockRoots, type BlockRoots, type Receipt } from "../../state/roots/roots.js";
import { type Event } from "../../state/kv/event.js";
import { txHash } from "./envelope.js";

/** One transaction's receipt: the shape a ChainDb commits with its block. */
export type TxReceipt = ReceiptRecord;

export interface BlockResults {
  receipts: TxReceipt[];
  tx_root: Uint8Array;
  receipt_root: Uint8Array;
  logs_root: Uint8Array;
}

/** CIP-4 §5.3: the committed receipt is status, error code (0 when accepted), meters, events. */
export function committedReceipt(r: TxReceipt): Receipt {
  return { status: r.status, errorCode: r.error === null ? 0 : r.error.code, cycles: r.cycles, cells: r.cells, events: r.events };
}

/** An excluded transaction has no receipt: its caller must have left it out of the block. */
function receiptStatus(o: TxOutcome, index: number): "ok" | "rejected" {
  if (o.status === "excluded") throw new Error(`internal: transaction ${index} is not includable (${o.error!.message}) yet was given a receipt`);
  return o.status;
}

/**
 * Receipts and roots of a block whose envelope bytes are `envelopes`, in block order. `roots`
 * computes the three roots from the tx hashes and committed receipts (blockRoots; a pipelined
 * replay hands them to another thread).
 */
export function blockResults(
  envelopes: readonly Uint8Array[],
  outcome: BlockOutcome,
  roots: (txHashes: readonly Uint8Array[], receipts: readonly Receipt[]) => BlockRoots = blockRoots,
): BlockResults {
  // The tx hashes are the tx_root leaves (§5.2): each envelope is hashed once.
  const hashes = envelopes.map(txHash);
  const receipts: TxReceipt[] = outcome.outcomes.map((o, i) => ({
    tx_hash: hashes[i]!,
    status: receiptStatus(o, i),
    error: o.error === null ? null : { code: o.error.code, name: o.error.name },
    events: o.events,
    cycles: o.cycles,
    cells: o.cells,
  }));
  return { receipts, ...roots(hashes, receipts.map(committedReceipt)) };
}

export interface EventJson {
  emitter: string;
  topic: string;
  payload: string;
}

export interface ReceiptJson {
  tx_hash: string;
  status: "ok" | "rejected";
  error: { code: string; name: string; message?: string } | null;
  events: EventJson[];
  cycles: string;
  cells: string;
}

export const eventJson = (e: Event): EventJson => ({ emitter: toHex(e.emitter), topic: e.topic, payload: toHex(e.payload) });

/** A receipt as JSON; `message` (the rejection's words, never committed) is added when given. */
export function receiptJson(r: TxReceipt, message?: string): ReceiptJson {
  return {
    tx_hash: toHex(r.tx_hash),
    status: r.status,
    error: r.error === null ? null : { code: r.error.code.toString(), name: r.error.name, ...(message === undefined ? {} : { message }) },
    events: r.events.map(eventJson),
    cycles: r.cycles.toString(),
    cells: r.cells.toString(),
  };
}

/** A receipt read from JSON: the receipt, and the run-document/t8n extras when the format has them. */
export interface LoadedReceipt {
  receipt: TxReceipt;
  index?: bigint;
  message?: string;
}

/**
 * Reads one receipt in the JSON shape above at JSON path `path`, strictly: a fixture's receipts
 * have neither `index` nor `error.message`; run documents and t8n results have both (`extras`).
 */
export function loadReceiptJson(v: unknown, path: string, extras = false): LoadedReceipt {
  const r = object(v, path, ["tx_hash", "status", "error", "events", "cycles", "cells", ...(extras ? ["index"] : [])]);
  const status = oneOf(r["status"], `${path}.status`, ["ok", "rejected"] as const);
  let error: TxReceipt["error"] = null;
  let message: string | undefined;
  if (status === "rejected") {
    const e = object(r["error"], `${path}.error`, ["code", "name"], extras ? ["message"] : []);
    const code = Number(decimal(e["code"], `${path}.error.code`, 0xffffn));
    if (code === 0) throw new JsonError(`${path}.error.code`, "a rejection's code is never 0");
    error = { code, name: string(e["name"], `${path}.error.name`) };
    if (e["message"] !== undefined) message = string(e["message"], `${path}.error.message`);
  } else if (r["error"] !== null) {
    throw new JsonError(`${path}.error`, "must be null when status is ok");
  }
  const events = array(r["events"], `${path}.events`, MAX_RECEIPT_EVENTS).map((ev, i) => {
    const p = `${path}.events[${i}]`;
    const e = object(ev, p, ["emitter", "topic", "payload"]);
    return { emitter: hex(e["emitter"], `${p}.emitter`, 20), topic: string(e["topic"], `${p}.topic`), payload: hex(e["payload"], `${p}.payload`) };
  });
  if (status === "rejected" && events.length > 0) throw new JsonError(`${path}.events`, "a rejected transaction carries no events");
  const receipt: TxReceipt = {
    tx_hash: hex(r["tx_hash"], `${path}.tx_hash`, 32),
    status,
    error,
    events,
    cycles: decimal(r["cycles"], `${path}.cycles`),
    cells: decimal(r["cells"], `${path}.cells`),
  };
  return {
    receipt,
    ...(extras ? { index: decimal(r["index"], `${path}.index`, BigInt(MAX_BLOCK_TRANSACTIONS - 1)) } : {}),
    ...(message === undefined ? {} : { message }),
  };
}
