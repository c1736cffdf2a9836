// `cbqs tx`: a transaction written as in a scenario becomes the raw envelope a node's POST /tx
// takes (docs/transactions.md): accepted, mined, and executed as the scenario runner would.
import { describe, expect, it } from "vitest";
import { decodeEnvelope, txHash } from "../../src/chain/envelope.js";
import { fromHex, toHex } from "../../src/bytes.js";
import { codecs, decode, streamId } from "../../src/codec/index.js";
import { decodeStateValueAs } from "../../state/kv/value.js";
import { get, post, startNode } from "../node/helpers.js";
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

  it("issue 21: --nonce's help states the nonce rule: every included transaction of the sender so far, accepted or rejected, uses a nonce", async () => {
    const help = await cbqs("tx", "--help");
    const text = (help.out + help.err).replace(/\s+/g, " ");
    expect(text).toContain("every included transaction of the sender so far, accepted or rejected");
    expect(text).not.toMatch(/a rejected one does not count/);
  });
});
