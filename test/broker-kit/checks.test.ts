// What every rule check shares (src/broker-kit/checks.ts) in process: a check is counted under its
// rule and, failing, recorded once with the artifact's line and type, the rule's section and the
// evidence (built only on failure); B1 (CIP-39 §4, §7 check 2) names the first field of a foreign
// signing context and a foreign stream id; B2 (§3, §9.3, §14) refuses a served_at of another chain
// instance, a height without a block, a block hash that is not the chain's and a block where the
// stream does not exist, and yields the view otherwise; B3 (§4.3, §14) is strict Ed25519 under the
// stream's provider key at the view; every served_at height nested anywhere in an artifact is read.
import { describe, expect, it } from "vitest";
import type { Artifact } from "../../src/broker-kit/bundle.js";
import type { ChainView, ViewRead } from "../../src/broker-kit/chain-source.js";
import { Checks, hex, servedHeights, short, verifies } from "../../src/broker-kit/checks.js";
import { KIT_KEYS } from "../../src/broker-kit/kit.js";
import { label32, signingKey } from "../../src/broker-kit/signer.js";
import { toHex } from "../../src/bytes.js";
import type { FinalizedViewV1, StreamRecordV1 } from "../../src/codec/types.js";
import { ed25519Sign } from "../../src/crypto/ed25519.js";

const INSTANCE = label32("instance");
const CONTEXT = { version: 1, chain_id: 7n, chain_instance_id: INSTANCE };
const STREAM = label32("stream");
const PROVIDER = KIT_KEYS.provider.seed;

function view(height: bigint): ChainView {
  const stream = { provider_signing_key: signingKey(PROVIDER) } as StreamRecordV1;
  return { height, blockHash: label32(`block/${height}`), stream, provider: null, bounds: {}, effectiveRentHeight: height };
}

const VIEWS = new Map<bigint, ViewRead>([
  [10n, { kind: "view", view: view(10n) }],
  [11n, { kind: "no-block" }],
  [12n, { kind: "no-stream", blockHash: label32("block/12") }],
]);
const checks = () => new Checks(CONTEXT, STREAM, VIEWS, "Standard");
const artifact = (line: number): Artifact => ({ line, type: "AppendReceiptV1", value: {} }) as unknown as Artifact;
const served = (height: bigint, blockHash = label32(`block/${height}`), instance = INSTANCE): FinalizedViewV1 => ({ chain_instance_id: instance, height, block_hash: blockHash });
const found = (c: Checks) => c.failures.map((f) => [f.line, f.type, f.rule, f.section, f.evidence]);

describe("a rule's check: counted, and recorded once when it fails", () => {
  it("a passing check counts under its rule and builds no evidence; a failing one records line, type, rule, the rule's section and the evidence", () => {
    const c = checks();
    expect(c.check(artifact(2), "B17", true, () => { throw new Error("evidence built for a passing check"); })).toBe(true);
    expect(c.check(artifact(3), "B17", false, () => "the payload_hash differs")).toBe(false);
    expect(c.check(artifact(4), "B9", true, () => "")).toBe(true);
    expect(found(c)).toEqual([[3, "AppendReceiptV1", "B17", "§10, §13.2, §14.1", "the payload_hash differs"]]);
    expect([...c.counts]).toEqual([["B17", 2], ["B9", 1]]);
  });

  it("fail records without counting; a note is kept once, in the order first given", () => {
    const c = checks();
    c.fail(artifact(5), "B3", "forged");
    expect([found(c), c.counts.size]).toEqual([[[5, "AppendReceiptV1", "B3", "§4.3, §14", "forged"]], 0]);
    c.note("a");
    c.note("b");
    c.note("a");
    expect(c.notes).toEqual(["a", "b"]);
  });

  it("the checker holds the context, stream and class it was given", () => {
    const c = checks();
    expect([c.context, c.stream, c.deliveryClass]).toEqual([CONTEXT, STREAM, "Standard"]);
  });
});

describe("B1 (§4, §7 check 2): this chain's signing context and the bundle's stream", () => {
  const context = (o: Partial<typeof CONTEXT>) => ({ ...CONTEXT, ...o });
  const b1 = (ctx: typeof CONTEXT): [boolean, unknown[]] => {
    const c = checks();
    const ok = c.contextOf(artifact(2), ctx, "the grant");
    expect(c.counts.get("B1")).toBe(1);
    return [ok, found(c).map((f) => f[4])];
  };

  it("the chain's own context passes", () => {
    expect(b1(context({}))).toEqual([true, []]);
  });

  it("a foreign context is refused naming its first wrong field: version, then chain_id, then chain_instance_id", () => {
    const other = label32("other instance");
    expect(b1(context({ version: 2, chain_id: 8n, chain_instance_id: other }))).toEqual([false, ["the grant.context: version is 2, not 1"]]);
    expect(b1(context({ chain_id: 8n, chain_instance_id: other }))).toEqual([false, ["the grant.context: chain_id is 8; this chain's is 7"]]);
    expect(b1(context({ chain_instance_id: other }))).toEqual([false, [`the grant.context: chain_instance_id is ${toHex(other)}; this chain's is ${toHex(INSTANCE)}`]]);
  });

  it("a stream id other than the bundle's is refused naming both", () => {
    const c = checks();
    expect(c.streamOf(artifact(2), STREAM, "the append body's stream_id")).toBe(true);
    const other = label32("other stream");
    expect(c.streamOf(artifact(3), other, "the append body's stream_id")).toBe(false);
    expect(found(c)).toEqual([[3, "AppendReceiptV1", "B1", "§4, §7 check 2", `the append body's stream_id is ${toHex(other)}, not the bundle's stream ${toHex(STREAM)}`]]);
    expect(c.counts.get("B1")).toBe(2);
  });
});

