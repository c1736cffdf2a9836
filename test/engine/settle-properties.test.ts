import { describe, expect, it } from "vitest";
import fc from "fast-check";
import type { StreamRecordV1 } from "../../src/codec/types.js";
import { CbqsError } from "../../src/engine/errors.js";
import { settle } from "../../instructions/settle.js";
import { pubKey, seed, standardConfig } from "./harness.js";

function record(over: Partial<StreamRecordV1>): StreamRecordV1 {
  return {
    version: 1,
    chain_instance_id: new Uint8Array(32),
    stream_id: new Uint8Array(32).fill(1),
    purpose: "Main",
    owner: new Uint8Array(20),
    owner_nonce: 0n,
    admin_key: pubKey(seed(1)),
    rotation_key: null,
    delivery_class: "Standard",
    encrypted: false,
    linked_stream_id: null,
    provider: new Uint8Array(20),
    provider_epoch: 0n,
    provider_signing_key: pubKey(seed(2)),
    authorization_generation: 1n,
    encryption_generation: 0n,
    pricing_generation: 1n,
    status: "Active",
    config: standardConfig(),
    pricing_basis: { type: "GovernanceBase", schedule_version: 1n, schedule_digest: new Uint8Array(32) },
    rate_per_block: 8_000n,
    escrow_balance: 0n,
    last_settled_block: 0n,
    suspended_at_block: null,
    suspension_grace_deadline_block: null,
    created_at_block: 0n,
    ...over,
  };
}

const arbRecord = fc
  .record({
    rate: fc.bigInt({ min: 8_000n, max: 10n ** 12n }),
    escrow: fc.bigInt({ min: 0n, max: 10n ** 15n }),
    last: fc.bigInt({ min: 0n, max: 10n ** 6n }),
    suspended: fc.boolean(),
    pinOffset: fc.bigInt({ min: 0n, max: 1000n }),
    grace: fc.bigInt({ min: 0n, max: 1000n }),
  })
  .map((v) =>
    record({
      rate_per_block: v.rate,
      escrow_balance: v.suspended ? v.escrow % v.rate : v.escrow,
      last_settled_block: v.last,
      status: v.suspended ? "Suspended" : "Active",
      suspended_at_block: v.suspended ? v.last - (v.last < v.pinOffset ? v.last : v.pinOffset) : null,
      suspension_grace_deadline_block: v.suspended ? v.last - (v.last < v.pinOffset ? v.last : v.pinOffset) + v.grace : null,
    }),
  );

