// One transaction written as a scenario writes it (docs/reference/formats/scenario.md §2) → its raw CBOR
// envelope (docs/reference/formats/transaction.md), what a node's POST /tx takes. `cbqs tx` builds from the JSON
// it is given (transactionFromJson); the library's buildTransaction takes the same shapes typed
// (src/scenario/transaction-input.ts), and is this function too.
import { encodeEnvelope } from "../chain/envelope.js";
import type { Address } from "../codec/types.js";
import { ScenarioError } from "./json.js";
import { parseTx } from "./parse.js";
import { resolveTx } from "./run.js";
import type { TransactionInput } from "./transaction-input.js";

export interface TransactionContext {
  chainId: bigint;
  /** 32 bytes: signs quotes and receipts, derives stream ids. */
  chainInstanceId: Uint8Array;
  /** The sender's next nonce (its account nonce plus its transactions still queued), or how to find it from the sender. */
  nonce: bigint | ((from: Address) => bigint);
}

/**
 * The envelope of `tx`; a malformed transaction (typed or not: JavaScript callers are checked
 * alike) is a ScenarioError naming its JSON path.
 */
export function buildTransaction(tx: TransactionInput, ctx: TransactionContext): Uint8Array {
  return transactionFromJson(tx, ctx);
}

/** The envelope of a transaction given as any value (parsed JSON, or a caller's object); a malformed one is a ScenarioError naming its JSON path. */
export function transactionFromJson(tx: unknown, ctx: TransactionContext): Uint8Array {
  const t = parseTx(asJson(tx), "$");
  if (t.expect !== undefined) throw new ScenarioError("$.expect", "expectations belong to scenarios; a transaction for a node has none");
  // A receipt's served_at.block_hash cannot be looked up here: it must be written out.
  const resolved = resolveTx(t, { chainId: ctx.chainId, chainInstanceId: ctx.chainInstanceId, blockHashAt: () => undefined });
  const nonce = typeof ctx.nonce === "bigint" ? ctx.nonce : ctx.nonce(resolved.from);
  return encodeEnvelope({ chain_id: ctx.chainId, nonce, tx: resolved });
}

/**
 * `tx` as its JSON text would give it: every bigint as its decimal string (the scenario format's
 * integer; a negative one is then refused as any malformed integer is), undefined fields dropped.
 * A value JSON cannot write (a cycle) is JSON.stringify's TypeError.
 */
function asJson(tx: unknown): unknown {
  const text = JSON.stringify(tx, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
  return text === undefined ? tx : (JSON.parse(text) as unknown);
}
