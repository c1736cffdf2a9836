// Reads docs/reference/errors.md: the error table and the per-instruction check orders, so tests can hold
// the engine and the document to each other (test/engine/errors-doc.test.ts, check-order.test.ts).
import { readFileSync } from "node:fs";

export const ERRORS_DOC = readFileSync(new URL("../../docs/reference/errors.md", import.meta.url), "utf8");

/** The rows of the error table (before the check orders): `| code | \`Name\` | condition |`. */
export function errorTable(doc = ERRORS_DOC): Array<{ code: number; name: string; condition: string }> {
  return [...doc.slice(0, doc.indexOf("## Check order per instruction")).matchAll(/^\| (\d+) \| `(\w+)` \| (.*) \|$/gm)].map((m) => ({ code: Number(m[1]), name: m[2]!, condition: m[3]! }));
}

export interface Step {
  step: number;
  error: string;
  check: string;
}

/** The check-order sections: `### <Heading>` followed by `| step | \`Error\` | check |` rows (— for a step that raises nothing itself). */
export function checkOrders(doc = ERRORS_DOC): Map<string, Step[]> {
  const orders = new Map<string, Step[]>();
  const part = doc.slice(doc.indexOf("## Check order per instruction"));
  for (const section of part.split(/^### /m).slice(1)) {
    const heading = section.slice(0, section.indexOf("\n")).replace(/ \(.*\)$/, "");
    const steps = [...section.matchAll(/^\| (\d+) \| (?:`(\w+)`|—) \| (.*) \|$/gm)].map((m) => ({ step: Number(m[1]), error: m[2] ?? "", check: m[3]! }));
    orders.set(heading, steps);
  }
  return orders;
}

/** The documented step of `instruction` that raises `error` and whose check text contains `about`. */
export function stepOf(instruction: string, error: string, about = ""): number {
  const steps = checkOrders().get(instruction);
  if (steps === undefined) throw new Error(`docs/reference/errors.md has no check order for ${instruction}`);
  const hit = steps.find((s) => s.error === error && s.check.includes(about));
  if (hit === undefined) throw new Error(`docs/reference/errors.md ${instruction}: no step raising ${error} about "${about}"`);
  return hit.step;
}
