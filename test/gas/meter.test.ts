import { describe, expect, it } from "vitest";
import fc from "fast-check";
import { Chain, SYS_CBQS } from "../../src/engine/chain.js";
import { EngineDefect } from "../../src/engine/errors.js";
import { accountKey } from "../../src/engine/layout.js";
import { charge, COSTS, Meter, RESERVATIONS, type CostSchedule } from "../../src/engine/meter.js";
import { verifyStrictReference } from "../../src/engine/fast-paths.js";
import type { InstructionName } from "../../src/codec/types.js";
import { toHex } from "../../src/bytes.js";
import { GENESIS_SOURCE, ix, PROVIDER, ScenarioBuilder } from "../../src/gas/builder.js";
import { observePlan, PATHS } from "../../src/gas/plans.js";
import { genesisConfig, runScenario } from "../../src/gas/scenario.js";
import type { BlockBatch } from "../../state/kv/interface.js";
import { MemoryStateStore } from "../../state/store/store.js";
import { cbqs } from "../engine/harness.js";

const setStatus = () => new ScenarioBuilder().tx(PROVIDER, ix.registerProvider()).target(PROVIDER, ix.setProviderStatus("Draining"));

describe("the CBQS meter against §18.1", () => {
  it("§18.1 a handler forced over its reservation (every read doubled at the state interface) fails loudly with EngineDefect", () => {
    // Only in the target's block (height 2), so the setup RegisterProvider runs normally.
    const doubleReads = (batch: BlockBatch, key: Uint8Array) => {
      if (batch.height === 2n) batch.get(key);
    };
    expect(() => runScenario(setStatus(), undefined, doubleReads)).toThrow(EngineDefect);
    expect(() => runScenario(setStatus(), undefined, doubleReads)).toThrow("SetProviderStatus exceeded its §18.1 read reservation (3)");
  });

  it("§18.1 the reservation exists before the first state operation: a rejection before any read is charged the full pair", () => {
    const noOp = observePlan(PATHS.find((p) => p.id === "top-up-stream/zero-amount")!).measurement;
    expect(noOp.actual).toEqual({ reads: 0, writes: 0 });
    expect(noOp.charged).toEqual({ reads: RESERVATIONS.TopUpStream.reads, writes: RESERVATIONS.TopUpStream.writes });
  });

  it("§18.1 refund after commit: an accepted path is charged its actual counts, below the reservation", () => {
    const ok = runScenario(setStatus());
    expect(ok.charged).toEqual({ reads: 3, writes: 1 });
    expect(ok.charged.writes).toBeLessThan(RESERVATIONS.SetProviderStatus.writes);
  });

  it("§18.1 platform charges stay outside the meter: the sender's account is never a metered access on any path", () => {
    for (const path of PATHS) {
      const s = path.build();
      const { accesses } = runScenario(s);
      const sender = toHex(accountKey(s.target.from));
      expect(accesses.filter((a) => toHex(a.key) === sender), path.id).toEqual([]);
    }
  });

  it("§18.1 the fee is settled on the post-refund CBQS cycles and cells", () => {
    const config = { ...genesisConfig(setStatus()), cycle_price: 1n, cell_price: 1n };
    const chain = Chain.genesis(config, GENESIS_SOURCE, new MemoryStateStore());
    chain.executeBlock({ height: 1n, timestamp: 1n, txs: [cbqs(PROVIDER, ix.registerProvider())] });
    const before = chain.account(PROVIDER).balance;
    const o = chain.executeBlock({ height: 2n, timestamp: 2n, txs: [cbqs(PROVIDER, ix.setProviderStatus("Draining"))] }).outcomes[0]!;
    expect(o.status).toBe("ok");
    expect(before - chain.account(PROVIDER).balance).toBe(o.cycles + o.cells);
  });

  it("§18.1 a payload that fails canonical decode never reaches the meter: the CBQS portion is zero", () => {
    const chain = Chain.genesis(genesisConfig(setStatus()), GENESIS_SOURCE, new MemoryStateStore());
    const o = chain.executeBlock({ height: 1n, timestamp: 1n, txs: [{ from: PROVIDER, body: { kind: "system", opcode: SYS_CBQS, payload: Uint8Array.of(2, 3, 0) } }] }).outcomes[0]!;
    expect([o.status, o.cycles, o.cells, o.reads, o.writes]).toEqual(["rejected", 0n, 0n, 0, 0]);
  });

  it("§18.1 for any usage within the reservation, a rejection is charged at least the accepted cycles, never a cell, and never beyond the reservation (fast-check)", () => {
    const names = Object.keys(RESERVATIONS) as InstructionName[];
    const usage = fc
      .record({
        instruction: fc.constantFrom(...names),
        payloadBytes: fc.nat(20_000),
        readShare: fc.double({ min: 0, max: 1, noNaN: true }),
        writeShare: fc.double({ min: 0, max: 1, noNaN: true }),
        hashPreimageLengths: fc.array(fc.nat(1_000), { maxLength: 6 }),
        signatures: fc.nat(1),
        writtenBytes: fc.nat(50_000),
        eventBytes: fc.nat(500),
      })
      .map(({ readShare, writeShare, ...u }) => ({
        ...u,
        reads: Math.floor(readShare * RESERVATIONS[u.instruction].reads),
        writes: Math.floor(writeShare * RESERVATIONS[u.instruction].writes),
      }));
    fc.assert(
      fc.property(usage, (u) => {
        const accepted = charge(u, true);
        const rejected = charge(u, false);
        expect([accepted.chargedReads, accepted.chargedWrites]).toEqual([u.reads, u.writes]);
        expect([rejected.chargedReads, rejected.chargedWrites]).toEqual([RESERVATIONS[u.instruction].reads, RESERVATIONS[u.instruction].writes]);
        expect(rejected.cycles >= accepted.cycles).toBe(true);
        expect(rejected.cells).toBe(0n);
        expect(accepted.cells).toBe(BigInt(u.writtenBytes) * COSTS.cellsPerWrittenByte + BigInt(u.eventBytes) * COSTS.cellsPerEventByte);
      }),
    );
  });

  it("§18.1 the charge is linear in every coefficient of the schedule: checked under one whose coefficients are all distinct and > 1", () => {
    // COSTS has three coefficients equal to 1, where multiplying and dividing agree; this
    // schedule tells every term apart.
    const costs: CostSchedule = {
      readCycles: 11n,
      writeCycles: 53n,
      hashWordCycles: 7n,
      ed25519VerifyCycles: 3_001n,
      decodeCyclesPerPayloadByte: 3n,
      cellsPerWrittenByte: 5n,
      cellsPerEventByte: 13n,
    };
    const usage = {
      instruction: "CreateStream" as const,
      payloadBytes: 101,
      reads: 9,
      writes: 4,
      hashPreimageLengths: [0, 32, 33],
      signatures: 2,
      writtenBytes: 1_000,
      eventBytes: 70,
    };
    const hashCycles = (1n + 1n + 2n) * 7n; // max(1, ceil(len / 32)) words each
    expect(charge(usage, true, costs)).toEqual({
      chargedReads: 9,
      chargedWrites: 4,
      cycles: 101n * 3n + 9n * 11n + 4n * 53n + hashCycles + 2n * 3_001n,
      cells: 1_000n * 5n + 70n * 13n,
    });
    expect(charge(usage, false, costs)).toEqual({
      chargedReads: RESERVATIONS.CreateStream.reads,
      chargedWrites: RESERVATIONS.CreateStream.writes,
      cycles: 101n * 3n + BigInt(RESERVATIONS.CreateStream.reads) * 11n + BigInt(RESERVATIONS.CreateStream.writes) * 53n + hashCycles + 2n * 3_001n,
      cells: 0n,
    });
  });

  it("§18.1 a handler that writes past its reservation fails loudly with EngineDefect at the first write too many", () => {
    const meter = new Meter("SetProviderStatus", 0, verifyStrictReference);
    const write = { op: "write" as const, key: new Uint8Array(54), before: undefined, after: new Uint8Array(10) };
    for (let i = 0; i < RESERVATIONS.SetProviderStatus.writes; i++) meter.observe(write);
    expect(meter.writtenBytes).toBe(RESERVATIONS.SetProviderStatus.writes * 64);
    expect(() => meter.observe(write)).toThrow(EngineDefect);
    expect(() => meter.observe(write)).toThrow("SetProviderStatus exceeded its §18.1 write reservation (2)");
  });
});
