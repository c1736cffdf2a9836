import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { admitEndpointUri, admitEndpoints, type AdmissionRule } from "../../src/admission/endpoint.js";
import type { ProviderEndpointTransportV1 } from "../../src/codec/types.js";

const MAX_URI_BYTES = 2048; // §18 default of cbqs.max_provider_endpoint_uri_bytes
const BOUNDS = { maxEndpoints: 4, maxUriBytes: MAX_URI_BYTES }; // §18 defaults

type Vector = [ProviderEndpointTransportV1, string];
type RejectVector = [ProviderEndpointTransportV1, string, AdmissionRule];

function expectAccept([transport, uri]: Vector): void {
  expect(admitEndpointUri(transport, uri, MAX_URI_BYTES), `${transport} ${uri}`).toEqual({ ok: true });
}
function expectReject([transport, uri, rule]: RejectVector): void {
  const result = admitEndpointUri(transport, uri, MAX_URI_BYTES);
  expect(result.ok, `${transport} ${JSON.stringify(uri)} should be rejected`).toBe(false);
  if (!result.ok) expect(result.rule, `${transport} ${JSON.stringify(uri)}: ${result.reason}`).toBe(rule);
}

// The normative vectors printed in CIP-39 §4.3, with the rule the text names for each.
const SPEC_ACCEPT: Vector[] = [
  ["WebSocketTls", "wss://cbqs.example/stream"],
  ["WebSocketTls", "wss://[2606:4700:4700::1111]/stream"],
  ["Https", "https://provider.example"],
  ["Https", "https://8.8.8.8/health"],
];
const SPEC_REJECT: RejectVector[] = [
  ["WebSocketTls", "https://cbqs.example/stream", 2],
  ["Https", "wss://cbqs.example/stream", 2],
  ["Https", "https://user:secret@cbqs.example/stream", 3],
  ["Https", "https://user@cbqs.example/stream", 3],
  ["Https", "https://@cbqs.example/stream", 4],
  ["Https", "https://localhost/stream", 5],
  ["Https", "https://localhost./stream", 5],
  ["Https", "https://Api.LocalHost./stream", 5],
  ["Https", "https://0.0.0.0/stream", 5],
  ["Https", "https://127.0.0.1/stream", 5],
  ["Https", "https://2130706433/stream", 5],
  ["Https", "https://10.0.0.1/stream", 5],
  ["Https", "https://172.16.0.1/stream", 5],
  ["Https", "https://192.168.0.1/stream", 5],
  ["Https", "https://100.64.0.1/stream", 5],
  ["Https", "https://169.254.169.254/metadata", 5],
  ["Https", "https://192.0.2.1/stream", 5],
  ["Https", "https://198.18.0.1/stream", 5],
  ["Https", "https://224.0.0.1/stream", 5],
  ["Https", "https://240.0.0.1/stream", 5],
  ["Https", "https://[::]/stream", 5],
  ["Https", "https://[::1]/stream", 5],
  ["Https", "https://[::ffff:127.0.0.1]/stream", 5],
  ["Https", "https://[fd00::1]/stream", 5],
  ["Https", "https://[fe80::1]/stream", 5],
  ["Https", "https://[ff02::1]/stream", 5],
  ["Https", "https://[2001:db8::1]/stream", 5],
];

describe("CIP-39 §4.3 normative endpoint vectors", () => {
  it.each(SPEC_ACCEPT)("§4.3 ACCEPT %s %s", (transport, uri) => expectAccept([transport, uri]));
  it.each(SPEC_REJECT)("§4.3 REJECT %s %s (rule %i)", (transport, uri, rule) => expectReject([transport, uri, rule]));
});

