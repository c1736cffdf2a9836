// instructions/pricing.ts as plain functions: every §4.2 bound at its value and one past it, the
// §4.5 derivation's units and floor, and the §5 reservation caps. The instructions' tests reach
// the same code through transactions; these pin each boundary on its own.
import { describe, expect, it } from "vitest";
import type { BaseRateClassV1, BaseRateScheduleV1, DeliveryClass, ProviderRecordV1, StreamConfigV1 } from "../../src/codec/types.js";
import { GovernanceBounds } from "../../src/engine/context.js";
import { CbqsError } from "../../src/engine/errors.js";
import { adjustReservation, deriveBaseRate, sameCapacity, validateStreamConfig, type Capacity } from "../../instructions/pricing.js";
import { U128_MAX, U64_MAX } from "../../src/engine/math.js";
import { LIVE_SCALARS, paramRow } from "../../src/params.js";
import { OPEN_ADMISSION, standardConfig } from "./harness.js";

/** Live bounds in §18.1 order: the given values, every other scalar at its default. */
const liveBounds = (values: Record<string, bigint>): GovernanceBounds =>
  new GovernanceBounds(LIVE_SCALARS.map((name) => values[name] ?? paramRow(name)!.default));

const bounds = liveBounds({ "cbqs.max_inline_message_bytes": 1_000n, "cbqs.max_lanes_per_stream": 50n });

/** The rejection's error name and message, or "ok". */
function outcome(f: () => unknown): string {
  try {
    f();
    return "ok";
  } catch (err) {
    if (err instanceof CbqsError) return `${err.errorName}: ${err.message}`;
    throw err;
  }
}

const standard = (over: Partial<StreamConfigV1>): StreamConfigV1 => standardConfig({ max_message_bytes: 1_000, max_lanes: 50, ...over });
const fast = (over: Partial<StreamConfigV1>): StreamConfigV1 =>
  standard({ retention_ms: 3_600_000n, fast_batch_max_ms: 100, fast_batch_max_records: 256, default_max_attempts: 0, ...over });
const check = (config: StreamConfigV1, cls: DeliveryClass = "Standard", previous: StreamConfigV1 | null = null) =>
  outcome(() => validateStreamConfig(config, cls, bounds, previous));

