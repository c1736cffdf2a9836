import { describe, expect, it } from "vitest";
import {
  MAX_ERROR_DETAILS_BYTES,
  MAX_ERROR_MESSAGE_BYTES,
  MAX_KEY_BATCH_CHUNK_BYTES,
  MAX_KEY_ENVELOPES_PER_CHUNK,
  MAX_PROOF_LANES_PER_SUBSCRIPTION,
  MAX_SERVER_FRAMES_PER_BATCH,
  MAX_WIRE_FRAME_BYTES,
} from "../src/codec/index.js";
import { decode } from "../src/codec/core.js";
import * as S from "../src/codec/schema.js";
import { schedulesKey } from "../src/engine/layout.js";
import { LIVE_SCALARS, PARAMS, paramRow } from "../src/params.js";
import { decodeStateValueAs } from "../state/kv/value.js";
import { TestChain } from "./engine/harness.js";

describe("§18 parameter table", () => {
  it("§18: 25 live scalars + 12 base-rate rows + 7 codec bounds = 44 rows", () => {
    expect(PARAMS.filter((r) => r.class === "live")).toHaveLength(25);
    expect(PARAMS.filter((r) => r.class === "base_rate")).toHaveLength(12);
    expect(PARAMS.filter((r) => r.class === "codec")).toHaveLength(7);
  });
  it("§18.1: the 25-scalar read set is exactly the live class", () => {
    expect(new Set(LIVE_SCALARS).size).toBe(25);
    for (const name of LIVE_SCALARS) expect(paramRow(name)?.class).toBe("live");
  });
  it("§18: every default is within [1, Maximum]", () => {
    for (const r of PARAMS) {
      expect(r.default >= 1n && r.default <= r.maximum, r.name).toBe(true);
    }
  });
});

/**
 * CIP-39 §18's table, transcribed row by row in the table's order: name, Default, Maximum, as the
 * spec prints them (thousands separators kept so each row reads against the spec at a glance).
 */
const SPEC_18_TABLE: ReadonlyArray<readonly [name: string, def: string, max: string]> = [
  ["cbqs.max_streams_per_owner", "1,024", "16,384"],
  ["cbqs.max_provider_endpoints", "4", "8"],
  ["cbqs.max_provider_endpoint_uri_bytes", "2,048", "2,048"],
  ["cbqs.max_inline_message_bytes", "262,144", "1,048,576"],
  ["cbqs.max_groups_per_stream", "4,096", "65,536"],
  ["cbqs.max_lanes_per_stream", "16,384", "65,536"],
  ["cbqs.max_lane_ids_per_grant", "4,096", "16,384"],
  ["cbqs.max_proof_lanes_per_subscription", "512", "512"],
  ["cbqs.max_key_envelopes_per_batch", "65,536", "65,536"],
  ["cbqs.max_key_envelopes_per_chunk", "1,024", "1,024"],
  ["cbqs.max_key_batch_chunk_bytes", "4,194,304", "4,194,304"],
  ["cbqs.max_wire_frame_bytes", "5,242,880", "5,242,880"],
  ["cbqs.max_server_frames_per_batch", "256", "256"],
  ["cbqs.max_error_message_bytes", "2,048", "2,048"],
  ["cbqs.max_error_details_bytes", "16,384", "16,384"],
  ["cbqs.max_lane_creates_per_min", "256", "4,096"],
  ["cbqs.max_lane_list_page", "256", "1,024"],
  ["cbqs.max_subscriptions_per_connection", "256", "4,096"],
  ["cbqs.max_grant_ttl_ms", "86,400,000", "604,800,000"],
  ["cbqs.max_clock_skew_ms", "60,000", "300,000"],
  ["cbqs.max_chain_staleness_blocks", "30", "300"],
  ["cbqs.base_rate.standard.retained_unit_bytes", "1,073,741,824", "1,099,511,627,776"],
  ["cbqs.base_rate.standard.retained_unit_rate_per_block", "67", "1,000,000,000"],
  ["cbqs.base_rate.standard.throughput_unit_bytes_per_sec", "1,048,576", "1,073,741,824"],
  ["cbqs.base_rate.standard.throughput_unit_rate_per_block", "13,300", "1,000,000,000"],
  ["cbqs.base_rate.standard.delivered_unit_bytes_per_sec", "1,048,576", "1,073,741,824"],
  ["cbqs.base_rate.standard.delivered_unit_rate_per_block", "66,700", "1,000,000,000"],
  ["cbqs.base_rate.fast.retained_unit_bytes", "1,073,741,824", "1,099,511,627,776"],
  ["cbqs.base_rate.fast.retained_unit_rate_per_block", "67", "1,000,000,000"],
  ["cbqs.base_rate.fast.throughput_unit_bytes_per_sec", "1,048,576", "1,073,741,824"],
  ["cbqs.base_rate.fast.throughput_unit_rate_per_block", "8,000", "1,000,000,000"],
  ["cbqs.base_rate.fast.delivered_unit_bytes_per_sec", "1,048,576", "1,073,741,824"],
  ["cbqs.base_rate.fast.delivered_unit_rate_per_block", "66,700", "1,000,000,000"],
  ["cbqs.standard.retention_ms", "604,800,000", "2,592,000,000"],
  ["cbqs.standard.idempotency_horizon_ms", "86,400,000", "604,800,000"],
  ["cbqs.standard.visibility_ms", "30,000", "900,000"],
  ["cbqs.standard.max_attempts", "10", "100"],
  ["cbqs.fast.retention_ms", "3,600,000", "86,400,000"],
  ["cbqs.fast.batch_max_ms", "100", "1,000"],
  ["cbqs.fast.batch_max_records", "1,024", "65,536"],
  ["cbqs.slow_consumer_timeout_ms", "60,000", "900,000"],
  ["cbqs.rent.provider_bps", "9,000", "10,000"],
  ["cbqs.rent.platform_bps", "1,000", "10,000"],
  ["cbqs.suspend_grace_blocks", "604,800", "2,592,000"],
];

