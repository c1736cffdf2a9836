// Scenario document (docs/reference/formats/scenario.md §2, §3) → genesis plus blocks whose
// transactions are resolved later, one block at a time, just before that block executes:
// signed objects may need the emulator hash of an earlier block (served_at.block_hash).
// Everything that needs no chain context is checked here, up front, with JSON paths.
import { echo, MAX_BLOCK_TRANSACTIONS, MAX_PARAM_NAME_BYTES, MAX_SET_PARAMS_ENTRIES, MAX_SYSTEM_PAYLOAD_BYTES } from "../bounds.js";
import { utf8 } from "../bytes.js";
import { formatProblem } from "../json/fields.js";
import { JsonError, parseJson } from "../json/parse.js";
import type { GovAction, TxBody } from "../engine/inputs.js";
import { ERRORS } from "../engine/errors.js";
import * as S from "../codec/schema.js";
import { LIVE_SCALARS } from "../params.js";
import { checkFieldNames } from "./field-names.js";
import { checkStreamKey } from "./refs.js";
import { parseGenesisSection, type ParsedGenesis } from "./genesis.js";
import {
  address,
  arr,
  at,
  hexBytes,
  isObject,
  obj,
  onlyKeys,
  ScenarioError,
  str,
  timestamp,
  u64,
  uint,
  type Json,
  type JsonObject,
} from "./json.js";

export const SCENARIO_FORMAT = "cbqs-scenario/v1";

export interface TxExpect {
  status?: "ok" | "rejected";
  error?: string;
  events?: string[];
}

/** Block-level partial expectations (§3); keys and field values stay JSON until checked. */
export interface StateExpect {
  streams: JsonObject;
  providers: JsonObject;
  accounts: JsonObject;
  /** Runner extensions (docs/reference/scenarios.md): the block's effective rent height, partial pause record, live params. */
  effective_rent_height?: bigint;
  pause?: JsonObject;
  params: JsonObject;
}

export interface ScenarioTx {
  path: string;
  from: Uint8Array;
  /** gov/transfer/raw are resolved here; a cbqs instruction waits for its block (resolve.ts). */
  body: TxBody | { kind: "cbqs"; instruction: JsonObject };
  expect?: TxExpect;
}

export interface ScenarioBlock {
  path: string;
  height: bigint;
  timestamp: bigint;
  txs: ScenarioTx[];
  expectState?: StateExpect;
}

export interface Scenario extends ParsedGenesis {
  name: string;
  /** The scenario's `description` ("" when absent); a filled fixture copies it. */
  description: string;
  blocks: ScenarioBlock[];
}

const TOP_KEYS = ["format", "name", "description", "genesis", "genesis_source", "blocks"];
const TX_KINDS = ["cbqs", "gov", "transfer", "raw"] as const;

export function parseScenario(doc: unknown): Scenario {
  const root = obj(doc, "$");
  onlyKeys(root, TOP_KEYS, "$");
  if (root["format"] !== SCENARIO_FORMAT) {
    throw new ScenarioError("$.format", formatProblem(root["format"], [SCENARIO_FORMAT]));
  }
  const name = root["name"] === undefined ? "" : str(root["name"], "$.name");
  const description = root["description"] === undefined ? "" : str(root["description"], "$.description");
  const genesis = parseGenesisSection(root);
  const blocks: ScenarioBlock[] = [];
  // §2 shows "blocks" as part of every scenario; [] (genesis only) is a legitimate chain (D-0080).
  if (root["blocks"] === undefined) throw new ScenarioError("$.blocks", "missing (give [] for a genesis-only chain)");
  const list = arr(root["blocks"], "$.blocks");
  let previous = 0n;
  let previousTs = genesis.config.timestamp;
  list.forEach((b, i) => {
    const block = parseBlock(b, at("$.blocks", i), genesis);
    if (block.height <= previous) {
      throw new ScenarioError(at(block.path, "height"), `heights must strictly increase (previous ${previous}, genesis is 0)`);
    }
    // Block time never runs backwards; equal timestamps are allowed (D-0079).
    if (block.timestamp < previousTs) {
      const given = isObject(b) && b["timestamp"] !== undefined ? `${block.timestamp}` : `derived ${block.timestamp} (genesis timestamp + height × block_time_seconds)`;
      throw new ScenarioError(
        at(block.path, "timestamp"),
        `${given} is earlier than the ${i === 0 ? "genesis" : "previous block's"} timestamp ${previousTs}`,
      );
    }
    previous = block.height;
    previousTs = block.timestamp;
    blocks.push(block);
  });
  return { ...genesis, name, description, blocks };
}

