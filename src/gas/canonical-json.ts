// Canonical JSON for the gas-vector artifact: the bytes must be reproducible, so there is exactly
// one rendering of a value. Keys keep the order the builder gave them (every object here is built
// field by field in a fixed order); integers are JSON numbers only when they are small counts and
// decimal strings otherwise (u64/u128 never pass through a float); two-space indentation, arrays
// of scalars on one line, "\n" line endings and a trailing newline.
export type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

function scalar(value: Json): string {
  if (typeof value === "number" && !Number.isSafeInteger(value)) throw new Error(`canonical JSON: ${value} is not a safe integer`);
  return JSON.stringify(value);
}

function render(value: Json, indent: string): string {
  if (value === null || typeof value !== "object") return scalar(value);
  const inner = indent + "  ";
  if (Array.isArray(value)) {
    if (value.length === 0) return "[]";
    if (value.every((v) => v === null || typeof v !== "object")) return `[${value.map(scalar).join(", ")}]`;
    return `[\n${value.map((v) => inner + render(v, inner)).join(",\n")}\n${indent}]`;
  }
  const keys = Object.keys(value);
  if (keys.length === 0) return "{}";
  return `{\n${keys.map((k) => `${inner}${JSON.stringify(k)}: ${render(value[k]!, inner)}`).join(",\n")}\n${indent}}`;
}

export function canonicalJson(value: Json): string {
  return render(value, "") + "\n";
}
