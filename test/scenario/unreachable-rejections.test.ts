// Rejections no cbqs-scenario/v1 chain can reach (docs/reference/scenarios.md "Coverage" says why for
// each): they need state a valid genesis and valid transactions never produce, or an input the
// scenario JSON cannot express. Driven here through the engine with the state written out of
// band, so every rejection class of the matrix is asserted somewhere.
import { describe, expect, it } from "vitest";
import { decode, encode } from "../../src/codec/core.js";
import * as S from "../../src/codec/schema.js";
import { accountKey, schedulesKey } from "../../src/engine/layout.js";
import { U64_MAX } from "../../src/engine/math.js";
import { decodeStateValueAs, encodeStateValue } from "../../state/kv/value.js";
import { cbqs, gov, ix, OTHER, OWNER, PROVIDER, snapshot, TestChain, transfer, writeOutOfBand } from "../engine/harness.js";

describe("rejections unreachable through scenarios (docs/reference/scenarios.md Coverage)", () => {
  it("§4.5/§17 3935 BaseRateScheduleUnavailable: an absent schedule record, and an active schedule with a zero unit size", () => {
    // A valid genesis always stores a schedule whose units are ≥ 1 (§18 base-rate rows).
    const absent = new TestChain();
    absent.ok(cbqs(PROVIDER, ix.registerProvider()));
    writeOutOfBand(absent, schedulesKey(), null);
    let before = snapshot(absent);
    expect(absent.tx(cbqs(OWNER, ix.createStream())).error?.name).toBe("BaseRateScheduleUnavailable");
    expect(snapshot(absent)).toEqual(before);

    const zeroUnit = new TestChain();
    zeroUnit.ok(cbqs(PROVIDER, ix.registerProvider()));
    const stored = decode(S.BaseRateSchedulesV1, decodeStateValueAs(zeroUnit.store.read(schedulesKey())!, "StorageSlot").bytes);
    const broken = { ...stored, active: { ...stored.active, standard: { ...stored.active.standard, retained_unit_bytes: 0n } } };
    writeOutOfBand(zeroUnit, schedulesKey(), encodeStateValue({ kind: "StorageSlot", bytes: encode(S.BaseRateSchedulesV1, broken) }));
    before = snapshot(zeroUnit);
    const zeroOutcome = zeroUnit.tx(cbqs(OWNER, ix.createStream()));
    expect(zeroOutcome.error?.name).toBe("BaseRateScheduleUnavailable");
    expect(zeroOutcome.error?.message).toMatch(/zero unit size/);
    expect(snapshot(zeroUnit)).toEqual(before);
  });

  it("§18/§6.1 SetParams naming one parameter twice is InvalidGovernanceAction (a scenario's SetParams is a JSON object: keys cannot repeat)", () => {
    const t = new TestChain();
    const before = snapshot(t);
    const o = t.tx(
      gov({
        type: "SetParams",
        values: [
          { name: "cbqs.suspend_grace_blocks", value: 10n },
          { name: "cbqs.suspend_grace_blocks", value: 20n },
        ],
      }),
    );
    expect(o.error?.name).toBe("InvalidGovernanceAction");
    expect(snapshot(t)).toEqual(before);
  });

  it("§5 a credit overflowing u64 is ArithmeticOverflow (state corruption: genesis caps total supply at u64); one reaching exactly u64::MAX is accepted", () => {
    const t = new TestChain();
    writeOutOfBand(t, accountKey(OTHER), encodeStateValue({ kind: "Account", nonce: 0n, balance: U64_MAX - 5n }));
    const before = snapshot(t);
    expect(t.tx(transfer(OWNER, OTHER, 10n)).error?.name).toBe("ArithmeticOverflow");
    expect(snapshot(t)).toEqual(before);
    // The boundary itself: a credit reaching exactly u64::MAX is accepted and lands.
    t.ok(transfer(OWNER, OTHER, 5n));
    expect(t.balance(OTHER)).toBe(U64_MAX);
    expect(t.tx(transfer(OWNER, OTHER, 1n)).error?.name).toBe("ArithmeticOverflow");
  });
});
