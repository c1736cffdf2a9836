// One transaction written as a scenario writes it (docs/scenario-format.md §2) → its raw CBOR
// envelope (docs/transactions.md), what a node's POST /tx takes. `cbqs tx` and the library's
// buildTransaction are this function.
import { encodeEnvelope } from "../chain/envelope.js";
import type { Address } from "../codec/types.js";
import { ScenarioError } from "./json.js";
import { parseTx } from "./parse.js";
import { resolveTx } from "./run.js";

export interface TransactionContext {
  chainId: bigint;
  /** 32 bytes: signs quotes and receipts, derives stream ids. */
  chainInstanceId: Uint8Array;
  /** The sender's next nonce (its account nonce plus its transactions still queued), or how to find it from the sender. */
  nonce: bigint | ((from: Address) => bigint);
}

/** The envelope of `tx` (a JSON value); a malformed transaction is a ScenarioError naming its JSON path. */
export function buildTransaction(tx: unknown, ctx: TransactionContext): Uint8Array {
  const t = parseTx(tx, "$");
  if (t.expect !== undefined) throw new ScenarioError("$.expect", "expectations belong to scenarios; a transaction for a node has none");
  // A receipt's served_at.block_hash cannot be looked up here: it must be written out.
  const resolved = resolveTx(t, { chainId: ctx.chainId, chainInstanceId: ctx.chainInstanceId, blockHashAt: () => undefined });
  const nonce = typeof ctx.nonce === "bigint" ? ctx.nonce : ctx.nonce(resolved.from);
  return encodeEnvelope({ chain_id: ctx.chainId, nonce, tx: resolved });
}
