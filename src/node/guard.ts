// Who may use the node (docs/spec/security-model.md): the checks every request passes before it
// is routed, and the CORS headers its answer carries. A devnet's writes are unauthenticated
// (envelopes carry no signature), so what keeps a web page the developer visits from using them
// is the browser's own rules, and these checks make the node rely on nothing else:
// - Host: an IP address, `localhost`, the node's --host, or a name given to --http-vhosts. A page
//   that reaches the node by DNS rebinding names the attacker's host, never one of these.
// - Origin: a request a browser sends for another site's page names that page's origin; it is
//   refused unless it is the node's own (`http://` + the Host it was sent to) or given to
//   --http-corsdomain.
// - Sec-Fetch-Site: a browser names no Origin on a page's no-cors GET (an <img>, a <script>, a
//   fetch with mode "no-cors"), whose answer the page cannot read but which still costs the node
//   and its rate budget; it does say where the request comes from. `cross-site` or `same-site`
//   (another port of the same host is the same site) without an allowed Origin is refused, but
//   for a link followed to the node (a top-level GET navigation: the user sees where it leads);
//   `same-origin` and `none` (an address typed, a bookmark) pass, and so do programs, which send
//   no such header.
// - Writes carry the X-Cbqs-Client header, which a page can send to another origin only after a
//   CORS preflight the node answers for --http-corsdomain origins alone: no "simple request" (a
//   form, a text/plain or bodiless POST) can write.
// - The dev seeds are served to loopback clients only, unless --expose-dev-seeds.
// Binding off loopback is the CLI's decision (src/cli/node.ts: --expose-devnet); isLoopbackHost
// is its rule.
import type { IncomingMessage } from "node:http";
import { isIP } from "node:net";
import { echo } from "../bounds.js";
import { clientKey, LOOPBACK_CLIENT } from "./client-key.js";
import { RequestError } from "./errors.js";

/** The header a devnet write must carry (any value); the client library sends it. */
export const CLIENT_HEADER = "x-cbqs-client";

/** What the request headers a preflight may ask for are (lower case, as browsers send them). */
const PREFLIGHT_HEADERS = `content-type, last-event-id, ${CLIENT_HEADER}`;

export interface GuardOptions {
  /** The address the node listens on (--host): a name there is a name it answers to. */
  host: string;
  /** Further Host names it answers to (--http-vhosts); "*" = any. */
  vhosts?: readonly string[];
  /** Origins whose pages may call it (--http-corsdomain); "*" = any. */
  corsOrigins?: readonly string[];
  /** GET /devnet/accounts to clients off loopback too (--expose-dev-seeds). */
  exposeDevSeeds?: boolean;
}

/** An IPv4 address in 127.0.0.0/8, ::1, or either as IPv4-mapped IPv6 (a dual-stack socket's): the one loopback client. */
export function isLoopbackAddress(address: string): boolean {
  return clientKey(address) === LOOPBACK_CLIENT;
}

/** A top-level navigation (a link followed, an address opened by another page): GET or HEAD of a document the user is shown. */
function isLinkFollowed(req: IncomingMessage): boolean {
  return (req.method === "GET" || req.method === "HEAD") && req.headers["sec-fetch-mode"] === "navigate" && req.headers["sec-fetch-dest"] === "document";
}

/** A --host that only this machine can reach: `localhost` or a loopback address. */
export function isLoopbackHost(host: string): boolean {
  const h = host.toLowerCase().replace(/^\[(.*)\]$/, "$1");
  return h === "localhost" || isLoopbackAddress(h);
}

/** The host part of a Host header value, lower case, without brackets or port; undefined when it has none. */
function hostName(value: string): string | undefined {
  const v = value.trim().toLowerCase();
  if (v.startsWith("[")) {
    const end = v.indexOf("]");
    return end < 0 ? undefined : v.slice(1, end);
  }
  const colon = v.lastIndexOf(":");
  return colon < 0 ? v : v.slice(0, colon);
}

