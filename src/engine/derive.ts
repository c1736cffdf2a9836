// The CIP-39 derivations a handler performs, hashed through its meter so every preimage
// length is charged (§18.1 hash charging).
import { keyStreamId, scheduleDigest, signingKeyId, streamId } from "../codec/derive.js";
import type { Address, BaseRateScheduleV1, Bytes32, SigningPublicKey } from "../codec/types.js";
import type { Meter } from "./meter.js";

const through = (meter: Meter) => (preimage: Uint8Array) => meter.keccak(preimage);

/** §4.1 main stream id. */
export function meteredStreamId(meter: Meter, chainId: bigint, instance: Bytes32, owner: Address, nonce: bigint): Bytes32 {
  return streamId(chainId, instance, owner, nonce, through(meter));
}

/** §4.1 key stream id of a main stream. */
export function meteredKeyStreamId(meter: Meter, main: Bytes32): Bytes32 {
  return keyStreamId(main, through(meter));
}

/** §9.1 signing_key_id. */
export function meteredSigningKeyId(meter: Meter, key: SigningPublicKey): Bytes32 {
  return signingKeyId(key, through(meter));
}

/** §4.5 schedule_digest (a 187-byte preimage). */
export function meteredScheduleDigest(meter: Meter, schedule: BaseRateScheduleV1): Bytes32 {
  return scheduleDigest(schedule, through(meter));
}
