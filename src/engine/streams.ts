// Stream-pair helpers shared by the stream instructions (CIP-39 §4.1, §5, §6.1).
//
// The linked key stream of an encrypted main stream is a pure function of the main record
// (D-0054): it copies every field the pair shares and mirrors the main stream's
// lifecycle, generations, keys and pricing basis, with its own id, purpose Key, Standard class,
// no stream-layer encryption, the back link, rate 0, escrow 0, and a config derived from the
// main config. Every pair transition therefore writes deriveKeyStream(main'), and every load
// checks the stored key record against deriveKeyStream(main) (divergence fails closed).
import { bytesEqual, toHex } from "../bytes.js";
import type { Bytes32, StreamConfigV1, StreamRecordV1 } from "../codec/types.js";
import { paramRow } from "../params.js";
import { encodeStreamRecord, readStream, type Singleton, type TxContext } from "./context.js";
import { reject } from "./errors.js";

const standardDefault = (name: string): bigint => paramRow(name)!.default;

/**
 * The key stream's configuration (§4.2 last paragraph): the main config's shared fields,
 * so key-stream retention (time and bytes) always equals the main stream's and covers every
 * generation replayable under it; Standard-only fields copied from a Standard main stream,
 * or the §18 Standard defaults for a Fast one; fast-only fields zero.
 */
export function keyStreamConfig(main: StreamRecordV1): StreamConfigV1 {
  const c = main.config;
  const standard = main.delivery_class === "Standard";
  return {
    retention_ms: c.retention_ms,
    retained_bytes_limit: c.retained_bytes_limit,
    max_message_bytes: c.max_message_bytes,
    max_append_bytes_per_sec: c.max_append_bytes_per_sec,
    max_delivered_bytes_per_sec: c.max_delivered_bytes_per_sec,
    max_lanes: c.max_lanes,
    idempotency_horizon_ms: standard ? c.idempotency_horizon_ms : standardDefault("cbqs.standard.idempotency_horizon_ms"),
    default_visibility_ms: standard ? c.default_visibility_ms : standardDefault("cbqs.standard.visibility_ms"),
    max_visibility_ms: standard ? c.max_visibility_ms : standardDefault("cbqs.standard.visibility_ms"),
    default_max_attempts: standard ? c.default_max_attempts : Number(standardDefault("cbqs.standard.max_attempts")),
    fast_batch_max_ms: 0,
    fast_batch_max_records: 0,
  };
}

/** §4.1: the linked key stream record of an encrypted main record. */
export function deriveKeyStream(main: StreamRecordV1): StreamRecordV1 {
  if (main.linked_stream_id === null) return reject("RegistryStateInvalid", "encrypted stream without a linked key stream");
  return {
    ...main,
    stream_id: main.linked_stream_id,
    purpose: "Key",
    delivery_class: "Standard",
    encrypted: false,
    linked_stream_id: main.stream_id,
    config: keyStreamConfig(main),
    rate_per_block: 0n,
    escrow_balance: 0n,
  };
}

export const isTerminal = (status: StreamRecordV1["status"]): boolean => status === "Closed" || status === "DataExpired";

export interface StreamPair {
  main: StreamRecordV1;
  /** The stored linked key stream (encrypted main streams only). */
  key: StreamRecordV1 | null;
}

/**
 * Loads the main stream an instruction names, plus its key stream when encrypted: one read,
 * or two. Rejects an unknown id, a key stream named directly, and a terminal record (§5:
 * Closed and DataExpired are absorbing).
 */
export function loadStreamPair(ctx: TxContext, s: Singleton, id: Bytes32): StreamPair {
  const main = readStream(ctx, s, id);
  if (main === null) return reject("StreamNotFound", `no stream ${toHex(id)}`);
  if (main.purpose === "Key") reject("KeyStreamNotIndependent", `stream ${toHex(id)} is a linked key stream`);
  if (isTerminal(main.status)) reject("StreamNotActive", `stream ${toHex(id)} is ${main.status}`);
  if (!main.encrypted) return { main, key: null };
  const key = readStream(ctx, s, main.linked_stream_id ?? reject("RegistryStateInvalid", "encrypted stream without link"));
  if (key === null || !bytesEqual(encodeStreamRecord(key), encodeStreamRecord(deriveKeyStream(main)))) {
    reject("RegistryStateInvalid", `key stream of ${toHex(id)} is missing or diverges from its main stream`);
  }
  return { main, key };
}

/** The records a pair transition writes: the main record and, when encrypted, its mirror. */
export function pairRecords(main: StreamRecordV1): StreamRecordV1[] {
  return main.encrypted ? [main, deriveKeyStream(main)] : [main];
}
