// CIP-39 §5 tag 8 CloseStream (§6.1): owner only. Settle (no-op tolerant), then close
// unconditionally — valid past the grace deadline and never also an expiry — refunding the
// unearned escrow and releasing everything exactly once.
import { bytesEqual } from "../src/bytes.js";
import type { CloseStreamArgsV1 } from "../src/codec/types.js";
import {
  emit,
  readGovernanceBounds,
  readRegistryPause,
  readSingleton,
  rentHeight,
  type TxContext,
} from "../src/engine/context.js";
import { reject } from "../src/engine/errors.js";
import { loadStreamPair } from "../src/engine/streams.js";
import { distributeRent, settle } from "./settle.js";
import { terminate } from "./terminal.js";

export function closeStream(ctx: TxContext, args: CloseStreamArgsV1): void {
  // §18.1 plan: 25 scalars, pause record, singleton, stream pair, custody, provider and
  // platform accounts, provider record, owner count (the owner is the sender).
  const bounds = readGovernanceBounds(ctx);
  const H = rentHeight(ctx, readRegistryPause(ctx));
  const registry = readSingleton(ctx);
  const { main } = loadStreamPair(ctx, registry, args.stream_id);
  if (!bytesEqual(ctx.sender, main.owner)) reject("Unauthorized", "only the owner may close a stream");
  const settled = settle(main, H, bounds.get("cbqs.suspend_grace_blocks"));
  distributeRent(ctx, bounds, main.provider, settled.paid);
  terminate(ctx, registry, settled.record, "Closed");
  emit(ctx, "cbqs.stream.closed", main.stream_id); // §19: alone
}
