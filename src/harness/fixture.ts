// The `cbqs-fixture/v1` format (docs/fixtures.md, fixtures/schema/cbqs-fixture-v1.schema.json):
// a chain resolved to bytes — the genesis source bytes and, per block, the raw transaction
// envelopes plus every expected consensus output. A strict loader (every field checked, one
// FixtureError naming the JSON path) and a deterministic writer (fixed key order, lowercase hex,
// decimal-string integers, trailing newline) so filled fixtures are byte-stable.
import { gunzipSync } from "node:zlib";
import { fromHex, HexError, toHex } from "../bytes.js";
import type { GenesisConfig } from "../chain/types.js";
import { MAX_ENVELOPE_BYTES } from "../chain/envelope.js";
import { receiptJson, type TxReceipt } from "../chain/receipts.js";
import { DUMP_FORMAT } from "../../state/dump.js";
import { genesisFromSource } from "./genesis.js";

export const FIXTURE_FORMAT = "cbqs-fixture/v1";

const U64_MAX = (1n << 64n) - 1n;
const U16_MAX = 0xffffn;
/** Bound on a fixture file read from disk (the long chain is the largest, ~60 MB unpacked). */
export const MAX_FIXTURE_BYTES = 512 * 1024 * 1024;
/** Bound on one block's transaction count (checked before any envelope is decoded). */
export const MAX_BLOCK_TRANSACTIONS = 65_536;
/** Bound on a receipt's event count (CIP-4 §4.3 ActorEventList max). */
export const MAX_RECEIPT_EVENTS = 1_000;

export class FixtureError extends Error {
  override name = "FixtureError";
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`${path}: ${reason}`);
  }
}

