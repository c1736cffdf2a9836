// A scenario's `cbqs` transaction → the canonical CbqsInstructionV1 payload (CIP-39 §5),
// resolved just before its block executes. Signed objects inside the args (scenario-format
// §2) get the chain's context, a derived signing_key_id, served_at fill-ins, and a signature
// by "signer_seed" over the §14 signing digest.
import { encode } from "../codec/core.js";
import { signingKeyId } from "../codec/derive.js";
import { JsonValueError } from "../codec/errors.js";
import * as S from "../codec/schema.js";
import { keyBatchReceiptDigest, quoteDigest } from "../codec/signing.js";
import type { CbqsInstructionV1, KeyBatchReceiptV1, PriceQuoteV1 } from "../codec/types.js";
import { ed25519PublicKeyFromSeed, ed25519Sign } from "../crypto/ed25519.js";
import { toHex } from "../bytes.js";
import { at, hexBytes, isObject, obj, ScenarioError, u64, type JsonObject } from "./json.js";
import { resolveStreamRef, type ChainIdentity } from "./refs.js";

export interface ResolveContext extends ChainIdentity {
  /** The emulator hash of the executed block at `height` (0 = genesis), if there is one. */
  blockHashAt(height: bigint): Uint8Array | undefined;
}

/** Where signed objects sit inside instruction args (§5 schemas). */
const SIGNED_SLOTS: Record<string, { field: string; type: "PriceQuoteV1" | "KeyBatchReceiptV1" } | undefined> = {
  CreateStream: { field: "price_quote", type: "PriceQuoteV1" },
  UpdateStream: { field: "price_quote", type: "PriceQuoteV1" },
  ActivateKeyGeneration: { field: "receipt", type: "KeyBatchReceiptV1" },
};

const ZERO_SIGNATURE = "0x" + "00".repeat(64);

/** Returns the canonical payload bytes of one `{"<InstructionName>": <Args>}`. */
export function resolveInstruction(instruction: JsonObject, path: string, ctx: ResolveContext): Uint8Array {
  const name = Object.keys(instruction)[0]!;
  const json = structuredClone(instruction) as JsonObject;
  const slot = SIGNED_SLOTS[name];
  let seed: Uint8Array | undefined;
  if (slot !== undefined && isObject(json[name])) {
    const args = json[name] as JsonObject;
    const signed = args[slot.field];
    if (isObject(signed)) {
      seed = prefillSigned(signed, slot.type, at(at(path, name), slot.field), ctx);
    }
  }
  let value: CbqsInstructionV1;
  try {
    value = S.CbqsInstructionV1.fromJson(json, path, {
      resolveBytes32: (v, p) => resolveStreamRef(v, p, ctx),
    });
  } catch (err) {
    if (err instanceof JsonValueError) throw new ScenarioError(err.path, err.reason);
    throw err;
  }
  if (seed !== undefined) signInPlace(value, seed);
  return encode(S.CbqsInstructionV1, value);
}

/** Fills context / signing_key_id / served_at / signature placeholders; returns the seed to sign with. */
function prefillSigned(o: JsonObject, type: "PriceQuoteV1" | "KeyBatchReceiptV1", path: string, ctx: ResolveContext): Uint8Array | undefined {
  let seed: Uint8Array | undefined;
  if (o["signer_seed"] !== undefined) {
    seed = hexBytes(o["signer_seed"], at(path, "signer_seed"), 32);
    delete o["signer_seed"];
  }
  const instanceHex = toHex(ctx.chainInstanceId);
  if (o["context"] === undefined || o["context"] === null) {
    o["context"] = { version: "1", chain_id: ctx.chainId.toString(), chain_instance_id: instanceHex };
  }
  if (type === "PriceQuoteV1" && (o["signing_key_id"] === undefined || o["signing_key_id"] === null)) {
    if (seed === undefined) throw new ScenarioError(at(path, "signing_key_id"), "missing (give it, or give signer_seed to derive it)");
    o["signing_key_id"] = toHex(signingKeyId({ algorithm: "Ed25519", key: ed25519PublicKeyFromSeed(seed) }));
  }
  if (type === "KeyBatchReceiptV1") {
    const sp = at(path, "served_at");
    const served = obj(o["served_at"], sp);
    if (served["chain_instance_id"] === undefined || served["chain_instance_id"] === null) served["chain_instance_id"] = instanceHex;
    if (served["block_hash"] === undefined || served["block_hash"] === null) {
      const height = u64(served["height"], at(sp, "height"));
      const hash = ctx.blockHashAt(height);
      if (hash === undefined) {
        throw new ScenarioError(at(sp, "height"), `no executed block at height ${height} to take block_hash from (give block_hash)`);
      }
      served["block_hash"] = toHex(hash);
    }
  }
  if (o["signature"] === undefined || o["signature"] === null) {
    if (seed === undefined) throw new ScenarioError(at(path, "signature"), "missing (give it, or give signer_seed to sign)");
    o["signature"] = ZERO_SIGNATURE;
  } else if (seed !== undefined) {
    throw new ScenarioError(at(path, "signature"), "give either signature or signer_seed, not both");
  }
  return seed;
}

/** §14: the signer signs the Keccak-256 digest of the object's signing bytes. */
function signInPlace(value: CbqsInstructionV1, seed: Uint8Array): void {
  switch (value.type) {
    case "CreateStream":
    case "UpdateStream": {
      const q = value.args.price_quote as PriceQuoteV1;
      q.signature = ed25519Sign(seed, quoteDigest(q));
      break;
    }
    case "ActivateKeyGeneration": {
      const r: KeyBatchReceiptV1 = value.args.receipt;
      r.signature = ed25519Sign(seed, keyBatchReceiptDigest(r));
      break;
    }
    default:
      break;
  }
}

/**
 * The heights whose block hash `served_at` will be filled from (an ActivateKeyGeneration receipt
 * without `block_hash`): the runner keeps only those hashes. A malformed height is left to the
 * resolver to report.
 */
export function servedAtHeights(instruction: JsonObject): bigint[] {
  const args = instruction["ActivateKeyGeneration"];
  if (!isObject(args) || !isObject(args["receipt"])) return [];
  const served = args["receipt"]["served_at"];
  if (!isObject(served) || (served["block_hash"] !== undefined && served["block_hash"] !== null)) return [];
  try {
    return [u64(served["height"], "$")];
  } catch {
    return [];
  }
}
