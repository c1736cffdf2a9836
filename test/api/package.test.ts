// The package as its users get it. `npm pack` runs with its prepack and postpack steps in a copy of
// the packable files (so the repository's own package.json is never rewritten under the other
// tests), and the tarball is installed into an empty ES module project (from the npm cache when it
// holds the dependencies). There `tsc` compiles docs/guides/use-the-library.md's examples, a program using every entry
// point and the type tests of buildTransaction (test/api/consumer/) under a demanding user's
// tsconfig — strict, noUncheckedIndexedAccess, exactOptionalPropertyTypes, module node16, the
// package's declarations checked too — and again under moduleResolution bundler; the compiled
// examples run. A CommonJS project loads the package by import(), as docs/guides/use-the-library.md says it must, and
// publint and @arethetypeswrong/cli lint the tarball.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { publint } from "publint";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiExamples, exampleProblems, ROOT, runScript } from "./examples.js";
import { requireFreshDist } from "../fuzz/dist.js";
import { startNode, type TestNode } from "../node/helpers.js";
import { spawnNode } from "../node/spawned-node.js";
import { DEFAULT_GENESIS_SOURCE } from "../../src/harness/genesis.js";
import { EXPLORER_MODULES } from "../../src/node/explorer.js";

const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");
const ATTW = join(ROOT, "node_modules", "@arethetypeswrong", "cli", "dist", "index.js");
const TYPES_NODE = JSON.parse(readFileSync(join(ROOT, "node_modules", "@types", "node", "package.json"), "utf8")).version as string;
/** SHA-256 of the Apache License 2.0 as the Apache Software Foundation serves it (LICENSE-2.0.txt). */
const APACHE_2_0_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30";
const ENTRY_POINTS = [".", "./codec", "./state", "./crypto", "./client"];

/** What `npm pack` reads from the repository (package.json `files`, what npm always packs, and dist/scripts, where its pack steps are). */
const PACKABLE = ["package.json", "README.md", "LICENSE", "gas-vectors/cip-39-gas-vectors-v1.json", "dist/src", "dist/state", "dist/instructions", "dist/scripts"];
/** Every child process of the test ends within this (npm reads from its cache; tsc, attw, node). */
const LIMIT_MS = 120_000;

/** The demanding user's compiler options: docs/guides/use-the-library.md's tsconfig.json plus two. */
const STRICT = { target: "ES2022", strict: true, noUncheckedIndexedAccess: true, exactOptionalPropertyTypes: true, types: ["node"] };

/** One `@ts-expect-error` over a line that compiles: tsc must report it, or the type tests could not fail. */
const CAN_FAIL = "// @ts-expect-error\nexport const compiles: bigint = 1n;\n";

interface Compiled {
  status: number | null;
  output: string;
}

/** `tsc -p <config>` in `cwd`, without blocking (the three projects compile at once). */
function tsc(cwd: string, config: string): Promise<Compiled> {
  const child = spawn(process.execPath, [TSC, "-p", config], { cwd, timeout: LIMIT_MS });
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr.on("data", (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) => child.on("close", (status) => resolve({ status, output })));
}