export class RequestGuard {
  private readonly names: ReadonlySet<string>;
  private readonly anyHost: boolean;
  private readonly origins: ReadonlySet<string>;
  private readonly anyOrigin: boolean;
  private readonly exposeDevSeeds: boolean;

  constructor(options: GuardOptions) {
    const vhosts = (options.vhosts ?? []).map((h) => h.toLowerCase());
    this.anyHost = vhosts.includes("*");
    this.names = new Set(["localhost", options.host.toLowerCase(), ...vhosts]);
    const origins = (options.corsOrigins ?? []).map((o) => o.toLowerCase());
    this.anyOrigin = origins.includes("*");
    this.origins = new Set(origins);
    this.exposeDevSeeds = options.exposeDevSeeds === true;
  }

  /**
   * Refuses (403) a request sent to a Host the node does not answer to, or by a page of an origin
   * it does not allow (named by Origin, or by Sec-Fetch-Site when the browser names no Origin);
   * otherwise the CORS headers its answer carries (none unless the page's
   * origin is another one, allowed by --http-corsdomain).
   */
  admit(req: IncomingMessage): Record<string, string> {
    const host = req.headers.host;
    // No Host (HTTP/1.0): no browser sends such a request.
    if (host !== undefined && !this.anyHost) {
      const name = hostName(host);
      if (name === undefined || (isIP(name) === 0 && !this.names.has(name))) {
        throw new RequestError(
          403,
          "host_not_allowed",
          `this node does not answer to the Host ${JSON.stringify(echo(host, 120))}: only an IP address, localhost, its --host or a name given to --http-vhosts (a page reaching it under another name may be DNS rebinding)`,
        );
      }
    }
    const origin = req.headers.origin;
    if (origin === undefined) {
      const site = req.headers["sec-fetch-site"];
      if ((site === "cross-site" || site === "same-site") && !isLinkFollowed(req)) {
        throw new RequestError(
          403,
          "origin_not_allowed",
          `a page of another origin may not call this node (its browser says Sec-Fetch-Site: ${site} and names no Origin): only its own pages, an address typed or bookmarked, and pages of origins given to --http-corsdomain (with CORS) may`,
        );
      }
      return {};
    }
    if (host !== undefined && origin.toLowerCase() === `http://${host.toLowerCase()}`) return {};
    if (!this.anyOrigin && !this.origins.has(origin.toLowerCase())) {
      throw new RequestError(403, "origin_not_allowed", `pages of ${JSON.stringify(echo(origin, 120))} may not call this node: only its own pages and origins given to --http-corsdomain may`);
    }
    return { "access-control-allow-origin": origin, "access-control-expose-headers": "retry-after", vary: "origin" };
  }

  /** A preflight's answer headers, for an admitted request: what may be sent, for `allow` (the path's methods). */
  preflight(cors: Record<string, string>, allow: string): Record<string, string> {
    if (cors["access-control-allow-origin"] === undefined) return { allow };
    return { ...cors, "access-control-allow-methods": allow, "access-control-allow-headers": PREFLIGHT_HEADERS, "access-control-max-age": "600", allow };
  }

  /** A devnet write without X-Cbqs-Client: refused, whoever sends it. */
  checkWrite(req: IncomingMessage, path: string): void {
    if (req.headers[CLIENT_HEADER] !== undefined) return;
    throw new RequestError(
      403,
      "missing_client_header",
      `${echo(path)} changes the chain and needs an X-Cbqs-Client header (any value; curl -H 'X-Cbqs-Client: curl'): a web page can send it only with the node's consent (--http-corsdomain)`,
    );
  }

  /** The dev seeds (GET /devnet/accounts) to a client off loopback: refused unless --expose-dev-seeds. */
  checkSeeds(req: IncomingMessage): void {
    if (this.exposeDevSeeds || isLoopbackAddress(req.socket.remoteAddress ?? "")) return;
    throw new RequestError(403, "dev_seeds_not_exposed", "the dev accounts and their seeds are served to loopback clients only, unless the node is started with --expose-dev-seeds");
  }
}
