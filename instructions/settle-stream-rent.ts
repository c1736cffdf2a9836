// CIP-39 §5 tag 7 SettleStreamRent (§6.1): permissionless. Checks expiry on an already
// materialized Suspended record first (materializing DataExpired), otherwise settles; rejected
// exactly when the record would be byte-identical.
import { bytesEqual } from "../src/bytes.js";
import type { SettleStreamRentArgsV1 } from "../src/codec/types.js";
import {
  emit,
  emitStatusEdge,
  encodeStreamRecord,
  readGovernanceBounds,
  readRegistryPause,
  readSingleton,
  rentHeight,
  writeStream,
  type TxContext,
} from "../src/engine/context.js";
import { reject } from "../src/engine/errors.js";
import { loadStreamPair, pairRecords } from "../src/engine/streams.js";
import { checkSuspensionFields, distributeRent, graceExpired, settle } from "./settle.js";
import { terminate } from "./terminal.js";

export function settleStreamRent(ctx: TxContext, args: SettleStreamRentArgsV1): void {
  // §18.1 plan: 25 scalars, pause record, singleton, stream pair, then per path.
  const bounds = readGovernanceBounds(ctx);
  const H = rentHeight(ctx, readRegistryPause(ctx));
  const registry = readSingleton(ctx);
  const { main } = loadStreamPair(ctx, registry, args.stream_id);
  checkSuspensionFields(main);

  // Expiry path: provider record, owner count, owner account, custody.
  if (graceExpired(main, H)) {
    terminate(ctx, registry, main, "DataExpired");
    emit(ctx, "cbqs.stream.data_expired", main.stream_id); // §19: alone
    return;
  }

  // Settle path: custody, provider account, platform account.
  const settled = settle(main, H, bounds.get("cbqs.suspend_grace_blocks"));
  if (bytesEqual(encodeStreamRecord(settled.record), encodeStreamRecord(main))) {
    reject("NoOpRejected", "settlement would leave the stream record byte-identical (§5)");
  }
  distributeRent(ctx, bounds, main.provider, settled.paid);
  for (const r of pairRecords(settled.record)) writeStream(ctx, r);
  emit(ctx, "cbqs.stream.rent_settled", main.stream_id); // §19, then the net status edge
  emitStatusEdge(ctx, main.status, settled.record.status, main.stream_id);
}
