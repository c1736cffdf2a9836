// CIP-39 §5 tag 4 CreateStream (§4.1, §4.2, §4.4, §4.5, §5, §6): the sender is the owner.
// One atomic transition: the record (and, encrypted, its key stream), provider counters, the
// owner's live-stream count, the §6 creation charge burned to the zero address, and the
// initial escrow moved into custody (the 0x17 account).
import { toHex } from "../src/bytes.js";
import { activeScheduleAt } from "../src/codec/schedule.js";
import type { CreateStreamArgsV1, PricingBasisV1, StreamRecordV1 } from "../src/codec/types.js";
import {
  emit,
  readGovernanceBounds,
  readOwnerCount,
  readProvider,
  readRegistryPause,
  readSchedules,
  readSingleton,
  readStream,
  rentHeight,
  requireChainContext,
  writeOwnerCount,
  writeProvider,
  writeStream,
  type TxContext,
} from "../src/engine/context.js";
import { meteredKeyStreamId, meteredScheduleDigest, meteredStreamId } from "../src/engine/derive.js";
import { reject } from "../src/engine/errors.js";
import { REGISTRY_ADDRESS, ZERO_ADDRESS } from "../src/engine/layout.js";
import { addU64, mulU128 } from "../src/engine/math.js";
import { pairRecords } from "../src/engine/streams.js";
import { CBQS_CREATION_CHARGE_BLOCKS } from "../src/params.js";
import { adjustReservation, capacityOf, deriveBaseRate, validateStreamConfig, verifyQuote } from "./pricing.js";

export function createStream(ctx: TxContext, args: CreateStreamArgsV1): void {
  const owner = ctx.sender;
  // §18.1 plan: 25 scalars, pause record, singleton.
  const bounds = readGovernanceBounds(ctx);
  const H = rentHeight(ctx, readRegistryPause(ctx));
  const registry = readSingleton(ctx);
  if (args.price_quote !== null) requireChainContext(registry, args.price_quote.context, "price quote");

  // §4.3: the owner chooses an Active provider.
  const provider = readProvider(ctx, registry, args.provider) ?? reject("ProviderNotFound", `no provider ${toHex(args.provider)}`);
  if (provider.status !== "Active") reject("ProviderNotActive", `provider ${toHex(args.provider)} is ${provider.status}`);

  // §4.2: field-by-field validation.
  validateStreamConfig(args.config, args.delivery_class, bounds);

  // §4.1: an owner nonce is never reusable; stream records are never deleted, so an existing
  // record under the derived id is the used-nonce marker.
  const streamId = meteredStreamId(ctx.meter, registry.chain_id, registry.chain_instance_id, owner, args.owner_nonce);
  if (readStream(ctx, registry, streamId) !== null) reject("OwnerNonceUsed", `owner nonce ${args.owner_nonce} was already used`);
  const keyStreamId = args.encrypted ? meteredKeyStreamId(ctx.meter, streamId) : null;
  if (keyStreamId !== null && readStream(ctx, registry, keyStreamId) !== null) {
    reject("RegistryStateInvalid", "a key stream exists for a main stream that does not");
  }

  // cbqs.max_streams_per_owner (admission bound, live).
  const ownerCount = readOwnerCount(ctx, owner);
  if (ownerCount >= bounds.get("cbqs.max_streams_per_owner")) {
    reject("OwnerStreamLimit", `owner already has ${ownerCount} live streams (cbqs.max_streams_per_owner)`);
  }

  // §4.4 / §4.5: price the stream.
  const capacity = capacityOf(args.config);
  let rate: bigint;
  let basis: PricingBasisV1;
  let reserved = provider.base_rate_reserved;
  if (args.price_quote !== null) {
    const digest = verifyQuote(ctx, args.price_quote, {
      provider,
      owner,
      streamId,
      pricingGeneration: 1n,
      deliveryClass: args.delivery_class,
      capacity,
    });
    rate = args.price_quote.rate_per_block;
    basis = { type: "ProviderQuote", quote_digest: digest };
  } else {
    const schedule = activeScheduleAt(readSchedules(ctx), ctx.height);
    // §5: verify accepts_new, add the four reservations checked, reject above any cap.
    // An encrypted pair consumes one stream reservation.
    reserved = adjustReservation(provider, { streams: 0n, cap: { retained: 0n, append: 0n, delivered: 0n } }, { streams: 1n, cap: capacity });
    rate = deriveBaseRate(schedule, args.delivery_class, capacity);
    basis = { type: "GovernanceBase", schedule_version: schedule.schedule_version, schedule_digest: meteredScheduleDigest(ctx.meter, schedule) };
  }

  // §6: the nonrefundable creation charge is burned; the escrow moves into custody.
  const charge = mulU128(rate, CBQS_CREATION_CHARGE_BLOCKS, "creation charge");
  ctx.accounts.debit(owner, charge, "creation charge");
  ctx.accounts.debit(owner, args.initial_escrow, "initial escrow");
  ctx.accounts.credit(ZERO_ADDRESS, charge, "creation charge burn");
  ctx.accounts.credit(REGISTRY_ADDRESS, args.initial_escrow, "escrow custody");

  // §4.1, §5: the record; stored heights are effective rent heights.
  const main: StreamRecordV1 = {
    version: 1,
    chain_instance_id: registry.chain_instance_id,
    stream_id: streamId,
    purpose: "Main",
    owner,
    owner_nonce: args.owner_nonce,
    admin_key: args.admin_key,
    rotation_key: args.rotation_key,
    delivery_class: args.delivery_class,
    encrypted: args.encrypted,
    linked_stream_id: keyStreamId,
    provider: args.provider,
    provider_epoch: 0n,
    provider_signing_key: provider.signing_key,
    authorization_generation: 1n,
    encryption_generation: 0n,
    pricing_generation: 1n,
    status: "Active",
    config: args.config,
    pricing_basis: basis,
    rate_per_block: rate,
    escrow_balance: args.initial_escrow,
    last_settled_block: H,
    suspended_at_block: null,
    suspension_grace_deadline_block: null,
    created_at_block: H,
  };
  for (const record of pairRecords(main)) writeStream(ctx, record);
  // §4.3: one live_assigned_streams per main stream (the key stream is atomic with it).
  writeProvider(ctx, {
    ...provider,
    base_rate_reserved: reserved,
    live_assigned_streams: addU64(provider.live_assigned_streams, 1n, "live_assigned_streams"),
  });
  writeOwnerCount(ctx, owner, addU64(ownerCount, 1n, "owner stream count"));
  emit(ctx, "cbqs.stream.created", streamId); // §19: alone, on the main id
}
