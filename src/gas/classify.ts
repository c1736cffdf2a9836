// Names each metered state access by key class (state/kv/keys.ts parseStateKey + the engine layout,
// src/engine/layout.ts) and by the role of the address or stream it concerns, so a plan reads
// `R param cbqs.max_streams_per_owner` or `W stream main` rather than as 54 bytes of hex.
import { bytesEqual, toHex, utf8 } from "../bytes.js";
import type { Address, Bytes32 } from "../codec/types.js";
import { keccak256 } from "../crypto/hash.js";
import { classifyRegistryUserKey, PLATFORM_ADDRESS, REGISTRY_ADDRESS, ZERO_ADDRESS } from "../engine/layout.js";
import { pauseRecordKey } from "../engine/pause.js";
import { LIVE_SCALARS } from "../params.js";
import type { StateAccess } from "../../state/kv/interface.js";
import { parseStateKey } from "../../state/kv/keys.js";
import { GOVERNANCE, OWNER, PROVIDER, SPONSOR } from "./builder.js";

const ADDRESS_ROLES: Array<[Address, string]> = [
  [OWNER, "owner"],
  [SPONSOR, "sponsor"],
  [PROVIDER, "provider"],
  [REGISTRY_ADDRESS, "custody"],
  [PLATFORM_ADDRESS, "platform"],
  [ZERO_ADDRESS, "zero"],
];
const PARAM_BY_HASH = new Map(LIVE_SCALARS.map((name) => [toHex(keccak256(utf8(name))), name]));
const PAUSE_KEY = toHex(pauseRecordKey(GOVERNANCE, REGISTRY_ADDRESS));

const role = (a: Address): string => ADDRESS_ROLES.find(([x]) => bytesEqual(x, a))?.[1] ?? toHex(a);

/** `streams` names the scenario's stream ids (e.g. main, key). */
export function classifyKey(key: Uint8Array, streams: ReadonlyArray<[Bytes32, string]>): string {
  if (toHex(key) === PAUSE_KEY) return "pause-record";
  const parsed = parseStateKey(key);
  if (parsed.prefix === "Account" && parsed.layout === "address") return `account ${role(parsed.address)}`;
  if (parsed.prefix === "SystemState" && parsed.layout === "hash") {
    const name = PARAM_BY_HASH.get(toHex(parsed.hash));
    if (name !== undefined) return `param ${name}`;
  }
  if (parsed.prefix === "ActorStorage" && parsed.layout === "addressSlot" && bytesEqual(parsed.address, REGISTRY_ADDRESS) && !parsed.slot.hashed) {
    const entry = classifyRegistryUserKey(parsed.slot.userKey);
    switch (entry?.kind) {
      case "singleton":
        return "singleton";
      case "schedules":
        return "schedules";
      case "provider":
        return `provider-record ${role(entry.provider)}`;
      case "ownerCount":
        return `owner-count ${role(entry.owner)}`;
      case "stream":
        return `stream ${streams.find(([id]) => bytesEqual(id, entry.streamId))?.[1] ?? toHex(entry.streamId)}`;
    }
  }
  return `unclassified ${toHex(key)}`;
}

export const GOVERNANCE_BOUNDS_LINE = "R params×25";

/**
 * One line per access (`R <class>` / `W <class>`); a run of the 25 governance-scalar reads in
 * exact §18.1 order collapses to `R params×25` (any other order stays expanded, and differs).
 */
export function planLines(accesses: readonly StateAccess[], streams: ReadonlyArray<[Bytes32, string]>): string[] {
  const lines = accesses.map((a) => `${a.op === "read" ? "R" : "W"} ${classifyKey(a.key, streams)}`);
  const bounds = LIVE_SCALARS.map((name) => `R param ${name}`);
  const out: string[] = [];
  for (let i = 0; i < lines.length; ) {
    if (bounds.every((b, j) => lines[i + j] === b)) {
      out.push(GOVERNANCE_BOUNDS_LINE);
      i += bounds.length;
    } else {
      out.push(lines[i]!);
      i += 1;
    }
  }
  return out;
}
