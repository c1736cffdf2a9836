// §4.5 genesis base-rate schedule: built from the twelve frozen cbqs.base_rate.* values of §18.
import { echo } from "../bounds.js";
import { PARAMS, paramRow } from "../params.js";
import type { BaseRateClassV1, BaseRateScheduleV1, BaseRateSchedulesV1 } from "./types.js";

const CLASS_FIELDS = [
  "retained_unit_bytes",
  "retained_unit_rate_per_block",
  "throughput_unit_bytes_per_sec",
  "throughput_unit_rate_per_block",
  "delivered_unit_bytes_per_sec",
  "delivered_unit_rate_per_block",
] as const satisfies readonly (keyof BaseRateClassV1)[];

export class ScheduleParamError extends Error {
  override name = "ScheduleParamError";
}

/**
 * The genesis BaseRateScheduleV1: schedule_version 1, activates_at_block 0 (§4.5), class values
 * from `values` (parameter name -> value) or the §18 defaults. §18: each value is at least one
 * and at most its table Maximum.
 */
export function genesisBaseRateSchedule(values: Readonly<Record<string, bigint>> = {}): BaseRateScheduleV1 {
  for (const name of Object.keys(values)) {
    if (paramRow(name)?.class !== "base_rate") throw new ScheduleParamError(`${echo(name)} is not a cbqs.base_rate.* parameter`);
  }
  const cls = (prefix: "standard" | "fast"): BaseRateClassV1 => {
    const out = {} as BaseRateClassV1;
    for (const field of CLASS_FIELDS) {
      const name = `cbqs.base_rate.${prefix}.${field}`;
      const row = PARAMS.find((r) => r.name === name);
      if (!row) throw new ScheduleParamError(`§18 has no row ${name}`);
      const v = Object.hasOwn(values, name) ? values[name]! : row.default;
      if (v < 1n || v > row.maximum) {
        throw new ScheduleParamError(`${name} = ${v} is outside [1, ${row.maximum}] (§18)`);
      }
      out[field] = v;
    }
    return out;
  };
  return { format_version: 1, schedule_version: 1n, activates_at_block: 0n, standard: cls("standard"), fast: cls("fast") };
}

/** §4.5: the 0x03 record content at genesis — the genesis schedule active, `pending` absent. */
export function genesisBaseRateSchedules(values: Readonly<Record<string, bigint>> = {}): BaseRateSchedulesV1 {
  return { active: genesisBaseRateSchedule(values), pending: null };
}

/** §4.5 active_at(H): `pending` when present and H >= pending.activates_at_block, else `active`. */
export function activeScheduleAt(schedules: BaseRateSchedulesV1, height: bigint): BaseRateScheduleV1 {
  const { pending } = schedules;
  return pending !== null && height >= pending.activates_at_block ? pending : schedules.active;
}
