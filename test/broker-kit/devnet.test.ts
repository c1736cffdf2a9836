// `cbqs verify-broker --node` on a live devnet (127.0.0.1, port 0): the kit chain is
// driven into a fresh `cbqs node` devnet through the typed client — POST /tx, POST /mine, POST
// /mine?blocks=N for the runs of empty blocks, ?height= for the jump to the econ stream's grace
// deadline — the bundles are signed against the node, and the command reads every view from it:
// the reference bundles are accepted and the chain-state mutants (escrow below the accrued rent,
// Suspended, at the pinned grace deadline; a view older than an observed change) refused with
// their rule. A node that no longer holds a view is unusable input.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bundleText } from "../../src/broker-kit/bundle.js";
import { nodeSource } from "../../src/broker-kit/chain-source.js";
import { kitBundle, kitChainBlocks, kitStreams, type KitBundleName, type KitChain, type KitVariation } from "../../src/broker-kit/kit.js";
import { MUTANTS } from "../../src/broker-kit/mutants.js";
import { createClient } from "../../src/client/index.js";
import { DEFAULT_DEV_ACCOUNTS, devnetGenesisSource } from "../../src/harness/devnet.js";
import { cbqs, unusableInput } from "../cli/program.js";
import { post, startNode, type TestNode } from "../node/helpers.js";
import { tempFiles } from "./kit.js";

const files = tempFiles();
/** The longest run of empty blocks mined with one POST /mine?blocks=N; a longer gap is one block at ?height=. */
const MAX_RUN = 1_000n;

/** Mines the kit chain's blocks into the devnet at `url`, returning the heights POST /mine?blocks=N filled. */
async function driveKitChain(url: string): Promise<bigint[]> {
  const client = createClient(url);
  const g = await client.genesis();
  let head = 0n;
  const filled: bigint[] = [];
  for (const b of kitChainBlocks(g.chainId, g.chainInstanceId)) {
    const gap = b.height - head - 1n;
    if (gap > 0n && gap <= MAX_RUN) {
      const r = await post(url, `/mine?blocks=${gap}`, "");
      expect(r.status).toBe(200);
      for (let h = head + 1n; h < b.height; h++) filled.push(h);
      head = b.height - 1n;
    }
    for (const e of b.envelopes) await client.send(e);
    const mined = await client.mine(b.height === head + 1n ? {} : { height: b.height });
    expect([mined.height, mined.receipts.map((r) => r.status)]).toEqual([b.height, b.envelopes.map(() => "ok")]);
    head = b.height;
  }
  return filled;
}

describe("cbqs verify-broker --node on a live devnet", () => {
  let node: TestNode;
  let chain: KitChain;
  let filled: bigint[];

  beforeAll(async () => {
    node = await startNode({ kind: "genesis", source: devnetGenesisSource(DEFAULT_DEV_ACCOUNTS) }, { mining: "manual" });
    filled = await driveKitChain(node.url);
    const source = await nodeSource(node.url);
    chain = { source, streams: kitStreams(source.context.chain_id, source.context.chain_instance_id) };
  }, 60_000);
  afterAll(() => node.close());

  async function verifyOnNode(name: KitBundleName, variation: KitVariation = {}, label: string = name) {
    const { streamId, artifacts } = await kitBundle(chain, name, variation);
    const file = files.write(`${label}.jsonl`, bundleText(streamId, artifacts, "json"));
    return cbqs("verify-broker", file, "--node", node.url, "--json");
  }

  it("the devnet was driven with POST /mine?blocks=N between the kit's blocks (test precondition)", () => {
    expect(filled).toEqual([9n, 10n, 11n, 12n, 13n, 14n, 16n, 17n, 18n, 19n]);
  });

  it.each(["standard", "fast", "econ"] as const)("the %s reference bundle, signed against the node, is accepted reading every view from it", async (name) => {
    const r = await verifyOnNode(name);
    expect([r.exitCode, r.err]).toEqual([0, ""]);
    expect(JSON.parse(r.out)).toMatchObject({ ok: true, source: `node ${node.url}` });
  });

  const chainState = MUTANTS.filter((m) => m.bundle === "econ" || m.rule === "B28" || m.name === "an append receipt served at a block before the stream existed");
  it.each(chainState.map((m, i) => [m.rule, m.name, m, i] as const))("%s: %s — refused with exactly that rule", async (rule, _name, mutant, i) => {
    const r = await verifyOnNode(mutant.bundle, mutant, `mutant-${i}`);
    expect([r.exitCode, r.err]).toEqual([1, ""]);
    const [bundle] = JSON.parse(r.out).bundles;
    expect([...new Set(bundle.failures.map((f: { rule: string }) => f.rule))]).toEqual([rule]);
  });

  it("chain-state mutants cover a view without the stream, escrow, the Suspended status, the pinned grace deadline and the view cursor (test precondition)", () => {
    expect(chainState.map((m) => m.rule)).toEqual(["B2", "B28", "B29", "B30", "B30"]);
  });

  it("a node that no longer holds a view's state: exit 2, naming the height and the way out", async () => {
    const { streamId, artifacts } = await kitBundle(chain, "econ");
    const file = files.write("econ-old.jsonl", bundleText(streamId, artifacts, "json"));
    const short = await startNode("fixtures/broker/kit-chain.json", { retainBlocks: 2 });
    try {
      const r = await cbqs("verify-broker", file, "--node", short.url);
      expect(r).toEqual(unusableInput(/no longer holds the state of height 3 .*larger --retain-blocks, or verify against the chain's fixture \(--fixture\)/));
    } finally {
      await short.close();
    }
  });
});
