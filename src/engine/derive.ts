// The CIP-39 derivations a handler performs, charged to its meter by preimage length
// (§18.1 hash charging). The codec computes each value; the lengths follow its formula.
import { utf8 } from "../bytes.js";
import { keyStreamId, scheduleDigest, signingKeyId, streamId } from "../codec/derive.js";
import type { Address, BaseRateScheduleV1, Bytes32, SigningPublicKey } from "../codec/types.js";
import type { Meter } from "./meter.js";

const domain = (text: string): number => utf8(text).length;

/** §4.1: "cbqs/stream-id/v1" ‖ chain_id u64 ‖ chain_instance_id ‖ owner ‖ owner_nonce u64. */
export function meteredStreamId(meter: Meter, chainId: bigint, instance: Bytes32, owner: Address, nonce: bigint): Bytes32 {
  meter.hashPreimageLengths.push(domain("cbqs/stream-id/v1") + 8 + 32 + 20 + 8);
  return streamId(chainId, instance, owner, nonce);
}

/** §4.1: "cbqs/key-stream-id/v1" ‖ main_stream_id. */
export function meteredKeyStreamId(meter: Meter, main: Bytes32): Bytes32 {
  meter.hashPreimageLengths.push(domain("cbqs/key-stream-id/v1") + 32);
  return keyStreamId(main);
}

/** §9.1: "cbqs/signing-key-id/v1" ‖ canonical(key) (1-byte tag + 32-byte key). */
export function meteredSigningKeyId(meter: Meter, key: SigningPublicKey): Bytes32 {
  meter.hashPreimageLengths.push(domain("cbqs/signing-key-id/v1") + 33);
  return signingKeyId(key);
}

/** §4.5: "cbqs/base-rate-schedule/v1" ‖ canonical(BaseRateScheduleV1) (161 bytes): 187 bytes. */
export function meteredScheduleDigest(meter: Meter, schedule: BaseRateScheduleV1): Bytes32 {
  meter.hashPreimageLengths.push(domain("cbqs/base-rate-schedule/v1") + 161);
  return scheduleDigest(schedule);
}
