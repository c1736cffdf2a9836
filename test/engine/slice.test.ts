import { describe, expect, it } from "vitest";
import { cbqs, ix, OWNER, PROVIDER, STANDARD_ONE_UNIT_RATE, TestChain } from "./harness.js";
import { REGISTRY_ADDRESS, ZERO_ADDRESS, PLATFORM_ADDRESS } from "../../src/engine/layout.js";

describe("vertical slice", () => {
  it("genesis → RegisterProvider → CreateStream → SettleStreamRent (§5, §6.1)", () => {
    const t = new TestChain();
    const reg = t.ok(cbqs(PROVIDER, ix.registerProvider()));
    expect(reg.events.map((e) => e.topic)).toEqual(["cbqs.provider.registered"]);
    const created = t.ok(cbqs(OWNER, ix.createStream({ initial_escrow: 1_000_000n })));
    expect(created.events.map((e) => e.topic)).toEqual(["cbqs.stream.created"]);
    const id = t.streamId();
    const rec = t.chain.stream(id)!;
    expect(rec.rate_per_block).toBe(STANDARD_ONE_UNIT_RATE);
    expect(t.balance(ZERO_ADDRESS)).toBe(STANDARD_ONE_UNIT_RATE * 604_800n);
    expect(t.balance(REGISTRY_ADDRESS)).toBe(1_000_000n);
    const settled = t.ok(cbqs(OWNER, ix.settle(id)), 5n);
    expect(settled.events.map((e) => e.topic)).toEqual(["cbqs.stream.rent_settled"]);
    const due = 3n * STANDARD_ONE_UNIT_RATE;
    expect(t.chain.stream(id)!.escrow_balance).toBe(1_000_000n - due);
    expect(t.balance(PROVIDER)).toBe(10n ** 18n + (due * 9000n) / 10000n);
    expect(t.balance(PLATFORM_ADDRESS)).toBe(due - (due * 9000n) / 10000n);
  });
});
