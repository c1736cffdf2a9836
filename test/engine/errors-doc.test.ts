import { describe, expect, it } from "vitest";
import { BlockInputError, CbqsError, EngineDefect, ERRORS, GenesisError } from "../../src/engine/errors.js";
import { checkOrders, errorTable } from "./error-doc.js";
import { RESERVATIONS } from "../../src/engine/meter.js";

/** The nine instructions in §14 tag order (the §18.1 reservation table is keyed by them). */
const INSTRUCTIONS = Object.keys(RESERVATIONS);

describe("§17 typed errors", () => {
  it("§17 codes are unique", () => {
    const codes = Object.values(ERRORS).map((e) => e.code);
    expect(new Set(codes).size).toBe(codes.length);
  });

  it("docs/reference/errors.md's table is exactly src/engine/errors.ts — every name, code and condition, nothing else (CIP-39 §17)", () => {
    const table = errorTable();
    const engine = Object.entries(ERRORS).map(([name, def]) => ({ code: def.code, name, condition: def.condition }));
    expect(table).toEqual(engine);
    expect(table.length).toBe(33);
  });

  it("the project's own codes (4000, 4100–4120) collide with no §17 code; §17's names keep theirs (CIP-39 §17)", () => {
    const SECTION_17: Record<string, number> = {
      StreamNotFound: 3900,
      StreamNotActive: 3901,
      StreamSuspended: 3902,
      ProviderEpochStale: 3903,
      InvalidKeyBatch: 3924,
      BaseRateNotAccepted: 3933,
      BaseRateCapacityExceeded: 3934,
      BaseRateScheduleUnavailable: 3935,
      PricingBasisInvalid: 3936,
      UnsupportedVersion: 3937,
      ChainInstanceMismatch: 3938,
    };
    for (const [name, def] of Object.entries(ERRORS)) {
      if (name in SECTION_17) expect(def.code, name).toBe(SECTION_17[name]);
      else expect(def.code === 4000 || (def.code >= 4100 && def.code <= 4199), name).toBe(true); // §17 reserves 3900–3947
    }
  });

  it("docs/reference/errors.md has a check order for dispatch and all nine instructions, numbered 1…n, naming only engine errors (CIP-39 §5, §17)", () => {
    const orders = checkOrders();
    expect([...orders.keys()]).toEqual(["Every system transaction", ...INSTRUCTIONS]);
    for (const [heading, steps] of orders) {
      expect(steps.length, heading).toBeGreaterThan(2);
      expect(steps.map((s) => s.step), heading).toEqual(steps.map((_, i) => i + 1));
      for (const s of steps) if (s.error !== "") expect(Object.keys(ERRORS), `${heading} step ${s.step}`).toContain(s.error);
    }
  });
});

describe("engine error classes name themselves (a stack trace or log line says which class)", () => {
  it("CbqsError, EngineDefect, GenesisError and BlockInputError carry their class name", () => {
    expect(new GenesisError("x").name).toBe("GenesisError");
    expect(new BlockInputError("x").name).toBe("BlockInputError");
    expect(new EngineDefect("x").name).toBe("EngineDefect");
    const first = Object.keys(ERRORS)[0] as keyof typeof ERRORS;
    const e = new CbqsError(first, "x");
    expect([e.name, e.errorName, e.code]).toEqual(["CbqsError", first, ERRORS[first].code]);
  });
});
