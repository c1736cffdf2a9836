// The long chain `npm start` replays is filled once and then reused (docs/reference/formats/fixture.md "Long
// chain"): beside `.cache/long-chain.json.gz` lies `.cache/long-chain.meta.json`, saying what
// made it — the generator version (LONG_CHAIN_GENERATOR_VERSION), its parameters, the package
// version, the pinned gas-vector digest and a digest of the code that filled it — and the file's
// SHA-256. The fixture is reused only when all of them are this run's and the file still hashes to
// its SHA-256; otherwise it is filled again, and npm start says why. A stale fixture would only
// fail its replay (every block is verified anyway), but that failure would be a false one.
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { GAS_VECTORS_SHA256 } from "../src/gas/pinned.js";
import type { ProgressMode } from "../src/harness/progress.js";
import { writeOutputFile } from "../src/output-file.js";
import { fillLongChain, LONG_CHAIN_GENERATOR_VERSION, type LongChainOptions } from "./gen-long-chain.js";

export const LONG_CHAIN_META_FORMAT = "cbqs-long-chain-meta/v1";

/** What made a long-chain fixture: equal to this run's, and the fixture is reused. */
export interface LongChainIdentity {
  generator_version: number;
  blocks: string;
  min_txs: string;
  package_version: string;
  gas_vectors_sha256: string;
  /** SHA-256 over the code that fills the chain (src/, state/, instructions/, the generator). */
  code_sha256: string;
}

export interface LongChainMeta extends LongChainIdentity {
  format: string;
  /** SHA-256 of the fixture file's bytes. */
  sha256: string;
}

/** `.cache/long-chain.json.gz` → `.cache/long-chain.meta.json`. */
export function metaPathOf(fixturePath: string): string {
  return fixturePath.replace(/(\.json)?(\.gz)?$/i, "") + ".meta.json";
}

const sha256 = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/** This checkout's root: the folder above scripts/ (running from source) or above dist/scripts/. */
const codeRoot = (): string => dirname(dirname(fileURLToPath(import.meta.url)));

/**
 * The digest of the code a fill runs: every source (or compiled) file under src/, state/ and
 * instructions/, and the generator itself, by path and content. Any change to the engine (its
 * nonce rules, a gas cost) changes it, so a cache filled by other code is never reused, even if
 * LONG_CHAIN_GENERATOR_VERSION was not bumped. About 200 files, hashed in milliseconds.
 */
export function codeDigest(root = codeRoot()): string {
  const hash = createHash("sha256");
  const files = (dir: string): string[] =>
    existsSync(dir)
      ? readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? files(join(dir, e.name)) : /\.(js|ts)$/.test(e.name) && !e.name.endsWith(".d.ts") ? [join(dir, e.name)] : []))
      : [];
  const paths = [...["src", "state", "instructions"].flatMap((d) => files(join(root, d))), ...["gen-long-chain", "rng"].flatMap((n) => [".js", ".ts"].map((x) => join(root, "scripts", n + x)).filter(existsSync))];
  for (const path of paths.sort()) hash.update(`${relative(root, path)}\0`).update(readFileSync(path)).update("\0");
  return hash.digest("hex");
}

/** This run's identity for a chain of these parameters. */
export function longChainIdentity(options: LongChainOptions): LongChainIdentity {
  const root = codeRoot();
  const pkg = createRequire(import.meta.url)(join(root, basename(root) === "dist" ? ".." : ".", "package.json")) as { version: string };
  return {
    generator_version: LONG_CHAIN_GENERATOR_VERSION,
    blocks: String(options.blocks),
    min_txs: String(options.minTxs),
    package_version: pkg.version,
    gas_vectors_sha256: GAS_VECTORS_SHA256,
    code_sha256: codeDigest(root),
  };
}

const FIELD_WORDS: Record<keyof LongChainIdentity, string> = {
  generator_version: "generator version",
  blocks: "--long-chain-blocks",
  min_txs: "--long-chain-min-txs",
  package_version: "package version",
  gas_vectors_sha256: "gas-vector digest",
  code_sha256: "code digest (the engine or the generator changed)",
};

export type ReuseDecision = { reuse: true } | { reuse: false; why: string };

/**
 * Whether the fixture at `fixturePath` may be reused for `wanted`: its meta file is there and
 * names exactly this identity, and the file hashes to the meta's SHA-256. Otherwise why not.
 */
export function reuseDecision(fixturePath: string, wanted: LongChainIdentity): ReuseDecision {
  if (!existsSync(fixturePath)) return { reuse: false, why: "there is none yet" };
  const metaPath = metaPathOf(fixturePath);
  let meta: Partial<LongChainMeta>;
  try {
    meta = JSON.parse(readFileSync(metaPath, "utf8")) as Partial<LongChainMeta>;
  } catch {
    return { reuse: false, why: `no readable ${metaPath} says what filled it` };
  }
  if (meta.format !== LONG_CHAIN_META_FORMAT) return { reuse: false, why: `${metaPath} is not a ${LONG_CHAIN_META_FORMAT}` };
  for (const field of Object.keys(FIELD_WORDS) as Array<keyof LongChainIdentity>) {
    if (meta[field] !== wanted[field]) return { reuse: false, why: `${FIELD_WORDS[field]} ${String(wanted[field])}, the cached one was filled with ${String(meta[field])}` };
  }
  if (sha256(readFileSync(fixturePath)) !== meta.sha256) return { reuse: false, why: "the file does not hash to the SHA-256 its meta file records (changed since it was filled)" };
  return { reuse: true };
}

/** Fills the long chain into `fixturePath` and writes its meta file beside it (after the fixture: a meta file never names a file not complete). */
export function fillLongChainCached(fixturePath: string, options: LongChainOptions & { progress: ProgressMode }, identity = longChainIdentity(options)): void {
  fillLongChain(fixturePath, options);
  const meta: LongChainMeta = { format: LONG_CHAIN_META_FORMAT, ...identity, sha256: sha256(readFileSync(fixturePath)) };
  writeOutputFile(metaPathOf(fixturePath), JSON.stringify(meta, null, 2) + "\n");
}

/** npm start's long chain: reused when reuseDecision allows (said on stderr), else filled again (and why). */
export function ensureLongChain(fixturePath: string, options: LongChainOptions & { progress: ProgressMode }): { reused: boolean } {
  const identity = longChainIdentity(options);
  const decision = reuseDecision(fixturePath, identity);
  if (decision.reuse) {
    process.stderr.write(`long-chain: reusing ${fixturePath} (generator v${identity.generator_version}, same code, SHA-256 checked; delete it to fill it again)\n`);
    return { reused: true };
  }
  process.stderr.write(`long-chain: not reusing ${fixturePath}: ${decision.why}\n`);
  fillLongChainCached(fixturePath, options, identity);
  return { reused: false };
}
