// What the fuzz generator must reach: every rejection a transaction can
// provoke in the fuzz world, each instruction's acceptance, every §6.1 state of
// src/fuzz/cells.ts, the u64/u128 edges and a write to every live scalar — each in at least
// MIN_SHARE of runs (scripts/fuzz-census.ts and test/fuzz/census.test.ts check it). The errors
// no fuzz transaction can provoke are listed with the reason, so "every rejection" is not
// vacuous: each name in src/engine/errors.ts is required somewhere or excluded here.
import type { ErrorName } from "../engine/errors.js";
import { LIVE_SCALARS } from "../params.js";
import type { CellCount } from "./census.js";
import { STATE, type CellGroup } from "./cells.js";

/** The share of runs every required cell must appear in. */
export const MIN_SHARE = 0.005;

/** Every stream instruction that loads a named stream (docs/reference/errors.md "Load the named stream"). */
const LOADS_STREAM = ["StreamNotFound", "KeyStreamNotIndependent", "StreamNotActive"] as const;

/** Per transaction kind (the census's words), the outcomes it must reach: "ok" and the errors of docs/reference/errors.md's check order. */
export const REQUIRED_OUTCOMES: Readonly<Record<string, readonly (ErrorName | "ok")[]>> = {
  RegisterProvider: ["ok", "ProviderAlreadyRegistered", "EndpointRejected", "RegistryPaused"],
  UpdateProvider: ["ok", "NoOpRejected", "ProviderNotFound", "EndpointRejected", "CapBelowReservation", "RegistryPaused"],
  SetProviderStatus: ["ok", "ProviderNotFound", "NoOpRejected", "ProviderHasLiveStreams", "RegistryPaused"],
  CreateStream: [
    "ok",
    "ChainInstanceMismatch",
    "ProviderNotFound",
    "ProviderNotActive",
    "InvalidStreamConfig",
    "OwnerNonceUsed",
    "OwnerStreamLimit",
    "PricingBasisInvalid",
    "ArithmeticOverflow",
    "BaseRateNotAccepted",
    "BaseRateCapacityExceeded",
    "InsufficientBalance",
    "RegistryPaused",
  ],
  UpdateStream: [
    "ok",
    "NoOpRejected",
    "ChainInstanceMismatch",
    ...LOADS_STREAM,
    "Unauthorized",
    "StreamSuspended",
    "InvalidStreamConfig",
    "PricingBasisInvalid",
    "BaseRateNotAccepted",
    "BaseRateCapacityExceeded",
    "ArithmeticOverflow",
    "RegistryPaused",
  ],
  TopUpStream: ["ok", "InvalidAmount", ...LOADS_STREAM, "Unauthorized", "GraceDeadlinePassed", "InsufficientBalance", "ArithmeticOverflow", "RegistryPaused"],
  SettleStreamRent: ["ok", ...LOADS_STREAM, "NoOpRejected", "ArithmeticOverflow", "RegistryPaused"],
  CloseStream: ["ok", ...LOADS_STREAM, "Unauthorized", "ArithmeticOverflow", "RegistryPaused"],
  ActivateKeyGeneration: ["ok", "ChainInstanceMismatch", ...LOADS_STREAM, "StreamNotEncrypted", "Unauthorized", "StreamSuspended", "InvalidKeyBatch", "RegistryPaused"],
  "CbqsInstructionV1(undecodable)": ["UnsupportedVersion", "InvalidEncoding", "RegistryPaused"],
  "System(217)": ["UnknownOpcode"],
  "Gov.SetParam": ["ok", "Unauthorized", "InvalidGovernanceAction"],
  "Gov.SetParams": ["ok", "Unauthorized", "InvalidGovernanceAction"],
  "Gov.Pause": ["ok", "Unauthorized", "InvalidGovernanceAction", "ArithmeticOverflow"],
  "Gov.ExtendPause": ["ok", "Unauthorized", "InvalidGovernanceAction", "ArithmeticOverflow"],
  "Gov.Unpause": ["ok", "Unauthorized", "InvalidGovernanceAction"],
  Transfer: ["ok", "InsufficientBalance"],
};

/** Error names no fuzz transaction can provoke: the chain starts from a valid genesis and only executes transactions. */
export const EXCLUDED_ERRORS: Readonly<Partial<Record<ErrorName, string>>> = {
  RegistryStateInvalid: "fail-closed on malformed or inconsistent stored state; no transaction can write such state, and the fuzz chain starts from a valid genesis",
  ProviderEpochStale: "a receipt's provider_epoch other than the record's; the v1 codec admits epoch 0 only, the epoch every record has (§4)",
  BaseRateScheduleUnavailable: "the schedule record is written at genesis (every unit size at least 1) and no instruction or governance action changes it",
};

