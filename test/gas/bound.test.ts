// The fee at the reservation (D-0013 "Included transactions: nonce and fee") is
// cycleBound(instruction, payload bytes) × cycle_price, checked before the handler runs. It is
// safe only if no path of the instruction can be charged more: a too-low bound would let a
// rejected transaction's fee fail to settle (an EngineDefect in src/engine/chain.ts). Every
// committed gas vector and every canonical plan path (src/gas/plans.ts) is checked against it,
// for the charge the path received and for the rejected charge it would receive instead.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { InstructionName } from "../../src/codec/types.js";
import { charge, COSTS, cycleBound, type CostSchedule } from "../../src/engine/meter.js";
import { ARTIFACT_PATH } from "../../src/gas/artifact.js";
import { observePlan, PATHS } from "../../src/gas/plans.js";

interface Point {
  id: string;
  instruction: InstructionName;
  payloadBytes: number;
  cycles: bigint;
}

const vectors = (JSON.parse(readFileSync(ARTIFACT_PATH, "utf8")) as { vectors: Array<{ id: string; instruction: InstructionName; payload_bytes: number; cycles: string }> }).vectors;

function points(): Point[] {
  const out: Point[] = vectors.map((v) => ({ id: `vector ${v.id}`, instruction: v.instruction, payloadBytes: v.payload_bytes, cycles: BigInt(v.cycles) }));
  for (const { path, measurement: m } of PATHS.map(observePlan)) {
    out.push({ id: `path ${path.id}`, instruction: m.instruction, payloadBytes: m.payloadBytes, cycles: m.cycles });
    // An accepted path whose sender cannot pay its accepted fee is rejected and charged this instead.
    const usage = { ...m, reads: m.actual.reads, writes: m.actual.writes };
    out.push({ id: `path ${path.id} (rejected charge)`, instruction: m.instruction, payloadBytes: m.payloadBytes, cycles: charge(usage, false).cycles });
  }
  return out;
}

const exceeding = (all: Point[], costs: CostSchedule) => all.filter((p) => p.cycles > cycleBound(p.instruction, p.payloadBytes, costs)).map((p) => p.id);

describe("the fee at the reservation bounds every charge (CIP-39 §18.1)", () => {
  const all = points();

  it("cycleBound(type, payload length) is at least the charged cycles of every gas vector and every canonical plan path, accepted or rejected", () => {
    expect(vectors.length).toBeGreaterThanOrEqual(13);
    expect(all.length).toBe(vectors.length + 2 * PATHS.length);
    expect(exceeding(all, COSTS)).toEqual([]);
  });

  it("the check is sharp: a bound without its signature term, or without its hash term, is exceeded by some path", () => {
    // cycleBound prices the allowed signatures and hashes with the schedule it is given; the
    // charges above were made with COSTS, so zeroing a term in the bound's schedule removes it.
    expect(exceeding(all, { ...COSTS, ed25519VerifyCycles: 0n }).length).toBeGreaterThan(0);
    expect(exceeding(all, { ...COSTS, hashWordCycles: 0n }).length).toBeGreaterThan(0);
  });
});