export interface FixtureBlock {
  height: bigint;
  timestamp: bigint;
  /** Raw CBOR transaction envelopes (docs/transactions.md), in block order. */
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

const at = (path: string, key: string | number): string => (typeof key === "number" ? `${path}[${key}]` : `${path}.${key}`);

function obj(v: unknown, path: string, keys: readonly string[], optional: readonly string[] = []): Obj {
  if (typeof v !== "object" || v === null || Array.isArray(v)) throw new FixtureError(path, "expected a JSON object");
  const o = v as Obj;
  for (const k of Object.keys(o)) {
    if (!keys.includes(k) && !optional.includes(k)) throw new FixtureError(at(path, k), `unknown field (expected one of: ${[...keys, ...optional].join(", ")})`);
  }
  for (const k of keys) if (o[k] === undefined) throw new FixtureError(at(path, k), "missing");
  return o;
}

function arr(v: unknown, path: string, max: number): unknown[] {
  if (!Array.isArray(v)) throw new FixtureError(path, "expected a JSON array");
  if (v.length > max) throw new FixtureError(path, `${v.length} entries exceed the bound ${max}`);
  return v;
}

function str(v: unknown, path: string): string {
  if (typeof v !== "string") throw new FixtureError(path, "expected a string");
  return v;
}

/** Integers are decimal strings (scenario-format §1 output convention), no leading zeros. */
function uint(v: unknown, path: string, max: bigint): bigint {
  if (typeof v !== "string" || !/^(0|[1-9][0-9]*)$/.test(v)) throw new FixtureError(path, "expected an unsigned integer as a decimal string");
  if (v.length > 40) throw new FixtureError(path, `${v} is out of range`);
  const n = BigInt(v);
  if (n > max) throw new FixtureError(path, `${v} exceeds the maximum ${max}`);
  return n;
}

/** Hex is checked for length BEFORE it is decoded (bounded decode). */
function hex(v: unknown, path: string, length?: number, maxLength?: number): Uint8Array {
  if (typeof v !== "string") throw new FixtureError(path, "expected a 0x-prefixed hex string");
  if (maxLength !== undefined && v.length > 2 + 2 * maxLength) {
    throw new FixtureError(path, `${(v.length - 2) / 2} bytes exceed the bound of ${maxLength} bytes`);
  }
  try {
    return fromHex(v, length, "value");
  } catch (err) {
    if (err instanceof HexError) throw new FixtureError(path, err.message.replace(/^value: /, ""));
    throw err;
  }
}

const b32 = (v: unknown, path: string) => hex(v, path, 32);

function loadReceipt(v: unknown, path: string): TxReceipt {
  const r = obj(v, path, ["tx_hash", "status", "error", "events", "cycles", "cells"]);
  const status = r["status"];
  if (status !== "ok" && status !== "rejected") throw new FixtureError(at(path, "status"), 'expected "ok" or "rejected"');
  let error: TxReceipt["error"] = null;
  if (status === "rejected") {
    const e = obj(r["error"], at(path, "error"), ["code", "name"]);
    const code = Number(uint(e["code"], at(at(path, "error"), "code"), U16_MAX));
    if (code === 0) throw new FixtureError(at(at(path, "error"), "code"), "a rejection's code is never 0");
    error = { code, name: str(e["name"], at(at(path, "error"), "name")) };
  } else if (r["error"] !== null) {
    throw new FixtureError(at(path, "error"), "must be null when status is ok");
  }
  const events = arr(r["events"], at(path, "events"), MAX_RECEIPT_EVENTS).map((ev, i) => {
    const p = at(at(path, "events"), i);
    const e = obj(ev, p, ["emitter", "topic", "payload"]);
    return { emitter: hex(e["emitter"], at(p, "emitter"), 20), topic: str(e["topic"], at(p, "topic")), payload: hex(e["payload"], at(p, "payload")) };
  });
  if (status === "rejected" && events.length > 0) throw new FixtureError(at(path, "events"), "a rejected transaction carries no events");
  return {
    tx_hash: b32(r["tx_hash"], at(path, "tx_hash")),
    status,
    error,
    events,
    cycles: uint(r["cycles"], at(path, "cycles"), U64_MAX),
    cells: uint(r["cells"], at(path, "cells"), U64_MAX),
  };
}

function loadPostState(v: unknown, path: string): Array<[Uint8Array, Uint8Array]> {
  const d = obj(v, path, ["format", "entries"]);
  if (d["format"] !== DUMP_FORMAT) throw new FixtureError(at(path, "format"), `expected "${DUMP_FORMAT}"`);
  const entries = arr(d["entries"], at(path, "entries"), Number.MAX_SAFE_INTEGER).map((item, i): [Uint8Array, Uint8Array] => {
    const p = at(at(path, "entries"), i);
    const e = obj(item, p, ["key", "value"]);
    return [hex(e["key"], at(p, "key"), 54), hex(e["value"], at(p, "value"))];
  });
  for (let i = 1; i < entries.length; i++) {
    if (Buffer.compare(entries[i - 1]![0], entries[i]![0]) >= 0) {
      throw new FixtureError(at(at(path, "entries"), i), "keys must be strictly ascending");
    }
  }
  return entries;
}

function loadBlock(v: unknown, path: string): FixtureBlock {
  const b = obj(
    v,
    path,
    ["height", "timestamp", "transactions", "effective_rent_height", "state_root", "tx_root", "receipt_root", "logs_root", "block_hash", "gas_vectors_sha256", "receipts"],
    ["post_state"],
  );
  const transactions = arr(b["transactions"], at(path, "transactions"), MAX_BLOCK_TRANSACTIONS).map((t, i) =>
    hex(t, at(at(path, "transactions"), i), undefined, MAX_ENVELOPE_BYTES),
  );
  const receipts = arr(b["receipts"], at(path, "receipts"), MAX_BLOCK_TRANSACTIONS).map((r, i) => loadReceipt(r, at(at(path, "receipts"), i)));
  if (receipts.length !== transactions.length) {
    throw new FixtureError(at(path, "receipts"), `${receipts.length} receipts for ${transactions.length} transactions`);
  }
  const block: FixtureBlock = {
    height: uint(b["height"], at(path, "height"), U64_MAX),
    timestamp: uint(b["timestamp"], at(path, "timestamp"), U64_MAX),
    transactions,
    effective_rent_height: uint(b["effective_rent_height"], at(path, "effective_rent_height"), U64_MAX),
    state_root: b32(b["state_root"], at(path, "state_root")),
    tx_root: b32(b["tx_root"], at(path, "tx_root")),
    receipt_root: b32(b["receipt_root"], at(path, "receipt_root")),
    logs_root: b32(b["logs_root"], at(path, "logs_root")),
    block_hash: b32(b["block_hash"], at(path, "block_hash")),
    gas_vectors_sha256: str(b["gas_vectors_sha256"], at(path, "gas_vectors_sha256")),
    receipts,
  };
  if (b["post_state"] !== undefined) block.post_state = loadPostState(b["post_state"], at(path, "post_state"));
  return block;
}

/** Validates a parsed fixture document; every problem is a FixtureError with its JSON path. */
export function loadFixture(doc: unknown): Fixture {
  if (typeof doc === "object" && doc !== null && !Array.isArray(doc) && (doc as Obj)["format"] !== FIXTURE_FORMAT) {
    throw new FixtureError("$.format", `unknown format ${JSON.stringify((doc as Obj)["format"])} (expected "${FIXTURE_FORMAT}")`);
  }
  const root = obj(doc, "$", ["format", "name", "description", "genesis", "blocks"]);
  const g = obj(root["genesis"], "$.genesis", ["source", "chain_instance_id", "state_root"]);
  const source = hex(g["source"], "$.genesis.source");
  const blocks = arr(root["blocks"], "$.blocks", Number.MAX_SAFE_INTEGER).map((b, i) => loadBlock(b, at("$.blocks", i)));
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

/** Reads a fixture file's text (`.gz` files are gunzipped), bounded by MAX_FIXTURE_BYTES. */
export function fixtureText(bytes: Uint8Array, gzipped: boolean): string {
  let raw: Uint8Array = bytes;
  if (gzipped) {
    try {
      raw = gunzipSync(bytes, { maxOutputLength: MAX_FIXTURE_BYTES });
    } catch (err) {
      throw new FixtureError("$", `not a readable gzip file (${(err as Error).message})`);
    }
  }
  if (raw.length > MAX_FIXTURE_BYTES) throw new FixtureError("$", `${raw.length} bytes exceed the ${MAX_FIXTURE_BYTES}-byte bound`);
  return Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength).toString("utf8");
}

export function parseFixtureText(text: string): Fixture {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new FixtureError("$", `not valid JSON: ${(err as Error).message}`);
  }
  return loadFixture(doc);
}