describe("§6.1 settle(record, H) properties (fast-check)", () => {
  it("§6.1 conserves escrow + paid, never passes H, pays whole blocks, Active iff fully paid, preserves an existing pin", () => {
    fc.assert(
      fc.property(arbRecord, fc.bigInt({ min: 0n, max: 10n ** 5n }), fc.bigInt({ min: 0n, max: 2_592_000n }), (rec, dh, grace) => {
        const H = rec.last_settled_block + dh;
        const { record: out, paid } = settle(rec, H, grace);
        expect(out.escrow_balance + paid).toBe(rec.escrow_balance);
        expect(paid % rec.rate_per_block).toBe(0n);
        expect(out.last_settled_block <= H).toBe(true);
        expect(out.last_settled_block >= rec.last_settled_block).toBe(true);
        if (out.status === "Active") {
          expect(out.last_settled_block).toBe(H);
          expect([out.suspended_at_block, out.suspension_grace_deadline_block]).toEqual([null, null]);
        } else {
          expect(out.escrow_balance < rec.rate_per_block).toBe(true);
          if (rec.status === "Suspended") {
            // the status == Active guard: partial payments never move the pinned pair
            expect(out.suspended_at_block).toBe(rec.suspended_at_block);
            expect(out.suspension_grace_deadline_block).toBe(rec.suspension_grace_deadline_block);
          } else {
            expect(out.suspended_at_block).toBe(out.last_settled_block);
            expect(out.suspension_grace_deadline_block).toBe(out.last_settled_block + grace);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it("§6.1 a missing or inverted pinned pair, stale fields on an Active record, or H below last_settled fail closed", () => {
    // Each refusal is asserted with its reason: a check that moved or vanished would otherwise
    // pass as long as a later one refused the same record.
    const refusal = (r: StreamRecordV1, H = 10n): string | null => {
      try {
        settle(r, H, 5n);
        return null;
      } catch (e) {
        return e instanceof CbqsError && e.errorName === "RegistryStateInvalid" ? e.message : `other: ${String(e)}`;
      }
    };
    const failsClosed = (r: StreamRecordV1, H = 10n): boolean => refusal(r, H) !== null;
    expect(refusal(record({ status: "Suspended", suspended_at_block: 3n, suspension_grace_deadline_block: null }))).toMatch(/missing pinned field/);
    expect(refusal(record({ status: "Suspended", suspended_at_block: null, suspension_grace_deadline_block: 3n }))).toMatch(/missing pinned field/);
    expect(refusal(record({ status: "Suspended", suspended_at_block: 3n, suspension_grace_deadline_block: 2n }))).toMatch(/inverted grace pair/);
    expect(refusal(record({ status: "Active", suspended_at_block: 3n, suspension_grace_deadline_block: 5n }))).toMatch(/^Active record carrying stale suspension fields/);
    expect(refusal(record({ status: "Active", suspended_at_block: null, suspension_grace_deadline_block: 5n }))).toMatch(/stale suspension fields/);
    expect(refusal(record({ last_settled_block: 11n }))).toMatch(/settlement height below last_settled_block/);
    expect(refusal(record({ status: "Closed" }))).toMatch(/^settle on a Closed record/);
    expect(refusal(record({ status: "DataExpired" }))).toMatch(/^settle on a DataExpired record/);
    // H == last_settled_block is a valid (empty) settlement
    expect(refusal(record({ last_settled_block: 10n }))).toBeNull();
    // equality of the pair is valid (zero-length grace)
    expect(failsClosed(record({ status: "Suspended", suspended_at_block: 3n, suspension_grace_deadline_block: 3n, last_settled_block: 3n }))).toBe(false);
  });
});

describe("§6.1 settle edges (spec-fidelity audit)", () => {
  it("§6.1 the r == 0 branch always takes the funded path: lsb = H, Active, both pins cleared, paid 0", () => {
    const suspended = record({ rate_per_block: 0n, status: "Suspended", suspended_at_block: 2n, suspension_grace_deadline_block: 9n, last_settled_block: 4n });
    const { record: out, paid } = settle(suspended, 50n, 5n);
    expect(paid).toBe(0n);
    expect([out.status, out.last_settled_block, out.suspended_at_block, out.suspension_grace_deadline_block]).toEqual(["Active", 50n, null, null]);
  });

  it("§6.1 due is checked u128: an overflowing (H − last_settled) × r fails closed", () => {
    const huge = record({ rate_per_block: 1n << 127n, escrow_balance: 0n, last_settled_block: 0n });
    expect(() => settle(huge, 2n, 5n)).toThrow(CbqsError);
    try {
      settle(huge, 2n, 5n);
    } catch (e) {
      expect((e as CbqsError).errorName).toBe("ArithmeticOverflow");
    }
    // exactly at the u128 boundary it is still representable
    expect(settle(record({ rate_per_block: (1n << 127n) - 1n, escrow_balance: 0n }), 2n, 5n).record.status).toBe("Suspended");
  });

  it("§6.1 the grace deadline is checked u64: paid-through + grace overflowing u64 fails closed", () => {
    const r = record({ rate_per_block: 8_000n, escrow_balance: 0n, last_settled_block: (1n << 64n) - 2n });
    expect(() => settle(r, (1n << 64n) - 1n, 5n)).toThrow(CbqsError);
  });
});