/** Errors the check order lists for an instruction that the fuzz world cannot provoke there (required elsewhere). */
export const UNREACHABLE_PAIRS: ReadonlyArray<{ kinds: string; error: ErrorName; reason: string }> = [
  {
    kinds: "ActivateKeyGeneration",
    error: "ArithmeticOverflow",
    reason: "its only checked sums are the encryption and authorization generations + 1, which would need 2^64 activations (the other instructions overflow in their settlement: rent due at a rate near u128)",
  },
  {
    kinds: "every CBQS instruction but CreateStream and TopUpStream",
    error: "InsufficientBalance",
    reason: "a sender who cannot pay the fee at the reservation is not includable (no receipt); only CreateStream and TopUpStream also debit the sender",
  },
  {
    kinds: "Transfer",
    error: "Unauthorized",
    reason: "a transfer from a keyless account (0x17, 0x18, the burn address) is not includable; the census lists it under left out",
  },
];

/** The §6.1 and path cells every census must reach. */
export const REQUIRED_STATES: readonly string[] = [
  "Active → Suspended by SettleStreamRent",
  "Active → Suspended by TopUpStream",
  "Active → Suspended by UpdateStream",
  STATE.suspendedPastDeadline,
  "Suspended → Active by TopUpStream",
  "Suspended → DataExpired by SettleStreamRent",
  STATE.expiredAtDeadline,
  STATE.expiredAfterDeadline,
  "Active → Closed by CloseStream",
  "Suspended → Closed by CloseStream",
  STATE.closedInArrears,
  STATE.closedSuspendedBefore,
  STATE.closedSuspendedAfter,
  STATE.topUpLastBlock,
  STATE.topUpAtDeadline,
  STATE.topUpActivePastDeadline,
  STATE.settleBeforeDeadline,
  STATE.settledInFull,
  STATE.paysTwice,
  STATE.paysTwiceFloors,
  STATE.partialKeepsPair,
  STATE.secondKeepsPair,
  STATE.pauseHoldsDeadline,
  STATE.pauseHoldsRunway,
  STATE.generationChain,
  STATE.createdBase,
  STATE.createdQuote,
  STATE.repricedBase,
  STATE.repricedQuote,
  STATE.quoteLastBlock("CreateStream"),
  STATE.quoteLastBlock("UpdateStream"),
  STATE.quoteExpired("CreateStream"),
  STATE.quoteExpired("UpdateStream"),
];

export const REQUIRED_EDGES: readonly string[] = [
  "TopUpStream amount u64 max",
  "TopUpStream amount u64 max + 1",
  "TopUpStream amount u128 max",
  "CreateStream initial_escrow u64 max",
  "CreateStream initial_escrow u64 max + 1",
  "CreateStream initial_escrow u128 max",
  "CreateStream owner_nonce u64 max",
  "quote rate_per_block 2^64",
  "quote rate_per_block 2^127",
  "Pause blocks u64 max",
  "ExtendPause blocks u64 max",
  "parameter write of u64 max (SetParam or SetParams)",
  "Transfer amount u64 max",
];

export interface RequiredCell {
  group: CellGroup;
  name: string;
}

/** Every required cell, in the census's group order. */
export function requiredCells(): RequiredCell[] {
  return [
    ...Object.entries(REQUIRED_OUTCOMES).flatMap(([kind, outcomes]) => outcomes.map((o) => ({ group: "outcome" as const, name: `${kind}: ${o}` }))),
    ...REQUIRED_STATES.map((name) => ({ group: "state" as const, name })),
    ...REQUIRED_EDGES.map((name) => ({ group: "edge" as const, name })),
    ...LIVE_SCALARS.map((name) => ({ group: "param" as const, name })),
  ];
}

/** The required cells below MIN_SHARE of `runs` runs, with the runs they appeared in. */
export function missedCells(cells: readonly CellCount[], runs: number): Array<RequiredCell & { runs: number }> {
  const found = new Map(cells.map((c) => [`${c.group}\n${c.name}`, c.runs]));
  return requiredCells()
    .map((c) => ({ ...c, runs: found.get(`${c.group}\n${c.name}`) ?? 0 }))
    .filter((c) => c.runs < MIN_SHARE * runs);
}
