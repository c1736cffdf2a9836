// The committed samples of fixtures/broker/ (the kit chain and its three reference
// bundles) are what scripts/gen-broker-kit.ts generates now, byte for byte: the signer and the
// chain are deterministic, and a change to either must regenerate them in the same commit.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { KIT_BUNDLE_FORMS, KIT_CHAIN_PATH, kitBundlePath, kitSamples } from "../../scripts/gen-broker-kit.js";
import { KIT_BUNDLES } from "../../src/broker-kit/kit.js";

describe("fixtures/broker samples", () => {
  it("every sample file is the generator's output (regenerate: npm run build && node dist/scripts/gen-broker-kit.js)", async () => {
    const samples = await kitSamples();
    expect([...samples.keys()]).toEqual([KIT_CHAIN_PATH, ...KIT_BUNDLES.map(kitBundlePath)]);
    for (const [path, text] of samples) expect(readFileSync(path, "utf8") === text, `${path} is stale`).toBe(true);
  });

  it("both bundle forms have a sample: JSON values and canonical hex", () => {
    const forms = KIT_BUNDLES.map((name) => JSON.parse(readFileSync(kitBundlePath(name), "utf8").split("\n")[1]!) as Record<string, unknown>);
    expect(forms.map((line) => ("hex" in line ? "hex" : "json"))).toEqual(KIT_BUNDLES.map((n) => KIT_BUNDLE_FORMS[n]));
    expect(new Set(Object.values(KIT_BUNDLE_FORMS))).toEqual(new Set(["json", "hex"]));
  });
});
