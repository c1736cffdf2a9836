// The CBQS-portion meter of one instruction (CIP-39 §18.1, Security Considerations → Denial of
// service). Every cost constant lives here and nowhere else. The schedule starts from CIP-3's
// published points (read 10 cycles, write 50 cycles, ~6 cycles per hashed 32-byte word, a
// signature verification priced like ECDSA's 3,000 cycles); §18.1 fixes hash charging at
// max(1, ceil(len / 32)) words. Platform charges (transaction base, intrinsic calldata, the
// outer dispatch, the breaker check, the nonce step) are outside this meter.
import type { InstructionName } from "../codec/types.js";
import { keccak256 } from "../crypto/hash.js";
import { meteredEventBytes, type Event } from "../../state/kv/event.js";
import type { StateAccess } from "../../state/kv/interface.js";
import { EngineDefect } from "./errors.js";

export interface Reservation {
  readonly reads: number;
  readonly writes: number;
}

/** §18.1: the reserved (reads, writes) pair of every instruction, a protocol constant. */
export const RESERVATIONS: Readonly<Record<InstructionName, Reservation>> = {
  RegisterProvider: { reads: 28, writes: 2 },
  UpdateProvider: { reads: 28, writes: 2 },
  SetProviderStatus: { reads: 3, writes: 2 },
  CreateStream: { reads: 34, writes: 11 },
  UpdateStream: { reads: 35, writes: 8 },
  TopUpStream: { reads: 34, writes: 7 },
  SettleStreamRent: { reads: 33, writes: 7 },
  CloseStream: { reads: 34, writes: 9 },
  ActivateKeyGeneration: { reads: 4, writes: 2 },
};

/**
 * The most work of each kind an instruction's handler may perform beyond its state I/O: the
 * one-signature-per-action limit (CIP-39 Denial of service) and the handler hashes of "Which
 * hashes the meter charges" (CreateStream: stream id, key stream id, then signing_key_id + quote
 * digest or the schedule digest; UpdateStream: the schedule digest or signing_key_id + quote
 * digest; ActivateKeyGeneration: the receipt digest). With the reservation they bound the cycles
 * any path can be charged, which is what a sender must be able to pay before execution
 * (D-0013 "Included transactions: nonce and fee"); the meter enforces them.
 */
const WORK_BOUNDS: Readonly<Record<InstructionName, { readonly signatures: number; readonly hashes: number }>> = {
  RegisterProvider: { signatures: 0, hashes: 0 },
  UpdateProvider: { signatures: 0, hashes: 0 },
  SetProviderStatus: { signatures: 0, hashes: 0 },
  CreateStream: { signatures: 1, hashes: 4 },
  UpdateStream: { signatures: 1, hashes: 2 },
  TopUpStream: { signatures: 0, hashes: 0 },
  SettleStreamRent: { signatures: 0, hashes: 0 },
  CloseStream: { signatures: 0, hashes: 0 },
  ActivateKeyGeneration: { signatures: 1, hashes: 1 },
};

/**
 * Longest handler hash preimage for a payload: a signing digest hashes a domain tag (< 64 bytes)
 * and a structure decoded from the payload; a fixed derivation is at most 188 bytes (the §4.5
 * schedule digest).
 */
const maxPreimageBytes = (payloadBytes: number): number => payloadBytes + 192;

/**
 * The most cycles an instruction with this payload can be charged on any path: decode surcharge,
 * the full reservation, every allowed signature and hash at the longest preimage. Accepted
 * charges are at most this (actual reads/writes never exceed the reservation), rejected ones too.
 */
export function cycleBound(instruction: InstructionName, payloadBytes: number, costs: CostSchedule = COSTS): bigint {
  const r = RESERVATIONS[instruction];
  const w = WORK_BOUNDS[instruction];
  return (
    BigInt(payloadBytes) * costs.decodeCyclesPerPayloadByte +
    BigInt(r.reads) * costs.readCycles +
    BigInt(r.writes) * costs.writeCycles +
    BigInt(w.hashes) * hashWords(maxPreimageBytes(payloadBytes)) * costs.hashWordCycles +
    BigInt(w.signatures) * costs.ed25519VerifyCycles
  );
}

/** A cost schedule (cycles and cells). */
export interface CostSchedule {
  readonly readCycles: bigint;
  readonly writeCycles: bigint;
  readonly hashWordCycles: bigint;
  readonly ed25519VerifyCycles: bigint;
  readonly decodeCyclesPerPayloadByte: bigint;
  readonly cellsPerWrittenByte: bigint;
  readonly cellsPerEventByte: bigint;
}

/** The cost schedule (cycles and cells), in one place. */
export const COSTS: Readonly<CostSchedule> = {
  readCycles: 10n,
  writeCycles: 50n,
  hashWordCycles: 6n,
  ed25519VerifyCycles: 3_000n,
  /** Decode surcharge: canonical decode of the CbqsInstructionV1 payload, per byte. */
  decodeCyclesPerPayloadByte: 1n,
  /** State growth: per byte written (54-byte key plus value bytes). */
  cellsPerWrittenByte: 1n,
  /**
   * Per metered byte of each emitted event: 20 (emitter) + 4 + topic bytes + 4 + payload bytes
   * (meteredEventBytes), a schedule size and not the length of the event's canonical encoding
   * that logs_root commits (D-0048 "Metered event size").
   */
  cellsPerEventByte: 1n,
};

