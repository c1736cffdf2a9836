// The view rules (CIP-39 §6, §6.1, §7, §14; the kit's B28–B30) in process, each reached alone on
// a synthetic chain view: a mutation needs an Active record (B30: a Suspended one is named in or
// past its grace window) whose escrow covers the rent accrued through the view's
// effective_rent_height, failing closed below last_settled_block or past u128 (B29); along one
// chain of receipts nothing is signed from a view older than a watched change (B28).
import { describe, expect, it } from "vitest";
import type { Artifact } from "../../src/broker-kit/bundle.js";
import type { ChainView } from "../../src/broker-kit/chain-source.js";
import { checkEconomics, ViewCursor } from "../../src/broker-kit/check-views.js";
import { Checks } from "../../src/broker-kit/checks.js";
import { label32, signingKey } from "../../src/broker-kit/signer.js";
import { KIT_KEYS } from "../../src/broker-kit/kit.js";
import type { StreamRecordV1 } from "../../src/codec/types.js";

const U128_MAX = (1n << 128n) - 1n;
const CONTEXT = { version: 1, chain_id: 7n, chain_instance_id: label32("instance") };

function view(height: bigint, stream: Partial<StreamRecordV1>, effectiveRentHeight = height): ChainView {
  const record = {
    status: "Active",
    suspension_grace_deadline_block: null,
    last_settled_block: 0n,
    rate_per_block: 0n,
    escrow_balance: 0n,
    provider_signing_key: signingKey(KIT_KEYS.provider.seed),
    provider_epoch: 0n,
    authorization_generation: 1n,
    encryption_generation: 0n,
    ...stream,
  } as StreamRecordV1;
  return { height, blockHash: label32(`block/${height}`), stream: record, provider: null, bounds: {}, effectiveRentHeight };
}

const artifact = (line: number): Artifact => ({ line, type: "AppendReceiptV1", value: {} }) as unknown as Artifact;
const checks = () => new Checks(CONTEXT, label32("stream"), new Map(), "Standard");

/** checkEconomics of one receipt served at `v`: its failures as [rule, evidence], and the checks counted. */
function economics(v: ChainView): { failures: Array<[string, string]>; b29: number } {
  const c = checks();
  checkEconomics(c, artifact(2), v, "the append receipt");
  return { failures: c.failures.map((f) => [f.rule, f.evidence]), b29: c.counts.get("B29") ?? 0 };
}

describe("B30 (§6.1): a mutation is served only from an Active record", () => {
  it("a Suspended record is refused, named past its pinned grace deadline from the deadline itself on, and in its window before it", () => {
    const at = (erh: bigint, deadline: bigint | null) => economics(view(20n, { status: "Suspended", suspension_grace_deadline_block: deadline }, erh)).failures;
    expect(at(15n, 15n)).toEqual([["B30", "the append receipt served at height 20, where the stream is Suspended, at or past its pinned grace deadline 15 (effective rent height 15): a broker serves no mutation then (§6.1)"]]);
    expect(at(14n, 15n)).toEqual([["B30", "the append receipt served at height 20, where the stream is Suspended (in its grace window: deadline 15, effective rent height 14): a broker serves no mutation then (§6.1)"]]);
    expect(at(14n, null)).toEqual([["B30", "the append receipt served at height 20, where the stream is Suspended: a broker serves no mutation then (§6.1)"]]);
  });

  it("an Active record passes B30, and only then is B29 checked", () => {
    expect(economics(view(20n, {})).failures).toEqual([]);
    expect(economics(view(20n, { status: "Suspended" })).b29).toBe(0);
  });
});

describe("B29 (§6, §6.1): the escrow covers the rent accrued through effective_rent_height", () => {
  it("an effective rent height below last_settled_block fails closed; at it, nothing has accrued", () => {
    expect(economics(view(20n, { last_settled_block: 11n }, 10n)).failures).toEqual([
      ["B29", "the append receipt served at height 20: effective_rent_height 10 is below last_settled_block 11, which fails closed"],
    ]);
    expect(economics(view(20n, { last_settled_block: 10n, rate_per_block: 5n }, 10n))).toEqual({ failures: [], b29: 3 });
  });

  it("accrued rent past u128 fails closed; exactly u128 max, covered, passes", () => {
    expect(economics(view(20n, { last_settled_block: 0n, rate_per_block: U128_MAX, escrow_balance: U128_MAX }, 2n)).failures).toEqual([
      ["B29", "the append receipt served at height 20: the accrued rent overflows u128, which fails closed"],
    ]);
    expect(economics(view(20n, { last_settled_block: 0n, rate_per_block: U128_MAX, escrow_balance: U128_MAX }, 1n)).failures).toEqual([]);
  });

  it("an escrow equal to the accrued rent is enough; one less is not, and the evidence shows the sum", () => {
    const v = (escrow: bigint) => view(20n, { last_settled_block: 4n, rate_per_block: 3n, escrow_balance: escrow }, 10n);
    expect(economics(v(18n)).failures).toEqual([]);
    expect(economics(v(17n)).failures).toEqual([
      ["B29", "the append receipt served at height 20: escrow_balance 17 is below the rent accrued through effective_rent_height 10: (10 − last_settled_block 4) × rate_per_block 3 = 18"],
    ]);
  });
});

describe("B28 (§7, §14): no receipt from a view older than a watched change along its chain", () => {
  it("an older view with every watched field the same is allowed; with one changed, refused naming it and its values", () => {
    const c = checks();
    const cursor = new ViewCursor(c);
    cursor.see(artifact(2), "global", view(10n, { status: "Active" }));
    cursor.see(artifact(3), "global", view(12n, { provider_epoch: 1n }));
    cursor.see(artifact(4), "global", view(11n, { provider_epoch: 1n }));
    expect(c.failures).toEqual([]);
    cursor.see(artifact(5), "global", view(9n, { provider_epoch: 0n }));
    expect(c.failures.map((f) => [f.line, f.rule, f.evidence])).toEqual([
      [5, "B28", "served at height 9, older than height 12 of the global receipt on line 3, by which provider_epoch had changed (0 → 1): the broker had observed the change"],
    ]);
  });

  it("each chain keeps its own newest view, and every receipt after a chain's first counts as one B28 check", () => {
    const c = checks();
    const cursor = new ViewCursor(c);
    cursor.see(artifact(2), "global", view(12n, { provider_epoch: 1n }));
    cursor.see(artifact(3), "group/a", view(9n, { provider_epoch: 0n }));
    expect(c.failures).toEqual([]);
    expect(c.counts.get("B28") ?? 0).toBe(0);
    cursor.see(artifact(4), "global", view(13n, { provider_epoch: 1n }));
    cursor.see(artifact(5), "group/a", view(8n, { status: "Suspended" }));
    expect(c.counts.get("B28")).toBe(2);
    expect(c.failures.map((f) => [f.line, f.evidence])).toEqual([[5, "served at height 8, older than height 9 of the group/a receipt on line 3, by which status had changed (Suspended → Active): the broker had observed the change"]]);
  });
});
