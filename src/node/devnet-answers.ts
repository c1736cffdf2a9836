// The devnet's writes as POST /tx, /mine, /devnet/snapshot and /devnet/revert answer them
// (docs/node.md "Devnet"): the values src/chain-node/devnet.ts returns, in the node's JSON
// (integers as decimal strings, bytes as 0x hex, every answer naming its block).
import { toHex } from "../bytes.js";
import { receiptJson } from "../chain/receipts.js";
import type { MinedBatch, MinedBlock } from "../chain-node/chain-node.js";
import type { Mined, Reverted, Submitted } from "../chain-node/devnet.js";
import type { BlockRecord } from "../../state/chain-db/chain-db.js";
import { readPointJson } from "./json.js";

/** POST /tx: the head's read point, the hash and nonce, the pool's size, and under auto mining the block. */
export function submittedJson(s: Submitted): Record<string, unknown> {
  return {
    ...readPointJson(s.head),
    tx_hash: toHex(s.txHash),
    nonce: s.nonce.toString(),
    pending: s.pending,
    mining: s.mining,
    ...(s.mined === undefined ? {} : { mined: minedJson(s.mined) }),
  };
}

/** POST /mine: one block, or a batch. */
export function minedAnswer(m: Mined): Record<string, unknown> {
  return "block" in m ? minedJson(m.block) : batchJson(m.batch);
}

/** POST /devnet/snapshot: the head's read point, the snapshot's id and the pool's size. */
export function snapshotJson(s: { id: bigint; block: BlockRecord; pending: number }): Record<string, unknown> {
  return { ...readPointJson(s.block), id: s.id.toString(), pending: s.pending };
}

/** POST /devnet/revert: the new head's read point, the snapshot's id, the head it replaced, the pool's size. */
export function revertedJson(r: Reverted): Record<string, unknown> {
  return { ...readPointJson(r.block), id: r.id.toString(), reverted_from: { height: r.from.height.toString(), block_hash: toHex(r.from.block_hash) }, pending: r.pending };
}

/** A mined block as POST /mine answers it. */
function minedJson(m: MinedBlock): Record<string, unknown> {
  return {
    height: m.block.height.toString(),
    block_hash: toHex(m.block.block_hash),
    state_root: toHex(m.block.state_root),
    timestamp: m.block.timestamp.toString(),
    effective_rent_height: m.block.effective_rent_height.toString(),
    receipts: m.block.receipts.map((r, i) => receiptJson(r, m.messages[i])),
    dropped: m.dropped,
  };
}

/** A batch as POST /mine?blocks=N answers it: the last block's read point, the range, and every receipt and drop of the batch. */
function batchJson(b: MinedBatch): Record<string, unknown> {
  const each = (m: MinedBlock) => m.block.receipts.map((r, i) => ({ height: m.block.height.toString(), ...receiptJson(r, m.messages[i]) }));
  return {
    ...readPointJson(b.last),
    timestamp: b.last.timestamp.toString(),
    effective_rent_height: b.last.effective_rent_height.toString(),
    first: { height: b.first.height.toString(), block_hash: toHex(b.first.block_hash), timestamp: b.first.timestamp.toString() },
    blocks: b.blocks,
    txs: b.txs,
    receipts: b.busy.flatMap(each),
    dropped: b.busy.flatMap((m) => m.dropped.map((d) => ({ height: m.block.height.toString(), ...d }))),
  };
}
