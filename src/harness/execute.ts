// One block from raw envelopes, shared by replay, t8n, trace and the bench: decode the
// envelopes (docs/transactions.md), execute through the engine, and derive what a block header
// commits to — receipts, tx_root, receipt_root, logs_root (CIP-4 §5.2/§5.3) and the emulator
// block hash. The receipt mapping is the one the runner uses (src/scenario/run.ts).
import { toHex } from "../bytes.js";
import { blockHash } from "../chain/block.js";
import { decodeEnvelope, EnvelopeError, txHash, type TxEnvelope } from "../chain/envelope.js";
import type { Chain, BlockOutcome } from "../engine/chain.js";
import { logsRoot, receiptRoot, txRoot, type Receipt } from "../../state/roots.js";
import type { FixtureReceipt } from "./fixture.js";

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

export interface NonceMismatch {
  index: number;
  /** The nonce the envelope carries. */
  envelope: bigint;
  /** The sender's account nonce before the transaction (docs/decisions.md "Envelope nonce"). */
  account: bigint;
}

/** Account nonces of every sender at the start of the block; call before executing it. */
export function startNonces(chain: Chain, envs: readonly TxEnvelope[]): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const e of envs) {
    const k = toHex(e.tx.from);
    if (!out.has(k)) out.set(k, chain.account(e.tx.from).nonce);
  }
  return out;
}

/** The first envelope whose nonce is not its sender's nonce; only accepted txs advance it. */
export function firstNonceMismatch(envs: readonly TxEnvelope[], outcome: BlockOutcome, start: Map<string, bigint>): NonceMismatch | null {
  const next = new Map(start);
  for (let i = 0; i < envs.length; i++) {
    const k = toHex(envs[i]!.tx.from);
    const account = next.get(k)!;
    if (envs[i]!.nonce !== account) return { index: i, envelope: envs[i]!.nonce, account };
    if (outcome.outcomes[i]!.status === "ok") next.set(k, account + 1n);
  }
  return null;
}

export interface BlockResults {
  receipts: FixtureReceipt[];
  tx_root: Uint8Array;
  receipt_root: Uint8Array;
  logs_root: Uint8Array;
}

export function blockResults(raw: readonly Uint8Array[], outcome: BlockOutcome): BlockResults {
  const receipts: Receipt[] = outcome.outcomes.map((o) => ({
    status: o.status,
    errorCode: o.error === null ? 0 : o.error.code,
    cycles: o.cycles,
    cells: o.cells,
    events: o.events,
  }));
  return {
    receipts: outcome.outcomes.map((o, i) => ({
      tx_hash: txHash(raw[i]!),
      status: o.status,
      error: o.error === null ? null : { code: o.error.code, name: o.error.name },
      events: o.events,
      cycles: o.cycles,
      cells: o.cells,
    })),
    tx_root: txRoot(raw),
    receipt_root: receiptRoot(receipts),
    logs_root: logsRoot(outcome.outcomes.flatMap((o) => o.events)),
  };
}

/** docs/transactions.md "Block hash". */
export function headerHash(
  chainInstanceId: Uint8Array,
  height: bigint,
  timestamp: bigint,
  parent: Uint8Array,
  stateRoot: Uint8Array,
  r: Pick<BlockResults, "tx_root" | "receipt_root" | "logs_root">,
): Uint8Array {
  return blockHash({
    chain_instance_id: chainInstanceId,
    height,
    timestamp,
    parent_hash: parent,
    state_root: stateRoot,
    tx_root: r.tx_root,
    receipt_root: r.receipt_root,
    logs_root: r.logs_root,
  });
}

/** The genesis header hash: zero parent, genesis root, roots of an empty block. */
export function genesisHash(chainInstanceId: Uint8Array, timestamp: bigint, stateRoot: Uint8Array): Uint8Array {
  return headerHash(chainInstanceId, 0n, timestamp, new Uint8Array(32), stateRoot, {
    tx_root: txRoot([]),
    receipt_root: receiptRoot([]),
    logs_root: logsRoot([]),
  });
}
