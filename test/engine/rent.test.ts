import { toHex } from "../../src/bytes.js";
import { describe, expect, it } from "vitest";
import { encode } from "../../src/codec/core.js";
import * as S from "../../src/codec/schema.js";
import { accountKey, ownerCountKey, PLATFORM_ADDRESS, providerKey, REGISTRY_ADDRESS, streamKey } from "../../src/engine/layout.js";
import { U128_MAX, U64_MAX } from "../../src/engine/math.js";
import { encodeStateValue } from "../../state/kv/value.js";
import { cbqs, gov, ix, OTHER, OWNER, PROVIDER, RICH, rawSnapshot, snapshot, STANDARD_ONE_UNIT_RATE, TestChain, genesisConfig, writeOutOfBand } from "./harness.js";

const R = STANDARD_ONE_UNIT_RATE; // 80,067 per block
const topics = (o: { events: { topic: string }[] }) => o.events.map((e) => e.topic);

/** Provider registered at 1, stream created at 2 with `escrow`, grace `grace` blocks. */
function setup(escrow: bigint, grace = 100n) {
  const t = new TestChain(genesisConfig({ "cbqs.suspend_grace_blocks": grace }));
  t.ok(cbqs(PROVIDER, ix.registerProvider()));
  t.ok(cbqs(OWNER, ix.createStream({ initial_escrow: escrow })));
  return { t, id: t.streamId() };
}

