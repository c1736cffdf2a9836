// The `cbqs-fixture/v1` format (docs/reference/formats/fixture.md, fixtures/schema/cbqs-fixture-v1.schema.json):
// a chain resolved to bytes — the genesis source bytes and, per block, the raw transaction
// envelopes plus every expected consensus output. A strict loader (every field checked, one
// FixtureError naming the JSON path) and a deterministic writer (fixed key order, lowercase hex,
// decimal-string integers, trailing newline) so filled fixtures are byte-stable.
import { MAX_BLOCK_TRANSACTIONS, MAX_DUMP_ENTRIES, MAX_ENVELOPE_BYTES } from "../bounds.js";
import { compareBytes, toHex } from "../bytes.js";
import type { GenesisConfig } from "../engine/inputs.js";
import { loadReceiptJson, receiptJson, type TxReceipt } from "../chain/receipts.js";
import { array as arr, decimal, formatProblem, hex, object as obj, sha256Hex, string as str } from "../json/fields.js";
import { childPath, JsonError } from "../json/parse.js";
import { DUMP_FORMAT, DumpError, loadDumpEntry, plainDump } from "../../state/kv/dump.js";
import { genesisFromSource } from "./genesis.js";

export const FIXTURE_FORMAT = "cbqs-fixture/v1";


export class FixtureError extends JsonError {
  override name = "FixtureError";
}

export interface FixtureBlock {
  height: bigint;
  timestamp: bigint;
  /** Raw CBOR transaction envelopes (docs/reference/formats/transaction.md), in block order. */
  transactions: Uint8Array[];
  effective_rent_height: bigint;
  state_root: Uint8Array;
  tx_root: Uint8Array;
  receipt_root: Uint8Array;
  logs_root: Uint8Array;
  block_hash: Uint8Array;
  gas_vectors_sha256: string;
  receipts: TxReceipt[];
  /** Committed state after this block, keys ascending (optional). */
  post_state?: Array<[Uint8Array, Uint8Array]>;
}

export interface Fixture {
  name: string;
  description: string;
  genesis: {
    /** The exact genesis config bytes (CIP-39 §3); the config is parsed from them. */
    source: Uint8Array;
    config: GenesisConfig;
    chain_instance_id: Uint8Array;
    state_root: Uint8Array;
  };
  blocks: FixtureBlock[];
}

// ---- loading ------------------------------------------------------------------------------------

type Obj = Record<string, unknown>;

const at = childPath;
const b32 = (v: unknown, path: string) => hex(v, path, 32);

function loadPostState(v: unknown, path: string): Array<[Uint8Array, Uint8Array]> {
  const d = obj(v, path, ["format", "entries"]);
  if (d["format"] !== DUMP_FORMAT) throw new FixtureError(at(path, "format"), formatProblem(d["format"], [DUMP_FORMAT]));
  const entries = arr(d["entries"], at(path, "entries"), MAX_DUMP_ENTRIES).map((item, i) => {
    try {
      return loadDumpEntry(item, at(at(path, "entries"), i));
    } catch (err) {
      if (err instanceof DumpError) throw new FixtureError(err.path, err.reason);
      throw err;
    }
  });
  for (let i = 1; i < entries.length; i++) {
    if (compareBytes(entries[i - 1]![0], entries[i]![0]) >= 0) {
      throw new FixtureError(at(at(path, "entries"), i), "keys must be strictly ascending");
    }
  }
  return entries;
}

/** One block of a fixture at JSON path `path` (a streaming reader loads them one at a time). */
export function loadBlock(v: unknown, path: string): FixtureBlock {
  const b = obj(
    v,
    path,
    ["height", "timestamp", "transactions", "effective_rent_height", "state_root", "tx_root", "receipt_root", "logs_root", "block_hash", "gas_vectors_sha256", "receipts"],
    ["post_state"],
  );
  const transactions = arr(b["transactions"], at(path, "transactions"), MAX_BLOCK_TRANSACTIONS).map((t, i) =>
    hex(t, at(at(path, "transactions"), i), undefined, MAX_ENVELOPE_BYTES),
  );
  const receipts = arr(b["receipts"], at(path, "receipts"), MAX_BLOCK_TRANSACTIONS).map((r, i) => loadReceiptJson(r, at(at(path, "receipts"), i)).receipt);
  if (receipts.length !== transactions.length) {
    throw new FixtureError(at(path, "receipts"), `${receipts.length} receipts for ${transactions.length} transactions`);
  }
  const block: FixtureBlock = {
    height: decimal(b["height"], at(path, "height")),
    timestamp: decimal(b["timestamp"], at(path, "timestamp")),
    transactions,
    effective_rent_height: decimal(b["effective_rent_height"], at(path, "effective_rent_height")),
    state_root: b32(b["state_root"], at(path, "state_root")),
    tx_root: b32(b["tx_root"], at(path, "tx_root")),
    receipt_root: b32(b["receipt_root"], at(path, "receipt_root")),
    logs_root: b32(b["logs_root"], at(path, "logs_root")),
    block_hash: b32(b["block_hash"], at(path, "block_hash")),
    gas_vectors_sha256: sha256Hex(b["gas_vectors_sha256"], at(path, "gas_vectors_sha256")),
    receipts,
  };
  if (b["post_state"] !== undefined) block.post_state = loadPostState(b["post_state"], at(path, "post_state"));
  return block;
}

