// The census cells one built block hits (src/fuzz/census.ts counts them): each transaction's
// instruction × outcome, what t8n leaves out, and the §6.1 states — told from the main stream
// record as the transaction found and left it and the effective rent height it ran at
// (src/fuzz/observe.ts) — plus u64/u128 edge values and parameter writes. Cell names are the
// rows of docs/reference/fuzzer.md §4, so they are words, not codes.
import { decode } from "../codec/core.js";
import * as S from "../codec/schema.js";
import type { CbqsInstructionV1, PriceQuoteV1, StreamRecordV1 } from "../codec/types.js";
import type { GovAction, Transaction } from "../engine/inputs.js";
import { decodeScalar } from "../engine/context.js";
import { SYS_CBQS } from "../engine/chain.js";
import { decodePauseRecord, effectiveRentHeight } from "../engine/pause.js";
import { decodeStateValueAs } from "../../state/kv/value.js";
import type { BuiltBlock } from "./build.js";
import type { TxTouch } from "./observe.js";
import { U128_MAX, U64_MAX } from "./world.js";

export const CELL_GROUPS = ["outcome", "left out", "state", "edge", "param"] as const;
export type CellGroup = (typeof CELL_GROUPS)[number];
export type Hit = (group: CellGroup, name: string) => void;

/** §6.1 and path cells with a name of their own (the generic ones read "Active → Suspended by SettleStreamRent"). */
export const STATE = {
  suspendedPastDeadline: "Active → Suspended with its grace deadline already reached",
  expiredAtDeadline: "Suspended → DataExpired exactly at the grace deadline",
  expiredAfterDeadline: "Suspended → DataExpired after the grace deadline",
  closedInArrears: "CloseStream of an Active stream in arrears (settles it Suspended, then closes)",
  closedSuspendedBefore: "CloseStream of a Suspended stream before its grace deadline",
  closedSuspendedAfter: "CloseStream of a Suspended stream at or past its grace deadline",
  topUpLastBlock: "TopUpStream of a Suspended stream one block before its grace deadline",
  topUpAtDeadline: "TopUpStream of a Suspended stream exactly at its grace deadline: GraceDeadlinePassed",
  topUpActivePastDeadline: "TopUpStream whose settle #1 suspends an Active stream past its deadline: GraceDeadlinePassed",
  settleBeforeDeadline: "SettleStreamRent of a Suspended stream one block before its grace deadline: NoOpRejected",
  settledInFull: "SettleStreamRent pays the rent due in full",
  paysTwice: "TopUpStream pays twice (settle #1 and settle #2 both pay)",
  paysTwiceFloors: "TopUpStream pays twice and the two split floors differ from one split of the sum",
  partialKeepsPair: "TopUpStream pays part of a Suspended stream's arrears: the pinned pair kept",
  secondKeepsPair: "TopUpStream settle #2 pays part and keeps the pair settle #1 pinned",
  pauseHoldsDeadline: "a pause holds a Suspended stream's grace deadline back (H < deadline ≤ height)",
  pauseHoldsRunway: "a pause holds an Active stream's escrow runway end back (H ≤ runway end < height)",
  generationChain: "ActivateKeyGeneration a second time on one stream (encryption generation ≥ 2)",
  createdBase: "CreateStream on the governance base",
  createdQuote: "CreateStream on a provider quote",
  repricedBase: "UpdateStream reprices on the governance base",
  repricedQuote: "UpdateStream reprices on a provider quote",
  quoteLastBlock: (kind: string) => `${kind} quote accepted at its valid_until_block`,
  quoteExpired: (kind: string) => `${kind} quote one block past its valid_until_block: PricingBasisInvalid`,
} as const;

interface ResultJson {
  receipts: Array<{ index: string; error: { name: string } | null }>;
  rejected: Array<{ index: string }>;
}

/** Every cell `block` hits, in order (a cell may be hit more than once). */
export function blockCells(block: BuiltBlock, hit: Hit): void {
  const result = block.result as unknown as ResultJson;
  result.receipts.forEach((r, k) => {
    const i = Number(r.index);
    const kind = block.kinds[i]!;
    const outcome = r.error === null ? "ok" : r.error.name;
    hit("outcome", `${kind}: ${outcome}`);
    txCells(kind, block.transactions[i]!, block.touches[k]!, block.height, outcome, hit);
  });
  for (const r of result.rejected) hit("left out", block.kinds[Number(r.index)]!);
}

