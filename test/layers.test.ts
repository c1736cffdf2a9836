// The layers of the source tree (README "Layout"): a module imports only from its own layer or
// the layers below it, type-only imports included, so every folder can be read knowing only what
// is under it. A new folder must be given its place here.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..");

/** Lowest first. Folders on one line form one layer (the engine dispatches to its instruction handlers, which use its context). */
const LAYERS: readonly (readonly string[])[] = [
  ["src/bytes.ts", "src/bounds.ts", "src/lines.ts", "src/steps.ts", "src/params.ts", "src/format.ts", "src/io-error.ts"],
  ["src/output-file.ts", "src/json"],
  ["src/crypto"],
  ["state/kv"],
  ["state/roots"],
  ["state/qmdb"],
  ["state/commitment"],
  ["state/store"],
  ["state/chain-db"],
  ["state/lmdb"],
  ["src/admission", "src/codec"],
  ["src/engine", "instructions"],
  ["src/chain"],
  ["src/gas", "src/scenario"],
  ["src/harness"],
  ["src/target"],
  ["src/fuzz", "src/report"],
  ["src/consume", "src/jobs"],
  ["src/client"],
  ["src/node"],
  ["src/broker-kit"],
  ["src/cli", "src/cli.ts", "src/api"],
  // The explorer page runs in a browser, compiled on its own (tsconfig.explorer.json): it imports
  // only its own modules (checked below); the node serves its files without importing them.
  ["src/explorer"],
];

const layerOf = new Map(LAYERS.flatMap((names, rank) => names.map((n) => [n, rank] as const)));

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