describe("§6.1 settle", () => {
  it("§6.1 funded settlement deducts due, advances last_settled_block and splits rent 90/10 to provider and 0x18", () => {
    const { t, id } = setup(100n * R);
    const o = t.ok(cbqs(OTHER, ix.settle(id)), 12n);
    expect(topics(o)).toEqual(["cbqs.stream.rent_settled"]);
    const rec = t.chain.stream(id)!;
    expect(rec.last_settled_block).toBe(12n);
    expect(rec.escrow_balance).toBe(90n * R);
    const paid = 10n * R;
    expect(t.balance(PROVIDER) - RICH).toBe((paid * 9000n) / 10000n);
    expect(t.balance(PLATFORM_ADDRESS)).toBe(paid - (paid * 9000n) / 10000n);
    expect(t.balance(REGISTRY_ADDRESS)).toBe(90n * R);
  });

  it("§6.1 underfunded settlement pays whole blocks, pins suspended_at = paid-through and deadline = + grace, emits suspended after rent_settled (§19)", () => {
    const { t, id } = setup(3n * R + 5n, 100n);
    const o = t.ok(cbqs(OTHER, ix.settle(id)), 20n);
    expect(topics(o)).toEqual(["cbqs.stream.rent_settled", "cbqs.stream.suspended"]);
    const rec = t.chain.stream(id)!;
    expect(rec.status).toBe("Suspended");
    expect(rec.last_settled_block).toBe(5n);
    expect(rec.suspended_at_block).toBe(5n);
    expect(rec.suspension_grace_deadline_block).toBe(105n);
    expect(rec.escrow_balance).toBe(5n);
  });

  it("§5 SettleStreamRent is rejected exactly when the record would be byte-identical (materialized Suspended, nothing payable)", () => {
    const { t, id } = setup(3n * R, 100n);
    t.ok(cbqs(OTHER, ix.settle(id)), 20n);
    const before = snapshot(t);
    const o = t.tx(cbqs(OTHER, ix.settle(id)), 30n);
    expect(o.status).toBe("rejected");
    expect(o.error!.name).toBe("NoOpRejected");
    expect(snapshot(t)).toEqual(before);
    // a funded settlement that advances last_settled_block is real work and is accepted
    const s2 = setup(10n * R);
    expect(s2.t.tx(cbqs(OTHER, ix.settle(s2.id)), 2n + 0n + 1n).status).toBe("ok");
  });

  it("§6.1 partial top-up on a Suspended stream advances last_settled_block but preserves both pinned fields", () => {
    const { t, id } = setup(3n * R, 100n);
    t.ok(cbqs(OTHER, ix.settle(id)), 20n); // suspended at 5, deadline 105
    const o = t.ok(cbqs(OWNER, ix.topUp(id, 4n * R)), 30n);
    expect(topics(o)).toEqual(["cbqs.stream.topped_up"]);
    const rec = t.chain.stream(id)!;
    expect(rec.status).toBe("Suspended");
    expect(rec.last_settled_block).toBe(9n);
    expect(rec.suspended_at_block).toBe(5n);
    expect(rec.suspension_grace_deadline_block).toBe(105n);
  });

  it("§6.1/§19 a reviving top-up on an unmaterialized underfunded stream emits topped_up only (net edge Active→Active)", () => {
    const { t, id } = setup(3n * R, 100n);
    const o = t.ok(cbqs(OWNER, ix.topUp(id, 100n * R)), 30n);
    expect(topics(o)).toEqual(["cbqs.stream.topped_up"]);
    const rec = t.chain.stream(id)!;
    expect(rec.status).toBe("Active");
    expect(rec.last_settled_block).toBe(30n);
    expect(rec.escrow_balance).toBe(103n * R - 28n * R);
  });

  it("§6.1/§19 top-up on a materialized Suspended stream covering the window reactivates it: topped_up then reactivated", () => {
    const { t, id } = setup(3n * R, 100n);
    t.ok(cbqs(OTHER, ix.settle(id)), 20n);
    const o = t.ok(cbqs(OTHER, ix.topUp(id, 100n * R)), 30n);
    expect(topics(o)).toEqual(["cbqs.stream.topped_up", "cbqs.stream.reactivated"]);
    const rec = t.chain.stream(id)!;
    expect(rec.status).toBe("Active");
    expect(rec.suspended_at_block).toBeNull();
    expect(rec.suspension_grace_deadline_block).toBeNull();
  });

  it("§6.1 a top-up at or past the deadline derived by its own pre-deposit settlement is rejected and persists NOTHING", () => {
    const { t, id } = setup(3n * R, 10n); // paid through 5, deadline 15
    const before = t.chain.stream(id)!;
    const state = snapshot(t);
    const o = t.tx(cbqs(OWNER, ix.topUp(id, 1000n * R)), 15n);
    expect(o.status).toBe("rejected");
    expect(o.error!.name).toBe("GraceDeadlinePassed");
    expect(o.events).toEqual([]);
    expect(snapshot(t)).toEqual(state);
    expect(t.chain.stream(id)).toEqual(before);
    // one block earlier it would have been accepted
    const s2 = setup(3n * R, 10n);
    expect(s2.t.tx(cbqs(OWNER, ix.topUp(s2.id, 1000n * R)), 14n).status).toBe("ok");
  });

  it("§6.1 TopUpStream rejects amount = 0", () => {
    const { t, id } = setup(3n * R);
    expect(t.tx(cbqs(OWNER, ix.topUp(id, 0n))).error!.name).toBe("InvalidAmount");
  });

  it("§6.1 expiry: SettleStreamRent on a materialized Suspended record at the deadline materializes DataExpired alone, refunds the residual, releases counters", () => {
    const { t, id } = setup(3n * R + 7n, 10n);
    t.ok(cbqs(OTHER, ix.settle(id)), 8n); // suspended at 5, deadline 15
    const ownerBefore = t.balance(OWNER);
    const o = t.ok(cbqs(OTHER, ix.settle(id)), 15n);
    expect(topics(o)).toEqual(["cbqs.stream.data_expired"]);
    const rec = t.chain.stream(id)!;
    expect(rec.status).toBe("DataExpired");
    expect(rec.escrow_balance).toBe(0n);
    expect(rec.suspended_at_block).toBeNull();
    expect(t.balance(OWNER) - ownerBefore).toBe(7n);
    expect(t.balance(REGISTRY_ADDRESS)).toBe(0n);
    const p = t.chain.provider(PROVIDER)!;
    expect(p.live_assigned_streams).toBe(0n);
    expect(p.base_rate_reserved.reserved_streams).toBe(0n);
    expect(p.base_rate_reserved.retained_bytes).toBe(0n);
  });

  it("§6.1 an unmaterialized overdue stream is first suspended (historical deadline), then expired by a second SettleStreamRent", () => {
    const { t, id } = setup(3n * R, 10n);
    const first = t.ok(cbqs(OTHER, ix.settle(id)), 50n);
    expect(topics(first)).toEqual(["cbqs.stream.rent_settled", "cbqs.stream.suspended"]);
    expect(t.chain.stream(id)!.suspension_grace_deadline_block).toBe(15n);
    const second = t.ok(cbqs(OTHER, ix.settle(id)), 51n);
    expect(topics(second)).toEqual(["cbqs.stream.data_expired"]);
  });

  it("§6.1 CloseStream settles and closes even past the deadline, emits closed alone, refunds unearned escrow", () => {
    const { t, id } = setup(50n * R, 10n);
    const ownerBefore = t.balance(OWNER);
    const o = t.ok(cbqs(OWNER, ix.close(id)), 12n);
    expect(topics(o)).toEqual(["cbqs.stream.closed"]);
    const rec = t.chain.stream(id)!;
    expect(rec.status).toBe("Closed");
    expect(rec.last_settled_block).toBe(12n);
    expect(t.balance(OWNER) - ownerBefore).toBe(40n * R);
    expect(t.balance(REGISTRY_ADDRESS)).toBe(0n);
    // past the deadline
    const s2 = setup(3n * R, 10n);
    s2.t.ok(cbqs(OTHER, ix.settle(s2.id)), 8n);
    const c2 = s2.t.ok(cbqs(OWNER, ix.close(s2.id)), 40n);
    expect(topics(c2)).toEqual(["cbqs.stream.closed"]);
    expect(s2.t.chain.stream(s2.id)!.status).toBe("Closed");
  });

  it("§5 CloseStream is owner-only", () => {
    const { t, id } = setup(5n * R);
    expect(t.tx(cbqs(OTHER, ix.close(id))).error!.name).toBe("Unauthorized");
  });

  it("§5 Closed and DataExpired are absorbing: every instruction naming one is rejected", () => {
    const { t, id } = setup(5n * R);
    t.ok(cbqs(OWNER, ix.close(id)));
    for (const i of [ix.settle(id), ix.topUp(id, 5n), ix.close(id)]) {
      const o = t.tx(cbqs(OWNER, i));
      expect(o.error!.name).toBe("StreamNotActive");
    }
    expect(t.chain.provider(PROVIDER)!.live_assigned_streams).toBe(0n);
  });

  it("§6.1 TopUpStream is permissionless only while the provider is Active; otherwise owner-only", () => {
    const { t, id } = setup(5n * R);
    t.ok(cbqs(PROVIDER, { type: "SetProviderStatus", args: { status: "Draining" } }));
    expect(t.tx(cbqs(OTHER, ix.topUp(id, R))).error!.name).toBe("Unauthorized");
    expect(t.tx(cbqs(OWNER, ix.topUp(id, R))).status).toBe("ok");
  });

  it("§6.1 the grace deadline uses cbqs.suspend_grace_blocks read live at the materializing settlement", () => {
    const { t, id } = setup(3n * R, 10n);
    t.ok(gov({ type: "SetParam", name: "cbqs.suspend_grace_blocks", value: 500n }), 6n);
    t.ok(cbqs(OTHER, ix.settle(id)), 8n);
    expect(t.chain.stream(id)!.suspension_grace_deadline_block).toBe(505n);
    // once pinned, a later governance write does not move it
    t.ok(gov({ type: "SetParam", name: "cbqs.suspend_grace_blocks", value: 1n }), 9n);
    t.ok(cbqs(OWNER, ix.topUp(id, 1n * R)), 10n);
    expect(t.chain.stream(id)!.suspension_grace_deadline_block).toBe(505n);
  });

  it("§6.1 the split reads provider_bps/platform_bps live at each settlement", () => {
    const { t, id } = setup(100n * R);
    t.ok(gov({ type: "SetParams", values: [{ name: "cbqs.rent.provider_bps", value: 5000n }, { name: "cbqs.rent.platform_bps", value: 5000n }] }), 3n);
    t.ok(cbqs(OTHER, ix.settle(id)), 12n);
    expect(t.balance(PROVIDER) - RICH).toBe(5n * R);
    expect(t.balance(PLATFORM_ADDRESS)).toBe(5n * R);
  });
});

