// Field names of a partial record in `expect_state` (scenario-format §3), checked against the
// codec's JSON Schema of the record at every depth: a misspelled member (`retention_mss` inside
// `config`) is unusable input, never an expectation that fails with "actual (absent)". Only names
// are checked here; values are the expectation's business.
import type { Codec, SchemaDefs } from "../codec/core.js";
import { at, ScenarioError } from "./json.js";

type Node = { $ref?: string; anyOf?: Node[]; oneOf?: Node[]; properties?: Record<string, Node>; additionalProperties?: Node | boolean; items?: Node };

interface Unknown {
  path: string;
  allowed: string[];
}

/** Throws a ScenarioError at the first member of `value` that `codec`'s records do not have. */
export function checkFieldNames(value: unknown, codec: Codec<unknown>, path: string): void {
  const defs: SchemaDefs = {};
  const schema = codec.jsonSchema(defs);
  const found = unknownField(value, schema as Node, defs as Record<string, Node>, path);
  if (found !== null) throw new ScenarioError(found.path, `unknown field (expected one of: ${found.allowed.join(", ")})`);
}

function unknownField(value: unknown, schema: Node, defs: Record<string, Node>, path: string): Unknown | null {
  while (schema.$ref !== undefined) schema = defs[schema.$ref.replace("#/$defs/", "")] ?? {};
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches !== undefined) {
    // The value fits one branch: no unknown field in some branch means none. Otherwise report the
    // branch that matched deepest (an enum variant whose name was right, its inner field wrong).
    let best: Unknown | null = null;
    for (const b of branches) {
      const r = unknownField(value, b, defs, path);
      if (r === null) return null;
      if (best === null || r.path.length > best.path.length) best = r;
    }
    return best;
  }
  if (Array.isArray(value)) {
    if (schema.items === undefined) return null;
    for (let i = 0; i < value.length; i++) {
      const r = unknownField(value[i], schema.items, defs, `${path}[${i}]`);
      if (r !== null) return r;
    }
    return null;
  }
  if (typeof value !== "object" || value === null || schema.properties === undefined) return null;
  for (const [k, v] of Object.entries(value)) {
    const member = schema.properties[k];
    if (member !== undefined) {
      const r = unknownField(v, member, defs, at(path, k));
      if (r !== null) return r;
    } else if (schema.additionalProperties === false) {
      return { path: at(path, k), allowed: Object.keys(schema.properties) };
    }
  }
  return null;
}
