// Envelope nonces (D-0013 "Included transactions: nonce and fee"): a transaction's
// envelope carries its sender's account nonce immediately before it — the block-start nonce
// plus the sender's earlier transactions in the block that were included (accepted or
// rejected: both use their nonce; only an `excluded` one, which no block may contain, does
// not). The runner derives envelopes with this rule; the replayer and t8n check given
// envelopes against it.
import { toHex } from "../bytes.js";
import type { Address } from "../codec/types.js";
import type { BlockOutcome, Chain } from "../engine/chain.js";

/** Account nonce of every sender at the start of the block, keyed by hex address; read before executing it. */
export function startNonces(chain: Chain, senders: readonly Address[]): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const from of senders) {
    const k = toHex(from);
    if (!out.has(k)) out.set(k, chain.account(from).nonce);
  }
  return out;
}

/**
 * The nonce each transaction's envelope carries, given the executed block's outcomes, and each
 * sender's nonce after the block.
 */
export function envelopeNonces(
  senders: readonly Address[],
  outcome: BlockOutcome,
  start: ReadonlyMap<string, bigint>,
): { nonces: bigint[]; after: Map<string, bigint> } {
  const after = new Map(start);
  const nonces = senders.map((from, i) => {
    const k = toHex(from);
    const nonce = after.get(k)!;
    if (outcome.outcomes[i]!.status !== "excluded") after.set(k, nonce + 1n);
    return nonce;
  });
  return { nonces, after };
}
