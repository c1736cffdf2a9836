// Literal-address policy of CIP-39 §4.3 rule 5, on hosts as the WHATWG URL parser serializes
// them: IPv4 as dotted decimal, IPv6 as a bracketed hex literal. Addresses are integers
// (IPv4: number < 2^32, IPv6: bigint < 2^128) so range tests are exact prefix comparisons.

interface Ipv4Range {
  readonly base: number;
  readonly prefix: number;
  readonly text: string;
}
interface Ipv6Range {
  readonly base: bigint;
  readonly prefix: number;
  readonly text: string;
}

function v4(text: string): Ipv4Range {
  const [addr, len] = text.split("/") as [string, string];
  return { base: parseIpv4Dotted(addr)!, prefix: Number(len), text };
}
function v6(text: string): Ipv6Range {
  const [addr, len] = text.split("/") as [string, string];
  return { base: parseIpv6(addr)!, prefix: Number(len), text };
}

// §4.3 rule 5: the IPv4 ranges an endpoint literal MUST NOT fall in.
const FORBIDDEN_IPV4: readonly Ipv4Range[] = [
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.0.0.0/24",
  "192.0.2.0/24",
  "192.88.99.0/24",
  "192.168.0.0/16",
  "198.18.0.0/15",
  "198.51.100.0/24",
  "203.0.113.0/24",
  "224.0.0.0/3",
].map(v4);

// §4.3 rule 5: IPv6 literals must be inside 2000::/3 and outside these.
const GLOBAL_UNICAST: Ipv6Range = v6("2000::/3");
const FORBIDDEN_IPV6: readonly Ipv6Range[] = [
  "2001::/23",
  "2001:db8::/32",
  "2002::/16",
  "3ffe::/16",
  "3fff::/20",
].map(v6);

function inIpv4Range(addr: number, range: Ipv4Range): boolean {
  const shift = 32 - range.prefix;
  return Math.floor(addr / 2 ** shift) === Math.floor(range.base / 2 ** shift);
}
function inIpv6Range(addr: bigint, range: Ipv6Range): boolean {
  const shift = BigInt(128 - range.prefix);
  return addr >> shift === range.base >> shift;
}

/** Strict dotted-quad decimal ("a.b.c.d", each 0–255, no leading zeros): the WHATWG serialization. */
export function parseIpv4Dotted(text: string): number | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  let value = 0;
  for (const part of parts) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(part)) return null;
    const octet = Number(part);
    if (octet > 255) return null;
    value = value * 256 + octet;
  }
  return value;
}

function parseHexGroups(text: string): number[] | null {
  if (text === "") return [];
  const groups: number[] = [];
  const pieces = text.split(":");
  for (let i = 0; i < pieces.length; i++) {
    const piece = pieces[i]!;
    if (i === pieces.length - 1 && piece.includes(".")) {
      const v4addr = parseIpv4Dotted(piece);
      if (v4addr === null) return null;
      groups.push(Math.floor(v4addr / 65536), v4addr % 65536);
    } else if (/^[0-9a-fA-F]{1,4}$/.test(piece)) {
      groups.push(parseInt(piece, 16));
    } else {
      return null;
    }
  }
  return groups;
}

/** RFC 4291 §2.2 textual IPv6 address (no brackets, no zone) to a 128-bit integer. */
export function parseIpv6(text: string): bigint | null {
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const head = parseHexGroups(halves[0]!);
  const tail = halves.length === 2 ? parseHexGroups(halves[1]!) : [];
  if (head === null || tail === null) return null;
  // An embedded IPv4 part is only allowed at the very end of the address.
  if (halves.length === 2 && halves[0]!.includes(".")) return null;
  const explicit = head.length + tail.length;
  if (halves.length === 1 ? explicit !== 8 : explicit > 7) return null;
  const groups = [...head, ...new Array<number>(8 - explicit).fill(0), ...tail];
  let value = 0n;
  for (const g of groups) value = (value << 16n) | BigInt(g);
  return value;
}

export function formatIpv4(addr: number): string {
  return [24, 16, 8, 0].map((s) => Math.floor(addr / 2 ** s) % 256).join(".");
}

/** §4.3 rule 5: the forbidden range an IPv4 literal falls in, or null if it is admissible. */
export function forbiddenIpv4Range(addr: number): string | null {
  return FORBIDDEN_IPV4.find((r) => inIpv4Range(addr, r))?.text ?? null;
}

/** §4.3 rule 5: why an IPv6 literal is inadmissible, or null if it is admissible. */
export function ipv6Violation(addr: bigint): string | null {
  if (!inIpv6Range(addr, GLOBAL_UNICAST)) return "outside 2000::/3";
  const range = FORBIDDEN_IPV6.find((r) => inIpv6Range(addr, r));
  return range === undefined ? null : `in ${range.text}`;
}
