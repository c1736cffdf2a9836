// CIP-39 §5 tag 1 RegisterProvider (§4.3): permissionless; the sender becomes the provider.
import type { RegisterProviderArgsV1 } from "../src/codec/types.js";
import {
  emit,
  readGovernanceBounds,
  readProvider,
  readRegistryPause,
  readSingleton,
  writeProvider,
  type TxContext,
} from "../src/engine/context.js";
import { reject } from "../src/engine/errors.js";
import { admitProviderEndpoints } from "./provider-common.js";

export function registerProvider(ctx: TxContext, args: RegisterProviderArgsV1): void {
  // §18.1 plan: 25 scalars, pause record, singleton, provider record.
  const bounds = readGovernanceBounds(ctx);
  readRegistryPause(ctx);
  const registry = readSingleton(ctx);
  if (readProvider(ctx, registry, ctx.sender) !== null) reject("ProviderAlreadyRegistered", "the sender already has a provider record");
  // §4.3: every endpoint passes consensus admission against the live bounds.
  admitProviderEndpoints(args.endpoints, bounds);
  writeProvider(ctx, {
    version: 1,
    chain_instance_id: registry.chain_instance_id,
    provider: ctx.sender,
    signing_key: args.signing_key,
    endpoints: args.endpoints,
    quote_key: args.quote_key,
    base_rate_admission: args.base_rate_admission,
    base_rate_reserved: { reserved_streams: 0n, retained_bytes: 0n, append_bytes_per_sec: 0n, delivered_bytes_per_sec: 0n },
    live_assigned_streams: 0n,
    status: "Active",
    metadata_hash: args.metadata_hash,
    registered_block: ctx.height,
  });
  emit(ctx, "cbqs.provider.registered", ctx.sender); // §19
}