function parseBlock(v: unknown, path: string, genesis: ParsedGenesis): ScenarioBlock {
  const b = obj(v, path);
  onlyKeys(b, ["height", "timestamp", "txs", "expect_state"], path);
  if (b["height"] === undefined) throw new ScenarioError(at(path, "height"), "missing");
  const height = u64(b["height"], at(path, "height"));
  let ts: bigint;
  if (b["timestamp"] !== undefined) ts = timestamp(b["timestamp"], at(path, "timestamp"));
  else {
    // §2: genesis timestamp + height × block_time_seconds
    ts = genesis.config.timestamp + height * genesis.config.block_time_seconds;
    if (ts >> 64n !== 0n) {
      throw new ScenarioError(at(path, "height"), `genesis timestamp + height × block_time_seconds (${genesis.config.block_time_seconds}) exceeds u64; give the block a timestamp`);
    }
  }
  const list = b["txs"] === undefined ? [] : arr(b["txs"], at(path, "txs"));
  // The fixture bound, checked before any transaction is read: run and fill never produce a block replay refuses.
  if (list.length > MAX_BLOCK_TRANSACTIONS) {
    throw new ScenarioError(at(path, "txs"), `${list.length} transactions exceed the bound of ${MAX_BLOCK_TRANSACTIONS} per block`);
  }
  const txs = list.map((t, i) => parseTx(t, at(at(path, "txs"), i)));
  const block: ScenarioBlock = { path, height, timestamp: ts, txs };
  if (b["expect_state"] !== undefined) block.expectState = parseStateExpect(b["expect_state"], at(path, "expect_state"));
  return block;
}

/** One transaction as a scenario block lists it (§2): `from` and one of cbqs, gov, transfer, raw. */
export function parseTx(v: unknown, path: string): ScenarioTx {
  const t = obj(v, path);
  onlyKeys(t, ["from", ...TX_KINDS, "expect"], path);
  if (t["from"] === undefined) throw new ScenarioError(at(path, "from"), "missing");
  const from = address(t["from"], at(path, "from"));
  const kinds = TX_KINDS.filter((k) => t[k] !== undefined);
  if (kinds.length !== 1) {
    throw new ScenarioError(path, `a transaction has exactly one of ${TX_KINDS.join(", ")} (found ${kinds.length})`);
  }
  const kind = kinds[0]!;
  const kpath = at(path, kind);
  let body: ScenarioTx["body"];
  switch (kind) {
    case "cbqs": {
      const instr = obj(t.cbqs, kpath);
      if (Object.keys(instr).length !== 1) throw new ScenarioError(kpath, 'expected exactly one {"<InstructionName>": <Args>}');
      body = { kind: "cbqs", instruction: instr };
      break;
    }
    case "gov":
      body = { kind: "gov", action: parseGov(t.gov, kpath) };
      break;
    case "transfer": {
      const tr = obj(t.transfer, kpath);
      onlyKeys(tr, ["to", "amount"], kpath);
      body = { kind: "transfer", to: address(tr["to"], at(kpath, "to")), amount: u64(tr["amount"], at(kpath, "amount")) };
      break;
    }
    case "raw": {
      const raw = obj(t.raw, kpath);
      onlyKeys(raw, ["opcode", "payload"], kpath);
      const payload = hexBytes(raw["payload"], at(kpath, "payload"));
      if (payload.length > MAX_SYSTEM_PAYLOAD_BYTES) {
        throw new ScenarioError(at(kpath, "payload"), `${payload.length} bytes exceed the envelope bound ${MAX_SYSTEM_PAYLOAD_BYTES}`);
      }
      body = { kind: "system", opcode: Number(uint(raw["opcode"], at(kpath, "opcode"), 255n)), payload };
      break;
    }
  }
  const tx: ScenarioTx = { path, from, body };
  if (t["expect"] !== undefined) tx.expect = parseTxExpect(t["expect"], at(path, "expect"));
  return tx;
}

function parseGov(v: unknown, path: string): GovAction {
  const g = obj(v, path);
  const names = Object.keys(g);
  if (names.length !== 1) throw new ScenarioError(path, "expected exactly one governance action");
  const type = names[0]!;
  const p = at(path, type);
  const a = obj(g[type], p);
  switch (type) {
    case "SetParam":
      onlyKeys(a, ["name", "value"], p);
      return { type, name: paramName(a["name"], at(p, "name")), value: u64(a["value"], at(p, "value")) };
    case "SetParams": {
      // Written order is kept: the proposal is one atomic write (§6 guard checked on the result).
      const names = Object.keys(a);
      if (names.length > MAX_SET_PARAMS_ENTRIES) throw new ScenarioError(p, `more than ${MAX_SET_PARAMS_ENTRIES} parameters in one proposal`);
      return { type, values: names.map((name) => ({ name: paramName(name, at(p, name)), value: u64(a[name], at(p, name)) })) };
    }
    case "Pause":
    case "ExtendPause":
      onlyKeys(a, ["actor", "blocks"], p);
      return { type, actor: address(a["actor"], at(p, "actor")), blocks: u64(a["blocks"], at(p, "blocks")) };
    case "Unpause":
      onlyKeys(a, ["actor"], p);
      return { type, actor: address(a["actor"], at(p, "actor")) };
    default:
      throw new ScenarioError(p, "unknown governance action (SetParam, SetParams, Pause, ExtendPause, Unpause)");
  }
}

/** A parameter name within the envelope's bound (docs/reference/formats/transaction.md). */
function paramName(v: unknown, path: string): string {
  const name = str(v, path);
  if (utf8(name).length > MAX_PARAM_NAME_BYTES) throw new ScenarioError(path, `parameter name longer than ${MAX_PARAM_NAME_BYTES} bytes`);
  return name;
}

