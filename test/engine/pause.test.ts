import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { CbqsError } from "../../src/engine/errors.js";
import { REGISTRY_ADDRESS } from "../../src/engine/layout.js";
import { applyExtendPause, applyPause, applyUnpause, coverage, effectiveRentHeight, isPaused, NEVER_PAUSED, pauseRecordKey } from "../../src/engine/pause.js";
import { encodeStateValue } from "../../state/kv/value.js";
import { cbqs, GOV, gov, ix, OTHER, OWNER, PROVIDER, snapshot, STANDARD_ONE_UNIT_RATE, TestChain, genesisConfig, writeOutOfBand } from "./harness.js";

const R = STANDARD_ONE_UNIT_RATE;

describe("Denial of service: pause accounting", () => {
  it("coverage(H) = completed + min(H, expires) − paused_at (the min cap in both directions)", () => {
    const p = applyPause(NEVER_PAUSED, 10n, 5n); // [10, 15)
    expect(coverage(p, 10n)).toBe(0n);
    expect(coverage(p, 12n)).toBe(2n);
    expect(coverage(p, 15n)).toBe(5n);
    expect(coverage(p, 1000n)).toBe(5n); // capped at expiry, never frozen
    expect(effectiveRentHeight(p, 12n)).toBe(10n);
    expect(effectiveRentHeight(p, 20n)).toBe(15n);
  });

  it("Pause folds an auto-expired prior interval; Pause on a running interval is rejected", () => {
    const p = applyPause(NEVER_PAUSED, 10n, 5n);
    expect(() => applyPause(p, 12n, 3n)).toThrow(/already paused/);
    const q = applyPause(p, 40n, 3n);
    expect(q).toEqual({ completed_pause_blocks: 5n, active: { paused_at_block: 40n, expires_at_block: 43n } });
  });

  it("ExtendPause refreshes the expiry to H + blocks; Unpause folds elapsed coverage capped at expiry", () => {
    const p = applyPause(NEVER_PAUSED, 10n, 5n);
    const e = applyExtendPause(p, 12n, 10n);
    expect(e.active).toEqual({ paused_at_block: 10n, expires_at_block: 22n });
    expect(() => applyExtendPause(p, 12n, 1n)).toThrow(/later/);
    expect(applyUnpause(e, 14n)).toEqual({ completed_pause_blocks: 4n, active: null });
    expect(applyUnpause(e, 100n)).toEqual({ completed_pause_blocks: 12n, active: null });
    expect(() => applyUnpause(NEVER_PAUSED, 5n)).toThrow();
  });

  it("ExtendPause must move the expiry strictly later, and only while the interval still covers H", () => {
    const p = applyPause(NEVER_PAUSED, 10n, 5n); // [10, 15)
    expect(() => applyExtendPause(p, 12n, 3n)).toThrow(/must move the expiry later/); // 12 + 3 = 15: not later
    expect(applyExtendPause(p, 12n, 4n).active).toEqual({ paused_at_block: 10n, expires_at_block: 16n });
    expect(applyExtendPause(p, 14n, 2n).active).toEqual({ paused_at_block: 10n, expires_at_block: 16n });
    expect(() => applyExtendPause(p, 15n, 5n)).toThrow(/not paused/); // lapsed at its expiry height
    expect(() => applyExtendPause(NEVER_PAUSED, 15n, 5n)).toThrow(/not paused/);
  });

  it("pause-breaker boundary: the breaker is on at H exactly when block H is counted as a paused block (fast-check)", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: 1000n }), fc.bigInt({ min: 1n, max: 50n }), fc.bigInt({ min: 0n, max: 100n }), (start, blocks, h) => {
        const p = applyPause(NEVER_PAUSED, start, blocks);
        const H = start + h;
        expect(isPaused(p, H)).toBe(coverage(p, H + 1n) - coverage(p, H) === 1n);
        expect(isPaused(p, start - 1n)).toBe(false);
      }),
      { seed: 9 },
    );
    const p = applyPause(NEVER_PAUSED, 10n, 5n);
    expect([9n, 10n, 14n, 15n].map((h) => isPaused(p, h))).toEqual([false, true, true, false]);
  });

  it("a Pause at exactly the prior interval's expiry height folds it and starts a new one", () => {
    const p = applyPause(NEVER_PAUSED, 10n, 5n); // [10, 15)
    expect(applyPause(p, 15n, 3n)).toEqual({ completed_pause_blocks: 5n, active: { paused_at_block: 15n, expires_at_block: 18n } });
    expect(() => applyPause(p, 14n, 3n)).toThrow(/already paused/);
  });

  it("pause arithmetic is checked and each refusal says which quantity", () => {
    const U64_MAX = (1n << 64n) - 1n;
    const reason = (f: () => unknown) => {
      try {
        f();
        return "ok";
      } catch (err) {
        return (err as Error).message;
      }
    };
    expect(reason(() => applyPause(NEVER_PAUSED, 10n, 0n))).toBe("Pause blocks must be at least 1");
    expect(reason(() => applyPause(NEVER_PAUSED, U64_MAX, 1n))).toBe("pause expiry overflows");
    expect(reason(() => applyExtendPause(applyPause(NEVER_PAUSED, U64_MAX - 2n, 1n), U64_MAX - 2n, 3n))).toBe("pause expiry overflows");
    const p = applyPause(NEVER_PAUSED, 10n, 5n);
    expect(reason(() => coverage(p, 9n))).toBe("pause coverage overflows"); // a height before the interval
    expect(reason(() => coverage({ completed_pause_blocks: U64_MAX, active: { paused_at_block: 1n, expires_at_block: 3n } }, 2n))).toBe("pause coverage overflows");
    expect(reason(() => effectiveRentHeight({ completed_pause_blocks: 10n, active: null }, 5n))).toBe("effective rent height overflows");
  });

  it("effective_rent_height never exceeds H and never decreases as H grows (fast-check)", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 1000n }), fc.bigInt({ min: 1n, max: 1000n }), fc.bigInt({ min: 0n, max: 3000n }), (start, blocks, h) => {
        const p = applyPause(NEVER_PAUSED, start, blocks);
        const H = start + h;
        const e = effectiveRentHeight(p, H);
        expect(e <= H).toBe(true);
        expect(effectiveRentHeight(p, H + 1n) >= e).toBe(true);
      }),
    );
  });

  it("the breaker rejects every CBQS instruction while 0x17 is paused, with no event and no state change", () => {
    const t = new TestChain();
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    t.ok(gov({ type: "Pause", actor: REGISTRY_ADDRESS, blocks: 10n }), 5n);
    const before = snapshot(t);
    const o = t.tx(cbqs(OWNER, ix.createStream()), 6n);
    expect(o.error!.name).toBe("RegistryPaused");
    expect(o.events).toEqual([]);
    expect([o.reads, o.writes]).toEqual([0, 0]);
    expect(snapshot(t)).toEqual(before);
    expect(t.chain.pause().active).toEqual({ paused_at_block: 5n, expires_at_block: 15n });
    // auto-expiry: at the expiry height the breaker no longer covers 0x17
    expect(t.tx(cbqs(OWNER, ix.createStream()), 15n).status).toBe("ok");
  });

  it("paused blocks do not accrue rent or move grace: stored heights are effective rent heights", () => {
    const t = new TestChain(genesisConfig({ "cbqs.suspend_grace_blocks": 10n }));
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    t.ok(cbqs(OWNER, ix.createStream({ initial_escrow: 100n * R }))); // created at 2
    t.ok(gov({ type: "Pause", actor: REGISTRY_ADDRESS, blocks: 20n }), 10n); // covers [10, 30)
    const b = t.block([], 25n);
    expect(b.effectiveRentHeight).toBe(10n);
    t.ok(gov({ type: "Unpause", actor: REGISTRY_ADDRESS }), 26n); // folds 16
    expect(t.chain.pause()).toEqual({ completed_pause_blocks: 16n, active: null });
    const o = t.ok(cbqs(OTHER, ix.settle(t.streamId())), 40n); // effective 24
    expect(o.status).toBe("ok");
    const rec = t.chain.stream(t.streamId())!;
    expect(rec.last_settled_block).toBe(24n);
    expect(rec.escrow_balance).toBe(100n * R - 22n * R);
  });

  it("governance actions are valid only from the governance account", () => {
    const t = new TestChain();
    expect(t.tx(gov({ type: "Pause", actor: REGISTRY_ADDRESS, blocks: 1n }, OWNER)).error!.name).toBe("Unauthorized");
  });
});

