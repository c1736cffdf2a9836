// Who may use a node, as an attacker and as its users would find out over real sockets
// (src/node/guard.ts, docs/spec/security-model.md): a request naming a Host the node does not
// answer to — a page reaching it by DNS rebinding — is refused before anything; so is a request
// from a page of an origin it does not allow; a write needs X-Cbqs-Client, which no simple
// request of a browser carries; CORS headers go to --http-corsdomain origins only. The client
// library and `cbqs tx --node --send --wait` still write. A --host off loopback needs
// --expose-devnet, says what it serves, and keeps the dev seeds from clients off loopback unless
// --expose-dev-seeds. Everything listens on loopback (or, for the exposure tests, on all
// addresses, reached through this machine's own non-loopback address).
import type { IncomingMessage } from "node:http";
import { request } from "node:http";
import { describe, expect, it } from "vitest";
import { createClient, transferEnvelope } from "../../src/client/index.js";
import { devnetGenesisSource } from "../../src/harness/devnet.js";
import { RequestGuard } from "../../src/node/guard.js";
import { cbqs, unusableInput } from "../cli/program.js";
import { withNodeCommand } from "./command.js";
import { get, lanAddress, noRemoteClient, post, startNode, type TestNode } from "./helpers.js";

const DEVNET = { kind: "genesis", source: devnetGenesisSource(10) } as const;
const DEV0 = "0xa05a065ba5d5888cc61c4e5ccfbd57f7bd9bbe99";
const DEV1 = "0x074b21343d43bffcb01084541b4f8dab844fdcaa";

interface Raw {
  status: number;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
}

