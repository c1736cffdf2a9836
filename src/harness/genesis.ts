// Genesis from the fixture's source bytes alone: the same bytes define chain_instance_id
// (CIP-39 §3) and are parsed into the config exactly as the runner parses `genesis_source`
// (src/scenario/genesis.ts). A canonical-serialization genesis is itself JSON text, so both
// scenario forms reduce to "source bytes → JSON → parseGenesis".
import type { GenesisConfig } from "../chain/types.js";
import { parseGenesis } from "../scenario/genesis.js";

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

export function genesisFromSource(source: Uint8Array): GenesisConfig {
  let text: string;
  try {
    text = STRICT_UTF8.decode(source);
  } catch {
    throw new Error("genesis source is not valid UTF-8");
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`genesis source is not valid JSON: ${(err as Error).message}`);
  }
  // ScenarioError messages carry the path inside the source ("genesis_source.chain_id: …").
  return parseGenesis(json, "genesis_source");
}
