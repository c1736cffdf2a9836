// CIP-4 §5.4 proof endpoints. State proofs (account, actor, storage, multi) are CIP-4 Appendix C
// proofs against the HEAD's state_root (the answer names it), in the format `cbqs proof state`
// writes and `cbqs proof verify` checks; transaction and receipt proofs are BMT inclusion proofs
// against the tx_root / receipt_root of the block that included the transaction, checked by
// `cbqs proof verify-bmt`. The proof itself is the answer's `proof` member, verbatim.
import { bytesEqual, fromHex, HexError, toHex } from "../bytes.js";
import { committedReceipt, receiptJson } from "../chain/receipts.js";
import type { ChainDb } from "../../state/chain-db/chain-db.js";
import { accountKey, actorKey, actorStorageKey, checkStateKey, StateKeyError } from "../../state/kv/keys.js";
import { MAX_MULTI_PROOF_KEYS } from "../../state/qmdb/proof.js";
import { inclusionProofToJson, proveReceipt, proveTx } from "../../state/roots/roots.js";
import { STATE_KEY_LENGTH } from "../../state/kv/interface.js";
import { badRequest, notFound, RequestError } from "./errors.js";
import { JsonText, readPointJson } from "./json.js";
import { parseHash } from "./reads.js";

/** Bound on a storage proof's user key (longer keys are keccak-hashed into the slot anyway). */
export const MAX_STORAGE_KEY_BYTES = 1_024;
/** Default bound on the operations an exclusion proof may list (it grows with the live state). */
export const DEFAULT_MAX_EXCLUSION_OPS = 4_096;

export interface ProofLimits {
  maxExclusionOps: number;
}

/**
 * Single-key proof answers of the current head, by key. A proof is a function of the head block
 * (its state never changes while it is the head), so a kept answer is exact; the first request
 * at a new head empties the cache, since state proofs are served at the head only. Bounded: at
 * most `size` answers (a few KB each), the oldest dropped first.
 */
export class ProofCache {
  private head: Uint8Array | undefined;
  private readonly answers = new Map<string, JsonText>();

  constructor(readonly size = 4_096) {}

  get(db: ChainDb, key: Uint8Array, make: () => Record<string, unknown>): JsonText {
    const head = db.head()!.block_hash;
    if (this.head === undefined || !bytesEqual(this.head, head)) {
      this.answers.clear();
      this.head = head;
    }
    const id = toHex(key);
    let answer = this.answers.get(id);
    if (answer === undefined) {
      answer = new JsonText(JSON.stringify(make()));
      if (this.answers.size >= this.size) this.answers.delete(this.answers.keys().next().value!);
      this.answers.set(id, answer);
    }
    return answer;
  }
}

/** The answer of stateProof, kept in `cache` when one is given. */
const keptProof = (db: ChainDb, key: Uint8Array, limits: ProofLimits, cache: ProofCache | undefined): Record<string, unknown> | JsonText =>
  cache === undefined ? stateProof(db, key, limits) : cache.get(db, key, () => stateProof(db, key, limits));

/** A 54-byte key's proof at the head: inclusion, or exclusion while it stays small enough. */
export function stateProof(db: ChainDb, key: Uint8Array, limits: ProofLimits): Record<string, unknown> {
  const head = db.head()!;
  const ops = db.exclusionProofOps();
  if (ops > limits.maxExclusionOps && db.state.read(key) === undefined) {
    throw new RequestError(
      422,
      "exclusion_proof_too_large",
      `${toHex(key)} has no value; its exclusion proof would list ${ops} operations (more than ${limits.maxExclusionOps})`,
      readPointJson(head),
    );
  }
  return { ...readPointJson(head), key: toHex(key), proof: db.proveKey(key) };
}

export const accountProof = (db: ChainDb, address: string, limits: ProofLimits, cache?: ProofCache) =>
  keptProof(db, accountKey(parseHash(address, "address", 20)), limits, cache);

export const actorProof = (db: ChainDb, address: string, limits: ProofLimits, cache?: ProofCache) =>
  keptProof(db, actorKey(parseHash(address, "address", 20)), limits, cache);

