// How values are shown: the node writes integers as decimal strings and bytes as 0x hex
// (docs/guides/run-a-devnet.md); the page keeps them exact and only groups digits and shortens hashes.

/** "1000000" → "1,000,000" (a decimal string of any size, never through a float). */
export function amount(text: string): string {
  return /^[0-9]+$/.test(text) ? text.replace(/\B(?=(\d{3})+(?!\d))/g, ",") : text;
}

/** 0x1234…cdef: enough to tell hashes apart in a list; the full value is in the title. */
export function short(hex: string): string {
  return hex.length > 18 ? `${hex.slice(0, 10)}…${hex.slice(-6)}` : hex;
}

/** A block timestamp (seconds since the Unix epoch, decimal) as UTC. */
export function time(seconds: string): string {
  const ms = Number(seconds) * 1000;
  return Number.isFinite(ms) && ms <= 8.64e15 ? new Date(ms).toISOString().replace(".000Z", "Z") : seconds;
}

/** An amount of the chain's currency: nano-CBY, grouped ("80,000 nano-CBY"). */
export const cby = (text: string): string => `${amount(text)} nano-CBY`;

/** How long a stream's escrow pays its rent, from its record (CIP-39 §6.1). */
export type Funding =
  | { kind: "until"; block: string }
  | { kind: "unbounded" }
  | { kind: "suspended"; since: string; graceUntil: string }
  | { kind: "ended" };

/**
 * §6.1: a settlement at H pays `rate` per block from `last_settled_block`; when the escrow falls
 * short it pays `escrow / rate` whole blocks. So an Active stream's escrow pays through block
 * `last_settled_block + escrow / rate` (exact: decimal strings as BigInt, never floats); a rate of
 * 0 never runs out. A Suspended stream shows its pinned grace deadline; a closed or expired one
 * pays nothing more.
 */
export function funding(record: Record<string, unknown>): Funding {
  const status = String(record["status"]);
  if (status === "Suspended") return { kind: "suspended", since: String(record["suspended_at_block"]), graceUntil: String(record["suspension_grace_deadline_block"]) };
  if (status !== "Active") return { kind: "ended" };
  const rate = BigInt(String(record["rate_per_block"]));
  if (rate === 0n) return { kind: "unbounded" };
  return { kind: "until", block: (BigInt(String(record["last_settled_block"])) + BigInt(String(record["escrow_balance"])) / rate).toString() };
}
