// CIP-39 §18: every parameter row with its default and Maximum, and its class.
// - "live": one of the 25 live governance scalars (§18.1), governance-writable, one state read each.
// - "base_rate": the twelve frozen genesis schedule values (§4.5); genesis validation only, never stored.
// - "codec": the seven codec bounds; protocol constants, genesis validation only, never stored.

export type ParamClass = "live" | "base_rate" | "codec";

export interface ParamRow {
  name: string;
  default: bigint;
  maximum: bigint;
  class: ParamClass;
}

const row = (name: string, def: bigint, max: bigint, cls: ParamClass): ParamRow => ({
  name,
  default: def,
  maximum: max,
  class: cls,
});

/** §18 table, in the table's order. */
export const PARAMS: readonly ParamRow[] = [
  row("cbqs.max_streams_per_owner", 1_024n, 16_384n, "live"),
  row("cbqs.max_provider_endpoints", 4n, 8n, "live"),
  row("cbqs.max_provider_endpoint_uri_bytes", 2_048n, 2_048n, "live"),
  row("cbqs.max_inline_message_bytes", 262_144n, 1_048_576n, "live"),
  row("cbqs.max_groups_per_stream", 4_096n, 65_536n, "live"),
  row("cbqs.max_lanes_per_stream", 16_384n, 65_536n, "live"),
  row("cbqs.max_lane_ids_per_grant", 4_096n, 16_384n, "live"),
  row("cbqs.max_proof_lanes_per_subscription", 512n, 512n, "codec"),
  row("cbqs.max_key_envelopes_per_batch", 65_536n, 65_536n, "live"),
  row("cbqs.max_key_envelopes_per_chunk", 1_024n, 1_024n, "codec"),
  row("cbqs.max_key_batch_chunk_bytes", 4_194_304n, 4_194_304n, "codec"),
  row("cbqs.max_wire_frame_bytes", 5_242_880n, 5_242_880n, "codec"),
  row("cbqs.max_server_frames_per_batch", 256n, 256n, "codec"),
  row("cbqs.max_error_message_bytes", 2_048n, 2_048n, "codec"),
  row("cbqs.max_error_details_bytes", 16_384n, 16_384n, "codec"),
  row("cbqs.max_lane_creates_per_min", 256n, 4_096n, "live"),
  row("cbqs.max_lane_list_page", 256n, 1_024n, "live"),
  row("cbqs.max_subscriptions_per_connection", 256n, 4_096n, "live"),
  row("cbqs.max_grant_ttl_ms", 86_400_000n, 604_800_000n, "live"),
  row("cbqs.max_clock_skew_ms", 60_000n, 300_000n, "live"),
  row("cbqs.max_chain_staleness_blocks", 30n, 300n, "live"),
  row("cbqs.base_rate.standard.retained_unit_bytes", 1_073_741_824n, 1_099_511_627_776n, "base_rate"),
  row("cbqs.base_rate.standard.retained_unit_rate_per_block", 67n, 1_000_000_000n, "base_rate"),
  row("cbqs.base_rate.standard.throughput_unit_bytes_per_sec", 1_048_576n, 1_073_741_824n, "base_rate"),
  row("cbqs.base_rate.standard.throughput_unit_rate_per_block", 13_300n, 1_000_000_000n, "base_rate"),
  row("cbqs.base_rate.standard.delivered_unit_bytes_per_sec", 1_048_576n, 1_073_741_824n, "base_rate"),
  row("cbqs.base_rate.standard.delivered_unit_rate_per_block", 66_700n, 1_000_000_000n, "base_rate"),
  row("cbqs.base_rate.fast.retained_unit_bytes", 1_073_741_824n, 1_099_511_627_776n, "base_rate"),
  row("cbqs.base_rate.fast.retained_unit_rate_per_block", 67n, 1_000_000_000n, "base_rate"),
  row("cbqs.base_rate.fast.throughput_unit_bytes_per_sec", 1_048_576n, 1_073_741_824n, "base_rate"),
  row("cbqs.base_rate.fast.throughput_unit_rate_per_block", 8_000n, 1_000_000_000n, "base_rate"),
  row("cbqs.base_rate.fast.delivered_unit_bytes_per_sec", 1_048_576n, 1_073_741_824n, "base_rate"),
  row("cbqs.base_rate.fast.delivered_unit_rate_per_block", 66_700n, 1_000_000_000n, "base_rate"),
  row("cbqs.standard.retention_ms", 604_800_000n, 2_592_000_000n, "live"),
  row("cbqs.standard.idempotency_horizon_ms", 86_400_000n, 604_800_000n, "live"),
  row("cbqs.standard.visibility_ms", 30_000n, 900_000n, "live"),
  row("cbqs.standard.max_attempts", 10n, 100n, "live"),
  row("cbqs.fast.retention_ms", 3_600_000n, 86_400_000n, "live"),
  row("cbqs.fast.batch_max_ms", 100n, 1_000n, "live"),
  row("cbqs.fast.batch_max_records", 1_024n, 65_536n, "live"),
  row("cbqs.slow_consumer_timeout_ms", 60_000n, 900_000n, "live"),
  row("cbqs.rent.provider_bps", 9_000n, 10_000n, "live"),
  row("cbqs.rent.platform_bps", 1_000n, 10_000n, "live"),
  row("cbqs.suspend_grace_blocks", 604_800n, 2_592_000n, "live"),
];

/**
 * §18.1: the 25 live governance scalars in the order §18.1 lists them. Handlers that read
 * the governance bounds set read exactly these, one state read each, in this order.
 */
export const LIVE_SCALARS: readonly string[] = [
  "cbqs.max_streams_per_owner",
  "cbqs.max_provider_endpoints",
  "cbqs.max_provider_endpoint_uri_bytes",
  "cbqs.max_inline_message_bytes",
  "cbqs.max_groups_per_stream",
  "cbqs.max_lanes_per_stream",
  "cbqs.max_lane_ids_per_grant",
  "cbqs.max_key_envelopes_per_batch",
  "cbqs.max_lane_creates_per_min",
  "cbqs.max_lane_list_page",
  "cbqs.max_subscriptions_per_connection",
  "cbqs.max_grant_ttl_ms",
  "cbqs.max_clock_skew_ms",
  "cbqs.max_chain_staleness_blocks",
  "cbqs.standard.retention_ms",
  "cbqs.standard.idempotency_horizon_ms",
  "cbqs.standard.visibility_ms",
  "cbqs.standard.max_attempts",
  "cbqs.fast.retention_ms",
  "cbqs.fast.batch_max_ms",
  "cbqs.fast.batch_max_records",
  "cbqs.slow_consumer_timeout_ms",
  "cbqs.suspend_grace_blocks",
  "cbqs.rent.provider_bps",
  "cbqs.rent.platform_bps",
];

const BY_NAME = new Map(PARAMS.map((r) => [r.name, r]));

export function paramRow(name: string): ParamRow | undefined {
  return BY_NAME.get(name);
}

/** §6 protocol constants (compile-time, not governance parameters). */
export const CBQS_MIN_RATE_PER_BLOCK = 8_000n;
export const CBQS_CREATION_CHARGE_BLOCKS = 604_800n;
/** §4.2: Fast-stream cross-field bound, an immutable protocol constant. */
export const FAST_BATCH_MATERIALIZATION_BOUND = 268_435_456n;
