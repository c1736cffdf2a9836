// `cbqs tx`: a transaction written as in a scenario becomes the raw envelope a node's POST /tx
// takes (docs/reference/formats/transaction.md): accepted, mined, and executed as the scenario runner would.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { decodeEnvelope, txHash } from "../../src/chain/envelope.js";
import { fromHex, toHex } from "../../src/bytes.js";
import { codecs, decode, streamId } from "../../src/codec/index.js";
import { decodeStateValueAs } from "../../state/kv/value.js";
import { get, post, startNode } from "../node/helpers.js";
import { devAccount, devnetGenesisSource } from "../../src/harness/devnet.js";
import { cbqs, unusableInput } from "./program.js";

const OWNER = "0x1111111111111111111111111111111111111111";
const CI = "0x" + "c1".repeat(32);

describe("cbqs tx", () => {
  it("builds the envelope: chain id, sender, nonce and the resolved instruction (a stream reference derived per CIP-39 §4.1)", async () => {
    const tx = { from: OWNER, cbqs: { TopUpStream: { stream_id: { owner: OWNER, owner_nonce: "1" }, amount: "5" } } };
    const r = await cbqs("tx", JSON.stringify(tx), "--chain-id", "7", "--chain-instance", CI, "--nonce", "2");
    expect(r).toMatchObject({ exitCode: 0, err: "" });
    const bytes = fromHex(r.out.trim());
    const env = decodeEnvelope(bytes);
    expect([env.chain_id, env.nonce, toHex(env.tx.from)]).toEqual([7n, 2n, OWNER]);
    expect(env.tx.body.kind).toBe("system");
    const payload = (env.tx.body as { payload: Uint8Array }).payload;
    expect(decode(codecs.CbqsInstructionV1, payload)).toEqual({ type: "TopUpStream", args: { stream_id: streamId(7n, fromHex(CI), fromHex(OWNER), 1n), amount: 5n } });
    const json = await cbqs("tx", JSON.stringify(tx), "--chain-id", "7", "--chain-instance", CI, "--nonce", "2", "--json");
    expect(JSON.parse(json.out)).toEqual({ envelope: r.out.trim(), tx_hash: toHex(txHash(bytes)) });
  });

  it("a node accepts the envelope and mines it (POST /tx, POST /mine)", async () => {
    const n = await startNode("fixtures/corpus/create-quote.json");
    try {
      // GET /genesis names both identities cbqs tx needs.
      const genesis = (await get(n.url, "/genesis")).body as { chain_id: string; chain_instance_id: string };
      expect(genesis.chain_id).toBe(n.node.config.chain_id.toString());
      const tx = { from: OWNER, cbqs: { TopUpStream: { stream_id: { owner: OWNER, owner_nonce: "1" }, amount: "5" } } };
      const account = (await get(n.url, `/proof/account/${OWNER}`)).body["proof"] as { value: string };
      const nonce = decodeStateValueAs(fromHex(account.value), "Account").nonce.toString();
      const r = await cbqs("tx", JSON.stringify(tx), "--chain-id", genesis.chain_id, "--chain-instance", genesis.chain_instance_id, "--nonce", nonce);
      expect((await post(n.url, "/tx", r.out.trim())).status).toBe(200);
      const mined = (await post(n.url, "/mine", "")).body as { receipts: Array<{ status: string; events: Array<{ topic: string }> }> };
      expect(mined.receipts.map((x) => [x.status, x.events.map((e) => e.topic)])).toEqual([["ok", ["cbqs.stream.topped_up"]]]);
    } finally {
      await n.close();
    }
  });

  it("a malformed transaction names its JSON path; expectations and bad options are refused (exit 2)", async () => {
    const opts = ["--chain-id", "7", "--chain-instance", CI, "--nonce", "0"];
    expect(await cbqs("tx", JSON.stringify({ from: OWNER, transfer: { to: OWNER, amount: "-1" } }), ...opts)).toEqual(unusableInput(/\$\.transfer\.amount/));
    expect(await cbqs("tx", JSON.stringify({ from: OWNER, cbqs: { UpdateProvider: { metadata_hash: { owner: OWNER, owner_nonce: "1" } } } }), ...opts)).toEqual(
      unusableInput(/\$\.cbqs\.UpdateProvider\.metadata_hash/),
    );
    expect(await cbqs("tx", JSON.stringify({ from: OWNER, transfer: { to: OWNER, amount: "1" }, expect: { status: "ok" } }), ...opts)).toEqual(unusableInput(/\$\.expect: expectations belong to scenarios/));
    expect(await cbqs("tx", JSON.stringify({ from: OWNER, transfer: { to: OWNER, amount: "1" } }), "--chain-id", "7", "--chain-instance", "0x12", "--nonce", "0")).toEqual(unusableInput(/--chain-instance/));
  });

  it("--nonce's help states the nonce rule: every included transaction of the sender so far, accepted or rejected, uses a nonce", async () => {
    const help = await cbqs("tx", "--help");
    const text = (help.out + help.err).replace(/\s+/g, " ");
    expect(text).toContain("every included transaction of the sender so far, accepted or rejected");
    expect(text).not.toMatch(/a rejected one does not count/);
  });
});

