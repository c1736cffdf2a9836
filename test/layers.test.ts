// The layers of the source tree (scripts/layers.ts, docs/reference/layers.md): a module imports only
// from its own layer or the layers below it, type-only imports included, so every folder can be read
// knowing only what is under it. A new folder must be given its place in scripts/layers.ts.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { LAYERS } from "../scripts/layers.js";

const ROOT = join(import.meta.dirname, "..");

const layerOf = new Map(LAYERS.flatMap((layer, rank) => layer.units.map((n) => [n, rank] as const)));

/** The file itself for a file at src/'s top, else its folder. */
const unitOf = (file: string) => (dirname(file) === "src" ? file : dirname(file));

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return sources(path);
    return path.endsWith(".ts") && !path.endsWith(".d.ts") ? [path] : [];
  });
}

const IMPORT = /^(?:import|export)\s[^;]*?from\s+"(\.{1,2}\/[^"]+)\.js";/gms;

function imports(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  return [...text.matchAll(IMPORT)].map((m) => relative(ROOT, normalize(join(ROOT, dirname(file), m[1]!))) + ".ts");
}

const files = ["src", "state", "instructions"].flatMap(sources);

describe("layers", () => {
  it("every folder of src/, state/ and instructions/ has its layer", () => {
    const unranked = [...new Set(files.map(unitOf))].filter((u) => !layerOf.has(u));
    expect(unranked).toEqual([]);
  });

  it("no module imports from a layer above its own", () => {
    const upward = files.flatMap((file) =>
      imports(file)
        .filter((target) => (layerOf.get(unitOf(target)) ?? -1) > layerOf.get(unitOf(file))!)
        .map((target) => `${file} imports ${target}`),
    );
    expect(upward).toEqual([]);
  });

  it("the explorer page imports nothing outside src/explorer/ (a type-only import of uplot is a package, not a module of ours)", () => {
    const outside = files.filter((f) => f.startsWith("src/explorer/")).flatMap((file) => imports(file).filter((t) => !t.startsWith("src/explorer/")).map((t) => `${file} imports ${t}`));
    expect(outside).toEqual([]);
    expect(imports("src/explorer/main.ts")).toContain("src/explorer/views.ts");
  });

  it("the check sees imports (a module known to import from below)", () => {
    expect(imports("state/store/store.ts")).toContain("state/kv/keys.ts");
  });
});
