// CIP-39 §5 tag 9 ActivateKeyGeneration (§9.3, §9.4): owner only, on a materialized Active
// encrypted main stream; never settles. Verifies the KeyBatchReceiptV1 (structural invariants
// are codec decode errors) with strict Ed25519 against the record's snapshotted provider key,
// then advances encryption_generation by one, optionally bumping authorization_generation.
import { bytesEqual, toHex } from "../src/bytes.js";
import { key_batch_receipt_signing_bytes_v1 } from "../src/codec/signing.js";
import type { ActivateKeyGenerationArgsV1, StreamRecordV1 } from "../src/codec/types.js";
import { emit, readRegistryPause, readSingleton, requireChainContext, writeStream, type TxContext } from "../src/engine/context.js";
import { reject } from "../src/engine/errors.js";
import { addU64 } from "../src/engine/math.js";
import { loadStreamPair, pairRecords } from "../src/engine/streams.js";
import { checkSuspensionFields } from "./settle.js";

export function activateKeyGeneration(ctx: TxContext, args: ActivateKeyGenerationArgsV1): void {
  const receipt = args.receipt;
  // §18.1 plan: pause record, singleton, main stream, key stream (no governance scalars).
  readRegistryPause(ctx);
  const registry = readSingleton(ctx);
  // §4/§9.3: the signed context and served_at must name this chain, before authorization.
  requireChainContext(registry, receipt.context, "receipt");
  if (!bytesEqual(receipt.served_at.chain_instance_id, registry.chain_instance_id)) {
    reject("ChainInstanceMismatch", "receipt served_at names another chain instance");
  }
  const { main } = loadStreamPair(ctx, registry, receipt.main_stream_id);
  if (!main.encrypted) reject("StreamNotEncrypted", `stream ${toHex(main.stream_id)} is not encrypted`);
  if (!bytesEqual(ctx.sender, main.owner)) reject("Unauthorized", "only the owner may activate a key generation");
  // §6.1 entry gate: materialized Active with both pinned fields absent.
  if (main.status === "Suspended") reject("StreamSuspended", "ActivateKeyGeneration requires a materialized Active stream");
  checkSuspensionFields(main);

  // §9.3: served_at height, stream ids, epoch, next generation, then the one signature.
  if (receipt.served_at.height >= ctx.height) {
    reject("InvalidKeyBatch", `served_at.height ${receipt.served_at.height} is not below the executing height ${ctx.height}`);
  }
  if (!bytesEqual(receipt.key_stream_id, main.linked_stream_id!)) reject("InvalidKeyBatch", "receipt key_stream_id is not the stream's linked key stream");
  if (receipt.provider_epoch !== main.provider_epoch) reject("ProviderEpochStale", `receipt provider_epoch ${receipt.provider_epoch} is not ${main.provider_epoch}`);
  const next = addU64(main.encryption_generation, 1n, "encryption_generation");
  if (receipt.encryption_generation !== next) {
    reject("InvalidKeyBatch", `receipt generation ${receipt.encryption_generation} is not the next generation ${next}`);
  }
  const digest = ctx.meter.keccak(key_batch_receipt_signing_bytes_v1(receipt));
  if (!ctx.meter.verifyEd25519(main.provider_signing_key.key, digest, receipt.signature)) {
    reject("InvalidKeyBatch", "receipt signature does not verify under the stream's provider_signing_key");
  }

  const record: StreamRecordV1 = {
    ...main,
    encryption_generation: next,
    authorization_generation: args.bump_authorization_generation
      ? addU64(main.authorization_generation, 1n, "authorization_generation")
      : main.authorization_generation,
  };
  // §4.1: the key stream mirrors both generations.
  for (const r of pairRecords(record)) writeStream(ctx, r);
  emit(ctx, "cbqs.stream.key_generation_activated", main.stream_id); // §19: alone
}