/**
 * Validates a parsed fixture document; every problem is a FixtureError with its JSON path. When
 * the blocks were already loaded one at a time while reading (loadBlock), pass them as
 * `streamed`: the document's own `blocks` array is then empty.
 */
export function loadFixture(doc: unknown, streamed?: FixtureBlock[]): Fixture {
  if (typeof doc === "object" && doc !== null && !Array.isArray(doc) && (doc as Obj)["format"] !== FIXTURE_FORMAT) {
    throw new FixtureError("$.format", formatProblem((doc as Obj)["format"], [FIXTURE_FORMAT]));
  }
  const root = obj(doc, "$", ["format", "name", "description", "genesis", "blocks"]);
  const g = obj(root["genesis"], "$.genesis", ["source", "chain_instance_id", "state_root"]);
  const source = hex(g["source"], "$.genesis.source");
  const blocks = [...(streamed ?? []), ...arr(root["blocks"], "$.blocks", Number.MAX_SAFE_INTEGER).map((b, i) => loadBlock(b, at("$.blocks", i)))];
  let previous = 0n;
  blocks.forEach((block, i) => {
    if (block.height <= previous) {
      throw new FixtureError(at(at("$.blocks", i), "height"), `heights must strictly increase (previous ${previous}, genesis is 0)`);
    }
    previous = block.height;
  });
  let config: GenesisConfig;
  try {
    config = genesisFromSource(source);
  } catch (err) {
    throw new FixtureError("$.genesis.source", (err as Error).message);
  }
  return {
    name: str(root["name"], "$.name"),
    description: str(root["description"], "$.description"),
    genesis: { source, config, chain_instance_id: b32(g["chain_instance_id"], "$.genesis.chain_instance_id"), state_root: b32(g["state_root"], "$.genesis.state_root") },
    blocks,
  };
}

// ---- writing ------------------------------------------------------------------------------------

/** One block as the fixture writes it. */
export function blockJson(b: FixtureBlock): Obj {
  const out: Obj = {
    height: b.height.toString(),
    timestamp: b.timestamp.toString(),
    transactions: b.transactions.map(toHex),
    effective_rent_height: b.effective_rent_height.toString(),
    state_root: toHex(b.state_root),
    tx_root: toHex(b.tx_root),
    receipt_root: toHex(b.receipt_root),
    logs_root: toHex(b.logs_root),
    block_hash: toHex(b.block_hash),
    gas_vectors_sha256: b.gas_vectors_sha256,
    receipts: b.receipts.map((r) => receiptJson(r)),
  };
  if (b.post_state !== undefined) out["post_state"] = plainDump(b.post_state);
  return out;
}

/** The members before `blocks`, in the fixture's fixed key order. */
export function fixtureHeader(f: Fixture): Obj {
  return {
    format: FIXTURE_FORMAT,
    name: f.name,
    description: f.description,
    genesis: { source: toHex(f.genesis.source), chain_instance_id: toHex(f.genesis.chain_instance_id), state_root: toHex(f.genesis.state_root) },
  };
}

/** The fixture as its canonical text: fixed key order, two-space indent, trailing newline. */
export function fixtureJsonText(f: Fixture): string {
  return JSON.stringify({ ...fixtureHeader(f), blocks: f.blocks.map(blockJson) }, null, 2) + "\n";
}

/** The fixture file name of a scenario name: its kebab name, never a path. */
/** "no block at height h", with the heights the fixture has (the first and last few of a long chain). */
export function noBlockAt(f: Fixture, height: bigint): string {
  const heights = f.blocks.map((b) => b.height.toString());
  if (heights.length === 0) return `no block at height ${height} (the fixture has no blocks)`;
  const shown = heights.length <= 8 ? heights.join(", ") : `${heights.slice(0, 4).join(", ")}, …, ${heights.slice(-3).join(", ")}`;
  return `no block at height ${height} (the fixture's ${heights.length === 1 ? "block is" : `${heights.length} blocks are`} at ${shown})`;
}

export function fixtureFileName(name: string): string {
  const safe = name.toLowerCase().replace(/[^a-z0-9._-]+/g, "-").replace(/^[-.]+|-+$/g, "");
  if (safe === "") throw new FixtureError("$.name", "the scenario has no usable name for a fixture file");
  return `${safe}.json`;
}