describe("§4.2 stream configuration bounds, each at its value and one past it", () => {
  it("Standard: every bound accepts its maximum and refuses one more, naming the field", () => {
    const cases: Array<[keyof StreamConfigV1, bigint | number, bigint | number, string]> = [
      ["max_message_bytes", 1_000, 1_001, "live cbqs.max_inline_message_bytes"],
      ["max_lanes", 50, 51, "live cbqs.max_lanes_per_stream"],
      ["retention_ms", 2_592_000_000n, 2_592_000_001n, "§18 Maximum of cbqs.standard.retention_ms"],
      ["idempotency_horizon_ms", 604_800_000n, 604_800_001n, "§18 Maximum of cbqs.standard.idempotency_horizon_ms"],
      ["max_visibility_ms", 900_000n, 900_001n, "§18 Maximum of cbqs.standard.visibility_ms"],
      ["default_max_attempts", 100, 101, "§18 Maximum of cbqs.standard.max_attempts"],
    ];
    for (const [field, max, over, source] of cases) {
      const visibility = field === "max_visibility_ms" ? { default_visibility_ms: 1n } : {};
      expect(check(standard({ [field]: max, ...visibility })), field).toBe("ok");
      expect(check(standard({ [field]: over, ...visibility })), field).toBe(`InvalidStreamConfig: config.${field} = ${over} exceeds ${source} ${max} (§4.2)`);
    }
    expect(check(standard({ default_visibility_ms: 60_000n, max_visibility_ms: 60_000n }))).toBe("ok");
    expect(check(standard({ default_visibility_ms: 60_001n, max_visibility_ms: 60_000n }))).toMatch(/^InvalidStreamConfig: config\.default_visibility_ms = 60001 exceeds max_visibility_ms 60000/);
  });

  it("nonzero fields, and delivered throughput at and below append", () => {
    for (const field of ["max_message_bytes", "max_lanes", "retention_ms", "default_max_attempts"] as const) {
      const zero = typeof standard({})[field] === "bigint" ? 0n : 0;
      expect(check(standard({ [field]: zero })), field).toBe(`InvalidStreamConfig: config.${field} must be nonzero (§4.2)`);
    }
    expect(check(standard({ max_append_bytes_per_sec: 7n, max_delivered_bytes_per_sec: 7n }))).toBe("ok");
    expect(check(standard({ max_append_bytes_per_sec: 7n, max_delivered_bytes_per_sec: 6n }))).toBe(
      "InvalidStreamConfig: config.max_delivered_bytes_per_sec is below max_append_bytes_per_sec (§4.2)",
    );
  });

  it("Fast: fast-only bounds, Standard-only fields unchecked, and the batch materialization bound at 268,435,456", () => {
    expect(check(fast({}), "Fast")).toBe("ok");
    // Standard-only bounds do not apply to a Fast stream.
    expect(check(fast({ default_max_attempts: 0, idempotency_horizon_ms: 10n ** 12n, max_visibility_ms: 10n ** 12n }), "Fast")).toBe("ok");
    const cases: Array<[keyof StreamConfigV1, bigint | number, bigint | number, string]> = [
      ["retention_ms", 86_400_000n, 86_400_001n, "§18 Maximum of cbqs.fast.retention_ms"],
      ["fast_batch_max_ms", 1_000, 1_001, "§18 Maximum of cbqs.fast.batch_max_ms"],
      ["fast_batch_max_records", 65_536, 65_537, "§18 Maximum of cbqs.fast.batch_max_records"],
    ];
    for (const [field, max, over, source] of cases) {
      expect(check(fast({ [field]: max, max_message_bytes: 1 }), "Fast"), field).toBe("ok");
      expect(check(fast({ [field]: over, max_message_bytes: 1 }), "Fast"), field).toBe(`InvalidStreamConfig: config.${field} = ${over} exceeds ${source} ${max} (§4.2)`);
    }
    for (const field of ["fast_batch_max_ms", "fast_batch_max_records"] as const) {
      expect(check(fast({ [field]: 0 }), "Fast"), field).toBe(`InvalidStreamConfig: config.${field} must be nonzero (§4.2)`);
    }
    // 4,096 bytes × 65,536 records is the bound exactly: accepted; one byte more per record is not.
    const wide = liveBounds({ "cbqs.max_inline_message_bytes": 1n << 20n, "cbqs.max_lanes_per_stream": 50n });
    expect(outcome(() => validateStreamConfig(fast({ max_message_bytes: 4_096, fast_batch_max_records: 65_536 }), "Fast", wide))).toBe("ok");
    expect(outcome(() => validateStreamConfig(fast({ max_message_bytes: 4_097, fast_batch_max_records: 65_536 }), "Fast", wide))).toBe(
      "InvalidStreamConfig: config.max_message_bytes × fast_batch_max_records = 268500992 exceeds 268435456 (§4.2)",
    );
  });

  it("§18 at an update the LIVE bounds apply only to a changed value", () => {
    const previous = standard({ max_message_bytes: 2_000, max_lanes: 80 });
    expect(check(standard({ max_message_bytes: 2_000, max_lanes: 80 }), "Standard", previous)).toBe("ok");
    expect(check(standard({ max_message_bytes: 1_999, max_lanes: 80 }), "Standard", previous)).toMatch(/config\.max_message_bytes = 1999 exceeds live/);
    expect(check(standard({ max_message_bytes: 2_000, max_lanes: 79 }), "Standard", previous)).toMatch(/config\.max_lanes = 79 exceeds live/);
  });
});

const unitClass = (over: Partial<BaseRateClassV1> = {}): BaseRateClassV1 => ({
  retained_unit_bytes: 100n,
  retained_unit_rate_per_block: 1_000n,
  throughput_unit_bytes_per_sec: 10n,
  throughput_unit_rate_per_block: 10_000n,
  delivered_unit_bytes_per_sec: 20n,
  delivered_unit_rate_per_block: 100_000n,
  ...over,
});
const schedule = (standardClass = unitClass(), fastClass = unitClass({ retained_unit_rate_per_block: 3_000n })): BaseRateScheduleV1 =>
  ({ standard: standardClass, fast: fastClass }) as BaseRateScheduleV1;
const cap = (retained: bigint, append: bigint, delivered: bigint): Capacity => ({ retained, append, delivered });