describe("CIP-39 §4.3 rule 1: list and raw URI shape", () => {
  const ok = { transport: "Https" as const, uri: "https://provider.example/" };

  it("§4.3 rule 1 rejects an empty list and a list longer than cbqs.max_provider_endpoints", () => {
    expect(admitEndpoints([], BOUNDS)).toMatchObject({ ok: false, rule: 1, index: -1 });
    expect(admitEndpoints([ok, ok, ok, ok], BOUNDS)).toEqual({ ok: true });
    expect(admitEndpoints([ok, ok, ok, ok, ok], BOUNDS)).toMatchObject({ ok: false, rule: 1, index: -1 });
    expect(admitEndpoints([ok, ok], { maxEndpoints: 1, maxUriBytes: 2048 })).toMatchObject({ ok: false, rule: 1 });
  });

  it("§4.3 rule 1 bounds the URI in UTF-8 bytes, not characters", () => {
    const base = "https://provider.example/";
    const fill = MAX_URI_BYTES - base.length;
    const exact = base + "é".repeat(Math.floor(fill / 2)) + "a".repeat(fill % 2);
    expect(Buffer.byteLength(exact)).toBe(MAX_URI_BYTES);
    expect(exact.length).toBeLessThan(MAX_URI_BYTES);
    expectAccept(["Https", exact]);
    expectReject(["Https", exact + "c", 1]);
  });

  it("§4.3 rule 1 rejects ASCII control and whitespace bytes the WHATWG parser would strip or trim", () => {
    const stripped = ["https://a\tb.example/", "https://ab.example/\n", "https://ab.exa\rmple/", " https://ab.example/"];
    for (const uri of stripped) {
      expect(() => new URL(uri)).not.toThrow(); // the parser alone would admit these
      expectReject(["Https", uri, 1]);
    }
    for (const c of [0x00, 0x01, 0x0b, 0x0c, 0x1f, 0x20, 0x7f]) {
      expectReject(["Https", `https://provider.example/a${String.fromCharCode(c)}b`, 1]);
    }
    expectReject(["Https", "", 1]);
  });

  it("§4.3 rule 1 rejects a URI that is not valid Unicode (unpaired surrogate)", () => {
    expectReject(["Https", "https://provider.example/\ud800", 1]);
    expectReject(["Https", "https://provider.example/\udc00x", 1]);
    expectAccept(["Https", "https://provider.example/\ud83d\ude00"]);
  });

  it("§4.3 rule 1 is checked for every URI before rules 2–5 of any endpoint", () => {
    const overlong = { transport: "Https" as const, uri: "https://provider.example/" + "a".repeat(MAX_URI_BYTES) };
    const localhost = { transport: "Https" as const, uri: "https://localhost/" };
    expect(admitEndpoints([localhost, overlong], BOUNDS)).toMatchObject({ ok: false, rule: 1, index: 1 });
    expect(admitEndpoints([ok, localhost, ok], BOUNDS)).toMatchObject({ ok: false, rule: 5, index: 1 });
  });
});

describe("CIP-39 §4.3 rule 2: scheme prefix", () => {
  it("§4.3 rule 2 compares the prefix ASCII-case-insensitively", () => {
    expectAccept(["Https", "HTTPS://provider.example/"]);
    expectAccept(["WebSocketTls", "WsS://provider.example/"]);
    expectReject(["Https", "http://provider.example/", 2]);
    expectReject(["Https", "https:/provider.example/", 2]);
    expectReject(["Https", "https:\\\\provider.example/", 2]);
    expectReject(["WebSocketTls", "ws://provider.example/", 2]);
    // U+017F LATIN SMALL LETTER LONG S upper-cases to "S" but is not ASCII.
    expectReject(["Https", "http\u017f://provider.example/", 2]);
  });

  it("§4.3 rule 2 unknown transport tags are a decoding error, not an admission result", () => {
    expect(() => admitEndpointUri("Tcp" as ProviderEndpointTransportV1, "https://x.example/", 2048)).toThrow(TypeError);
  });
});

describe("CIP-39 §4.3 rule 3: WHATWG parse, scheme, userinfo", () => {
  it("§4.3 rule 3 rejects URIs the WHATWG basic URL parser rejects", () => {
    for (const uri of [
      "https://",
      "https://:443/",
      "https://999.1.1.1/",
      "https://1.2.3.4.5/",
      "https://a.b.c.1/",
      "https://foo.09/",
      "https://[fe80::1%25eth0]/",
      "https://[1:2:3:4:5:6:7:8:9]/",
      "https://exa%00mple/",
      "https://xn--a.example/",
      "https://provider.example:65536/",
      "https://user%40provider.example/", // percent-decoded "@" is a forbidden host code point
      "https://provider.example%3A443/",
    ]) {
      expectReject(["Https", uri, 3]);
    }
  });

  it("§4.3 rule 3 rejects a nonempty username or password, even with the other part empty", () => {
    expectReject(["Https", "https://user:@provider.example/", 3]);
    expectReject(["Https", "https://:pw@provider.example/", 3]);
    expectReject(["WebSocketTls", "wss://a:b@provider.example/", 3]);
  });
});

