import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ARTIFACT_PATH, ArtifactError, generateArtifact, sha256Hex, verifyArtifact } from "../../src/gas/artifact.js";
import { canonicalJson, type Json } from "../../src/gas/canonical-json.js";
import { GAS_VECTORS_SHA256 } from "../../src/gas/pinned.js";
import { runScenario, type Measurement } from "../../src/gas/scenario.js";
import { VECTORS } from "../../src/gas/vectors.js";
import { COSTS, RESERVATIONS } from "../../src/engine/meter.js";

const committed = readFileSync(ARTIFACT_PATH, "utf8");
const measured = new Map<string, Measurement>(VECTORS.map((v) => [v.id, runScenario(v.build())]));
const m = (id: string): Measurement => measured.get(id)!;

/** The §18.1 cycle formula, written out independently of src/engine/meter.ts. */
function expectedCycles(x: Measurement): bigint {
  let hashes = 0n;
  for (const len of x.hashPreimageLengths) hashes += BigInt(Math.max(1, Math.ceil(len / 32))) * 6n;
  return BigInt(x.payloadBytes) + 10n * BigInt(x.charged.reads) + 50n * BigInt(x.charged.writes) + hashes + 3000n * BigInt(x.signatures);
}

describe("gas vectors artifact (CIP-39 §18.1)", () => {
  it("§18.1 verify re-executes every vector of the committed file and its SHA-256 is the pinned digest", () => {
    const result = verifyArtifact(committed);
    expect(result).toEqual({ ok: true, sha256: GAS_VECTORS_SHA256, vectors: 13 });
  });

  it("§18.1 generation re-derives the committed file byte for byte (canonical JSON, trailing newline)", () => {
    expect(generateArtifact()).toBe(committed);
    expect(committed.endsWith("}\n")).toBe(true);
    expect(canonicalJson(JSON.parse(committed) as Json)).toBe(committed);
  });

  it("§18.1 thirteen vectors: nine instructions, two maximum-size provider payloads, two §6.1 TopUpStream paths", () => {
    const parsed = JSON.parse(committed) as { schema: string; vectors: Array<{ id: string; instruction: string }> };
    expect(parsed.schema).toBe("cowboy.cbqs.gas-vectors.v1");
    expect(parsed.vectors).toHaveLength(13);
    expect(new Set(parsed.vectors.map((v) => v.instruction))).toEqual(new Set(Object.keys(RESERVATIONS)));
    expect(m("register-provider-max").payloadBytes).toBeGreaterThan(8 * 2_048);
    expect(m("update-provider-max").payloadBytes).toBeGreaterThan(8 * 2_048);
    expect([m("register-provider-max").status, m("update-provider-max").status]).toEqual(["ok", "ok"]);
  });

  it("§18.1 a perturbed metered cost (injected, COSTS untouched) changes the bytes and the digest, and verify fails", () => {
    const perturbed = generateArtifact({ ...COSTS, writeCycles: COSTS.writeCycles + 1n });
    expect(perturbed).not.toBe(committed);
    expect(sha256Hex(perturbed)).not.toBe(GAS_VECTORS_SHA256);
    expect(COSTS.writeCycles).toBe(50n); // the injection did not mutate the engine's schedule
    const result = verifyArtifact(perturbed);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toBe('cost table differs from the engine: schedule.write_cycles: expected 51, actual 50 (expected: the file\'s value, actual: the engine\'s)');
    // Same file with the engine's cost table restored: the first differing vector number is reported.
    const restored = JSON.parse(perturbed) as Record<string, Json>;
    restored.schedule = (JSON.parse(committed) as Record<string, Json>).schedule!;
    const second = verifyArtifact(canonicalJson(restored as Json));
    expect(second.ok).toBe(false);
    if (!second.ok) expect(second.reason).toMatch(/^vector register-provider: cycles: expected \d+, actual \d+ \(expected: the file's value, actual: the engine's\)$/);
  });

  it("§18.1 verify reports the first differing number in words, then canonical form, then the pinned digest", () => {
    const tampered = committed.replace(/"signatures": 1,/, '"signatures": 2,');
    const r1 = verifyArtifact(tampered);
    expect(r1).toEqual({ ok: false, reason: "vector create-stream: signatures: expected 2, actual 1 (expected: the file's value, actual: the engine's)" });
    const r2 = verifyArtifact(committed.replace("\n", "\n "));
    expect(r2).toEqual({ ok: false, reason: "the file is not in canonical form (key order, whitespace or trailing newline)" });
    const r3 = verifyArtifact(committed, "00".repeat(32));
    expect(r3.ok).toBe(false);
  });

  it("§18.1 unusable input is an ArtifactError (exit 2), not a mismatch", () => {
    expect(() => verifyArtifact("{")).toThrow(ArtifactError);
    expect(() => verifyArtifact('{"schema":"other"}')).toThrow(ArtifactError);
    expect(() => verifyArtifact(committed.replace('"opcode": 218', '"opcode": 7'))).toThrow(ArtifactError);
  });

  it("§18.1 every vector's receipt reports the CBQS-portion cycles of the formula; accepted charge actual, rejected the reservation with no cells", () => {
    for (const [id, x] of measured) {
      expect(x.cycles, id).toBe(expectedCycles(x));
      expect(x.actual.reads, id).toBeLessThanOrEqual(x.reserved.reads);
      expect(x.actual.writes, id).toBeLessThanOrEqual(x.reserved.writes);
      if (x.status === "ok") {
        expect(x.charged, id).toEqual(x.actual);
        expect(x.cells, id).toBe(BigInt(x.writtenBytes + x.eventBytes));
      } else {
        expect(x.charged, id).toEqual(x.reserved);
        expect(x.cells, id).toBe(0n);
      }
    }
  });

  it("§5 signature counts: CreateStream (quote) one, UpdateStream (replacement quote) one, ActivateKeyGeneration exactly one, others none", () => {
    const withSig = new Set(["create-stream", "update-stream", "activate-key-generation"]);
    for (const [id, x] of measured) expect(x.signatures, id).toBe(withSig.has(id) ? 1 : 0);
  });

  it("§6.1 the grace-deadline TopUpStream is rejected and persists nothing; the partial payment keeps the pinned pair", () => {
    const rejected = m("top-up-stream-grace-expired");
    expect([rejected.status, rejected.error]).toEqual(["rejected", "GraceDeadlinePassed"]);
    const id = rejected.chain.streams()[0]!.stream_id;
    const afterReject = rejected.chain.stream(id)!;
    expect([afterReject.status, afterReject.last_settled_block, afterReject.suspended_at_block, afterReject.suspension_grace_deadline_block]).toEqual(["Suspended", 4n, 4n, 14n]);
    const partial = m("top-up-stream-partial");
    const record = partial.chain.stream(id)!;
    expect([partial.status, record.status, record.last_settled_block, record.suspended_at_block, record.suspension_grace_deadline_block]).toEqual(["ok", "Suspended", 5n, 4n, 14n]);
  });
});
