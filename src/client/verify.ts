// What the client recomputes before it returns anything it did not compute itself. A block is
// checked whole: each receipt names its envelope's hash, the three roots are rebuilt from the
// envelopes and receipts (state/roots/roots.ts) and the header hash from the header fields
// (src/chain/block.ts), so a served block is internally consistent with the chain instance the
// client follows. A proof is checked against the root its answer names (state/qmdb/proof.ts, the
// BMT inclusion verifier), and that root against the header of the block the answer names.
import { bytesEqual, toHex } from "../bytes.js";
import { genesisHash, headerHash } from "../chain/block.js";
import { txHash } from "../chain/envelope.js";
import { committedReceipt, loadReceiptJson } from "../chain/receipts.js";
import { chainInstanceId } from "../codec/derive.js";
import { count, hex } from "../json/fields.js";
import { verifyStateProofDetailed, type ExclusionProof, type MultiStateProof, type StateProof } from "../../state/qmdb/proof.js";
import { blockRoots, parseInclusionProof, receiptLeaf, verifyInclusionProof, type InclusionProof, type InclusionProofJson } from "../../state/roots/roots.js";
import { readPoint, reading, receiptOf } from "./answers.js";
import { MalformedAnswer, ProofInvalid } from "./errors.js";
import type { Block, Genesis, ReadPoint, Receipt, VerifiedMultiProof, VerifiedReceiptProof, VerifiedStateProof, VerifiedTxProof } from "./types.js";

type Obj = Record<string, unknown>;

function same(url: string, check: string, height: bigint | undefined, expected: Uint8Array, actual: Uint8Array, what: string): void {
  if (!bytesEqual(expected, actual)) throw new ProofInvalid(url, check, `${what}: expected ${toHex(expected)}, got ${toHex(actual)}`, height, toHex(expected), toHex(actual));
}

/** GET /genesis: the chain instance is the fingerprint of the source bytes, the block hash that of the genesis header. */
export function verifyGenesis(url: string, g: Genesis): void {
  if (g.height !== 0n) throw new ProofInvalid(url, "height", `the genesis block is at height ${g.height}, not 0`, g.height);
  same(url, "chain_instance_id", 0n, chainInstanceId(g.source), g.chainInstanceId, "the fingerprint of the genesis source");
  same(url, "block_hash", 0n, genesisHash(g.chainInstanceId, g.timestamp, g.stateRoot), g.blockHash, "the genesis header's hash");
  checkView(url, g.view, g.chainInstanceId, g);
}

/** A FinalizedViewV1 must name the chain and the block its answer was read at. */
export function checkView(url: string, view: Genesis["view"], chain: Uint8Array, at: ReadPoint): void {
  same(url, "view.chain_instance_id", at.height, chain, view.chain_instance_id, "the view's chain instance");
  if (view.height !== at.height) throw new ProofInvalid(url, "view.height", `the view names height ${view.height}, the answer ${at.height}`, at.height);
  same(url, "view.block_hash", at.height, at.blockHash, view.block_hash, "the view's block hash");
}

/** Every receipt names its envelope, the roots are those of the envelopes and receipts, the hash that of the header. */
export function verifyBlock(url: string, block: Block, chain: Uint8Array): void {
  const h = block.height;
  if (block.receipts.length !== block.transactions.length) {
    throw new ProofInvalid(url, "receipts", `${block.receipts.length} receipts for ${block.transactions.length} transactions`, h);
  }
  const hashes = block.transactions.map(txHash);
  block.receipts.forEach((r, i) => same(url, `receipts[${i}].tx_hash`, h, hashes[i]!, r.txHash, `the hash of transactions[${i}]`));
  let roots: ReturnType<typeof blockRoots>;
  try {
    roots = blockRoots(hashes, block.receipts.map(committed));
  } catch (err) {
    throw new ProofInvalid(url, "receipts", `the receipts have no canonical encoding (${(err as Error).message})`, h);
  }
  same(url, "tx_root", h, roots.tx_root, block.txRoot, "the root of the block's transactions");
  same(url, "receipt_root", h, roots.receipt_root, block.receiptRoot, "the root of the block's receipts");
  same(url, "logs_root", h, roots.logs_root, block.logsRoot, "the root of the block's events");
  same(url, "block_hash", h, headerHash(chain, h, block.timestamp, block.parentHash, block.stateRoot, roots), block.blockHash, "the block header's hash");
}

const committed = (r: Receipt) => committedReceipt({ tx_hash: r.txHash, status: r.status, error: r.error, events: r.events, cycles: r.cycles, cells: r.cells });

/** The answer's read point must be the header's: the same block hash and state root. */
export function tieToHeader(url: string, at: ReadPoint, header: ReadPoint): void {
  same(url, "block_hash", at.height, header.blockHash, at.blockHash, `the hash of the header at height ${at.height}`);
  same(url, "state_root", at.height, header.stateRoot, at.stateRoot, `the state root in the header at height ${at.height}`);
}

function requestedKey(url: string, proof: Obj, key: Uint8Array, height: bigint, path: string): void {
  const served = reading(url, () => hex(proof["key"], `${path}.key`, key.length));
  same(url, "key", height, key, served, "the requested key");
}

function stateProofValid(url: string, proof: unknown, root: Uint8Array, height: bigint): void {
  const r = verifyStateProofDetailed(proof, root);
  if (r.valid) return;
  const reason = r.malformed ? `${r.path}: ${r.problem}` : r.reason;
  throw new ProofInvalid(url, "state_proof", `does not verify against state_root ${toHex(root)}: ${reason}`, height);
}