// ---- writing ------------------------------------------------------------------------------------

function postStateJson(entries: ReadonlyArray<readonly [Uint8Array, Uint8Array]>): Obj {
  return { format: DUMP_FORMAT, entries: entries.map(([k, v]) => ({ key: toHex(k), value: toHex(v) })) };
}

function blockJson(b: FixtureBlock): Obj {
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
  if (b.post_state !== undefined) out["post_state"] = postStateJson(b.post_state);
  return out;
}

/** The fixture as its canonical text: fixed key order, two-space indent, trailing newline. */
export function fixtureJsonText(f: Fixture): string {
  const doc = {
    format: FIXTURE_FORMAT,
    name: f.name,
    description: f.description,
    genesis: { source: toHex(f.genesis.source), chain_instance_id: toHex(f.genesis.chain_instance_id), state_root: toHex(f.genesis.state_root) },
    blocks: f.blocks.map(blockJson),
  };
  return JSON.stringify(doc, null, 2) + "\n";
}

/** The fixture file name of a scenario name: its kebab name, never a path. */
export function fixtureFileName(name: string): string {
  const safe = name.toLowerCase().replace(/[^a-z0-9._-]+/g, "-").replace(/^[-.]+|-+$/g, "");
  if (safe === "") throw new FixtureError("$.name", "the scenario has no usable name for a fixture file");
  return `${safe}.json`;
}
