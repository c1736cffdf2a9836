// Reads by key for SDK authors (docs/guides/run-a-devnet.md "Accounts, streams, providers, transactions"):
// GET /account/{address}, /cbqs/stream/{id}, /cbqs/provider/{address}, /tx/{hash} and
// /devnet/accounts. Each answer is built synchronously from one block, like broker-state (the
// head, or a block pinned with ?height= or ?block=, refused with 410 once its state is no
// longer retained), and names that block.
import { toHex } from "../bytes.js";
import { decodeEnvelope, type TxEnvelope } from "../chain/envelope.js";
import { eventJson, receiptJson } from "../chain/receipts.js";
import { decode, toJson } from "../codec/core.js";
import * as S from "../codec/schema.js";
import type { Address } from "../codec/types.js";
import { accountKey, providerKey, streamKey } from "../engine/layout.js";
import { U64_MAX } from "../engine/math.js";
import { devAccountIndex, devnetOf } from "../harness/devnet.js";
import type { ChainDb, StateReader } from "../../state/chain-db/chain-db.js";
import type { Event } from "../../state/kv/event.js";
import { decodeStateValueAs } from "../../state/kv/value.js";
import type { CbqsNode } from "../chain-node/chain-node.js";
import { parseDecimal } from "./decimal.js";
import { badRequest, notFound, RequestError } from "./errors.js";
import { readPointJson } from "./json.js";
import { stateProof, type ProofLimits } from "./proofs.js";
import { blockAt, parseHash, stateOf, type ReadPoint } from "./reads.js";
import { historyStart } from "../chain-node/stored-chain.js";

/**
 * The read point of `?height=` or `?block=` (at most one), else the head. A height without a
 * block (a skipped height) reads the last block below it: no block changed the state between.
 */
export function pinnedPoint(db: ChainDb, params: ReadonlyMap<string, string>): ReadPoint {
  const height = params.get("height");
  const hash = params.get("block");
  if (height !== undefined && hash !== undefined) throw badRequest("invalid_query", "give ?height= or ?block=, not both: each names the block to read at");
  if (height === undefined) return stateOf(db, blockAt(db, hash));
  const h = parseDecimal(height, { name: "height", what: "a block height", max: U64_MAX });
  const head = db.head()!;
  if (h > head.height) throw notFound("block_not_found", `height ${h} is above the head, block ${head.height}`, readPointJson(head));
  // A store started from a snapshot of block S holds genesis and no block between it and S: the
  // last block at or below such a height is unknown, not genesis.
  const start = historyStart(db).height;
  if (h > 0n && h < start) {
    throw new RequestError(410, "history_not_held", `the node holds no block between genesis and block ${start} (its history starts at a snapshot of that block): the state at height ${h} is not held`, readPointJson(head));
  }
  return stateOf(db, db.blocks({ from: 0n, to: h, order: "desc", limit: 1 })[0]!);
}

/** An address in a path: 0x hex of 20 bytes, or a dev account's name ("dev3") on a devnet that has it. */
export function addressParam(node: CbqsNode, text: string): Address {
  const index = devAccountIndex(text);
  if (index !== undefined) {
    const dev = devnetOf(node.genesis.source, node.config.accounts)?.accounts[index];
    if (dev === undefined) throw badRequest("invalid_address", `${text} is not a dev account of this chain (GET /devnet/accounts lists them)`);
    return dev.address;
  }
  return parseHash(text, "address", 20);
}

function slot(state: StateReader, key: Uint8Array): Uint8Array | undefined {
  const bytes = state.read(key);
  return bytes === undefined ? undefined : decodeStateValueAs(bytes, "StorageSlot").bytes;
}

function accountAt(state: StateReader, address: Address): { nonce: bigint; balance: bigint } {
  const bytes = state.read(accountKey(address));
  if (bytes === undefined) return { nonce: 0n, balance: 0n };
  const v = decodeStateValueAs(bytes, "Account");
  return { nonce: v.nonce, balance: v.balance };
}

/**
 * GET /account/{address}{?height,block,proof}: nonce and balance (an account never written reads
 * 0 and 0, as the engine reads it). At the head also `pending`, the sender's queued transactions,
 * and `next_nonce`, what its next envelope must carry (`cbqs tx --node` uses it). `proof=true`
 * adds the CIP-4 state proof of the account key, against the head only (QMDB "current" proves
 * current values: D-0101 "State proofs against the head only").
 */
export function accountAnswer(node: CbqsNode, addressText: string, params: ReadonlyMap<string, string>, limits: ProofLimits): Record<string, unknown> {
  const address = addressParam(node, addressText);
  const proofText = params.get("proof");
  if (proofText !== undefined && proofText !== "true" && proofText !== "false") throw badRequest("invalid_proof", `proof must be true or false (got ${JSON.stringify(proofText.slice(0, 40))})`);
  const db = node.db;
  const { block, state } = pinnedPoint(db, params);
  const head = db.head()!;
  const atHead = block.height === head.height;
  if (proofText === "true" && !atHead) {
    throw badRequest("invalid_proof", `a state proof is against the head (block ${head.height}) only, not block ${block.height}: a QMDB "current" database proves current values`);
  }
  const { nonce, balance } = accountAt(state, address);
  const pending = atHead ? node.pendingFrom(address) : undefined;
  return {
    ...readPointJson(block),
    address: toHex(address),
    nonce: nonce.toString(),
    balance: balance.toString(),
    ...(pending === undefined ? {} : { pending, next_nonce: (nonce + BigInt(pending)).toString() }),
    ...(proofText === "true" ? { proof: stateProof(db, accountKey(address), limits)["proof"] } : {}),
  };
}

