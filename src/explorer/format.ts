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
