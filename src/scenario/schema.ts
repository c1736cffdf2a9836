// The JSON Schema (draft 2020-12) of cbqs-scenario/v1 (docs/reference/formats/scenario.md), generated from
// the codec declarations of src/codec/schema.ts, so every instruction's arguments are described
// by the same declaration that encodes and decodes them and the schema cannot drift from them.
// fixtures/schema/cbqs-scenario-v1.schema.json is this output (scripts/gen-scenario-schema.ts);
// test/scenario/schema.test.ts regenerates it and checks every scenario of the repository and
// every documented example against it. The runner (src/scenario/parse.ts) stays the authority: a
// document can pass the schema and still be refused (a timestamp going backwards, an unknown
// parameter name, an impossible expectation).
import { MAX_BLOCK_TRANSACTIONS, MAX_PARAM_NAME_BYTES, MAX_SET_PARAMS_ENTRIES, MAX_SYSTEM_PAYLOAD_BYTES } from "../bounds.js";
import { integerSchema, type JsonSchema, type SchemaDefs } from "../codec/core.js";
import * as S from "../codec/schema.js";
import { SCENARIO_FORMAT } from "./parse.js";
import { LIVE_SCALARS } from "../params.js";

const U64_MAX = (1n << 64n) - 1n;
const ref = (name: string): JsonSchema => ({ $ref: `#/$defs/${name}` });
const hex = (bytes: number): JsonSchema => ({ type: "string", pattern: `^0x[0-9a-fA-F]{${2 * bytes}}$` });
const u64 = integerSchema(U64_MAX, "u64");
const ADDRESS_KEY = "^0x[0-9a-fA-F]{40}$";

function object(properties: Record<string, JsonSchema>, required: string[] = [], description?: string): JsonSchema {
  return { type: "object", properties, required, additionalProperties: false, ...(description === undefined ? {} : { description }) };
}

/**
 * A signed object as a scenario may write it (scenario-format §2): `context`, `signing_key_id` and
 * `signature` may be left out when the tool fills them, and `signer_seed` signs it.
 */
function signedInput(defs: SchemaDefs, name: string, fillable: string[]): JsonSchema {
  const base = defs[name] as { properties: Record<string, JsonSchema>; required: string[] };
  return {
    ...base,
    properties: { ...base.properties, signer_seed: { ...hex(32), description: "RFC 8032 seed: the tool signs the §14 signing digest (and derives signing_key_id)" } },
    required: base.required.filter((f) => !fillable.includes(f)),
  };
}

