// Genesis from the fixture's source bytes alone: the same bytes define chain_instance_id
// (CIP-39 §3) and are parsed into the config exactly as the runner parses `genesis_source`
// (src/scenario/genesis.ts). A canonical-serialization genesis is itself JSON text, so both
// scenario forms reduce to "source bytes → JSON → parseGenesis". The bytes are read by the one
// strict JSON reader (src/json/parse.ts): strict UTF-8, no byte-order mark, no duplicate key —
// two readers of the same bytes cannot run different chains (D-0014 "Genesis source: one JSON").
import type { GenesisConfig } from "../engine/inputs.js";
import { JsonError, parseJson } from "../json/parse.js";
import { utf8 } from "../bytes.js";
import { canonicalJson, parseGenesis } from "../scenario/genesis.js";
import type { JsonObject } from "../scenario/json.js";

/** `path` names the source in refusals: inside a fixture or store, `genesis_source`; a genesis file is `$` itself. */
export function genesisFromSource(source: Uint8Array, path = "genesis_source"): GenesisConfig {
  let json: unknown;
  try {
    json = parseJson(source);
  } catch (err) {
    if (err instanceof JsonError) throw new Error(`genesis source: ${err.message}`);
    throw err;
  }
  // ScenarioError messages carry the path inside the source ("genesis_source.chain_id: …").
  return parseGenesis(json, path);
}

/**
 * CIP-39 §3: "A node started without a genesis file uses the canonical serialization of its default
 * genesis config." This is that config — the chain of the docs' examples (chain_id 7, governance
 * 0x…aa, three funded accounts 0x11…11, 0x22…22, 0x33…33, no fees) — and these are its bytes:
 * exactly the identity bytes of a scenario whose `genesis` is this object (canonicalJson,
 * D-0069 "Canonical genesis serialization"), so a scenario can reproduce the chain.
 */
export const DEFAULT_GENESIS: JsonObject = {
  chain_id: "7",
  timestamp: "2026-01-01T00:00:00Z",
  block_time_seconds: "1",
  governance: "0x00000000000000000000000000000000000000aa",
  accounts: {
    "0x1111111111111111111111111111111111111111": { balance: "1000000000000000000" },
    "0x2222222222222222222222222222222222222222": { balance: "1000000000000000000" },
    "0x3333333333333333333333333333333333333333": { balance: "1000000000000000000" },
  },
};

export const DEFAULT_GENESIS_SOURCE: Uint8Array = utf8(canonicalJson(DEFAULT_GENESIS));
