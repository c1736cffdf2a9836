// Send, mine and waitForReceipt against a real devnet (the default genesis config):
// the receipt comes back verified once a block includes the transaction, the wait is bounded,
// and the node's refusals are NodeErrors with its code and message.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { keccak256 } from "../../src/crypto/hash.js";
import { DEFAULT_GENESIS_SOURCE } from "../../src/harness/genesis.js";
import { createClient, NodeError, transferEnvelope, WaitTimeout, type Client } from "../../src/client/index.js";
import { startNode, toHex, type TestNode } from "../node/helpers.js";
import { rejection } from "./helpers.js";

const ALICE = "0x1111111111111111111111111111111111111111";
const BOB = "0x2222222222222222222222222222222222222222";

describe("the devnet through the client", () => {
  let n: TestNode;
  let client: Client;
  beforeEach(async () => {
    n = await startNode({ kind: "genesis", source: DEFAULT_GENESIS_SOURCE });
    client = createClient(n.url);
  });
  afterEach(() => n.close());

  it("send() queues a transfer ({txHash, nonce}), mine() includes it, waitForReceipt() returns its verified receipt", async () => {
    const { chainId } = await client.genesis();
    const nonce = (await client.accountProof(ALICE)).account!.nonce;
    const envelope = transferEnvelope({ chainId, from: ALICE, to: BOB, amount: 5n, nonce });
    const sent = await client.send(envelope);
    expect(toHex(sent.txHash)).toBe(toHex(keccak256(envelope)));
    expect(sent).toMatchObject({ nonce, pending: 1, height: 0n });
    const waiting = client.waitForReceipt(sent.txHash, { timeoutMs: 10_000, pollMs: 20 });
    const mined = await client.mine();
    expect(mined.height).toBe(1n);
    expect(mined.receipts.map((r) => [toHex(r.txHash), r.status])).toEqual([[toHex(sent.txHash), "ok"]]);
    expect(mined.dropped).toEqual([]);
    const receipt = await waiting;
    expect(receipt).toMatchObject({ height: 1n, txIndex: 0, receipt: { status: "ok", error: null } });
    expect(toHex(receipt.blockHash)).toBe(toHex(n.db.head()!.block_hash));
    expect(receipt.receipt.cycles).toBe(mined.receipts[0]!.cycles);
    const after = (await client.accountProof(BOB)).account!;
    expect(after.balance).toBe(10n ** 18n + 5n);
  });

  it("mine({height}) skips to that height; the node's refusals are NodeErrors with its code and message", async () => {
    expect((await client.mine({ height: 10n })).height).toBe(10n);
    const low = await rejection(client.mine({ height: 5 }));
    expect(low).toBeInstanceOf(NodeError);
    expect(low).toMatchObject({ status: 400, code: "invalid_height", nodeMessage: "height 5 is not above the head 10 (and a u64)" });
    const { chainId } = await client.genesis();
    const wrong = await rejection(client.send(transferEnvelope({ chainId, from: ALICE, to: BOB, amount: 1n, nonce: 7n })));
    expect(wrong).toMatchObject({ name: "NodeError", status: 400, code: "invalid_nonce" });
    expect(wrong.message).toBe(`${n.url}/tx: HTTP 400 invalid_nonce: nonce 7 is not the sender's next nonce 0 (account nonce plus 0 queued)`);
  });

  it("waitForReceipt gives up with WaitTimeout when no block includes the transaction, within its bound", async () => {
    const { chainId } = await client.genesis();
    const sent = await client.send(transferEnvelope({ chainId, from: ALICE, to: BOB, amount: 1n, nonce: 0n }));
    const started = performance.now();
    const err = await rejection(client.waitForReceipt(sent.txHash, { timeoutMs: 300, pollMs: 50 }));
    const took = performance.now() - started;
    expect(err).toBeInstanceOf(WaitTimeout);
    expect(err).toMatchObject({ txHash: toHex(sent.txHash), timeoutMs: 300 });
    expect(took).toBeGreaterThanOrEqual(290);
    expect(took).toBeLessThan(3_000);
  });
});
