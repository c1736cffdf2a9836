// The reference pages generated from the code are what the code says now: the error table
// (src/engine/errors.ts), the codec type index (src/codec/registry.ts) and the layer map
// (scripts/layers.ts). A stale page fails here; `npm run build && node dist/scripts/gen-reference.js`
// rewrites them.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CODEC_NAMES } from "../../src/codec/registry.js";
import { ERRORS } from "../../src/engine/errors.js";
import { LAYERS } from "../../scripts/layers.js";
import { referencePages } from "../../scripts/gen-reference.js";
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

  it("the codec type index names every registered type once; the layer map every layer", () => {
    const index = read("docs/reference/codec-types.md");
    for (const name of CODEC_NAMES) expect(index.split(`| \`${name}\` |`), name).toHaveLength(2);
    const map = read("docs/reference/layers.md");
    for (const layer of LAYERS) for (const unit of layer.units) expect(map, unit).toContain(`\`${unit}\``);
  });
});
