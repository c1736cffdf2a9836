// Who a client is, for every per-client bound (docs/node.md "Limits and errors"): the key its
// requests are counted under, from its connection's remote address. A client is not one address:
// - every loopback address (127.0.0.0/8, ::1) is one client, the machine itself: a process there
//   may bind any of them, and would otherwise take a share of every bound per address;
// - an IPv6 address is its /64, the block a network hands one host (which may pick any address in
//   it);
// - an IPv4-mapped IPv6 address (a dual-stack socket's `::ffff:a.b.c.d`) is that IPv4 address.
// Any other IPv4 address is a client of its own. The rate limits, the subscriptions, the mining
// queue and the unread answers all count by this key (src/node/server.ts), never by the address.
import { isIP } from "node:net";

/** The one client every loopback address is. */
export const LOOPBACK_CLIENT = "loopback";

export function clientKey(address: string): string {
  let a = address.toLowerCase();
  const zone = a.indexOf("%");
  if (zone >= 0) a = a.slice(0, zone);
  if (isIP(a) === 6) {
    const g = ipv6Groups(a);
    const zeros = (n: number) => g.slice(0, n).every((x) => x === 0);
    if (zeros(5) && g[5] === 0xffff) a = [g[6]! >> 8, g[6]! & 255, g[7]! >> 8, g[7]! & 255].join(".");
    else if (zeros(7) && g[7] === 1) return LOOPBACK_CLIENT;
    else return `${g.slice(0, 4).map((x) => x.toString(16)).join(":")}::/64`;
  }
  if (isIP(a) === 4) return a.startsWith("127.") ? LOOPBACK_CLIENT : a;
  // No address (a connection already gone): one key for all such.
  return a;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a dotted IPv4 tail as two groups). */
function ipv6Groups(address: string): number[] {
  let a = address;
  if (a.includes(".")) {
    const colon = a.lastIndexOf(":");
    const [b0, b1, b2, b3] = a.slice(colon + 1).split(".").map(Number) as [number, number, number, number];
    a = `${a.slice(0, colon + 1)}${((b0 << 8) | b1).toString(16)}:${((b2 << 8) | b3).toString(16)}`;
  }
  const [head, tail] = a.split("::") as [string, string | undefined];
  const front = head === "" ? [] : head.split(":");
  const back = tail === undefined || tail === "" ? [] : tail.split(":");
  const middle = tail === undefined ? [] : Array<string>(8 - front.length - back.length).fill("0");
  return [...front, ...middle, ...back].map((x) => parseInt(x, 16));
}
