// The reference pages generated from the code are what the code says now: the error table
// (src/engine/errors.ts), the HTTP endpoint table (src/node/routes.ts routeTable()), the codec type
// index (src/codec/registry.ts) and the layer map (scripts/layers.ts). A stale page fails here; `npm run build && node dist/scripts/gen-reference.js`
// rewrites them.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CODEC_NAMES } from "../../src/codec/registry.js";
import { ERRORS } from "../../src/engine/errors.js";
import { routeTable } from "../../src/node/routes.js";
import { LAYERS } from "../../scripts/layers.js";
import { referencePages, withHttpTable } from "../../scripts/gen-reference.js";
import { errorTable } from "../engine/error-doc.js";

const ROOT = join(import.meta.dirname, "..", "..");
const read = (path: string): string => readFileSync(join(ROOT, path), "utf8");

describe("generated reference pages", () => {
  it.each(referencePages(read).map((p) => [p.path, p] as const))("%s is what scripts/gen-reference.ts generates from the code", (path, page) => {
    expect(read(path)).toBe(page.text);
  });

  it("the error table lists every engine error, by name, code and condition (CIP-39 §17)", () => {
    expect(errorTable().map((e) => e.name)).toEqual(Object.keys(ERRORS));
  });

  it("the HTTP reference's endpoint table has one row per route (method, template, answer kind, flags), between its markers, and the hand-written text around it is kept", () => {
    const page = read("docs/reference/http.md");
    const begin = page.indexOf("<!-- generated: endpoint table");
    const end = page.indexOf("<!-- end generated: endpoint table -->");
    expect([begin > 0, end > begin]).toEqual([true, true]);
    const table = page.slice(begin, end);
    for (const r of routeTable()) {
      const rows = table.split("\n").filter((line) => line.startsWith(`| ${r.method} | \`${r.template}\` |`));
      expect(rows, `${r.method} ${r.template}`).toHaveLength(1);
      expect(rows[0]!.split(" | ")[3], r.name).toBe(r.answer);
      if (r.write) expect(rows[0], r.name).toMatch(/\| write \|$/);
      if (r.seeds) expect(rows[0], r.name).toMatch(/\| dev seeds \|$/);
      if (r.optional) expect(rows[0], r.name).toMatch(/\| subscriptions \|$/);
      if (r.proof !== false) expect(rows[0], r.name).toContain("| proof-limited");
    }
    const hand = "intro text\n<!-- generated: endpoint table (scripts/gen-reference.ts, from src/node/routes.ts) -->\nstale\n<!-- end generated: endpoint table -->\nprose after\n";
    const regenerated = withHttpTable(hand);
    expect([regenerated.startsWith("intro text\n"), regenerated.endsWith("<!-- end generated: endpoint table -->\nprose after\n"), regenerated.includes("stale")]).toEqual([true, true, false]);
    expect(() => withHttpTable("no markers")).toThrow(/markers/);
  });

  it("the codec type index names every registered type once; the layer map every layer", () => {
    const index = read("docs/reference/codec-types.md");
    for (const name of CODEC_NAMES) expect(index.split(`| \`${name}\` |`), name).toHaveLength(2);
    const map = read("docs/reference/layers.md");
    for (const layer of LAYERS) for (const unit of layer.units) expect(map, unit).toContain(`\`${unit}\``);
  });
});
