// The engine property tests' invariants, checked after every block of a generated chain (the
// chain model itself is src/fuzz/model.ts, shared with `cbqs fuzz`).
import { bytesEqual, fromHex, toHex } from "../../src/bytes.js";
import type { BlockInput } from "../../src/engine/inputs.js";
import { decode, toJson } from "../../src/codec/core.js";
import { keyStreamId } from "../../src/codec/derive.js";
import * as S from "../../src/codec/schema.js";
import type { StreamRecordV1 } from "../../src/codec/types.js";
import type { Chain, TxOutcome } from "../../src/engine/chain.js";
import { ownerCountKey, REGISTRY_ADDRESS } from "../../src/engine/layout.js";
import { OWNERS, PROPERTY_WORLD } from "../../src/fuzz/world.js";
import type { JsonObject } from "../../src/scenario/json.js";
import type { MemoryStateStore } from "../../state/store/store.js";
import { decodeStateValueAs } from "../../state/kv/value.js";

/** Runs per property: small in CI, raise locally with CBQS_PROPERTY_RUNS=1000. */
export const NUM_RUNS = Number(process.env["CBQS_PROPERTY_RUNS"] ?? 30);

/** Fees are zero in the property world, so CBY only moves (burns credit the zero address). */
const TOTAL_SUPPLY = PROPERTY_WORLD.config.accounts.reduce((sum, a) => sum + a.balance, 0n);

// ---- invariants -----------------------------------------------------------------------------------

const LIVE = new Set(["Active", "Suspended"]);

function ownerCount(store: MemoryStateStore, owner: Uint8Array): bigint {
  const bytes = store.read(ownerCountKey(owner));
  if (bytes === undefined) return 0n;
  const raw = decodeStateValueAs(bytes, "StorageSlot").bytes;
  return raw.reduce((v, b) => (v << 8n) | BigInt(b), 0n);
}

/** Asserts every cross-record invariant; returns a description of the first violation or null. */
export function invariantViolation(chain: Chain, store: MemoryStateStore): string | null {
  const streams = chain.streams();
  const byId = new Map(streams.map((s) => [toHex(s.stream_id), s]));
  const live = streams.filter((s) => LIVE.has(s.status));
  // §5 custody: the registry account backs every live escrow.
  const escrow = streams.reduce((sum, s) => sum + s.escrow_balance, 0n);
  const custody = chain.account(REGISTRY_ADDRESS).balance;
  if (custody < escrow) return `custody ${custody} < Σ escrow ${escrow}`;
  // Conservation: fees are zero, so CBY only moves (burns credit the zero address).
  const supply = chain.accounts().reduce((sum, a) => sum + a.balance, 0n);
  if (supply !== TOTAL_SUPPLY) return `total supply ${supply} != ${TOTAL_SUPPLY}`;
  for (const s of streams) {
    const id = toHex(s.stream_id);
    // §6.1: Active ⇔ both pinned fields absent; Suspended carries both; terminal clears both.
    const pinned = [s.suspended_at_block, s.suspension_grace_deadline_block].filter((x) => x !== null).length;
    if (s.status === "Suspended" ? pinned !== 2 : pinned !== 0) return `${id} ${s.status} with ${pinned} pinned fields`;
    if (!LIVE.has(s.status) && s.escrow_balance !== 0n) return `${id} terminal with escrow ${s.escrow_balance}`;
    if (s.purpose === "Main" && s.encrypted) {
      // §4.1: the key stream mirrors the main stream atomically.
      const k = s.linked_stream_id === null ? undefined : byId.get(toHex(s.linked_stream_id));
      if (k === undefined) return `${id} encrypted without its key stream`;
      if (!bytesEqual(k.stream_id, keyStreamId(s.stream_id))) return `${id} links a key stream with the wrong id`;
      const mirrored: Array<keyof StreamRecordV1> = [
        "status",
        "suspended_at_block",
        "suspension_grace_deadline_block",
        "last_settled_block",
        "encryption_generation",
        "authorization_generation",
        "pricing_generation",
        "pricing_basis",
        "owner",
        "provider",
        "provider_signing_key",
        "admin_key",
      ];
      const mj = toJson(S.StreamRecordV1, s) as JsonObject;
      const kj = toJson(S.StreamRecordV1, k) as JsonObject;
      for (const f of mirrored) {
        if (JSON.stringify(mj[f]) !== JSON.stringify(kj[f])) return `${id} key stream ${f} diverges`;
      }
      if (k.purpose !== "Key" || k.encrypted || k.delivery_class !== "Standard" || k.rate_per_block !== 0n || k.escrow_balance !== 0n) {
        return `${id} key stream shape`;
      }
      if (k.linked_stream_id === null || !bytesEqual(k.linked_stream_id, s.stream_id)) return `${id} key stream back link`;
    }
  }
  // Counters equal what the live main records imply (§4.3, §5).
  const mains = live.filter((s) => s.purpose === "Main");
  for (const o of OWNERS) {
    const want = BigInt(mains.filter((s) => bytesEqual(s.owner, fromHex(o))).length);
    const got = ownerCount(store, fromHex(o));
    if (got !== want) return `owner ${o} count ${got}, live main streams ${want}`;
  }
  for (const p of chain.providers()) {
    const mine = mains.filter((s) => bytesEqual(s.provider, p.provider));
    if (p.live_assigned_streams !== BigInt(mine.length)) return `provider live_assigned_streams ${p.live_assigned_streams} != ${mine.length}`;
    const base = mine.filter((s) => s.pricing_basis.type === "GovernanceBase");
    const r = p.base_rate_reserved;
    const sum = (f: (s: StreamRecordV1) => bigint) => base.reduce((x, s) => x + f(s), 0n);
    if (
      r.reserved_streams !== BigInt(base.length) ||
      r.retained_bytes !== sum((s) => s.config.retained_bytes_limit) ||
      r.append_bytes_per_sec !== sum((s) => s.config.max_append_bytes_per_sec) ||
      r.delivered_bytes_per_sec !== sum((s) => s.config.max_delivered_bytes_per_sec)
    ) {
      return `provider base_rate_reserved ${JSON.stringify(toJson(S.BaseRateReservationTotalsV1, r))} != live GovernanceBase streams`;
    }
    if (p.status === "Deregistered" && mine.length > 0) return "Deregistered provider with live streams";
  }
  return null;
}

