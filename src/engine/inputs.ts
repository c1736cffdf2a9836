// The engine's inputs, already resolved to exact values (no scenario conveniences):
// the genesis configuration with the exact source bytes that define chain_instance_id,
// and blocks of transactions. The scenario runner and the fixture replayer both
// produce these; the engine consumes only these.
import type { Address } from "../codec/types.js";

/** §18 parameter name → value (all u64 in v1). */
export type ParamOverrides = ReadonlyMap<string, bigint>;

export interface GenesisConfig {
  chain_id: bigint;
  /** Seconds since the Unix epoch of block 0. */
  timestamp: bigint;
  block_time_seconds: bigint;
  /** The only account whose governance transactions are valid (CIP-12). */
  governance: Address;
  /** Overrides of §18 defaults (live scalars and the twelve cbqs.base_rate.* rows). */
  params: ParamOverrides;
  /** Native balances (u64) of listed accounts; nonce starts at 0. */
  accounts: ReadonlyArray<{ address: Address; balance: bigint }>;
  cycle_price: bigint;
  cell_price: bigint;
}

export type GovAction =
  | { type: "SetParam"; name: string; value: bigint }
  | { type: "SetParams"; values: ReadonlyArray<{ name: string; value: bigint }> }
  | { type: "Pause"; actor: Address; blocks: bigint }
  | { type: "ExtendPause"; actor: Address; blocks: bigint }
  | { type: "Unpause"; actor: Address };

export type TxBody =
  /** A SYS_CBQS transaction: opcode (218 for CBQS; anything else is rejected) and raw payload bytes. */
  | { kind: "system"; opcode: number; payload: Uint8Array }
  | { kind: "gov"; action: GovAction }
  | { kind: "transfer"; to: Address; amount: bigint };

export interface Transaction {
  from: Address;
  body: TxBody;
}

export interface BlockInput {
  height: bigint;
  timestamp: bigint;
  txs: ReadonlyArray<Transaction>;
}