describe("§18 governance parameter writes", () => {
  it("§18 only the 25 live scalars are writable, within [min, Maximum], with the bps sum guard on the result", () => {
    const t = new TestChain();
    const err = (action: Parameters<typeof gov>[0]) => t.tx(gov(action)).error?.name;
    expect(err({ type: "SetParam", name: "cbqs.base_rate.standard.retained_unit_rate_per_block", value: 1n })).toBe("InvalidGovernanceAction");
    expect(err({ type: "SetParam", name: "cbqs.max_wire_frame_bytes", value: 1n })).toBe("InvalidGovernanceAction");
    expect(err({ type: "SetParam", name: "cbqs.max_streams_per_owner", value: 16_385n })).toBe("InvalidGovernanceAction");
    expect(err({ type: "SetParam", name: "cbqs.max_streams_per_owner", value: 0n })).toBe("InvalidGovernanceAction");
    expect(err({ type: "SetParam", name: "cbqs.rent.provider_bps", value: 8000n })).toBe("InvalidGovernanceAction");
    expect(t.tx(gov({ type: "SetParam", name: "cbqs.suspend_grace_blocks", value: 0n })).status).toBe("ok");
    expect(
      t.tx(gov({ type: "SetParams", values: [{ name: "cbqs.rent.provider_bps", value: 10_000n }, { name: "cbqs.rent.platform_bps", value: 0n }] })).status,
    ).toBe("ok");
    expect(t.chain.params().get("cbqs.rent.provider_bps")).toBe(10_000n);
  });
});