describe("§4.5 governance-base rate", () => {
  it("each field is ceil-divided into units on its own: exact multiples, one over, one under", () => {
    expect(deriveBaseRate(schedule(), "Standard", cap(100n, 10n, 20n))).toBe(111_000n);
    expect(deriveBaseRate(schedule(), "Standard", cap(101n, 10n, 20n))).toBe(112_000n);
    expect(deriveBaseRate(schedule(), "Standard", cap(100n, 11n, 20n))).toBe(121_000n);
    expect(deriveBaseRate(schedule(), "Standard", cap(100n, 10n, 21n))).toBe(211_000n);
    expect(deriveBaseRate(schedule(), "Standard", cap(99n, 9n, 19n))).toBe(111_000n);
    expect(deriveBaseRate(schedule(), "Fast", cap(100n, 10n, 20n))).toBe(113_000n);
  });

  it("a derived rate below CBQS_MIN_RATE_PER_BLOCK is clamped up to 8,000; at or above it is kept", () => {
    const cheap = schedule(unitClass({ retained_unit_rate_per_block: 7_999n, throughput_unit_rate_per_block: 0n, delivered_unit_rate_per_block: 0n }));
    expect(deriveBaseRate(cheap, "Standard", cap(1n, 0n, 0n))).toBe(8_000n);
    expect(deriveBaseRate(cheap, "Standard", cap(101n, 0n, 0n))).toBe(15_998n);
  });

  it("a product or sum above u128 is an overflow naming the part", () => {
    const huge = schedule(unitClass({ retained_unit_bytes: 1n, throughput_unit_bytes_per_sec: 1n, delivered_unit_bytes_per_sec: 1n }));
    const big = U128_MAX / 1_000n + 1n; // × the retained rate 1,000 overflows
    expect(outcome(() => deriveBaseRate(huge, "Standard", cap(big, 0n, 0n)))).toBe("ArithmeticOverflow: retained rent overflows");
    expect(outcome(() => deriveBaseRate(huge, "Standard", cap(0n, big, 0n)))).toBe("ArithmeticOverflow: throughput rent overflows");
    expect(outcome(() => deriveBaseRate(huge, "Standard", cap(0n, 0n, big)))).toBe("ArithmeticOverflow: delivered rent overflows");
    const third = U128_MAX / 100_000n; // each product fits; their sum does not
    expect(outcome(() => deriveBaseRate(huge, "Standard", cap(third * 100n, third * 10n, third)))).toBe("ArithmeticOverflow: base rate overflows");
    expect(outcome(() => deriveBaseRate(huge, "Standard", cap(0n, third * 10n, third)))).toBe("ArithmeticOverflow: base rate overflows");
  });

  it("sameCapacity compares all three priced fields", () => {
    const base = cap(1n, 2n, 3n);
    expect(sameCapacity(base, cap(1n, 2n, 3n))).toBe(true);
    for (const other of [cap(9n, 2n, 3n), cap(1n, 9n, 3n), cap(1n, 2n, 9n)]) expect(sameCapacity(base, other)).toBe(false);
  });

  it("an all-zero capacity and a zero unit size are refused, each with its own error", () => {
    expect(outcome(() => deriveBaseRate(schedule(), "Standard", cap(0n, 0n, 0n)))).toMatch(/^PricingBasisInvalid: /);
    for (const zero of ["retained_unit_bytes", "throughput_unit_bytes_per_sec", "delivered_unit_bytes_per_sec"] as const) {
      expect(outcome(() => deriveBaseRate(schedule(unitClass({ [zero]: 0n })), "Standard", cap(1n, 0n, 0n))), zero).toBe(
        "BaseRateScheduleUnavailable: the active schedule has a zero unit size",
      );
    }
    // A zero unit in the other class does not matter.
    expect(deriveBaseRate(schedule(unitClass(), unitClass({ retained_unit_bytes: 0n })), "Standard", cap(1n, 0n, 0n))).toBe(8_000n);
    // Only a capacity with all three fields zero is refused.
    for (const one of [cap(1n, 0n, 0n), cap(0n, 1n, 0n), cap(0n, 0n, 1n)]) expect(outcome(() => deriveBaseRate(schedule(), "Standard", one))).toBe("ok");
  });
});

const provider = (reserved: [bigint, bigint, bigint, bigint], admission = OPEN_ADMISSION): ProviderRecordV1 =>
  ({
    base_rate_reserved: { reserved_streams: reserved[0], retained_bytes: reserved[1], append_bytes_per_sec: reserved[2], delivered_bytes_per_sec: reserved[3] },
    base_rate_admission: admission,
  }) as ProviderRecordV1;
const none = { streams: 0n, cap: cap(0n, 0n, 0n) };

