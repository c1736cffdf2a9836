// Who a client is to the node's per-client bounds (src/node/client-key.ts): every loopback address
// one client, an IPv6 client its /64, an IPv4-mapped address its IPv4 address.
import { describe, expect, it } from "vitest";
import { clientKey, LOOPBACK_CLIENT } from "../../src/node/client-key.js";
import { isLoopbackAddress, isLoopbackHost } from "../../src/node/guard.js";

describe("a client's key", () => {
  it("every loopback address, IPv4, IPv6 or IPv4-mapped, is the one loopback client", () => {
    for (const a of ["127.0.0.1", "127.0.0.2", "127.255.1.9", "::1", "0:0:0:0:0:0:0:1", "::0:1", "::ffff:127.0.0.3", "::FFFF:7f00:5"]) expect([a, clientKey(a)]).toEqual([a, LOOPBACK_CLIENT]);
  });

  it("an IPv6 client is its /64: any two addresses in one /64 are one client, in two /64s two", () => {
    expect(["fd00::2", "fd00::3", "FD00:0:0:0:1:2:3:4", "fd00::ffff:1.2.3.4", "fd00:0000:0000:0000::9%eth0"].map(clientKey)).toEqual(Array(5).fill("fd00:0:0:0::/64"));
    expect(["2001:db8:1:2:3:4:5:6", "2001:db8:1:2::1", "2001:db8:1:3::1"].map(clientKey)).toEqual(["2001:db8:1:2::/64", "2001:db8:1:2::/64", "2001:db8:1:3::/64"]);
    expect(["::", "1::", "::2"].map(clientKey)).toEqual(["0:0:0:0::/64", "1:0:0:0::/64", "0:0:0:0::/64"]);
  });

  it("an IPv4 address, mapped into IPv6 or not, is a client of its own", () => {
    expect(["192.0.2.2", "::ffff:192.0.2.2", "::ffff:c000:202", "192.0.2.3"].map(clientKey)).toEqual(["192.0.2.2", "192.0.2.2", "192.0.2.2", "192.0.2.3"]);
    // A connection already gone has no address: one key for all such.
    expect(clientKey("")).toBe("");
  });

  it("the loopback rule is the guard's: the dev seeds' loopback clients and a loopback --host", () => {
    for (const a of ["127.0.0.9", "::1", "::ffff:127.0.0.1", "0:0:0:0:0:0:0:1"]) expect([a, isLoopbackAddress(a)]).toEqual([a, true]);
    for (const a of ["192.0.2.2", "::ffff:192.0.2.2", "fd00::1", "::", "0.0.0.0", "127.1", ""]) expect([a, isLoopbackAddress(a)]).toEqual([a, false]);
    expect(["localhost", "[::1]", "127.0.0.1", "0.0.0.0", "::", "devbox.lan"].map(isLoopbackHost)).toEqual([true, true, true, false, false, false]);
  });
});
