// Genesis from the fixture's source bytes alone: the same bytes define chain_instance_id
// (CIP-39 §3) and are parsed into the config exactly as the runner parses `genesis_source`
// (src/scenario/genesis.ts). A canonical-serialization genesis is itself JSON text, so both
// scenario forms reduce to "source bytes → JSON → parseGenesis". The bytes are read by the one
// strict JSON reader (src/json/parse.ts): strict UTF-8, no byte-order mark, no duplicate key —
// two readers of the same bytes cannot run different chains (docs/decisions.md "Genesis source: one JSON").
import type { GenesisConfig } from "../chain/types.js";
import { JsonError, parseJson } from "../json/parse.js";
import { parseGenesis } from "../scenario/genesis.js";

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