export function storageProof(db: ChainDb, address: string, userKey: string, limits: ProofLimits, cache?: ProofCache): Record<string, unknown> | JsonText {
  const actor = parseHash(address, "address", 20);
  if (!/^0x(?:[0-9a-fA-F]{2})*$/.test(userKey) || userKey.length > 2 + 2 * MAX_STORAGE_KEY_BYTES) {
    throw badRequest("invalid_key", `the storage key must be 0x-prefixed hex of at most ${MAX_STORAGE_KEY_BYTES} bytes`);
  }
  return keptProof(db, actorStorageKey(actor, Buffer.from(userKey.slice(2), "hex")), limits, cache);
}

/**
 * keys[i] of a /proof/multi body: 0x hex of exactly 54 bytes whose prefix is a CIP-4 §4.2 one.
 * The prefix is checked here, by the one table (state/kv/keys.ts), because the store refuses a key
 * of an unknown prefix by throwing: unchecked, that reached the client as a 500.
 */
function multiKey(k: unknown, i: number): Uint8Array {
  const form = `keys[${i}] must be a 0x-prefixed ${STATE_KEY_LENGTH}-byte hex string`;
  if (typeof k !== "string" || k.length !== 2 + 2 * STATE_KEY_LENGTH) throw badRequest("invalid_key", form);
  let key: Uint8Array;
  try {
    key = fromHex(k, STATE_KEY_LENGTH, "key");
  } catch (err) {
    if (err instanceof HexError) throw badRequest("invalid_key", form);
    throw err;
  }
  try {
    checkStateKey(key);
  } catch (err) {
    if (err instanceof StateKeyError) throw badRequest("invalid_key", `keys[${i}]: ${err.message} (CIP-4 §4.2 prefixes are 0x01–0x1d)`);
    throw err;
  }
  return key;
}

/** POST /proof/multi body: {"keys": ["0x<54-byte key>", …]}, 1 to 256 distinct keys with a value. */
export function multiProof(db: ChainDb, body: unknown): Record<string, unknown> {
  if (typeof body !== "object" || body === null || Array.isArray(body) || Object.keys(body).some((k) => k !== "keys")) {
    throw badRequest("invalid_body", 'the body must be {"keys": ["0x<54-byte state key>", …]}');
  }
  const raw = (body as { keys?: unknown }).keys;
  if (!Array.isArray(raw) || raw.length === 0) throw badRequest("invalid_body", '"keys" must be a non-empty array of 0x state keys');
  if (raw.length > MAX_MULTI_PROOF_KEYS) {
    throw badRequest("too_many_keys", `${raw.length} keys requested; a batch proof covers at most ${MAX_MULTI_PROOF_KEYS} (CIP-4 §8.2)`);
  }
  const keys = raw.map((k, i) => multiKey(k, i));
  if (new Set(keys.map(toHex)).size !== keys.length) throw badRequest("duplicate_key", "every key may appear once in a batch proof");
  const head = db.head()!;
  const absent = keys.find((k) => db.state.read(k) === undefined);
  if (absent !== undefined) {
    throw notFound("key_not_found", `${toHex(absent)} has no value at height ${head.height}; batch proofs cover present keys only (prove absence key by key)`, readPointJson(head));
  }
  return { ...readPointJson(head), proof: db.proveKeys(keys) };
}

function located(db: ChainDb, txHashParam: string) {
  const hash = parseHash(txHashParam, "tx_hash");
  const loc = db.txLocation(hash);
  if (loc === undefined) throw notFound("tx_not_found", `no committed transaction has hash ${txHashParam}`);
  return { block: db.blockByHeight(loc.height)!, index: loc.index };
}

/** GET /proof/tx/{tx_hash}: the envelope's leaf in its block's tx_root (CIP-4 §5.2). */
export function txProof(db: ChainDb, txHashParam: string): Record<string, unknown> {
  const { block, index } = located(db, txHashParam);
  return {
    ...readPointJson(block),
    tx_root: toHex(block.tx_root),
    tx_index: index,
    transaction: toHex(block.transactions[index]!),
    proof: inclusionProofToJson(proveTx(block.transactions, index)),
  };
}

/** GET /proof/receipt/{tx_hash}: the receipt's leaf in its block's receipt_root (CIP-4 §5.3). */
export function receiptProof(db: ChainDb, txHashParam: string): Record<string, unknown> {
  const { block, index } = located(db, txHashParam);
  return {
    ...readPointJson(block),
    receipt_root: toHex(block.receipt_root),
    tx_index: index,
    receipt: receiptJson(block.receipts[index]!),
    proof: inclusionProofToJson(proveReceipt(block.receipts.map(committedReceipt), index)),
  };
}
