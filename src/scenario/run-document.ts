// Reading a cbqs-run/v1 document back (scenario-format §4; `cbqs diff` compares two of them):
// every field checked, unknown fields refused, registry records checked against the §14 codec's
// JSON mapping. Every problem is a JsonError naming the JSON path.
import { MAX_BLOCK_TRANSACTIONS } from "../bounds.js";
import { loadReceiptJson } from "../chain/receipts.js";
import { JsonValueError } from "../codec/errors.js";
import * as S from "../codec/schema.js";
import { array, decimal, format, hex, object, sha256Hex, string } from "../json/fields.js";
import { childPath, JsonError, type JsonObject } from "../json/parse.js";
import { RUN_FORMAT, type RunBlock, type RunDocument } from "./run.js";

const DOCUMENT_REQUIRED = ["format", "chain_instance_id", "genesis_state_root", "blocks", "state"];
const BLOCK_FIELDS = ["height", "effective_rent_height", "state_root", "tx_root", "receipt_root", "logs_root", "gas_vectors_sha256", "receipts"];

/** One block of a run document at JSON path `path` (a streaming reader loads them one at a time). */
export function loadRunBlock(v: unknown, path: string): RunBlock {
  const b = object(v, path, BLOCK_FIELDS);
  decimal(b["height"], `${path}.height`);
  decimal(b["effective_rent_height"], `${path}.effective_rent_height`);
  for (const root of ["state_root", "tx_root", "receipt_root", "logs_root"]) hex(b[root], `${path}.${root}`, 32);
  sha256Hex(b["gas_vectors_sha256"], `${path}.gas_vectors_sha256`);
  array(b["receipts"], `${path}.receipts`, MAX_BLOCK_TRANSACTIONS).forEach((r, i) => {
    const { index } = loadReceiptJson(r, `${path}.receipts[${i}]`, true);
    if (index !== BigInt(i)) throw new JsonError(`${path}.receipts[${i}].index`, `expected "${i}" (receipts are in block order)`);
  });
  return b as unknown as RunBlock;
}

function record(codec: { fromJson(json: unknown, path: string, ctx: object): unknown }, v: unknown, path: string): void {
  try {
    codec.fromJson(v, path, {});
  } catch (err) {
    if (err instanceof JsonValueError) throw new JsonError(err.path, err.reason);
    throw err;
  }
}

function loadState(v: unknown, path: string): void {
  const s = object(v, path, ["streams", "providers", "accounts", "pause", "params"]);
  const keys = (o: JsonObject) => Object.keys(o);
  for (const [section, keyLength, codec] of [
    ["streams", 32, S.StreamRecordV1],
    ["providers", 20, S.ProviderRecordV1],
  ] as const) {
    const map = mapOf(s[section], `${path}.${section}`);
    for (const k of keys(map)) {
      hex(k, childPath(`${path}.${section}`, k), keyLength);
      record(codec, map[k], childPath(`${path}.${section}`, k));
    }
  }
  const accounts = mapOf(s["accounts"], `${path}.accounts`);
  for (const k of keys(accounts)) {
    const p = childPath(`${path}.accounts`, k);
    hex(k, p, 20);
    const a = object(accounts[k], p, ["balance", "nonce"]);
    decimal(a["balance"], `${p}.balance`);
    decimal(a["nonce"], `${p}.nonce`);
  }
  const pause = object(s["pause"], `${path}.pause`, ["completed_pause_blocks", "active"]);
  decimal(pause["completed_pause_blocks"], `${path}.pause.completed_pause_blocks`);
  if (pause["active"] !== null) {
    const a = object(pause["active"], `${path}.pause.active`, ["paused_at_block", "expires_at_block"]);
    decimal(a["paused_at_block"], `${path}.pause.active.paused_at_block`);
    decimal(a["expires_at_block"], `${path}.pause.active.expires_at_block`);
  }
  const params = mapOf(s["params"], `${path}.params`);
  for (const k of keys(params)) decimal(params[k], childPath(`${path}.params`, k));
}

function mapOf(v: unknown, path: string): JsonObject {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new JsonError(path, "expected a JSON object");
  return v as JsonObject;
}

/**
 * Validates a run document; when its blocks were already loaded one at a time while reading
 * (loadRunBlock), pass them as `streamed` (the document's own `blocks` array is then empty).
 */
export function loadRunDocument(doc: unknown, streamed: RunBlock[] = []): RunDocument {
  const d = object(doc, "$", DOCUMENT_REQUIRED, ["failure"]);
  format(d, RUN_FORMAT);
  hex(d["chain_instance_id"], "$.chain_instance_id", 32);
  hex(d["genesis_state_root"], "$.genesis_state_root", 32);
  const blocks = [...streamed, ...array(d["blocks"], "$.blocks", Number.MAX_SAFE_INTEGER).map((b, i) => loadRunBlock(b, `$.blocks[${i}]`))];
  loadState(d["state"], "$.state");
  if (d["failure"] !== undefined) {
    const f = object(d["failure"], "$.failure", ["path", "expected", "actual"]);
    string(f["path"], "$.failure.path");
  }
  return { ...(d as unknown as RunDocument), blocks };
}