const object = (url: string, body: Obj, name: string): Obj => {
  const v = body[name];
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new MalformedAnswer(url, `$.${name}: expected a JSON object`);
  return v as Obj;
};

/** GET /proof/account|actor|storage: the proof is of the requested key and verifies against the answer's state_root. */
export function verifyStateAnswer(url: string, body: Obj, key: Uint8Array): VerifiedStateProof {
  const at = reading(url, () => readPoint(body));
  const proof = object(url, body, "proof");
  requestedKey(url, body, key, at.height, "$");
  requestedKey(url, proof, key, at.height, "$.proof");
  stateProofValid(url, proof, at.stateRoot, at.height);
  // Verified: the value is the one the proof committed to (null: proven absent).
  const value = proof["value"] === null ? null : reading(url, () => hex(proof["value"], "$.proof.value"));
  return { ...at, key, value, proof: proof as unknown as StateProof | ExclusionProof };
}

/** POST /proof/multi: one verified entry per requested key, no other. */
export function verifyMultiAnswer(url: string, body: Obj, keys: readonly Uint8Array[]): VerifiedMultiProof {
  const at = reading(url, () => readPoint(body));
  const proof = object(url, body, "proof");
  stateProofValid(url, proof, at.stateRoot, at.height);
  const entries = proof["entries"] as Obj[];
  const byKey = new Map(entries.map((e) => [String(e["key"]).toLowerCase(), e]));
  if (byKey.size !== keys.length) throw new ProofInvalid(url, "entries", `the proof has ${byKey.size} entries for ${keys.length} requested keys`, at.height);
  const out = keys.map((key, i) => {
    const e = byKey.get(toHex(key));
    if (e === undefined) throw new ProofInvalid(url, "entries", `keys[${i}] ${toHex(key)} is not in the proof`, at.height);
    return { key, value: reading(url, () => hex(e["value"], `$.proof.entries[${i}].value`)) };
  });
  return { ...at, entries: out, proof: proof as unknown as MultiStateProof };
}

function inclusion(url: string, body: Obj, height: bigint): { proof: InclusionProof; json: InclusionProofJson; index: number } {
  const json = object(url, body, "proof");
  let proof: InclusionProof;
  try {
    proof = parseInclusionProof(json);
  } catch (err) {
    throw new ProofInvalid(url, "proof", (err as Error).message, height);
  }
  const index = reading(url, () => count(body["tx_index"], "$.tx_index"));
  if (proof.leafIndex !== index) throw new ProofInvalid(url, "leaf_index", `the proof is of leaf ${proof.leafIndex}, the answer names tx_index ${index}`, height);
  return { proof, json: json as unknown as InclusionProofJson, index };
}

function included(url: string, check: string, proof: InclusionProof, root: Uint8Array, height: bigint): void {
  if (!verifyInclusionProof(proof, root)) throw new ProofInvalid(url, check, `the inclusion proof does not verify against ${toHex(root)}`, height);
}

/** GET /proof/tx: the served envelope hashes to the requested hash and is the proven leaf of the answer's tx_root, which is the header's. */
export function verifyTxAnswer(url: string, body: Obj, requested: Uint8Array, header: (at: ReadPoint) => Promise<Block>): Promise<VerifiedTxProof> {
  const at = reading(url, () => readPoint(body));
  const txRoot = reading(url, () => hex(body["tx_root"], "$.tx_root", 32));
  const transaction = reading(url, () => hex(body["transaction"], "$.transaction"));
  same(url, "transaction", at.height, requested, txHash(transaction), "the hash of the served transaction");
  const { proof, json, index } = inclusion(url, body, at.height);
  same(url, "leaf_hash", at.height, txHash(transaction), proof.leafHash, "the proof's leaf");
  included(url, "tx_root", proof, txRoot, at.height);
  return header(at).then((block) => {
    same(url, "tx_root", at.height, block.txRoot, txRoot, `the tx_root in the header at height ${at.height}`);
    return { ...at, txHash: requested, txRoot, txIndex: index, transaction, proof: json };
  });
}

/** GET /proof/receipt: the served receipt names the requested transaction and is the proven leaf of the answer's receipt_root, which is the header's. */
export function verifyReceiptAnswer(url: string, body: Obj, requested: Uint8Array, header: (at: ReadPoint) => Promise<Block>): Promise<VerifiedReceiptProof> {
  const at = reading(url, () => readPoint(body));
  const receiptRoot = reading(url, () => hex(body["receipt_root"], "$.receipt_root", 32));
  const receipt = reading(url, () => receiptOf(loadReceiptJson(body["receipt"], "$.receipt").receipt));
  same(url, "receipt.tx_hash", at.height, requested, receipt.txHash, "the transaction the receipt names");
  const { proof, json, index } = inclusion(url, body, at.height);
  same(url, "leaf_hash", at.height, receiptLeaf(committed(receipt)), proof.leafHash, "the proof's leaf");
  included(url, "receipt_root", proof, receiptRoot, at.height);
  return header(at).then((block) => {
    same(url, "receipt_root", at.height, block.receiptRoot, receiptRoot, `the receipt_root in the header at height ${at.height}`);
    return { ...at, txHash: requested, receiptRoot, txIndex: index, receipt, proof: json };
  });
}