/** §18.1: hash charging is max(1, ceil(len / 32)) words; an empty preimage costs one word. */
export function hashWords(length: number): bigint {
  return BigInt(Math.max(1, Math.ceil(length / 32)));
}

/** The raw usage of one instruction: everything its charge is computed from. */
export interface MeterUsage {
  readonly instruction: InstructionName;
  readonly payloadBytes: number;
  readonly reads: number;
  readonly writes: number;
  readonly hashPreimageLengths: readonly number[];
  readonly signatures: number;
  readonly writtenBytes: number;
  readonly eventBytes: number;
}

export interface Charge {
  readonly chargedReads: number;
  readonly chargedWrites: number;
  readonly cycles: bigint;
  readonly cells: bigint;
}

/**
 * The charge of one instruction under `costs` (a parameter so a perturbed schedule can be
 * evaluated without mutating COSTS). §18.1: the reservation is taken before the first state
 * operation and the unreserved remainder is refunded only after the transition commits, so an
 * accepted instruction is charged its actual reads/writes and a rejected one its full
 * reservation (the clamp; actual never exceeds it — that is an EngineDefect). Hashes,
 * signatures and the decode surcharge are charged as performed on both paths. Cells price state
 * growth and logs: a rejected instruction persists neither, so it has none.
 */
export function charge(usage: MeterUsage, accepted: boolean, costs: CostSchedule = COSTS): Charge {
  const reservation = RESERVATIONS[usage.instruction];
  const chargedReads = accepted ? usage.reads : reservation.reads;
  const chargedWrites = accepted ? usage.writes : reservation.writes;
  let hashCycles = 0n;
  for (const length of usage.hashPreimageLengths) hashCycles += hashWords(length) * costs.hashWordCycles;
  const cycles =
    BigInt(usage.payloadBytes) * costs.decodeCyclesPerPayloadByte +
    BigInt(chargedReads) * costs.readCycles +
    BigInt(chargedWrites) * costs.writeCycles +
    hashCycles +
    BigInt(usage.signatures) * costs.ed25519VerifyCycles;
  const cells = accepted ? BigInt(usage.writtenBytes) * costs.cellsPerWrittenByte + BigInt(usage.eventBytes) * costs.cellsPerEventByte : 0n;
  return { chargedReads, chargedWrites, cycles, cells };
}

/** Strict Ed25519 verification (§9.1): one of the verifiers of src/engine/fast-paths.ts, or a stand-in that gives their answers. */
export type SignatureVerifier = (publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array) => boolean;

export class Meter implements MeterUsage {
  reads = 0;
  writes = 0;
  readonly hashPreimageLengths: number[] = [];
  signatures = 0;
  writtenBytes = 0;
  eventBytes = 0;

  constructor(
    readonly instruction: InstructionName,
    readonly payloadBytes: number,
    private readonly verify: SignatureVerifier,
  ) {}

  get reservation(): Reservation {
    return RESERVATIONS[this.instruction];
  }

  /** Batch observer: counts each metered access; exceeding the reservation is an engine bug. */
  observe(access: StateAccess): void {
    if (access.op === "read") {
      this.reads += 1;
      if (this.reads > this.reservation.reads) {
        throw new EngineDefect(`${this.instruction} exceeded its §18.1 read reservation (${this.reservation.reads})`);
      }
    } else {
      this.writes += 1;
      if (this.writes > this.reservation.writes) {
        throw new EngineDefect(`${this.instruction} exceeded its §18.1 write reservation (${this.reservation.writes})`);
      }
      this.writtenBytes += access.key.length + (access.after?.length ?? 0);
    }
  }

  /** Every keccak256 a handler performs goes through here so its preimage length is charged. */
  keccak(preimage: Uint8Array): Uint8Array {
    if (this.hashPreimageLengths.length >= WORK_BOUNDS[this.instruction].hashes || preimage.length > maxPreimageBytes(this.payloadBytes)) {
      throw new EngineDefect(`${this.instruction} exceeded its hash bound (${WORK_BOUNDS[this.instruction].hashes} of at most ${maxPreimageBytes(this.payloadBytes)} bytes)`);
    }
    this.hashPreimageLengths.push(preimage.length);
    return keccak256(preimage);
  }

  /** §9.1 strict Ed25519, one charged verification. */
  verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
    if (this.signatures >= WORK_BOUNDS[this.instruction].signatures) {
      throw new EngineDefect(`${this.instruction} exceeded its signature bound (${WORK_BOUNDS[this.instruction].signatures})`);
    }
    this.signatures += 1;
    return this.verify(publicKey, message, signature);
  }

  emitted(event: Event): void {
    this.eventBytes += meteredEventBytes(event);
  }

  cycles(accepted: boolean): bigint {
    return charge(this, accepted).cycles;
  }

  cells(accepted: boolean): bigint {
    return charge(this, accepted).cells;
  }
}