describe("cbqs tx --node", () => {
  const devnet = () => startNode({ kind: "genesis", source: devnetGenesisSource(10) });

  it("fills chain_id, chain_instance_id and the sender's next nonce (account nonce plus queued) from the node: the same envelope as the explicit options give", async () => {
    const n = await devnet();
    try {
      const from = toHex(devAccount(0).address);
      const tx = JSON.stringify({ from, transfer: { to: toHex(devAccount(1).address), amount: "5" } });
      const explicit = await cbqs("tx", tx, "--chain-id", "7", "--chain-instance", toHex(n.node.chainInstanceId), "--nonce", "0");
      expect(await cbqs("tx", tx, "--node", n.url)).toEqual(explicit);
      expect((await post(n.url, "/tx", explicit.out.trim())).status).toBe(200);
      // One queued: the next one takes nonce 1.
      const second = await cbqs("tx", tx, "--node", n.url + "/", "--json");
      expect(decodeEnvelope(fromHex(JSON.parse(second.out).envelope)).nonce).toBe(1n);
      // --nonce overrides what the node says (a transaction for later).
      expect(decodeEnvelope(fromHex((await cbqs("tx", tx, "--node", n.url, "--nonce", "9")).out.trim())).nonce).toBe(9n);
    } finally {
      await n.close();
    }
  });

  it("dev account names stand for the address, the seed under signer_seed/ed25519_seed, the public key under ed25519: fixtures/devnet's provider and stream, sent by name", async () => {
    const n = await devnet();
    try {
      for (const file of ["register-provider", "create-stream"]) {
        const r = await cbqs("tx", `@fixtures/devnet/${file}.json`, "--node", n.url, "--send");
        expect([r.exitCode, r.err], file).toEqual([0, ""]);
        await post(n.url, "/mine", "");
      }
      const provider = (await get(n.url, "/cbqs/provider/dev1")).body["provider"] as Record<string, unknown>;
      expect(provider).toMatchObject({ provider: toHex(devAccount(1).address), signing_key: { ed25519: toHex(devAccount(1).publicKey) }, quote_key: { ed25519: toHex(devAccount(1).publicKey) }, live_assigned_streams: "1" });
      const stream = (await get(n.url, `/cbqs/stream/${encodeURIComponent(`owner:${toHex(devAccount(0).address)}/nonce:1`)}`)).body["stream"] as Record<string, unknown>;
      expect(stream).toMatchObject({ owner: toHex(devAccount(0).address), provider: toHex(devAccount(1).address), admin_key: { ed25519: toHex(devAccount(0).publicKey) }, status: "Active" });
      // A public key where the format takes one.
      const quoteKey = JSON.stringify({ from: "dev1", cbqs: { UpdateProvider: { quote_key: { ed25519: "dev2" } } } });
      expect((await cbqs("tx", quoteKey, "--node", n.url, "--send")).exitCode).toBe(0);
      await post(n.url, "/mine", "");
      expect((await get(n.url, "/cbqs/provider/dev1")).body["provider"]).toMatchObject({ quote_key: { ed25519: toHex(devAccount(2).publicKey) } });
      const unknown = await cbqs("tx", JSON.stringify({ from: "dev10", transfer: { to: "dev0", amount: "1" } }), "--node", n.url);
      expect(unknown).toEqual(unusableInput(/\$\.from: dev10 is not a dev account of the node \(it has 10: GET \/devnet\/accounts\)/));
    } finally {
      await n.close();
    }
  });

  it("--send --wait prints the included transaction with its receipt (exit 0), or its rejection (exit 1); under --mining auto at once, under manual once a block is mined, else exit 2 after --timeout", async () => {
    const auto = await startNode({ kind: "genesis", source: devnetGenesisSource(10) }, { mining: "auto" });
    try {
      const r = await cbqs("tx", '{"from":"dev0","transfer":{"to":"dev1","amount":"5"}}', "--node", auto.url, "--send", "--wait");
      expect([r.exitCode, r.err]).toEqual([0, ""]);
      expect(JSON.parse(r.out)).toMatchObject({ status: "included", height: "1", index: 0, from: toHex(devAccount(0).address), nonce: "0", receipt: { status: "ok" } });
      // Rejected (an unknown stream): included with its rejection, exit 1.
      const bad = await cbqs("tx", JSON.stringify({ from: "dev0", cbqs: { TopUpStream: { stream_id: "0x" + "ab".repeat(32), amount: "5" } } }), "--node", auto.url, "--send", "--wait");
      expect(bad.exitCode).toBe(1);
      expect(JSON.parse(bad.out)).toMatchObject({ status: "included", height: "2", receipt: { status: "rejected", error: { name: expect.any(String) } } });
    } finally {
      await auto.close();
    }
    const manual = await devnet();
    try {
      const waiting = cbqs("tx", '{"from":"dev0","transfer":{"to":"dev1","amount":"5"}}', "--node", manual.url, "--send", "--wait");
      while (manual.node.pending === 0) await new Promise((r) => setTimeout(r, 5));
      manual.node.mine();
      const waited = await waiting;
      expect(JSON.parse(waited.out)).toMatchObject({ status: "included", height: "1" });
      // Said at once, not after --timeout: the node mines on POST /mine only.
      expect(waited.err).toMatch(/^cbqs: queued as 0x[0-9a-f]{64}; this node mines on POST \/mine only \(--mining manual\): waiting up to 30 s for a block\n$/);
      expect(await cbqs("tx", '{"from":"dev0","transfer":{"to":"dev1","amount":"5"}}', "--node", manual.url, "--send", "--wait", "--timeout", "1")).toMatchObject({
        exitCode: 2,
        err: expect.stringMatching(/^cbqs: queued as 0x[0-9a-f]{64}; [^\n]+\ncbqs: error: http:\/\/127\.0\.0\.1:\d+: transaction 0x[0-9a-f]{64} is still pending after 1 s \(--timeout 1\); a node with --mining manual produces blocks on POST \/mine only\n$/),
      });
    } finally {
      await manual.close();
    }
  });

  it("a transaction the node refuses is exit 1 with the node's error; bad combinations and unreachable nodes are exit 2; without --node the three options are required as before", async () => {
    const n = await devnet();
    try {
      const refused = await cbqs("tx", '{"from":"0x0000000000000000000000000000000000000017","transfer":{"to":"dev1","amount":"5"}}', "--node", n.url, "--send");
      expect(refused.exitCode).toBe(1);
      expect(JSON.parse(refused.out)).toMatchObject({ error: { code: "not_includable" } });
      expect(refused.err).toMatch(/^cbqs: the node refused the transaction: 400 not_includable: /);
      const tx = '{"from":"dev0","transfer":{"to":"dev1","amount":"5"}}';
      const cases: Array<[string[], RegExp]> = [
        [["--node", n.url, "--chain-id", "7"], /--chain-id comes from the node with --node: give one or the other/],
        [["--node", n.url, "--wait"], /--wait waits for a transaction --send sent: give --send too/],
        [["--node", n.url, "--send", "--json"], /--json prints the envelope/],
        [["--node", "127.0.0.1:8545"], /--node must be a node's base URL, http:\/\/host:port/],
        [["--node", n.url, "--timeout", "0"], /--timeout must be a number of seconds from 1 to 3600/],
        [["--send", "--chain-id", "7", "--chain-instance", CI, "--nonce", "0"], /--send needs --node <url>/],
        [["--chain-id", "7", "--chain-instance", CI], /required option '--nonce <n>' not specified \(or give --node <url>\)/],
        [["--node", "http://127.0.0.1:1"], /cannot reach http:\/\/127\.0\.0\.1:1: ECONNREFUSED/],
        [["--chain-id", "7", "--chain-instance", CI, "--nonce", "0", "--node", n.url], /--chain-id comes from the node/],
      ];
      for (const [args, problem] of cases) expect(await cbqs("tx", tx, ...args), args.join(" ")).toEqual(unusableInput(problem));
      // Without --node, a dev name is what it always was: not an address.
      expect(await cbqs("tx", tx, "--chain-id", "7", "--chain-instance", CI, "--nonce", "0")).toEqual(unusableInput(/\$\.from/));
    } finally {
      await n.close();
    }
  });

  it("requests go through the client's transport: a server that is not a node and a silent one are each one exit-2 line naming the URL", async () => {
    const listen = (handler: (res: import("node:http").ServerResponse) => void): Promise<Server> =>
      new Promise((resolve) => {
        const server = createServer((_req, res) => handler(res));
        server.listen(0, "127.0.0.1", () => resolve(server));
      });
    const urlOf = (server: Server) => `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const tx = '{"from":"dev0","transfer":{"to":"dev1","amount":"5"}}';
    const other = await listen((res) => res.end("<html>hello</html>"));
    const silent = await listen(() => {});
    try {
      expect(await cbqs("tx", tx, "--node", urlOf(other))).toEqual(unusableInput(new RegExp(`${urlOf(other)}/genesis: not a cbqs node's answer: HTTP 200, not a usable JSON answer`)));
      expect(await cbqs("tx", tx, "--node", urlOf(silent), "--timeout", "1")).toEqual(unusableInput(new RegExp(`${urlOf(silent)}/genesis: no answer within 1 s`)));
    } finally {
      silent.closeAllConnections();
      await Promise.all([other, silent].map((s) => new Promise((r) => s.close(r))));
    }
  });
});