describe("§5 custody assertion", () => {
  it("§5 keyless system accounts (0x17 custody, 0x18, the burn address) cannot send transactions: not includable, nothing changes, not even a nonce", () => {
    const { t, id } = setup(10n * R);
    const before = rawSnapshot(t);
    for (const from of [REGISTRY_ADDRESS, PLATFORM_ADDRESS, new Uint8Array(20)]) {
      for (const tx of [{ from, body: { kind: "transfer" as const, to: OTHER, amount: 1n } }, cbqs(from, ix.topUp(id, 1n))]) {
        const o = t.tx(tx);
        expect(o.status).toBe("excluded");
        expect(o.error!.message).toBe(`${toHex(from)} is a keyless system account and cannot send transactions`);
      }
    }
    expect(rawSnapshot(t)).toEqual(before);
  });

  it("§5 an escrow debit from underfunded custody fails closed with no mutation (a defect cannot mint CBY)", () => {
    const { t, id } = setup(10n * R);
    // corrupt state: custody loses its balance behind the registry's back
    const b = t.store.beginBlock(3n);
    b.delete(accountKey(REGISTRY_ADDRESS));
    t.store.commitBlock(b);
    t.height = 3n;
    const before = snapshot(t);
    const o = t.tx(cbqs(OTHER, ix.settle(id)), 8n);
    expect(o.error!.name).toBe("RegistryStateInvalid");
    expect(snapshot(t)).toEqual(before);
  });
});

