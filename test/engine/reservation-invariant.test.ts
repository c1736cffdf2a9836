// The fee at the reservation is an invariant, not a filter: the engine checks cycleBound ×
// cycle_price against the sender's balance before the handler, so the rejected charge of any
// path can always be paid. If the bound were too low, settling a rejected fee would fail with
// InsufficientBalance; that is an engine bug and must fail loudly (EngineDefect), never turn the
// transaction into a silently excluded one. The bound is replaced by 0 here to provoke exactly that.
import { describe, expect, it, vi } from "vitest";

vi.mock("../../src/engine/meter.js", async (importOriginal) => ({
  ...(await importOriginal<typeof import("../../src/engine/meter.js")>()),
  cycleBound: () => 0n,
}));

const { EngineDefect } = await import("../../src/engine/errors.js");
const { cbqs, genesisConfig, ix, OWNER, PROVIDER, RICH, TestChain } = await import("./harness.js");

describe("the reservation bound is enforced as an invariant", () => {
  it("a rejected fee the sender cannot pay after the reservation check (a bound too low) is an EngineDefect, not an excluded transaction", () => {
    const t = new TestChain({ ...genesisConfig({}, [[PROVIDER, 10n], [OWNER, RICH]]), cycle_price: 1n, cell_price: 1n });
    // The (zeroed) reservation check passes; the accepted fee cannot be paid, so the path is
    // rejected (InsufficientBalance) and its rejected charge (570 cycles) cannot be paid either.
    expect(() => t.block([cbqs(PROVIDER, ix.registerProvider())])).toThrow(EngineDefect);
    expect(() => t.block([cbqs(PROVIDER, ix.registerProvider())])).toThrow(/the rejected charge exceeds the fee at the reservation/);
  });
});