/** Terminal records never change again (§5: Closed and DataExpired are absorbing). */
export class TerminalWatch {
  private readonly seen = new Map<string, string>();
  check(chain: Chain): string | null {
    for (const s of chain.streams()) {
      const id = toHex(s.stream_id);
      const bytes = JSON.stringify(toJson(S.StreamRecordV1, s));
      const before = this.seen.get(id);
      if (before !== undefined && before !== bytes) return `terminal record ${id} changed`;
      if (!LIVE.has(s.status)) this.seen.set(id, bytes);
    }
    return null;
  }
}

/**
 * §6.1 "TopUpStream is the only instruction that can reactivate a stream": a main stream that was
 * Suspended after the previous block and is Active after this one was named by an accepted
 * TopUpStream of this block. (The §19 event shapes catch a reactivation that emits its edge; this
 * catches one that changes the record without it.)
 */
export class ReactivationWatch {
  private suspended = new Set<string>();
  check(chain: Chain, block: BlockInput, outcomes: readonly TxOutcome[]): string | null {
    const toppedUp = new Set<string>();
    block.txs.forEach((tx, i) => {
      if (tx.body.kind !== "system" || outcomes[i]!.status !== "ok") return;
      const instruction = decode(S.CbqsInstructionV1, tx.body.payload); // accepted, so it decodes
      if (instruction.type === "TopUpStream") toppedUp.add(toHex(instruction.args.stream_id));
    });
    let violation: string | null = null;
    const now = new Set<string>();
    for (const s of chain.streams()) {
      if (s.purpose !== "Main") continue;
      const id = toHex(s.stream_id);
      if (s.status === "Suspended") now.add(id);
      else if (s.status === "Active" && this.suspended.has(id) && !toppedUp.has(id)) violation ??= `${id} went Suspended → Active in a block without an accepted TopUpStream naming it`;
    }
    this.suspended = now;
    return violation;
  }
}