describe("§6.1/§19 spec-fidelity audit: TopUpStream and SettleStreamRent edges", () => {
  it("§6.1 each paid amount is split on its own: a top-up whose two settlements both pay floors each share separately", () => {
    // Active, unmaterialized, 3 blocks funded: settle #1 pays 3R (paid through 5), the credit
    // covers the rest, settle #2 pays 25R. Splitting the 28R sum once would floor differently.
    const { t, id } = setup(3n * R, 100n);
    t.ok(cbqs(OWNER, ix.topUp(id, 100n * R)), 30n);
    const share = (paid: bigint) => (paid * 9000n) / 10000n;
    expect(share(3n * R) + share(25n * R)).not.toBe(share(28n * R)); // the case is observable
    expect(t.balance(PROVIDER) - RICH).toBe(share(3n * R) + share(25n * R));
    expect(t.balance(PLATFORM_ADDRESS)).toBe(28n * R - share(3n * R) - share(25n * R));
    expect(t.balance(REGISTRY_ADDRESS)).toBe(75n * R);
    // The same amounts written out (R = 80,067): 216,180 + 1,801,507 to the provider, 224,189 to
    // 0x18; the summed floor would have been 2,017,688 and 224,188.
    expect(t.balance(PROVIDER) - RICH).toBe(2_017_687n);
    expect(t.balance(PLATFORM_ADDRESS)).toBe(224_189n);
  });

  it("§6.1/§19 a top-up that leaves an unmaterialized Active stream underfunded emits topped_up then suspended (net edge), pinned at the historical paid-through", () => {
    const { t, id } = setup(3n * R, 100n);
    const o = t.ok(cbqs(OWNER, ix.topUp(id, 4n * R)), 30n);
    expect(topics(o)).toEqual(["cbqs.stream.topped_up", "cbqs.stream.suspended"]);
    const rec = t.chain.stream(id)!;
    expect(rec.status).toBe("Suspended");
    expect(rec.last_settled_block).toBe(9n); // 2 + 3 paid by settle #1, + 4 by settle #2
    expect(rec.suspended_at_block).toBe(5n); // pinned by settle #1, preserved by settle #2
    expect(rec.suspension_grace_deadline_block).toBe(105n);
    expect(rec.escrow_balance).toBe(0n);
  });

  it("§5/§6.1 SettleStreamRent on a zero-escrow stream pays nothing but materializes Suspended at the creation height (real work, not a no-op)", () => {
    const { t, id } = setup(0n, 100n); // created at effective height 2
    const o = t.ok(cbqs(OTHER, ix.settle(id)), 7n);
    expect(topics(o)).toEqual(["cbqs.stream.rent_settled", "cbqs.stream.suspended"]);
    const rec = t.chain.stream(id)!;
    expect(rec.last_settled_block).toBe(2n);
    expect(rec.suspended_at_block).toBe(2n);
    expect(rec.suspension_grace_deadline_block).toBe(102n);
    expect(t.balance(PROVIDER)).toBe(RICH);
    expect(t.tx(cbqs(OTHER, ix.settle(id)), 8n).error!.name).toBe("NoOpRejected");
  });

  it("§6.1 a top-up exactly one block before the pinned deadline of a materialized stream is accepted; at the deadline it is rejected", () => {
    const { t, id } = setup(3n * R + 7n, 10n);
    t.ok(cbqs(OTHER, ix.settle(id)), 8n); // suspended at 5, deadline 15
    const state = snapshot(t);
    const rejected = t.tx(cbqs(OTHER, ix.topUp(id, 100n * R)), 15n);
    expect(rejected.error!.name).toBe("GraceDeadlinePassed");
    expect(snapshot(t)).toEqual(state);
    const s2 = setup(3n * R + 7n, 10n);
    s2.t.ok(cbqs(OTHER, ix.settle(s2.id)), 8n);
    const ok = s2.t.ok(cbqs(OTHER, ix.topUp(s2.id, 100n * R)), 14n);
    expect(topics(ok)).toEqual(["cbqs.stream.topped_up", "cbqs.stream.reactivated"]);
  });

  it("§6.1 DataExpired on an encrypted pair mirrors to the key stream and frees the owner's stream slot once", () => {
    const t = new TestChain(genesisConfig({ "cbqs.suspend_grace_blocks": 10n, "cbqs.max_streams_per_owner": 1n }));
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    t.ok(cbqs(OWNER, ix.createStream({ initial_escrow: 3n * R, encrypted: true })));
    const id = t.streamId();
    t.ok(cbqs(OTHER, ix.settle(id)), 8n);
    const o = t.ok(cbqs(OTHER, ix.settle(id)), 15n);
    expect(topics(o)).toEqual(["cbqs.stream.data_expired"]);
    const key = t.chain.stream(t.keyStreamId())!;
    expect(key.status).toBe("DataExpired");
    expect(key.suspended_at_block).toBeNull();
    expect(t.chain.provider(PROVIDER)!.live_assigned_streams).toBe(0n);
    // the single owner slot is free again (decremented exactly once)
    t.ok(cbqs(OWNER, ix.createStream({ owner_nonce: 1n })));
    expect(t.tx(cbqs(OWNER, ix.createStream({ owner_nonce: 2n }))).error!.name).toBe("OwnerStreamLimit");
  });
});

