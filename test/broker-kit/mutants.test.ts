// The mutator breaks every one of the 30 broker rules, and the verifier refuses each
// mutant with exactly that rule — on the kit chain read from its fixture (the econ mutants also on
// a live devnet: devnet.test.ts). A mutant is a fault on one value as the reference signer signs
// it, or extra steps a broker must not take (src/broker-kit/mutants.ts).
import { describe, expect, it } from "vitest";
import { MUTANTS } from "../../src/broker-kit/mutants.js";
import { RULE_IDS } from "../../src/broker-kit/rules.js";
import { verifyBundle } from "../../src/broker-kit/verify.js";
import { kitBundleRead, kitChain } from "./kit.js";

describe("every mutant is refused with exactly its rule", () => {
  it("every rule has at least one mutant, every mutant a distinct name (test precondition)", () => {
    expect(RULE_IDS.filter((id) => !MUTANTS.some((m) => m.rule === id))).toEqual([]);
    expect(new Set(MUTANTS.map((m) => m.name)).size).toBe(MUTANTS.length);
    expect(MUTANTS.length).toBe(49);
  });

  it.each(MUTANTS.map((m) => [m.rule, m.name, m] as const))("%s: %s", async (rule, _name, mutant) => {
    const { chain } = await kitChain();
    const report = await verifyBundle(await kitBundleRead(mutant.bundle, mutant), chain.source);
    expect([...new Set(report.failures.map((f) => f.rule))]).toEqual([rule]);
    for (const f of report.failures) expect(f.evidence.length).toBeGreaterThan(20);
  });

  it("the unmutated bundles break no rule (the mutants' baseline)", async () => {
    const { chain } = await kitChain();
    for (const name of ["standard", "fast", "econ"] as const) {
      expect((await verifyBundle(await kitBundleRead(name), chain.source)).failures).toEqual([]);
    }
  });
});
