// Shared by the broker-kit tests: the kit chain (src/broker-kit/kit.ts) mined on an in-process
// devnet and a fixture source over it, built once per test file; bundles of it as files.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { kitChainOf, kitFixture } from "../../scripts/gen-broker-kit.js";
import { bundleText, parseBundle, type Bundle } from "../../src/broker-kit/bundle.js";
import { kitBundle, type KitBundleName, type KitChain, type KitVariation } from "../../src/broker-kit/kit.js";
import { fixtureJsonText, type Fixture } from "../../src/harness/fixture.js";

let kit: Promise<{ fixture: Fixture; chain: KitChain }> | undefined;

/** The kit chain as a fixture and a chain source over it (built once per test file). */
export function kitChain(): Promise<{ fixture: Fixture; chain: KitChain }> {
  kit ??= (async () => {
    const fixture = kitFixture();
    return { fixture, chain: await kitChainOf(fixture) };
  })();
  return kit;
}

/** A kit bundle (varied or not) as the verifier reads it, through its text in `form`. */
export async function kitBundleRead(name: KitBundleName, variation: KitVariation = {}, form: "json" | "hex" = "json"): Promise<Bundle> {
  const { chain } = await kitChain();
  const { streamId, artifacts } = await kitBundle(chain, name, variation);
  return parseBundle(Buffer.from(bundleText(streamId, artifacts, form)), `kit-${name}.jsonl`);
}

/** A temporary directory removed after the file's tests, and files written into it. */
export function tempFiles(): { dir: string; write(name: string, text: string | Uint8Array): string; kitChainFile(): Promise<string> } {
  const dir = mkdtempSync(join(tmpdir(), "cbqs-broker-kit-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string | Uint8Array): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  return { dir, write, kitChainFile: async () => write("kit-chain.json", fixtureJsonText((await kitChain()).fixture)) };
}
