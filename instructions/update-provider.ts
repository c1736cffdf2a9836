// CIP-39 §5 tag 2 UpdateProvider (§4.3): endpoints, keys, metadata, base-rate admission.
// Key changes are prospective: stream records keep the signing key they snapshotted.
import type { BaseRateAdmissionV1, BaseRateReservationTotalsV1, UpdateProviderArgsV1 } from "../src/codec/types.js";
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

/** §4.3: accepts_new may turn off any time, but no cap may drop below its current reservation. */
function checkCaps(caps: BaseRateAdmissionV1, reserved: BaseRateReservationTotalsV1): void {
  const pairs: Array<[string, bigint, bigint]> = [
    ["max_active_streams", caps.max_active_streams, reserved.reserved_streams],
    ["max_total_retained_bytes", caps.max_total_retained_bytes, reserved.retained_bytes],
    ["max_total_append_bytes_per_sec", caps.max_total_append_bytes_per_sec, reserved.append_bytes_per_sec],
    ["max_total_delivered_bytes_per_sec", caps.max_total_delivered_bytes_per_sec, reserved.delivered_bytes_per_sec],
  ];
  for (const [name, cap, current] of pairs) {
    if (cap < current) reject("CapBelowReservation", `${name} ${cap} is below the current reservation ${current}`);
  }
}

export function updateProvider(ctx: TxContext, args: UpdateProviderArgsV1): void {
  // §5: an update with every field absent is rejected.
  if (args.endpoints === null && args.signing_key === null && args.quote_key === null && args.base_rate_admission === null && args.metadata_hash === null) {
    reject("NoOpRejected", "UpdateProvider with every field absent");
  }
  // §18.1 plan: 25 scalars, pause record, singleton, provider record.
  const bounds = readGovernanceBounds(ctx);
  readRegistryPause(ctx);
  const registry = readSingleton(ctx);
  const record = readProvider(ctx, registry, ctx.sender) ?? reject("ProviderNotFound", "the sender has no provider record");
  if (args.endpoints !== null) admitProviderEndpoints(args.endpoints, bounds);
  if (args.base_rate_admission !== null) checkCaps(args.base_rate_admission, record.base_rate_reserved);
  writeProvider(ctx, {
    ...record,
    endpoints: args.endpoints ?? record.endpoints,
    signing_key: args.signing_key ?? record.signing_key,
    quote_key: args.quote_key ?? record.quote_key,
    base_rate_admission: args.base_rate_admission ?? record.base_rate_admission,
    metadata_hash: args.metadata_hash ?? record.metadata_hash,
  });
  emit(ctx, "cbqs.provider.updated", ctx.sender); // §19
}
