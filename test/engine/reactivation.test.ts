// CIP-39 §6.1 "TopUpStream is the only instruction that can reactivate a stream".
// A materialized Suspended stream in arrears is put through every instruction and governance
// action that can reach it; each must leave it Suspended with both pinned fields unchanged (or
// end it: CloseStream closes, SettleStreamRent past the deadline expires), and only a covering
// TopUpStream brings it back to Active.
import { describe, expect, it } from "vitest";
import type { Bytes32, CbqsInstructionV1, StreamRecordV1 } from "../../src/codec/types.js";
import { REGISTRY_ADDRESS } from "../../src/engine/layout.js";
import { cbqs, genesisConfig, gov, ix, OPEN_ADMISSION, OTHER, OWNER, PROVIDER, standardConfig, STANDARD_ONE_UNIT_RATE, TestChain } from "./harness.js";

const R = STANDARD_ONE_UNIT_RATE;

/** Encrypted pairs of OWNER: nonce 0 and 1, each with escrow 3R, materialized Suspended at 5 and 6 (grace 100). */
function suspendedPairs() {
  const t = new TestChain(genesisConfig({ "cbqs.suspend_grace_blocks": 100n }));
  t.ok(cbqs(PROVIDER, ix.registerProvider()));
  t.ok(cbqs(OWNER, ix.createStream({ initial_escrow: 3n * R, encrypted: true })));
  t.ok(cbqs(OWNER, ix.createStream({ owner_nonce: 1n, initial_escrow: 3n * R, encrypted: true })));
  const ids = [t.streamId(OWNER, 0n), t.streamId(OWNER, 1n)];
  for (const id of ids) t.ok(cbqs(OTHER, ix.settle(id)), t.height + 5n);
  return { t, ids };
}

const pins = (r: StreamRecordV1) => [r.status, r.suspended_at_block, r.suspension_grace_deadline_block];

describe("§6.1 reactivation", () => {
  it("only TopUpStream reactivates a Suspended stream (CIP-39 §6.1)", () => {
    const { t, ids } = suspendedPairs();
    const [id, other] = ids as [Bytes32, Bytes32];
    const before = pins(t.chain.stream(id)!);
    expect(before).toEqual(["Suspended", 5n, 105n]);
    const stillSuspended = (what: string) => {
      expect(pins(t.chain.stream(id)!), what).toEqual(before);
      expect(pins(t.chain.stream(t.keyStreamId(OWNER, 0n))!), `${what} (key stream)`).toEqual(before);
    };
    const priced = standardConfig({ retained_bytes_limit: 2n << 30n });
    const attempts: Array<[string, ReturnType<typeof cbqs>]> = [
      ["SettleStreamRent by a third party", cbqs(OTHER, ix.settle(id))],
      ["SettleStreamRent by the provider", cbqs(PROVIDER, ix.settle(id))],
      ["SettleStreamRent by the owner", cbqs(OWNER, ix.settle(id))],
      ["UpdateStream (authorization bump)", cbqs(OWNER, ix.updateStream(id, { bump_authorization_generation: true }))],
      ["UpdateStream (priced capacity)", cbqs(OWNER, ix.updateStream(id, { config: priced }))],
      ["ActivateKeyGeneration", cbqs(OWNER, ix.activate(t.receipt()))],
      ["CreateStream (another stream of the owner)", cbqs(OWNER, ix.createStream({ owner_nonce: 2n, initial_escrow: 10n * R }))],
      ["SetProviderStatus Draining", cbqs(PROVIDER, ix.setProviderStatus("Draining"))],
      ["SetProviderStatus Active", cbqs(PROVIDER, ix.setProviderStatus("Active"))],
      ["UpdateProvider", cbqs(PROVIDER, { type: "UpdateProvider", args: { endpoints: null, signing_key: null, quote_key: null, base_rate_admission: { ...OPEN_ADMISSION, accepts_new: false }, metadata_hash: null } })],
      ["SetParam cbqs.suspend_grace_blocks", gov({ type: "SetParam", name: "cbqs.suspend_grace_blocks", value: 1_000n })],
      ["SetParams rent split", gov({ type: "SetParams", values: [{ name: "cbqs.rent.provider_bps", value: 5_000n }, { name: "cbqs.rent.platform_bps", value: 5_000n }] })],
      ["Pause 0x17", gov({ type: "Pause", actor: REGISTRY_ADDRESS, blocks: 3n })],
      ["Unpause 0x17", gov({ type: "Unpause", actor: REGISTRY_ADDRESS })],
      ["SettleStreamRent after the pause", cbqs(OTHER, ix.settle(id))],
      ["a partial TopUpStream (two blocks of the accrued window)", cbqs(OWNER, ix.topUp(id, 2n * R + R / 2n))],
      ["SettleStreamRent after a partial top-up", cbqs(PROVIDER, ix.settle(id))],
    ];
    for (const [what, tx] of attempts) {
      const o = t.tx(tx);
      expect(o.events.map((e) => e.topic), what).not.toContain("cbqs.stream.reactivated");
      stillSuspended(`${what} (${o.status} ${o.error?.name ?? ""})`);
    }
    // The two instructions that end a Suspended stream end it — neither reactivates it.
    t.ok(cbqs(OWNER, ix.close(other)));
    expect(t.chain.stream(other)!.status).toBe("Closed");
    // A covering top-up is the one way back.
    const revived = t.ok(cbqs(OTHER, ix.topUp(id, 1_000n * R)));
    expect(revived.events.map((e) => e.topic)).toEqual(["cbqs.stream.topped_up", "cbqs.stream.reactivated"]);
    expect(pins(t.chain.stream(id)!)).toEqual(["Active", null, null]);
    expect(pins(t.chain.stream(t.keyStreamId(OWNER, 0n))!)).toEqual(["Active", null, null]);
  });

  it("past its deadline a Suspended stream is expired by SettleStreamRent, refused a top-up, never reactivated (CIP-39 §6.1)", () => {
    const { t, ids } = suspendedPairs();
    const id = ids[0]!;
    t.height = 110n; // deadline 105
    expect(t.tx(cbqs(OWNER, ix.topUp(id, 1_000n * R))).error!.name).toBe("GraceDeadlinePassed");
    expect(t.chain.stream(id)!.status).toBe("Suspended");
    const settle: CbqsInstructionV1 = ix.settle(id);
    expect(t.ok(cbqs(OTHER, settle)).events.map((e) => e.topic)).toEqual(["cbqs.stream.data_expired"]);
    expect(t.chain.stream(id)!.status).toBe("DataExpired");
  });
});
