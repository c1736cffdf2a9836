import { describe, expect, it } from "vitest";
import { keccak_256 } from "@noble/hashes/sha3.js";
import { PARAMS } from "../../src/params.js";
import {
  activeScheduleAt,
  codecs,
  decode,
  encode,
  genesisBaseRateSchedule,
  genesisBaseRateSchedules,
  scheduleDigest,
} from "../../src/codec/index.js";

/** Hand-written §14 encoding of a BaseRateClassV1 (u64,u128,u64,u128,u64,u128 big-endian). */
function beHex(v: bigint, width: number): string {
  return v.toString(16).padStart(width * 2, "0");
}

/** The genesis schedule written out from the §18 default values, independent of the codec. */
function handSchedule(): string {
  const cls = (retainedRate: bigint, throughputRate: bigint) =>
    beHex(1_073_741_824n, 8) + beHex(retainedRate, 16) + beHex(1_048_576n, 8) + beHex(throughputRate, 16) +
    beHex(1_048_576n, 8) + beHex(66_700n, 16);
  return "01" + beHex(1n, 8) + beHex(0n, 8) + cls(67n, 13_300n) + cls(67n, 8_000n);
}

describe("§4.5 genesis base-rate schedule", () => {
  it("§4.5: takes the twelve §18 cbqs.base_rate.* defaults, version 1, activates at block 0", () => {
    const s = genesisBaseRateSchedule();
    expect(s.format_version).toBe(1);
    expect(s.schedule_version).toBe(1n);
    expect(s.activates_at_block).toBe(0n);
    expect(s.standard.throughput_unit_rate_per_block).toBe(13_300n);
    expect(s.fast.throughput_unit_rate_per_block).toBe(8_000n);
    const baseRows = PARAMS.filter((r) => r.class === "base_rate");
    expect(baseRows).toHaveLength(12);
    for (const row of baseRows) {
      const [, , cls, field] = row.name.split(".") as [string, string, "standard" | "fast", string];
      expect((s[cls] as unknown as Record<string, bigint>)[field]).toBe(row.default);
    }
  });

  it("§4.5: the genesis BaseRateScheduleV1 encodes to exactly 161 bytes", () => {
    expect(encode(codecs.BaseRateScheduleV1, genesisBaseRateSchedule())).toHaveLength(161);
  });

  it("§4.5: the stored BaseRateSchedulesV1 record is exactly 162 bytes (161 + absent-option byte 0)", () => {
    const bytes = encode(codecs.BaseRateSchedulesV1, genesisBaseRateSchedules());
    expect(bytes).toHaveLength(162);
    expect(bytes[161]).toBe(0);
    expect(decode(codecs.BaseRateSchedulesV1, bytes)).toEqual(genesisBaseRateSchedules());
  });

  it("§4.5/§14: schedule bytes equal the field-by-field big-endian concatenation written out by hand", () => {
    expect(Buffer.from(encode(codecs.BaseRateScheduleV1, genesisBaseRateSchedule())).toString("hex")).toBe(handSchedule());
  });

  it("§4.5: the schedule_digest preimage is 187 bytes (26-byte domain + 161) and the digest is its keccak256", () => {
    const preimage = Buffer.concat([Buffer.from("cbqs/base-rate-schedule/v1"), Buffer.from(handSchedule(), "hex")]);
    expect(preimage).toHaveLength(187);
    expect(scheduleDigest(genesisBaseRateSchedule())).toEqual(keccak_256(preimage));
  });

  it("§18: a base-rate value of zero or above its Maximum is refused", () => {
    expect(() => genesisBaseRateSchedule({ "cbqs.base_rate.fast.retained_unit_bytes": 0n })).toThrow(/outside/);
    expect(() =>
      genesisBaseRateSchedule({ "cbqs.base_rate.standard.retained_unit_rate_per_block": 1_000_000_001n }),
    ).toThrow(/outside/);
    expect(() => genesisBaseRateSchedule({ "cbqs.max_lanes_per_stream": 1n })).toThrow(/not a cbqs.base_rate/);
    expect(genesisBaseRateSchedule({ "cbqs.base_rate.fast.retained_unit_bytes": 5n }).fast.retained_unit_bytes).toBe(5n);
  });

  it("§4.5: active_at selects pending only when present and H >= pending.activates_at_block", () => {
    const active = genesisBaseRateSchedule();
    const pending = { ...genesisBaseRateSchedule(), schedule_version: 2n, activates_at_block: 100n };
    expect(activeScheduleAt({ active, pending: null }, 10_000n)).toBe(active);
    expect(activeScheduleAt({ active, pending }, 99n)).toBe(active);
    expect(activeScheduleAt({ active, pending }, 100n)).toBe(pending);
  });
});
