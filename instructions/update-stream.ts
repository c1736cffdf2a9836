// CIP-39 §5 tag 5 UpdateStream (§4.1, §4.2, §5, §6.1): owner only, on a materialized Active
// record with both pinned fields absent. Mutable config, admin key (always bumping
// authorization_generation), three-way rotation key, optional authorization bump; a priced
// capacity change settles the old rate, then reprices on the stream's own basis.
import { bytesEqual } from "../src/bytes.js";
import { activeScheduleAt } from "../src/codec/schedule.js";
import type { PricingBasisV1, StreamRecordV1, UpdateStreamArgsV1 } from "../src/codec/types.js";
import {
  emit,
  emitStatusEdge,
  readGovernanceBounds,
  readProvider,
  readRegistryPause,
  readSchedules,
  readSingleton,
  rentHeight,
  requireChainContext,
  writeProvider,
  writeStream,
  type TxContext,
} from "../src/engine/context.js";
import { meteredScheduleDigest } from "../src/engine/derive.js";
import { reject } from "../src/engine/errors.js";
import { addU64 } from "../src/engine/math.js";
import { loadStreamPair, pairRecords } from "../src/engine/streams.js";
import { adjustReservation, capacityOf, deriveBaseRate, sameCapacity, validateStreamConfig, verifyQuote } from "./pricing.js";
import { checkSuspensionFields, distributeRent, settle } from "./settle.js";

export function updateStream(ctx: TxContext, args: UpdateStreamArgsV1): void {
  // §5: the exact no-op rule.
  if (args.config === null && args.admin_key === null && args.price_quote === null && args.rotation_key.type === "Keep" && !args.bump_authorization_generation) {
    reject("NoOpRejected", "UpdateStream changes nothing");
  }
  // §18.1 plan: 25 scalars, pause record, singleton, stream pair; priced path adds provider
  // record, schedule, custody, provider and platform accounts.
  const bounds = readGovernanceBounds(ctx);
  const H = rentHeight(ctx, readRegistryPause(ctx));
  const registry = readSingleton(ctx);
  if (args.price_quote !== null) requireChainContext(registry, args.price_quote.context, "price quote");
  const { main } = loadStreamPair(ctx, registry, args.stream_id);
  if (!bytesEqual(ctx.sender, main.owner)) reject("Unauthorized", "only the owner may update a stream");
  // §6.1 entry gate: materialized Active with both pinned fields absent.
  if (main.status === "Suspended") reject("StreamSuspended", "UpdateStream requires a materialized Active stream");
  checkSuspensionFields(main);

  // §4.2: a new configuration is validated field by field at every update.
  const config = args.config ?? main.config;
  if (args.config !== null) validateStreamConfig(config, main.delivery_class, bounds, main.config);
  const oldCap = capacityOf(main.config);
  const newCap = capacityOf(config);
  const repriced = !sameCapacity(oldCap, newCap);
  // §5: a replacement quote is accepted only where repricing happens.
  if (args.price_quote !== null && !repriced) reject("PricingBasisInvalid", "a price quote on an update that changes no priced capacity field");

  let record: StreamRecordV1 = main;
  if (repriced) {
    // §5, §6.1: settle the old rate through the update block first.
    const settled = settle(main, H, bounds.get("cbqs.suspend_grace_blocks"));
    distributeRent(ctx, bounds, main.provider, settled.paid);
    const provider = readProvider(ctx, registry, main.provider) ?? reject("RegistryStateInvalid", "assigned provider has no record");
    let rate: bigint;
    let basis: PricingBasisV1;
    const generation = addU64(main.pricing_generation, 1n, "pricing_generation");
    if (main.pricing_basis.type === "GovernanceBase") {
      if (args.price_quote !== null) reject("PricingBasisInvalid", "a governance-base stream reprices from the schedule, not a quote");
      // Then-active schedule, new version and digest, checked reservation delta.
      const schedule = activeScheduleAt(readSchedules(ctx), ctx.height);
      rate = deriveBaseRate(schedule, main.delivery_class, newCap);
      basis = { type: "GovernanceBase", schedule_version: schedule.schedule_version, schedule_digest: meteredScheduleDigest(ctx.meter, schedule) };
      const reserved = adjustReservation(provider, { streams: 1n, cap: oldCap }, { streams: 1n, cap: newCap });
      writeProvider(ctx, { ...provider, base_rate_reserved: reserved });
    } else {
      // §4.4: a fresh quote bound to pricing_generation + 1 and the new capacity.
      if (args.price_quote === null) reject("PricingBasisInvalid", "a provider-quote stream needs a fresh quote to change priced capacity");
      const digest = verifyQuote(ctx, args.price_quote, {
          provider,
        owner: main.owner,
        streamId: main.stream_id,
        pricingGeneration: generation,
        deliveryClass: main.delivery_class,
        capacity: newCap,
      });
      rate = args.price_quote.rate_per_block;
      basis = { type: "ProviderQuote", quote_digest: digest };
    }
    record = { ...settled.record, rate_per_block: rate, pricing_basis: basis, pricing_generation: generation };
  }

  // §4.1: an admin-key change always bumps authorization_generation; the flag bumps it too (once).
  const bump = args.admin_key !== null || args.bump_authorization_generation;
  record = {
    ...record,
    config,
    admin_key: args.admin_key ?? record.admin_key,
    rotation_key: args.rotation_key.type === "Keep" ? record.rotation_key : args.rotation_key.type === "Set" ? args.rotation_key.key : null,
    authorization_generation: bump ? addU64(record.authorization_generation, 1n, "authorization_generation") : record.authorization_generation,
  };
  // The key stream mirrors keys and generations and re-derives its config (retention invariant, §4.2).
  for (const r of pairRecords(record)) writeStream(ctx, r);
  emit(ctx, "cbqs.stream.updated", main.stream_id); // §19, then the net status edge
  emitStatusEdge(ctx, main.status, record.status, main.stream_id);
}
