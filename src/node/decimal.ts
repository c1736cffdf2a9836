// The one reader of every numeric query parameter (docs/guides/run-a-devnet.md "Numeric parameters"): since,
// until and limit of /replication, height of /mine. A value is ASCII decimal digits without sign,
// `+`, spaces, fraction or exponent, and without leading zeros ("0" itself is fine) — the form the
// node writes its own heights and cursors in (the scenario-format §1 output convention). A
// well-formed value above the parameter's maximum is refused, naming the parameter and its
// maximum, except for a parameter that clamps: `limit`, where CIP-16 §3.1 defers to CIP-5 §3.1's
// truncation and round-up (clamped into [min, max] whatever its number of digits).
import { badRequest } from "./errors.js";

export interface DecimalParam {
  name: string;
  /** What the number is, for the refusal: "a block height". */
  what: string;
  max: bigint;
  /** Clamp a value above `max` to `max`, below `min` to `min`, instead of refusing it. */
  clamp?: { min: bigint };
}

const FORM = /^(0|[1-9][0-9]*)$/;

export function parseDecimal(text: string, p: DecimalParam): bigint {
  if (!FORM.test(text)) {
    throw badRequest(`invalid_${p.name}`, `${p.name} must be ${p.what}: decimal digits without sign or leading zeros (got ${JSON.stringify(text.slice(0, 40))})`);
  }
  // Compared by length first: the query may carry thousands of digits (bounded only by the header size).
  const max = p.max.toString();
  const above = text.length > max.length || (text.length === max.length && text > max);
  if (p.clamp !== undefined) {
    if (above) return p.max;
    const n = BigInt(text);
    return n < p.clamp.min ? p.clamp.min : n;
  }
  if (above) throw badRequest(`invalid_${p.name}`, `${p.name} must be ${p.what} of at most ${max} (got ${text.length > 24 ? `${text.length} digits` : text})`);
  return BigInt(text);
}
