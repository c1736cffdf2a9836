// CIP-39 §5 tag 6 TopUpStream (§6.1): settle at the pre-deposit escrow, reject at or past the
// pinned deadline (persisting nothing), credit, settle again. Permissionless while the
// provider is Active; otherwise the payer must be the owner.
import { bytesEqual } from "../src/bytes.js";
import type { TopUpStreamArgsV1 } from "../src/codec/types.js";
import {
  emit,
  emitStatusEdge,
  readGovernanceBounds,
  readProvider,
  readRegistryPause,
  readSingleton,
  rentHeight,
  writeStream,
  type TxContext,
} from "../src/engine/context.js";
import { reject } from "../src/engine/errors.js";
import { REGISTRY_ADDRESS } from "../src/engine/layout.js";
import { addU128 } from "../src/engine/math.js";
import { loadStreamPair, pairRecords } from "../src/engine/streams.js";
import { distributeRent, graceExpired, settle } from "./settle.js";

export function topUpStream(ctx: TxContext, args: TopUpStreamArgsV1): void {
  if (args.amount === 0n) reject("InvalidAmount", "TopUpStream amount must be nonzero (§6.1)");
  // §18.1 plan: 25 scalars, pause record, singleton, stream pair, provider record.
  const bounds = readGovernanceBounds(ctx);
  const H = rentHeight(ctx, readRegistryPause(ctx));
  const registry = readSingleton(ctx);
  const { main } = loadStreamPair(ctx, registry, args.stream_id);
  const provider = readProvider(ctx, registry, main.provider) ?? reject("RegistryStateInvalid", "assigned provider has no record");
  if (provider.status !== "Active" && !bytesEqual(ctx.sender, main.owner)) {
    reject("Unauthorized", `the provider is ${provider.status}: only the owner may fund this stream (§6.1)`);
  }

  const grace = bounds.get("cbqs.suspend_grace_blocks");
  // §6.1 settle #1 at the pre-deposit escrow, evaluated to find the deadline.
  const first = settle(main, H, grace);
  if (graceExpired(first.record, H)) reject("GraceDeadlinePassed", "the stream is Suspended at or past its pinned grace deadline");
  // Credit the deposit: payer → custody.
  ctx.accounts.debit(ctx.sender, args.amount, "top-up");
  ctx.accounts.credit(REGISTRY_ADDRESS, args.amount, "escrow custody");
  const credited = { ...first.record, escrow_balance: addU128(first.record.escrow_balance, args.amount, "escrow_balance") };
  // §6.1 settle #2 through the same height.
  const second = settle(credited, H, grace);
  // §6.1 "for each paid amount": each settlement's paid amount is split on its own (flooring a
  // sum once would move a wei between provider and platform).
  distributeRent(ctx, bounds, main.provider, first.paid);
  distributeRent(ctx, bounds, main.provider, second.paid);
  for (const r of pairRecords(second.record)) writeStream(ctx, r);
  emit(ctx, "cbqs.stream.topped_up", main.stream_id); // §19, then the net status edge
  emitStatusEdge(ctx, main.status, second.record.status, main.stream_id);
}