describe("§5 base-rate reservation totals", () => {
  const admission = { ...OPEN_ADMISSION, max_active_streams: 3n, max_total_retained_bytes: 300n, max_total_append_bytes_per_sec: 30n, max_total_delivered_bytes_per_sec: 60n };

  it("a reservation may fill every cap exactly; one more unit of any of them is refused, naming it", () => {
    const p = provider([2n, 200n, 20n, 40n], admission);
    expect(adjustReservation(p, none, { streams: 1n, cap: cap(100n, 10n, 20n) })).toEqual({
      reserved_streams: 3n,
      retained_bytes: 300n,
      append_bytes_per_sec: 30n,
      delivered_bytes_per_sec: 60n,
    });
    const over: Array<[string, { streams: bigint; cap: Capacity }]> = [
      ["max_active_streams", { streams: 2n, cap: cap(0n, 0n, 0n) }],
      ["max_total_retained_bytes", { streams: 0n, cap: cap(101n, 0n, 0n) }],
      ["max_total_append_bytes_per_sec", { streams: 0n, cap: cap(0n, 11n, 0n) }],
      ["max_total_delivered_bytes_per_sec", { streams: 0n, cap: cap(0n, 0n, 21n) }],
    ];
    for (const [name, add] of over) {
      expect(outcome(() => adjustReservation(p, none, add)), name).toMatch(new RegExp(`^BaseRateCapacityExceeded: reservation \\d+ would exceed ${name} \\d+$`));
    }
  });

  it("accepts_new is required only when some total grows; a pure release or an unchanged total needs neither it nor room", () => {
    const closed = { ...admission, accepts_new: false, max_active_streams: 0n };
    const p = provider([2n, 200n, 20n, 40n], closed);
    expect(adjustReservation(p, { streams: 1n, cap: cap(100n, 10n, 20n) }, none)).toEqual({
      reserved_streams: 1n,
      retained_bytes: 100n,
      append_bytes_per_sec: 10n,
      delivered_bytes_per_sec: 20n,
    });
    const same = { streams: 1n, cap: cap(100n, 10n, 20n) };
    expect(adjustReservation(p, same, same).reserved_streams).toBe(2n);
    const growths: Array<{ streams: bigint; cap: Capacity }> = [
      { streams: 1n, cap: cap(0n, 0n, 0n) },
      { streams: 0n, cap: cap(1n, 0n, 0n) },
      { streams: 0n, cap: cap(0n, 1n, 0n) },
      { streams: 0n, cap: cap(0n, 0n, 1n) },
    ];
    for (const add of growths) {
      expect(outcome(() => adjustReservation(p, none, add))).toBe(
        "BaseRateNotAccepted: the provider does not accept new governance-base reservations",
      );
    }
  });

  it("a total above its type is an overflow naming the total", () => {
    const full = provider([U64_MAX, U128_MAX, U128_MAX, U128_MAX]);
    expect(outcome(() => adjustReservation(full, none, { streams: 1n, cap: cap(0n, 0n, 0n) }))).toBe("ArithmeticOverflow: reserved_streams overflows");
    expect(outcome(() => adjustReservation(full, none, { streams: 0n, cap: cap(1n, 0n, 0n) }))).toBe("ArithmeticOverflow: retained_bytes overflows");
    expect(outcome(() => adjustReservation(full, none, { streams: 0n, cap: cap(0n, 1n, 0n) }))).toBe("ArithmeticOverflow: append_bytes_per_sec overflows");
    expect(outcome(() => adjustReservation(full, none, { streams: 0n, cap: cap(0n, 0n, 1n) }))).toBe("ArithmeticOverflow: delivered_bytes_per_sec overflows");
  });

  it("releasing more than is reserved is an overflow, never a negative total", () => {
    const p = provider([1n, 100n, 10n, 20n]);
    expect(outcome(() => adjustReservation(p, { streams: 2n, cap: cap(0n, 0n, 0n) }, none))).toMatch(/^ArithmeticOverflow: reserved_streams overflows$/);
    expect(outcome(() => adjustReservation(p, { streams: 0n, cap: cap(101n, 0n, 0n) }, none))).toMatch(/^ArithmeticOverflow: retained_bytes overflows$/);
    expect(outcome(() => adjustReservation(p, { streams: 0n, cap: cap(0n, 11n, 0n) }, none))).toMatch(/^ArithmeticOverflow: append_bytes_per_sec overflows$/);
    expect(outcome(() => adjustReservation(p, { streams: 0n, cap: cap(0n, 0n, 21n) }, none))).toMatch(/^ArithmeticOverflow: delivered_bytes_per_sec overflows$/);
  });
});
