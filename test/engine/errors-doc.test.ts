import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { BlockInputError, CbqsError, EngineDefect, ERRORS, GenesisError } from "../../src/engine/errors.js";

describe("§17 typed errors", () => {
  it("§17 codes are unique and docs/errors.md lists every error with its code", () => {
    const doc = readFileSync(new URL("../../docs/errors.md", import.meta.url), "utf8");
    const codes = Object.values(ERRORS).map((e) => e.code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const [name, def] of Object.entries(ERRORS)) expect(doc).toContain(`| ${def.code} | \`${name}\` |`);
  });

  it("§17 the CIP-39 names keep their reserved codes", () => {
    expect(ERRORS.StreamNotFound.code).toBe(3900);
    expect(ERRORS.InvalidKeyBatch.code).toBe(3924);
    expect(ERRORS.BaseRateScheduleUnavailable.code).toBe(3935);
    expect(ERRORS.UnsupportedVersion.code).toBe(3937);
    expect(ERRORS.ChainInstanceMismatch.code).toBe(3938);
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
