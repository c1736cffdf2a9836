import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ERRORS } from "../../src/engine/errors.js";

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
