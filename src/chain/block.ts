// The emulator's block header and block hash (docs/reference/formats/transaction.md "Block hash"). CIP-39
// needs a block hash only as provider-signed evidence (§9.3 served_at.block_hash, which
// consensus never checks against an archive), so the emulator defines its own: keccak256
// over a domain string and a fixed-width header. Height 0 is the genesis header.
import { utf8 } from "../bytes.js";
import { keccak256 } from "../crypto/hash.js";
import { logsRoot, receiptRoot, txRoot } from "../../state/roots/roots.js";

export const BLOCK_HASH_DOMAIN = "cbqs-emulator/block-header/v1";

export interface BlockHeader {
  chain_instance_id: Uint8Array; // 32
  height: bigint; // u64
  timestamp: bigint; // u64
  parent_hash: Uint8Array; // 32; zero for genesis
  state_root: Uint8Array; // 32
  tx_root: Uint8Array; // 32
  receipt_root: Uint8Array; // 32
  logs_root: Uint8Array; // 32
}

/**
 * keccak256("cbqs-emulator/block-header/v1" || chain_instance_id || height_u64_be ||
 * timestamp_u64_be || parent_hash || state_root || tx_root || receipt_root || logs_root)
 */
export function blockHash(h: BlockHeader): Uint8Array {
  const fields = [h.chain_instance_id, h.parent_hash, h.state_root, h.tx_root, h.receipt_root, h.logs_root];
  const names = ["chain_instance_id", "parent_hash", "state_root", "tx_root", "receipt_root", "logs_root"];
  fields.forEach((v, i) => {
    if (v.length !== 32) throw new RangeError(`block header ${names[i]} must be 32 bytes`);
  });
  for (const [name, v] of [["height", h.height], ["timestamp", h.timestamp]] as const) {
    if (v < 0n || v > 0xffffffffffffffffn) throw new RangeError(`block header ${name} ${v} does not fit in 8 bytes`);
  }
  // One buffer per header, written in place: a devnet fast-forwarding empty blocks hashes a
  // header per block, and assembling it from parts cost as much as the hash.
  const p = new Uint8Array(HEADER_PREIMAGE_LENGTH);
  const view = new DataView(p.buffer);
  p.set(DOMAIN, 0);
  p.set(h.chain_instance_id, DOMAIN.length);
  view.setBigUint64(DOMAIN.length + 32, h.height);
  view.setBigUint64(DOMAIN.length + 40, h.timestamp);
  let at = DOMAIN.length + 48;
  for (const v of [h.parent_hash, h.state_root, h.tx_root, h.receipt_root, h.logs_root]) {
    p.set(v, at);
    at += 32;
  }
  return keccak256(p);
}

const DOMAIN = utf8(BLOCK_HASH_DOMAIN);
/** domain ‖ chain_instance_id ‖ height ‖ timestamp ‖ five 32-byte hashes. */
const HEADER_PREIMAGE_LENGTH = DOMAIN.length + 32 + 8 + 8 + 5 * 32;

/** The header hash of block `height` from its parent's hash, state root and the block's roots. */
export function headerHash(
  chainInstanceId: Uint8Array,
  height: bigint,
  timestamp: bigint,
  parent: Uint8Array,
  stateRoot: Uint8Array,
  r: { tx_root: Uint8Array; receipt_root: Uint8Array; logs_root: Uint8Array },
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

/** The genesis header hash: height 0, zero parent, the genesis state root, the roots of an empty block. */
export function genesisHash(chainInstanceId: Uint8Array, timestamp: bigint, stateRoot: Uint8Array): Uint8Array {
  return headerHash(chainInstanceId, 0n, timestamp, new Uint8Array(32), stateRoot, {
    tx_root: txRoot([]),
    receipt_root: receiptRoot([]),
    logs_root: logsRoot([]),
  });
}
