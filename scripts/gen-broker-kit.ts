// Writes the broker kit's samples (docs/guides/verify-a-broker.md "Running it in CI"): fixtures/broker/kit-chain.json,
// the kit chain (src/broker-kit/kit.ts) mined on an in-process devnet, and one reference bundle
// per kit stream signed by the reference signer — kit-standard.jsonl and kit-fast.jsonl in the
// JSON form, kit-econ.jsonl in the hex form — each of which `cbqs verify-broker … --fixture
// fixtures/broker/kit-chain.json` accepts. Deterministic: test/broker-kit/samples.test.ts
// regenerates them in memory and fails when a committed file differs.
//
//   npm run build && node dist/scripts/gen-broker-kit.js
import { writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
import { createChain } from "../src/api/local-chain.js";
import { bundleText } from "../src/broker-kit/bundle.js";
import { fixtureSource } from "../src/broker-kit/chain-source.js";
import { KIT_BUNDLES, kitBundle, kitChainBlocks, kitStreams, type KitBundleName, type KitChain } from "../src/broker-kit/kit.js";
import { DEFAULT_DEV_ACCOUNTS, devnetGenesisSource } from "../src/harness/devnet.js";
import { fixtureJsonText, type Fixture } from "../src/harness/fixture.js";
import { checkScriptArgs } from "./script-args.js";

export const KIT_CHAIN_PATH = "fixtures/broker/kit-chain.json";
export const kitBundlePath = (name: KitBundleName): string => `fixtures/broker/kit-${name}.jsonl`;
/** The form each sample is written in: both decode paths of the bundle reader have a sample. */
export const KIT_BUNDLE_FORMS: Record<KitBundleName, "json" | "hex"> = { standard: "json", fast: "json", econ: "hex" };

/** The kit chain as a fixture: the devnet genesis and the kit's blocks, every transaction accepted. */
export function kitFixture(): Fixture {
  const chain = createChain({ genesis: devnetGenesisSource(DEFAULT_DEV_ACCOUNTS) });
  for (const b of kitChainBlocks(chain.chainId, chain.chainInstanceId)) {
    const mined = chain.executeBlock(b.envelopes, { height: b.height });
    const rejected = mined.block.receipts.findIndex((r) => r.status !== "ok");
    if (rejected >= 0) throw new Error(`kit chain: block ${b.height}: transaction ${rejected} rejected: ${mined.messages[rejected] ?? "(no message)"}`);
  }
  return chain.toFixture({ name: "broker-kit-chain", description: "The broker kit's chain (src/broker-kit/kit.ts): a provider, a Standard, a Fast and an underfunded stream on the devnet genesis", postState: "none" });
}

/** The kit chain to sign and verify against: a fixture source over `fixture`. */
export async function kitChainOf(fixture: Fixture, name = KIT_CHAIN_PATH): Promise<KitChain> {
  return { source: await fixtureSource(fixture, name), streams: kitStreams(fixture.genesis.config.chain_id, fixture.genesis.chain_instance_id) };
}

/** Every sample file and its text. */
export async function kitSamples(): Promise<Map<string, string>> {
  const fixture = kitFixture();
  const chain = await kitChainOf(fixture);
  const files = new Map<string, string>([[KIT_CHAIN_PATH, fixtureJsonText(fixture)]]);
  for (const name of KIT_BUNDLES) {
    const { streamId, artifacts } = await kitBundle(chain, name);
    files.set(kitBundlePath(name), bundleText(streamId, artifacts, KIT_BUNDLE_FORMS[name]));
  }
  return files;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  checkScriptArgs(process.argv.slice(2), "usage: gen-broker-kit (no options): writes fixtures/broker/kit-chain.json and kit-{standard,fast,econ}.jsonl", []);
  for (const [path, text] of await kitSamples()) {
    writeFileSync(path, text);
    process.stderr.write(`wrote ${path}\n`);
  }
}
