// Stream configuration validation (§4.2) and both pricing paths: a verified PriceQuoteV1
// (§4.4) or the governance base-rate schedule (§4.5) with provider admission counters (§4.3, §5).
import { bytesEqual } from "../src/bytes.js";
import { price_quote_signing_bytes_v1 } from "../src/codec/signing.js";
import type {
  Address,
  BaseRateClassV1,
  BaseRateReservationTotalsV1,
  BaseRateScheduleV1,
  Bytes32,
  DeliveryClass,
  PriceQuoteV1,
  ProviderRecordV1,
  StreamConfigV1,
} from "../src/codec/types.js";
import type { GovernanceBounds, TxContext } from "../src/engine/context.js";
import { meteredSigningKeyId } from "../src/engine/derive.js";
import { reject } from "../src/engine/errors.js";
import { addU128, addU64, ceilDiv, mulU128, subU128, subU64 } from "../src/engine/math.js";
import { CBQS_MIN_RATE_PER_BLOCK, FAST_BATCH_MATERIALIZATION_BOUND, paramRow } from "../src/params.js";

const immutableMax = (name: string): bigint => paramRow(name)!.maximum;

/**
 * §4.2: the field-by-field table (LIVE vs IMMUTABLE sources), nonzero rules, class-only fields,
 * cross-field bound. At an update (`previous` given) the two LIVE admission bounds apply only to a
 * field whose value changes: an unchanged value was already accepted and §18 says lowering an
 * admission bound re-examines nothing already accepted (D-0018).
 */
export function validateStreamConfig(
  config: StreamConfigV1,
  deliveryClass: DeliveryClass,
  bounds: GovernanceBounds,
  previous: StreamConfigV1 | null = null,
): void {
  const bad = (field: string, reason: string): never => reject("InvalidStreamConfig", `config.${field} ${reason} (§4.2)`);
  const atMost = (field: keyof StreamConfigV1, value: bigint, max: bigint, source: string) => {
    if (value > max) bad(field, `= ${value} exceeds ${source} ${max}`);
  };
  const nonzero = (field: keyof StreamConfigV1) => {
    if (BigInt(config[field]) === 0n) bad(field, "must be nonzero");
  };
  nonzero("max_message_bytes");
  nonzero("max_lanes");
  nonzero("retention_ms");
  if (previous === null || config.max_message_bytes !== previous.max_message_bytes) {
    atMost("max_message_bytes", BigInt(config.max_message_bytes), bounds.get("cbqs.max_inline_message_bytes"), "live cbqs.max_inline_message_bytes");
  }
  if (previous === null || config.max_lanes !== previous.max_lanes) {
    atMost("max_lanes", BigInt(config.max_lanes), bounds.get("cbqs.max_lanes_per_stream"), "live cbqs.max_lanes_per_stream");
  }
  if (config.max_delivered_bytes_per_sec < config.max_append_bytes_per_sec) {
    bad("max_delivered_bytes_per_sec", "is below max_append_bytes_per_sec");
  }
  if (deliveryClass === "Standard") {
    atMost("retention_ms", config.retention_ms, immutableMax("cbqs.standard.retention_ms"), "§18 Maximum of cbqs.standard.retention_ms");
    atMost("idempotency_horizon_ms", config.idempotency_horizon_ms, immutableMax("cbqs.standard.idempotency_horizon_ms"), "§18 Maximum of cbqs.standard.idempotency_horizon_ms");
    atMost("max_visibility_ms", config.max_visibility_ms, immutableMax("cbqs.standard.visibility_ms"), "§18 Maximum of cbqs.standard.visibility_ms");
    atMost("default_visibility_ms", config.default_visibility_ms, config.max_visibility_ms, "max_visibility_ms");
    nonzero("default_max_attempts");
    atMost("default_max_attempts", BigInt(config.default_max_attempts), immutableMax("cbqs.standard.max_attempts"), "§18 Maximum of cbqs.standard.max_attempts");
  } else {
    atMost("retention_ms", config.retention_ms, immutableMax("cbqs.fast.retention_ms"), "§18 Maximum of cbqs.fast.retention_ms");
    nonzero("fast_batch_max_ms");
    nonzero("fast_batch_max_records");
    atMost("fast_batch_max_ms", BigInt(config.fast_batch_max_ms), immutableMax("cbqs.fast.batch_max_ms"), "§18 Maximum of cbqs.fast.batch_max_ms");
    atMost("fast_batch_max_records", BigInt(config.fast_batch_max_records), immutableMax("cbqs.fast.batch_max_records"), "§18 Maximum of cbqs.fast.batch_max_records");
    // bigint product: no overflow is possible.
    const batchBytes = BigInt(config.max_message_bytes) * BigInt(config.fast_batch_max_records);
    if (batchBytes > FAST_BATCH_MATERIALIZATION_BOUND) {
      bad("max_message_bytes", `× fast_batch_max_records = ${batchBytes} exceeds ${FAST_BATCH_MATERIALIZATION_BOUND}`);
    }
  }
}

