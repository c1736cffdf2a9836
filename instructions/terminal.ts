// The first terminal transition of a main stream (Closed by CloseStream, DataExpired by
// SettleStreamRent; §5, §6.1): refund the residual escrow to the owner, release the
// governance-base reservation, decrement the provider's live_assigned_streams and the owner's
// live-stream count — each exactly once, because terminal states are absorbing.
import { toHex } from "../src/bytes.js";
import type { StreamRecordV1 } from "../src/codec/types.js";
import {
  readOwnerCount,
  readProvider,
  writeOwnerCount,
  writeProvider,
  writeStream,
  type Singleton,
  type TxContext,
} from "../src/engine/context.js";
import { reject } from "../src/engine/errors.js";
import { subU64 } from "../src/engine/math.js";
import { pairRecords } from "../src/engine/streams.js";
import { adjustReservation, capacityOf } from "./pricing.js";

export function terminate(ctx: TxContext, registry: Singleton, record: StreamRecordV1, status: "Closed" | "DataExpired"): StreamRecordV1 {
  // Refund: custody is asserted before the owner is credited (§5).
  ctx.accounts.debitCustody(record.escrow_balance, "escrow refund");
  ctx.accounts.credit(record.owner, record.escrow_balance, "escrow refund");

  const provider = readProvider(ctx, registry, record.provider);
  if (provider === null) return reject("RegistryStateInvalid", `assigned provider ${toHex(record.provider)} has no record`);
  const none = { streams: 0n, cap: { retained: 0n, append: 0n, delivered: 0n } };
  const reserved =
    record.pricing_basis.type === "GovernanceBase"
      ? adjustReservation(provider, { streams: 1n, cap: capacityOf(record.config) }, none)
      : provider.base_rate_reserved;
  writeProvider(ctx, {
    ...provider,
    base_rate_reserved: reserved,
    live_assigned_streams: subU64(provider.live_assigned_streams, 1n, "live_assigned_streams"),
  });
  writeOwnerCount(ctx, record.owner, subU64(readOwnerCount(ctx, record.owner), 1n, "owner stream count"));

  // Terminal records clear both pinned fields and hold no escrow; the key stream mirrors.
  const final: StreamRecordV1 = { ...record, status, escrow_balance: 0n, suspended_at_block: null, suspension_grace_deadline_block: null };
  for (const r of pairRecords(final)) writeStream(ctx, r);
  return final;
}
