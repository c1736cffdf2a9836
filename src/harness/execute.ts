// A block's raw transactions as the harness receives them (replay, t8n, the bench): decode the
// envelopes (docs/reference/formats/transaction.md) and check their nonces against the rule in
// src/chain/nonces.ts. Receipts, roots and the block hash come from src/chain.
import { decodeEnvelope, EnvelopeError, type TxEnvelope } from "../chain/envelope.js";
import { envelopeNonces, startNonces as senderStartNonces } from "../chain/nonces.js";
import type { Chain, BlockOutcome } from "../engine/chain.js";

/** A transaction the block cannot contain (bad bytes or another chain's envelope). */
export class TxInputError extends Error {
  override name = "TxInputError";
  constructor(
    readonly index: number,
    reason: string,
  ) {
    super(reason);
  }
}

export function decodeTransaction(raw: Uint8Array, index: number, chainId: bigint): TxEnvelope {
  let env: TxEnvelope;
  try {
    env = decodeEnvelope(raw);
  } catch (err) {
    if (err instanceof EnvelopeError) throw new TxInputError(index, err.message);
    throw err;
  }
  if (env.chain_id !== chainId) throw new TxInputError(index, `envelope chain_id ${env.chain_id} is not the genesis chain_id ${chainId}`);
  return env;
}

/**
 * The first transaction the block cannot contain: the engine excluded it (a keyless sender, a
 * sender who cannot pay the fee at the reservation: D-0013 "Included transactions:
 * nonce and fee"), or its envelope nonce is not its sender's account nonce before it.
 */
export type NotIncludable =
  | { index: number; kind: "excluded"; reason: string }
  | {
      index: number;
      kind: "nonce";
      reason: string;
      /** The nonce the envelope carries. */
      envelope: bigint;
      /** The sender's account nonce before the transaction. */
      account: bigint;
    };

/** Account nonces of the envelopes' senders at the start of the block; call before executing it. */
export const startNonces = (chain: Chain, envs: readonly TxEnvelope[]): Map<string, bigint> =>
  senderStartNonces(
    chain,
    envs.map((e) => e.tx.from),
  );

/** The first transaction of the executed block that no block may contain, or null. */
export function firstNotIncludable(envs: readonly TxEnvelope[], outcome: BlockOutcome, start: Map<string, bigint>): NotIncludable | null {
  const { nonces } = envelopeNonces(
    envs.map((e) => e.tx.from),
    outcome,
    start,
  );
  for (let index = 0; index < envs.length; index++) {
    const o = outcome.outcomes[index]!;
    if (o.status === "excluded") return { index, kind: "excluded", reason: o.error!.message };
    const [envelope, account] = [envs[index]!.nonce, nonces[index]!];
    if (envelope !== account) return { index, kind: "nonce", reason: `nonce ${envelope} is not the sender's account nonce ${account}`, envelope, account };
  }
  return null;
}
