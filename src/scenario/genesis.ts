// Scenario genesis → GenesisConfig plus the exact source bytes whose fingerprint is
// chain_instance_id (CIP-39 §3). Parameter values are range-checked here only as u64;
// their §18 Maximum and the bps guard are the engine's genesis validation.
import { compareBytes, utf8 } from "../bytes.js";
import type { GenesisConfig } from "../engine/inputs.js";
import { JsonError, parseJson } from "../json/parse.js";
import { address, at, isObject, obj, onlyKeys, ScenarioError, str, timestamp, u64, U64_MAX, type Json } from "./json.js";

export interface ParsedGenesis {
  config: GenesisConfig;
  /** The bytes that define chain_instance_id (§3). */
  sourceBytes: Uint8Array;
  /** Where the genesis is written: what an engine's genesis refusal points at. */
  genesisPath: "$.genesis" | "$.genesis_source";
}

const GENESIS_KEYS = ["chain_id", "timestamp", "block_time_seconds", "governance", "params", "accounts", "cycle_price", "cell_price"];

/**
 * `genesis_source` is the exact config text (§3: the identity is derived from the same
 * captured bytes that are parsed, so the config is parsed FROM it); when the document also
 * gives `genesis`, the two must describe the same JSON value. Without `genesis_source` the
 * identity bytes are the canonical serialization of `genesis` (D-0069).
 */
export function parseGenesisSection(scenario: { [k: string]: Json }): ParsedGenesis {
  const source = scenario["genesis_source"];
  if (source !== undefined && source !== null) {
    const text = str(source, "$.genesis_source");
    let parsed: unknown;
    try {
      parsed = parseJson(text);
    } catch (err) {
      if (err instanceof JsonError) throw new ScenarioError("$.genesis_source", `the genesis text: ${err.message}`);
      throw err;
    }
    const given = scenario["genesis"];
    if (given !== undefined && canonicalJson(given) !== canonicalJson(parsed as Json)) {
      throw new ScenarioError("$.genesis", "differs from the configuration in $.genesis_source (give one, or make them equal)");
    }
    return { config: scenarioGenesis(parsed, "$.genesis_source"), sourceBytes: utf8(text), genesisPath: "$.genesis_source" };
  }
  const genesis = scenario["genesis"];
  if (genesis === undefined) throw new ScenarioError("$.genesis", "missing (give genesis or genesis_source)");
  return { config: scenarioGenesis(genesis, "$.genesis"), sourceBytes: utf8(canonicalJson(genesis)), genesisPath: "$.genesis" };
}

/**
 * A scenario derives block timestamps from block_time_seconds (§2), so a value that cannot
 * give even block 1 a u64 timestamp is refused where it is written, not at some block's height.
 */
function scenarioGenesis(v: unknown, path: string): GenesisConfig {
  const config = parseGenesis(v, path);
  if (config.timestamp + config.block_time_seconds > U64_MAX) {
    throw new ScenarioError(at(path, "block_time_seconds"), `timestamp + block_time_seconds exceeds u64 (block 1 would have no timestamp)`);
  }
  return config;
}

export function parseGenesis(v: unknown, path: string): GenesisConfig {
  const g = obj(v, path);
  onlyKeys(g, GENESIS_KEYS, path);
  for (const k of ["chain_id", "timestamp", "block_time_seconds", "governance"]) {
    if (g[k] === undefined) throw new ScenarioError(at(path, k), "missing");
  }
  const params = new Map<string, bigint>();
  if (g["params"] !== undefined) {
    const p = obj(g["params"], at(path, "params"));
    for (const name of Object.keys(p).sort()) params.set(name, u64(p[name], at(at(path, "params"), name)));
  }
  const accounts: { address: Uint8Array; balance: bigint }[] = [];
  if (g["accounts"] !== undefined) {
    const a = obj(g["accounts"], at(path, "accounts"));
    for (const key of Object.keys(a)) {
      const ap = at(at(path, "accounts"), key);
      const entry = obj(a[key], ap);
      onlyKeys(entry, ["balance"], ap);
      accounts.push({ address: address(key, ap), balance: u64(entry["balance"] ?? "0", at(ap, "balance")) });
    }
    accounts.sort((x, y) => compareBytes(x.address, y.address));
    for (let i = 1; i < accounts.length; i++) {
      if (compareBytes(accounts[i - 1]!.address, accounts[i]!.address) === 0) {
        throw new ScenarioError(at(path, "accounts"), "an address is listed twice (hex case differs)");
      }
    }
  }
  return {
    chain_id: u64(g["chain_id"], at(path, "chain_id")),
    timestamp: timestamp(g["timestamp"], at(path, "timestamp")),
    block_time_seconds: u64(g["block_time_seconds"], at(path, "block_time_seconds")),
    governance: address(g["governance"], at(path, "governance")),
    params,
    accounts,
    cycle_price: g["cycle_price"] === undefined ? 0n : u64(g["cycle_price"], at(path, "cycle_price")),
    cell_price: g["cell_price"] === undefined ? 0n : u64(g["cell_price"], at(path, "cell_price")),
  };
}

/**
 * Canonical JSON (D-0069 "Canonical genesis serialization"): object keys sorted
 * by their UTF-8 bytes at every level, no insignificant whitespace, strings and numbers
 * exactly as JSON.stringify writes them, encoded as UTF-8.
 */
export function canonicalJson(v: Json): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (isObject(v)) {
    const keys = Object.keys(v).sort((a, b) => compareBytes(utf8(a), utf8(b)));
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k]!)}`).join(",")}}`;
  }
  return JSON.stringify(v);
}
