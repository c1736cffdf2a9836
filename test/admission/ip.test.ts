import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { forbiddenIpv4Range, ipv6Violation, parseIpv4Dotted, parseIpv6 } from "../../src/admission/ip.js";

describe("CIP-39 §4.3 rule 5 address parsing", () => {
  it("§4.3 parseIpv6 reads RFC 4291 text forms into 128 bits", () => {
    expect(parseIpv6("::")).toBe(0n);
    expect(parseIpv6("::1")).toBe(1n);
    expect(parseIpv6("2001:db8::1")).toBe((0x20010db8n << 96n) | 1n);
    expect(parseIpv6("1:2:3:4:5:6:7:8")).toBe(0x0001_0002_0003_0004_0005_0006_0007_0008n);
    expect(parseIpv6("1::8")).toBe((1n << 112n) | 8n);
    expect(parseIpv6("1:2:3:4:5:6:7::")).toBe(0x0001_0002_0003_0004_0005_0006_0007_0000n);
    expect(parseIpv6("::ffff:127.0.0.1")).toBe(0xffff_7f00_0001n);
    expect(parseIpv6("FFFF::")).toBe(0xffffn << 112n);
  });

  it("§4.3 parseIpv6 rejects malformed text", () => {
    for (const bad of ["", ":", ":1", "1:", ":::", "1::2::3", "1:2:3:4:5:6:7:8:9", "1:2:3:4:5:6:7", "12345::", "g::",
      "1:2:3:4:5:6:7:8::", "1.2.3.4::", "::1.2.3", "::256.1.1.1", "::1.2.3.4:5"]) {
      expect(parseIpv6(bad), bad).toBeNull();
    }
  });

  it("§4.3 parseIpv6 inverts the WHATWG IPv6 serializer (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }), (groups) => {
        const full = groups.map((g) => g.toString(16)).join(":");
        const serialized = new URL(`https://[${full}]/`).hostname.slice(1, -1);
        const expected = groups.reduce((acc, g) => (acc << 16n) | BigInt(g), 0n);
        expect(parseIpv6(serialized)).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });

  it("§4.3 parseIpv4Dotted accepts only the canonical dotted quad", () => {
    expect(parseIpv4Dotted("8.8.8.8")).toBe(0x08080808);
    expect(parseIpv4Dotted("255.255.255.255")).toBe(2 ** 32 - 1);
    for (const bad of ["1.2.3", "1.2.3.4.5", "01.2.3.4", "256.1.1.1", "1.2.3.x", "0x1.2.3.4", "1..2.3"]) {
      expect(parseIpv4Dotted(bad), bad).toBeNull();
    }
  });

  it("§4.3 range tables name the matching range", () => {
    expect(forbiddenIpv4Range(parseIpv4Dotted("172.20.1.1")!)).toBe("172.16.0.0/12");
    expect(forbiddenIpv4Range(parseIpv4Dotted("8.8.4.4")!)).toBeNull();
    expect(ipv6Violation(parseIpv6("2001:db8::5")!)).toBe("in 2001:db8::/32");
    expect(ipv6Violation(parseIpv6("fe80::1")!)).toBe("outside 2000::/3");
    expect(ipv6Violation(parseIpv6("2606:4700::1")!)).toBeNull();
  });
});