describe("the packed package (npm pack, installed into an empty project)", () => {
  const examples = apiExamples();
  let dir = "";
  let project = "";
  let commonJs = "";
  let tarball = "";
  let installOutput = "";
  const compiled: Record<"node16" | "bundler" | "commonjs", Compiled> = { node16: { status: null, output: "" }, bundler: { status: null, output: "" }, commonjs: { status: null, output: "" } };
  let node: TestNode | undefined;

  beforeAll(async () => {
    requireFreshDist();
    dir = mkdtempSync(join(tmpdir(), "cbqs-consumer-"));
    const stage = join(dir, "stage");
    for (const path of PACKABLE) cpSync(join(ROOT, path), join(stage, path), { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(stage, "node_modules"));
    const packed = spawnSync(NPM, ["pack", "--pack-destination", dir], { cwd: stage, encoding: "utf8", timeout: LIMIT_MS });
    if (packed.status !== 0) throw new Error(`npm pack failed: ${packed.stderr}`);
    tarball = join(dir, readdirSync(dir).find((f) => f.endsWith(".tgz"))!);

    project = join(dir, "project");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    const install = spawnSync(NPM, ["install", tarball, `@types/node@${TYPES_NODE}`, "--prefer-offline", "--no-audit", "--no-fund"], { cwd: project, encoding: "utf8", timeout: LIMIT_MS });
    if (install.status !== 0) throw new Error(`npm install failed: ${install.stderr}`);
    installOutput = install.stdout + install.stderr;

    const programs = ["program.ts", "transaction-types.ts", ...examples.map((e) => `example-${e.number}.ts`)];
    for (const e of examples) writeFileSync(join(project, `example-${e.number}.ts`), e.code);
    for (const f of ["program.ts", "transaction-types.ts"]) cpSync(join(ROOT, "test", "api", "consumer", f), join(project, f));
    writeFileSync(join(project, "check-can-fail.ts"), CAN_FAIL);
    writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ compilerOptions: { module: "node16", moduleResolution: "node16", ...STRICT, skipLibCheck: false, outDir: "out" }, files: programs }));
    writeFileSync(
      join(project, "tsconfig.bundler.json"),
      JSON.stringify({ compilerOptions: { module: "esnext", moduleResolution: "bundler", ...STRICT, skipLibCheck: true, noEmit: true }, files: [...programs, "check-can-fail.ts"] }),
    );

    // A CommonJS project below it (its own package.json; the installed package is found above).
    commonJs = join(project, "commonjs");
    mkdirSync(commonJs);
    writeFileSync(join(commonJs, "package.json"), JSON.stringify({ type: "commonjs" }));
    for (const e of examples.filter((x) => x.commonJs)) writeFileSync(join(commonJs, `example-${e.number}.ts`), e.code);
    writeFileSync(join(commonJs, "static-import.ts"), 'import { createChain } from "cbqs-emulator";\nconsole.log(createChain);\n');
    writeFileSync(join(commonJs, "tsconfig.json"), JSON.stringify({ compilerOptions: { module: "node16", moduleResolution: "node16", ...STRICT, skipLibCheck: true, outDir: "out" }, include: ["*.ts"] }));

    const started = startNode({ kind: "genesis", source: DEFAULT_GENESIS_SOURCE });
    [compiled.node16, compiled.bundler, compiled.commonjs] = await Promise.all([tsc(project, "tsconfig.json"), tsc(project, "tsconfig.bundler.json"), tsc(commonJs, "tsconfig.json")]);
    node = await started;
  }, 300_000);

  afterAll(async () => {
    await node?.close();
    if (dir !== "") rmSync(dir, { recursive: true, force: true });
  });

  const packedFile = (path: string) => execFileSync("tar", ["-xzOf", tarball, `package/${path}`], { encoding: "utf8" });

  it("ships the API, its README and LICENSE and nothing else: no tests, fixtures, scripts, sources or source maps", () => {
    const listing = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).split("\n").filter((l) => l !== "");
    expect(listing).toContain("package/dist/src/api/index.js");
    expect(listing).toContain("package/dist/src/api/index.d.ts");
    expect(listing).toContain("package/dist/src/cli.js");
    for (const f of ["package/LICENSE", "package/README.md", "package/package.json"]) expect(listing).toContain(f);
    for (const m of EXPLORER_MODULES) expect(listing).toContain(`package/dist/src/explorer/${m}.js`);
    expect(listing.filter((f) => /\/test\/|\/fixtures\/|\/scripts\/|\.map$|\.ts$|\.orig$/.test(f) && !f.endsWith(".d.ts"))).toEqual([]);
  });

  it("its package.json has no scripts (the packing folder's is put back byte for byte), and installing it warns about neither this package's scripts nor an engine", () => {
    const manifest = JSON.parse(packedFile("package.json")) as Record<string, unknown>;
    const repository = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as Record<string, unknown>;
    expect(manifest["scripts"]).toBeUndefined();
    expect(Object.keys(repository["scripts"] as object)).toContain("prepare");
    const { scripts: _scripts, ...rest } = repository;
    expect(manifest).toEqual(rest);
    expect(readFileSync(join(dir, "stage", "package.json"), "utf8")).toBe(readFileSync(join(ROOT, "package.json"), "utf8"));
    expect(existsSync(join(dir, "stage", "package.json.orig"))).toBe(false);
    expect(installOutput).toMatch(/added \d+ packages/);
    expect(installOutput.split("\n").filter((l) => /cbqs-emulator|prepare|EBADENGINE/.test(l))).toEqual([]);
  });

  it("carries the license its manifest names: the Apache License 2.0, whole, under the project's copyright line", () => {
    expect((JSON.parse(packedFile("package.json")) as { license: string }).license).toBe("Apache-2.0");
    const [first, ...text] = packedFile("LICENSE").split("\n");
    expect(first).toBe("Copyright 2026 cbqs-emulator authors");
    expect(createHash("sha256").update(text.join("\n")).digest("hex")).toBe(APACHE_2_0_SHA256);
  });

  it("docs/guides/use-the-library.md's examples, a program using every entry point and the transaction type tests compile under strict, noUncheckedIndexedAccess and exactOptionalPropertyTypes (module node16, the declarations checked too)", () => {
    expect(compiled.node16.output).toBe("");
    expect(compiled.node16.status).toBe(0);
  });

  it("they compile under moduleResolution bundler too, where the one error is the planted unused @ts-expect-error (so a mistyped transaction that compiled would fail the check)", () => {
    expect(compiled.bundler.output.trim()).toBe("check-can-fail.ts(1,1): error TS2578: Unused '@ts-expect-error' directive.");
  });

  it.each(examples.map((e) => [`${e.number}: ${e.section}`, e] as const))("docs/guides/use-the-library.md example %s, compiled by tsc, runs from the installed package", async (_, example) => {
    const run = await runScript(join(project, "out", `example-${example.number}.js`), project, node === undefined ? {} : { CBQS_NODE_URL: node.url });
    expect(exampleProblems(example, run)).toEqual([]);
  });

  it("every transaction the type tests accept builds (the types admit nothing the run time refuses)", async () => {
    const run = await runScript(join(project, "out", "transaction-types.js"), project);
    expect(run).toEqual({ status: 0, stdout: "built 19 transactions\n", stderr: "" });
  });

  it("from a CommonJS project (module node16) the import() example compiles and runs; a static import does not compile (TS1479) and require() fails with ERR_REQUIRE_ASYNC_MODULE, as docs/guides/use-the-library.md says", async () => {
    const loaders = examples.filter((e) => e.commonJs);
    expect(loaders.length).toBeGreaterThan(0);
    expect(compiled.commonjs.output.split("\n").filter((l) => / error TS/.test(l))).toEqual([expect.stringMatching(/^static-import\.ts\(1,\d+\): error TS1479: /)]);
    for (const example of loaders) {
      const file = join(commonJs, "out", `example-${example.number}.js`);
      expect(readFileSync(file, "utf8")).toMatch(/^"use strict";[\s\S]*await import\("cbqs-emulator"\)/);
      expect(exampleProblems(example, await runScript(file, commonJs))).toEqual([]);
    }
    const required = spawnSync(process.execPath, ["-e", 'require("cbqs-emulator")'], { cwd: commonJs, encoding: "utf8", timeout: LIMIT_MS });
    expect(required.status).not.toBe(0);
    expect(required.stderr).toContain("ERR_REQUIRE_ASYNC_MODULE");
  });

  it("the installed `cbqs node` serves the explorer page: /, its modules, and uPlot from the installed uplot package", async () => {
    const cli = join(project, "node_modules", "cbqs-emulator", "dist", "src", "cli.js");
    const { url, stop } = await spawnNode(cli, ["--quiet"], { cwd: project });
    try {
      for (const path of ["/", ...EXPLORER_MODULES.map((m) => `/explorer/${m}.js`), "/explorer/style.css", "/explorer/uPlot.iife.min.js", "/explorer/uPlot.min.css"]) {
        const r = await fetch(url + path);
        expect(r.status, path).toBe(200);
        expect((await r.arrayBuffer()).byteLength, path).toBeGreaterThan(100);
      }
    } finally {
      await stop();
    }
  });

  it("a deep import is refused by `exports`", () => {
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", 'await import("cbqs-emulator/dist/src/engine/chain.js")'], { cwd: project, encoding: "utf8", timeout: LIMIT_MS });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("ERR_PACKAGE_PATH_NOT_EXPORTED");
  });

  it("publint finds nothing to fix", async () => {
    const bytes = readFileSync(tarball);
    const { messages } = await publint({ pack: { tarball: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer }, level: "suggestion" });
    expect(messages).toEqual([]);
  });

  it("@arethetypeswrong/cli: every entry point's types resolve from ES modules (node16, bundler); from CommonJS by import() only, and node10 finds no subpath, as docs/guides/use-the-library.md says", () => {
    const r = spawnSync(process.execPath, [ATTW, tarball, "--format", "json"], { encoding: "utf8", timeout: LIMIT_MS });
    const report = JSON.parse(r.stdout) as { analysis: { entrypoints: Record<string, unknown>; problems: Array<{ kind: string; entrypoint: string; resolutionKind: string }> } };
    expect(Object.keys(report.analysis.entrypoints).sort()).toEqual([...ENTRY_POINTS, "./package.json"].sort());
    const problems = report.analysis.problems.map((p) => `${p.resolutionKind} ${p.entrypoint} ${p.kind}`).sort();
    const expected = [...ENTRY_POINTS.map((e) => `node16-cjs ${e} CJSResolvesToESM`), ...ENTRY_POINTS.filter((e) => e !== ".").map((e) => `node10 ${e} NoResolution`)];
    expect(problems).toEqual(expected.sort());
  });
});
