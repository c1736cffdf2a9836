// The verifier on the kit's reference bundles — every one accepted in either form, the
// three together exercising all 30 rules — and on bundles that start mid-history or lack part of
// what a check needs: a chain restarting at retention anchors, a response whose request is not in
// the bundle, checkpoints whose records are (partly) missing.
import { describe, expect, it } from "vitest";
import type { Artifact, Bundle } from "../../src/broker-kit/bundle.js";
import { KIT_BUNDLES, KIT_KEYS } from "../../src/broker-kit/kit.js";
import { RULE_IDS } from "../../src/broker-kit/rules.js";
import { ZERO32 } from "../../src/broker-kit/signer.js";
import { verifyBundle } from "../../src/broker-kit/verify.js";
import { utf8 } from "../../src/bytes.js";
import { kitBundleRead, kitChain } from "./kit.js";

async function verify(bundle: Bundle) {
  return verifyBundle(bundle, (await kitChain()).chain.source);
}

const without = (b: Bundle, drop: (a: Artifact) => boolean): Bundle => ({ ...b, artifacts: b.artifacts.filter((a) => !drop(a)) });

describe("the verifier on the reference bundles", () => {
  it("each reference bundle is accepted, the JSON and the hex form alike, and the three together exercise all 30 rules", async () => {
    const exercised = new Set<string>();
    for (const name of KIT_BUNDLES) {
      const json = await verify(await kitBundleRead(name, {}, "json"));
      const hex = await verify(await kitBundleRead(name, {}, "hex"));
      expect(json.failures).toEqual([]);
      expect(hex).toEqual(json);
      for (const [id, n] of Object.entries(json.checks)) if (n > 0) exercised.add(id);
    }
    expect(RULE_IDS.filter((id) => !exercised.has(id))).toEqual([]);
  });

  it("the stream's class comes from the chain: Standard, Fast, Standard", async () => {
    const classes = [];
    for (const name of KIT_BUNDLES) classes.push((await verify(await kitBundleRead(name))).deliveryClass);
    expect(classes).toEqual(["Standard", "Fast", "Standard"]);
  });

  it("a bundle may start at retention anchors: the global and lane chains restart from their predecessor digests (§15)", async () => {
    const full = await kitBundleRead("standard", {
      extra: {
        at: "end",
        run: async (k) => {
          const v8 = await k.view(8n);
          k.signer.standardAnchor(v8, 7n, null);
          k.signer.standardAnchor(v8, 7n, ZERO32);
          const s3 = k.signer.openSession(k.sessions["s2"]!.grant, KIT_KEYS.holder2.seed, v8, "standard/3");
          k.signer.append(s3, v8, { lane: ZERO32, payload: utf8("after the floor"), label: "standard/after" });
        },
      },
    });
    const anchors = full.artifacts.filter((a) => a.type === "StandardRetentionAnchorV1").slice(-2);
    const grant2 = full.artifacts.filter((a) => a.type === "StreamGrantV1")[1]!;
    const tail = full.artifacts.slice(full.artifacts.indexOf(anchors[1]!) + 1);
    expect(tail.map((a) => a.type)).toEqual(["SessionChallengeV1", "SessionProofV1", "SessionOpenedV1", "AuthenticatedRequestV1", "CbqsResponseV1"]);
    const cut = { ...full, artifacts: [grant2, ...anchors, ...tail] };
    const report = await verify(cut);
    expect(report.failures).toEqual([]);
    expect(report.checks.B15).toBeGreaterThan(0);
    expect(report.checks.B16).toBeGreaterThan(0);
    // Without the anchors the same receipt is off both chains.
    const unanchored = await verify({ ...cut, artifacts: [grant2, ...tail] });
    expect(unanchored.failures.map((f) => f.rule)).toEqual(["B15", "B16"]);
  });

  it("a response whose request is not in the bundle: its receipts are checked, the grant behind it is not (a note says so)", async () => {
    const b = await kitBundleRead("econ");
    const report = await verify(without(b, (a) => a.type === "AuthenticatedRequestV1"));
    expect(report.failures).toEqual([]);
    expect(report.notes.filter((n) => /answers no request in the bundle/.test(n))).toHaveLength(2);
    expect(report.checks.B15).toBeGreaterThan(0);
    expect(report.checks.B10).toBe(0);
  });

  it("checkpoints whose records the bundle does not carry are noted, not checked; a batch carried in part is refused (B25)", async () => {
    const b = await kitBundleRead("fast");
    const isRecord = (a: Artifact) => a.type === "RecordDeliveryV1" || a.type === "AuthenticatedRequestV1" || (a.type === "CbqsResponseV1" && a.value.body.type === "Append");
    const none = await verify(without(b, isRecord));
    expect(none.failures).toEqual([]);
    expect(none.notes.filter((n) => /the bundle carries none of its records/.test(n))).toHaveLength(3);
    // Without the deliveries the lane event's record (sequence 1) is missing from the first batch.
    const part = await verify(without(b, (a) => a.type === "RecordDeliveryV1"));
    expect(part.failures.map((f) => [f.rule, f.evidence])).toEqual([["B25", "the bundle carries only part of the batch 0..=2: records 1 are missing (§12.2: a missing record is rejected before the root)"]]);
  });
});