describe("CIP-39 §4.3 rule 4: raw authority", () => {
  it("§4.3 rule 4 rejects an empty userinfo the parser normalizes away", () => {
    expectReject(["Https", "https://@provider.example/", 4]);
    expectReject(["Https", "https://:@provider.example/", 4]);
    expectReject(["WebSocketTls", "wss://@provider.example", 4]);
  });

  it("§4.3 rule 4 the raw authority ends only at '/', '?', '#': a backslash does not end it", () => {
    // WHATWG treats "\" like "/" in special URLs, so the parser sees host "provider.example" and
    // path "/@x/"; the raw-byte rule still sees "@" before the first "/" (D-0017).
    expect(new URL("https://provider.example\\@x/").hostname).toBe("provider.example");
    expectReject(["Https", "https://provider.example\\@x/", 4]);
    expectReject(["Https", "https://\\@provider.example/", 4]);
    expectAccept(["Https", "https://provider.example\\path"]);
  });

  it("§4.3 rule 4 an '@' after the authority is fine", () => {
    expectAccept(["WebSocketTls", "wss://provider.example/?q=@a"]);
    expectAccept(["Https", "https://provider.example?@a"]);
    expectAccept(["Https", "https://provider.example#@a"]);
    expectAccept(["Https", "https://provider.example/@user"]);
  });

  it("§4.3 rule 4 literal reading: 'https:///@host' has an empty raw authority (pinned, D-0017)", () => {
    // The byte right after the "https://" prefix is "/", so the defined byte range is empty; the
    // WHATWG parser skips the extra slashes and normalizes the empty userinfo away (rule 3 passes).
    expect(new URL("https:///:@provider.example/").href).toBe("https://provider.example/");
    expectAccept(["Https", "https:///@provider.example/stream"]);
    expectAccept(["Https", "https:///:@provider.example/stream"]);
    expectAccept(["WebSocketTls", "wss:////@provider.example/stream"]);
    // A non-empty userinfo there is still caught by rule 3.
    expectReject(["Https", "https:///user@provider.example/stream", 3]);
  });
});

describe("CIP-39 §4.3 rule 5: localhost namespace", () => {
  it("§4.3 rule 5 rejects localhost and *.localhost after parser normalization", () => {
    for (const uri of [
      "https://LOCALHOST/",
      "https://localhost:8443/",
      "https://.localhost/",
      "https://a.b.localhost/",
      "https://localhost%2e/",
      "https://local%68ost/",
      "https://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54/", // fullwidth, IDNA-mapped
      "https://localhost\u3002/", // ideographic full stop maps to "."
      "https://lo\u00adcalhost/", // soft hyphen is IDNA-ignored
    ]) {
      expectReject(["Https", uri, 5]);
    }
  });

  it("§4.3 rule 5 strips at most one trailing dot, and other labels are not the namespace", () => {
    expectAccept(["Https", "https://localhost../"]); // final label after one strip is empty
    expectAccept(["Https", "https://foo.localhost../"]);
    expectAccept(["Https", "https://localhost.example/"]);
    expectAccept(["Https", "https://mylocalhost/"]);
    expectAccept(["Https", "https://localhost-1.example/"]);
    expectAccept(["Https", "https://xn--lcalhost-9za/"]); // a different label, not "localhost"
    expectAccept(["Https", "https://\u00e9.example/"]); // IDNA to xn--9ca.example
  });
});

