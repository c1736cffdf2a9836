// CIP-39 §4.3 provider endpoint admission for RegisterProvider / UpdateProvider. Consensus-
// critical: every conforming implementation must accept and reject the identical URI set.
// Rule numbers are the §4.3 algorithm's; the choices where §4.3 is silent are recorded in
// D-0036, D-0037, D-0038, D-0039 and D-0017.
import type { ProviderEndpointTransportV1, ProviderEndpointV1 } from "../codec/types.js";
import { forbiddenIpv4Range, formatIpv4, ipv6Violation, parseIpv4Dotted, parseIpv6 } from "./ip.js";

export type AdmissionRule = 1 | 2 | 3 | 4 | 5;

export type UriAdmission = { ok: true } | { ok: false; rule: AdmissionRule; reason: string };

/** `index` is the failing endpoint's position, or -1 when the list itself fails rule 1. */
export type EndpointsAdmission = { ok: true } | { ok: false; rule: AdmissionRule; index: number; reason: string };

export interface EndpointBounds {
  maxEndpoints: number; // cbqs.max_provider_endpoints
  maxUriBytes: number; // cbqs.max_provider_endpoint_uri_bytes
}

const SCHEME: Record<ProviderEndpointTransportV1, { prefix: string; protocol: string }> = {
  WebSocketTls: { prefix: "wss://", protocol: "wss:" },
  Https: { prefix: "https://", protocol: "https:" },
};

const reject = (rule: AdmissionRule, reason: string): UriAdmission => ({ ok: false, rule, reason });

/** ASCII lowercase only: §4.3 comparisons are ASCII-case-insensitive, never Unicode-folded. */
function asciiLower(text: string): string {
  return text.replace(/[A-Z]/g, (c) => String.fromCharCode(c.charCodeAt(0) + 32));
}

/** Rule 1 on one URI's raw bytes: well-formed UTF-8, nonempty, bounded, and (§4.3 first
 *  paragraph) no ASCII control or whitespace byte. Checked before any parsing because the
 *  WHATWG parser silently strips tab/LF/CR and trims leading/trailing C0 controls and spaces. */
function checkRawUri(uri: string, maxUriBytes: number): UriAdmission {
  // Every UTF-16 code unit costs at least one UTF-8 byte: bound the work before encoding.
  if (uri.length > maxUriBytes) return reject(1, `URI is more than ${maxUriBytes} bytes`);
  const encoded = Buffer.from(uri, "utf8");
  // An unpaired UTF-16 surrogate has no UTF-8 encoding; Buffer substitutes U+FFFD for it.
  if (encoded.toString("utf8") !== uri) return reject(1, "URI is not valid UTF-8 (unpaired surrogate)");
  if (encoded.length === 0) return reject(1, "URI is empty");
  if (encoded.length > maxUriBytes) return reject(1, `URI is ${encoded.length} bytes, more than ${maxUriBytes}`);
  for (let i = 0; i < uri.length; i++) {
    const c = uri.charCodeAt(i);
    if (c <= 0x20 || c === 0x7f) {
      return reject(1, `URI contains ASCII control or whitespace byte 0x${c.toString(16).padStart(2, "0")}`);
    }
  }
  return { ok: true };
}

/** Rule 5 on a parsed host (WHATWG serialization: lowercase, IDNA-mapped, IPv4 canonicalized). */
function checkHost(hostname: string): UriAdmission {
  if (hostname === "") return reject(5, "URI has no host");
  if (hostname.startsWith("[")) {
    const addr = parseIpv6(hostname.slice(1, -1));
    if (addr === null) return reject(5, `unparseable IPv6 literal ${hostname}`);
    const violation = ipv6Violation(addr);
    return violation === null ? { ok: true } : reject(5, `IPv6 literal ${hostname} is ${violation}`);
  }
  // The WHATWG host parser turns every host whose last label is numeric into an IPv4 address
  // (or fails), so a dotted quad here is always an IPv4 host, never a domain.
  const ipv4 = parseIpv4Dotted(hostname);
  if (ipv4 !== null) {
    const range = forbiddenIpv4Range(ipv4);
    return range === null ? { ok: true } : reject(5, `IPv4 literal ${formatIpv4(ipv4)} is in ${range}`);
  }
  const name = asciiLower(hostname);
  const stripped = name.endsWith(".") ? name.slice(0, -1) : name; // at most ONE trailing dot
  const finalLabel = stripped.slice(stripped.lastIndexOf(".") + 1);
  if (finalLabel === "localhost") return reject(5, `domain ${hostname} is in the localhost namespace`);
  return { ok: true };
}

/** §4.3 admission of one URI under its transport (rule 1's per-URI part, then rules 2–5). */
export function admitEndpointUri(
  transport: ProviderEndpointTransportV1,
  uri: string,
  maxUriBytes: number,
): UriAdmission {
  const scheme = SCHEME[transport];
  if (scheme === undefined) throw new TypeError(`unknown endpoint transport ${String(transport)}`);

  const raw = checkRawUri(uri, maxUriBytes);
  if (!raw.ok) return raw;

  // Rule 2: scheme prefix, ASCII-case-insensitive.
  if (asciiLower(uri.slice(0, scheme.prefix.length)) !== scheme.prefix) {
    return reject(2, `URI does not begin with ${scheme.prefix} as transport ${transport} requires`);
  }

  // Rule 3: WHATWG basic URL parser.
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return reject(3, "URI does not parse as a WHATWG URL");
  }
  if (url.protocol !== scheme.protocol) return reject(3, `parsed scheme ${url.protocol} is not ${scheme.protocol}`);
  // A cannot-be-a-base URL has an opaque path, which never starts with "/".
  if (!url.pathname.startsWith("/")) return reject(3, "URL is cannot-be-a-base");
  if (url.username !== "" || url.password !== "") return reject(3, "URL carries userinfo");

  // Rule 4: raw authority (after the prefix, up to the first "/", "?", "#" or the end) has no "@".
  const rest = uri.slice(scheme.prefix.length);
  const end = rest.search(/[/?#]/);
  const authority = end === -1 ? rest : rest.slice(0, end);
  if (authority.includes("@")) return reject(4, "raw authority contains @");

  return checkHost(url.hostname);
}

/** §4.3 admission of a RegisterProvider / UpdateProvider endpoint list; first failure wins.
 *  Order: rule 1 on the whole list (count, then each URI's raw bytes in index order), then
 *  rules 2–5 for each endpoint in index order. */
export function admitEndpoints(endpoints: readonly ProviderEndpointV1[], bounds: EndpointBounds): EndpointsAdmission {
  if (endpoints.length === 0) return { ok: false, rule: 1, index: -1, reason: "endpoint list is empty" };
  if (endpoints.length > bounds.maxEndpoints) {
    return {
      ok: false,
      rule: 1,
      index: -1,
      reason: `endpoint list has ${endpoints.length} entries, more than ${bounds.maxEndpoints}`,
    };
  }
  for (let index = 0; index < endpoints.length; index++) {
    const raw = checkRawUri(endpoints[index]!.uri, bounds.maxUriBytes);
    if (!raw.ok) return { ...raw, index };
  }
  for (let index = 0; index < endpoints.length; index++) {
    const { transport, uri } = endpoints[index]!;
    const result = admitEndpointUri(transport, uri, bounds.maxUriBytes);
    if (!result.ok) return { ...result, index };
  }
  return { ok: true };
}
