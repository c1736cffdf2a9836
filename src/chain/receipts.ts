// What a block header commits to, derived from an executed block: one receipt per
// transaction and the tx_root, receipt_root and logs_root (CIP-4 §5.2/§5.3, state/roots.ts).
// The one mapping from engine outcomes to receipts, shared by the scenario runner, the fixture
// replayer and t8n; plus the receipts' JSON shape (scenario-format §4 output conventions).
import { toHex } from "../bytes.js";
import type { BlockOutcome } from "../engine/chain.js";
import { blockRoots, type Event, type Receipt } from "../../state/roots.js";
import { txHash } from "./envelope.js";

export interface TxReceipt {
  tx_hash: Uint8Array;
  status: "ok" | "rejected";
  /** The consensus part of a rejection: its u16 code and name (the message is not committed). */
  error: { code: number; name: string } | null;
  events: Event[];
  cycles: bigint;
  cells: bigint;
}

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

/** Receipts and roots of a block whose envelope bytes are `envelopes`, in block order. */
export function blockResults(envelopes: readonly Uint8Array[], outcome: BlockOutcome): BlockResults {
  // The tx hashes are the tx_root leaves (§5.2): each envelope is hashed once.
  const hashes = envelopes.map(txHash);
  const receipts: TxReceipt[] = outcome.outcomes.map((o, i) => ({
    tx_hash: hashes[i]!,
    status: o.status,
    error: o.error === null ? null : { code: o.error.code, name: o.error.name },
    events: o.events,
    cycles: o.cycles,
    cells: o.cells,
  }));
  return { receipts, ...blockRoots(hashes, receipts.map(committedReceipt)) };
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