/** `kind`: the census's word for the transaction (a CBQS instruction's is its name). */
function txCells(kind: string, tx: Transaction, touch: TxTouch, height: bigint, outcome: string, hit: Hit): void {
  const body = tx.body;
  if (body.kind === "transfer") {
    if (body.amount === U64_MAX) hit("edge", "Transfer amount u64 max");
  } else if (body.kind === "gov") {
    govCells(body.action, outcome, hit);
  } else if (body.opcode === SYS_CBQS) {
    // Decoded again only where there are amounts or a quote to look at (the census must stay cheap).
    if (kind === "TopUpStream" || kind === "CreateStream" || kind === "UpdateStream") instructionEdges(decode(S.CbqsInstructionV1, body.payload), height, outcome, hit);
    if (touch.pause !== undefined && touch.streams.size > 0) {
      const pause = decodePauseRecord(decodeStateValueAs(touch.pause, "StorageSlot").bytes);
      streamCells(kind, touch, effectiveRentHeight(pause, height), height, outcome, hit);
    }
  }
}

function govCells(action: GovAction, outcome: string, hit: Hit): void {
  if ((action.type === "Pause" || action.type === "ExtendPause") && action.blocks === U64_MAX) hit("edge", `${action.type} blocks u64 max`);
  if (action.type !== "SetParam" && action.type !== "SetParams") return;
  const writes = action.type === "SetParam" ? [action] : action.values;
  if (writes.some((w) => w.value === U64_MAX)) hit("edge", "parameter write of u64 max (SetParam or SetParams)");
  if (outcome === "ok") for (const w of writes) hit("param", w.name);
}

const AMOUNT_EDGES: ReadonlyArray<[bigint, string]> = [
  [U64_MAX, "u64 max"],
  [U64_MAX + 1n, "u64 max + 1"],
  [U128_MAX, "u128 max"],
];
const RATE_EDGES: ReadonlyArray<[bigint, string]> = [
  [1n << 64n, "2^64"],
  [1n << 127n, "2^127"],
];

function edge(hit: Hit, what: string, value: bigint, edges: ReadonlyArray<[bigint, string]>): void {
  for (const [v, name] of edges) if (value === v) hit("edge", `${what} ${name}`);
}

function instructionEdges(instruction: CbqsInstructionV1, height: bigint, outcome: string, hit: Hit): void {
  const quoteCells = (kind: string, quote: PriceQuoteV1 | null): void => {
    if (quote === null) return;
    edge(hit, "quote rate_per_block", quote.rate_per_block, RATE_EDGES);
    if (quote.valid_until_block === height && outcome === "ok") hit("state", STATE.quoteLastBlock(kind));
    if (quote.valid_until_block + 1n === height && outcome === "PricingBasisInvalid") hit("state", STATE.quoteExpired(kind));
  };
  switch (instruction.type) {
    case "TopUpStream":
      edge(hit, "TopUpStream amount", instruction.args.amount, AMOUNT_EDGES);
      break;
    case "CreateStream":
      edge(hit, "CreateStream initial_escrow", instruction.args.initial_escrow, AMOUNT_EDGES);
      if (instruction.args.owner_nonce === U64_MAX) hit("edge", "CreateStream owner_nonce u64 max");
      quoteCells("CreateStream", instruction.args.price_quote);
      break;
    case "UpdateStream":
      quoteCells("UpdateStream", instruction.args.price_quote);
      break;
  }
}

const decodeRecord = (value: Uint8Array | undefined): StreamRecordV1 | null =>
  value === undefined ? null : decode(S.StreamRecordV1, decodeStateValueAs(value, "StorageSlot").bytes);

/** The main stream record the transaction found and (if `accepted`) left; key streams only mirror it. */
function mainRecords(touch: TxTouch, accepted: boolean): { before: StreamRecordV1 | null; after: StreamRecordV1 | null } | null {
  for (const t of touch.streams.values()) {
    const before = decodeRecord(t.before);
    const after = accepted ? decodeRecord(t.after) : null;
    if ((before ?? after)?.purpose === "Main") return { before, after };
  }
  return null;
}