/** One request with exactly these headers (Host included: node:http sends the one given). */
function ask(url: string, method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(url + path, { method, headers, agent: false }, (res) => {
      let text = "";
      res.on("data", (d: Buffer) => (text += d.toString()));
      // A JSON answer's body; the explorer's page and a 204 have none to read here.
      const json = String(res.headers["content-type"]).startsWith("application/json");
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: json ? (JSON.parse(text) as Record<string, unknown>) : {} }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

const refusal = (r: Raw) => [r.status, (r.body["error"] as { code: string } | undefined)?.code, r.headers["access-control-allow-origin"]];

/** The head height and dev0's account: what an attack would move. */
async function state(n: TestNode): Promise<unknown[]> {
  const dev0 = await get(n.url, `/account/${DEV0}`);
  return [dev0.body["height"], dev0.body["balance"], dev0.body["nonce"], dev0.body["pending"]];
}

/** A devnet mid-session: three blocks, the developer's snapshot (id 1) at block 2. */
async function developersNode(options: Parameters<typeof startNode>[1] = {}): Promise<TestNode> {
  const n = await startNode(DEVNET, options);
  await post(n.url, "/mine?blocks=2", "");
  expect((await post(n.url, "/devnet/snapshot", "")).body["id"]).toBe("1");
  await post(n.url, "/mine", "");
  return n;
}

const UNTOUCHED = ["3", "1000000000000000000", "0", 0];

/** dev0's whole balance to dev1: the transfer an attacker would send. */
async function drain(n: TestNode): Promise<string> {
  const r = await cbqs("tx", JSON.stringify({ from: "dev0", transfer: { to: "dev1", amount: "1000000000000000000" } }), "--node", n.url);
  expect(r.exitCode).toBe(0);
  return r.out.trim();
}

describe("Host: DNS rebinding", () => {
  it("a request naming a Host the node does not answer to is refused 403 host_not_allowed — the dev seeds, POST /mine, POST /devnet/revert, the explorer — and the chain does not move", async () => {
    const n = await developersNode();
    try {
      const port = new URL(n.url).port;
      // What a page on rebind.attacker.example sends once the name points at 127.0.0.1: its own Host and, for a write, its own origin.
      const page = { host: `rebind.attacker.example:${port}`, origin: `http://rebind.attacker.example:${port}`, "x-cbqs-client": "page" };
      const seeds = await ask(n.url, "GET", "/devnet/accounts", page);
      expect(seeds.status).toBe(403);
      expect(seeds.body).toEqual({
        error: {
          code: "host_not_allowed",
          message: `this node does not answer to the Host "rebind.attacker.example:${port}": only an IP address, localhost, its --host or a name given to --http-vhosts (a page reaching it under another name may be DNS rebinding)`,
        },
      });
      expect(refusal(await ask(n.url, "POST", "/mine", page))).toEqual([403, "host_not_allowed", undefined]);
      expect(refusal(await ask(n.url, "POST", "/devnet/revert?id=1", page))).toEqual([403, "host_not_allowed", undefined]);
      expect(refusal(await ask(n.url, "POST", "/tx", page, await drain(n)))).toEqual([403, "host_not_allowed", undefined]);
      expect(refusal(await ask(n.url, "GET", "/", { host: page.host }))).toEqual([403, "host_not_allowed", undefined]);
      expect(refusal(await ask(n.url, "OPTIONS", "/mine", page))).toEqual([403, "host_not_allowed", undefined]);
      expect(await state(n)).toEqual(UNTOUCHED);
      // The developer's own snapshot is still there to revert to.
      expect((await post(n.url, "/devnet/revert?id=1", "")).body["height"]).toBe("2");
    } finally {
      await n.close();
    }
  });

  it("answered by default: any IP address and localhost, with or without a port; not another name, however close; --http-vhosts adds names, * any", async () => {
    const n = await startNode(DEVNET);
    const named = await startNode(DEVNET, { vhosts: ["devbox.lan"] });
    const any = await startNode(DEVNET, { vhosts: ["*"] });
    try {
      const port = new URL(n.url).port;
      const status = async (url: string, host: string) => (await ask(url, "GET", "/genesis", { host })).status;
      for (const host of ["127.0.0.1", `127.0.0.1:${port}`, "127.1.2.3:80", `[::1]:${port}`, "[::1]", "192.0.2.7:8545", "localhost", `LocalHost:${port}`]) {
        expect([host, await status(n.url, host)]).toEqual([host, 200]);
      }
      for (const host of ["localhost.attacker.example", "attacker.localhost", "devbox.lan", "127.0.0.1.nip.io", "[::1"]) expect([host, await status(n.url, host)]).toEqual([host, 403]);
      expect([await status(named.url, "devbox.lan:8545"), await status(named.url, "DEVBOX.lan"), await status(named.url, "other.lan"), await status(named.url, "localhost")]).toEqual([200, 200, 403, 200]);
      expect([await status(any.url, "rebind.attacker.example"), await status(any.url, "x")]).toEqual([200, 200]);
    } finally {
      await Promise.all([n.close(), named.close(), any.close()]);
    }
  });

  it("a name given to --host is a name the node answers to", () => {
    const seen = (host: string) => ({ headers: { host }, socket: { remoteAddress: "127.0.0.1" } }) as unknown as IncomingMessage;
    const guard = new RequestGuard({ host: "devbox.lan" });
    expect(guard.admit(seen("devbox.lan:8545"))).toEqual({});
    expect(() => guard.admit(seen("other.lan:8545"))).toThrow(/does not answer to the Host "other\.lan:8545"/);
  });
});

describe("writes: X-Cbqs-Client", () => {
  it("a write without X-Cbqs-Client — a text/plain, form or bodiless POST, the forms of a browser's simple request — is refused 403 missing_client_header and changes nothing; with it, it is applied", async () => {
    const n = await developersNode();
    try {
      const tx = await drain(n);
      const plain = await ask(n.url, "POST", "/tx", { "content-type": "text/plain" }, tx);
      expect(plain.status).toBe(403);
      expect(plain.body).toEqual({
        error: {
          code: "missing_client_header",
          message: "/tx changes the chain and needs an X-Cbqs-Client header (any value; curl -H 'X-Cbqs-Client: curl'): a web page can send it only with the node's consent (--http-corsdomain)",
        },
      });
      expect(refusal(await ask(n.url, "POST", "/tx", { "content-type": "application/x-www-form-urlencoded" }, tx))).toEqual([403, "missing_client_header", undefined]);
      expect(refusal(await ask(n.url, "POST", "/tx", { "content-type": "application/cbor" }, tx))).toEqual([403, "missing_client_header", undefined]);
      expect(refusal(await ask(n.url, "POST", "/mine"))).toEqual([403, "missing_client_header", undefined]);
      expect(refusal(await ask(n.url, "POST", "/devnet/snapshot", { "content-type": "text/plain" }))).toEqual([403, "missing_client_header", undefined]);
      expect(refusal(await ask(n.url, "POST", "/devnet/revert?id=1"))).toEqual([403, "missing_client_header", undefined]);
      expect(await state(n)).toEqual(UNTOUCHED);
      // Reads need nothing, POST /proof/multi included.
      expect((await ask(n.url, "POST", "/proof/multi", { "content-type": "application/json" }, JSON.stringify({ keys: [`0x01${DEV0.slice(2)}${"00".repeat(33)}`] }))).status).toBe(200);
      // With the header (any value, as curl sends it: no Origin), each write is applied.
      const client = { "x-cbqs-client": "curl" };
      expect((await ask(n.url, "POST", "/tx", client, tx)).body["nonce"]).toBe("0");
      expect((await ask(n.url, "POST", "/mine", client)).body["height"]).toBe("4");
      expect((await ask(n.url, "POST", "/devnet/snapshot", client)).body["id"]).toBe("2");
      expect((await ask(n.url, "POST", "/devnet/revert?id=1", client)).body["height"]).toBe("2");
    } finally {
      await n.close();
    }
  });

  it("the client library and cbqs tx --node --send --wait write to a node with the default checks", async () => {
    const n = await startNode(DEVNET, { mining: "auto" });
    try {
      const client = createClient(n.url);
      const { chainId } = await client.genesis();
      const sent = await client.send(transferEnvelope({ chainId, from: DEV0, to: DEV1, amount: 5n, nonce: 0n }));
      expect((await client.waitForReceipt(sent.txHash, { timeoutMs: 10_000, pollMs: 20 })).receipt.status).toBe("ok");
      expect((await client.mine()).height).toBe(2n);
      const r = await cbqs("tx", JSON.stringify({ from: "dev0", transfer: { to: "dev1", amount: "7" } }), "--node", n.url, "--send", "--wait");
      expect([r.exitCode, r.err, JSON.parse(r.out)["receipt"]["status"]]).toEqual([0, "", "ok"]);
      expect((await get(n.url, `/account/${DEV1}`)).body["balance"]).toBe("1000000000000000012");
    } finally {
      await n.close();
    }
  });
});

describe("Origin and CORS", () => {
  it("a request from a page of another origin is refused 403 origin_not_allowed on every route, its preflight too, with no CORS header; the node's own origin is served", async () => {
    const n = await developersNode();
    try {
      const evil = { origin: "http://evil.example", "x-cbqs-client": "page" };
      const mine = await ask(n.url, "POST", "/mine", evil);
      expect([mine.status, mine.body]).toEqual([
        403,
        { error: { code: "origin_not_allowed", message: 'pages of "http://evil.example" may not call this node: only its own pages and origins given to --http-corsdomain may' } },
      ]);
      expect(mine.headers["access-control-allow-origin"]).toBeUndefined();
      expect(refusal(await ask(n.url, "GET", "/devnet/accounts", evil))).toEqual([403, "origin_not_allowed", undefined]);
      expect(refusal(await ask(n.url, "GET", "/genesis", { origin: "null" }))).toEqual([403, "origin_not_allowed", undefined]);
      expect(refusal(await ask(n.url, "OPTIONS", "/tx", { ...evil, "access-control-request-method": "POST", "access-control-request-headers": "x-cbqs-client" }))).toEqual([403, "origin_not_allowed", undefined]);
      // Another port of the same host is another origin.
      const port = Number(new URL(n.url).port);
      expect(refusal(await ask(n.url, "POST", "/devnet/revert?id=1", { origin: `http://127.0.0.1:${port === 65_535 ? 1 : port + 1}`, "x-cbqs-client": "page" }))).toEqual([403, "origin_not_allowed", undefined]);
      expect(await state(n)).toEqual(UNTOUCHED);
      // The node's own page (its origin is http:// and the Host it was loaded from) reads and writes, without CORS headers.
      const own = { origin: n.url, "x-cbqs-client": "explorer" };
      const read = await ask(n.url, "GET", "/genesis", own);
      expect([read.status, read.headers["access-control-allow-origin"]]).toEqual([200, undefined]);
      const viaLocalhost = { host: `localhost:${port}`, origin: `http://localhost:${port}`, "x-cbqs-client": "explorer" };
      expect((await ask(n.url, "POST", "/mine", viaLocalhost)).body["height"]).toBe("4");
    } finally {
      await n.close();
    }
  });

  it("a request a browser says comes from another site (Sec-Fetch-Site cross-site or same-site) with no Origin — a page's no-cors GET, an <img> — is refused 403 origin_not_allowed; the same with an allowed Origin, from the node's own pages, typed, or a link followed, is served", async () => {
    const app = "http://localhost:3000";
    const n = await developersNode({ corsOrigins: [app] });
    try {
      for (const site of ["cross-site", "same-site"]) {
        const seeds = await ask(n.url, "GET", "/devnet/accounts", { "sec-fetch-site": site, "sec-fetch-mode": "no-cors", "sec-fetch-dest": "empty" });
        expect([seeds.status, seeds.body]).toEqual([
          403,
          {
            error: {
              code: "origin_not_allowed",
              message: `a page of another origin may not call this node (its browser says Sec-Fetch-Site: ${site} and names no Origin): only its own pages, an address typed or bookmarked, and pages of origins given to --http-corsdomain (with CORS) may`,
            },
          },
        ]);
        expect(refusal(await ask(n.url, "GET", "/fixture", { "sec-fetch-site": site, "sec-fetch-mode": "no-cors", "sec-fetch-dest": "image" }))).toEqual([403, "origin_not_allowed", undefined]);
        // An iframe navigated to the node is no link the user followed.
        expect(refusal(await ask(n.url, "GET", "/genesis", { "sec-fetch-site": site, "sec-fetch-mode": "navigate", "sec-fetch-dest": "iframe" }))).toEqual([403, "origin_not_allowed", undefined]);
        expect(refusal(await ask(n.url, "POST", "/mine", { "sec-fetch-site": site, "sec-fetch-mode": "navigate", "sec-fetch-dest": "document", "x-cbqs-client": "form" }))).toEqual([403, "origin_not_allowed", undefined]);
      }
      expect(await state(n)).toEqual(UNTOUCHED);
      // An allowed origin's page (with CORS), the node's own, an address typed (none), a link followed to the explorer, a program (no header).
      expect((await ask(n.url, "GET", "/genesis", { "sec-fetch-site": "cross-site", origin: app })).status).toBe(200);
      expect((await ask(n.url, "GET", "/genesis", { "sec-fetch-site": "same-origin" })).status).toBe(200);
      expect((await ask(n.url, "GET", "/genesis", { "sec-fetch-site": "none", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" })).status).toBe(200);
      expect((await ask(n.url, "GET", "/", { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" })).status).toBe(200);
      expect((await ask(n.url, "GET", "/genesis")).status).toBe(200);
    } finally {
      await n.close();
    }
  });

  it("--http-corsdomain: its origins get CORS headers — a preflight naming the methods and X-Cbqs-Client, 600 s — and may write; * allows any origin; no CORS header without an Origin", async () => {
    const app = "http://localhost:3000";
    const n = await developersNode({ corsOrigins: [app] });
    const any = await startNode(DEVNET, { corsOrigins: ["*"] });
    try {
      const preflight = await ask(n.url, "OPTIONS", "/tx", { origin: app, "access-control-request-method": "POST", "access-control-request-headers": "content-type, x-cbqs-client" });
      expect([preflight.status, preflight.headers["access-control-allow-origin"], preflight.headers["vary"], preflight.headers["access-control-allow-methods"], preflight.headers["access-control-allow-headers"], preflight.headers["access-control-max-age"], preflight.headers["allow"]]).toEqual([
        204,
        app,
        "origin",
        "POST, OPTIONS",
        "content-type, last-event-id, x-cbqs-client",
        "600",
        "POST, OPTIONS",
      ]);
      const sent = await ask(n.url, "POST", "/tx", { origin: app, "content-type": "text/plain", "x-cbqs-client": "dashboard" }, await drain(n));
      expect([sent.status, sent.body["nonce"], sent.headers["access-control-allow-origin"], sent.headers["access-control-expose-headers"]]).toEqual([200, "0", app, "retry-after"]);
      // Its simple requests are still no writes: refused, and it may read why.
      expect(refusal(await ask(n.url, "POST", "/mine", { origin: app }))).toEqual([403, "missing_client_header", app]);
      expect(refusal(await ask(n.url, "POST", "/mine", { origin: "http://localhost:3001", "x-cbqs-client": "page" }))).toEqual([403, "origin_not_allowed", undefined]);
      const plain = await ask(n.url, "GET", "/genesis");
      expect([plain.status, plain.headers["access-control-allow-origin"]]).toEqual([200, undefined]);
      const anyOrigin = await ask(any.url, "GET", "/genesis", { origin: "https://wherever.example" });
      expect([anyOrigin.status, anyOrigin.headers["access-control-allow-origin"]]).toEqual([200, "https://wherever.example"]);
      // A preflight without an Origin (not a browser's): the path's methods, no CORS.
      const bare = await ask(n.url, "OPTIONS", "/mine");
      expect([bare.status, bare.headers["allow"], bare.headers["access-control-allow-origin"]]).toEqual([204, "POST, OPTIONS", undefined]);
    } finally {
      await Promise.all([n.close(), any.close()]);
    }
  });
});

describe("binding: --host off loopback", () => {
  it("--host 0.0.0.0, ::, or a LAN address without --expose-devnet is refused with one line naming it; --expose-dev-seeds needs --expose-devnet; a bad --http-vhosts or --http-corsdomain entry is named", async () => {
    for (const host of ["0.0.0.0", "::", "192.0.2.2"]) {
      expect(await cbqs("node", "--host", host, "--port", "0")).toEqual(unusableInput(new RegExp(`--host ${host.replaceAll(".", "\\.")} is reachable from other machines: .* add --expose-devnet to serve it there`)));
    }
    expect(await cbqs("node", "--expose-dev-seeds", "--port", "0")).toEqual(unusableInput(/--expose-dev-seeds serves the dev seeds off loopback: only with --expose-devnet/));
    expect(await cbqs("node", "--http-corsdomain", "http://localhost:3000/", "--port", "0")).toEqual(
      unusableInput(/--http-corsdomain takes a comma-separated list, each entry \* or an origin: scheme:\/\/host\[:port\], no path \(got "http:\/\/localhost:3000\/"\)/),
    );
    expect(await cbqs("node", "--http-vhosts", "devbox.lan,http://x", "--port", "0")).toEqual(unusableInput(/--http-vhosts takes a comma-separated list, each entry \* or a host name \(no scheme or port\) \(got "http:\/\/x"\)/));
  });

  it("--host 0.0.0.0 --expose-devnet warns on stderr what it serves; a client off loopback may read and write but not get the dev seeds, a loopback client may", async (ctx) => {
    const lan = lanAddress();
    if (lan === undefined) return noRemoteClient(ctx);
    const run = await withNodeCommand(["--host", "0.0.0.0", "--expose-devnet", "--port", "0", "--quiet"], async (url) => {
      const port = new URL(url).port;
      const remote = `http://${lan}:${port}`;
      const seeds = await ask(remote, "GET", "/devnet/accounts");
      expect([seeds.status, seeds.body]).toEqual([
        403,
        { error: { code: "dev_seeds_not_exposed", message: "the dev accounts and their seeds are served to loopback clients only, unless the node is started with --expose-dev-seeds" } },
      ]);
      expect((await ask(remote, "GET", "/genesis")).status).toBe(200);
      expect((await ask(remote, "GET", "/")).status).toBe(200);
      expect((await ask(remote, "POST", "/mine", { "x-cbqs-client": "lan" })).body["height"]).toBe("1");
      const local = await ask(`http://127.0.0.1:${port}`, "GET", "/devnet/accounts");
      expect([local.status, (local.body["accounts"] as unknown[]).length]).toEqual([200, 10]);
    });
    expect(run.exitCode).toBe(0);
    expect(run.err).toBe(
      "cbqs: warning: --host 0.0.0.0 --expose-devnet: anyone who reaches this node may send transactions, mine, snapshot and revert (POST /tx, /mine, /devnet/*) without authentication, and read every answer and the explorer page (the dev seeds, GET /devnet/accounts, stay loopback-only)\n",
    );
  });

  it("--expose-dev-seeds serves the dev seeds off loopback too, and the warning says so", async (ctx) => {
    const lan = lanAddress();
    if (lan === undefined) return noRemoteClient(ctx);
    const run = await withNodeCommand(["--host", "0.0.0.0", "--expose-devnet", "--expose-dev-seeds", "--port", "0", "--quiet"], async (url) => {
      const seeds = await ask(`http://${lan}:${new URL(url).port}`, "GET", "/devnet/accounts");
      expect([seeds.status, (seeds.body["accounts"] as Array<{ seed: string }>)[0]!.seed]).toEqual([200, "0x22fce39fcf73234ad75577d2f289c61973a9a7587ef89aa0e77e07bf689ff760"]);
    });
    expect(run.exitCode).toBe(0);
    expect(run.err).toMatch(/^cbqs: warning: --host 0\.0\.0\.0 --expose-devnet: .* and the dev seeds \(GET \/devnet\/accounts, --expose-dev-seeds\)\n$/);
  });
});