/** The three priced capacity fields (§4.2, §4.5). */
export interface Capacity {
  retained: bigint;
  append: bigint;
  delivered: bigint;
}

export const capacityOf = (c: StreamConfigV1): Capacity => ({
  retained: c.retained_bytes_limit,
  append: c.max_append_bytes_per_sec,
  delivered: c.max_delivered_bytes_per_sec,
});

export const sameCapacity = (a: Capacity, b: Capacity): boolean =>
  a.retained === b.retained && a.append === b.append && a.delivered === b.delivered;

/** §4.5 governance-base rate: ceil-div units, checked products and sum, clamped up to the §6 floor. */
export function deriveBaseRate(schedule: BaseRateScheduleV1, deliveryClass: DeliveryClass, cap: Capacity): bigint {
  if (cap.retained === 0n && cap.append === 0n && cap.delivered === 0n) {
    reject("PricingBasisInvalid", "a governance-base configuration whose three priced capacity fields are all zero (§4.5)");
  }
  const cls: BaseRateClassV1 = deliveryClass === "Standard" ? schedule.standard : schedule.fast;
  if (cls.retained_unit_bytes === 0n || cls.throughput_unit_bytes_per_sec === 0n || cls.delivered_unit_bytes_per_sec === 0n) {
    reject("BaseRateScheduleUnavailable", "the active schedule has a zero unit size");
  }
  const retained = mulU128(ceilDiv(cap.retained, cls.retained_unit_bytes), cls.retained_unit_rate_per_block, "retained rent");
  const throughput = mulU128(ceilDiv(cap.append, cls.throughput_unit_bytes_per_sec), cls.throughput_unit_rate_per_block, "throughput rent");
  const delivered = mulU128(ceilDiv(cap.delivered, cls.delivered_unit_bytes_per_sec), cls.delivered_unit_rate_per_block, "delivered rent");
  const derived = addU128(addU128(retained, throughput, "base rate"), delivered, "base rate");
  return derived > CBQS_MIN_RATE_PER_BLOCK ? derived : CBQS_MIN_RATE_PER_BLOCK;
}

/**
 * §5: apply a governance-base reservation delta (`remove` released, `add` acquired) with
 * checked arithmetic; acquiring capacity requires accepts_new and must fit every cap.
 */