/** §6.1 cells of one CBQS instruction `type` that ran at effective rent height H (physical `height`). */
function streamCells(type: string, touch: TxTouch, H: bigint, height: bigint, outcome: string, hit: Hit): void {
  const records = mainRecords(touch, outcome === "ok");
  if (records === null) return;
  const { before: b, after: a } = records;
  if (b !== null) pauseCells(b, H, height, hit);
  if (outcome !== "ok") {
    if (b !== null) rejectedCells(type, outcome, b, H, hit);
    return;
  }
  if (a === null) return;
  if (b === null) {
    if (type === "CreateStream") hit("state", a.pricing_basis.type === "GovernanceBase" ? STATE.createdBase : STATE.createdQuote);
    return;
  }
  hit("state", `${b.status} → ${a.status} by ${type}`);
  const deadline = b.suspension_grace_deadline_block;
  if (b.status === "Active" && a.status === "Suspended" && a.suspension_grace_deadline_block! <= H) hit("state", STATE.suspendedPastDeadline);
  switch (type) {
    case "SettleStreamRent":
      if (a.status === "DataExpired") hit("state", H === deadline ? STATE.expiredAtDeadline : STATE.expiredAfterDeadline);
      else if (b.status === "Active" && a.status === "Active" && a.last_settled_block > b.last_settled_block) hit("state", STATE.settledInFull);
      break;
    case "CloseStream":
      if (b.status === "Active" && rentDue(b, H) > b.escrow_balance) hit("state", STATE.closedInArrears);
      if (b.status === "Suspended") hit("state", H >= deadline! ? STATE.closedSuspendedAfter : STATE.closedSuspendedBefore);
      break;
    case "TopUpStream":
      if (b.status === "Suspended" && H + 1n === deadline) hit("state", STATE.topUpLastBlock);
      topUpPayments(b, a, H, touch, hit);
      break;
    case "UpdateStream":
      if (a.pricing_generation !== b.pricing_generation) hit("state", a.pricing_basis.type === "GovernanceBase" ? STATE.repricedBase : STATE.repricedQuote);
      break;
    case "ActivateKeyGeneration":
      if (a.encryption_generation >= 2n) hit("state", STATE.generationChain);
      break;
  }
}

// H never falls below a record's last_settled_block: rent is settled up to H at most, and H does not go back.
const rentDue = (r: StreamRecordV1, H: bigint): bigint => (H - r.last_settled_block) * r.rate_per_block;

function rejectedCells(type: string, outcome: string, b: StreamRecordV1, H: bigint, hit: Hit): void {
  const deadline = b.suspension_grace_deadline_block;
  if (type === "TopUpStream" && outcome === "GraceDeadlinePassed") {
    if (b.status === "Suspended" && H === deadline) hit("state", STATE.topUpAtDeadline);
    if (b.status === "Active") hit("state", STATE.topUpActivePastDeadline);
  }
  if (type === "SettleStreamRent" && outcome === "NoOpRejected" && b.status === "Suspended" && H + 1n === deadline) hit("state", STATE.settleBeforeDeadline);
}

/**
 * Deadlines a pause keeps ahead of the effective rent height H though the physical height reached
 * them (both need H < height). Every rate is at least CBQS_MIN_RATE_PER_BLOCK, so the runway divides.
 */
function pauseCells(b: StreamRecordV1, H: bigint, height: bigint, hit: Hit): void {
  const deadline = b.suspension_grace_deadline_block;
  if (b.status === "Suspended" && H < deadline! && deadline! <= height) hit("state", STATE.pauseHoldsDeadline);
  if (b.status === "Active") {
    const runwayEnd = b.last_settled_block + b.escrow_balance / b.rate_per_block;
    if (H <= runwayEnd && runwayEnd < height) hit("state", STATE.pauseHoldsRunway);
  }
}

/**
 * §6.1 TopUpStream: settle #1 at the pre-deposit escrow pays what it covers of the rent due;
 * settle #2 (after the credit) pays the rest it can. The rate is unchanged, so the blocks paid
 * in all are last_settled_block's advance.
 */
function topUpPayments(b: StreamRecordV1, a: StreamRecordV1, H: bigint, touch: TxTouch, hit: Hit): void {
  const r = b.rate_per_block;
  const due = rentDue(b, H);
  const first = b.escrow_balance >= due ? due : (b.escrow_balance / r) * r;
  const second = (a.last_settled_block - b.last_settled_block) * r - first;
  if (first > 0n && second > 0n) {
    hit("state", STATE.paysTwice);
    if (touch.providerBps !== undefined) {
      const bps = decodeScalar(touch.providerBps, "cbqs.rent.provider_bps");
      const share = (paid: bigint): bigint => (paid * bps) / 10_000n;
      if (share(first) + share(second) !== share(first + second)) hit("state", STATE.paysTwiceFloors);
    }
  }
  if (b.status === "Suspended" && a.status === "Suspended" && second + first > 0n && a.suspension_grace_deadline_block === b.suspension_grace_deadline_block && a.suspended_at_block === b.suspended_at_block) {
    hit("state", STATE.partialKeepsPair);
  }
  // Settle #1 pinned the pair (suspended_at = its last_settled_block); settle #2 paying moved last_settled_block on past it.
  if (b.status === "Active" && a.status === "Suspended" && second > 0n) hit("state", STATE.secondKeepsPair);
}