/** GET /cbqs/stream/{id}{?height,block}: the StreamRecordV1 in the codec's JSON mapping. */
export function streamAnswer(node: CbqsNode, id: Uint8Array, idText: string, params: ReadonlyMap<string, string>): Record<string, unknown> {
  const { block, state } = pinnedPoint(node.db, params);
  const bytes = slot(state, streamKey(id));
  if (bytes === undefined) throw notFound("stream_not_found", `no stream ${idText} at height ${block.height}`, readPointJson(block));
  return { ...readPointJson(block), stream: toJson(S.StreamRecordV1, decode(S.StreamRecordV1, bytes)) };
}

/** GET /cbqs/provider/{address}{?height,block}: the ProviderRecordV1 in the codec's JSON mapping. */
export function providerAnswer(node: CbqsNode, addressText: string, params: ReadonlyMap<string, string>): Record<string, unknown> {
  const address = addressParam(node, addressText);
  const { block, state } = pinnedPoint(node.db, params);
  const bytes = slot(state, providerKey(address));
  if (bytes === undefined) throw notFound("provider_not_found", `no provider ${toHex(address)} at height ${block.height}`, readPointJson(block));
  return { ...readPointJson(block), provider: toJson(S.ProviderRecordV1, decode(S.ProviderRecordV1, bytes)) };
}

/** §19: every CBQS event's payload is one identifier, named by its topic. */
export function decodedEvent(e: Event): Record<string, string> {
  const json = eventJson(e) as unknown as Record<string, string>;
  if (e.topic.startsWith("cbqs.provider.") && e.payload.length === 20) return { ...json, provider: toHex(e.payload) };
  if (e.topic.startsWith("cbqs.stream.") && e.payload.length === 32) return { ...json, stream_id: toHex(e.payload) };
  return json;
}

function senderJson(env: TxEnvelope): Record<string, string> {
  return { from: toHex(env.tx.from), nonce: env.nonce.toString(), kind: env.tx.body.kind };
}

/**
 * GET /tx/{hash}: "included" (its block, index, receipt and the receipt's events decoded),
 * "pending" (queued; its place in the pool), "dropped" (left out of a produced block, with the
 * reason, while the node remembers it), else 404 tx_not_found.
 */
export function txAnswer(node: CbqsNode, hashText: string): Record<string, unknown> {
  const hash = parseHash(hashText, "tx_hash");
  const db = node.db;
  const loc = db.txLocation(hash);
  if (loc !== undefined) {
    const block = db.blockByHeight(loc.height)!;
    const receipt = block.receipts[loc.index]!;
    return {
      ...readPointJson(block),
      tx_hash: toHex(hash),
      status: "included",
      index: loc.index,
      ...senderJson(decodeEnvelope(block.transactions[loc.index]!)),
      receipt: receiptJson(receipt, node.rejectionMessage(hash)),
      events: receipt.events.map(decodedEvent),
    };
  }
  const head = node.head();
  const queued = node.pooled(hash);
  if (queued !== undefined) return { ...readPointJson(head), tx_hash: toHex(hash), status: "pending", position: queued.position, ...senderJson(queued.env) };
  const dropped = node.droppedTx(hash);
  if (dropped !== undefined) return { ...readPointJson(head), tx_hash: toHex(hash), status: "dropped", dropped_at: dropped.height.toString(), reason: dropped.reason };
  throw notFound("tx_not_found", `no transaction ${hashText} is included, queued or recently dropped`, readPointJson(head));
}

/** GET /devnet/accounts: the dev accounts of the chain's genesis (none unless it is a devnet genesis), at the head. */
export function devAccountsAnswer(node: CbqsNode): Record<string, unknown> {
  const head = node.head();
  const state = node.db.stateAt(head.height)!;
  const devnet = devnetOf(node.genesis.source, node.config.accounts);
  return {
    ...readPointJson(head),
    accounts: (devnet?.accounts ?? []).map((a) => {
      const { nonce, balance } = accountAt(state, a.address);
      const pending = node.pendingFrom(a.address);
      return {
        name: a.name,
        address: toHex(a.address),
        seed: toHex(a.seed),
        public_key: toHex(a.publicKey),
        balance: balance.toString(),
        nonce: nonce.toString(),
        pending,
        next_nonce: (nonce + BigInt(pending)).toString(),
      };
    }),
  };
}

/**
 * GET /devnet/names: the dev accounts' names by address — what GET /devnet/accounts lists, without
 * the seeds, keys or balances, so it is served to every client (the explorer names owners and
 * senders by it). None unless the genesis is a devnet genesis; at most MAX_DEV_ACCOUNTS.
 */
export function devNamesAnswer(node: CbqsNode): Record<string, unknown> {
  const devnet = devnetOf(node.genesis.source, node.config.accounts);
  return { ...readPointJson(node.head()), accounts: (devnet?.accounts ?? []).map((a) => ({ name: a.name, address: toHex(a.address) })) };
}

/** A stream id in a path segment: percent-decoded, then as broker-state's ?stream= takes it. */
export function pathSegment(text: string, name: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    throw badRequest(`invalid_${name}`, `the ${name} in the path has a malformed percent-encoding`);
  }
}