describe("§5 wire amounts are u128, balances u64 (spec-fidelity audit)", () => {
  it("§5 a top-up amount above u64 is rejected as insufficient balance, never truncated, and moves nothing", () => {
    const { t, id } = setup(5n * R);
    const state = snapshot(t);
    const o = t.tx(cbqs(OWNER, ix.topUp(id, (1n << 64n) + 5n)));
    expect(o.error!.name).toBe("InsufficientBalance");
    expect(snapshot(t)).toEqual(state);
  });

  it("§5 a CreateStream initial_escrow above u64 is rejected as insufficient balance and creates nothing", () => {
    const t = new TestChain();
    t.ok(cbqs(PROVIDER, ix.registerProvider()));
    const state = snapshot(t);
    expect(t.tx(cbqs(OWNER, ix.createStream({ initial_escrow: 1n << 64n }))).error!.name).toBe("InsufficientBalance");
    expect(snapshot(t)).toEqual(state);
  });
});

// Refusals asserted with their reason as well as their name (the name alone lets a check vanish
// while a neighbouring one refuses the same input); the state-corruption cases are written out
// of band. None of them may change state.
describe("§6.1 TopUpStream refusals name what failed", () => {
  const refusal = (t: TestChain, from: Uint8Array, i: ReturnType<typeof ix.topUp>) => {
    const before = snapshot(t);
    const e = t.tx(cbqs(from, i)).error;
    expect(snapshot(t)).toEqual(before);
    return `${e?.name}: ${e?.message}`;
  };
  const slot = (bytes: Uint8Array) => encodeStateValue({ kind: "StorageSlot", bytes });

  it("§5 a payer who cannot pay, and a custody credit overflowing u64 (state corruption), are refused under their own names", () => {
    const { t, id } = setup(5n * R);
    expect(refusal(t, OWNER, ix.topUp(id, (1n << 64n) + 5n))).toMatch(/^InsufficientBalance: top-up: /);
    writeOutOfBand(t, accountKey(REGISTRY_ADDRESS), encodeStateValue({ kind: "Account", nonce: 0n, balance: U64_MAX - 5n }));
    expect(refusal(t, OWNER, ix.topUp(id, 6n))).toMatch(/^ArithmeticOverflow: escrow custody: credit to /);
    t.ok(cbqs(OWNER, ix.topUp(id, 5n))); // reaching exactly u64::MAX is accepted
  });

  it("§5 an escrow_balance that would pass u128::MAX (state corruption) is ArithmeticOverflow, not a wrap", () => {
    const { t, id } = setup(5n * R);
    const main = t.chain.stream(id)!;
    // settled through the top-up's own block, so settlement #1 pays nothing
    writeOutOfBand(t, streamKey(id), slot(encode(S.StreamRecordV1, { ...main, escrow_balance: U128_MAX - 5n, last_settled_block: t.height + 2n })));
    expect(refusal(t, OWNER, ix.topUp(id, 6n))).toBe("ArithmeticOverflow: escrow_balance overflows");
  });

  it("§6.1 a stream whose assigned provider has no record (state corruption) is RegistryStateInvalid", () => {
    const { t, id } = setup(5n * R);
    writeOutOfBand(t, providerKey(PROVIDER), null);
    expect(refusal(t, OTHER, ix.topUp(id, R))).toBe("RegistryStateInvalid: assigned provider has no record");
  });
});

