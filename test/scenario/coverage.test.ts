// The scenario suite covers every instruction's success and every rejection class reachable
// through `cbqs run` (CIP-39 §5, §6.1, §17, §19), and docs/reference/scenarios.md documents exactly the
// (instruction, outcome) cells the scenarios assert. Regenerate the documented table with
// UPDATE_COVERAGE_TABLE=1 npx vitest run test/scenario/coverage.test.ts
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { computeCoverage, coverageTable, documentedTable, SCENARIOS_DOC, TABLE_BEGIN, TABLE_END } from "./coverage.js";

/**
 * The rejection matrix: every `reject(Name, …)` reachable from each instruction through a
 * scenario (docs/reference/scenarios.md "Coverage" lists the unreachable ones and why). RegistryPaused
 * is the dispatcher's breaker in front of every instruction (Security Considerations, Denial
 * of service).
 */
const REQUIRED_REJECTIONS: Record<string, string[]> = {
  // InsufficientBalance here is the transaction-fee debit (a nonzero cycle_price).
  RegisterProvider: ["ProviderAlreadyRegistered", "EndpointRejected", "RegistryPaused", "InsufficientBalance"],
  UpdateProvider: ["NoOpRejected", "ProviderNotFound", "EndpointRejected", "CapBelowReservation", "RegistryPaused"],
  SetProviderStatus: ["ProviderNotFound", "NoOpRejected", "ProviderHasLiveStreams", "RegistryPaused"],
  CreateStream: [
    "ChainInstanceMismatch",
    "ProviderNotFound",
    "ProviderNotActive",
    "InvalidStreamConfig",
    "OwnerNonceUsed",
    "OwnerStreamLimit",
    "PricingBasisInvalid",
    "BaseRateNotAccepted",
    "BaseRateCapacityExceeded",
    "InsufficientBalance",
    "ArithmeticOverflow",
    "RegistryPaused",
  ],
  UpdateStream: [
    "NoOpRejected",
    "ChainInstanceMismatch",
    "StreamNotFound",
    "KeyStreamNotIndependent",
    "StreamNotActive",
    "Unauthorized",
    "StreamSuspended",
    "InvalidStreamConfig",
    "PricingBasisInvalid",
    "BaseRateNotAccepted",
    "BaseRateCapacityExceeded",
    "ArithmeticOverflow",
    "RegistryPaused",
  ],
  TopUpStream: [
    "InvalidAmount",
    "StreamNotFound",
    "KeyStreamNotIndependent",
    "StreamNotActive",
    "Unauthorized",
    "GraceDeadlinePassed",
    "InsufficientBalance",
    "ArithmeticOverflow",
    "RegistryPaused",
  ],
  SettleStreamRent: ["StreamNotFound", "KeyStreamNotIndependent", "StreamNotActive", "NoOpRejected", "ArithmeticOverflow", "RegistryPaused"],
  CloseStream: ["StreamNotFound", "KeyStreamNotIndependent", "StreamNotActive", "Unauthorized", "ArithmeticOverflow", "RegistryPaused"],
  ActivateKeyGeneration: [
    "ChainInstanceMismatch",
    "StreamNotFound",
    "KeyStreamNotIndependent",
    "StreamNotActive",
    "StreamNotEncrypted",
    "Unauthorized",
    "StreamSuspended",
    "InvalidKeyBatch",
    "RegistryPaused",
  ],
  "Governance.SetParam": ["Unauthorized", "InvalidGovernanceAction"],
  "Governance.SetParams": ["Unauthorized", "InvalidGovernanceAction"],
  "Governance.Pause": ["Unauthorized", "InvalidGovernanceAction", "ArithmeticOverflow"],
  "Governance.ExtendPause": ["Unauthorized", "InvalidGovernanceAction", "ArithmeticOverflow"],
  "Governance.Unpause": ["Unauthorized", "InvalidGovernanceAction"],
  Transfer: ["InsufficientBalance"],
  Dispatcher: ["UnknownOpcode", "UnsupportedVersion", "InvalidEncoding"],
};

/** Success branches (§6.1 discipline, §19 net status edge), as "ok: topics". */
const REQUIRED_SUCCESSES: Record<string, string[]> = {
  RegisterProvider: ["ok: provider.registered"],
  UpdateProvider: ["ok: provider.updated"],
  SetProviderStatus: ["ok: provider.status_changed"],
  CreateStream: ["ok: stream.created"],
  UpdateStream: ["ok: stream.updated", "ok: stream.updated, stream.suspended"],
  TopUpStream: ["ok: stream.topped_up", "ok: stream.topped_up, stream.reactivated", "ok: stream.topped_up, stream.suspended"],
  SettleStreamRent: ["ok: stream.rent_settled", "ok: stream.rent_settled, stream.suspended", "ok: stream.data_expired"],
  CloseStream: ["ok: stream.closed"],
  ActivateKeyGeneration: ["ok: stream.key_generation_activated"],
  "Governance.SetParam": ["ok"],
  "Governance.SetParams": ["ok"],
  "Governance.Pause": ["ok"],
  "Governance.ExtendPause": ["ok"],
  "Governance.Unpause": ["ok"],
  Transfer: ["ok"],
};

describe("scenario coverage matrix (CIP-39 §5, §6.1, §17, §19; docs/reference/scenarios.md Coverage)", () => {
  const coverage = computeCoverage();
  const has = (instruction: string, outcome: string) => coverage.cells.has(`${instruction}\u0000${outcome}`);

  it("scenario-format §3: every scenario transaction states status, exact events, and the error name when rejected", () => {
    expect(coverage.incomplete).toEqual([]);
  });

  it("§5/§17: every reachable rejection class of every instruction is asserted by some scenario", () => {
    const missing = Object.entries(REQUIRED_REJECTIONS).flatMap(([ix, names]) => names.filter((n) => !has(ix, n)).map((n) => `${ix} × ${n}`));
    expect(missing).toEqual([]);
  });

  it("§6.1/§19: every success branch (net status edge, expiry, close) is asserted by some scenario", () => {
    const missing = Object.entries(REQUIRED_SUCCESSES).flatMap(([ix, outcomes]) => outcomes.filter((o) => !has(ix, o)).map((o) => `${ix} × ${o}`));
    expect(missing).toEqual([]);
  });

  it("docs/reference/scenarios.md's coverage table is exactly the (instruction, outcome) pairs the scenarios expect", () => {
    const table = coverageTable(coverage);
    if (process.env["UPDATE_COVERAGE_TABLE"] === "1") {
      const text = readFileSync(SCENARIOS_DOC, "utf8");
      const begin = text.indexOf(TABLE_BEGIN);
      const end = text.indexOf(TABLE_END);
      expect(begin).toBeGreaterThan(-1);
      writeFileSync(SCENARIOS_DOC, `${text.slice(0, begin + TABLE_BEGIN.length)}\n${table}\n${text.slice(end)}`);
    }
    expect(documentedTable()).toBe(table);
  });
});