function parseTxExpect(v: unknown, path: string): TxExpect {
  const e = obj(v, path);
  onlyKeys(e, ["status", "error", "events"], path);
  const out: TxExpect = {};
  if (e["status"] !== undefined) {
    if (e["status"] !== "ok" && e["status"] !== "rejected") throw new ScenarioError(at(path, "status"), 'expected "ok" or "rejected"');
    out.status = e["status"];
  }
  if (e["error"] !== undefined) {
    const error = str(e["error"], at(path, "error"));
    // An error name outside the engine's table could never match: the expectation is unusable.
    if (!Object.hasOwn(ERRORS, error)) {
      const near = closestNames(error, Object.keys(ERRORS));
      throw new ScenarioError(at(path, "error"), `unknown error name ${JSON.stringify(echo(error))} (${near.length === 0 ? "" : `did you mean ${near.join(" or ")}? `}docs/reference/errors.md lists them)`);
    }
    if (out.status === "ok") throw new ScenarioError(at(path, "error"), 'contradicts "status": "ok" (an accepted transaction has no error)');
    out.error = error;
  }
  if (e["events"] !== undefined) out.events = arr(e["events"], at(path, "events")).map((x, i) => str(x, at(at(path, "events"), i)));
  return out;
}

/** Field names a partial record may list: a misspelled one is unusable input, never "absent". */
const ACCOUNT_FIELDS = ["balance", "nonce"];
const PAUSE_FIELDS = ["completed_pause_blocks", "active"];

function parseStateExpect(v: unknown, path: string): StateExpect {
  const e = obj(v, path);
  onlyKeys(e, ["streams", "providers", "accounts", "effective_rent_height", "pause", "params"], path);
  const section = (k: string, check: (record: JsonObject, path: string) => void): JsonObject => {
    const s = e[k] === undefined ? {} : obj(e[k], at(path, k));
    // null means "no such record"
    for (const key of Object.keys(s)) if (s[key] !== null) check(obj(s[key], at(at(path, k), key)), at(at(path, k), key));
    return s;
  };
  const out: StateExpect = {
    streams: section("streams", (r, p) => checkFieldNames(r, S.StreamRecordV1, p)),
    providers: section("providers", (r, p) => checkFieldNames(r, S.ProviderRecordV1, p)),
    accounts: section("accounts", (r, p) => onlyKeys(r, ACCOUNT_FIELDS, p)),
    params: {},
  };
  if (e["effective_rent_height"] !== undefined) out.effective_rent_height = u64(e["effective_rent_height"], at(path, "effective_rent_height"));
  if (e["pause"] !== undefined) {
    out.pause = obj(e["pause"], at(path, "pause"));
    onlyKeys(out.pause, PAUSE_FIELDS, at(path, "pause"));
    const active = out.pause["active"];
    if (active !== undefined && active !== null) onlyKeys(obj(active, at(at(path, "pause"), "active")), ["paused_at_block", "expires_at_block"], at(at(path, "pause"), "active"));
  }
  if (e["params"] !== undefined) {
    const p = obj(e["params"], at(path, "params"));
    for (const name of Object.keys(p)) {
      if (!LIVE_SCALARS.includes(name)) throw new ScenarioError(at(at(path, "params"), name), "not a live parameter (the 25 governance scalars of CIP-39 §18.1; docs/scenario-format.md §3)");
      u64(p[name], at(at(path, "params"), name));
    }
    out.params = p;
  }
  for (const key of Object.keys(out.streams)) checkStreamKey(key, at(at(path, "streams"), key));
  for (const key of Object.keys(out.providers)) address(key, at(at(path, "providers"), key));
  for (const key of Object.keys(out.accounts)) address(key, at(at(path, "accounts"), key));
  return out;
}

/** Parses the JSON text of a scenario (the strict reader of src/json: duplicate keys refused, …). */
export function parseScenarioText(text: string): Scenario {
  let doc: Json;
  try {
    doc = parseJson(text) as Json;
  } catch (err) {
    if (err instanceof JsonError) throw new ScenarioError(err.path, err.reason);
    throw err;
  }
  return parseScenario(doc);
}

/** The names at the smallest edit distance from `word` (at most 3 edits, case ignored), for a suggestion. */
function closestNames(word: string, names: readonly string[]): string[] {
  if (word.length > 64) return [];
  const distance = (a: string, b: string): number => {
    let row = Array.from({ length: b.length + 1 }, (_, j) => j);
    for (let i = 1; i <= a.length; i++) {
      const next = [i];
      for (let j = 1; j <= b.length; j++) next[j] = Math.min(row[j]! + 1, next[j - 1]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      row = next;
    }
    return row[b.length]!;
  };
  const scored = names.map((n) => ({ n, d: distance(word.toLowerCase(), n.toLowerCase()) })).filter((x) => x.d <= 3);
  const best = Math.min(...scored.map((x) => x.d));
  return scored.filter((x) => x.d === best).map((x) => x.n).sort();
}