export function adjustReservation(
  provider: ProviderRecordV1,
  remove: { streams: bigint; cap: Capacity },
  add: { streams: bigint; cap: Capacity },
): BaseRateReservationTotalsV1 {
  const r = provider.base_rate_reserved;
  const next: BaseRateReservationTotalsV1 = {
    reserved_streams: addU64(subU64(r.reserved_streams, remove.streams, "reserved_streams"), add.streams, "reserved_streams"),
    retained_bytes: addU128(subU128(r.retained_bytes, remove.cap.retained, "retained_bytes"), add.cap.retained, "retained_bytes"),
    append_bytes_per_sec: addU128(subU128(r.append_bytes_per_sec, remove.cap.append, "append_bytes_per_sec"), add.cap.append, "append_bytes_per_sec"),
    delivered_bytes_per_sec: addU128(
      subU128(r.delivered_bytes_per_sec, remove.cap.delivered, "delivered_bytes_per_sec"),
      add.cap.delivered,
      "delivered_bytes_per_sec",
    ),
  };
  const grows =
    next.reserved_streams > r.reserved_streams ||
    next.retained_bytes > r.retained_bytes ||
    next.append_bytes_per_sec > r.append_bytes_per_sec ||
    next.delivered_bytes_per_sec > r.delivered_bytes_per_sec;
  if (grows) {
    const a = provider.base_rate_admission;
    if (!a.accepts_new) reject("BaseRateNotAccepted", "the provider does not accept new governance-base reservations");
    const over: Array<[string, bigint, bigint]> = [
      ["max_active_streams", next.reserved_streams, a.max_active_streams],
      ["max_total_retained_bytes", next.retained_bytes, a.max_total_retained_bytes],
      ["max_total_append_bytes_per_sec", next.append_bytes_per_sec, a.max_total_append_bytes_per_sec],
      ["max_total_delivered_bytes_per_sec", next.delivered_bytes_per_sec, a.max_total_delivered_bytes_per_sec],
    ];
    for (const [name, total, cap] of over) {
      if (total > cap) reject("BaseRateCapacityExceeded", `reservation ${total} would exceed ${name} ${cap}`);
    }
  }
  return next;
}

export interface QuoteExpectation {
  provider: ProviderRecordV1;
  owner: Address;
  streamId: Bytes32;
  pricingGeneration: bigint;
  deliveryClass: DeliveryClass;
  capacity: Capacity;
}

/**
 * §4.4: verify a quote against the provider's finalized quote_key (strict Ed25519 over
 * keccak256(price_quote_signing_bytes_v1)), exact owner, stream, generation, class, capacity,
 * rate floor and validity height (the physical executing height). Returns quote_digest. The
 * caller checked its context first (§4: before authorization).
 */
export function verifyQuote(ctx: TxContext, quote: PriceQuoteV1, want: QuoteExpectation): Bytes32 {
  const invalid = (reason: string): never => reject("PricingBasisInvalid", `price quote ${reason} (§4.4)`);
  if (!bytesEqual(quote.provider, want.provider.provider)) invalid("names another provider");
  if (!bytesEqual(quote.owner, want.owner)) invalid("names another owner");
  if (!bytesEqual(quote.stream_id, want.streamId)) invalid("binds another stream_id");
  if (quote.pricing_generation !== want.pricingGeneration) invalid(`pricing_generation ${quote.pricing_generation} is not ${want.pricingGeneration}`);
  if (quote.delivery_class !== want.deliveryClass) invalid("delivery class differs from the stream's");
  if (quote.retained_bytes !== want.capacity.retained) invalid("retained_bytes differs from config.retained_bytes_limit");
  if (quote.append_bytes_sec !== want.capacity.append) invalid("append_bytes_sec differs from config.max_append_bytes_per_sec");
  if (quote.delivered_bytes_sec !== want.capacity.delivered) invalid("delivered_bytes_sec differs from config.max_delivered_bytes_per_sec");
  if (quote.rate_per_block < CBQS_MIN_RATE_PER_BLOCK) invalid(`rate ${quote.rate_per_block} is below CBQS_MIN_RATE_PER_BLOCK`);
  if (quote.valid_until_block < ctx.height) invalid(`expired at block ${quote.valid_until_block}`);
  if (!bytesEqual(quote.signing_key_id, meteredSigningKeyId(ctx.meter, want.provider.quote_key))) {
    invalid("signing_key_id is not the provider's quote_key id");
  }
  const digest = ctx.meter.keccak(price_quote_signing_bytes_v1(quote));
  if (!ctx.meter.verifyEd25519(want.provider.quote_key.key, digest, quote.signature)) invalid("signature does not verify");
  return digest;
}
