// A small JSON Schema (draft 2020-12) validator for the keywords our generated schemas use, so
// the tests need no validator package. Unknown keywords fail loudly: a schema using one this
// validator does not understand must not pass silently. Iterative over an explicit stack of
// (instance, schema) pairs except for oneOf/anyOf, whose branches are validated separately.
type Schema = { [k: string]: unknown } | boolean;

const ANNOTATIONS = new Set(["$schema", "$id", "title", "description", "$defs"]);
const KEYWORDS = new Set([
  "$ref",
  "type",
  "enum",
  "const",
  "pattern",
  "minimum",
  "maximum",
  "minLength",
  "maxLength",
  "properties",
  "required",
  "additionalProperties",
  "propertyNames",
  "items",
  "maxItems",
  "maxProperties",
  "oneOf",
  "anyOf",
]);

const typeOf = (v: unknown): string =>
  v === null ? "null" : Array.isArray(v) ? "array" : typeof v === "number" ? (Number.isInteger(v) ? "integer" : "number") : typeof v;

const equal = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** The first violation as "path: reason", or null when `instance` is valid. */
export function validate(root: { $defs?: Record<string, Schema> }, instance: unknown, schema: Schema = root as Schema, path = "$"): string | null {
  const stack: Array<[unknown, Schema, string]> = [[instance, schema, path]];
  while (stack.length > 0) {
    const [v, s, p] = stack.pop()!;
    if (s === true) continue;
    if (s === false) return `${p}: no value is allowed here`;
    for (const k of Object.keys(s)) if (!KEYWORDS.has(k) && !ANNOTATIONS.has(k)) throw new Error(`validator: unsupported keyword ${k}`);
    if (typeof s["$ref"] === "string") {
      const name = (s["$ref"] as string).replace("#/$defs/", "");
      const target = root.$defs?.[name];
      if (target === undefined) throw new Error(`validator: unresolved $ref ${s["$ref"] as string}`);
      stack.push([v, target, p]);
    }
    const t = typeOf(v);
    if (s["type"] !== undefined) {
      const types = Array.isArray(s["type"]) ? (s["type"] as string[]) : [s["type"] as string];
      if (!types.some((x) => x === t || (x === "number" && t === "integer"))) return `${p}: expected ${types.join(" or ")}, got ${t}`;
    }
    if (s["enum"] !== undefined && !(s["enum"] as unknown[]).some((e) => equal(e, v))) return `${p}: not one of ${JSON.stringify(s["enum"])}`;
    if (s["const"] !== undefined && !equal(s["const"], v)) return `${p}: expected ${JSON.stringify(s["const"])}`;
    if (typeof v === "string") {
      if (s["pattern"] !== undefined && !new RegExp(s["pattern"] as string, "u").test(v)) return `${p}: does not match ${s["pattern"] as string}`;
      if (s["minLength"] !== undefined && [...v].length < (s["minLength"] as number)) return `${p}: shorter than ${s["minLength"] as number}`;
      if (s["maxLength"] !== undefined && [...v].length > (s["maxLength"] as number)) return `${p}: longer than ${s["maxLength"] as number}`;
    }
    if (typeof v === "number") {
      if (s["minimum"] !== undefined && v < (s["minimum"] as number)) return `${p}: below ${s["minimum"] as number}`;
      if (s["maximum"] !== undefined && v > (s["maximum"] as number)) return `${p}: above ${s["maximum"] as number}`;
    }
    if (t === "object") {
      const o = v as Record<string, unknown>;
      const props = (s["properties"] ?? {}) as Record<string, Schema>;
      for (const r of (s["required"] ?? []) as string[]) if (!Object.hasOwn(o, r)) return `${p}.${r}: missing`;
      if (s["maxProperties"] !== undefined && Object.keys(o).length > (s["maxProperties"] as number)) return `${p}: more than ${s["maxProperties"] as number} properties`;
      for (const [k, x] of Object.entries(o)) {
        if (s["propertyNames"] !== undefined) {
          const bad = validate(root, k, s["propertyNames"] as Schema, `${p}[${JSON.stringify(k)}] (name)`);
          if (bad !== null) return bad;
        }
        if (Object.hasOwn(props, k)) stack.push([x, props[k]!, `${p}.${k}`]);
        else if (s["additionalProperties"] === false) return `${p}.${k}: unknown property`;
        else if (s["additionalProperties"] !== undefined) stack.push([x, s["additionalProperties"] as Schema, `${p}.${k}`]);
      }
    }
    if (t === "array") {
      const a = v as unknown[];
      if (s["maxItems"] !== undefined && a.length > (s["maxItems"] as number)) return `${p}: more than ${s["maxItems"] as number} items`;
      if (s["items"] !== undefined) a.forEach((x, i) => stack.push([x, s["items"] as Schema, `${p}[${i}]`]));
    }
    if (s["oneOf"] !== undefined) {
      const ok = (s["oneOf"] as Schema[]).filter((b) => validate(root, v, b, p) === null).length;
      if (ok !== 1) return `${p}: matches ${ok} of the oneOf branches, not exactly 1`;
    }
    if (s["anyOf"] !== undefined && !(s["anyOf"] as Schema[]).some((b) => validate(root, v, b, p) === null)) {
      const reasons = (s["anyOf"] as Schema[]).map((b) => validate(root, v, b, p));
      return `${p}: matches none of the anyOf branches (${reasons.join("; ")})`;
    }
  }
  return null;
}