/** §18, below the table: the seven codec bounds, named. */
const SPEC_18_CODEC_BOUNDS = [
  "cbqs.max_key_envelopes_per_chunk",
  "cbqs.max_key_batch_chunk_bytes",
  "cbqs.max_wire_frame_bytes",
  "cbqs.max_server_frames_per_batch",
  "cbqs.max_error_message_bytes",
  "cbqs.max_error_details_bytes",
  "cbqs.max_proof_lanes_per_subscription",
];

const spec = SPEC_18_TABLE.map(([name, def, max]) => ({ name, default: BigInt(def.replaceAll(",", "")), maximum: BigInt(max.replaceAll(",", "")) }));
const specDefault = (name: string): bigint => spec.find((r) => r.name === name)!.default;

describe("§18 parameter values against the spec's table", () => {
  it("§18: every one of the 44 rows has the spec's name, Default and Maximum, in the table's order", () => {
    expect(SPEC_18_TABLE).toHaveLength(44);
    expect(PARAMS.map((r) => ({ name: r.name, default: r.default, maximum: r.maximum }))).toEqual(spec);
  });

  it("§18: the classes are the spec's: the twelve cbqs.base_rate.* rows, the seven named codec bounds, the other 25 live", () => {
    for (const r of PARAMS) {
      const expected = r.name.startsWith("cbqs.base_rate.") ? "base_rate" : SPEC_18_CODEC_BOUNDS.includes(r.name) ? "codec" : "live";
      expect(r.class, r.name).toBe(expected);
    }
    expect(new Set(LIVE_SCALARS)).toEqual(new Set(PARAMS.filter((r) => r.class === "live").map((r) => r.name)));
  });

  it("§18 defaults at genesis: a genesis that sets no parameter stores the 25 live scalars and the §4.5 schedule at the table's Default", () => {
    const t = new TestChain();
    expect(t.chain.params()).toEqual(new Map(LIVE_SCALARS.map((name) => [name, specDefault(name)])));
    const schedules = decode(S.BaseRateSchedulesV1, decodeStateValueAs(t.store.read(schedulesKey())!, "StorageSlot").bytes);
    expect(schedules.pending).toBeNull();
    for (const cls of ["standard", "fast"] as const) {
      for (const [field, value] of Object.entries(schedules.active[cls])) {
        expect(value, `${cls}.${field}`).toBe(specDefault(`cbqs.base_rate.${cls}.${field}`));
      }
      expect(Object.keys(schedules.active[cls])).toHaveLength(6);
    }
  });

  it("§18 codec bounds: the decoders' constants are the table's values (Default = Maximum for all seven)", () => {
    const constants: Record<string, number> = {
      "cbqs.max_proof_lanes_per_subscription": MAX_PROOF_LANES_PER_SUBSCRIPTION,
      "cbqs.max_key_envelopes_per_chunk": MAX_KEY_ENVELOPES_PER_CHUNK,
      "cbqs.max_key_batch_chunk_bytes": MAX_KEY_BATCH_CHUNK_BYTES,
      "cbqs.max_wire_frame_bytes": MAX_WIRE_FRAME_BYTES,
      "cbqs.max_server_frames_per_batch": MAX_SERVER_FRAMES_PER_BATCH,
      "cbqs.max_error_message_bytes": MAX_ERROR_MESSAGE_BYTES,
      "cbqs.max_error_details_bytes": MAX_ERROR_DETAILS_BYTES,
    };
    expect(Object.keys(constants).sort()).toEqual([...SPEC_18_CODEC_BOUNDS].sort());
    for (const [name, value] of Object.entries(constants)) {
      const row = spec.find((r) => r.name === name)!;
      expect([BigInt(value), BigInt(value)], name).toEqual([row.default, row.maximum]);
    }
  });
});