/** The schema of a cbqs-scenario/v1 document. */
export function scenarioSchema(): JsonSchema {
  const defs: SchemaDefs = {};
  const instruction = S.CbqsInstructionV1.jsonSchema(defs);
  // Signed objects: their scenario forms replace the codec's wherever they appear in arguments.
  defs["PriceQuoteV1Input"] = signedInput(defs, "PriceQuoteV1", ["context", "signing_key_id", "signature"]);
  defs["KeyBatchReceiptV1Input"] = signedInput(defs, "KeyBatchReceiptV1", ["context", "signature"]);
  const served = defs["FinalizedViewV1"] as { properties: Record<string, JsonSchema>; required: string[] };
  defs["FinalizedViewV1Input"] = { ...served, required: served.required.filter((f) => f === "height") };
  (defs["KeyBatchReceiptV1Input"] as { properties: Record<string, JsonSchema> }).properties["served_at"] = ref("FinalizedViewV1Input");
  for (const args of ["CreateStreamArgsV1", "UpdateStreamArgsV1"]) {
    const p = (defs[args] as { properties: Record<string, JsonSchema> }).properties;
    const optional = Array.isArray((p["price_quote"] as { anyOf?: unknown }).anyOf);
    p["price_quote"] = optional ? { anyOf: [ref("PriceQuoteV1Input"), { type: "null" }], description: "optional: null or absent means none" } : ref("PriceQuoteV1Input");
  }
  (defs["ActivateKeyGenerationArgsV1"] as { properties: Record<string, JsonSchema> }).properties["receipt"] = ref("KeyBatchReceiptV1Input");

  defs["StreamReference"] = {
    oneOf: [
      object({ owner: hex(20), owner_nonce: u64 }, ["owner", "owner_nonce"], "the main stream id derived by CIP-39 §4.1"),
      object({ key_stream_of: ref("StreamReference") }, ["key_stream_of"], "the key stream id of a stream (§4.1)"),
    ],
  };
  defs["Genesis"] = object(
    {
      chain_id: u64,
      timestamp: { anyOf: [{ type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$" }, u64], description: 'RFC 3339 UTC ("2026-01-01T00:00:00Z") or integer seconds' },
      block_time_seconds: u64,
      governance: hex(20),
      params: { type: "object", additionalProperties: u64, description: "§18 parameter overrides by name" },
      accounts: { type: "object", propertyNames: { pattern: ADDRESS_KEY }, additionalProperties: object({ balance: u64 }) },
      cycle_price: u64,
      cell_price: u64,
    },
    ["chain_id", "timestamp", "block_time_seconds", "governance"],
  );
  defs["Gov"] = {
    oneOf: [
      object({ SetParam: object({ name: { type: "string", maxLength: MAX_PARAM_NAME_BYTES }, value: u64 }, ["name", "value"]) }, ["SetParam"]),
      object({ SetParams: { type: "object", additionalProperties: u64, maxProperties: MAX_SET_PARAMS_ENTRIES, description: "one atomic proposal, written order kept" } }, ["SetParams"]),
      object({ Pause: object({ actor: hex(20), blocks: u64 }, ["actor", "blocks"]) }, ["Pause"]),
      object({ ExtendPause: object({ actor: hex(20), blocks: u64 }, ["actor", "blocks"]) }, ["ExtendPause"]),
      object({ Unpause: object({ actor: hex(20) }, ["actor"]) }, ["Unpause"]),
    ],
  };
  defs["TxExpect"] = object({
    status: { enum: ["ok", "rejected"] },
    error: { type: "string", description: "an error name of docs/reference/errors.md" },
    events: { type: "array", items: { type: "string" }, description: "the exact ordered event topics" },
  });
  const kinds = ["cbqs", "gov", "transfer", "raw"];
  const tx = object(
    {
      from: hex(20),
      cbqs: instruction,
      gov: ref("Gov"),
      transfer: object({ to: hex(20), amount: u64 }, ["to", "amount"]),
      raw: object({ opcode: integerSchema(255n, "u8"), payload: { type: "string", pattern: "^0x([0-9a-fA-F]{2})*$", maxLength: 2 + 2 * MAX_SYSTEM_PAYLOAD_BYTES } }, ["opcode", "payload"]),
      expect: ref("TxExpect"),
    },
    ["from"],
  );
  defs["Tx"] = { ...tx, oneOf: kinds.map((k) => ({ required: [k] })), description: "exactly one of cbqs, gov, transfer, raw" };
  // The records a block's expect_state matches partially (described here for their field names).
  S.StreamRecordV1.jsonSchema(defs);
  S.ProviderRecordV1.jsonSchema(defs);
  const partial = (name: string): JsonSchema => ({
    anyOf: [{ type: "object", propertyNames: { enum: Object.keys((defs[name] as { properties: object }).properties) } }, { type: "null" }],
    description: `a partial ${name}: the listed fields must equal; null asserts that there is no such record`,
  });
  defs["StateExpect"] = object({
    streams: { type: "object", additionalProperties: partial("StreamRecordV1"), description: 'keys: "0x<id>", "owner:0x<addr>/nonce:<n>" or "key_stream_of:<key>"' },
    providers: { type: "object", propertyNames: { pattern: ADDRESS_KEY }, additionalProperties: partial("ProviderRecordV1") },
    accounts: { type: "object", propertyNames: { pattern: ADDRESS_KEY }, additionalProperties: { anyOf: [object({ balance: u64, nonce: u64 }), { type: "null" }] } },
    effective_rent_height: u64,
    pause: { type: "object", properties: { completed_pause_blocks: u64, active: {} }, additionalProperties: false },
    params: { type: "object", propertyNames: { enum: [...LIVE_SCALARS] }, additionalProperties: u64, description: "live parameters (CIP-39 §18.1) by name" },
  });
  defs["Block"] = object(
    {
      height: u64,
      timestamp: { anyOf: [{ type: "string", pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}Z$" }, u64] },
      txs: { type: "array", items: ref("Tx"), maxItems: MAX_BLOCK_TRANSACTIONS },
      expect_state: ref("StateExpect"),
    },
    ["height"],
  );
  const sorted = Object.fromEntries(Object.keys(defs).sort().map((k) => [k, defs[k]!]));
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: "https://cbqs-emulator.invalid/schema/cbqs-scenario-v1.schema.json",
    title: SCENARIO_FORMAT,
    description:
      "A test chain for cbqs-emulator (docs/scenario-format.md), generated from the codec declarations (src/codec/schema.ts). " +
      "Structural: the runner additionally checks strictly increasing heights, timestamps, parameter names and bounds, and the genesis.",
    type: "object",
    properties: {
      format: { const: SCENARIO_FORMAT },
      name: { type: "string" },
      description: { type: "string" },
      genesis: ref("Genesis"),
      genesis_source: { type: "string", description: "the exact genesis config text (CIP-39 §3 identity bytes); the configuration is parsed from it" },
      blocks: { type: "array", items: ref("Block") },
    },
    required: ["format", "blocks"],
    additionalProperties: false,
    anyOf: [{ required: ["genesis"] }, { required: ["genesis_source"] }],
    $defs: sorted,
  };
}

/** The schema file's text: two-space JSON, trailing newline. */
export const scenarioSchemaText = (): string => JSON.stringify(scenarioSchema(), null, 2) + "\n";
