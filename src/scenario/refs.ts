// Stream references (scenario-format §1): {"owner", "owner_nonce"} is the §4.1 main stream
// id, {"key_stream_of": ref} that stream's §4.1 key stream id. Expectation keys (§3) may be
// written "owner:0x…/nonce:N", "key_stream_of:<key>" (this project's extension), or the id.
import { keyStreamId, streamId } from "../codec/derive.js";
import { address, at, hexBytes, isObject, onlyKeys, ScenarioError, u64 } from "./json.js";

export interface ChainIdentity {
  chainId: bigint;
  chainInstanceId: Uint8Array;
}

/** Resolves a JSON stream reference, or a 32-byte hex id, to a stream id. */
export function resolveStreamRef(v: unknown, path: string, id: ChainIdentity): Uint8Array {
  if (typeof v === "string") return hexBytes(v, path, 32);
  if (!isObject(v)) throw new ScenarioError(path, "expected a stream id or a stream reference");
  if (v["key_stream_of"] !== undefined) {
    onlyKeys(v, ["key_stream_of"], path);
    return keyStreamId(resolveStreamRef(v["key_stream_of"], at(path, "key_stream_of"), id));
  }
  onlyKeys(v, ["owner", "owner_nonce"], path);
  if (v["owner"] === undefined || v["owner_nonce"] === undefined) {
    throw new ScenarioError(path, 'a stream reference is {"owner", "owner_nonce"} or {"key_stream_of": <reference>}');
  }
  return streamId(id.chainId, id.chainInstanceId, address(v["owner"], at(path, "owner")), u64(v["owner_nonce"], at(path, "owner_nonce")));
}

const OWNER_KEY = /^owner:(0x[0-9a-fA-F]{40})\/nonce:([0-9]+)$/;
const KEY_OF = "key_stream_of:";

/** Checks an expectation key's form before anything runs (the ids need the chain's identity). */
export function checkStreamKey(key: string, path: string): void {
  if (key.startsWith(KEY_OF)) return checkStreamKey(key.slice(KEY_OF.length), path);
  if (OWNER_KEY.test(key) || /^0x[0-9a-fA-F]{64}$/.test(key)) return;
  throw new ScenarioError(path, 'stream key must be "0x<32-byte id>", "owner:0x<addr>/nonce:<n>" or "key_stream_of:<key>"');
}

/** Resolves an expectation key string to a stream id. */
export function resolveStreamKey(key: string, path: string, id: ChainIdentity): Uint8Array {
  if (key.startsWith(KEY_OF)) return keyStreamId(resolveStreamKey(key.slice(KEY_OF.length), path, id));
  const m = OWNER_KEY.exec(key);
  if (m !== null) return streamId(id.chainId, id.chainInstanceId, address(m[1], path), u64(m[2], path));
  if (/^0x[0-9a-fA-F]{64}$/.test(key)) return hexBytes(key, path, 32);
  throw new ScenarioError(path, 'stream key must be "0x<32-byte id>", "owner:0x<addr>/nonce:<n>" or "key_stream_of:<key>"');
}
