// The layers of the source tree (scripts/layers.ts, docs/reference/layers.md): a module imports only
// from its own layer or the layers below it, type-only imports included, so every folder can be read
// knowing only what is under it. A new folder must be given its place in scripts/layers.ts.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import ts from "typescript";
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

/**
 * The consensus layers: the executable specification (D-0169 "Fast paths: the spec path
 * and the seams"). They keep no state between calls outside the instances their caller creates,
 * import nothing of Node's, and run no threads, so each reads straight through as the CIP
 * section it implements. Fast paths live outside them (src/crypto, state/commitment, the
 * harness) or are instance state a chain is given (src/engine/fast-paths.ts).
 */
const CONSENSUS = ["instructions", "src/engine", "src/chain", "src/codec", "state/kv", "state/roots", "state/qmdb"];
const consensusFiles = files.filter((f) => CONSENSUS.some((dir) => f.startsWith(`${dir}/`)));

/** Constructors whose instances can be changed in place. */
const MUTABLE_CONTAINER = /^(Map|Set|WeakMap|WeakSet|Array|DataView|ArrayBuffer|SharedArrayBuffer|(Big)?(Ui|I)nt(8|16|32|64)(Clamped)?Array|Float(32|64)Array|Writer|Reader|CborWriter|CborReader)$/;
/** A declared type that TypeScript keeps from being written through. */
const READONLY_TYPE = /^(Readonly(Map|Set|Array)?<|readonly )/;
/** A zero-filled byte string constant (`ZERO_ADDRESS`, `EMPTY`): bytes have no read-only type; these are read, never written. */
const ZERO_BYTES = /^(ZERO[A-Z0-9_]*|EMPTY)$/;

/** Module-level state in `file`: every top-level `let`/`var`, and every top-level `const` holding a container that can change. */
function moduleState(file: string, text = readFileSync(join(ROOT, file), "utf8")): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    const isConst = (statement.declarationList.flags & ts.NodeFlags.Const) !== 0;
    for (const d of statement.declarationList.declarations) {
      const name = d.name.getText();
      const line = source.getLineAndCharacterOfPosition(d.getStart()).line + 1;
      const at = `${file}:${line} ${name}`;
      if (!isConst) {
        found.push(`${at}: a module-level let/var`);
        continue;
      }
      let value = d.initializer;
      if (value === undefined) continue;
      let asConst = false;
      while (ts.isAsExpression(value) || ts.isSatisfiesExpression(value) || ts.isParenthesizedExpression(value)) {
        if (ts.isAsExpression(value) && value.type.getText() === "const") asConst = true;
        value = value.expression;
      }
      if (asConst || (d.type !== undefined && READONLY_TYPE.test(d.type.getText()))) continue;
      if (ts.isNewExpression(value) && MUTABLE_CONTAINER.test(value.expression.getText())) {
        const zeroBytes = value.expression.getText() === "Uint8Array" && value.arguments?.length === 1 && ts.isNumericLiteral(value.arguments[0]!) && ZERO_BYTES.test(name);
        if (!zeroBytes) found.push(`${at}: a module-level ${value.expression.getText()} (instance state, or a read-only type)`);
      } else if (ts.isArrayLiteralExpression(value) || (ts.isCallExpression(value) && /^(Array|Uint8Array)\.(from|of)$/.test(value.expression.getText()))) {
        found.push(`${at}: a module-level array without a read-only type`);
      } else if (ts.isObjectLiteralExpression(value) && !/^(Codec|ValueCodec)\b/.test(d.type?.getText() ?? "")) {
        found.push(`${at}: a module-level object without Readonly<…> or as const`);
      }
    }
  }
  return found;
}

/** `node:` modules and threads: an import of Node's, a dynamic one, a require, a worker. */
const NODE_OR_THREADS = /from\s+"node:|import\("node:|\brequire\(|createRequire|worker_threads|new Worker\b|\bAtomics\.|SharedArrayBuffer|parentPort/;

/** The one consensus module that names the fast paths: a chain's are chosen by whoever creates it. */
const SEAM = "src/engine/fast-paths.ts";
const FAST_PATH = /ed25519VerifyStrict\b|ed25519-native|hash-wasm|commitment\/|signature-ring|harness\/|\/bounds-memo\.js/;

describe("consensus layers: no hidden state, no Node, no threads", () => {
  it("no module of the consensus layers keeps module-level mutable state", () => {
    expect(consensusFiles.length).toBeGreaterThan(50);
    expect(consensusFiles.flatMap((file) => moduleState(file))).toEqual([]);
  });

  it("no module of the consensus layers imports node: modules or runs worker code", () => {
    const found = consensusFiles.flatMap((file) =>
      readFileSync(join(ROOT, file), "utf8")
        .split("\n")
        .flatMap((line, i) => (NODE_OR_THREADS.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });

  it("among them only the seam src/engine/fast-paths.ts reaches a fast path (OpenSSL Ed25519, hash-wasm, the bounds memo, the worker commitment, speculative signatures)", () => {
    const found = consensusFiles
      .filter((file) => file !== SEAM && file !== "src/engine/bounds-memo.ts")
      .flatMap((file) =>
        readFileSync(join(ROOT, file), "utf8")
          .split("\n")
          .flatMap((line, i) => (FAST_PATH.test(line) && !/^import type /.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
      );
    expect(found).toEqual([]);
    expect(readFileSync(join(ROOT, SEAM), "utf8")).toMatch(FAST_PATH);
  });

  it("the checks see what they forbid (a sample module)", () => {
    const text = [
      'import { readFileSync } from "node:fs";',
      "let cache: number | undefined;",
      "const seen = new Map<string, number>();",
      "const scratch = new Uint8Array(64);",
      "const ORDER = [1, 2];",
      "const state = { n: 0 };",
      "const FIXED: ReadonlyMap<string, number> = new Map();",
      "const ZERO_ROOT = new Uint8Array(32);",
      'const NAMES = ["a"] as const;',
      'import { ed25519VerifyStrict } from "../crypto/ed25519.js";',
    ];
    expect(moduleState("sample.ts", text.join("\n")).map((f) => f.split(" ")[1])).toEqual(["cache:", "seen:", "scratch:", "ORDER:", "state:"]);
    expect(NODE_OR_THREADS.test(text[0]!)).toBe(true);
    expect(FAST_PATH.test(text[9]!)).toBe(true);
  });
});

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

  it("the library (src/api/) and the chain domain (src/chain-node/) import nothing of the HTTP layer (src/node/): its errors, routes and answers stay there", () => {
    const http = files.filter((f) => f.startsWith("src/api/") || f.startsWith("src/chain-node/")).flatMap((file) => imports(file).filter((t) => t.startsWith("src/node/")).map((t) => `${file} imports ${t}`));
    expect(http).toEqual([]);
    // The check would see one: the HTTP layer imports the domain.
    expect(imports("src/node/routes.ts").some((t) => t.startsWith("src/chain-node/"))).toBe(true);
  });

  it("the HTTP layer's errors (src/node/errors.ts) are imported only inside src/node/: no other module answers or catches an HTTP status", () => {
    const outside = files.filter((f) => !f.startsWith("src/node/")).flatMap((file) => imports(file).filter((t) => t === "src/node/errors.ts").map((t) => `${file} imports ${t}`));
    expect(outside).toEqual([]);
    // The check would see one: the route table imports them.
    expect(imports("src/node/routes.ts")).toContain("src/node/errors.ts");
  });

  it("the check sees imports (a module known to import from below)", () => {
    expect(imports("state/store/store.ts")).toContain("state/kv/keys.ts");
  });
});