describe("B2 (§3, §9.3, §14): served_at is a block of this chain at which the stream exists", () => {
  const b2 = (s: FinalizedViewV1) => {
    const c = checks();
    const v = c.servedAt(artifact(4), s, "the receipt");
    return { view: v, failures: found(c).map((f) => [f[2], f[4]]), checks: c.counts.get("B2") };
  };

  it("a block of this chain holding the stream yields the chain's view there, after two B2 checks", () => {
    expect(b2(served(10n))).toEqual({ view: view(10n), failures: [], checks: 2 });
  });

  it("another chain instance is refused before the height is looked up", () => {
    const other = label32("other instance");
    expect(b2(served(99n, label32("x"), other))).toEqual({
      view: undefined,
      failures: [["B2", `the receipt.served_at.chain_instance_id is ${toHex(other)}; this chain's is ${toHex(INSTANCE)}`]],
      checks: 1,
    });
  });

  it("a height without a block is refused naming it", () => {
    expect(b2(served(11n))).toEqual({ view: undefined, failures: [["B2", "the receipt.served_at names height 11, at which this chain has no block"]], checks: 2 });
  });

  it("a block hash that is not the chain's at that height is refused naming both, whether or not the stream exists there", () => {
    const wrong = label32("not the block");
    expect(b2(served(10n, wrong))).toEqual({
      view: undefined,
      failures: [["B2", `the receipt.served_at.block_hash is ${toHex(wrong)}; the chain's block at height 10 is ${toHex(label32("block/10"))}`]],
      checks: 2,
    });
    expect(b2(served(12n, wrong))).toEqual({
      view: undefined,
      failures: [["B2", `the receipt.served_at.block_hash is ${toHex(wrong)}; the chain's block at height 12 is ${toHex(label32("block/12"))}`]],
      checks: 2,
    });
  });

  it("the chain's block at a height where the stream does not exist is refused as such", () => {
    expect(b2(served(12n))).toEqual({ view: undefined, failures: [["B2", "the receipt.served_at: the stream does not exist at height 12"]], checks: 3 });
  });
});

describe("B3 (§4.3, §14): a provider receipt verifies under the stream's provider key at its view", () => {
  const digest = label32("signing digest");

  it("the provider's signature over the digest passes; another key's, or over another digest, is refused naming the key and height", () => {
    const c = checks();
    const v = view(10n);
    expect(c.providerSignature(artifact(2), v, digest, ed25519Sign(PROVIDER, digest), "the append receipt")).toBe(true);
    expect(c.providerSignature(artifact(3), v, digest, ed25519Sign(KIT_KEYS.holder.seed, digest), "the append receipt")).toBe(false);
    expect(c.providerSignature(artifact(4), v, label32("other digest"), ed25519Sign(PROVIDER, digest), "the checkpoint receipt")).toBe(false);
    const key = toHex(signingKey(PROVIDER).key);
    expect(found(c)).toEqual([
      [3, "AppendReceiptV1", "B3", "§4.3, §14", `the append receipt.signature does not verify under the stream's provider_signing_key ${key} at height 10`],
      [4, "AppendReceiptV1", "B3", "§4.3, §14", `the checkpoint receipt.signature does not verify under the stream's provider_signing_key ${key} at height 10`],
    ]);
    expect(c.counts.get("B3")).toBe(3);
  });

  it("verifies is strict Ed25519 under the key's 32 bytes", () => {
    const key = signingKey(PROVIDER);
    expect(verifies(key, digest, ed25519Sign(PROVIDER, digest))).toBe(true);
    expect(verifies(key, digest, new Uint8Array(64))).toBe(false);
  });
});

describe("the heights a bundle names: every served_at, however deep", () => {
  it("served_at heights in nested objects and arrays are collected once each; bytes, scalars, a view under another name and a served_at that is no view are not", () => {
    const into = new Set<bigint>([1n]);
    servedHeights(
      {
        served_at: served(10n),
        receipts: [{ served_at: served(12n) }, [{ inner: { served_at: served(10n) } }], null, 5n, "x"],
        bytes: new Uint8Array([1, 2]),
        odd: { served_at: { height: 13, nested: { served_at: served(14n) } } },
        none: { served_at: null },
        absent: { served_at: undefined },
        // A view under another name is not a served_at.
        view: served(20n),
        also: { observed_at: served(21n) },
      },
      into,
    );
    expect([...into]).toEqual([1n, 10n, 12n, 14n]);
  });

  it("a top-level array, bytes or a scalar add nothing of their own", () => {
    const into = new Set<bigint>();
    servedHeights([{ served_at: served(3n) }], into);
    servedHeights(new Uint8Array(32), into);
    servedHeights(null, into);
    servedHeights(7n, into);
    expect([...into]).toEqual([3n]);
  });
});

describe("how evidence names bytes", () => {
  it("hex is the full 0x hex; short is its first 16 digits and an ellipsis", () => {
    const b = label32("x");
    expect(hex(b)).toBe(toHex(b));
    expect(short(b)).toBe(`${toHex(b).slice(0, 18)}…`);
    expect(short(new Uint8Array([0xab, 0xcd]))).toBe("0xabcd…");
  });
});
