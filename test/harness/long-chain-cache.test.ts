// `npm start` reuses the cached long chain when the same generator version and code
// filled it and the file still hashes to its recorded SHA-256; otherwise it fills it again and
// says why (scripts/long-chain-cache.ts).
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import { LONG_CHAIN_GENERATOR_VERSION } from "../../scripts/gen-long-chain.js";
import { codeDigest, ensureLongChain, fillLongChainCached, longChainIdentity, metaPathOf, reuseDecision, type LongChainMeta } from "../../scripts/long-chain-cache.js";

const dir = mkdtempSync(join(tmpdir(), "cbqs-long-chain-cache-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const options = { blocks: 4, minTxs: 0, progress: "off" as const };

/** Runs `f` with stderr captured. */
function stderrOf(f: () => void): string {
  let err = "";
  const spy = vi.spyOn(process.stderr, "write").mockImplementation((c) => ((err += String(c)), true));
  try {
    f();
  } finally {
    spy.mockRestore();
  }
  return err;
}

describe("npm start reuses the cached long chain", () => {
  it("the meta file sits beside the fixture: .cache/long-chain.json.gz → .cache/long-chain.meta.json", () => {
    expect(metaPathOf(".cache/long-chain.json.gz")).toBe(".cache/long-chain.meta.json");
    expect(metaPathOf("x/chain.json")).toBe("x/chain.meta.json");
  });

  it("reuseDecision reuses only the same generator version, parameters, package, gas digest and code, with the file's SHA-256 intact", () => {
    const file = join(dir, "a", "long-chain.json.gz");
    const wanted = longChainIdentity(options);
    expect(wanted.generator_version).toBe(LONG_CHAIN_GENERATOR_VERSION);
    expect(reuseDecision(file, wanted)).toEqual({ reuse: false, why: "there is none yet" });
    stderrOf(() => fillLongChainCached(file, options, wanted));
    const meta = JSON.parse(readFileSync(metaPathOf(file), "utf8")) as LongChainMeta;
    expect(meta).toMatchObject({ format: "cbqs-long-chain-meta/v1", generator_version: LONG_CHAIN_GENERATOR_VERSION, blocks: "4", min_txs: "0", sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(reuseDecision(file, wanted)).toEqual({ reuse: true });

    expect(reuseDecision(file, { ...wanted, generator_version: wanted.generator_version + 1 })).toEqual({
      reuse: false,
      why: `generator version ${wanted.generator_version + 1}, the cached one was filled with ${wanted.generator_version}`,
    });
    expect(reuseDecision(file, { ...wanted, blocks: "5" })).toMatchObject({ reuse: false, why: "--long-chain-blocks 5, the cached one was filled with 4" });
    expect(reuseDecision(file, { ...wanted, code_sha256: "00".repeat(32) })).toMatchObject({ reuse: false, why: expect.stringMatching(/^code digest \(the engine or the generator changed\)/) });
    expect(reuseDecision(file, { ...wanted, gas_vectors_sha256: "11".repeat(32) })).toMatchObject({ reuse: false, why: expect.stringMatching(/^gas-vector digest/) });

    appendFileSync(file, "x");
    expect(reuseDecision(file, wanted)).toMatchObject({ reuse: false, why: expect.stringMatching(/does not hash to the SHA-256 its meta file records/) });
    unlinkSync(metaPathOf(file));
    expect(reuseDecision(file, wanted)).toMatchObject({ reuse: false, why: expect.stringMatching(/^no readable .*long-chain\.meta\.json says what filled it$/) });
  });

  it("ensureLongChain fills once, then reuses (said on stderr, file untouched); a cache of another generator version is filled again", () => {
    const file = join(dir, "b", "long-chain.json.gz");
    const first = stderrOf(() => expect(ensureLongChain(file, options)).toEqual({ reused: false }));
    expect(first).toContain(`long-chain: not reusing ${file}: there is none yet\n`);
    const mtime = statSync(file).mtimeMs;
    const second = stderrOf(() => expect(ensureLongChain(file, options)).toEqual({ reused: true }));
    expect(second).toBe(`long-chain: reusing ${file} (generator v${LONG_CHAIN_GENERATOR_VERSION}, same code, SHA-256 checked; delete it to fill it again)\n`);
    expect(statSync(file).mtimeMs).toBe(mtime);

    // As if an older generator had filled it: the version in its meta file is not this one.
    const meta = JSON.parse(readFileSync(metaPathOf(file), "utf8")) as LongChainMeta;
    writeFileSync(metaPathOf(file), JSON.stringify({ ...meta, generator_version: LONG_CHAIN_GENERATOR_VERSION - 1 }));
    const third = stderrOf(() => expect(ensureLongChain(file, options)).toEqual({ reused: false }));
    expect(third).toContain(`not reusing ${file}: generator version ${LONG_CHAIN_GENERATOR_VERSION}, the cached one was filled with ${LONG_CHAIN_GENERATOR_VERSION - 1}\n`);
    expect((JSON.parse(readFileSync(metaPathOf(file), "utf8")) as LongChainMeta).generator_version).toBe(LONG_CHAIN_GENERATOR_VERSION);
    expect(existsSync(file)).toBe(true);
  });

  it("the code digest changes with any file of the engine's code", () => {
    const root = join(dir, "code");
    const src = join(root, "src");
    mkdirSync(src, { recursive: true });
    writeFileSync(join(src, "engine.ts"), "export const rule = 1;\n");
    const before = codeDigest(root);
    expect(codeDigest(root)).toBe(before);
    writeFileSync(join(src, "engine.ts"), "export const rule = 2;\n");
    expect(codeDigest(root)).not.toBe(before);
  });
});

