// The single table of every typed rejection the engine reports (docs/reference/errors.md lists it).
// CIP-39 §17 codes where §17 names the condition; the project's own codes otherwise
// (4000 is the codec's InvalidEncoding; the engine's own range starts at 4100).
import { INVALID_ENCODING_CODE, UNSUPPORTED_VERSION_CODE } from "../codec/errors.js";

export interface ErrorDef {
  readonly code: number;
  readonly condition: string;
}

export const ERRORS = {
  // ---- CIP-39 §17 ----
  StreamNotFound: { code: 3900, condition: "no stream record under the named stream id" },
  StreamNotActive: { code: 3901, condition: "the named stream is terminal: Closed and DataExpired are absorbing (§5)" },
  StreamSuspended: { code: 3902, condition: "UpdateStream/ActivateKeyGeneration on a materialized Suspended stream (§6.1 Active-only gate)" },
  ProviderEpochStale: { code: 3903, condition: "a KeyBatchReceiptV1 whose provider_epoch is not the record's; unreachable through a v1 payload, whose codec admits epoch 0 only (§4)" },
  InvalidKeyBatch: { code: 3924, condition: "ActivateKeyGeneration receipt fails §9.3: served_at height, key stream id, a generation other than the next one (stale or skipped), or the signature" },
  BaseRateNotAccepted: { code: 3933, condition: "governance-base admission while the provider's accepts_new is false (§4.3, §5)" },
  BaseRateCapacityExceeded: { code: 3934, condition: "a base-rate reservation would exceed a provider cap (§5)" },
  BaseRateScheduleUnavailable: { code: 3935, condition: "the stored base-rate schedule record is absent or malformed (§4.5)" },
  PricingBasisInvalid: { code: 3936, condition: "a PriceQuoteV1 fails §4.4, a quote is given where no repricing happens, a ProviderQuote repricing lacks one, or an all-zero-capacity governance-base derivation (§4.5)" },
  UnsupportedVersion: { code: UNSUPPORTED_VERSION_CODE, condition: "a payload version byte other than 1 (codec)" },
  ChainInstanceMismatch: { code: 3938, condition: "a signed object's context or served_at names another chain (§4)" },
  // ---- codec ----
  InvalidEncoding: { code: INVALID_ENCODING_CODE, condition: "the payload is not a canonical CbqsInstructionV1 (codec DecodeError)" },
  // ---- engine (project range) ----
  UnknownOpcode: { code: 4100, condition: "a system instruction whose opcode is not SYS_CBQS = 218 (§3)" },
  RegistryPaused: { code: 4101, condition: "the CIP-12 emergency-pause breaker covers 0x17 (Security Considerations: Denial of service)" },
  RegistryStateInvalid: { code: 4102, condition: "fail closed: singleton, pause record, schedule, a record or custody is missing, malformed or inconsistent (§3, §4.1, §5, §6.1)" },
  Unauthorized: { code: 4103, condition: "the transaction sender is not the account the action requires (§5 authorization column, governance)" },
  ProviderAlreadyRegistered: { code: 4104, condition: "RegisterProvider by an address that already has a provider record" },
  ProviderNotFound: { code: 4105, condition: "no provider record for the sender or the named provider" },
  ProviderNotActive: { code: 4106, condition: "CreateStream naming a provider whose status is not Active (§4.3)" },
  EndpointRejected: { code: 4107, condition: "an endpoint fails §4.3 consensus admission" },
  NoOpRejected: { code: 4108, condition: "an UpdateProvider with every field absent, an unchanged SetProviderStatus, a no-op UpdateStream, a byte-identical SettleStreamRent (§5, §19)" },
  CapBelowReservation: { code: 4109, condition: "UpdateProvider lowering a base-rate cap below its current reservation (§4.3)" },
  ProviderHasLiveStreams: { code: 4110, condition: "SetProviderStatus(Deregistered) with live_assigned_streams > 0 (§4.3)" },
  OwnerNonceUsed: { code: 4111, condition: "CreateStream with an (owner, owner_nonce) already used (§4.1)" },
  InvalidStreamConfig: { code: 4112, condition: "StreamConfigV1 fails §4.2 field-by-field or cross-field validation" },
  OwnerStreamLimit: { code: 4113, condition: "the owner already has cbqs.max_streams_per_owner live streams" },
  InsufficientBalance: { code: 4114, condition: "a debit exceeds the account balance, or a u128 amount exceeds u64 (§5)" },
  InvalidAmount: { code: 4115, condition: "TopUpStream with amount = 0 (§6.1)" },
  GraceDeadlinePassed: { code: 4116, condition: "TopUpStream on a stream Suspended at or past its pinned deadline (§6.1)" },
  KeyStreamNotIndependent: { code: 4117, condition: "an instruction names a linked key stream, which is never operated independently (§4.1)" },
  StreamNotEncrypted: { code: 4118, condition: "ActivateKeyGeneration for an unencrypted stream (§9.3)" },
  ArithmeticOverflow: { code: 4119, condition: "a checked u64/u128 computation overflowed (§4.5, §5, §6)" },
  InvalidGovernanceAction: { code: 4120, condition: "a parameter write outside the 25 live scalars, out of bounds, breaking the bps sum guard, or a pause action invalid in the current pause state" },
} as const satisfies Record<string, ErrorDef>;

export type ErrorName = keyof typeof ERRORS;

/**
 * A rejection: the transaction has no effect (compute-then-commit, §5). Rejections are ordinary
 * outcomes, reported by name, code and message, never by stack: capturing a stack trace for
 * each one cost ~3 % of a long-chain replay, so none is captured.
 */
export class CbqsError extends Error {
  override name = "CbqsError";
  readonly errorName: ErrorName;
  readonly code: number;
  constructor(errorName: ErrorName, message: string, code?: number) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.errorName = errorName;
    this.code = code ?? ERRORS[errorName].code;
  }
}

export function reject(name: ErrorName, message: string): never {
  throw new CbqsError(name, message);
}

/** An engine bug (e.g. a handler exceeding its §18.1 reservation): never a rejection, fails loudly. */
export class EngineDefect extends Error {
  override name = "EngineDefect";
}

/** An invalid genesis configuration; the message names the field. */
export class GenesisError extends Error {
  override name = "GenesisError";
}

/** A block the engine cannot execute (height not above the previous one): an input error. */
export class BlockInputError extends Error {
  override name = "BlockInputError";
}
