// CIP-39 §3: "the broker-state response is the atomic unit". Blocks are produced while many
// broker-state requests are in flight, every block changing every part of the answer (escrow via
// TopUpStream, the provider's status, a live governance scalar, the pause record and so
// effective_rent_height). Every part of every answer must equal the state at the answer's own
// height, as an independent engine replay of the produced chain reads it: a torn answer (parts
// from two heights) fails here.
import { describe, expect, it } from "vitest";
import { REGISTRY_ADDRESS } from "../../src/engine/layout.js";
import { accountKey } from "../../state/kv/keys.js";
import { decodeStateValueAs } from "../../state/kv/value.js";
import { cbqsTx, expectedByHeight, fixtureOf, fromHex, get, govTx, post, startNode, toHex, type Answer, type TestNode } from "./helpers.js";

const BLOCKS = 16;
const CLIENTS = 6;

function nonceOf(n: TestNode, a: Uint8Array): bigint {
  const bytes = n.db.state.read(accountKey(a));
  return bytes === undefined ? 0n : decodeStateValueAs(bytes, "Account").nonce;
}

describe("cbqs node: broker-state under concurrent block production (CIP-39 §3 atomicity)", () => {
  it("every part of every answer is the state at the answer's height", async () => {
    const n = await startNode("fixtures/corpus/create-base-schedule.json");
    try {
      const config = n.node.config;
      const start = expectedByHeight(fixtureOf(n.db, config)).get(n.node.head().height.toString())!;
      const [streamHex, streamJson] = [...start.streams].find(([, s]) => (s as { status: string }).status === "Active")!;
      const stream = streamJson as { owner: string; provider: string };
      const streamId = fromHex(streamHex, 32);
      const owner = fromHex(stream.owner, 20);
      const provider = fromHex(stream.provider, 20);
      const gov = config.governance;
      const blocks: Record<string, unknown>[] = [];

      const produce = async () => {
        for (let k = 0; k < BLOCKS; k++) {
          const txs = [
            cbqsTx(config.chain_id, owner, nonceOf(n, owner), { type: "TopUpStream", args: { stream_id: streamId, amount: BigInt(k + 1) } }),
            cbqsTx(config.chain_id, provider, nonceOf(n, provider), { type: "SetProviderStatus", args: { status: k % 2 === 0 ? "Draining" : "Active" } }),
            govTx(config.chain_id, gov, nonceOf(n, gov), { type: "SetParam", name: "cbqs.max_clock_skew_ms", value: 60_000n + BigInt(k) }),
          ];
          if (k % 6 === 2) txs.push(govTx(config.chain_id, gov, nonceOf(n, gov) + 1n, { type: "Pause", actor: REGISTRY_ADDRESS, blocks: 3n }));
          for (const tx of txs) expect((await post(n.url, "/tx", toHex(tx))).status).toBe(200);
          blocks.push((await post(n.url, "/mine", "")).body);
        }
      };
      let producing = true;
      const answers: Answer[] = [];
      const read = async () => {
        while (producing) answers.push(await get(n.url, `/cbqs/broker-state?stream=${streamHex}`));
      };
      const readers = Array.from({ length: CLIENTS }, read);
      await produce();
      producing = false;
      await Promise.all(readers);

      expect(blocks.every((b) => (b["receipts"] as Array<{ status: string }>).some((r) => r.status === "ok"))).toBe(true);
      const expected = expectedByHeight(fixtureOf(n.db, config));
      const heights = new Set<string>();
      for (const a of answers) {
        expect(a.status).toBe(200);
        const h = a.body["height"] as string;
        heights.add(h);
        const want = expected.get(h)!;
        expect(want, `height ${h}`).toBeDefined();
        expect(a.body["block_hash"]).toBe(want.block_hash);
        expect(a.body["state_root"]).toBe(want.state_root);
        expect((a.body["view"] as { block_hash: string }).block_hash).toBe(want.block_hash);
        expect(a.body["stream"], `stream at ${h}`).toEqual(want.streams.get(streamHex));
        expect(a.body["provider"], `provider at ${h}`).toEqual(want.providers.get(stream.provider));
        expect(a.body["bounds"], `bounds at ${h}`).toEqual(want.bounds);
        expect(a.body["effective_rent_height"], `effective_rent_height at ${h}`).toBe(want.effective_rent_height);
      }
      // The answers really were spread over the blocks produced meanwhile.
      expect(heights.size).toBeGreaterThan(BLOCKS / 2);
      // And the parts really changed from block to block.
      const last = expected.get(n.node.head().height.toString())!;
      expect(last.bounds["cbqs.max_clock_skew_ms"]).not.toBe(start.bounds["cbqs.max_clock_skew_ms"]);
      expect(last.effective_rent_height).not.toBe(n.node.head().height.toString());
    } finally {
      await n.close();
    }
  });
});