describe("Denial of service: pause accounting through governance transactions", () => {
  it("ExtendPause keeps the breaker on past the original expiry; pausing another actor does not cover 0x17", () => {
    const t = new TestChain();
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    t.ok(gov({ type: "Pause", actor: PROVIDER, blocks: 100n }), 3n);
    expect(t.tx(cbqs(OWNER, ix.createStream()), 4n).status).toBe("ok");
    t.ok(gov({ type: "Pause", actor: REGISTRY_ADDRESS, blocks: 5n }), 10n); // [10, 15)
    t.ok(gov({ type: "ExtendPause", actor: REGISTRY_ADDRESS, blocks: 10n }), 12n); // [10, 22)
    expect(t.tx(cbqs(OWNER, ix.settle(t.streamId())), 16n).error!.name).toBe("RegistryPaused");
    expect(t.block([], 30n).effectiveRentHeight).toBe(18n);
    // the expired interval sits unfolded until the next Pause folds it
    expect(t.chain.pause().active).toEqual({ paused_at_block: 10n, expires_at_block: 22n });
    t.ok(gov({ type: "Pause", actor: REGISTRY_ADDRESS, blocks: 2n }), 40n);
    expect(t.chain.pause()).toEqual({ completed_pause_blocks: 12n, active: { paused_at_block: 40n, expires_at_block: 42n } });
    expect(t.tx(gov({ type: "ExtendPause", actor: REGISTRY_ADDRESS, blocks: 1n }), 50n).error!.name).toBe("InvalidGovernanceAction");
  });
});

describe("the pause-accounting record is read fail-closed", () => {
  it("a pause record that is not a storage slot (state corruption) is RegistryStateInvalid, and the block is not executed", () => {
    const t = new TestChain();
    writeOutOfBand(t, pauseRecordKey(GOV, REGISTRY_ADDRESS), encodeStateValue({ kind: "Account", nonce: 0n, balance: 1n }));
    const before = snapshot(t);
    // The end-of-block effective rent height reads the record outside any transaction, so
    // the refusal aborts the whole block rather than one transaction.
    for (const tx of [cbqs(PROVIDER, ix.registerProvider()), gov({ type: "Pause", actor: REGISTRY_ADDRESS, blocks: 5n })]) {
      let thrown: unknown;
      try {
        t.tx(tx);
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(CbqsError);
      expect([(thrown as CbqsError).errorName, (thrown as CbqsError).message]).toEqual(["RegistryStateInvalid", "pause-accounting record is not a storage slot"]);
    }
    expect(snapshot(t)).toEqual(before);
  });
});