describe("CIP-39 §4.3 rule 5: IPv4 literals", () => {
  it("§4.3 rule 5 judges the parser-canonicalized address (decimal, hex, octal, short forms)", () => {
    const aliases = ["2130706433", "0x7f.1", "127.1", "0177.0.0.1", "0x7f000001", "0", "0xa.1", "3232235521", "127.0.0.1."];
    for (const host of [...aliases, "\uff11\uff12\uff17.0.0.1"]) {
      expectReject(["Https", `https://${host}/`, 5]);
    }
    expectAccept(["Https", "https://134744072/"]); // 8.8.8.8
    expectAccept(["Https", "https://0x8.0x8.0x8.0x8/"]);
    expectAccept(["Https", "https://\uff18.\uff18.\uff18.\uff18/"]); // fullwidth digits map to 8.8.8.8
  });

  it("§4.3 rule 5 range boundaries", () => {
    const accept = [
      "1.1.1.1",
      "9.255.255.255",
      "11.0.0.0",
      "100.63.255.255",
      "100.128.0.0",
      "126.255.255.255",
      "128.0.0.0",
      "169.253.255.255",
      "169.255.0.0",
      "172.15.255.255",
      "172.32.0.0",
      "192.0.1.1",
      "192.0.3.0",
      "192.88.98.255",
      "192.88.100.0",
      "192.167.255.255",
      "192.169.0.0",
      "198.17.255.255",
      "198.20.0.0",
      "198.51.99.255",
      "198.51.101.0",
      "203.0.112.255",
      "203.0.114.0",
      "223.255.255.255",
    ];
    const reject = [
      "0.255.255.255",
      "10.255.255.255",
      "100.64.0.0",
      "100.127.255.255",
      "127.255.255.255",
      "169.254.0.0",
      "172.16.0.0",
      "172.31.255.255",
      "192.0.0.0",
      "192.0.0.255",
      "192.0.2.255",
      "192.88.99.0",
      "192.168.255.255",
      "198.18.0.0",
      "198.19.255.255",
      "198.51.100.0",
      "203.0.113.255",
      "224.0.0.0",
      "239.255.255.255",
      "255.255.255.255",
    ];
    for (const a of accept) expectAccept(["Https", `https://${a}/`]);
    for (const a of reject) expectReject(["Https", `https://${a}/`, 5]);
  });

  it("§4.3 rule 5 every textual form of one IPv4 address gets the same verdict (property)", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 32 - 1 }), (n) => {
        const dotted = [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join(".");
        const verdict = admitEndpointUri("Https", `https://${dotted}/`, MAX_URI_BYTES);
        expect(admitEndpointUri("Https", `https://${n}/`, MAX_URI_BYTES)).toEqual(verdict);
        expect(admitEndpointUri("Https", `https://0x${n.toString(16)}/`, MAX_URI_BYTES)).toEqual(verdict);
      }),
      { numRuns: 300 },
    );
  });
});

describe("CIP-39 §4.3 rule 5: IPv6 literals", () => {
  it("§4.3 rule 5 admits only 2000::/3 minus the listed documentation/transition ranges", () => {
    const accept = ["2001:200::1", "2001:4860::8888", "2003::1", "2400:cb00::1", "3ffd:ffff::1", "3fff:1000::1", "2606:4700::1"];
    const reject = [
      "2001::1",
      "2001:1ff:ffff::1",
      "2001:db8::",
      "2001:DB8:ffff::1",
      "2002::1",
      "2002:ffff::1",
      "3ffe::1",
      "3fff::1",
      "3fff:fff::1",
      "4000::1",
      "1fff:ffff::1",
      "::ffff:8.8.8.8",
      "64:ff9b::808:808",
      "::8.8.8.8",
      "fc00::1",
      "ff0e::1",
    ];
    for (const a of accept) expectAccept(["Https", `https://[${a}]:443/`]);
    for (const a of reject) expectReject(["Https", `https://[${a}]/`, 5]);
  });
});

describe("CIP-39 §4.3 admission never throws on arbitrary input", () => {
  it("§4.3 total over arbitrary strings under both transports (property)", () => {
    const prefixed = fc.tuple(fc.constantFrom("https://", "wss://", "HTTPS://", ""), fc.string({ unit: "binary" }));
    fc.assert(
      fc.property(prefixed, fc.constantFrom<ProviderEndpointTransportV1>("Https", "WebSocketTls"), ([p, s], t) => {
        const result = admitEndpointUri(t, p + s, MAX_URI_BYTES);
        expect(typeof result.ok).toBe("boolean");
      }),
      { numRuns: 500 },
    );
  });
});
