// CIP-39 §5 tag 3 SetProviderStatus (§4.3): Active, Draining, or — when no live stream still
// assigns the provider — Deregistered. No governance scalars are read.
import type { SetProviderStatusArgsV1 } from "../src/codec/types.js";
import { emit, readProvider, readRegistryPause, readSingleton, writeProvider, type TxContext } from "../src/engine/context.js";
import { reject } from "../src/engine/errors.js";

export function setProviderStatus(ctx: TxContext, args: SetProviderStatusArgsV1): void {
  // §18.1 plan: pause record, singleton, provider record.
  readRegistryPause(ctx);
  const registry = readSingleton(ctx);
  const record = readProvider(ctx, registry, ctx.sender) ?? reject("ProviderNotFound", "the sender has no provider record");
  // §19: a status write that changes nothing is a rejected no-op.
  if (record.status === args.status) reject("NoOpRejected", `provider is already ${args.status}`);
  // §4.3: no Deregistered while any live stream record still assigns the provider.
  if (args.status === "Deregistered" && record.live_assigned_streams !== 0n) {
    reject("ProviderHasLiveStreams", `${record.live_assigned_streams} live streams still assign this provider`);
  }
  writeProvider(ctx, { ...record, status: args.status });
  emit(ctx, "cbqs.provider.status_changed", ctx.sender); // §19
}
