// The package as its users get it: `npm pack`, the tarball installed into an empty project (from
// the npm cache when it holds the dependencies), docs/api.md's examples run there as ES modules,
// a strict TypeScript program type-checked against the packed declarations under both module
// resolutions users have (node16 and bundler), and the package linted by publint and
// @arethetypeswrong/cli (ESM only: the CommonJS and node10 resolutions do not apply).
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { publint } from "publint";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { apiExamples, exampleProblems, ROOT, runExample } from "./examples.js";
import { requireFreshDist } from "../fuzz/dist.js";
import { startNode, type TestNode } from "../node/helpers.js";
import { spawnNode } from "../node/spawned-node.js";
import { DEFAULT_GENESIS_SOURCE } from "../../src/harness/genesis.js";
import { EXPLORER_MODULES } from "../../src/node/explorer.js";

const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
const TSC = join(ROOT, "node_modules", "typescript", "bin", "tsc");
const TYPES_NODE = JSON.parse(readFileSync(join(ROOT, "node_modules", "@types", "node", "package.json"), "utf8")).version as string;

const CONSUMER_TS = `import { createChain, TransactionRefused, type MinedBlock, type BlockRecord } from "cbqs-emulator";
import { accountKey, verifyStateProof, type StateProof, type ExclusionProof } from "cbqs-emulator/state";
import { codecs, encode, decode } from "cbqs-emulator/codec";
import { keccak256, ed25519VerifyStrict } from "cbqs-emulator/crypto";
import { createClient, ClientError, type Client } from "cbqs-emulator/client";

const chain = createChain();
const mined: MinedBlock = chain.mine();
const head: BlockRecord = chain.head();
const height: bigint = mined.block.height + head.height;
const proof: StateProof | ExclusionProof = chain.prove(accountKey(new Uint8Array(20)));
const valid: boolean = verifyStateProof(proof, head.state_root).valid;
const bytes: Uint8Array = encode(codecs.ProviderEndpointV1, { transport: "WebSocketTls", uri: "wss://cbqs.example/x" });
const uri: string = decode(codecs.ProviderEndpointV1, bytes).uri;
const digest: Uint8Array = keccak256(bytes);
const verdict: boolean = ed25519VerifyStrict(new Uint8Array(32), digest, new Uint8Array(64));
try {
  chain.send(new Uint8Array(1));
} catch (err) {
  if (err instanceof TransactionRefused) console.log(err.code);
}
const client: Client = createClient("http://127.0.0.1:9");
console.log(height, valid, uri, verdict, client.url, ClientError.name);
`;

/** A program with one type error: the check must fail on it, or it checks nothing. */
const WRONG_TS = `import { createChain } from "cbqs-emulator";
const id: string = createChain().chainId;
console.log(id);
`;

const TSCONFIGS = {
  node16: { module: "node16", moduleResolution: "node16" },
  bundler: { module: "esnext", moduleResolution: "bundler" },
};

describe("the packed package (npm pack, installed into an empty project)", () => {
  let dir = "";
  let tarball = "";
  let node: TestNode | undefined;

  beforeAll(async () => {
    requireFreshDist();
    dir = mkdtempSync(join(tmpdir(), "cbqs-consumer-"));
    // The build is fresh (checked above): pack it as it is, without `prepare` building it again.
    execFileSync(NPM, ["pack", "--ignore-scripts", "--pack-destination", dir], { cwd: ROOT, stdio: "pipe" });
    tarball = join(dir, readdirSync(dir).find((f) => f.endsWith(".tgz"))!);
    const project = join(dir, "project");
    execFileSync("mkdir", [project]);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    execFileSync(NPM, ["install", tarball, `@types/node@${TYPES_NODE}`, "--prefer-offline", "--no-audit", "--no-fund"], { cwd: project, stdio: "pipe" });
    node = await startNode({ kind: "genesis", source: DEFAULT_GENESIS_SOURCE });
  }, 300_000);

  afterAll(async () => {
    await node?.close();
    if (dir !== "") rmSync(dir, { recursive: true, force: true });
  });

  it("ships the API and nothing else: no tests, fixtures, scripts, sources or source maps", () => {
    const listing = execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).split("\n").filter((l) => l !== "");
    expect(listing).toContain("package/dist/src/api/index.js");
    expect(listing).toContain("package/dist/src/api/index.d.ts");
    expect(listing).toContain("package/dist/src/cli.js");
    for (const m of EXPLORER_MODULES) expect(listing).toContain(`package/dist/src/explorer/${m}.js`);
    expect(listing.filter((f) => /\/test\/|\/fixtures\/|\/scripts\/|\.map$|\.ts$/.test(f) && !f.endsWith(".d.ts"))).toEqual([]);
  });

  it.each(apiExamples().map((e) => [`${e.number}: ${e.section}`, e] as const))("docs/api.md example %s runs from the installed package", async (_, example) => {
    const run = await runExample(example, join(dir, "project"), node === undefined ? {} : { CBQS_NODE_URL: node.url });
    expect(exampleProblems(example, run)).toEqual([]);
  });

  it("the installed `cbqs node` serves the explorer page: /, its modules, and uPlot from the installed uplot package", async () => {
    const cli = join(dir, "project", "node_modules", "cbqs-emulator", "dist", "src", "cli.js");
    const { url, stop } = await spawnNode(cli, ["--quiet"], { cwd: join(dir, "project") });
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
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", 'await import("cbqs-emulator/dist/src/engine/chain.js")'], { cwd: join(dir, "project"), encoding: "utf8" });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain("ERR_PACKAGE_PATH_NOT_EXPORTED");
  });

  it.each(Object.entries(TSCONFIGS))("a strict TypeScript program type-checks against the packed declarations (moduleResolution %s), and a wrong one does not", (name, options) => {
    const project = join(dir, "project");
    const check = (source: string) => {
      writeFileSync(join(project, "check.ts"), source);
      writeFileSync(
        join(project, `tsconfig.${name}.json`),
        JSON.stringify({ compilerOptions: { ...options, target: "ES2022", strict: true, noEmit: true, types: ["node"], skipLibCheck: false }, files: ["check.ts"] }),
      );
      return spawnSync(process.execPath, [TSC, "-p", `tsconfig.${name}.json`], { cwd: project, encoding: "utf8" });
    };
    const good = check(CONSUMER_TS);
    expect(good.stdout + good.stderr).toBe("");
    expect(good.status).toBe(0);
    const wrong = check(WRONG_TS);
    expect(wrong.status).not.toBe(0);
    expect(wrong.stdout).toContain("TS2322");
  });

  it("publint finds nothing to fix", async () => {
    const bytes = readFileSync(tarball);
    const { messages } = await publint({ pack: { tarball: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer }, level: "suggestion" });
    expect(messages).toEqual([]);
  });

  it("@arethetypeswrong/cli: every entry point's types resolve (ESM profile)", () => {
    const r = spawnSync(process.execPath, [join(ROOT, "node_modules", "@arethetypeswrong", "cli", "dist", "index.js"), tarball, "--profile", "esm-only", "--format", "json"], { encoding: "utf8" });
    expect(r.status, r.stdout.slice(0, 2000) + r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { analysis: { entrypoints: Record<string, unknown> } };
    expect(Object.keys(report.analysis.entrypoints).sort()).toEqual(["./package.json", ".", "./codec", "./crypto", "./state", "./client"].sort());
  });
});