// The first terminal transition (instructions/terminal.ts) on state no valid chain produces:
// each refusal names the quantity that failed, and changes nothing.
describe("§5/§6.1 terminal transition refusals name what failed", () => {
  const refusal = (t: TestChain, from: Uint8Array, i: ReturnType<typeof ix.close>) => {
    const before = snapshot(t);
    const e = t.tx(cbqs(from, i)).error;
    expect(snapshot(t)).toEqual(before);
    return `${e?.name}: ${e?.message}`;
  };
  const slot = (bytes: Uint8Array) => encodeStateValue({ kind: "StorageSlot", bytes });

  it("§5 the escrow refund: custody short of the residual, and an owner credit overflowing u64", () => {
    const { t, id } = setup(10n * R);
    writeOutOfBand(t, accountKey(REGISTRY_ADDRESS), encodeStateValue({ kind: "Account", nonce: 0n, balance: 10n * R - 1n }));
    // closing in the creation's own block settles nothing, so the whole escrow is the refund
    const main = t.chain.stream(id)!;
    writeOutOfBand(t, streamKey(id), slot(encode(S.StreamRecordV1, { ...main, last_settled_block: t.height + 2n })));
    expect(refusal(t, OWNER, ix.close(id))).toMatch(/^RegistryStateInvalid: escrow refund: custody holds /);

    const rich = setup(10n * R);
    writeOutOfBand(rich.t, accountKey(OWNER), encodeStateValue({ kind: "Account", nonce: 1n, balance: U64_MAX }));
    expect(refusal(rich.t, OWNER, ix.close(rich.id))).toMatch(/^ArithmeticOverflow: escrow refund: credit to /);
  });

  it("§6.1 a terminal transition whose provider record is missing (state corruption) is RegistryStateInvalid, naming the provider", () => {
    const { t, id } = setup(10n * R);
    writeOutOfBand(t, providerKey(PROVIDER), null);
    expect(refusal(t, OWNER, ix.close(id))).toBe(`RegistryStateInvalid: assigned provider 0x${Buffer.from(PROVIDER).toString("hex")} has no record`);
  });

  it("§6.1 the live counters never go below zero: a provider or owner count already at 0 (state corruption) is ArithmeticOverflow", () => {
    const provider = setup(10n * R);
    const p = provider.t.chain.provider(PROVIDER)!;
    writeOutOfBand(provider.t, providerKey(PROVIDER), slot(encode(S.ProviderRecordV1, { ...p, live_assigned_streams: 0n })));
    expect(refusal(provider.t, OWNER, ix.close(provider.id))).toBe("ArithmeticOverflow: live_assigned_streams overflows");

    const owner = setup(10n * R);
    writeOutOfBand(owner.t, ownerCountKey(OWNER), null);
    expect(refusal(owner.t, OWNER, ix.close(owner.id))).toBe("ArithmeticOverflow: owner stream count overflows");
  });
});
