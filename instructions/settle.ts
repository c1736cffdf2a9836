// CIP-39 §6.1: settle(record, H) — the only transition between Active and Suspended — and the
// rent split of each paid amount. Pure over the record; the caller commits.
import type { Address, StreamRecordV1 } from "../src/codec/types.js";
import type { GovernanceBounds, TxContext } from "../src/engine/context.js";
import { reject } from "../src/engine/errors.js";
import { PLATFORM_ADDRESS } from "../src/engine/layout.js";
import { addU64, mulU128, subU128 } from "../src/engine/math.js";

export interface Settlement {
  record: StreamRecordV1;
  paid: bigint;
}

/**
 * §6.1: an Active record carries neither pinned field; a Suspended one carries both, not
 * inverted (deadline < suspended_at); anything else fails closed with no mutation.
 */
export function checkSuspensionFields(record: StreamRecordV1): void {
  const at = record.suspended_at_block;
  const deadline = record.suspension_grace_deadline_block;
  if (record.status === "Suspended") {
    if (at === null || deadline === null) reject("RegistryStateInvalid", "Suspended record with a missing pinned field");
    if (deadline < at) reject("RegistryStateInvalid", "Suspended record with an inverted grace pair");
  } else if (at !== null || deadline !== null) {
    reject("RegistryStateInvalid", `${record.status} record carrying stale suspension fields`);
  }
}

/** §6.1 settle(record, H), H an effective rent height; `graceBlocks` is cbqs.suspend_grace_blocks read live. */
export function settle(record: StreamRecordV1, H: bigint, graceBlocks: bigint): Settlement {
  if (record.status !== "Active" && record.status !== "Suspended") reject("RegistryStateInvalid", `settle on a ${record.status} record`);
  checkSuspensionFields(record);
  if (H < record.last_settled_block) reject("RegistryStateInvalid", "settlement height below last_settled_block");
  const r = record.rate_per_block;
  const due = mulU128(H - record.last_settled_block, r, "rent due");
  if (r === 0n || record.escrow_balance >= due) {
    return {
      paid: due,
      record: {
        ...record,
        escrow_balance: record.escrow_balance - due,
        last_settled_block: H,
        status: "Active",
        suspended_at_block: null,
        suspension_grace_deadline_block: null,
      },
    };
  }
  const paidBlocks = record.escrow_balance / r;
  const paid = paidBlocks * r;
  const lastSettled = addU64(record.last_settled_block, paidBlocks, "last_settled_block");
  // The status == Active guard: first materialization pins both fields; later partial
  // payments preserve them unchanged.
  const pinned =
    record.status === "Active"
      ? { suspended_at_block: lastSettled, suspension_grace_deadline_block: addU64(lastSettled, graceBlocks, "grace deadline") }
      : { suspended_at_block: record.suspended_at_block, suspension_grace_deadline_block: record.suspension_grace_deadline_block };
  return {
    paid,
    record: { ...record, escrow_balance: record.escrow_balance - paid, last_settled_block: lastSettled, status: "Suspended", ...pinned },
  };
}

/** §6.1 grace expiry: Suspended and H >= the pinned deadline. */
export function graceExpired(record: StreamRecordV1, H: bigint): boolean {
  return record.status === "Suspended" && H >= record.suspension_grace_deadline_block!;
}

/**
 * §6.1 rent split, read live: provider_share = floor(paid × provider_bps / 10000) to the
 * provider account, the remainder to the Platform Fee Account 0x18; paid leaves custody first.
 */
export function distributeRent(ctx: TxContext, bounds: GovernanceBounds, provider: Address, paid: bigint): void {
  if (paid === 0n) return;
  ctx.accounts.debitCustody(paid, "rent");
  const providerShare = mulU128(paid, bounds.get("cbqs.rent.provider_bps"), "provider share") / 10_000n;
  ctx.accounts.credit(provider, providerShare, "provider rent share");
  ctx.accounts.credit(PLATFORM_ADDRESS, subU128(paid, providerShare, "platform share"), "platform rent share");
}
